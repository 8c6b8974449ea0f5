"""A prediction far off a linked measurement that counts: the measurement decides.

## What it checks
Promises judged on the measured basis (a linked run that counts: matching
conditions, enough samples, no run-quality problem) whose best prediction
(simulated, else calibrated, else the flat estimate) is off the measured
value beyond its band: more than a factor 3 for the flat estimate, a factor
2 for the simulation (docs/judgement.md). A calibrated deployment's runs
outside its band are BL312's.

## Why
The measured value decides the verdict, but a model that far off will be
wrong about the next change a PR makes: the levers, the PR diff of other
budgets and the capacity planning all read predictions.

## Example
```yaml
promise: {ttft: 500 ms}
bench: [runs/chat.json]     # p95 TTFT 459 ms over 2,000 requests
# BL321: p95 TTFT measured 459 ms is 13.9x the flat estimate 33 ms ...
```

## Fix
Check that the run measured what the budget describes (lengths, concurrency,
arrival rate); declare the traffic the run was under; calibrate the
deployment from the run (`budgetlint calibrate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL321"
NAME = "prediction-far-from-measurement"
SUMMARY = "A prediction far off a linked measurement that counts: the measurement decides."
SEVERITY = Severity.WARNING

#: how far a prediction may be off a measurement before it is said (a factor: 1 + tolerance)
TOLERANCE = {"estimate": 2.0, "simulated": 1.0}


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.judge import fmt as _fmt
    from budgetlint.rules._verdicts import promise_location

    judged = getattr(evaluation, "judgement", None) or {}
    for name in ("ttft", "tpot", "e2e"):
        j = judged.get(name)
        if j is None or j.basis != "measured" or not j.value:
            continue
        basis = next((x for x in ("simulated", "calibrated", "estimate") if x in j.considered), None)
        if basis is None or not j.considered[basis]:
            continue
        predicted = j.considered[basis]
        if basis == "calibrated" or evaluation.roofline.calibrated:
            continue  # a run outside a calibration's band is BL312's to say
        tol = TOLERANCE[basis]
        ratio = j.value / predicted
        if 1.0 / (1.0 + tol) <= ratio <= 1.0 + tol:
            continue
        what = {"estimate": "the flat estimate", "simulated": "the simulated", "calibrated": "the calibrated estimate"}[basis]
        pct = budget.percentile or "p50"
        from budgetlint.text.numbers import number

        how = f"{number(ratio)}x" if ratio >= 1 else f"1/{number(1 / ratio)} of"
        yield Finding(
            CODE, SEVERITY,
            f"budget {budget.name!r}: {pct} {name.upper()} measured {_fmt(j.value, j.unit)} is {how} {what} "
            f"{_fmt(predicted, j.unit)} (allowed: a factor {number(1 + tol)}); the measured value decides the verdict, "
            "but the predictions (levers, other budgets on this deployment) are off by as much",
            promise_location(budget, name), budget=budget.name, promise=name,
            fix="check the run's conditions against the budget (lengths, concurrency, arrival rate), declare the "
                "traffic the run was under, or calibrate the deployment from the run (budgetlint calibrate)")
