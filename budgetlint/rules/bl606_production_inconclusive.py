"""Production histograms cannot say whether a promise holds.

## What it checks
As BL604: the 95 % interval for the p-quantile straddles the threshold (too
few requests, or a threshold between two bucket edges whose bucket holds the
percentile), the evidence does not count (older than the budget's
`evidence.max_age`, or past its `bench:` entry's `expires`), or a `check --prometheus` query failed or
found no observations.

## Why
An inconclusive reading is not a pass.

## Example
```yaml
promise: {ttft: 400 ms}       # between vLLM's edges le="0.25" and le="0.5"
bench: [prod/metrics.txt]
# BL606: ttft 400 ms (p95): production cannot tell: 91.00% .. 97.00% of 5000
#        requests at or under 400 ms ...
```

## Fix
More traffic in the window, a bucket edge at the threshold (BL601), or a
fresher scrape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext
from budgetlint.rules._production import reading_words, readings, where

CODE = "BL606"
NAME = "production-inconclusive"
SUMMARY = "Production histograms cannot say whether a promise holds."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for slo, ind, r in readings(evaluation):
        if not r.counts:
            why = "the evidence does not count: " + ("; ".join(r.stale) or "its bench: entry has expired")
        elif r.verdict in ("straddles", "too-few"):
            why = ("the 95% interval straddles the threshold" if r.verdict == "straddles"
                   else "too few requests for an upper bound on the percentile")
        else:
            continue
        yield Finding(CODE, SEVERITY,
                      f"{ind.words} ({slo.plan.percentile}): production cannot tell, {why}: " + reading_words(ind, r),
                      where(budget, ind, r), budget=budget.name, promise=ind.key,
                      fix="more requests in the window, a bucket edge at the threshold (BL601), or a fresh scrape")
    for source, why in getattr(getattr(evaluation, "slo", None), "problems", ()):
        yield Finding(CODE, SEVERITY, f"production evidence ({source}) could not be read: {why}", budget.loc(),
                      budget=budget.name, fix="check the URL, the window and the budget's slo.selectors")
