"""The values no real run produces: negative or zero latencies, negative throughputs and counts."""

from __future__ import annotations

from typing import Any

from .measurement import label_percent
from .problems import IMPOSSIBLE, Ctx
from budgetlint.text import numbers


#: metrics for which no statistic can be zero: nothing answers in no time
_NEVER_ZERO = ("ttft", "e2e")
#: for TPOT/ITL a zero is impossible for the mean and from this percentile up
#: (gaps between chunks delivered together may be 0, a slow tail of them may not)
_ZERO_TAIL_PERCENT = 90.0


def _zero_impossible(metric: str, stat: str | None) -> bool:
    if metric in _NEVER_ZERO:
        return True
    if stat is None or stat == "mean":
        return True
    pct = label_percent(stat)
    return pct is not None and pct >= _ZERO_TAIL_PERCENT


def zero_impossible(metric: str, stat: str | None) -> bool:
    """Whether a zero ``stat`` (``"mean"``, ``"p99"``) of ``metric`` cannot be real."""
    return _zero_impossible(metric, stat)


def check_latency(
    ctx: Ctx,
    value: float | None,
    metric: str,
    what: str,
    line: int | None = None,
    *,
    stat: str | None = None,
) -> float | None:
    """``value`` if it can be a latency of ``metric`` (ttft, tpot, itl, e2e), else None.

    The shared gate for every latency statistic a reader keeps (``stat`` is
    ``"mean"`` or a canonical percentile label). A negative latency is never
    real; zero is impossible for TTFT and E2E (a response takes time) and for
    the mean or a p90+ of TPOT/ITL. Either is a ``bench-impossible-value``
    problem and the value is dropped ("not measured"), never clamped.
    """
    if value is None:
        return None
    if value < 0:
        ctx.problem(
            f"{what} is {numbers.stated(value)}: a latency cannot be negative; the value is ignored "
            f"(not measured)",
            IMPOSSIBLE,
            line,
        )
        return None
    if value == 0 and _zero_impossible(metric, stat):
        label = "" if stat is None else f" {stat}"
        ctx.problem(
            f"{what} is 0: a{label} {metric.upper()} of zero is impossible; the value is "
            f"ignored (not measured)",
            IMPOSSIBLE,
            line,
        )
        return None
    return value


def check_samples(
    ctx: Ctx, values: list[float], metric: str, what: str, line: int | None = None
) -> list[float]:
    """Per-request values of ``metric`` without the impossible ones (one problem for all).

    Per request, zero is impossible only for TTFT and E2E (a one-token reply
    has no decode time, two chunks read together have a zero gap).
    """
    bad = [v for v in values if v < 0 or (v == 0 and metric in _NEVER_ZERO)]
    if not bad:
        return values
    negative = sum(1 for v in bad if v < 0)
    parts = []
    if negative:
        parts.append(f"{negative} negative (lowest {numbers.stated(min(bad))})")
    if len(bad) > negative:
        parts.append(f"{len(bad) - negative} zero")
    ctx.problem(
        f"{what}: {' and '.join(parts)} of {len(values)} per-request {metric.upper()} values "
        f"are impossible latencies; those requests' values are ignored",
        IMPOSSIBLE,
        line,
    )
    return [v for v in values if not (v < 0 or (v == 0 and metric in _NEVER_ZERO))]


#: run conditions that count or measure something: none can be negative
_NON_NEGATIVE_CONDITIONS = ("devices", "concurrency", "request_rate", "prompt_tokens", "output_tokens",
                            "num_requests", "successful_requests")


def refuse_impossible(ctx: Ctx, measurements: list[Any]) -> list[Any]:
    """Every reader's measurements without negative throughputs or counts.

    A negative ``output_throughput``, ``request_throughput``, request count or
    token length, or a measured span (``duration``) of zero or less, is never real: each is a ``bench-impossible-value`` problem
    naming the run and the field, and the value is dropped (not measured),
    never clamped. (Readers already refuse negative latencies: check_latency.)
    """
    import dataclasses

    out = []
    for m in measurements:
        changes: dict[str, Any] = {}
        run = f"{m.label}: " if m.label else ""
        for name in ("output_throughput", "request_throughput"):
            value = getattr(m, name)
            if value is not None and value < 0:
                ctx.problem(f"{run}{name} is {numbers.stated(value)}: a throughput cannot be negative; the value is "
                            "ignored (not measured)", IMPOSSIBLE)
                changes[name] = None
        span = getattr(m, "duration", None)
        if span is not None and span <= 0:  # a run takes time (until stop 47 a -1 s span was kept as measured)
            ctx.problem(f"{run}duration is {numbers.stated(span)} s: a run's measured span must be above zero; the "
                        "value is ignored (not measured)", IMPOSSIBLE)
            changes["duration"] = None
        cond = m.conditions
        dropped = {}
        for name in _NON_NEGATIVE_CONDITIONS:
            value = getattr(cond, name)
            if value is not None and value < 0:
                source = cond.sources.get(name, name)
                ctx.problem(f"{run}{source} is {numbers.stated(value)}: {name.replace('_', ' ')} cannot be negative; the value "
                            "is ignored (unknown)", IMPOSSIBLE)
                dropped[name] = None
        if dropped:
            changes["conditions"] = dataclasses.replace(
                cond, **dropped,
                provenance={k: v for k, v in cond.provenance.items() if k not in dropped},
                sources={k: v for k, v in cond.sources.items() if k not in dropped})
        out.append(dataclasses.replace(m, **changes) if changes else m)
    return out
