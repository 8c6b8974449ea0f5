"""A benchmark measurement misses the promise at the budget's percentile.

## What it checks
For every measurement linked to a budget (its `bench:` entries, or
`--bench FILE` on the command line) whose run conditions match the budget
(see BL404), the value at the budget's `percentile` for each promise: TTFT,
TPOT (or pace) and end-to-end. TPOT is compared in budgetlint's definition
(over all N output tokens, E2E = TTFT + N x TPOT): a vLLM-style TPOT over
N - 1 tokens is converted exactly with N (x (N - 1) / N); LLMPerf's
"inter-token latency", which includes the first token, is not compared.

## Why
A budget is a promise; a benchmark of the deployment under the budget's
load is the evidence. When the evidence already misses the promise at the
promised percentile, the promise is broken today, whatever the roofline
says.

## Example
```yaml
percentile: p95
promise: {ttft: 400 ms}
bench: [runs/chat-c16.json]      # p95_ttft_ms: 512
# BL401: p95 TTFT measured 512 ms, promise 400 ms: 28% over
```

## Fix
Make the deployment faster (the roofline levers of BL301/BL303 apply:
quantised weights or KV cache, a prefix cache, more devices, lower
concurrency), or loosen the promise to what is measured, with margin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.model.units import format_percent
from budgetlint.rules import _evidence
from budgetlint.rules._messages import inferred_words

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL401"
NAME = "measurement-misses-promise"
SUMMARY = "A benchmark measurement misses the promise at the budget's percentile."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for p in _evidence.promises(budget, evaluation):
        r, suff, link = p.reading, p.sufficiency, p.link
        if not p.compared or r.margin is None or r.margin >= -1e-9:
            continue
        if p.pace:
            gap = f"{format_percent(1.0 - r.promised_s / r.measured_s)} short"
        else:
            gap = f"{format_percent(r.measured_s / r.promised_s - 1.0)} over"
        how = f" ({r.how})" if r.how else ""
        fig = p.figures(*((suff.lower_s, suff.upper_s) if suff is not None else ()))
        sure = ""
        if suff is not None and suff.status == "shown" and suff.lower_s is not None:
            sure = (f"; shown at 95%: the {suff.words(p.pace, fig)} is "
                    f"{'below' if p.pace else 'above'} the promise")
        elif suff is not None and suff.status == "straddles":
            sure = f"; the {suff.words(p.pace, fig)} contains the promise, so the miss is likely, not certain"
        yield Finding(
            CODE, SEVERITY,
            f"{r.percentile} {p.what} measured {p.value(r.measured_s, fig)}, "
            f"promise {p.value(r.promised_s, fig)}: {gap}{sure}; "
            f"measured in {link.name}{how}{inferred_words(link)}",
            p.where, budget=budget.name, promise=p.promise,
            fix="make the deployment faster (see BL301/BL303 levers) or loosen the promise "
                "to the measured value plus margin")
