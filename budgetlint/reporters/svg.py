"""Small SVG charts of our own (stdlib only; matplotlib would cost about a
second of import and a heavy dependency for four chart kinds).

Two chart kinds cover the HTML report:

* :func:`xy_chart`: lines and points on linear or logarithmic axes, with
  reference lines (a promise, a declared rate) across the plot;
* :func:`bar_chart`: horizontal bars made of segments (a latency waterfall,
  a headroom bar), with reference lines.

Every chart is a standalone ``<svg>`` element with ``role="img"``, a
``<title>`` and a ``<desc>`` for screen readers, axis labels with units
formatted by :func:`format_value`, and the Okabe-Ito colour-blind-safe
palette; series differ by marker shape and dash too, not by colour alone.
Every plotted element carries its numbers, unrounded, in ``data-*``
attributes (``repr`` of the float: the same digits as the JSON report), so
that tests and scripts can read back exactly what was drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence
from xml.sax.saxutils import escape, quoteattr

from budgetlint.text import numbers

#: Okabe & Ito (2008), "Color Universal Design": distinguishable with any
#: common colour-vision deficiency
PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "grey": "#888888",
}

#: verdict -> colour (green / orange / vermillion, the usual traffic light
#: in its colour-blind-safe form)
VERDICT_COLOURS = {
    "met": PALETTE["green"],
    "at-risk": PALETTE["orange"],
    "cannot-be-met": PALETTE["vermillion"],
    "unknown": PALETTE["grey"],
}

def format_value(value: float, unit: str) -> str:
    """A tick or table label with its unit: ``400 ms``, ``80 GB``,
    ``989 TFLOP/s``, ``3.9 FLOP/B``, ``47%`` (:func:`budgetlint.text.numbers.quantity`)."""
    return numbers.quantity(value, unit)


def _clip(label: str, most: int = 25) -> str:
    return label if len(label) <= most else label[: most - 1] + "…"


def _num(x: float) -> str:
    """Coordinates: two decimals are plenty on screen."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _data(value: float) -> str:
    """A number for a ``data-*`` attribute: exactly the float (``repr``)."""
    return repr(float(value))


