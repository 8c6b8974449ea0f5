"""The html report in a real headless Chromium: it loads with no console error
and no network request, every budget's charts are there with plotted
elements drawn at a real size, and a screenshot is not blank. Rendered for
the shipped budgets, tests/examples/overpromised.yaml and a hand-made report
with traffic. A control page proves the checks catch what they look for."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from cdp import colour_stats

from budgetlint.run.check import run_check
from budgetlint.reporters import get_reporter

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "reporters"))

# what each budget card holds, as the page itself reports it
CARDS_JS = """
Array.from(document.querySelectorAll('section.card.budget')).map(function (card) {
  return {
    budget: card.getAttribute('data-budget'),
    charts: Array.from(card.querySelectorAll('svg.bl-chart')).map(function (svg) {
      var box = svg.getBoundingClientRect();
      var drawn = Array.from(svg.querySelectorAll('.bl-point, .bl-bar, .bl-line')).filter(function (e) {
        var r = e.getBoundingClientRect();
        return (r.width > 0 || r.height > 0) && r.left >= box.left - 1 && r.right <= box.right + 1
            && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
      });
      return {id: svg.id, width: box.width, height: box.height, drawn: drawn.length,
              title: (svg.querySelector('title') || {}).textContent || '',
              table: svg.closest('figure') && svg.closest('figure').querySelector('table') ? 1 : 0};
    })
  };
})
"""


def _sources():
    from test_reporter_html import _with_load

    from budgetlint.reporters.html import render_dict

    def check(*paths):
        report = run_check([str(REPO / p) for p in paths])
        return json.loads(get_reporter("json")(report)), get_reporter("html")(report)

    yield "shipped", lambda: check("budgets")
    yield "overpromised", lambda: check("tests/examples/overpromised.yaml")
    yield "with-load", lambda: (_with_load(), render_dict(_with_load()))


SOURCES = dict(_sources())


@pytest.mark.parametrize("name", list(SOURCES))
def test_report_in_chromium(browser, tmp_path, name) -> None:
    data, page = SOURCES[name]()
    path = tmp_path / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    run, session = browser.open(path.as_uri())

    assert run.errors() == [], run.errors()
    assert run.foreign_requests() == [], run.foreign_requests()

    cards = {c["budget"]: c for c in browser.evaluate(session, CARDS_JS)}
    assert set(cards) == {b["name"] for b in data["budgets"]}
    for b in data["budgets"]:
        charts = {c["id"].split("-", 1)[1]: c for c in cards[b["name"]]["charts"]}
        expected = {"roofline", "memory"} | {p for p in ("ttft", "tpot", "e2e") if f"{p}_s" in b["promises"]}
        if "load" in b:
            expected |= {f"cdf-{p}" for p in ("ttft", "tpot", "e2e", "queue")} | {"capacity-ttft", "capacity-tpot"}
        assert expected <= set(charts), (b["name"], sorted(charts))
        for chart in charts.values():
            assert chart["width"] > 200 and chart["height"] > 60, chart
            assert chart["drawn"] >= 1, chart  # plotted elements, drawn inside the chart
            assert chart["title"] and chart["table"] == 1, chart
        assert charts["roofline"]["drawn"] >= 6  # two roofs, decode and prefill at 100 % and realistic

    png = browser.screenshot(session)
    colours, ink = colour_stats(png)
    assert colours > 30 and ink > 0.2, (colours, ink)  # a page of text and charts, not a blank one
    (tmp_path / f"{name}.png").write_bytes(png)
    keep = os.environ.get("BUDGETLINT_SCREENSHOTS")  # e.g. to look at them, or as a CI artifact
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / f"{name}.png", Path(keep) / f"{name}.png")


def test_readable_without_javascript(browser, tmp_path) -> None:
    data, page = SOURCES["overpromised"]()
    path = tmp_path / "nojs.html"
    path.write_text(page, encoding="utf-8")
    run, session = browser.open(path.as_uri(), javascript=False)
    assert run.errors() == []
    cards = browser.evaluate(session, CARDS_JS)
    assert [c["budget"] for c in cards] == [b["name"] for b in data["budgets"]]
    assert all(ch["drawn"] >= 1 for c in cards for ch in c["charts"])


def test_the_checks_catch_a_network_request_and_a_console_error(browser, tmp_path) -> None:
    """The control: a page that fetches and logs an error is caught on both counts."""
    path = tmp_path / "bad.html"
    path.write_text('<!DOCTYPE html><html><body><p>x</p><img src="http://127.0.0.1:9/pixel.png">'
                    "<script>console.error('boom')</script></body></html>", encoding="utf-8")
    run, _ = browser.open(path.as_uri())
    assert any("127.0.0.1:9/pixel.png" in u for u in run.foreign_requests())
    assert any("boom" in e for e in run.errors())


def test_a_blank_page_is_blank(browser, tmp_path) -> None:
    path = tmp_path / "blank.html"
    path.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    _, session = browser.open(path.as_uri())
    colours, ink = colour_stats(browser.screenshot(session))
    assert colours <= 2 and ink < 0.01


def test_the_summary_table_sorts_when_a_header_is_clicked(browser, tmp_path) -> None:
    _, page = SOURCES["shipped"]()
    path = tmp_path / "sort.html"
    path.write_text(page, encoding="utf-8")
    run, session = browser.open(path.as_uri())
    names = "Array.from(document.querySelectorAll('table.bl-budgets tbody tr')).map(r => r.cells[0].textContent)"
    headroom = ("Array.from(document.querySelectorAll('table.bl-budgets tbody tr'))"
                ".map(r => parseFloat(r.cells[4].getAttribute('data-key')))")
    first = browser.evaluate(session, headroom)
    assert first == sorted(first)  # as written: smallest headroom first
    browser.evaluate(session, "document.querySelectorAll('table.bl-budgets th')[0].click()")
    by_name = browser.evaluate(session, names)
    assert by_name == sorted(by_name)
    browser.evaluate(session, "document.querySelectorAll('table.bl-budgets th')[4].click()")
    browser.evaluate(session, "document.querySelectorAll('table.bl-budgets th')[4].click()")
    assert browser.evaluate(session, headroom) == sorted(first, reverse=True)
    assert run.errors() == []
