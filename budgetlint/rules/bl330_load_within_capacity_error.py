"""A time promise the simulation cannot judge: the load is within the uncalibrated capacity's error of saturation.

## What it checks
Budgets whose declared open-loop traffic is simulated on the uncalibrated
step cost at a utilisation from 0.95 up to the overload edge, 1 / 0.98
(1.02). budgetlint's uncalibrated saturation has been measured at 0.98-1.01
of the same systems' MLPerf Offline throughput (docs/load.md, "Capacity
against MLPerf Offline"). Where the compute fraction is a default whose own
rows spread wider, the edge is 1 over the lowest saturation it predicts for
them (bf16 on Hopper: 0.810, the fastest of its nine public runs, so 1.235;
docs/calibration.md "Compute default for bf16 on Hopper"). A load there may be overloaded or comfortably
served, and the simulated percentile is a transient that swings with the
saturation itself. Each time promise the simulation would have decided is
judged `not-shown` (docs/judgement.md) and reported here with the load per
replica, the capacity, the saturation, the utilisation, the band and its
source, and what would settle it. The roofline bound still decides first
(BL301); a linked run or production histograms that count decide instead
(then this rule is silent). A calibrated step cost has no such band: its
verdicts come from the simulation as before.

A disaggregated deployment is decided the same way on its busier pool's
utilisation (arrivals over that pool's replicas x its saturation): the message
names that pool, and the fix is its replicas (`disaggregated.prefill.replicas`
or `.decode.replicas`); a calibration does not reach the pools' simulation.
The band there is the aggregated one applied per pool, an assumption: no
disaggregated run was measured against MLPerf Offline.

## Why
Near saturation TPOT is about `F / (1 - rho)`: a 2 % error in the
saturation rate moves the predicted percentile 2x or more, and past 1 the
simulated queue grows without bound while the real system, up to 2 %
faster, holds a steady state. Calling such a load met would be a silent
pass; calling it at risk (or overloaded) would be a false alarm on runs the
real systems sustained (the Cisco 16 x H100 MLPerf Server run, at 0.987 of
its Offline throughput, is simulated at utilisation 1.004).

## Example
```yaml
percentile: p95
workload:
  prompt_tokens: {lognormal: {mean: 1500, p95: 4000}}
  output_tokens: {lognormal: {mean: 300, p95: 800}}
  arrival_rate: 11.6 request/s
promise: {ttft: 800 ms, tpot: 50 ms}
deployment: {model: llama-3.1-8b, hardware: h100-sxm}
# BL330: p95 TPOT not shown (simulated 88.8 ms, a transient) at 11.6 request/s
#        against a saturation of 11.7 request/s (utilisation 0.9884); every
#        promise holds up to 11.3 request/s per replica in the simulation;
#        inside the band 0.95 to 1.02 where an uncalibrated simulation can
#        tell neither met nor at risk (...); promise 50 ms; settle it:
#        calibrate on a run of this deployment (budgetlint calibrate), link a
#        measured run at this rate, or deployment.replicas: 2 (utilisation
#        under 0.95)
```

## Fix
Calibrate the deployment on a run of the real system (`budgetlint
calibrate`), link a measured run at the declared rate (`evidence:`), or add
replicas until the utilisation is under 0.95 (the message says how many).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL330"
NAME = "load-within-capacity-error"
SUMMARY = ("A time promise the simulation cannot judge: the load is within the uncalibrated "
           "capacity's error of saturation.")
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    load = evaluation.load
    if load is None or load.skipped is not None or load.result is None or not load.in_capacity_band:
        return
    from budgetlint.evaluate.load import band_message, replicas_under_near_saturation
    from budgetlint.rules._fixes import edit
    from budgetlint.rules._verdicts import promise_location

    judged = getattr(evaluation, "judgement", None) or {}
    for promise in ("ttft", "tpot", "e2e"):
        j = judged.get(promise)
        if load.verdicts.get(promise) != "not-shown" or j is None or j.basis != "simulated" \
                or j.verdict != "not-shown":
            continue  # the bound, a linked run or production decided: they say it
        n = replicas_under_near_saturation(load)
        fix, data = None, {}
        if load.pools is not None:  # a disaggregated deployment: the busier pool's (or each busy pool's) replicas
            from budgetlint.evaluate.load import pools_band_replicas

            grow = pools_band_replicas(load)
            if grow:
                fix = ", ".join(f"disaggregated.{pool}.replicas: {k}" for pool, k in grow)
                data = edit(budget, [(("deployment", "disaggregated", pool, "replicas"), k) for pool, k in grow],
                            safe=False, title=fix)
        elif n is not None and n > load.replicas:
            fix = f"deployment.replicas: {n}"
            data = edit(budget, [(("deployment", "replicas"), n)], safe=False, title=fix)
        yield Finding(CODE, SEVERITY, band_message(budget, load, promise), promise_location(budget, promise),
                      budget=budget.name, promise=promise, fix=fix, data=data)
