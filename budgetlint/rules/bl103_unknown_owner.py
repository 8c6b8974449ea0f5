"""An owner is not a known team handle.

## What it checks
Owners of budgets, segments and cost promises (`cost_owner`) must appear in a teams registry
(`kind: teams` files among the checked paths) or in the repository's
CODEOWNERS (`.github/CODEOWNERS`, `CODEOWNERS` or `docs/CODEOWNERS`). A
handle is suggested only when the owner reads as a typo of it: the same
organisation and a team name at most two edits away (or the same team and
a mistyped organisation). Another team is never suggested: `@platform/edge`
unknown does not get `@platform/serving`. When neither source exists the rule
cannot judge and stays silent (BL104 says so once).

## Why
A misspelt handle pages nobody. `@acme/chta` looks owned in review and is
owned by no one in an incident.

## Example
```yaml
owner: "@acme/chta"   # BL103: owner '@acme/chta' is not a known team; did you mean '@acme/chat'?
```

## Fix
Use a handle from the registry, or add the team to `teams.yaml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.model.suggest import near_handle

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL103"
NAME = "unknown-owner"
SUMMARY = "An owner is not a known team handle."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    if not ctx.teams:
        return
    suggest = getattr(ctx, "suggest_owner", None)  # the run's, bounded (budgetlint.model.suggest)
    if suggest is None:
        from budgetlint.model.suggest import Suggester

        suggest = Suggester(sorted(ctx.teams), cutoff=0.5)
    owners = [(budget.owner, budget.loc("owner"), "owner")]
    owners += [(s.owner, s.loc("owner"), f"owner of segment {s.name!r}") for s in budget.segments]
    if getattr(budget, "cost_owner", None):
        owners.append((budget.cost_owner, budget.loc("cost_owner"), "cost_owner"))
    for owner, where, what in owners:
        if not owner or owner.lower() in ctx.teams:
            continue
        close = suggest(owner.lower())
        if close is not None and not near_handle(owner, close):
            close = None  # similar letters, another team: no suggestion (model.suggest.near_handle)
        hint = f"; did you mean {close!r}?" if close else ""
        yield Finding(CODE, SEVERITY,
                      f"{what} {owner!r} of budget {budget.name!r} is not a known team "
                      f"(teams from {ctx.teams_source}){hint}",
                      where, budget=budget.name,
                      fix=f"use {close!r}" if close else "add the team to the teams registry")
