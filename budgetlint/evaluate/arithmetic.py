"""The budget's own arithmetic, as data: no physics, any hardware.

``E2E = first-token allowance + N / pace`` (physics.md section 1, the promise
arithmetic the budget is written in; budgetlint's TPOT is over all N output
tokens). The first-token allowance is the ``ttft`` promise, else the sum of
the first-token segments, else zero. BL202 reads these numbers; the report's
``analysis`` carries them (``e2e_arithmetic_*``) so that a dashboard need not
parse a message.
"""

from __future__ import annotations

from typing import Any

from budgetlint.model.types import Budget

#: Segment kinds that come before the first token is seen (see BL201's table).
FIRST_TOKEN_KINDS = ("queue", "prefill", "network", "client")


def first_token_allowance(b: Budget) -> tuple[float, str]:
    """The allowance for the first token and where it comes from: ``promise``, ``segments`` or ``none``."""
    if b.promise.ttft_s is not None:
        return b.promise.ttft_s, "promise"
    first = [s.allowance_s for s in b.segments if s.kind in FIRST_TOKEN_KINDS and s.allowance_s is not None]
    if first:
        return sum(first), "segments"
    return 0.0, "none"


def e2e_arithmetic(b: Budget) -> dict[str, Any]:
    """``e2e_arithmetic_*``: the first-token allowance, N / pace, their sum, how far over the
    promise it is, and the pace the promise needs (``N / (E2E - allowance)``; absent when the
    allowance alone uses the whole promise). Empty unless the budget promises both E2E and a pace."""
    p = b.promise
    if p.e2e_s is None or p.tpot_s is None or b.workload is None:
        return {}
    from budgetlint.physics.latency import e2e_s, required_pace

    n = b.workload.output_tokens
    ttft, source = first_token_allowance(b)
    total = e2e_s(ttft, n, 1.0 / p.tpot_s)  # E2E = TTFT + N / pace
    decode = total - ttft
    out: dict[str, Any] = {
        "e2e_arithmetic_first_token_s": ttft,
        "e2e_arithmetic_first_token_from": source,
        "e2e_arithmetic_output_tokens": n,
        "e2e_arithmetic_decode_s": decode,
        "e2e_arithmetic_total_s": total,
        "e2e_arithmetic_over_s": total - p.e2e_s,
    }
    if p.e2e_s - ttft > 0:
        out["e2e_arithmetic_required_pace_token_per_s"] = required_pace(p.e2e_s, ttft, n)
    return out
