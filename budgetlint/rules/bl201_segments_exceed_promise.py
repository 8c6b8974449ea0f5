"""The segments of a budget add up to more than the promise they split.

## What it checks
- First-token segments (`queue`, `prefill`, `network`, `client`) against the
  `ttft` promise: their allowances must add up to no more than it. At the
  client edge (`measured_at: client`) the edge counts too: the connection
  setup, and a proxy that flushes every k tokens shows the first token
  `(min(k, N) - 1) / pace` after it was made (N output tokens, the promised
  pace, else the slowest decode segment's).
- All segments against the `e2e` promise: time allowances, plus the decode
  time a `decode` segment's pace implies for the reply
  (output tokens / pace), must add up to no more than it.
- A `decode` segment's pace against the promised `pace`/`tpot`: it must be
  at least as fast.

## Why
A decomposition that does not add up means at least one team was promised
time that the product never had. Each team meets its own number and the
user still waits too long.

Note that percentiles do not add: the p95 of a sum is not the sum of p95s.
Segments that add up at the same percentile are the conservative reading.

Which segment kinds count where:

| kind | ttft | pace | e2e |
|---|---|---|---|
| queue, prefill, network, client | yes (allowance) | - | yes (allowance) |
| decode | - | yes (its pace must be at least the promise) | yes (N / pace, or its allowance) |
| other | - | - | yes (allowance) |
| edge: connection_setup | yes (at the client edge) | - | yes |
| edge: proxy_flush_tokens | yes: (min(k, N) - 1) / pace | - | no: the last chunk is flushed when generation ends |

## Example
```yaml
promise: {ttft: 400 ms}
segments:
  - {name: queue, kind: queue, allowance: 150 ms, owner: "@acme/serving"}
  - {name: prefill, kind: prefill, allowance: 300 ms, owner: "@acme/serving"}
# BL201: first-token segments add up to 450 ms (queue 150 ms + prefill 300 ms),
#        50 ms over the 400 ms ttft promise
```
Behind a proxy that buffers a whole 500-token reply at 24 token/s, nothing
is visible until (500 - 1) / 24 = 20.8 s after the first token was made:
```yaml
workload: {prompt_tokens: 200, output_tokens: 500, measured_at: client}
promise: {ttft: 500 ms, pace: 24 token/s}
edge: {proxy_flush_tokens: 500}
# BL201: the first token is visible after 20.8 s at least (proxy flush of
#        500 tokens at 24 token/s 20.8 s), 20.3 s over the 500 ms ttft promise
#   fix: flush every token (edge.proxy_flush_tokens: 1) ...
```

## Fix
Shrink an allowance, or loosen the promise in review with the product owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.rules._fixes import at_least, edit, time_text
from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL201"
NAME = "segments-exceed-promise"
SUMMARY = "The segments of a budget add up to more than the promise they split."
SEVERITY = Severity.ERROR

_EPS = 1e-9


def _time(x: float) -> str:
    return numbers.quantity(x, "s")


def edge_pace(b) -> float | None:
    """The pace the proxy's buffer fills at: the promised one, else the slowest decode segment's."""
    if b.promise.tpot_s:
        return 1.0 / b.promise.tpot_s
    paces = [s.pace_token_per_s for s in b.segments if s.kind == "decode" and s.pace_token_per_s]
    return min(paces) if paces else None


def edge_terms(b) -> list[tuple[str, float]]:
    """What the client edge adds before the first token is visible (``measured_at: client`` only)."""
    if b.workload is None or b.workload.measured_at != "client":
        return []
    terms = []
    if b.connection_setup_s:
        terms.append(("connection setup", b.connection_setup_s))
    k = b.proxy_flush_tokens or 0
    pace = edge_pace(b)
    if k > 1 and pace:
        shown = min(k, b.workload.output_tokens)
        if shown > 1:
            terms.append((f"proxy flush of {numbers.stated(shown)} tokens at {numbers.quantity(pace, 'token/s')}", (shown - 1) / pace))
    return terms


def _flush_fix(b, slack: float) -> str:
    """The cheapest fix for a proxy delay: flush every token, or at most K per chunk."""
    pace = edge_pace(b)
    if not b.proxy_flush_tokens or b.proxy_flush_tokens <= 1 or not pace:
        return ""
    if slack <= 0:
        return "flush every token (edge.proxy_flush_tokens: 1); "
    most = int(slack * pace * (1 + 1e-12)) + 1  # (K - 1) / pace <= slack
    if most <= 1:
        return "flush every token (edge.proxy_flush_tokens: 1); "
    return (f"flush every token (edge.proxy_flush_tokens: 1), or at most {most} tokens per chunk "
            f"(({most} - 1) / {numbers.quantity(pace, 'token/s')} <= {_time(slack)}); ")


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    p = budget.promise
    edge = edge_terms(budget)
    if not budget.segments and not edge:
        return
    from budgetlint.evaluate.arithmetic import FIRST_TOKEN_KINDS  # lazy: `rules` imports no evaluation

    first = [s for s in budget.segments if s.kind in FIRST_TOKEN_KINDS and s.allowance_s is not None]
    if p.ttft_s is not None and (first or edge):
        terms = [(s.name, s.allowance_s) for s in first] + edge
        total = sum(t for _, t in terms)
        if total > p.ttft_s * (1 + _EPS):
            parts = " + ".join(f"{name} {_time(t)}" for name, t in terms)
            what = (f"first-token segments add up to {_time(total)}" if not edge else
                    f"the first token is visible after {_time(total)} at least")
            slack = p.ttft_s - sum(t for name, t in terms if not name.startswith("proxy flush"))
            yield Finding(CODE, SEVERITY,
                          f"budget {budget.name!r}: {what} ({parts}), "
                          f"{_time(total - p.ttft_s)} over the {_time(p.ttft_s)} ttft promise",
                          budget.loc("edge") if edge and not first else budget.loc("segments"), budget=budget.name,
                          promise="ttft",
                          fix=f"{_flush_fix(budget, slack)}cut {time_text(total - p.ttft_s, up=True)} from the "
                              f"{'segments or the edge' if edge else 'segments'} or loosen promise.ttft",
                          data=edit(budget, [(("promise", "ttft"), time_text(total, up=True))], safe=False,
                                    title=f"promise.ttft: {time_text(total, up=True)}"))
    n = budget.workload.output_tokens if budget.workload else None
    terms: list[tuple[str, float]] = []
    for s in budget.segments:
        if s.allowance_s is not None:
            terms.append((s.name, s.allowance_s))
        elif s.pace_token_per_s and n:
            terms.append((f"{s.name} {n} tokens at {numbers.quantity(s.pace_token_per_s, 'token/s')}", n / s.pace_token_per_s))
    if terms:  # the connection setup is on the end-to-end path; the proxy delay is not
        terms += [(name, t) for name, t in edge if name == "connection setup"]
    if p.e2e_s is not None and terms:
        total = sum(t for _, t in terms)
        if total > p.e2e_s * (1 + _EPS):
            parts = " + ".join(f"{name} {_time(t)}" for name, t in terms)
            yield Finding(CODE, SEVERITY,
                          f"budget {budget.name!r}: segments add up to {_time(total)} ({parts}), "
                          f"{_time(total - p.e2e_s)} over the {_time(p.e2e_s)} end-to-end promise",
                          budget.loc("segments"), budget=budget.name, promise="e2e",
                          fix=f"cut {time_text(total - p.e2e_s, up=True)} from the segments or loosen promise.e2e",
                          data=edit(budget, [(("promise", "e2e"), time_text(total, up=True))], safe=False,
                                    title=f"promise.e2e: {time_text(total, up=True)}"))
    if p.tpot_s is not None:
        want = 1.0 / p.tpot_s
        for s in budget.segments:
            if s.kind == "decode" and s.pace_token_per_s is not None and s.pace_token_per_s < want * (1 - _EPS):
                yield Finding(CODE, SEVERITY,
                              f"budget {budget.name!r}: decode segment {s.name!r} allows {numbers.quantity(s.pace_token_per_s, 'token/s')}, "
                              f"slower than the promised {numbers.quantity(want, 'token/s')}",
                              s.loc("pace"), budget=budget.name, promise="tpot",
                              fix=f"raise the segment's pace to {at_least(want)} token/s",
                              # safe: the segment promises what the budget already promises
                              data=edit(s, [(("pace",), f"{at_least(want)} token/s")], safe=True,
                                        title=f"segment {s.name!r} pace: {at_least(want)} token/s"))
