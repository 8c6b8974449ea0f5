"""A calibration that no longer describes the deployment's engine, or is old.

## What it checks
A deployment's calibration (docs/calibration.md) whose engine version
differs from the newest benchmark run linked to the budget, or that was made
longer ago than `calibration-max-age` (default 180 days).

## Why
Engine releases change kernels and schedulers; a fit to the old version
predicts the new one with an error its band does not cover.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: h100-sxm, calibration: cal.yaml}  # vLLM 0.10
bench: [runs/vllm-0.11.json]
# BL311: calibrated on vllm 0.10.0, but the newest linked run is on vllm 0.11.0
```

## Fix
Refit with the new runs: `budgetlint calibrate runs/ --model ... -o cal.yaml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL311"
NAME = "calibration-stale"
SUMMARY = "A calibration that no longer describes the deployment's engine, or is old."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    ce = evaluation.calibration
    if ce is None or ce.calibration is None:
        return
    for check_name, message in ce.stale:
        yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: calibration {ce.path!r} is stale ({check_name}): {message}",
                      ce.declared_at, budget=budget.name,
                      fix="refit it with the current runs (`budgetlint calibrate`, docs/calibration.md)")
