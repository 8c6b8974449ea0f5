"""Owners cannot be verified: there is no teams registry and no CODEOWNERS.

## What it checks
Whether any source of valid owner handles exists: a `kind: teams` document
among the checked paths, or a CODEOWNERS file in the repository.

## Why
Without one, BL103 cannot tell a real team from a typo. This is said once,
as information, so that the silence of BL103 is not mistaken for a pass.

## Example
`budgetlint check budgets/` in a repository without `teams.yaml` or
CODEOWNERS: `BL104 owners cannot be verified: no teams registry or CODEOWNERS found`.

## Fix
Add a `teams.yaml` (`kind: teams`) next to the budgets, or a CODEOWNERS file.
When a CODEOWNERS is there but cannot be read (a folder, a pipe, a broken
link, 3 MB or more: BL010 / BL011 say which), the message names it.
"""

from __future__ import annotations

from typing import Iterator

from budgetlint.findings import Finding, Severity

CODE = "BL104"
NAME = "no-teams-registry"
SUMMARY = "Owners cannot be verified: there is no teams registry and no CODEOWNERS."
SEVERITY = Severity.INFO


def check_run(ctx) -> Iterator[Finding]:
    if ctx.total_budgets and not ctx.teams:
        unread = getattr(ctx, "codeowners_unread", None)
        found = (f"no teams registry (kind: teams), and the CODEOWNERS found ({unread}) cannot be read"
                 if unread else "no teams registry (kind: teams) or CODEOWNERS found")
        yield Finding(CODE, SEVERITY, f"owners cannot be verified: {found}",
                      None, fix="add a teams.yaml with `kind: teams` next to the budgets")
