"""A deployment's calibration file that cannot be used.

## What it checks
`deployment.calibration` names a file that does not exist, is not a valid
`kind: calibration` document (every problem with its own file:line:column),
or was fitted for another model or hardware (errors). A warning when the file
is read but not trusted as written: its `created:` is no real date or after
today (it would never go stale), its `error:` band is wider than +/- 100 %, or
its `runs:` rows cannot support the band it states (fewer than 3 runs held
out, fewer rows with a leave-one-out error than the band counts, or rows whose
own leave-one-out errors exceed it). `budgetlint calibrate` writes none of
these; the budget is then judged without the calibration.

## Why
The budget's predictions fall back to the assumed efficiencies, without a
band: a calibration that silently did not apply would be a quiet pass.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: h100-sxm, calibration: cal/llama70b-h200.yaml}
# BL310: calibration 'cal/llama70b-h200.yaml' is for llama-3.3-70b on h200-sxm,
#        not llama-3.1-8b on h100-sxm
```

## Fix
Point at the right file, or refit it: `budgetlint calibrate RUNS... --model M
--hardware H -o cal.yaml` (docs/calibration.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL310"
NAME = "calibration-unusable"
SUMMARY = "A deployment's calibration file that cannot be used."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    ce = evaluation.calibration
    if ce is None:
        return
    for f in ce.problems:
        where = f" ({f.rule})" if f.rule != CODE else ""
        if f.rule == CODE and f.severity == Severity.WARNING:  # read, but not trusted as written
            yield Finding(CODE, Severity.WARNING, f"budget {budget.name!r}: calibration {ce.path!r}: {f.message}",
                          f.location or ce.declared_at, budget=budget.name,
                          fix="refit it with `budgetlint calibrate` (docs/calibration.md)")
            continue
        yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: calibration {ce.path!r} cannot be used{where}: {f.message}",
                      f.location or ce.declared_at, budget=budget.name,
                      fix="refit it with `budgetlint calibrate` (docs/calibration.md)")
