"""A linked benchmark run outside the calibration's band.

## What it checks
Each benchmark run linked to a calibrated budget (below saturation) is
predicted at its own conditions with the calibration; a TTFT or TPOT that
differs from the prediction by more than the calibration's band (its largest
leave-one-out error) is reported.

## Why
The band is the calibration's claim about its own error. A new run outside
it means the calibration no longer describes the system: the engine, the
hardware or the traffic changed.

## Example
```yaml
deployment: {model: llama-3.2-3b, hardware: l40s, calibration: cal.yaml}  # band TPOT +/- 25 %
bench: [runs/today.json]
# BL312: runs/today.json line 1: tpot p50 measured 40 ms, the calibration
#        predicts 24.1 ms (-40 %), outside its +/- 25 % band
```

## Fix
Refit with the new run included, or find what changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL312"
NAME = "run-outside-calibration-band"
SUMMARY = "A linked benchmark run outside the calibration's band."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    ce = evaluation.calibration
    if ce is None or ce.calibration is None:
        return
    for o in ce.outside:
        yield Finding(CODE, SEVERITY,
                      f"budget {budget.name!r}: {o.run}: {o.metric} {o.stat} measured {numbers.quantity(o.measured_s, 's')}, "
                      f"the calibration predicts {numbers.quantity(o.predicted_s, 's')} ({numbers.percent(o.error, signed=True)}), outside its "
                      f"+/- {numbers.percent(o.band)} band: the calibration no longer describes the system",
                      ce.declared_at, budget=budget.name, fix="refit with this run (`budgetlint calibrate`)")
