"""The SVG module on its own: ticks, unit labels, axes, escaping, what is
left out of the plot and what stays in the data."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from budgetlint.reporters.svg import (
    Axis,
    BarRow,
    Rule,
    Series,
    axis_for,
    bar_chart,
    format_value,
    linear_ticks,
    log_ticks,
    xy_chart,
)

NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize(("value", "unit", "text"), [
    (989e12, "FLOP/s", "989 TFLOP/s"), (1.979e15, "FLOP/s", "1.98 PFLOP/s"), (3.35e12, "B/s", "3.35 TB/s"),
    (295.2, "FLOP/B", "295 FLOP/B"), (3084.0, "FLOP/B", "3.08 kFLOP/B"), (0.4, "s", "400 ms"), (2.5, "s", "2.5 s"),
    (80e9, "B", "80 GB"), (-0.219, "%", "-22%"), (6.0, "request/s", "6 request/s"), (0.0, "FLOP/s", "0 FLOP/s"),
])
def test_unit_labels(value: float, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


def test_ticks() -> None:
    assert linear_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert linear_ticks(-0.5, 1.5) == [-0.5, 0.0, 0.5, 1.0, 1.5]
    assert log_ticks(1.0, 1e4) == [1.0, 10.0, 100.0, 1000.0, 10000.0]
    assert log_ticks(1e9, 1e27)[:3] == [1e9, 1e12, 1e15]  # at most ~8 labelled decades


def test_axes_cover_their_values() -> None:
    a = axis_for([7.5, 3084.0], "x", "FLOP/B", log=True)
    assert (a.lo, a.hi) == (1.0, 10000.0)
    b = axis_for([-0.318, 1.14], "h", "%")
    assert b.lo <= -0.318 and b.hi >= 1.14 and b.lo < 0
    c = axis_for([0.42, 0.64, 0.5], "t", "s")
    assert c.lo == 0.0 and c.hi >= 0.64
    assert Axis("x", "", 1.0, 100.0, log=True).frac(10.0) == pytest.approx(0.5)


def test_xy_chart_escapes_and_keeps_only_what_fits() -> None:
    svg = xy_chart(chart_id="c1", title='a <b> & "c"', desc="d <e>", x=Axis("x", "s", 0.0, 1.0),
                   y=Axis("y", "%", 0.0, 1.0),
                   series=[Series('s<1>', [(0.5, 0.5), (2.0, 0.5), (float("nan"), 0.1)], "points"),
                           Series("line", [(0.0, 0.0), (1.0, 1.0)], "line")],
                   rules=[Rule("x", 0.25, "promise <x>"), Rule("y", 5.0, "off the chart")])
    root = ET.fromstring(svg)
    assert root.find(f"{NS}title").text == 'a <b> & "c"'
    pts = [e for e in root.iter() if e.get("class") == "bl-point"]
    assert [(e.get("data-x"), e.get("data-series")) for e in pts] == [("0.5", "s<1>")]  # 2.0 and nan left out
    assert [e.get("data-value") for e in root.iter() if e.get("class") == "bl-rule"] == ["0.25"]


def test_bar_chart_segments_and_markers() -> None:
    svg = bar_chart(chart_id="c2", title="t", desc="d", x=Axis("t", "s", 0.0, 1.0),
                    rows=[BarRow("a very long row label that does not fit", [("q", 0.0, 0.2, "#000"),
                                                                               ("p", 0.2, 0.7, "#111")],
                                 marker=("measured", 0.6))],
                    rules=[Rule("x", 0.5, "promise")], legend=[("q", "#000"), ("p", "#111")])
    root = ET.fromstring(svg)
    segs = [(e.get("data-name"), float(e.get("data-start")), float(e.get("data-end")))
            for e in root.iter() if e.get("class") == "bl-bar"]
    assert segs == [("q", 0.0, 0.2), ("p", 0.2, 0.7)]
    assert [e.get("data-x") for e in root.iter() if e.get("class") == "bl-point"] == ["0.6"]
    label = next(e for e in root.iter(f"{NS}text") if e.find(f"{NS}title") is not None)
    assert label.find(f"{NS}title").text == "a very long row label that does not fit"  # the whole label, on hover
