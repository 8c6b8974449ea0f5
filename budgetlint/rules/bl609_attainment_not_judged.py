"""An slo_attainment promise a piece of evidence could not judge.

## What it checks
A vLLM run with `request_goodput` whose `--goodput` thresholds are unknown
(the result file does not record them and the budget's `slo.goodput` does
not say) or are not the budget's promises; production evidence whose
bounds straddle the promise; a budget with an attainment promise and no
basis at all.

## Why
Goodput at other thresholds is another promise's attainment: comparing it
would pass or fail the wrong thing.

## Example
```yaml
promise: {ttft: 500 ms, tpot: 50 ms, slo_attainment: 95 %}
slo: {goodput: "ttft:300 tpot:50"}
# BL609: ... the run's --goodput thresholds are not the promises: ttft 300 ms
#        vs the promise's 500 ms
```

## Fix
Run `vllm bench serve --goodput ttft:<ms> tpot:<ms> e2el:<ms>` at the
budget's promises and declare them as `slo.goodput`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text.numbers import stated_percent

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL609"
NAME = "attainment-not-judged"
SUMMARY = "An slo_attainment promise a piece of evidence could not judge."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    slo = getattr(evaluation, "slo", None)
    if slo is None or budget.promise.slo_attainment is None:
        return
    loc = budget.loc("promise", "slo_attainment")
    for a in slo.attainment:
        if a.verdict in ("not-comparable", "straddles"):
            from budgetlint.rules._production import share

            why = a.reason if a.verdict == "not-comparable" else (
                f"{share(a.share)} .. {share(a.share_high)} of requests meet every promise: the bounds straddle it")
            yield Finding(CODE, SEVERITY, f"slo_attainment {stated_percent(budget.promise.slo_attainment)} not judged from "
                          f"{a.source} (basis {a.basis}): {why}", loc, budget=budget.name, promise="slo_attainment",
                          fix="run vllm bench serve --goodput at the budget's promises and declare slo.goodput")
    if not slo.attainment:
        yield Finding(CODE, SEVERITY, f"slo_attainment {stated_percent(budget.promise.slo_attainment)} has no basis: no load "
                      "simulation result, no run with request_goodput, no production evidence", loc,
                      budget=budget.name, promise="slo_attainment",
                      fix="declare traffic for the simulation, or link a vLLM --goodput run or a /metrics scrape")
