"""What the deployment costs and spends per output token: a cost promise met, or a priced deployment.

## What it checks
Budgets with a cost promise that is met, and budgets whose deployment has a
price (from `deployment.price`, the config's `prices` or the hardware
entry) without a cost promise: the cost per million output tokens, per
request and the energy per output token at the judged operating point
(docs/cost.md), with the throughput it stands on.

## Why
The question after "can we meet it?" is "what does meeting it cost?": the
figure belongs beside the latency verdicts, with its basis, so that a PR
that halves the throughput per device shows up as a doubled cost.

## Example
```yaml
workload: {prompt_tokens: 1000, output_tokens: 250, arrival_rate: 2 request/s}
promise: {ttft: 1 s, cost: 2 USD/Mtok}
deployment: {model: llama-3.1-8b, hardware: h100-sxm, price: 2.50 USD/hour}
# BL362: cost 2 USD/Mtok is met: 1.39 USD/Mtok, 0.000347 USD per request,
#        1.4 J/token at the declared traffic, 2 request/s x 250 output tokens
#        (500 token/s of output on 1 device x 1 replica at 2.5 USD/hour and
#        700 W each), headroom +44%
```

## Fix
Nothing to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL362"
NAME = "cost-shown"
SUMMARY = "What the deployment costs and spends per output token: a cost promise met, or a priced deployment."
SEVERITY = Severity.INFO


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._cost import figures, owner_words

    c = evaluation.cost
    if c is None or c.usd_per_token is None:
        return
    j = (getattr(evaluation, "judgement", None) or {}).get("cost")
    if j is not None:
        if j.verdict != "met":
            return
        yield Finding(CODE, SEVERITY, f"budget {budget.name!r}{owner_words(budget)}: cost "
                      f"{numbers.quantity(j.limit, 'USD/token')} is met: "
                      f"{figures(c) if j.basis == c.basis else j.words}, headroom "
                      f"{numbers.headroom(j.headroom)}", budget.loc("promise", "cost"), budget=budget.name,
                      promise="cost")
        return
    where = budget.loc("deployment", "price") if budget.has("deployment", "price") else budget.loc("deployment")
    yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: costs {figures(c)}", where, budget=budget.name,
                  promise="cost")
