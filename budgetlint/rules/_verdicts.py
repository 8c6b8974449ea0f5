"""Roofline verdicts -> findings: shared by the cannot-be-met and at-risk rules."""

from __future__ import annotations

from typing import Any, Iterator

from budgetlint.findings import Finding, Severity


def promise_location(b: Any, name: str) -> Any:
    """Where a promise (or a segment's allowance/pace) is written in the YAML."""
    if name.startswith("segment:"):
        seg = next(s for s in b.segments if f"segment:{s.name}" == name)
        return seg.loc("allowance" if seg.kind == "prefill" else "pace")
    return b.loc("promise", "pace" if name == "tpot" and b.promise.pace_given else name)


def verdict_findings(ctx: Any, code: str, severity: Severity, verdict: str, *,
                     bound: bool, no_lever: str | None = None) -> Iterator[Finding]:
    """One finding per promise or segment of each budget whose verdict is ``verdict``."""
    from budgetlint.evaluate import roofline
    from budgetlint.rules._messages import describe_miss, describe_segment

    for b in ctx.budgets:
        ev = roofline.evaluation_for(ctx, b)
        for name in ("ttft", "tpot", "e2e", *[f"segment:{s.name}" for s in b.segments]):
            v = ev.verdicts.get(name)
            if v is None or v.verdict != verdict:
                continue
            if name.startswith("segment:"):
                seg = next(s for s in b.segments if f"segment:{s.name}" == name)
                message = describe_segment(ev, seg, v, bound=bound)
            else:
                message = describe_miss(ev, v, bound=bound)
            levers = roofline.levers_for(ctx, ev)
            fix = roofline.lever_text(levers, ctx=ctx, budget=b.name) or no_lever
            yield Finding(code, severity, message, promise_location(b, name), budget=b.name, promise=name, fix=fix)
