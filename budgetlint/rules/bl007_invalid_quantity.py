"""A quantity cannot be read: unknown unit, bad syntax or not finite.

## What it checks
Strings that are not a number followed by a known unit, and numbers a
float cannot carry: infinite, NaN, or non-zero but below the smallest
normal double once in SI units (2.2e-308: `1e-320 token/s` is subnormal
and its reciprocal infinite; `9.7e-5021495230 minutes` rounds to zero).

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
