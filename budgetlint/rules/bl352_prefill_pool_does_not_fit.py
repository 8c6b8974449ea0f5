"""A disaggregated deployment's prefill pool does not hold the weights and a prompt's cache.

## What it checks
Memory is checked per pool: the decode pool's fit (its weights and the KV
cache of the concurrent sequences) is BL302's; this rule checks the prefill
pool: its weights per device and the cache of the prompt it prefills (one at a
time), against the device's memory (100 %: the bound; the realistic estimate's
usable fraction and runtime reserve give a warning).

## Why
A prefill pool on smaller devices than the decode pool (or with fewer of them)
may not hold the model at all: the pool does not start.

## Example
```yaml
deployment:
  model: llama-3.1-70b
  hardware: h100-sxm
  disaggregated:
    prefill: {hardware: l4, devices: 1}
    decode: {devices: 4}
    kv_link: roce-400g
# BL352: the prefill pool (1 x l4, 1 device each) needs 141 GB per device of 24 GB
```

## Fix
More devices in the prefill pool (`disaggregated.prefill.devices`), devices with
more memory, or lower-precision weights.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL352"
NAME = "prefill-pool-does-not-fit"
SUMMARY = "A disaggregated deployment's prefill pool does not hold the weights and a prompt's cache."
SEVERITY = Severity.ERROR
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.WARNING: "it fits the physical memory but not the usable fraction with the runtime "
                                      "reserve (the realistic estimate)"}


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.text import numbers

    pools = evaluation.roofline.pools
    if pools is None:
        return
    bound, real = pools.bound.prefill, pools.realistic.prefill
    mem = pools.pools_bound.prefill.accelerator.memory_bytes
    if bound.memory_fits is False:
        severity, a, has = SEVERITY, bound, f"the device has {numbers.quantity(mem, 'B')}"
    elif real.memory_fits is False:
        severity, a = Severity.WARNING, real
        has = (f"{numbers.quantity(real.memory_available_bytes_per_device, 'B')} of the device's "
               f"{numbers.quantity(mem, 'B')} is usable (with the runtime reserve charged)")
    else:
        return
    yield Finding(CODE, severity,
                  f"budget {budget.name!r}: the prefill pool ({pools.prefill_name}) needs "
                  f"{numbers.quantity(a.memory_required_bytes_per_device, 'B')} per device (weights "
                  f"{numbers.quantity(a.memory_weight_bytes_per_device, 'B')} + one prompt's KV cache "
                  f"{numbers.quantity(a.memory_kv_bytes_per_device, 'B')}): {has}",
                  budget.loc("deployment", "disaggregated", "prefill"), budget=budget.name, promise="memory",
                  fix="more prefill devices (disaggregated.prefill.devices), devices with more memory, or "
                      "lower-precision weights")
