"""Roofline verdicts -> findings: shared by the cannot-be-met, memory and at-risk rules.

The levers are written in full on one finding per budget and pointed to from
the others. Which finding carries them is a pure function of the evaluation
(:func:`lever_carrier`), so it does not depend on which rules run or in what
order.
"""

from __future__ import annotations

from typing import Any, Iterator

from budgetlint.findings import Finding, Severity

#: the promises the roofline judges, in the order their findings are written
PROMISE_ORDER = ("ttft", "tpot", "e2e")


def promise_location(b: Any, name: str) -> Any:
    """Where a promise (or a segment's allowance/pace) is written in the YAML."""
    if name.startswith("segment:"):
        seg = next(s for s in b.segments if f"segment:{s.name}" == name)
        return seg.loc("allowance" if seg.kind == "prefill" else "pace")
    return b.loc("promise", "pace" if name == "tpot" and b.promise.pace_given else name)


def _names(b: Any) -> tuple[str, ...]:
    return (*PROMISE_ORDER, *[f"segment:{s.name}" for s in b.segments])


def lever_carrier(ev: Any) -> str | None:
    """The promise whose finding lists the levers: the first that cannot be met, else
    memory when it does not fit comfortably, else the first at risk."""
    verdicts = ev.verdicts
    for name in _names(ev.budget):
        v = verdicts.get(name)
        if v is not None and v.verdict == "cannot-be-met":
            return name
    mem = verdicts.get("memory")
    if mem is not None and mem.verdict in ("cannot-be-met", "at-risk"):
        return "memory"
    for name in _names(ev.budget):
        v = verdicts.get(name)
        if v is not None and v.verdict == "at-risk":
            return name
    return None


def lever_text(ev: Any, promise: str, limit: int = 3) -> str | None:
    """The levers, in full on the carrier's finding, else a pointer to them."""
    levers = ev.levers
    if not levers:
        return None
    if promise != lever_carrier(ev):
        return (f"the levers that would meet it are listed once per budget (on another of its findings) "
                f"and by `budgetlint explain --budget {ev.budget.name}`")
    from budgetlint.evaluate.roofline import lever_words

    parts = [lever_words(lv) for lv in levers[:limit]]
    more = f" (+{len(levers) - limit} more: see `budgetlint explain`)" if len(levers) > limit else ""
    return "would meet it: " + "; ".join(parts) + more


def lever_edit(ev: Any, promise: str) -> dict:
    """The first listed lever that is one key of the YAML, as an unsafe fix (rules/_fixes.py), on the
    finding that lists the levers; else nothing. A lever changes the deployment or the workload:
    never a safe fix."""
    if promise != lever_carrier(ev) or not ev.levers:
        return {}
    from budgetlint.rules._fixes import edit

    b = ev.budget
    hw = b.deployment.hardware if b.deployment is not None else None
    eight = "fp8" if hw is not None and "fp8" in hw.compute_flop_per_s else "int8"
    for lv in ev.levers[:3]:
        change = {"weights-8bit": (("deployment", "weight_precision"), eight),
                  "weights-4bit": (("deployment", "weight_precision"), "int4"),
                  "kv-8bit": (("deployment", "kv_precision"), "fp8"),
                  "more-devices": (("deployment", "devices"), getattr(lv.deployment, "devices", None)),
                  "fewer-sequences": (("workload", "concurrency"), getattr(lv.workload, "concurrency", None)),
                  }.get(lv.name)
        if change is not None and change[1] is not None and b.has(*change[0][:1]):
            path, value = change
            return edit(b, [(path, value)], safe=False, title=f"{'.'.join(path)}: {value}")
    return {}


def verdict_findings(b: Any, ev: Any, code: str, severity: Severity, verdict: str, *,
                     bound: bool, no_lever: str | None = None) -> Iterator[Finding]:
    """One finding per promise or segment of the budget whose verdict is ``verdict``."""
    from budgetlint.rules._messages import describe_miss, describe_segment

    for name in _names(b):
        v = ev.verdicts.get(name)
        if v is None or v.verdict != verdict:
            continue
        if name.startswith("segment:"):
            seg = next(s for s in b.segments if f"segment:{s.name}" == name)
            message = describe_segment(ev.roofline, seg, v, bound=bound)
        else:
            message = describe_miss(ev.roofline, v, bound=bound)
        fix = lever_text(ev, name) or no_lever
        yield Finding(code, severity, message, promise_location(b, name), budget=b.name, promise=name, fix=fix,
                      data=lever_edit(ev, name))
