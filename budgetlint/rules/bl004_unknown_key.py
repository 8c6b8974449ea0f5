"""A key the schema does not know (with a did-you-mean suggestion).

## What it checks
Keys that are not part of the document's schema.

## Why
A misspelt key (`promsie`, `ouptut_tokens`) is otherwise ignored silently,
and the promise it should have stated is never checked.

## Example
```yaml
workload:
  ouptut_tokens: 600    # BL004: unknown key 'ouptut_tokens'; did you mean 'output_tokens'?
```

## Fix
Fix the spelling, or remove the key.
"""

from budgetlint.findings import Severity

CODE = "BL004"
NAME = "unknown-key"
SUMMARY = "A key the schema does not know (with a did-you-mean suggestion)."
SEVERITY = Severity.ERROR
