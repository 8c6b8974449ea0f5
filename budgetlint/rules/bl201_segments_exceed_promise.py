"""The segments of a budget add up to more than the promise they split.

## What it checks
- First-token segments (`queue`, `prefill`, `network`) against the `ttft`
  promise: their allowances must add up to no more than it.
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

## Example
```yaml
promise: {ttft: 400 ms}
segments:
  - {name: queue, kind: queue, allowance: 150 ms, owner: "@acme/serving"}
  - {name: prefill, kind: prefill, allowance: 300 ms, owner: "@acme/serving"}
# BL201: first-token segments add up to 450 ms (queue 150 ms + prefill 300 ms),
#        50 ms over the 400 ms ttft promise
```

## Fix
Shrink an allowance, or loosen the promise in review with the product owner.
"""

from __future__ import annotations

from typing import Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.model.units import format_quantity

CODE = "BL201"
NAME = "segments-exceed-promise"
SUMMARY = "The segments of a budget add up to more than the promise they split."
SEVERITY = Severity.ERROR

FIRST_TOKEN_KINDS = ("queue", "prefill", "network")
_EPS = 1e-9


def _t(x: float) -> str:
    return format_quantity(x, "time")


def check(b, ev, ctx) -> Iterator[Finding]:
    if not b.segments:
        return
    p = b.promise
    first = [s for s in b.segments if s.kind in FIRST_TOKEN_KINDS and s.allowance_s is not None]
    if p.ttft_s is not None and first:
        total = sum(s.allowance_s for s in first)
        if total > p.ttft_s * (1 + _EPS):
            parts = " + ".join(f"{s.name} {_t(s.allowance_s)}" for s in first)
            yield Finding(CODE, SEVERITY,
                          f"budget {b.name!r}: first-token segments add up to {_t(total)} ({parts}), "
                          f"{_t(total - p.ttft_s)} over the {_t(p.ttft_s)} ttft promise",
                          b.loc("segments"), budget=b.name, promise="ttft",
                          fix=f"cut {_t(total - p.ttft_s)} from the segments or loosen promise.ttft")
    n = b.workload.output_tokens if b.workload else None
    terms: list[tuple[str, float]] = []
    for s in b.segments:
        if s.allowance_s is not None:
            terms.append((s.name, s.allowance_s))
        elif s.pace_token_per_s and n:
            terms.append((f"{s.name} {n} tokens at {s.pace_token_per_s:.3g} token/s", n / s.pace_token_per_s))
    if p.e2e_s is not None and terms:
        total = sum(t for _, t in terms)
        if total > p.e2e_s * (1 + _EPS):
            parts = " + ".join(f"{name} {_t(t)}" for name, t in terms)
            yield Finding(CODE, SEVERITY,
                          f"budget {b.name!r}: segments add up to {_t(total)} ({parts}), "
                          f"{_t(total - p.e2e_s)} over the {_t(p.e2e_s)} end-to-end promise",
                          b.loc("segments"), budget=b.name, promise="e2e",
                          fix=f"cut {_t(total - p.e2e_s)} from the segments or loosen promise.e2e")
    if p.tpot_s is not None:
        want = 1.0 / p.tpot_s
        for s in b.segments:
            if s.kind == "decode" and s.pace_token_per_s is not None and s.pace_token_per_s < want * (1 - _EPS):
                yield Finding(CODE, SEVERITY,
                              f"budget {b.name!r}: decode segment {s.name!r} allows {s.pace_token_per_s:.3g} token/s, "
                              f"slower than the promised {want:.3g} token/s",
                              s.loc("pace"), budget=b.name, promise="tpot",
                              fix=f"raise the segment's pace to {want:.3g} token/s")
