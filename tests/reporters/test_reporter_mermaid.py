"""The markdown format's headroom chart (Mermaid xychart-beta): each bar is a
budget's smallest headroom from the JSON report, in percent, smallest first."""

from __future__ import annotations

import re

from html_support import REPO

from budgetlint.run.check import run_check
from budgetlint.report import BudgetResult, Report
from budgetlint.reporters import get_reporter
from budgetlint.reporters.markdown import CHART_BUDGETS, headroom_chart


def _chart(text: str) -> dict[str, str]:
    block = re.search(r"```mermaid\n(.*?)```", text, re.S).group(1)
    return {line.split(None, 1)[0]: line.split(None, 1)[1] if " " in line.strip() else ""
            for line in block.strip().splitlines()}


def test_bars_are_the_json_reports_smallest_headrooms_in_percent() -> None:
    import json

    report = run_check([str(REPO / "budgets"), str(REPO / "tests/examples/overpromised.yaml")])
    data = json.loads(get_reporter("json")(report))
    md = get_reporter("markdown")(report)
    chart = _chart(md)
    assert "xychart-beta" in md
    bars = [float(v) for v in chart["bar"].strip("[]").split(",")]
    expected = sorted(min(v for k, v in b["analysis"].items() if k.startswith("headroom_") and v is not None)
                      for b in data["budgets"])
    assert bars == [round(h * 100, 1) for h in expected]
    assert bars[0] < 0  # the overpromised budget: over its promise, below the zero line
    lo, hi = (float(x) for x in re.findall(r"-?[\d.]+", chart["y-axis"].split('"')[-1]))
    assert lo <= min(bars) and hi >= max(bars)
    labels = re.findall(r'"([^"]*)"', chart["x-axis"])
    assert len(labels) == len(bars) and labels[0].startswith("research-assistant")
    assert md.index("```mermaid") < md.index("| Budget |")  # the picture, then the table


def _budget(name: str, headroom: float | None) -> BudgetResult:
    analysis = {} if headroom is None else {"headroom_ttft": headroom}
    return BudgetResult(name=name, file="b.yaml", line=1, owner=None, percentile="p95",
                        promises={"ttft_s": 0.5}, analysis=analysis, verdicts={"ttft": "met"})


def test_no_headroom_no_chart() -> None:
    assert headroom_chart(Report(budgets=[_budget("a", None)])) == ""
    assert "mermaid" not in get_reporter("markdown")(Report(budgets=[_budget("a", None)]))


def test_names_cannot_break_the_chart_and_long_runs_are_cut() -> None:
    budgets = [_budget(f'x"]\n```{i}', 0.01 * i) for i in range(CHART_BUDGETS + 7)]
    chart = headroom_chart(Report(budgets=budgets))
    body = chart.split("```mermaid\n", 1)[1].split("\n```", 1)[0]
    assert "```" not in body and body.count("\n") == 5
    labels = re.findall(r'"([^"]*)"', _chart(chart)["x-axis"])
    assert len(labels) == CHART_BUDGETS
    assert f"{CHART_BUDGETS} of {CHART_BUDGETS + 7}" in chart