@dataclass
class Axis:
    label: str
    unit: str
    lo: float
    hi: float
    log: bool = False

    def frac(self, v: float) -> float:
        """Where ``v`` falls between lo (0) and hi (1)."""
        if self.log:
            return (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (v - self.lo) / (self.hi - self.lo)

    def ticks(self) -> list[float]:
        return log_ticks(self.lo, self.hi) if self.log else linear_ticks(self.lo, self.hi)


def axis_for(values: Sequence[float], label: str, unit: str, *, log: bool = False,
             zero: bool = True, pad: float = 0.08) -> Axis:
    """An axis that shows every value: whole decades when ``log``, else
    from 0 (with ``zero``) or the smallest value, padded and rounded to a tick."""
    finite = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if log:
        if not finite:
            return Axis(label, unit, 1.0, 10.0, True)
        lo = 10 ** math.floor(math.log10(min(finite)))
        hi = 10 ** math.ceil(math.log10(max(finite)))
        if hi <= lo:
            hi = lo * 10
        return Axis(label, unit, lo, hi, True)
    if not finite:
        return Axis(label, unit, 0.0, 1.0)
    lo, hi = min(finite), max(finite)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        hi = lo + (abs(lo) or 1.0)
    span = hi - lo
    lo = lo - span * pad if lo < 0 or not zero else lo
    hi = hi + span * pad
    step = _nice_step((hi - lo) / 5)
    return Axis(label, unit, math.floor(lo / step) * step, math.ceil(hi / step) * step)


def _nice_step(raw: float) -> float:
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    exp = math.floor(math.log10(raw))
    base = raw / 10**exp
    nice = 1 if base <= 1 else 2 if base <= 2 else 5 if base <= 5 else 10
    return nice * 10**exp


def linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = _nice_step((hi - lo) / count)
    first = math.ceil(lo / step - 1e-9)
    out = []
    k = first
    while k * step <= hi + step * 1e-9 and len(out) < 50:
        out.append(round(k * step, 12))
        k += 1
    return out


def log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
    every = max(1, math.ceil((b - a) / 8))  # at most ~8 labelled decades
    return [10.0**e for e in range(a, b + 1, every)]


@dataclass
class Series:
    """A line (``kind="line"``), a set of points (``kind="points"``) or a shaded
    band (``kind="band"``: ``points`` go along one edge and back along the other,
    a closed polygon; clamped to the plot)."""

    name: str
    points: list[tuple[float, float]]
    kind: str = "points"
    colour: str = PALETTE["blue"]
    dash: bool = False
    shape: str = "circle"  # circle | square | diamond | triangle
    labels: list[str] = field(default_factory=list)  # one per point, drawn beside it
    legend: bool = True  # False: not in the legend (a line whose points series names it)


@dataclass
class Rule:
    """A reference line across the plot at ``value`` on the ``axis`` ("x" or "y")."""

    axis: str
    value: float
    label: str
    colour: str = PALETTE["black"]
    dash: bool = True
    at_end: bool = False  # a y rule's label at the right end of the plot (clear of a rising curve)


@dataclass
class BarRow:
    label: str
    segments: list[tuple[str, float, float, str]]  # (name, start, end, colour)
    marker: tuple[str, float] | None = None  # (name, value): a diamond on the bar


class _Frame:
    def __init__(self, width: int, height: int, left: int, right: int, top: int, bottom: int) -> None:
        self.width, self.height = width, height
        self.x0, self.x1 = left, width - right
        self.y0, self.y1 = top, height - bottom

    def x(self, axis: Axis, v: float) -> float:
        return self.x0 + axis.frac(v) * (self.x1 - self.x0)

    def y(self, axis: Axis, v: float) -> float:
        return self.y1 - axis.frac(v) * (self.y1 - self.y0)


def _open(chart_id: str, title: str, desc: str, width: int, height: int, kind: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bl-chart" data-kind="{kind}" id={quoteattr(chart_id)} '
        f'role="img" aria-labelledby="{chart_id}-t {chart_id}-d" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-family="system-ui, sans-serif" font-size="11">',
        f'<title id="{chart_id}-t">{escape(title)}</title>',
        f'<desc id="{chart_id}-d">{escape(desc)}</desc>',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]


def _inside(axis: Axis, v: float) -> bool:
    if v is None or not math.isfinite(v) or (axis.log and v <= 0):
        return False
    return -1e-9 <= axis.frac(v) <= 1 + 1e-9


def _grid(out: list[str], f: _Frame, x: Axis | None, y: Axis | None) -> None:
    if x is not None:
        last_right = -math.inf
        for t in x.ticks():
            if not _inside(x, t):
                continue
            px = _num(f.x(x, t))
            out.append(f'<line x1="{px}" y1="{f.y0}" x2="{px}" y2="{f.y1}" stroke="#e4e4e4"/>')
            label = format_value(t, x.unit)
            width = _CHAR_W * len(label)
            at = f.x(x, t)
            # a label that would run past the chart's edge is aligned to its tick from inside
            anchor = ("end" if at + width / 2 > f.width - 2 else "start" if at - width / 2 < 2 else "middle")
            left = at - width if anchor == "end" else at if anchor == "start" else at - width / 2
            if left < last_right + 6:
                continue  # too close to the previous label (a log axis of wide labels): the grid line stays
            last_right = left + width
            out.append(f'<text x="{px}" y="{f.y1 + 18}" text-anchor="{anchor}" fill="#333">'
                       f'{escape(label)}</text>')
        out.append(f'<text x="{_num((f.x0 + f.x1) / 2)}" y="{f.y1 + 33}" text-anchor="middle" '
                   f'fill="#000">{escape(x.label)}</text>')
    if y is not None:
        last_y = math.inf
        for t in y.ticks():
            if not _inside(y, t):
                continue
            py = _num(f.y(y, t))
            out.append(f'<line x1="{f.x0}" y1="{py}" x2="{f.x1}" y2="{py}" stroke="#e4e4e4"/>')
            if last_y - f.y(y, t) < 14:
                continue  # closer than a line of text to the previous label
            last_y = f.y(y, t)
            out.append(f'<text x="{f.x0 - 5}" y="{py}" dy="0.35em" text-anchor="end" fill="#333">'
                       f'{escape(format_value(t, y.unit))}</text>')
        out.append(f'<text transform="translate(12 {_num((f.y0 + f.y1) / 2)}) rotate(-90)" '
                   f'text-anchor="middle" fill="#000">{escape(y.label)}</text>')
    out.append(f'<rect x="{f.x0}" y="{f.y0}" width="{f.x1 - f.x0}" height="{f.y1 - f.y0}" '
               'fill="none" stroke="#666"/>')


def _marker(shape: str, cx: float, cy: float, colour: str, attrs: str) -> str:
    r = 5
    if shape == "square":
        return (f'<rect class="bl-point" {attrs} x="{_num(cx - r)}" y="{_num(cy - r)}" width="{2 * r}" '
                f'height="{2 * r}" fill="{colour}" stroke="#000" stroke-width="0.8"/>')
    if shape in ("diamond", "triangle"):
        if shape == "diamond":
            pts = [(cx, cy - r - 1), (cx + r + 1, cy), (cx, cy + r + 1), (cx - r - 1, cy)]
        else:
            pts = [(cx, cy - r - 1), (cx + r + 1, cy + r), (cx - r - 1, cy + r)]
        d = " ".join(f"{_num(a)},{_num(b)}" for a, b in pts)
        return f'<polygon class="bl-point" {attrs} points="{d}" fill="{colour}" stroke="#000" stroke-width="0.8"/>'
    return (f'<circle class="bl-point" {attrs} cx="{_num(cx)}" cy="{_num(cy)}" r="{r}" fill="{colour}" '
            'stroke="#000" stroke-width="0.8"/>')


_CHAR_W = 6.6  # mean width of an 11 px sans-serif character, for layout


def _legend_layout(items: Sequence[tuple[str, str, str, bool]], x0: float, width: float) -> list[tuple[float, int]]:
    """(x, row) of each legend entry, wrapping at ``width``."""
    out, x, row = [], x0, 0
    for name, *_ in items:
        w = 30 + _CHAR_W * len(name)
        if x + w > width - 4 and x > x0:
            x, row = x0, row + 1
        out.append((x, row))
        x += w
    return out


def _legend_rows(items: Sequence[tuple[str, str, str, bool]], x0: float, width: float) -> int:
    layout = _legend_layout(items, x0, width)
    return 1 + max((row for _, row in layout), default=0) if items else 0


def _legend(out: list[str], items: list[tuple[str, str, str, bool]], y0: float, x0: float, width: float) -> None:
    """Legend entries (name, colour, shape | "line" | "bar", dash) in rows from ``y0``."""
    for (name, colour, shape, dash), (x, row) in zip(items, _legend_layout(items, x0, width)):
        y = y0 + 16 * row
        if shape == "line":
            dasharray = ' stroke-dasharray="5 3"' if dash else ""
            out.append(f'<line x1="{_num(x)}" y1="{_num(y)}" x2="{_num(x + 18)}" y2="{_num(y)}" stroke="{colour}" '
                       f'stroke-width="2"{dasharray}/>')
        elif shape == "bar":
            out.append(f'<rect x="{_num(x)}" y="{_num(y - 5)}" width="18" height="10" fill="{colour}"/>')
        else:
            out.append(_marker(shape, x + 9, y, colour, 'data-legend="1"').replace('class="bl-point" ', ""))
        out.append(f'<text x="{_num(x + 22)}" y="{_num(y)}" dy="0.35em" fill="#000">{escape(name)}</text>')


def _rules(out: list[str], f: _Frame, x: Axis | None, y: Axis | None, rules: Sequence[Rule]) -> None:
    placed = 0
    for r in rules:
        axis = x if r.axis == "x" else y
        if axis is None or not _inside(axis, r.value):
            continue
        dash = ' stroke-dasharray="6 4"' if r.dash else ""
        attrs = f'class="bl-rule" data-axis="{r.axis}" data-value="{_data(r.value)}" data-name={quoteattr(r.label)}'
        if r.axis == "x":
            px = _num(f.x(axis, r.value))
            out.append(f'<line {attrs} x1="{px}" y1="{f.y0}" x2="{px}" y2="{f.y1}" stroke="{r.colour}" '
                       f'stroke-width="1.5"{dash}/>')
            if r.label:  # alternate above the plot and just inside it, so that close rules stay readable
                ty = f.y0 - 4 if placed % 2 == 0 else f.y0 + 12
                anchor = "middle" if placed % 2 == 0 else "start"
                tx = px if placed % 2 == 0 else _num(f.x(axis, r.value) + 3)
                out.append(f'<text x="{tx}" y="{ty}" text-anchor="{anchor}" fill="{r.colour}">{escape(r.label)}</text>')
                placed += 1
        else:
            py = _num(f.y(axis, r.value))
            out.append(f'<line {attrs} x1="{f.x0}" y1="{py}" x2="{f.x1}" y2="{py}" stroke="{r.colour}" '
                       f'stroke-width="1.5"{dash}/>')
            if r.label:
                tx, anchor = (f.x1 - 4, "end") if r.at_end else (f.x0 + 4, "start")
                out.append(f'<text x="{tx}" y="{py}" dy="1.1em" text-anchor="{anchor}" fill="{r.colour}">'
                           f'{escape(r.label)}</text>')


def xy_chart(*, chart_id: str, title: str, desc: str, x: Axis, y: Axis, series: Sequence[Series],
             rules: Sequence[Rule] = (), width: int = 460, height: int = 300) -> str:
    """Lines and points on ``x`` and ``y``; points outside the axes are left
    out (the data table beside the chart still lists them)."""
    items = [(s.name, s.colour, "line" if s.kind == "line" else "bar" if s.kind == "band" else s.shape, s.dash)
             for s in series if s.legend]
    left, right = 90, 34
    rows = _legend_rows(items, 8, width)
    height += 16 * max(rows - 1, 0)
    f = _Frame(width, height, left=left, right=right, top=22, bottom=48 + 16 * rows)
    out = _open(chart_id, title, desc, width, height, "xy")
    _grid(out, f, x, y)
    for s in series:
        kept = [(px, py) for px, py in s.points if _inside(x, px) and _inside(y, py)]
        if s.kind == "band":
            edge = [(min(max(a, x.lo), x.hi), min(max(b, y.lo), y.hi)) for a, b in s.points
                    if math.isfinite(a) and math.isfinite(b) and (not x.log or a > 0) and (not y.log or b > 0)]
            if len(edge) >= 3:
                pts = " ".join(f"{_num(f.x(x, a))},{_num(f.y(y, b))}" for a, b in edge)
                data = " ".join(f"{_data(a)},{_data(b)}" for a, b in s.points)
                out.append(f'<polygon class="bl-band" data-series={quoteattr(s.name)} data-points="{data}" '
                           f'points="{pts}" fill="{s.colour}" fill-opacity="0.28" stroke="none"/>')
            continue
        if s.kind == "line" and len(kept) >= 2:
            pts = " ".join(f"{_num(f.x(x, a))},{_num(f.y(y, b))}" for a, b in kept)
            data = " ".join(f"{_data(a)},{_data(b)}" for a, b in kept)
            dash = ' stroke-dasharray="6 4"' if s.dash else ""
            out.append(f'<polyline class="bl-line" data-series={quoteattr(s.name)} data-points="{data}" '
                       f'points="{pts}" fill="none" stroke="{s.colour}" stroke-width="2"{dash}/>')
        elif s.kind == "points":
            for i, (a, b) in enumerate(s.points):
                if not (_inside(x, a) and _inside(y, b)):
                    continue
                cx, cy = f.x(x, a), f.y(y, b)
                attrs = f'data-series={quoteattr(s.name)} data-x="{_data(a)}" data-y="{_data(b)}"'
                out.append(_marker(s.shape, cx, cy, s.colour, attrs))
                if i < len(s.labels) and s.labels[i]:
                    anchor = "end" if cx > (f.x0 + f.x1) / 2 else "start"
                    dx = -9 if anchor == "end" else 9
                    out.append(f'<text x="{_num(cx + dx)}" y="{_num(cy + 14)}" text-anchor="{anchor}" '
                               f'fill="#000">{escape(s.labels[i])}</text>')
    _rules(out, f, x, y, rules)
    _legend(out, items, f.y1 + 44, 8, width)
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(*, chart_id: str, title: str, desc: str, x: Axis, rows: Sequence[BarRow],
              rules: Sequence[Rule] = (), legend: Sequence[tuple[str, str]] = (), width: int = 460) -> str:
    """Horizontal bars, one row each, made of segments ``(name, start, end,
    colour)``; a segment of zero length is kept in the data but not drawn."""
    bar_h, gap = 20, 10
    label_w = min(max([60] + [int(_CHAR_W * len(_clip(r.label))) + 12 for r in rows]), 180)
    items = [(n, c, "bar", False) for n, c in legend]
    legend_rows = _legend_rows(items, 8, width)
    height = 22 + len(rows) * (bar_h + gap) + 40 + 16 * legend_rows
    f = _Frame(width, height, left=label_w, right=18, top=22, bottom=40 + 16 * legend_rows)
    out = _open(chart_id, title, desc, width, height, "bar")
    _grid(out, f, x, None)
    for i, row in enumerate(rows):
        top = f.y0 + gap / 2 + i * (bar_h + gap)
        out.append(f'<text x="{f.x0 - 6}" y="{_num(top + bar_h / 2)}" dy="0.35em" text-anchor="end" '
                   f'fill="#000"><title>{escape(row.label)}</title>{escape(_clip(row.label))}</text>')
        for name, start, end, colour in row.segments:
            a, b = sorted((start, end))
            lo_v = max(a, x.lo)
            hi_v = min(b, x.hi)
            px0, px1 = f.x(x, lo_v), f.x(x, hi_v)
            w = max(px1 - px0, 0.0)
            attrs = (f'class="bl-bar" data-row={quoteattr(row.label)} data-name={quoteattr(name)} '
                     f'data-start="{_data(start)}" data-end="{_data(end)}"')
            out.append(f'<rect {attrs} x="{_num(px0)}" y="{_num(top)}" width="{_num(w)}" height="{bar_h}" '
                       f'fill="{colour}" stroke="#ffffff" stroke-width="0.8"><title>{escape(name)}: '
                       f'{escape(format_value(end - start, x.unit))}</title></rect>')
        if row.marker is not None and _inside(x, row.marker[1]):
            name, v = row.marker
            attrs = f'data-series={quoteattr(name)} data-row={quoteattr(row.label)} data-x="{_data(v)}"'
            out.append(_marker("diamond", f.x(x, v), top + bar_h / 2, PALETTE["black"], attrs))
    _rules(out, f, x, None, rules)
    if legend:
        _legend(out, items, f.y1 + 46, 8, width)
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["Axis", "BarRow", "PALETTE", "Rule", "Series", "VERDICT_COLOURS", "axis_for", "bar_chart",
           "format_value", "linear_ticks", "log_ticks", "xy_chart"]
