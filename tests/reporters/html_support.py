"""Reading the html format back: the SVG charts as XML, per budget card."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from budgetlint.run.check import run_check
from budgetlint.reporters import get_reporter

REPO = Path(__file__).resolve().parents[2]
SVG_NS = "{http://www.w3.org/2000/svg}"
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_CARD = re.compile(r'<section class="card budget" id="[^"]*" data-budget="([^"]*)">(.*?)</section>', re.S)


def reports(*paths: str) -> tuple[dict, str]:
    """The JSON report (parsed) and the HTML page of one check of ``paths``."""
    report = run_check([str(REPO / p) for p in paths])
    return json.loads(get_reporter("json")(report)), get_reporter("html")(report)


def svgs(page: str) -> list[ET.Element]:
    """Every chart of the page, parsed as XML (raises on malformed SVG)."""
    return [ET.fromstring(chunk) for chunk in _SVG.findall(page)]


def cards(page: str) -> dict[str, dict[str, ET.Element]]:
    """budget name -> {chart kind suffix ("roofline", "ttft", "memory", "cdf-ttft"...): svg}."""
    import html as html_lib

    out: dict[str, dict[str, ET.Element]] = {}
    for name, body in _CARD.findall(page):
        charts = {}
        for svg in svgs(body):
            charts[svg.get("id").split("-", 1)[1]] = svg
        out[html_lib.unescape(name)] = charts
    return out


def points(svg: ET.Element, series: str) -> list[tuple[float, float]]:
    """(x, y) of the points of ``series`` on an xy chart."""
    return [(float(e.get("data-x")), float(e.get("data-y"))) for e in svg.iter()
            if e.get("class") == "bl-point" and e.get("data-series") == series and e.get("data-y") is not None]


def markers(svg: ET.Element, series: str) -> list[tuple[str, float]]:
    """(row, x) of the markers of ``series`` on a bar chart."""
    return [(e.get("data-row"), float(e.get("data-x"))) for e in svg.iter()
            if e.get("class") == "bl-point" and e.get("data-series") == series and e.get("data-y") is None]


def bars(svg: ET.Element, row: str) -> list[tuple[str, float, float]]:
    return [(e.get("data-name"), float(e.get("data-start")), float(e.get("data-end"))) for e in svg.iter()
            if e.get("class") == "bl-bar" and e.get("data-row") == row]


def rules(svg: ET.Element) -> dict[str, float]:
    return {e.get("data-name"): float(e.get("data-value")) for e in svg.iter() if e.get("class") == "bl-rule"}


def lines(svg: ET.Element) -> dict[str, list[tuple[float, float]]]:
    out = {}
    for e in svg.iter():
        if e.get("class") == "bl-line":
            out[e.get("data-series")] = [tuple(map(float, p.split(","))) for p in e.get("data-points").split()]
    return out
