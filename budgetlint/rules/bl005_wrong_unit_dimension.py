"""A quantity has a unit of the wrong kind (e.g. a bandwidth in TB).

## What it checks
Every quantity is read with its unit; the unit's dimension must match what
the field means: a bandwidth is information per time, a pace tokens per time.

## Why
`bandwidth: 3.35 TB` is a size, not a rate; treating it as TB/s silently is
exactly the unit slip that makes roofline tools wrong.

## Example
```yaml
bandwidth: 3.35 TB        # BL005: expected a bandwidth such as "3.35 TB/s"
```

## Fix
Write the unit the message names: `3.35 TB/s`.
"""

from budgetlint.findings import Severity

CODE = "BL005"
NAME = "wrong-unit-dimension"
SUMMARY = "A quantity has a unit of the wrong kind (e.g. a bandwidth in TB)."
SEVERITY = Severity.ERROR
