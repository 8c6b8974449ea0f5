"""A time promise the simulation cannot judge: its uncalibrated percentile misses the promise by less than the model's measured error.

## What it checks
Budgets whose declared traffic is simulated on the uncalibrated step cost
and whose simulated percentile (or the top of its 95 % interval) is above
the promise by no more than 1.185 x, the most an uncalibrated simulated
percentile has been measured above the real one: the largest predicted /
measured ratio (1.1842, rounded up) over every p50, p90 and p99 TTFT and TPOT of the validation
set's sustained runs (benchmarks/validation, docs/load.md "The percentile
band"). The real percentile may lie on either side of the promise there, so
the promise is judged `not-shown` (docs/judgement.md), never at risk, and
reported here with the predicted value, its interval, the promise, the band
and its source, and what would settle it. Where the edge allowances
(connection setup, network) apply, the band is 1.185 x the simulated part of
the promise, the allowances added back.

Not in the band: a percentile more than 1.185 x the promise (BL307 says at
risk), an overloaded load (no steady state: BL307), a load in the capacity
band (BL330), the bound's cannot-be-met (BL301), a calibrated step cost (its
own fitted error decides). A linked run or production histograms that count
decide instead (then this rule is silent).

The band is one-sided. It is the model's measured pessimism (how far below a
prediction the real percentile has been found); the same runs measure its
optimism as far larger (predicted / measured down to 0.06), and a band that
wide would judge nothing: a met verdict carries that bias, as docs/load.md's
validation table states it.

## Why
On two VALID MLPerf Interactive runs (Dell XE7745 and XE9680, H200) the
simulated p99 TPOT is 40.5 and 42.3 ms against a 40 ms constraint that the
real runs met at 39.6 and 38.7 ms: 2-9 % pessimistic, inside the error the
model has been measured to have. Calling them at risk is a false alarm; the
simulation cannot tell.

## Example
```yaml
percentile: p99
workload:
  prompt_tokens: {lognormal: {mean: 1500, p95: 4000}}
  output_tokens: {lognormal: {mean: 300, p95: 800}}
  arrival_rate: 6 request/s
promise: {tpot: 21.5 ms}
deployment: {model: llama-3.1-8b, hardware: h100-sxm}
# BL331: p99 TPOT not shown: simulated 21.1 ms (95 % interval 19.2 ms-23.1 ms)
#        at 6 request/s (utilisation 0.511); promise 21.5 ms: the interval's
#        top 23.1 ms is above it by no more than the uncalibrated model's
#        measured error, inside the band from the promise up to 25.5 ms
#        (1.185 x the promise; ...), where the real p99 may fall on either
#        side of it; settle it: calibrate on a run of this deployment
#        (budgetlint calibrate), link a measured run at this rate
```

## Fix
Calibrate the deployment on a run of the real system (`budgetlint
calibrate`), link a measured run at the declared rate (`evidence:`), or add
the replicas the message names (simulated within the promise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL331"
NAME = "percentile-within-model-error"
SUMMARY = ("A time promise the simulation cannot judge: its uncalibrated percentile misses the promise "
           "by less than the model's measured error.")
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    load = evaluation.load
    if load is None or load.skipped is not None or load.result is None or not load.in_percentile_band:
        return
    from budgetlint.evaluate.load import percentile_band_message
    from budgetlint.rules._fixes import edit
    from budgetlint.rules._verdicts import promise_location

    judged = getattr(evaluation, "judgement", None) or {}
    for promise in ("ttft", "tpot", "e2e"):
        j = judged.get(promise)
        if promise not in load.in_percentile_band or load.verdicts.get(promise) != "not-shown" or j is None \
                or j.basis != "simulated" or j.verdict != "not-shown":
            continue  # the bound, a linked run or production decided: they say it
        fix, data = None, {}
        n = load.replicas_needed
        if load.pools is None and n is not None and n > load.replicas:
            fix = f"deployment.replicas: {n}"
            data = edit(budget, [(("deployment", "replicas"), n)], safe=False, title=fix)
        yield Finding(CODE, SEVERITY, percentile_band_message(budget, load, promise),
                      promise_location(budget, promise), budget=budget.name, promise=promise, fix=fix, data=data)
