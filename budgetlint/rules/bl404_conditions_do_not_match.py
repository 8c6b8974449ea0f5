"""A measurement's run conditions do not match the budget: it is not evidence for it.

## What it checks
For each measurement linked to a budget, the run conditions the file records
(or that the reader inferred) against the budget's workload and deployment:
- model, hardware and device count, when the file names them (catalog
  names and aliases are recognised: `meta-llama/Llama-3.1-8B-Instruct` is
  `llama-3.1-8b`);
- concurrency at least the budget's;
- mean prompt and output lengths within ±25 % of the budget's;
- a promise at the client edge (`measured_at: client`) needs a
  measurement at the client: a server-side one lacks the network, connection
  setup and proxies.
Conditions the file does not record are taken from the budget and reported
as inferred; they never cause this warning. With several budgets in a run,
a `--bench` file applies to the budgets it matches; one that matches none
is reported at the file.

## Why
A benchmark at concurrency 1 says nothing about a promise at concurrency
32; a run with 200-token prompts says nothing about TTFT for 2,000-token
prompts. Counting such a run as evidence would make a budget look met (or
missed) on the strength of a different workload.

## Example
```yaml
workload: {prompt_tokens: 2000, output_tokens: 600, concurrency: 32}
bench: [runs/c8.json]            # max_concurrency: 8
# BL404: runs/c8.json is not evidence for chat-reply: concurrency 8, lower
#        than the budget's 32
```

## Fix
Benchmark under the budget's load (concurrency, prompt and output
lengths, hardware, at the promised edge), or link the file to the budget
it does describe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Location, Severity
from budgetlint.rules import _evidence

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL404"
NAME = "conditions-do-not-match"
SUMMARY = "A measurement's run conditions do not match the budget: it is not evidence for it."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for link in _evidence.links(evaluation, counting=False):
        if not link.mismatches:  # an expired entry is BL411's
            continue
        key = link.mismatches[0][0]
        where = link.where if budget.bench and link.where.file == budget.doc.file else _evidence.conditions_loc(budget, key)
        yield Finding(
            CODE, SEVERITY,
            f"{link.name} is not evidence for {budget.name}: "
            + "; ".join(r for _, r in link.mismatches),
            where, budget=budget.name,
            fix="benchmark under the budget's workload and deployment, or link the file to the "
                "budget it describes")


def check_run(ctx) -> Iterator[Finding]:
    """The run's --bench measurements that no budget took."""
    for bf, m, reasons in ctx.unlinked:
        name = f"{bf.path} ({m.label})" if m.label else bf.path
        yield Finding(
            CODE, SEVERITY,
            f"{name} matches none of the run's budgets, so it is evidence for none: "
            + " | ".join(reasons),
            Location(bf.path, 1, 1),
            fix="list the file under the `bench:` of the budget it describes")
