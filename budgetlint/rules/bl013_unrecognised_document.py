"""A YAML file that is not a budgetlint document (no `kind`).

## What it checks
Files found under the checked paths whose documents have no `kind:` that
budgetlint knows (`budgets`, `hardware`, `models`, `teams`).

## Why
Other YAML can share the directory (CI config, docs); it is skipped, and said
so once, so that a budget file that forgot its `kind` is not silently
ignored.

## Example
```yaml
version: 1
budgets: []        # BL013: no 'kind'; expected one of budgets, hardware, models, teams
```

A document that *is* a budgetlint document with its kind mistyped (it has
`version:`, a `kind:` budgetlint does not know, and a `budgets:`, `teams:`,
`hardware:` or `models:` key) is an **error** with a did-you-mean: `kind: budget` says
"did you mean 'budgets'" and the run exits 1, so a one-letter typo never
skips a whole file.

## Fix
Add `kind: budgets` (or the kind the file holds), or move the file out of the checked paths.
"""

from budgetlint.findings import Severity

CODE = "BL013"
NAME = "unrecognised-document"
SUMMARY = "A YAML file that is not a budgetlint document (no `kind`)."
SEVERITY = Severity.WARNING
OTHER_SEVERITIES = {Severity.ERROR: "a document with `version:` and a budgets/teams/hardware/models key whose "
                                    "kind is unknown (did you mean ...?); a calibration file that "
                                    "holds no calibration document"}
