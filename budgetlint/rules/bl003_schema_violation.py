"""A value does not match the schema (type, range, required key, allowed values).

## What it checks
Validation against the JSON Schema of the document's kind
(`schemas/*.schema.json`): wrong types, missing required keys, values out of
range, values not in the allowed set.

## Why
A budget that does not say what it means cannot be checked; the schema is
also what editors use to complete and validate your files.

## Example
```yaml
workload:
  prompt_tokens: -5     # BL003: -5 is less than the minimum of 0
```

## Fix
Give the value the schema expects; the message names it.
"""

from budgetlint.findings import Severity

CODE = "BL003"
NAME = "schema-violation"
SUMMARY = "A value does not match the schema (type, range, required key, allowed values)."
SEVERITY = Severity.ERROR
