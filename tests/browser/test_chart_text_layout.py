"""No chart text is clipped or overlaps other text (issue 27: "labels clip and
overlap, and the browser test does not notice").

In a real headless Chromium, for every ``svg.bl-chart`` of the HTML report:
the bounding box of each ``<text>`` element (as laid out, glyphs and all) lies
inside the SVG's viewport, and the boxes of any two text elements of one
chart are disjoint. Rendered for the shipped budgets, the overpromised
example and a budget with declared traffic (tests/browser/data: the load
charts, drawn from a real simulation). A control page with one clipped and
two overlapping labels proves the check finds both.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from budgetlint.reporters import get_reporter
from budgetlint.run.check import run_check

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]

#: boxes may touch: overlaps and overruns below this many CSS pixels are rounding
SLACK = 0.5

LAYOUT_JS = """
(function (slack) {
  var out = [];
  document.querySelectorAll('svg.bl-chart, svg.layout-control').forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var texts = Array.from(svg.querySelectorAll('text')).map(function (t) {
      var r = t.getBoundingClientRect();
      return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
              empty: r.width === 0 && r.height === 0};
    }).filter(function (t) { return !t.empty && t.text.trim() !== ''; });
    var clipped = texts.filter(function (t) {
      return t.left < box.left - slack || t.right > box.right + slack ||
             t.top < box.top - slack || t.bottom > box.bottom + slack;
    }).map(function (t) { return t.text; });
    var overlapping = [];
    for (var i = 0; i < texts.length; i++) {
      for (var j = i + 1; j < texts.length; j++) {
        var a = texts[i], b = texts[j];
        var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > slack && h > slack) { overlapping.push([a.text, b.text]); }
      }
    }
    out.push({id: svg.id, texts: texts.length, clipped: clipped, overlapping: overlapping});
  });
  return out;
})(%s)
"""


def _page(*paths: str, history: int = 0) -> str:
    report = run_check([str(REPO / p) for p in paths])
    if history:  # past reports: this run's headroom scaled, as a few commits that ate into it would leave it
        past = report.as_dict()
        report.history = []
        for i in range(history):
            for b in past["budgets"]:
                b["analysis"] = {k: v * 1.1 if k.startswith("headroom_") and isinstance(v, float) else v
                                 for k, v in b["analysis"].items()}
            report.history.append({"label": f"commit {i}", "budgets": {
                b["name"]: {"headroom": {k[9:]: v for k, v in b["analysis"].items() if k.startswith("headroom_")
                                         and isinstance(v, float)}, "verdicts": b["verdicts"]}
                for b in past["budgets"]}})
    return get_reporter("html")(report)


SOURCES = {
    "shipped": ("budgets",),
    "overpromised": ("tests/examples/overpromised.yaml",),
    "with-load": ("tests/browser/data",),
}
HISTORY = {"shipped-with-history": ("budgets",)}


def _layout(browser, tmp_path: Path, name: str, page: str) -> list[dict]:
    path = tmp_path / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    run, session = browser.open(path.as_uri())
    assert run.errors() == [], run.errors()
    charts = browser.evaluate(session, LAYOUT_JS % json.dumps(SLACK))
    keep = os.environ.get("BUDGETLINT_SCREENSHOTS")  # to look at them, or as a CI artifact
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / f"layout-{name}.png").write_bytes(browser.screenshot(session, full_page=True))
        shutil.copy(path, Path(keep) / f"layout-{name}.html")
    return charts


@pytest.mark.parametrize("name", list(SOURCES) + list(HISTORY))
def test_no_chart_text_is_clipped_or_overlaps(browser, tmp_path: Path, name: str) -> None:
    page = _page(*SOURCES[name]) if name in SOURCES else _page(*HISTORY[name], history=5)
    charts = _layout(browser, tmp_path, name, page)
    assert charts, "no chart on the page"
    assert all(c["texts"] >= 3 for c in charts), [c["id"] for c in charts if c["texts"] < 3]
    bad = [c for c in charts if c["clipped"] or c["overlapping"]]
    assert bad == [], json.dumps(bad, ensure_ascii=False, indent=1)
    if name == "with-load":  # the load charts are there, and were checked
        ids = {c["id"].split("-", 1)[-1] for c in charts}
        assert {"cdf-ttft", "cdf-e2e", "capacity-ttft"} <= ids, sorted(ids)
    if name in HISTORY:
        assert any(c["id"].endswith("-history") for c in charts)


def test_the_check_finds_clipped_and_overlapping_text(browser, tmp_path: Path) -> None:
    page = ('<!DOCTYPE html><html><body style="margin:0">'
            '<svg class="layout-control" id="control" viewBox="0 0 200 100" width="200" height="100" '
            'font-family="sans-serif" font-size="11">'
            '<text x="150" y="50">a label that runs off</text>'
            '<text x="10" y="20">first label</text><text x="30" y="22">second</text>'
            '<text x="10" y="80">alone</text></svg></body></html>')
    (chart,) = _layout(browser, tmp_path, "control", page)
    assert chart["clipped"] == ["a label that runs off"]
    assert ["first label", "second"] in chart["overlapping"]
    assert not any("alone" in pair for pair in chart["overlapping"])
