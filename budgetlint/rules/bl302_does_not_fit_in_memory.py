"""The weights and KV cache do not fit in device memory.

## What it checks
Per device under tensor parallelism: weights / N + concurrency x context x
KV bytes per token / N (+ the declared `memory_overhead`, + a draft model)
against the device's memory. At 100 % of memory this is an error; it is a
warning (at risk) when it fits only above the usable fraction (default 90 %,
`memory_usable_fraction`), since runtimes reserve memory for activations,
CUDA graphs and fragmentation.

The context is the longest a sequence reaches: prompt + output tokens.

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
# BL302: needs 33.2 GB per device (weights 16.1 GB + KV 17.2 GB);
#        the a10g has 24 GB
```

## Fix
4-bit or 8-bit weights, an 8-bit KV cache, fewer concurrent sequences, or
more devices; the message lists those that fit.
"""

from __future__ import annotations

from typing import Iterator

from budgetlint.findings import Finding, Severity

CODE = "BL302"
NAME = "does-not-fit-in-memory"
SUMMARY = "The weights and KV cache do not fit in device memory."
SEVERITY = Severity.ERROR
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.WARNING: "it fits the physical memory but not the usable fraction (at risk)"}


def check(b, ev, ctx) -> Iterator[Finding]:
    from budgetlint.rules._messages import describe_memory
    from budgetlint.rules._verdicts import lever_text

    v = ev.verdicts.get("memory")
    if v is None or v.verdict == "met":
        return
    severity = SEVERITY if v.verdict == "cannot-be-met" else Severity.WARNING
    yield Finding(CODE, severity, describe_memory(ev.roofline), b.loc("deployment"), budget=b.name,
                  promise="memory", fix=lever_text(ev, "memory") or "reduce concurrency or context")
