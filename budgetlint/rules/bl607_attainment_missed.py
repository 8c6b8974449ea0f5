"""An slo_attainment promise missed: too few requests meet every latency promise at once.

## What it checks
`promise.slo_attainment` (the share of requests meeting every latency
promise of the budget together: goodput over throughput, errored requests
counted as misses) against each basis that measures it: the load simulation
(docs/load.md), a vLLM run's `request_goodput` whose `--goodput` thresholds
are the budget's promises, and production histograms (between
`1 - sum of each promise's misses` and the smallest share).

## Why
p95 TTFT and p95 TPOT can each hold while only 91 % of requests get both:
attainment is what `vllm bench serve --goodput`, guidellm's SLO reports and
a production SLO's objective measure.

## Example
```yaml
promise: {ttft: 500 ms, tpot: 50 ms, slo_attainment: 95 %}
bench: [runs/goodput.json]    # request_goodput 8.7 of 10 request/s
# BL607: slo_attainment 95% is missed: 87.00% of requests meet every promise
#        (basis run: ...)
```

## Fix
The levers for the promise that binds (BL301/BL303), fewer requests in
flight, or an objective production can keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text.numbers import stated_percent

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL607"
NAME = "attainment-missed"
SUMMARY = "An slo_attainment promise missed: too few requests meet every latency promise at once."
SEVERITY = Severity.ERROR


def words(a) -> str:
    from budgetlint.rules._production import share as fmt

    share = fmt(a.share) if a.share_high is None else f"{fmt(a.share)} .. {fmt(a.share_high)}"
    return f"{share} of requests meet every latency promise (basis {a.basis}: {a.source}; {a.reason})"


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    slo = getattr(evaluation, "slo", None)
    if slo is None or budget.promise.slo_attainment is None:
        return
    for a in slo.attainment:
        if a.verdict != "missed":
            continue
        yield Finding(CODE, SEVERITY, f"slo_attainment {stated_percent(budget.promise.slo_attainment)} is missed: {words(a)}",
                      budget.loc("promise", "slo_attainment"), budget=budget.name, promise="slo_attainment",
                      fix="the levers for the promise that binds, or fewer requests in flight")
