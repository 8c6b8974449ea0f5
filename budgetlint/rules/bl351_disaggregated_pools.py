"""What a disaggregated deployment's prefill and decode pools contribute to its latency.

## What it checks
Nothing is wrong: for a deployment with `disaggregated:` pools, one finding says
what each pool is (hardware, devices, replicas), the KV link and the prompt's
transfer over it, the realistic TTFT's parts (prefill on the prefill pool, the
transfer, the queue allowance), the prefill pool's utilisation at a declared
arrival rate, and the simulated splits of the replicas between the pools
("2 prefill + 6 decode meets it; 4 + 4 does not"; a split whose busier pool is in
the uncalibrated capacity band, utilisation 0.95 up to 1 / 0.98 on the simulated
saturations, "cannot tell (in the capacity band)", as the judgement's not-shown
and BL330 say for the declared one). Every output format shows
it (text, JSON, SARIF, markdown, HTML, GitHub annotations, JUnit).

## Why
A disaggregated TTFT is not a colocated one: the reader needs to see which pool
and which link each part of it comes from, and which split of the replicas
would serve the traffic.

## Example
```yaml
deployment:
  model: llama-3.1-70b
  hardware: h100-sxm
  disaggregated:
    prefill: {devices: 4, replicas: 2}
    decode: {devices: 4, replicas: 6}
    kv_link: infiniband-ndr
# BL351: disaggregated: prefill pool 2 x h100-sxm (4 devices each), decode pool
#        6 x h100-sxm (4 devices each); KV 1.34 GB per prompt over infiniband-ndr = 26.8 ms ...
```

## Fix
None needed; it is information.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL351"
NAME = "disaggregated-pools"
SUMMARY = "What a disaggregated deployment's prefill and decode pools contribute to its latency."
SEVERITY = Severity.INFO


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.text import numbers

    pools = evaluation.roofline.pools
    if pools is None:
        return
    message = f"budget {budget.name!r}: " + pools.summary(numbers)
    if pools.splits:
        from budgetlint.evaluate.disaggregated import split_band

        # a split whose busier pool is in the uncalibrated capacity band: "cannot tell", the
        # judgement's not-shown (issue 25), not the simulation's "does not"
        message += (f"; simulated at {pools.split_percentile}: "
                    + "; ".join(pools.split_words(split_band(evaluation.load))))
    yield Finding(CODE, SEVERITY, message, budget.loc("deployment", "disaggregated"), budget=budget.name)
