"""An `edge:` block on a budget that is not measured at the client.

## What it checks
`edge:` (connection setup, a proxy's flush size) describes what lies between
the server and the user. It only enters the arithmetic when the workload says
the promise is measured there: `measured_at: client`. Without it the block is
ignored, and this rule says so.

## Why
A proxy that buffers the reply is the difference between a first token in
0.5 s and one in 20 s. An edge that was written down but silently left out
of every check is worse than none: the budget reads as if it accounted for it.

## Example
```yaml
workload: {prompt_tokens: 200, output_tokens: 500}   # measured_at: server (default)
promise: {ttft: 500 ms, pace: 24 token/s}
edge: {proxy_flush_tokens: 500}
# BL203: budget 'b': edge: is ignored: the workload is measured at the server
```

## Fix
Add `measured_at: client` to the workload when the promise is what the user
sees, or remove the `edge:` block when it is the server's number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL203"
NAME = "edge-not-at-client"
SUMMARY = "An `edge:` block on a budget that is not measured at the client."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    if not budget.has("edge"):
        return
    if budget.workload is not None and budget.workload.measured_at == "client":
        return
    yield Finding(CODE, SEVERITY,
                  f"budget {budget.name!r}: edge: is ignored: the workload is measured at the server "
                  "(measured_at: server, the default), so connection setup and proxy flushing are in "
                  "no check",
                  budget.loc("edge", key=True), budget=budget.name,
                  fix="add `measured_at: client` to the workload if the promise is what the user sees, "
                      "or remove `edge:`")
