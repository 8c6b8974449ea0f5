"""A segment of a budget has no owner.

## What it checks
Every segment a promise is split into (queue, prefill, decode, network,
client) names the team that owns it.

## Why
The point of splitting a promise is that each part has somebody answerable
for it: the serving team for the first-token allowance, the runtime team for
the pace, the edge team for the network. An unowned segment is the part that
quietly grows.

## Example
```yaml
segments:
  - name: network          # BL102: segment 'network' of budget 'chat-reply' has no owner
    kind: network
    allowance: 50 ms
```

## Fix
Add `owner:` to the segment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL102"
NAME = "segment-without-owner"
SUMMARY = "A segment of a budget has no owner."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for seg in budget.segments:
        if not seg.owner:
            yield Finding(CODE, SEVERITY,
                          f"segment {seg.name!r} of budget {budget.name!r} has no owner",
                          seg.loc("name"), budget=budget.name,
                          fix='add `owner: "@team/handle"` to the segment')
