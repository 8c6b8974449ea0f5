"""Budget suppressions: BL502 (no reason), BL503 (expired), BL504 (unused), and what applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main

AT_RISK = """\
version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    percentile: p95
    workload: {{prompt_tokens: 1000, output_tokens: 200}}
    promise: {{pace: 35 token/s}}
    deployment: {{model: llama-3.1-70b, hardware: h100-sxm, weight_precision: bf16, devices: 2, memory_overhead: 1 GiB}}
{suppress}"""


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suppress: str, today: str = "2026-06-01",
         *args: str) -> tuple[int, dict]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BUDGETLINT_TODAY", today)
    (tmp_path / ".git").mkdir(exist_ok=True)  # stop config discovery here
    (tmp_path / "b.yaml").write_text(AT_RISK.format(suppress=suppress), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "b.yaml", "--no-codeowners", "-f", "json", *args])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.output)


def _rules(report: dict) -> list[str]:
    return [f["rule"] for f in report["findings"] if f["severity"] != "info"]


def test_without_suppression_bl303_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, report = _run(tmp_path, monkeypatch, "")
    assert _rules(report) == ["BL303"]
    assert report["summary"]["suppressed"] == 0
    assert report["suppressed"] == []
    assert code == 0


def test_suppression_with_reason_removes_the_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - rule: BL303
        reason: measured 0.85 of peak bandwidth on our kernels
        expires: 2027-01-31
""")
    assert _rules(report) == []
    assert report["summary"]["suppressed"] == 1
    (s,) = report["suppressed"]
    assert s["rule"] == "BL303" and s["budget"] == "chat"
    assert s["reason"] == "measured 0.85 of peak bandwidth on our kernels"
    assert s["expires"] == "2027-01-31"
    assert s["suppressed_at"] == "b.yaml:11:9"
    assert code == 0


def test_bl502_suppression_without_reason_does_not_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - rule: BL303
""")
    assert sorted(_rules(report)) == ["BL303", "BL502"]
    bl502 = next(f for f in report["findings"] if f["rule"] == "BL502")
    assert (bl502["severity"], bl502["line"], bl502["column"]) == ("error", 11, 9)
    assert "no reason" in bl502["message"]
    assert report["summary"]["suppressed"] == 0
    assert code == 1


def test_bl502_blank_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - {rule: BL303, reason: "  "}
""")
    assert sorted(_rules(report)) == ["BL303", "BL502"]


def test_bl503_expired_suppression_says_since_when(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - rule: BL303
        reason: new kernels
        expires: 2026-05-30
""", "2026-06-01")
    assert sorted(_rules(report)) == ["BL303", "BL503"]
    bl503 = next(f for f in report["findings"] if f["rule"] == "BL503")
    assert bl503["severity"] == "warning"
    assert "expired on 2026-05-30 (2 days ago)" in bl503["message"]
    assert (bl503["line"], bl503["column"]) == (13, 18)
    assert code == 0


def test_bl503_not_yet_on_the_expiry_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - {rule: BL303, reason: new kernels, expires: 2026-06-01}
""", "2026-06-01")
    assert _rules(report) == []
    assert report["summary"]["suppressed"] == 1


def test_bl504_unused_suppression(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - {rule: BL303, reason: accepted}
      - {rule: BL301, reason: waiting for H200s}
""")
    assert _rules(report) == ["BL504"]
    bl504 = next(f for f in report["findings"] if f["rule"] == "BL504")
    assert "BL301" in bl504["message"] and "suppresses nothing" in bl504["message"]
    assert (bl504["line"], bl504["column"]) == (12, 9)


def test_bl504_rules_about_suppressions_cannot_be_suppressed(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - {rule: BL303, reason: accepted}
      - {rule: BL504, reason: quiet please}
""")
    assert _rules(report) == ["BL504"]


def test_suppression_findings_obey_ignore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - {rule: BL301, reason: waiting for H200s}
""", "2026-06-01", "--ignore", "BL504")
    assert _rules(report) == ["BL303"]


def test_clock_env_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.run.policy import today

    monkeypatch.setenv("BUDGETLINT_TODAY", "2030-02-03")
    assert today().isoformat() == "2030-02-03"
    monkeypatch.setenv("BUDGETLINT_TODAY", "soon")
    with pytest.raises(ValueError):
        today()


def test_report_with_suppressions_validates_against_the_report_schema(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    import jsonschema

    _, report = _run(tmp_path, monkeypatch, """\
    suppress:
      - {rule: BL303, reason: accepted, expires: 2027-01-31}
""")
    schema = json.loads((repo_root / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)
