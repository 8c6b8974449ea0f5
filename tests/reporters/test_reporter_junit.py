from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import BudgetResult, Report
from budgetlint.reporters import junit

junitparser = pytest.importorskip("junitparser", reason="junitparser (a real JUnit consumer) is not installed")


def _load(tmp_path: Path, report: Report) -> "junitparser.JUnitXml":
    path = tmp_path / "report.xml"
    path.write_text(junit.render(report), encoding="utf-8")
    return junitparser.JUnitXml.fromfile(str(path))


def _cases(xml: "junitparser.JUnitXml") -> dict[str, "junitparser.TestCase"]:
    return {case.name: case for suite in xml for case in suite}


def test_parses_with_junitparser(tmp_path: Path, report: Report) -> None:
    xml = _load(tmp_path, report)
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {"budgetlint", "budgets/batch.yml", "budgets/chat.yaml", "budgets/notes.yaml", "dir with space/x.yaml"}
    cases = _cases(xml)
    # a testcase per budget and promise
    for name in ("chat-reply: ttft", "chat-reply: tpot", "chat-reply: e2e", "summarize: pace", "summarize: e2e"):
        assert name in cases
    assert cases["chat-reply: ttft"].is_passed
    tpot = cases["chat-reply: tpot"]
    assert not tpot.is_passed
    (failure,) = tpot.result
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "BL301"
    assert "help: use 2 devices" in failure.text
    assert tpot.classname == "budgets/chat.yaml"
    # a warning is reported but the test passes
    pace = cases["summarize: pace"]
    assert pace.is_passed and "BL009" in (pace.system_out or "")
    # a budget-level error (no promise) gets the budget's testcase
    assert not cases["chat-reply"].is_passed
    # findings with no budget are testcases of their own
    assert not cases["BL010: cannot read budgets/locked.yaml: permission denied"].is_passed
    assert cases["BL013: file has no `kind`: skipped"].is_passed
    assert cases["BL002: key 'ttft' appears twice, a,b:c"].is_passed


def test_counts_add_up(tmp_path: Path, report: Report) -> None:
    xml = _load(tmp_path, report)
    xml.update_statistics()
    total = sum(1 for suite in xml for _ in suite)
    failed = sum(1 for suite in xml for case in suite if not case.is_passed)
    assert xml.tests == total == 9
    assert xml.failures == failed == 3
    root = ET.fromstring(junit.render(report).split("\n", 1)[1])
    assert root.get("tests") == "9" and root.get("failures") == "3"
    for suite in root:
        assert int(suite.get("tests", "-1")) == len(suite.findall("testcase"))
        assert int(suite.get("failures", "-1")) == len([c for c in suite if c.find("failure") is not None])


def test_tricky_text_survives(tmp_path: Path) -> None:
    text = "a <b> & \"c\" | 100%\x00\x1b[31m"
    report = Report(findings=[Finding("BL003", Severity.ERROR, text, Location("a.yaml", 1, 1), budget="b", promise="ttft")])
    xml = _load(tmp_path, report)
    (case,) = _cases(xml).values()
    assert case.name == "b"
    # control characters are written as escapes (issue 18.3), never raw into a CI log
    assert 'a <b> & "c" | 100%\\x00\\x1b[31m' in case.result[0].text


def test_budget_without_promises_still_appears(tmp_path: Path) -> None:
    b = BudgetResult("lonely", "a.yaml", 3, None, None)
    xml = _load(tmp_path, Report(files=["a.yaml"], budgets=[b]))
    assert list(_cases(xml)) == ["lonely"]
