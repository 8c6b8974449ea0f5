"""A promise whose threshold is not an edge of the engine's latency histogram.

## What it checks
For a budget that says where it runs (`deployment.engine`, an `slo:` block
or an `slo_attainment` promise), each promise and each queue / prefill /
decode allowance against the bucket edges of the engine's per-request
histogram for it (the engine's defaults for its release, with their source,
or the edges the budget declares in `slo.buckets`): docs/slo.md has the
tables.

## Why
A production SLO on a classic histogram is the ratio
`X_bucket{le="T"} / X_count`: it exists only when T is an edge. Between two
edges the share of requests under T is unknown, and `histogram_quantile`
interpolates linearly inside the bucket, so the percentile it reports can be
off by up to the bucket's width. vLLM's TTFT edges are `le="0.25"` and `le="0.5"`
around a 400 ms promise: the dashboard can be 250 ms wrong, and no alert can
be written at 400 ms. A budget nobody can observe is a wish.

## Example
```yaml
promise: {ttft: 400 ms}
deployment: {engine: vllm, ...}
# BL601: ttft 400 ms is not an edge of vllm:time_to_first_token_seconds
#        (nearest edges le="0.25" and le="0.5"): error up to 250 ms (62 % of the promise)
```

## Fix
Promise the nearest edge (the message names both), add the edge where the
engine has a flag for it (SGLang `--bucket-time-to-first-token`,
`--bucket-inter-token-latency`, `--bucket-e2e-request-latency`) and declare
it in `slo.buckets`, or serve native histograms. `budgetlint slo` exports
the nearest edge below the threshold meanwhile (stricter, never looser).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL601"
NAME = "threshold-not-at-bucket-edge"
SUMMARY = "A promise whose threshold is not an edge of the engine's latency histogram."
SEVERITY = Severity.WARNING


def _time(seconds: float) -> str:
    """A bucket edge as its `le` label reads, in seconds (0.25 s: le="0.25")."""
    return f"{numbers.stated(seconds)} s"


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    slo = getattr(evaluation, "slo", None)
    if slo is None or not slo.plan.production_bound:
        return
    from budgetlint.text.numbers import percent, quantity

    p = slo.plan
    for ind in p.indicators:
        if ind.metric is None or ind.at_edge or ind.unmeasurable:
            continue
        m = ind.metric
        if ind.lower_edge is None:
            near = (f"it is below the first edge {_time(ind.upper_edge)}: everything under "
                    f"{_time(ind.upper_edge)} is one bucket")
        else:
            near = f"nearest edges {_time(ind.lower_edge)} and {_time(ind.upper_edge)}"
        share = ind.error_s / ind.threshold_s if ind.threshold_s else 0.0
        exported = (f"the export uses le=\"{numbers.stated(ind.exported_s)}\", "
                    f"{'stricter' if ind.exported_s < ind.threshold_s else 'looser: nothing stricter exists'}")
        edges = (f"{_time(ind.lower_edge)} or {_time(ind.upper_edge)} (the nearest edges)" if ind.lower_edge
                 else f"{_time(ind.upper_edge)} (the first edge)")
        if m.flag:
            fix = (f"add {numbers.stated(ind.threshold_s)} to {m.flag} on the server and declare it in slo.buckets.{ind.kind}, "
                   f"or promise {edges}")
        else:
            name = {"vllm": "vLLM", "sglang": "SGLang"}.get(p.engine, p.engine)
            fix = f"promise {edges}, or serve native histograms: {name}'s buckets are hard-coded"
        yield Finding(
            CODE, SEVERITY,
            f"{ind.words} ({p.percentile}) cannot be measured exactly in production: {quantity(ind.threshold_s, 's')} is "
            f"not an edge of {m.name} ({near}; {ind.edges_from}, docs/slo.md). No ratio SLI exists at "
            f"{quantity(ind.threshold_s, 's')} ({exported}), and histogram_quantile near it can be off by up to "
            f"{quantity(ind.error_s, 's')} ({percent(share)} of the promise)",
            ind.location, budget=budget.name, promise=ind.key, fix=fix)
