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


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._messages import describe_met
    from budgetlint.rules._verdicts import promise_location

    judged = getattr(evaluation, "judgement", None) or {}
    for name in ("ttft", "tpot", "e2e"):
        v = evaluation.verdicts.get(name)
        j = judged.get(name)
        if j is not None:  # the judged verdict, on its basis (budgetlint.judge)
            if j.verdict != "met":
                continue
            if j.basis in ("simulated", "measured"):
                yield Finding(CODE, SEVERITY, met_on_basis(budget, evaluation, j), promise_location(budget, name),
                              budget=budget.name, promise=name)
                continue
        if v is None or v.verdict != "met":
            continue
        message = describe_met(evaluation.roofline, v)
        if j is not None and j.note:
            message += f"; {j.note}"
        yield Finding(CODE, SEVERITY, message, promise_location(budget, name), budget=budget.name, promise=name)


def _flat_is(ev) -> str:
    """``one request on an idle system (no queueing, ...)`` or ``a steady batch of B sequences (...)``."""
    from budgetlint.judge import flat_words

    what, _, lacks = flat_words(ev).partition(": ")
    return f"{what} ({lacks})"


def met_on_basis(b, ev, j) -> str:
    """"ttft 500 ms is met under 10 request/s: simulated p95 TTFT 330 ms (95 % interval ...), headroom +52%"."""
    from budgetlint.judge import fmt as quantity  # a TPOT spelled as a time, as every output spells it
    from budgetlint.text.numbers import headroom

    label = {"ttft": "ttft", "tpot": "tpot", "e2e": "end-to-end"}[j.promise]
    promised = quantity(j.limit, j.unit)
    iv = ""
    if j.interval:
        lo, hi = (quantity(x, j.unit) for x in j.interval)
        iv = f" (95 % interval {lo}-{hi})"
    room = f", headroom {headroom(j.headroom)}" if j.headroom is not None else ""
    if j.basis == "simulated":
        from budgetlint.evaluate.load import load_words

        words = j.words.split(";")[0]
        under = load_words(ev.load).replace("at ", "under ", 1) if ev.load.arrival_rate_per_s is not None \
            else load_words(ev.load).replace("with ", "with ", 1)
        flat = j.considered.get("calibrated", j.considered.get("estimate"))
        flat_words = (f"; the flat estimate {quantity(flat, j.unit)} is {_flat_is(ev)}"
                      if flat is not None else "")
        return (f"budget {b.name!r}: {label} {promised} is met {under}: {words.split(' at ')[0].split(' with ')[0]}"
                f"{iv}{room}{flat_words}")
    return f"budget {b.name!r}: {label} {promised} is met by measurement: {j.words}{iv}{room}"
