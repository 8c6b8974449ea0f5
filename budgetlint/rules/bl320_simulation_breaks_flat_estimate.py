"""A promise the flat estimate meets but the declared traffic breaks: the simulation decides.

## What it checks
Percentile promises (TTFT, TPOT, E2E) whose flat estimate (one request on
an idle system, or a steady batch at the declared concurrency) is met while the judged verdict, on the simulated basis
under the budget's declared traffic, is not (docs/judgement.md). The
finding names both numbers.

## Why
The flat estimate leaves out queueing and bursts: one request alone, or a
steady batch whose decode passes each carry an average share of the others'
prefill, never a whole prompt at once. A gate that printed "met +1056%" beside a simulated
p95 that misses gave two answers; the judgement gives one (the simulated),
and this says why it differs from the flat figure. BL307 carries the miss
itself as a warning; this is the explanation.

## Example
```yaml
workload: {arrival_rate: 11 request/s}   # one H100 completes at most ~9.6
promise: {ttft: 800 ms}
# BL320: ttft 800 ms: the flat estimate 49.9 ms meets it, but under 11
#        request/s the simulated p95 TTFT is 484 ms with no steady state ...
```

## Fix
Act on the simulated figure: add replicas (BL307 says how many), lower the
declared rate, or calibrate the deployment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL320"
NAME = "simulation-breaks-flat-estimate"
SUMMARY = "A promise the flat estimate meets but the declared traffic breaks: the simulation decides."
SEVERITY = Severity.INFO


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.judge import flat_words, fmt as _fmt
    from budgetlint.rules._verdicts import promise_location

    judged = getattr(evaluation, "judgement", None) or {}
    for name in ("ttft", "tpot", "e2e"):
        j = judged.get(name)
        v = evaluation.verdicts.get(name)
        if j is None or v is None or j.basis != "simulated" or j.verdict == "met" or v.verdict != "met":
            continue
        if j.verdict == "not-shown" and getattr(evaluation.load, "in_capacity_band", False):
            continue  # within the uncalibrated capacity's error: BL330 says it, and the simulation decides nothing
        if j.verdict == "not-shown" and name in getattr(evaluation.load, "in_percentile_band", ()):
            continue  # within the uncalibrated percentile's measured error: BL331 says it
        flat = j.considered.get("calibrated", j.considered.get("estimate"))
        if flat is None:
            continue
        label = {"ttft": "ttft", "tpot": "tpot", "e2e": "e2e"}[name]
        overloaded = " with no steady state (the queue grows without bound)" if evaluation.load.overloaded else ""
        yield Finding(
            CODE, SEVERITY,
            f"budget {budget.name!r}: {label} {_fmt(j.limit, j.unit)}: the flat estimate {_fmt(flat, j.unit)} meets it "
            f"({flat_words(evaluation)}), but {j.words.split(';')[0]}{overloaded} is "
            f"{j.verdict.replace('-', ' ')}: the simulated figure decides",
            promise_location(budget, name), budget=budget.name, promise=name,
            fix="act on the simulated figure: add replicas, lower the declared rate, or calibrate the deployment")
