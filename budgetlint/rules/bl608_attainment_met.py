"""An slo_attainment promise met, on each basis that measures it.

## What it checks
As BL607, the other side: the share of requests meeting every latency
promise at once is at least the promise (production: its lower bound).

## Why
The objective the exported SLOs carry is one the evidence keeps.

## Example
```yaml
promise: {ttft: 500 ms, tpot: 50 ms, slo_attainment: 95 %}
# BL608: slo_attainment 0.95 is met: 98.10% of requests meet every latency
#        promise (basis simulation: ...)
```

## Fix
Nothing to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext
from budgetlint.rules.bl607_attainment_missed import words
from budgetlint.text.numbers import stated_percent

CODE = "BL608"
NAME = "attainment-met"
SUMMARY = "An slo_attainment promise met, on each basis that measures it."
SEVERITY = Severity.INFO


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    slo = getattr(evaluation, "slo", None)
    if slo is None or budget.promise.slo_attainment is None:
        return
    for a in slo.attainment:
        if a.verdict == "met":
            yield Finding(CODE, SEVERITY, f"slo_attainment {stated_percent(budget.promise.slo_attainment)} is met: {words(a)}",
                          budget.loc("promise", "slo_attainment"), budget=budget.name, promise="slo_attainment")
