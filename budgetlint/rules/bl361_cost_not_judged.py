"""A cost promise that cannot be judged: no price for the devices, or no throughput.

## What it checks
A `promise.cost` whose deployment has no price per device-hour (none in
`deployment.price`, the config's `prices`, or the hardware entry), or whose
budget gives no throughput to charge the price to (no physics: an
unknown model or hardware, a simulation that did not run and no flat
estimate).

## Why
A cost promise nothing can judge must not pass quietly: its verdict is
`unknown`, and this finding says why.

## Example
```yaml
promise: {cost: 0.50 USD/Mtok}
deployment: {model: llama-3.1-8b, hardware: h100-sxm}
# BL361: cost 0.5 USD/Mtok promised, but it is not judged: no price for
#        h100-sxm: give deployment.price ("2.50 USD/hour"), ...
```

## Fix
Give the price: `deployment.price: 2.50 USD/hour`, an organisation's
price list in the config (`prices = {h100-sxm = "2.50 USD/hour"}`), or
`price:` in your hardware file (docs/cost.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL361"
NAME = "cost-not-judged"
SUMMARY = "A cost promise that cannot be judged: no price for the devices, or no throughput."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._cost import owner_words

    j = (getattr(evaluation, "judgement", None) or {}).get("cost")
    if j is None or j.verdict != "unknown" or not budget.complete:
        return
    why = j.note or "nothing gave a cost"
    fix = None
    if evaluation.cost is not None and evaluation.cost.price_usd_per_s is None:
        fix = "deployment.price: 2.50 USD/hour (your price per device-hour), or the config's prices"
    yield Finding(CODE, SEVERITY, f"budget {budget.name!r}{owner_words(budget)}: cost "
                  f"{numbers.quantity(j.limit, 'USD/token')} promised, but it is not judged: {why}",
                  budget.loc("promise", "cost"), budget=budget.name, promise="cost", fix=fix)
