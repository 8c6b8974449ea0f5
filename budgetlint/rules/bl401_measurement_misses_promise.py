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

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL401"
NAME = "measurement-misses-promise"
SUMMARY = "A benchmark measurement misses the promise at the budget's percentile."
SEVERITY = Severity.ERROR


def check(b: Budget, ev: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    if not ev.links:  # no evidence: nothing to say (and nothing to import, per budget)
        return
    from budgetlint.evaluate import evidence as ev_mod
    from budgetlint.model.units import format_percent
    for link in ev.links:
        if not link.counts:
            continue
        for name, r in link.readings.items():
            if r.status != "compared" or r.margin is None or r.margin >= -1e-9:
                continue
            pace = name == "tpot" and b.promise.pace_given
            what = ev_mod.promise_words(b, name)
            if pace:
                short = 1.0 - r.promised_s / r.measured_s
                gap = f"{format_percent(short)} short"
            else:
                gap = f"{format_percent(r.measured_s / r.promised_s - 1.0)} over"
            how = f" ({r.how})" if r.how else ""
            suff = link.sufficiency.get(name)
            fig = ev_mod.figures_apart(name, pace, r.measured_s, r.promised_s,
                                       *((suff.lower_s, suff.upper_s) if suff is not None else ()))
            sure = ""
            if suff is not None and suff.status == "shown" and suff.lower_s is not None:
                sure = (f"; shown at 95%: the {suff.words(pace, fig)} is "
                        f"{'below' if pace else 'above'} the promise")
            elif suff is not None and suff.status == "straddles":
                sure = f"; the {suff.words(pace, fig)} contains the promise, so the miss is likely, not certain"
            yield Finding(
                CODE, SEVERITY,
                f"{r.percentile} {what} measured {ev_mod.fmt_value(name, r.measured_s, pace, fig)}, "
                f"promise {ev_mod.fmt_value(name, r.promised_s, pace, fig)}: {gap}{sure}; "
                f"measured in {link.name}{how}{link.inferred_words()}",
                ev_mod.promise_loc(b, name), budget=b.name, promise=name,
                fix="make the deployment faster (see BL301/BL303 levers) or loosen the promise "
                    "to the measured value plus margin")
