"""A promise the engine's metrics cannot measure at all.

## What it checks
For a budget that says where it runs, each promise and segment allowance
for which the engine exposes no per-request histogram budgetlint knows
(TensorRT-LLM, TGI, `other`; SGLang's prefill and decode), or whose
threshold lies above the histogram's last finite edge (everything there is
one `+Inf` bucket).

## Why
No SLO can be exported for it: production can neither confirm nor refute
the promise, so CI and the pager disagree silently.

## Example
```yaml
deployment: {engine: trtllm, ...}
promise: {ttft: 400 ms}
# BL603: trtllm exposes no per-request ttft histogram budgetlint knows
```

## Fix
Export the metric from the serving layer in front of the engine (a gateway
histogram with an edge at the threshold) and declare its edges, or drop the
promise from the production SLOs with a suppression that says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL603"
NAME = "promise-not-measurable-in-production"
SUMMARY = "A promise the engine's metrics cannot measure at all."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    slo = getattr(evaluation, "slo", None)
    if slo is None or not slo.plan.production_bound:
        return
    for ind in slo.plan.indicators:
        why = ind.unmeasurable
        if why is None and ind.metric is not None and not ind.metric.per_request:
            why = f"{ind.metric.name} is per token gap, not per request: {ind.metric.note}"
        if why is None:
            continue
        yield Finding(CODE, SEVERITY, f"{ind.words} has no production SLO: {why}", ind.location,
                      budget=budget.name, promise=ind.key,
                      fix="export a per-request histogram with an edge at the threshold and declare it in "
                          "slo.buckets, or suppress this rule with the reason")
