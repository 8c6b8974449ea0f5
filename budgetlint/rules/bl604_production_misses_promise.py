"""Production histograms show a promise missed.

## What it checks
Each promise (and segment allowance) against each piece of production
evidence: a saved `/metrics` scrape or Prometheus query result linked with
`bench:`, or `check --prometheus URL`. With n requests the true p-quantile
lies between the r-th and s-th smallest at 95 % (order statistics, as for
benchmark runs); the promise is missed when fewer than r requests can be at
or under the threshold (docs/slo.md).

## Why
CI said the budget fits; the engine says the users do not get it. One
number for CI, dashboards and pages.

## Example
```yaml
promise: {ttft: 500 ms}
bench: [prod/metrics.txt]     # 90 % of 5,000 TTFTs at or under le="0.5"
# BL604: ttft 500 ms (p95) is missed in production: 90.00% of 5000 requests
#        at or under le="0.5"; interpolated p95 ... (basis production)
```

## Fix
The levers of the BL301/BL303 messages, or a promise production can keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext
from budgetlint.rules._production import reading_words, readings, where
from budgetlint.text.numbers import stated

CODE = "BL604"
NAME = "production-misses-promise"
SUMMARY = "Production histograms show a promise missed."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for slo, ind, r in readings(evaluation):
        if r.verdict != "missed" or not r.counts:
            continue
        yield Finding(CODE, SEVERITY,
                      f"{ind.words} ({slo.plan.percentile}: {stated(ind.objective)} of requests) is missed in production: "
                      + reading_words(ind, r), where(budget, ind, r), budget=budget.name, promise=ind.key,
                      fix="fix the serving path (the levers BL301/BL303 name) or promise what production keeps")
