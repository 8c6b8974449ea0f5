"""A promise that even the pure roofline misses: physics says it cannot be met.

## What it checks
For each promise of a budget with a deployment (TTFT, TPOT/pace,
end-to-end), the best case the hardware allows: 100 % of peak memory
bandwidth and dense compute, no collective overhead.
- TTFT bound = declared queue (+ edge) allowance + prefill, where prefill is
  2 x active parameters FLOPs per uncached prompt token plus attention, over
  N x peak compute, and never below one read of the weights.
- Pace bound = accepted tokens per pass / decode step, where a step reads
  the weights (/N) and every sequence's KV cache over bandwidth, or does
  2 x active parameters x B FLOPs over N x peak, whichever is slower,
  averaged over the reply as the context grows.
- End-to-end bound = TTFT bound + output tokens / pace bound.

## Why
A roofline bound is a best case, so a promise the bound already misses is
impossible at every percentile, whatever the kernels, scheduler or
percentile. Better to learn that in review than in production.

## Example
physics.md, worked number 4: a 70B model in 16-bit weights on one
3.35 TB/s device reads 139 GB per token (140 GB less the input embedding,
which is gathered, not read): at most 24 token/s.
```yaml
promise: {pace: 40 token/s}
deployment: {model: llama-3.1-70b, hardware: h100-sxm, weight_precision: bf16}
# BL301: pace needs 40 token/s; the roofline bound is 24.1 token/s
#        (bandwidth-bound): 66% short
```

## Fix
The message lists the standard levers that would meet the promise (8-bit or
4-bit weights, 8-bit KV cache, prefix cache, speculative decoding, more
tensor-parallel devices, fewer concurrent sequences, a faster accelerator),
each with its resulting number; or loosen the promise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL301"
NAME = "promise-cannot-be-met"
SUMMARY = "A promise that even the pure roofline misses: physics says it cannot be met."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._verdicts import verdict_findings

    yield from verdict_findings(budget, evaluation, CODE, SEVERITY, "cannot-be-met", bound=True, no_lever="no standard lever meets it: loosen the promise")
