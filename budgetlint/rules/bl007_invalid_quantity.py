"""A quantity cannot be read: unknown unit, bad syntax or not finite.

## What it checks
Strings that are not a number followed by a known unit.

## Why
An unreadable value cannot be checked. budgetlint knows seconds, bytes
(SI and IEC prefixes), FLOP, tokens and their ratios.

## Example
```yaml
promise:
  e2e: 30 secondz          # BL007: unknown unit
```

## Fix
Use a known unit: `s`, `ms`, `GB`, `GiB`, `TB/s`, `TFLOP/s`, `token/s`.
"""

from budgetlint.findings import Severity

CODE = "BL007"
NAME = "invalid-quantity"
SUMMARY = "A quantity cannot be read: unknown unit, bad syntax or not finite."
SEVERITY = Severity.ERROR
