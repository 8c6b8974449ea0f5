"""Declared traffic that could not be simulated.

## What it checks
Budgets that declare traffic (docs/load.md) whose simulation could not run:
no deployment physics (BL306 says why), weights that leave no KV cache, a
card without `memory`, an arrival rate below 1e-6 request/s per replica,
inputs that would take too long to simulate (an iteration budget of a few
tokens against long prompts, say), a percentile beyond what one simulation
can read (p99.99 and beyond: docs/load.md), or a run whose work budget for the
simulation (8,000,000 scheduler events over every budget, docs/limits.md)
was spent before this budget. Turning the simulation off on purpose
(`--no-simulate`, `simulate = false`) is not reported; the JSON report says
`load: {simulated: false}` either way. Budgets with input errors (a
percentile the schema refuses among them) are not reported here: fix those first.

## Why
A check that could not run is a warning that says why, never a quiet pass:
the percentile promises of this budget were not held against its traffic.

## Example
```yaml
workload: {prompt_tokens: 30000, output_tokens: 10, arrival_rate: 50 request/s}
deployment: {model: llama-3.1-8b, hardware: h100-sxm, max_num_batched_tokens: 1}
# BL309: the load simulation did not run: the simulation needed more than
#        500,000 scheduler events for 2,000 requests ...
```

## Fix
What the message names: a realistic `max_num_batched_tokens`, a model that
leaves memory for the KV cache, or the missing deployment facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL309"
NAME = "load-not-simulated"
SUMMARY = "Declared traffic that could not be simulated."
SEVERITY = Severity.WARNING

#: skips another finding already reports: the switch, input errors, a percentile the schema check refuses
#: (BL003; until stop 47 BL309 said it again)
_QUIET = ("the load simulation is turned off", "no physics for this budget: the budget has input errors",
          "the budget's percentile ")


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    load = evaluation.load
    if load is None or load.skipped is None or load.skipped.startswith(_QUIET):
        return
    where = budget.loc("workload") if budget.workload is not None else budget.loc()
    yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: the load simulation did not run: {load.skipped}",
                  where, budget=budget.name)
