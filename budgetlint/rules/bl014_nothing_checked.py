"""No budget was checked: the paths hold no kind: budgets document with a budget.

## What it checks
That a run checked at least one budget. An empty file, an empty folder, a
folder of other YAML, or a file holding only hardware, models or teams
leaves nothing to check.

## Why
A check that checked nothing is not a pass. Without this rule a mistyped
path in CI (`budget/` for `budgets/`, a file moved by a refactor) prints
"No problems found" and passes forever.

## Example
`budgetlint check empty/` where `empty/` holds no budget:
`BL014 error: no budget checked in empty/: it holds no kind: budgets document with a budget`.

## Fix
Point the check at the folder or files that hold your budgets (`paths` in
the config, the Action's `paths` input). Where checking nothing is expected
(a hook run on a teams or hardware file alone, a template repository),
opt out with `--ignore BL014` or `ignore = ["BL014"]` in the config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from budgetlint.findings import Finding, Location, Severity

CODE = "BL014"
NAME = "nothing-checked"
SUMMARY = "No budget was checked: the paths hold no kind: budgets document with a budget."
SEVERITY = Severity.ERROR


def check_run(ctx) -> Iterator[Finding]:
    if ctx.total_budgets:
        return
    from budgetlint.files.discovery import display_path

    shown = list(ctx.paths) or ["(no paths)"]  # as the user wrote them
    where = Location(display_path(Path(ctx.paths[0]))) if ctx.paths and ctx.first_path_is_file else None
    yield Finding(CODE, SEVERITY,
                  f"no budget checked in {', '.join(shown)}: no kind: budgets document with a budget was found, "
                  "so nothing was held to a promise",
                  where,
                  fix="point the check at the files or folder that hold the budgets; "
                      "where checking nothing is expected, pass --ignore BL014")
