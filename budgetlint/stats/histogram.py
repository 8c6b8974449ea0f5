"""Classic (cumulative) Prometheus histograms: quantiles and shares, with their bucket error.

A histogram is a tuple of ``(upper edge, cumulative count)`` pairs, ascending,
the last edge ``inf``. Pure floats in, floats out.

:func:`quantile` is Prometheus's ``histogram_quantile`` (promql/quantile.go,
``bucketQuantile``): the rank ``q x count`` is found in the first bucket whose
cumulative count reaches it and interpolated linearly inside that bucket (the
first bucket starts at 0); a rank in the ``+Inf`` bucket returns the highest
finite edge. Its error is bounded by the width of that bucket
(prometheus.io/docs/practices/histograms/#errors-of-quantile-estimation):
:func:`quantile_band` gives the bucket.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

Histogram = tuple[tuple[float, float], ...]


def total(h: Histogram) -> float:
    """The observation count (the ``+Inf`` bucket)."""
    return h[-1][1] if h else 0.0


def quantile(h: Histogram, q: float) -> float:
    """``histogram_quantile(q, h)``; NaN for fewer than two buckets or no observations."""
    if len(h) < 2 or not math.isinf(h[-1][0]) or total(h) <= 0 or not (0.0 <= q <= 1.0):
        return math.nan
    rank = q * total(h)
    b = next(i for i, (_, c) in enumerate(h) if c >= rank)
    if b == len(h) - 1:
        return h[-2][0]
    if b == 0 and h[0][0] <= 0:
        return h[0][0]
    start = 0.0 if b == 0 else h[b - 1][0]
    below = 0.0 if b == 0 else h[b - 1][1]
    inside = h[b][1] - below
    if inside <= 0:
        return h[b][0]
    return start + (h[b][0] - start) * ((rank - below) / inside)


def quantile_band(h: Histogram, q: float) -> tuple[float, float]:
    """The bucket ``(lower edge, upper edge)`` that holds the q-quantile: where the true value lies
    whatever the interpolation says (upper ``inf`` in the overflow bucket)."""
    if len(h) < 2 or total(h) <= 0:
        return (math.nan, math.nan)
    rank = q * total(h)
    b = next(i for i, (_, c) in enumerate(h) if c >= rank)
    return (0.0 if b == 0 else h[b - 1][0], h[b][0])


@dataclass(frozen=True)
class Share:
    """How many observations are at or under a threshold: exact at an edge, else bounded."""

    threshold: float
    at_most_low: float  # count at or under the nearest edge below (certainly under T)
    at_most_high: float  # count at or under the nearest edge above (possibly under T)
    interpolated: float  # linear inside the bucket, as histogram_quantile would assume
    lower_edge: float | None
    upper_edge: float | None
    total: float

    @property
    def exact(self) -> bool:
        """T is an edge (within :func:`share_at_most`'s tolerance, which gave both bounds that
        edge's count): the share is read, not bounded. (It compared the edge with T exactly, so a
        T 1e-12 off its edge read "bounded" and was worded "30% .. 30%".)"""
        return (self.lower_edge is not None and self.lower_edge == self.upper_edge
                and self.at_most_low == self.at_most_high)


def share_at_most(h: Histogram, threshold: float, rel_tol: float = 1e-9) -> Share:
    """The observations at or under ``threshold`` (seconds)."""
    edges = [e for e, _ in h]
    n = total(h)
    for e, c in h:
        if math.isclose(e, threshold, rel_tol=rel_tol):
            return Share(threshold, c, c, c, e, e, n)
    i = bisect.bisect_left(edges, threshold)
    lo_edge = edges[i - 1] if i > 0 else None
    lo_count = h[i - 1][1] if i > 0 else 0.0
    hi_edge = edges[i] if i < len(edges) else None
    hi_count = h[i][1] if i < len(edges) else n
    start = lo_edge if lo_edge is not None else 0.0
    if hi_edge is None or math.isinf(hi_edge) or hi_edge <= start:
        interp = lo_count
    else:
        interp = lo_count + (hi_count - lo_count) * (threshold - start) / (hi_edge - start)
    return Share(threshold, lo_count, hi_count, interp, lo_edge, hi_edge, n)


def nearest_edges(edges: tuple[float, ...], threshold: float,
                  rel_tol: float = 1e-9) -> tuple[float | None, float | None, bool]:
    """(edge at or below, edge above, whether the threshold is an edge) among finite ``edges``."""
    for e in edges:
        if math.isclose(e, threshold, rel_tol=rel_tol):
            return (e, e, True)
    ordered = sorted(edges)
    i = bisect.bisect_left(ordered, threshold)
    return (ordered[i - 1] if i > 0 else None, ordered[i] if i < len(ordered) else None, False)
