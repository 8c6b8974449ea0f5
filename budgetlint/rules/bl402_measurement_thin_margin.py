"""A benchmark measurement meets the promise, but with thin margin.

## What it checks
For every matching measurement (see BL401), a promise that is met at the
budget's percentile with a margin below the run's threshold
(`margin_warning`, default 10 %): margin = (promise - measured) / promise
on the time scale (for a pace promise: measured pace / promised pace - 1).

A promise met on evidence too thin to show it (BL407, BL408) is *not
shown*, and reported there instead.

## Why
A benchmark is one run on one day. Traffic mix, software upgrades and a
noisy neighbour move percentiles by more than a few percent; a promise met
by 3 % is a promise that will be missed.

## Example
```yaml
percentile: p95
promise: {ttft: 400 ms}
bench: [runs/chat-c16.json]      # p95_ttft_ms: 380
# BL402: p95 TTFT measured 380 ms, promise 400 ms: met with 5% margin
#        (threshold 10%)
```

## Fix
Buy margin (faster deployment, lower concurrency) or loosen the promise;
if the margin is deliberate, lower the threshold for the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.model.units import format_percent
from budgetlint.rules import _evidence
from budgetlint.rules._messages import inferred_words
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL402"
NAME = "measurement-thin-margin"
SUMMARY = "A benchmark measurement meets the promise, but with thin margin."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    threshold = float(getattr(ctx.options, "margin_warning", 0.10) or 0.0)
    for p in _evidence.promises(budget, evaluation):
        r, link = p.reading, p.link
        if not p.compared or r.margin is None or r.margin < -1e-9:
            continue
        if not link.shown(p.promise):
            continue  # met on evidence that cannot show it: BL407/BL408 say "not shown"
        margin = (r.promised_s / r.measured_s - 1.0) if p.pace else r.margin
        if margin >= threshold:
            continue
        how = f" ({r.how})" if r.how else ""
        fig = p.figures()
        yield Finding(
            CODE, SEVERITY,
            f"{r.percentile} {p.what} measured {p.value(r.measured_s, fig)}, "
            f"promise {p.value(r.promised_s, fig)}: met with {format_percent(margin)} margin "
            f"(threshold {numbers.percent(threshold)}); measured in {link.name}{how}{inferred_words(link)}",
            p.where, budget=budget.name, promise=p.promise,
            fix=f"buy at least {numbers.percent(threshold)} margin or loosen the promise")
