"""A percentile promise the declared traffic breaks.

## What it checks
Budgets that declare traffic (`workload.arrival_rate`, length
distributions, `deployment.replicas` or scheduler facts): the serving
simulator (docs/load.md) runs the traffic through iteration-level
continuous batching at the realistic efficiency and predicts each promise
at the budget's percentile, with a 95 % confidence interval. A promise whose
predicted percentile, or the top of its interval, misses is reported with
the mechanism (KV-cache preemption, queueing, or batch crowding), the
capacity per replica at which it holds, and the replicas the declared rate
needs. The roofline bound is untouched: what the bound rules out is BL301,
never this rule. A disaggregated deployment's two pools are simulated
together (docs/topologies.md): the message gives each pool's utilisation,
names the pool that cannot keep up, the fewest replicas of a pool that
meet the promise (`disaggregated.prefill.replicas: N`), and a split of the
same replicas between the pools that meets it ("or, the same replicas
moved: 3 prefill + 1 decode meets it": then the fix moves them).

## Why
A flat estimate is one steady state at a fixed concurrency: no arrivals, no
queue, no preemption, each decode pass carrying only its average share of the
others' prefill (never a whole prompt at once). p50 can
be fine while p95 doubles at peak; this is where the tail moves first.

## Example
```yaml
percentile: p95
workload:
  prompt_tokens: {lognormal: {mean: 1500, p95: 4000}}
  output_tokens: {lognormal: {mean: 300, p95: 800}}
  arrival_rate: 11 request/s
promise: {ttft: 800 ms, tpot: 50 ms}
deployment: {model: llama-3.1-8b, hardware: h100-sxm}
# BL307: p95 TTFT 2.1 s predicted at 11 request/s (utilisation 0.99);
#        promise 800 ms; requests wait to be scheduled: queue p95 1.8 s;
#        holds up to 9.1 request/s per replica; 2 replicas meet it
```

## Fix
Add replicas (the message says how many), lower the rate per replica, or
pull one of the roofline levers that shortens each step; set
`max_num_seqs` / `max_num_batched_tokens` when the engine's defaults are
not yours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL307"
NAME = "percentile-broken-under-load"
SUMMARY = "A percentile promise the declared traffic breaks."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    load = evaluation.load
    if load is None or load.skipped is not None or load.result is None:
        return
    from budgetlint.evaluate.load import miss_message
    from budgetlint.rules._verdicts import promise_location

    for promise in ("ttft", "tpot", "e2e"):
        if load.verdicts.get(promise) != "at-risk":
            continue
        if evaluation.verdicts.get(promise) is not None and evaluation.verdicts[promise].verdict == "cannot-be-met":
            continue  # BL301 already says it; the simulation adds nothing to an impossibility
        j = (getattr(evaluation, "judgement", None) or {}).get(promise)
        if j is not None and j.verdict == "met":  # a linked run that counts meets it: measured decides
            continue
        fix, data = None, {}
        pools = load.pools
        if pools is not None and pools.moves:  # the same replicas moved between the pools: no more devices
            from budgetlint.rules._fixes import edit

            p_n, d_n = pools.moves[0]
            fix = f"disaggregated.prefill.replicas: {p_n}, disaggregated.decode.replicas: {d_n}"
            data = edit(budget, [(("deployment", "disaggregated", "prefill", "replicas"), p_n),
                                 (("deployment", "disaggregated", "decode", "replicas"), d_n)], safe=False, title=fix)
        elif pools is not None:  # a disaggregated deployment: the pool whose replicas meet it
            from budgetlint.rules._fixes import edit

            for pool in ("prefill", "decode"):
                n = getattr(pools, f"{pool}_fix")
                if n is not None:
                    fix = f"disaggregated.{pool}.replicas: {n}"
                    data = edit(budget, [(("deployment", "disaggregated", pool, "replicas"), n)], safe=False,
                                title=fix)
                    break
        elif load.replicas_needed is not None and load.replicas_needed > load.replicas:
            from budgetlint.rules._fixes import edit

            fix = f"deployment.replicas: {load.replicas_needed}"
            data = edit(budget, [(("deployment", "replicas"), load.replicas_needed)], safe=False, title=fix)
        yield Finding(CODE, SEVERITY, miss_message(budget, load, promise), promise_location(budget, promise),
                      budget=budget.name, promise=promise, fix=fix, data=data)
