"""A budget whose promises could not be checked against the roofline.

## What it checks
Budgets without a deployment, or whose model or hardware lacks a figure the
arithmetic needs, or whose inputs had errors: the message names what is
missing. It is a warning, so that `--quiet` (the pre-commit default) still
shows it and a skipped check never reads as "No problems found".

What the facts allow is still checked, and only what needs the missing fact
is skipped ("partly checked"):

- hardware with no compute peak (A10G, Apple M-series): the bandwidth bounds
  (decode ceiling, prefill's weight-read floor) are checked and can show a
  promise impossible, never met; prefill compute is not checked, and such
  hardware is never proposed as a lever for a time promise;
- hardware with no memory size: every time bound is checked, the memory fit
  is not;
- a model needs `parameters`, `layers`, `attention_heads` and `head_dim`
  (`hidden_size` only to derive `head_dim`, or to size the input embedding
  with `vocab_size`).

## Why
Silence must not read as a pass. The budget's arithmetic rules (BL2xx) still
apply; its physics verdicts do not.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: a10g}
# BL306 warning: partly checked: hardware 'a10g' lists no compute peak: what
#        needs compute is not checked ...
```

## Fix
Declare the deployment, or complete the hardware or model entry
(`extends:` a catalog entry and add the missing field).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL306"
NAME = "physics-not-checked"
SUMMARY = "A budget whose promises could not be checked against the roofline."
SEVERITY = Severity.WARNING
OTHER_SEVERITIES = {Severity.INFO: "the budget declares no deployment: it asked for no physics"}


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    where = budget.loc("deployment") if budget.has("deployment") else budget.loc("name")
    if evaluation.roofline.skipped and budget.complete:
        severity = Severity.INFO if not budget.has("deployment") else SEVERITY
        yield Finding(CODE, severity, f"budget {budget.name!r}: physics not checked: {evaluation.roofline.skipped}",
                      where, budget=budget.name)
    for note in evaluation.roofline.notes:
        yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: partly checked: {note}", where, budget=budget.name)
