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
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL402"
NAME = "measurement-thin-margin"
SUMMARY = "A benchmark measurement meets the promise, but with thin margin."
SEVERITY = Severity.WARNING


def check(b: Budget, ev: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    if not ev.links:  # no evidence: nothing to say (and nothing to import, per budget)
        return
    from budgetlint.evaluate import evidence as ev_mod
    from budgetlint.model.units import format_percent
    threshold = float(getattr(ctx.options, "margin_warning", 0.10) or 0.0)
    for link in ev.links:
        if not link.counts:
            continue
        for name, r in link.readings.items():
            if r.status != "compared" or r.margin is None or r.margin < -1e-9:
                continue
            if not link.shown(name):
                continue  # met on evidence that cannot show it: BL407/BL408 say "not shown"
            pace = name == "tpot" and b.promise.pace_given
            margin = (r.promised_s / r.measured_s - 1.0) if pace else r.margin
            if margin >= threshold:
                continue
            what = ev_mod.promise_words(b, name)
            how = f" ({r.how})" if r.how else ""
            fig = ev_mod.figures_apart(name, pace, r.measured_s, r.promised_s)
            yield Finding(
                CODE, SEVERITY,
                f"{r.percentile} {what} measured {ev_mod.fmt_value(name, r.measured_s, pace, fig)}, "
                f"promise {ev_mod.fmt_value(name, r.promised_s, pace, fig)}: met with {format_percent(margin)} margin "
                f"(threshold {numbers.percent(threshold)}); measured in {link.name}{how}{link.inferred_words()}",
                ev_mod.promise_loc(b, name), budget=b.name, promise=name,
                fix=f"buy at least {numbers.percent(threshold)} margin or loosen the promise")
