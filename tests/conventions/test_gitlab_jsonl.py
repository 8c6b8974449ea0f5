"""--format gitlab (GitLab Code Quality) and --format jsonl (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from budgetlint.cli import main

REPO = Path(__file__).resolve().parents[2]
OVERPROMISED = REPO / "tests" / "examples" / "overpromised.yaml"


def _out(*args: str) -> str:
    result = CliRunner().invoke(main, ["check", "--no-summary", "--isolated", *args])
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_gitlab_code_quality() -> None:
    issues = json.loads(_out(str(OVERPROMISED), "-f", "gitlab"))
    report = json.loads(_out(str(OVERPROMISED), "-f", "json"))
    wanted = [f for f in report["findings"] if f["severity"] in ("warning", "error")]
    assert len(issues) == len(wanted) > 0
    # the fields and values GitLab's Code Quality format requires (docs.gitlab.com, code quality report format)
    for issue, finding in zip(issues, wanted):
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert issue["severity"] == {"error": "major", "warning": "minor"}[finding["severity"]]
        assert issue["check_name"] == finding["rule"] and finding["message"] in issue["description"]
        assert issue["location"] == {"path": finding["file"], "lines": {"begin": finding["line"]}}
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    again = json.loads(_out(str(OVERPROMISED), "-f", "gitlab"))
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]


def test_gitlab_empty_report_is_an_empty_array() -> None:
    assert json.loads(_out("budgets/", "-f", "gitlab", "-q")) == []


def test_jsonl_one_finding_a_line() -> None:
    lines = _out(str(OVERPROMISED), "-f", "jsonl").splitlines()
    report = json.loads(_out(str(OVERPROMISED), "-f", "json"))
    assert [json.loads(line) for line in lines] == report["findings"]
