"""A promise that passes only because of a declared speculative acceptance or prefix-cache hit.

## What it checks
Promises met at the realistic efficiency that would be missed without the
budget's speculative decoding (`accepted_tokens_per_pass`) or its
prefix-cache hit (`prefix_cache_hit`). Both are assumptions about traffic,
not properties of the hardware.

## Why
Acceptance rates fall on unfamiliar traffic and cache hits fall when a
system prompt changes or the cache is evicted under load. A budget whose
verdict rests on either should say so, so that the assumption is measured
and owned.

## Example
```yaml
promise: {pace: 100 token/s}
deployment:
  model: llama-3.1-70b
  hardware: h100-sxm
  weight_precision: fp8
  speculative: {accepted_tokens_per_pass: 2.53}
# BL305: pace is met only with speculative decoding accepting 2.53 tokens
#        per pass (without it: 33.7 token/s)
```

## Fix
Back the assumption with benchmark evidence for this traffic, or budget for
the case without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL305"
NAME = "relies-on-optimistic-assumption"
SUMMARY = "A promise that passes only because of a declared speculative acceptance or prefix-cache hit."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._verdicts import promise_location

    labels = {"ttft": "ttft", "tpot": "pace", "e2e": "e2e"}
    for name in ("ttft", "tpot", "e2e"):
        v = evaluation.verdicts.get(name)
        if v is None or not v.optimistic:
            continue
        assumed = list(v.optimistic)
        pools = getattr(evaluation.roofline, "pools", None)
        load = evaluation.load
        if pools is not None and load is not None and load.pools is not None and load.result is not None:
            # the simulated pools judge it, the prefill queue included: no idle pool is assumed
            assumed = [w for w in assumed if w != pools.idle_words]
        if not assumed:
            continue
        yield Finding(CODE, SEVERITY,
                      f"budget {budget.name!r}: {labels[name]} is met only with " + " and ".join(assumed),
                      promise_location(budget, name),
                      budget=budget.name, promise=name,
                      fix="attach benchmark evidence measured on this traffic, or budget without the assumption")
