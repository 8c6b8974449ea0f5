"""The markdown format's headroom chart, drawn by Mermaid itself (the library
GitHub renders ```mermaid blocks with) in headless Chromium: it parses, and
it draws one bar per budget, in order, with the JSON report's headroom."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from budgetlint.run.check import run_check
from budgetlint.reporters import get_reporter

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
MERMAID = REPO / ".venvs" / "mermaid" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"

RENDER_JS = """
(async function () {
  mermaid.initialize({startOnLoad: false});
  var code = document.getElementById('code').textContent;
  await mermaid.parse(code);
  var out = await mermaid.render('chart', code);
  var holder = document.getElementById('out');
  holder.innerHTML = out.svg;
  var bars = Array.from(holder.querySelectorAll('g.bar-plot-0 rect'));
  var texts = Array.from(holder.querySelectorAll('text')).map(function (t) { return t.textContent; });
  return {bars: bars.map(function (r) {
            var b = r.getBBox(); return {x: b.x, y: b.y, width: b.width, height: b.height};
          }), texts: texts};
})()
"""


@pytest.fixture(scope="module")
def mermaid_js() -> Path:
    if not MERMAID.is_file():
        reason = "mermaid is not installed: bash tests/browser/setup_browser.sh (npm install into .venvs/mermaid)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)
    return MERMAID


def test_mermaid_draws_the_headroom_chart(browser, mermaid_js, tmp_path) -> None:
    report = run_check([str(REPO / "budgets"), str(REPO / "tests/examples/overpromised.yaml")])
    data = json.loads(get_reporter("json")(report))
    markdown = get_reporter("markdown")(report)
    code = re.search(r"```mermaid\n(.*?)```", markdown, re.S).group(1)
    page = tmp_path / "chart.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<script src='{mermaid_js.as_uri()}'></script></head><body>"
        f"<pre id='code'>{code.replace('&', '&amp;').replace('<', '&lt;')}</pre><div id='out'></div></body></html>",
        encoding="utf-8")
    run, session = browser.open(page.as_uri(), settle=0.1)
    drawn = browser.evaluate(session, RENDER_JS, await_promise=True)
    assert run.errors() == []

    headrooms = sorted(min(v for k, v in b["analysis"].items() if k.startswith("headroom_") and v is not None)
                       for b in data["budgets"])
    bars = sorted(drawn["bars"], key=lambda r: r["y"])  # top to bottom: tightest first
    assert len(bars) == len(headrooms)
    # horizontal bars grow from the left of the axis: their lengths are in the order of the values
    widths = [r["width"] for r in bars]
    assert widths == sorted(widths)
    assert all(r["height"] > 0 and r["width"] > 0 for r in bars)
    # the axis labels name the budgets, tightest first
    assert any(t.startswith("research-assistant") for t in drawn["texts"])
    assert any("Headroom" in t for t in drawn["texts"])
