"""A burn-rate alert window too short to hold the requests its percentile needs.

## What it checks
For a budget that says where it runs and declares its traffic
(`workload.arrival_rate`, or `promise.throughput`), the requests each
exported burn-rate alert's short window holds (rate x window) against the
samples the objective's percentile needs: the same order-statistic
arithmetic the benchmark rules use (BL407: `stats/order_stats.needed_n`,
364 requests for p95, 1,867 for p99).

## Why
At 0.5 request/s a 5-minute window holds 150 requests: a p99 ratio over it
moves by whole percent with each slow request, so the 14.4x page fires on
noise, or never. The SRE workbook's advice for low traffic is to widen the
windows or to alert on the long windows only.

## Example
```yaml
percentile: p99
workload: {arrival_rate: 0.5 request/s, ...}
# BL602: the page alert's 5m short window holds 150 requests at 0.5 request/s;
#        p99 needs 1867
```

## Fix
Declare a longer `slo.window` (the alert windows scale with it), drop the
short-window pages for this SLO, or aggregate more traffic into one SLO
(fewer selectors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL602"
NAME = "alert-window-too-few-requests"
SUMMARY = "A burn-rate alert window too short to hold the requests its percentile needs."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    slo = getattr(evaluation, "slo", None)
    if slo is None or not slo.plan.production_bound or not slo.traffic:
        return
    from budgetlint.evaluate.slo import duration_text

    p = slo.plan
    parts = [f"{t.alert.severity} alert ({duration_text(t.alert.long_s)}/{duration_text(t.alert.short_s)}, "
             f"burn {numbers.number(t.alert.burn_rate)}x): {numbers.number(t.requests)} requests in {duration_text(t.alert.short_s)}"
             for t in slo.traffic]
    worst = slo.traffic[0]
    loc = budget.loc("workload", "arrival_rate") if p.rate_from == "workload.arrival_rate" and budget.has(
        "workload", "arrival_rate") else (budget.loc("promise", "throughput") if budget.has("promise", "throughput")
                                          else budget.loc())
    yield Finding(
        CODE, SEVERITY,
        f"at {numbers.number(p.request_rate_per_s)} request/s ({p.rate_from}) the burn-rate alerts' short windows hold too "
        f"few requests for a {numbers.stated(p.objective)} objective, which needs {worst.needed} (order statistics, as "
        f"for benchmark runs): " + "; ".join(parts),
        loc, budget=budget.name,
        fix=f"a window holding {worst.needed} requests needs {numbers.number(worst.rate_needed_per_s)} request/s; declare a "
            f"longer slo.window than {p.window}, or page on the long windows only")
