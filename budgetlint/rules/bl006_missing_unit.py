"""A quantity is a bare number without a unit.

## What it checks
A physical quantity written as a plain number.

## Why
`ttft: 400` could be milliseconds or seconds; a budget must say which.

## Example
```yaml
promise:
  ttft: 400                 # BL006: expected a time such as "250 ms"
```

## Fix
Add the unit: `ttft: 400 ms`.
"""

from budgetlint.findings import Severity

CODE = "BL006"
NAME = "missing-unit"
SUMMARY = "A quantity is a bare number without a unit."
SEVERITY = Severity.ERROR
