"""The promised pace and reply length cannot fit the end-to-end promise.

## What it checks
End-to-end time is the first-token allowance plus the decode time:
`e2e >= ttft + N x tpot = ttft + N / pace`, with N the output tokens
(budgetlint's TPOT is over all N tokens; see docs/physics.md). The
first-token allowance is the `ttft` promise, or else the sum of the
first-token segments, or else zero.

## Why
A team can meet its pace and the first-token team its allowance while the
product misses its end-to-end promise, because the numbers never fit
together. This is arithmetic, not physics: it holds on any hardware.

## Example
A 600-token reply within 30 s at p95, first token within 0.4 s: the decode
budget is 29.6 s, so the pace must be at least 600 / 29.6 = 20.3 token/s.
A promise of 15 token/s takes 40 s of decode, 40.4 s end to end:
```yaml
workload: {prompt_tokens: 1000, output_tokens: 600}
promise: {ttft: 400 ms, pace: 15 token/s, e2e: 30 s}
# BL202: 600 tokens at 15 token/s take 40 s; with the 400 ms first-token
#        allowance that is 40.4 s, 10.4 s over the 30 s end-to-end promise
```

## Fix
Promise a faster pace (at least the one the message names), fewer output
tokens, or a looser end-to-end time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.model.units import format_percent as _pct, format_quantity
from budgetlint.rules._fixes import at_least, at_most, edit, time_text
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL202"
NAME = "pace-cannot-fit-e2e"
SUMMARY = "The promised pace and reply length cannot fit the end-to-end promise."
SEVERITY = Severity.ERROR



def _time(x: float) -> str:
    return format_quantity(x, "time")


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    a = evaluation.analysis
    if "e2e_arithmetic_total_s" not in a:
        return
    p = budget.promise
    n = a["e2e_arithmetic_output_tokens"]
    ttft, decode, total = a["e2e_arithmetic_first_token_s"], a["e2e_arithmetic_decode_s"], a["e2e_arithmetic_total_s"]
    if total <= p.e2e_s * (1 + 1e-9):
        return
    ttft_words = {"promise": f"the {_time(ttft)} first-token allowance",
                  "segments": f"the {_time(ttft)} of first-token segments",
                  "none": "no first-token allowance"}[a["e2e_arithmetic_first_token_from"]]
    pace = 1.0 / p.tpot_s
    spare = p.e2e_s - ttft
    need = a.get("e2e_arithmetic_required_pace_token_per_s")
    data: dict = {}
    loosen = time_text(total, up=True)  # the figures that make the fix true, rounded towards it
    if need is not None:
        fix = (f"promise at least {at_least(need)} token/s ({_time(p.e2e_s)} - {_time(ttft)} = {_time(spare)} "
               f"for {n} tokens), or loosen promise.e2e to {loosen}")
        # safe: the pace the end-to-end promise already implies, written down (no promise loosened)
        if p.pace_given:
            data = edit(budget, [(("promise", "pace"), f"{at_least(need)} token/s")], safe=True,
                        title=f"promise.pace: {at_least(need)} token/s")
        elif budget.has("promise", "tpot"):
            data = edit(budget, [(("promise", "tpot"), f"{at_most(1e3 / need)} ms")], safe=True,
                        title=f"promise.tpot: {at_most(1e3 / need)} ms")
    else:
        fix = f"the first-token allowance alone uses the whole {_time(p.e2e_s)}: loosen promise.e2e"
        data = edit(budget, [(("promise", "e2e"), loosen)], safe=False, title=f"promise.e2e: {loosen}")
    yield Finding(CODE, SEVERITY,
                  f"budget {budget.name!r}: {n} tokens at {numbers.quantity(pace, 'token/s')} take {_time(decode)} of decode; "
                  f"with {ttft_words} that is {_time(total)}, {_time(total - p.e2e_s)} "
                  f"({_pct(total / p.e2e_s - 1)}) over the {_time(p.e2e_s)} end-to-end promise",
                  budget.loc("promise", "e2e"), budget=budget.name, promise="e2e", fix=fix, data=data)
