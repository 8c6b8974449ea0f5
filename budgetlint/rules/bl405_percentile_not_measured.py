"""The promised percentile is not in the measurement.

## What it checks
For every matching measurement linked to a budget, each promise (TTFT,
TPOT or pace, end-to-end) needs the metric at the budget's `percentile`.
When the file does not report it (a p95 promise and a file with p50 and
p99), the promise is *not measured*. budgetlint never interpolates
between reported percentiles and never derives a percentile from a mean.
The same warning says when a value exists but cannot be compared (a TPOT
that includes the first token, an N - 1 TPOT without the output length).

## Why
A p95 promise is about the slowest 5 % of requests; a mean or median says
nothing about it, and interpolating between p90 and p99 assumes a shape of
the tail that is exactly what is in question.

## Example
```yaml
percentile: p95
promise: {ttft: 400 ms}
bench: [runs/chat.json]          # median_ttft_ms, p99_ttft_ms only
# BL405: p95 TTFT not measured in runs/chat.json: the file reports TTFT
#        p50, p99, mean
```

## Fix
Re-run the benchmark reporting the percentile (vLLM:
`--metric-percentiles 50,95,99`; or save per-request data, from which
budgetlint computes it), or promise at a percentile the tool reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.rules import _evidence

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL405"
NAME = "percentile-not-measured"
SUMMARY = "The promised percentile is not in the measurement."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for p in _evidence.promises(budget, evaluation):
        if p.compared:
            continue
        r = p.reading
        head = "not measured" if r.status == "not-measured" else "not comparable"
        yield Finding(
            CODE, SEVERITY,
            f"{r.percentile} {p.what} {head} in {p.link.name}: {r.reason}",
            p.where, budget=budget.name, promise=p.promise,
            fix=f"report {r.percentile} (e.g. vLLM --metric-percentiles, or per-request data) "
                "or promise at a percentile the tool reports")
