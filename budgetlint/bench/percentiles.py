"""A tool's table of percentiles (whatever its labels) as canonical percentiles and a Metric."""

from __future__ import annotations

import re
from typing import Any, Callable

from .fields import to_float
from .measurement import Metric, label_percent, percent_label
from .plausibility import check_latency
from .problems import Ctx


def percentile_table(
    ctx: Ctx,
    stats: dict[str, Any],
    label_to_percent: Callable[[str], float | None],
    scale: float,
    what: str,
    line: int | None = None,
    *,
    metric: str | None = None,
) -> tuple[dict[str, float], float | None]:
    """Generic ``{label: value}`` distribution -> (canonical percentiles, mean) in seconds.

    With ``metric`` (ttft, tpot, itl, e2e) each value goes through
    :func:`check_latency`.
    """
    percentiles: dict[str, float] = {}
    mean = None
    for key, raw in stats.items():
        if key in ("mean", "avg", "average"):
            v = to_float(ctx, raw, f"{what}.{key}", line)
            if metric is not None:
                v = check_latency(ctx, v, metric, f"{what}.{key}", line, stat="mean")
            mean = None if v is None else v * scale
            continue
        pct = label_to_percent(key)
        if pct is None:
            continue
        label = percent_label(pct)
        v = to_float(ctx, raw, f"{what}.{key}", line)
        if metric is not None:
            v = check_latency(ctx, v, metric, f"{what}.{key}", line, stat=label)
        if v is None:
            continue
        # an explicit pNN wins over "median" when both are present
        if label in percentiles and key == "median":
            continue
        percentiles[label] = v * scale
    return percentiles, mean


def percent_style_label(key: str) -> float | None:
    """``p99``, ``p99.9``, ``p0.1``, ``median`` (percent numbers)."""
    return label_percent(key)


_FRACTION_LABEL = re.compile(r"^p(\d+)$")


def fraction_style_label(key: str) -> float | None:
    """guidellm's labels: digits are the fraction's decimals (p999 = 0.999, p05 = 0.05)."""
    if key == "median":
        return 50.0
    m = _FRACTION_LABEL.match(key)
    if not m:
        return None
    digits = m.group(1)
    return int(digits) * 100 / 10 ** len(digits)


def build_metric(
    percentiles: dict[str, float],
    mean: float | None,
    definition: str,
    source: str,
    count: int | None = None,
    notes: tuple[str, ...] = (),
) -> Metric | None:
    if not percentiles and mean is None:
        return None
    return Metric(
        percentiles=dict(sorted(percentiles.items(), key=lambda kv: label_percent(kv[0]) or 0.0)),
        mean=mean,
        definition=definition,
        method="reported",
        count=count,
        source=source,
        notes=notes,
    )
