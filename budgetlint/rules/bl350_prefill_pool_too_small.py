"""A disaggregated deployment's prefill pool cannot keep up with the declared arrivals.

## What it checks
For a deployment with `disaggregated:` pools and a declared `arrival_rate`: the
prefill pool's utilisation, arrival rate x the realistic prefill time of one
prompt / the prefill replicas (each replica prefills one prompt at a time at
the estimate's efficiency). At 100 % or more the prefill queue grows without
bound: every TTFT percentile grows with the length of the run. The message
names the pool, its utilisation, the prefill replicas that bring it below
100 %, and, from the simulation of both pools (the prefill queue feeding the
decode pool's admission), which splits of the same replicas between the pools
meet the promises at the budget's percentile, and the fewest prefill replicas
(the decode pool as declared) whose simulation meets them: the fix. The
promises themselves are judged on that simulation (BL307 words a miss).
Silent where that simulation puts the busier pool inside the uncalibrated
capacity band (utilisation 0.95 up to 1 / 0.98): BL330 reports it there, and
a queue that grows without bound is not shown.

## Why
Disaggregation moves the prefill onto its own devices: the decode pool's pace
no longer suffers from prefill interference, but the first token now waits for
a prefill replica. A pool sized for the decode side alone queues prompts
without end, and the flat TTFT estimate (one prompt, no queue) does not show it.

## Example
```yaml
workload: {prompt_tokens: 4096, output_tokens: 200, arrival_rate: 8 request/s}
deployment:
  model: llama-3.1-70b
  hardware: h100-sxm
  disaggregated:
    prefill: {devices: 4, replicas: 1}
    decode: {devices: 4, replicas: 3}
    kv_link: {bandwidth: 50 GB/s, latency: 1 ms}
# BL350: the prefill pool (1 x h100-sxm, 4 devices each) is 243% utilised:
#        8 request/s x 303 ms of prefill a prompt over 1 replica ...
```

## Fix
More prefill replicas (`disaggregated.prefill.replicas`), moved from the decode
pool where the simulated splits show one that meets the promises; faster
prefill devices; or a prefix cache that removes part of each prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL350"
NAME = "prefill-pool-too-small"
SUMMARY = "A disaggregated deployment's prefill pool cannot keep up with the declared arrivals."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.text import numbers

    pools = evaluation.roofline.pools
    if pools is None or not pools.prefill_too_small:
        return
    load = evaluation.load
    if load is not None and load.skipped is None and getattr(load, "in_capacity_band", False):
        return  # the simulated pools are within the uncalibrated saturation's error of 1: BL330 says it (issue 25)
    from budgetlint.evaluate.load import REPLICAS_CAP, replicas_beyond_words, utilisation_text

    need = pools.prefill_replicas_needed
    have = pools.definition.prefill.replicas
    rate = pools.arrival_rate_per_s
    s = pools.realistic.prefill.prefill_s
    after = rate * s / need if need else None
    u = pools.prefill_utilisation
    # past 1,000 % a percent is no reading (issue 24: 300 digits): the utilisation as a number
    used = f"{numbers.percent(u)} utilised" if u < 10 else f"at utilisation {utilisation_text(u)}"
    beyond = need is None or need > REPLICAS_CAP
    message = (f"budget {budget.name!r}: the prefill pool ({pools.prefill_name}) is {used}: "
               f"{numbers.quantity(rate, 'request/s')} x {numbers.quantity(s, 's')} of prefill a prompt (realistic "
               f"estimate) over {numbers.count(have, 'replica')}; its queue grows without bound, so TTFT has no "
               f"steady state. " + (f"{replicas_beyond_words()[0].upper()}{replicas_beyond_words()[1:]}" if beyond
                                    else f"{numbers.count(need, 'prefill replica')} bring it to {numbers.percent(after)}"))
    from budgetlint.evaluate.disaggregated import split_band

    band = split_band(load)
    words = pools.split_words(band)
    # a split in the capacity band is no fix (the next run: not shown, BL330; issue 25)
    meets = [w for w, sp in zip(words, pools.splits)
             if sp.meets and not (band is not None and band(sp.prefill_replicas, sp.decode_replicas))]
    if pools.splits:
        message += f"; simulated at {pools.split_percentile}: " + "; ".join(words)
    load = evaluation.load
    sim = getattr(load, "pools", None) if load is not None and load.result is not None else None
    if sim is not None and sim.prefill_fix is not None:  # the simulated search (evaluate/disaggregated.py)
        message += (f"; with the decode pool as declared, {numbers.count(sim.prefill_fix, 'prefill replica')} "
                    f"meet the promises (simulated)")
    fix = None if beyond else \
        f"disaggregated.prefill.replicas: {sim.prefill_fix if sim is not None and sim.prefill_fix else need}"
    if meets:
        fix = f"{meets[0].replace(' meets it', '').replace(' (declared)', '')} replicas (it meets the promises)"
    yield Finding(CODE, SEVERITY, message, budget.loc("deployment", "disaggregated", "prefill"),
                  budget=budget.name, promise="ttft", fix=fix)
