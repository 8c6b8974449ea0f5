"""Too few requests behind the percentile to show the promise.

## What it checks
For every promise held against a matching measurement (see BL401) and met
there, the number of requests n the percentile came from (the metric's
count, else the run's completed requests) against what the percentile
needs. The true p-quantile lies, at 95 % confidence, between two order
statistics of the sample whose ranks follow from the binomial distribution
(distribution-free: no assumption about the latency distribution). A
percentile *needs* n when those ranks lie within the sample quantiles at
p - d and p + d, with d = (1 - p) / 2 (for p99: between the p98.5 and
p99.5 requests): p50 23, p90 167, p95 364, p99 1,867, p99.9 18,667
requests. Below `minimum` (p99: 368, p95: 72) the sample has no upper bound
for the percentile at all. When the file keeps per-request values, the
interval is computed in seconds instead (see BL408) and this rule speaks
only when it has no upper end. A file that does not say how many requests
it holds is reported too: the check could not run.

## Why
A p99 "measured" from 50 requests is the largest or second-largest of
them; the true p99 may be far above it. A promise met on such evidence is
*not shown*, not met.

## Example
```yaml
percentile: p99
promise: {ttft: 400 ms}
bench: [runs/chat-300.json]      # 300 requests, p99_ttft_ms: 350
# BL407: p99 TTFT 350 ms meets the 400 ms promise but is not shown: 300
#        requests cannot bound a p99 (at least 368 for any upper bound at
#        95 %; 1,867 to bound it within p98.5..p99.5)
```

## Fix
Re-run with at least the number of requests the message gives (vLLM
`--num-prompts`), or keep per-request data (`--save-detailed`) so the
interval can be computed in seconds, or promise at a lower percentile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.rules import _evidence
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL407"
NAME = "too-few-samples"
SUMMARY = "Too few requests behind the percentile to show the promise."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for p in _evidence.promises(budget, evaluation):
        r, s, link = p.reading, p.sufficiency, p.link
        if s is None or s.met is not True or s.status not in ("too-few", "unbounded", "unknown"):
            continue
        fig = p.figures(s.lower_s, s.upper_s)
        head = (f"{r.percentile} {p.what} {p.value(r.measured_s, fig)} meets the "
                f"{p.value(r.promised_s, fig)} promise but is not shown")
        plan = (f"at least {numbers.number(s.minimum_n)} for any upper bound at 95 %; {numbers.number(s.needed_n)} to bound it "
                f"within the sample's {s.band}")
        if s.status == "unknown":
            msg = (f"{head}: {link.name} does not say how many requests the {r.percentile} came from, "
                   f"so whether it can show it is not checked ({r.percentile} needs {plan})")
        elif s.status == "unbounded":
            msg = (f"{head}: {numbers.number(s.n)} requests ({s.n_source}) cannot bound a {r.percentile} ({plan}); "
                   f"measured in {link.name}")
        else:
            msg = (f"{head}: {numbers.number(s.n)} requests ({s.n_source}), {r.percentile} needs {numbers.number(s.needed_n)} "
                   f"({s.words(p.pace, fig)}); measured in {link.name}")
        yield Finding(CODE, SEVERITY, msg, p.where, budget=budget.name, promise=p.promise,
                      fix=f"re-run with at least {numbers.number(s.needed_n)} requests, or keep per-request data so "
                          "the interval is computed in seconds")
