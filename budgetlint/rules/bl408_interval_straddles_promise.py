"""The percentile's confidence interval contains the promise: the run cannot say.

## What it checks
For a measurement with per-request values (vLLM `--save-detailed`, LLMPerf
individual responses, native `samples`), the 95 % distribution-free
confidence interval for the true percentile: the order statistics whose
ranks the binomial distribution gives (for p99 of 1,000 requests, the 983rd
and 997th). When the measured value meets the promise but the interval
reaches past it, the promise is *not shown*: the run cannot say whether it
holds. (A measured value that misses is BL401's, whose message gives the
interval too.)

## Why
The reported percentile is one draw. With its interval straddling the
promise, a rerun of the same deployment is likely to miss it.

## Example
```yaml
percentile: p95
promise: {ttft: 400 ms}
bench: [runs/chat-detailed.json]   # 400 requests, p95 392 ms
# BL408: p95 TTFT 392 ms meets the 400 ms promise but is not shown: the
#        95% interval 371 ms .. 418 ms (ranks 371..389 of 400) contains it
```

## Fix
Run more requests (the interval narrows as 1/sqrt(n); BL407's table gives
the counts per percentile), or buy margin so the whole interval is below
the promise.
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

CODE = "BL408"
NAME = "interval-straddles-promise"
SUMMARY = "The percentile's confidence interval contains the promise: the run cannot say."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for p in _evidence.promises(budget, evaluation):
        r, s = p.reading, p.sufficiency
        if s is None or s.met is not True or s.status != "straddles":
            continue
        fig = p.figures(s.lower_s, s.upper_s)
        more = "" if s.n is None or s.n >= s.needed_n else f"; {r.percentile} needs about {numbers.number(s.needed_n)} requests"
        yield Finding(
            CODE, SEVERITY,
            f"{r.percentile} {p.what} {p.value(r.measured_s, fig)} meets the "
            f"{p.value(r.promised_s, fig)} promise but is not shown: the "
            f"{s.words(p.pace, fig)} contains it{more}; measured in {p.link.name}",
            p.where, budget=budget.name, promise=p.promise,
            fix="run more requests, or buy margin so the whole interval meets the promise")
