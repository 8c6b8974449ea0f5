"""A `bench:` entry past its `expires:` date: the file no longer counts as evidence.

## What it checks
A `bench:` entry written as `{path: ..., expires: YYYY-MM-DD}` (the last
day it counts) whose date is before today. Like an expired suppression
(BL503), it stops applying: its measurements are no longer held against
the promises (no BL401/BL402 from them), and this warning says so. Today
is the system date, or `BUDGETLINT_TODAY=YYYY-MM-DD`.

## Why
Evidence gets old. An expiry date on the link is the reminder to re-run
the benchmark, and it only works if expiry is loud.

## Example
```yaml
bench:
  - {path: runs/chat.json, expires: 2025-12-31}
# BL411: bench entry runs/chat.json expired on 2025-12-31 (31 days ago): it
#        is no longer evidence for chat-reply
```

## Fix
Re-run the benchmark and link the new file (with a new date), or remove
the entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.rules import _evidence

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL411"
NAME = "bench-evidence-expired"
SUMMARY = "A `bench:` entry past its `expires:` date: the file no longer counts as evidence."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    seen: set[tuple[str, str]] = set()
    for link in _evidence.links(evaluation, counting=None):
        if not link.expired:
            continue
        key = (budget.name, link.via)
        if key in seen:  # one finding per entry, not per measurement in it
            continue
        seen.add(key)
        days = link.expired_days
        where = link.where
        entry = _entry_index(budget, link.via)
        if entry is not None and budget.has("bench", entry, "expires"):
            where = budget.loc("bench", entry, "expires")
        yield Finding(
            CODE, SEVERITY,
            f"bench entry {link.via.removeprefix('bench: ')} expired on {link.expires} "
            f"({days} day{'s' if days != 1 else ''} ago): it is no longer evidence for {budget.name}",
            where, budget=budget.name,
            fix="re-run the benchmark and link the new file with a new `expires:`, or remove the entry")


def _entry_index(b, via: str) -> int | None:
    for i, pattern in enumerate(b.bench):
        if via == f"bench: {pattern!r}":
            return i
    return None
