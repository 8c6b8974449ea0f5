from __future__ import annotations

import re

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import BudgetResult, Report
from budgetlint.reporters import markdown

from reporter_fixtures import many_findings_report


def _split_row(line: str) -> list[str]:
    """Cells of a GFM table row: split on pipes not escaped with a backslash."""
    inner = line.strip()[1:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def _table(out: str, header_first: str) -> list[list[str]]:
    """The rows of every table whose header starts with ``header_first``, in order
    (the budget rows are two tables: the promises not met, then the met ones folded)."""
    lines = out.splitlines()
    rows = []
    starts = [i for i, line in enumerate(lines) if line.startswith(f"| {header_first} |")]
    assert starts, f"no table {header_first!r}"
    for start in starts:
        for line in lines[start + 2 :]:
            if not line.startswith("|"):
                break
            rows.append(_split_row(line))
    return rows


def test_heading_has_the_counts(report: Report) -> None:
    first = markdown.render(report).splitlines()[0]
    assert first.startswith("## ") and "3 errors, 2 warnings, 1 info in 5 files (2 budgets)" in first


def test_one_row_per_budget_and_promise(report: Report) -> None:
    out = markdown.render(report)
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("| Budget |"))
    assert _split_row(header) == ["Budget", "Promise", "Percentile", "Bound", "Estimate", "Measured", "Headroom", "Owner",
                                  "Verdict"]
    rows = _table(out, "Budget")
    assert len(rows) == sum(len(b.verdicts) for b in report.budgets) == 5
    assert all(len(r) == 9 for r in rows)
    by_key = {(r[0], r[1].split()[0]): r for r in rows}
    # headroom = promise / estimate - 1 = 400 / 271 - 1 = +47.5 %: two significant figures
    assert by_key[("chat-reply", "ttft")] == ["chat-reply", "ttft 400 ms", "p95", "210 ms", "271 ms", "312 ms", "+48%",
                                              "@acme/chat", "✅ met"]
    assert by_key[("chat-reply", "tpot")][3:7] == ["61 ms", "64.1 ms", "—", "-22%"]
    assert by_key[("chat-reply", "tpot")][8] == "❌ cannot be met"
    assert by_key[("summarize", "pace")] == ["summarize", "pace 20 token/s", "p99", "—", "—", "—", "—", "—", "❔ unknown"]


def test_findings_table_lists_errors_and_warnings_escaped(report: Report) -> None:
    out = markdown.render(report)
    rows = _table(out, "Severity")
    assert len(rows) == 5  # 3 errors + 2 warnings, no info
    assert all(len(r) == 5 for r in rows)
    assert [r[0] for r in rows] == ["❌ error"] * 3 + ["⚠️ warning"] * 2
    tricky = next(r for r in rows if r[1] == "`BL003`")
    assert tricky[4] == "100% of 3,350 GB/s: needs \\| 2 devices<br>second line &lt;b&gt;&amp;&lt;/b&gt;"
    assert "BL013" not in out


def test_cell_escaping() -> None:
    assert markdown.cell("a|b") == "a\\|b"
    assert markdown.cell("a\\|b") == "a\\\\\\|b"
    assert markdown.cell("x\r\ny\nz") == "x<br>y<br>z"
    assert markdown.cell("") == " "
    assert markdown.cell(None) == " "


def test_clean_report() -> None:
    out = markdown.render(Report(files=["a.yaml"]))
    assert out.startswith("## ✅ budgetlint: 0 errors, 0 warnings in 1 file (0 budgets)")
    assert "Findings" not in out


def test_truncated_under_the_limit_with_a_note() -> None:
    report = many_findings_report(errors=4000, warnings=4000, infos=0)
    limit = 50_000
    out = markdown.render(report, limit=limit)
    assert len(out.encode("utf-8")) <= limit
    assert "more findings are not shown" in out
    rows = _table(out, "Severity")
    assert 0 < len(rows) < 8000
    assert rows[0][0] == "❌ error"


def test_default_limit_fits_githubs_step_summary() -> None:
    report = many_findings_report(errors=20_000, warnings=0, infos=0)
    out = markdown.render(report)
    assert len(out.encode("utf-8")) <= markdown.STEP_SUMMARY_LIMIT
    assert "more findings are not shown" in out


def test_many_budgets_are_truncated_too() -> None:
    budgets = [BudgetResult(f"b{i}", "a.yaml", i + 1, "@o", "p95", {"ttft_s": 0.4}, {}, {"ttft": "met"}) for i in range(2000)]
    findings = [Finding("BL003", Severity.ERROR, "x", Location("a.yaml", 1, 1))]
    out = markdown.render(Report(files=["a.yaml"], budgets=budgets, findings=findings), limit=20_000)
    assert len(out.encode("utf-8")) <= 20_000
    assert "more budget rows are not shown" in out


def test_pace_folds_into_tpot_and_verdict_only_promises_find_their_numbers() -> None:
    b = BudgetResult(
        "chat", "a.yaml", 1, "@o", "p95",
        promises={"ttft_s": 0.4, "tpot_s": 0.04, "pace_token_per_s": 25.0},
        analysis={"bound_tpot_s": 0.00616, "bound_memory_bytes": 21e9, "headroom_memory": 2.8},
        verdicts={"ttft": "met", "tpot": "at-risk", "memory": "met"},
    )
    rows = _table(markdown.render(Report(files=["a.yaml"], budgets=[b])), "Budget")
    # the at-risk row first (what fails first), then the met ones in file order
    assert [r[1] for r in rows] == ["tpot 40 ms (25 token/s)", "ttft 400 ms", "memory"]
    assert rows[0][3] == "6.16 ms" and rows[0][8] == "⚠️ at risk"
    assert rows[2][3] == "21 GB" and rows[2][6] == "+280%"


def test_pace_with_its_own_verdict_keeps_its_row() -> None:
    b = BudgetResult("s", "a.yaml", 1, None, None, promises={"pace_token_per_s": 20.0}, verdicts={"pace": "met"})
    rows = _table(markdown.render(Report(budgets=[b])), "Budget")
    assert [r[1] for r in rows] == ["pace 20 token/s"]


def test_failures_first_and_met_rows_folded(report: Report) -> None:
    """Issue 27: the findings came last, under every met row. Now: the heading, the
    findings (errors first), the promises not met (worst first), then the met ones in
    <details>."""
    out = markdown.render(report)
    findings, failing = out.index("### Findings"), out.index("### Promises not met")
    details = out.index("<details><summary>")
    assert findings < failing < details
    assert out.index("</details>") > details
    verdicts = [r[8] for r in _table(out, "Budget")]
    assert verdicts == sorted(verdicts, key=["❌ cannot be met", "⚠️ at risk", "❔ unknown", "✅ met"].index)
    met = out[details:out.index("</details>")]
    assert "✅ met" in met and "❌" not in met and "⚠️" not in met
    assert "<summary>2 promises met</summary>" in out
    assert "mermaid" not in out  # the chart that drew -34.5 % as a short positive bar is gone


def test_all_met_is_all_folded() -> None:
    b = BudgetResult("chat", "a.yaml", 1, "@o", "p95", promises={"ttft_s": 0.4}, verdicts={"ttft": "met"})
    out = markdown.render(Report(files=["a.yaml"], budgets=[b]))
    assert "Promises not met" not in out and "<summary>1 promise met</summary>" in out
