"""A budget has no owner.

## What it checks
Every budget names an `owner:`, a team handle such as `@acme/chat`.

## Why
A budget nobody owns is a wish. When the promise is missed, somebody must be
paged, and somebody must approve loosening it in review.

## Example
```yaml
budgets:
  - name: chat-reply        # BL101: budget 'chat-reply' has no owner
    promise: {e2e: 30 s}
```

## Fix
Add `owner: "@acme/chat"` (a handle from the teams registry or CODEOWNERS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL101"
NAME = "budget-without-owner"
SUMMARY = "A budget has no owner."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    if not budget.owner:
        yield Finding(CODE, SEVERITY, f"budget {budget.name!r} has no owner: a budget nobody owns is a wish",
                      budget.loc("name"), budget=budget.name,
                      fix='add `owner: "@team/handle"` to the budget')
