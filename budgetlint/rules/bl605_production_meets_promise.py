"""Production histograms show a promise met.

## What it checks
As BL604, the other side: at least s of n requests (the upper rank of the
95 % interval for the p-quantile) are certainly at or under the threshold.

## Why
The promise holds where it matters; the figure is the one the SLO reports.

## Example
```yaml
promise: {ttft: 500 ms}
bench: [prod/metrics.txt]     # 97 % of 5,000 TTFTs at or under le="0.5"
# BL605: ttft 500 ms (p95) is met in production: 97.00% of 5000 requests ...
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
from budgetlint.rules._production import reading_words, readings, where
from budgetlint.text.numbers import stated

CODE = "BL605"
NAME = "production-meets-promise"
SUMMARY = "Production histograms show a promise met."
SEVERITY = Severity.INFO


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for slo, ind, r in readings(evaluation):
        if r.verdict != "met" or not r.counts:
            continue
        yield Finding(CODE, SEVERITY,
                      f"{ind.words} ({slo.plan.percentile}: {stated(ind.objective)} of requests) is met in production: "
                      + reading_words(ind, r), where(budget, ind, r), budget=budget.name, promise=ind.key)
