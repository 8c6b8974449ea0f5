"""A promise the roofline meets at a realistic efficiency, with its headroom.

## What it checks
Promises met at the realistic efficiency (see BL303). Reported as
information with the headroom: promise / realistic estimate - 1, as a signed
percent (the same figure as `analysis.headroom_<promise>` in JSON, the
markdown Headroom column, and the SARIF and JUnit properties).

## Why
The headroom is what a PR that adds load or changes the deployment eats
into; `budgetlint check --base` shows it shrinking.

## Example
```yaml
promise: {ttft: 400 ms}
# BL304: ttft 400 ms is met: estimate 211 ms at 50% of compute
#        (bound 183 ms), headroom +90%
```

## Fix
Nothing to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL304"
NAME = "promise-met"
SUMMARY = "A promise the roofline meets at a realistic efficiency, with its headroom."
SEVERITY = Severity.INFO


def check(b: Budget, ev: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._messages import describe_met
    from budgetlint.rules._verdicts import promise_location

    for name in ("ttft", "tpot", "e2e"):
        v = ev.verdicts.get(name)
        if v is None or v.verdict != "met":
            continue
        yield Finding(CODE, SEVERITY, describe_met(ev.roofline, v), promise_location(b, name),
                      budget=b.name, promise=name)
