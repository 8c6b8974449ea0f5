"""A YAML tag that plain, safe YAML does not define.

## What it checks
Explicit tags such as `!!python/object` or custom `!tags`.

## Why
budgetlint loads YAML safely: no tag ever constructs an object or runs code.
A tagged value is read as plain text and flagged.

## Example
```yaml
name: !!python/object:os.system "echo hi"    # BL012
```

## Fix
Remove the tag.
"""

from budgetlint.findings import Severity

CODE = "BL012"
NAME = "unsupported-yaml-tag"
SUMMARY = "A YAML tag that plain, safe YAML does not define."
SEVERITY = Severity.ERROR
