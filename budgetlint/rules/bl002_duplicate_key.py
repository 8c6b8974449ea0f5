"""A mapping has the same key twice.

## What it checks
Two equal keys in one YAML mapping.

## Why
PyYAML, like most parsers, silently keeps only one of them, so one of the
two values you wrote is ignored without a word. A linter must say so.

## Example
```yaml
promise:
  ttft: 400 ms
  ttft: 300 ms      # BL002: duplicate key 'ttft': first defined on line 2
```

## Fix
Delete one of the keys, or rename it to the key you meant.
"""

from budgetlint.findings import Severity

CODE = "BL002"
NAME = "duplicate-key"
SUMMARY = "A mapping has the same key twice."
SEVERITY = Severity.ERROR
