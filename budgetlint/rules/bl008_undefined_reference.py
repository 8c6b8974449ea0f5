"""A budget names a model, hardware entry or draft model that is not defined.

## What it checks
References from a deployment to models and hardware, which must exist in the
built-in catalog or in the files being checked.

## Why
A typo in a hardware name would otherwise make every physics check vanish.

## Example
```yaml
deployment:
  hardware: h100-sxn       # BL008: unknown hardware 'h100-sxn'; did you mean 'h100-sxm'?
```

## Fix
Use a name from `budgetlint catalog hardware|models`, or define the entry.
"""

from budgetlint.findings import Severity

CODE = "BL008"
NAME = "undefined-reference"
SUMMARY = "A budget names a model, hardware entry or draft model that is not defined."
SEVERITY = Severity.ERROR
