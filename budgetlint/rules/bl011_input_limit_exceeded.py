"""A file is too large, too deeply nested, or expands too much (alias bomb).

## What it checks
The loader's limits: files up to 10 MiB, nesting up to 64 levels, and up
to 200,000 values per document after expanding aliases.

A CODEOWNERS of 3 MB or more is not read either (GitHub does not load one):
a warning, and the owner checks run without it.

## Why
A CI gate must never hang or run out of memory on a hostile or generated
file (a "billion laughs" alias bomb is a few hundred bytes).

## Example
```yaml
a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
# ... nine levels: BL011 document expands to more than 200,000 values
```

## Fix
Keep generated data out of the budget files; flatten the structure.
"""

from budgetlint.findings import Severity

CODE = "BL011"
NAME = "input-limit-exceeded"
SUMMARY = "A file is too large, too deeply nested, or expands too much (alias bomb)."
SEVERITY = Severity.ERROR
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.WARNING: "the CODEOWNERS found in the repository is 3 MB or more (not read, as GitHub does not)"}
