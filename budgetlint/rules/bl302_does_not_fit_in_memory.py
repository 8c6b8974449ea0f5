"""The weights and KV cache do not fit in device memory.

## What it checks
Per device under tensor parallelism: weights / N + concurrency x context x
KV bytes per token / N + a runtime reserve (+ a draft model) against the
device's memory, in the steady state of continuous batching: sequences are
at every stage of their reply, so the context is the mean in-flight one,
prompt + output / 2.

- Error: the steady state does not fit in 100 % of memory (charging only a
  declared `memory_overhead`, no default).
- Warning (at risk): it fits only above the usable fraction (default 90 %,
  `memory_usable_fraction`) once the runtime reserve is charged.
- Warning (tail): the steady state fits but the worst case, every sequence
  at its final length (prompt + output), does not: the runtime preempts or
  queues sequences and the tail latency shows it.

Each message names how many sequences fit at the mean context and at the
final length.

The runtime reserve (activation peak, CUDA context, NCCL, engine workspace)
defaults to 3 GiB per device: vLLM's start-up memory profile of Llama-3-8B on
one H100 logs 1.79 GiB of non-torch memory and a 1.26 GiB activation peak
(vllm-project/vllm PR #10511). A deployment's `memory_overhead` replaces it.

## Why
A deployment that does not fit does not serve: either it fails to start or
the runtime silently lowers concurrency, and the latency the budget assumed
is not the latency users get.

## Example
physics.md, worked number 5: an 8B model, 16 users at 8k tokens, one 24 GB
device: 16 GB of 16-bit weights + 16 x 8,192 x 128 KiB = 16 GiB of KV cache.
```yaml
workload: {prompt_tokens: 7192, output_tokens: 1000, concurrency: 16}
deployment: {model: llama-3.1-8b, hardware: a10g, weight_precision: bf16}
# BL302: does not fit: needs 32.1 GB per device (weights 16.1 GB + KV cache
#        16.1 GB; 16 sequences at the mean in-flight context 7692 tokens):
#        the a10g has 24 GB: 7 sequences fit at that context, 7 at 8192
```

## Fix
4-bit or 8-bit weights, an 8-bit KV cache, fewer concurrent sequences, or
more devices; the message lists those that fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL302"
NAME = "does-not-fit-in-memory"
SUMMARY = "The weights and KV cache do not fit in device memory."
SEVERITY = Severity.ERROR
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.WARNING: "it fits the physical memory but not the usable fraction (at risk), or "
                                      "the steady state fits but the worst case does not (the tail); an error "
                                      "again when no sequence fits at the usable fraction (the engine would not "
                                      "start)"}


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._messages import describe_memory, describe_memory_tail
    from budgetlint.rules._verdicts import lever_edit, lever_text

    v = evaluation.verdicts.get("memory")
    if v is None or v.verdict == "unknown":
        return
    if v.verdict == "met":
        rl = evaluation.roofline.realistic
        if rl.memory_fits_worst is False:
            yield Finding(CODE, Severity.WARNING, describe_memory_tail(evaluation.roofline), budget.loc("deployment"),
                          budget=budget.name, promise="memory",
                          fix=(f"at most {rl.memory_max_sequences_worst} concurrent sequences, "
                               "an 8-bit KV cache, or more devices keep every sequence resident"))
        return
    severity = SEVERITY if v.verdict == "cannot-be-met" else Severity.WARNING
    message = describe_memory(evaluation.roofline)
    rl = evaluation.roofline.realistic
    if severity is Severity.WARNING and rl is not None and rl.memory_max_sequences == 0:
        # not at risk: the engine refuses to start (vLLM sizes its KV cache from the usable fraction)
        from budgetlint.model.units import format_percent

        usable = evaluation.roofline.deployment.memory_usable_fraction
        severity = Severity.ERROR
        message += (f"; at the usable fraction {format_percent(usable)} of device memory the engine would not "
                    f"start (vLLM --gpu-memory-utilization {numbers.stated(usable)}: raise it, or "
                    "deployment.memory_usable_fraction, only if the device runs nothing else)")
    yield Finding(CODE, severity, message, budget.loc("deployment"), budget=budget.name,
                  promise="memory", fix=lever_text(evaluation, "memory") or "reduce concurrency or context",
                  data=lever_edit(evaluation, "memory"))
