"""Issue 18 point 9: one date parser, one verdict.

``expires: "20991231"`` was refused by the schema as a date (BL003), yet the
suppression still applied (Python 3.11's ``date.fromisoformat`` reads ISO
8601's basic form). The schema's ``format: date`` and the suppression now
share ``budgetlint.files.dates.parse_date``: what the schema refuses never
applies, and what applies the schema accepts.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from budgetlint.files.dates import parse_date

from hardening_bounds import assert_bounded, run_bounded

UNOWNED = """version: 1
kind: budgets
budgets:
  - name: chat
    percentile: p95
    workload: {{prompt_tokens: 1000, output_tokens: 200}}
    promise: {{ttft: 2 s}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm}}
    suppress:
      - rule: BL101
        reason: the chat team takes it over next quarter
        expires: {expires}
"""


@pytest.mark.parametrize("expires", ['"20991231"', '"2099-W52-1"', '"2099-12-31 "', '"2099-12-31T00:00"',
                                     '"２０９９-１２-３１"', '"2099-02-30"', '20991231'])
def test_a_date_the_schema_refuses_does_not_apply(tmp_path: Path, expires: str) -> None:
    (tmp_path / "b.yaml").write_text(UNOWNED.format(expires=expires))
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path,
                      env={"BUDGETLINT_TODAY": "2026-06-01"})
    assert_bounded(run, names="b.yaml:12", codes=(1,), rule="BL003")
    assert "BL101" in run.stdout, run.stdout  # the finding it meant to hide is still reported


def test_a_valid_date_still_applies_and_expires(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(UNOWNED.format(expires='"2099-12-31"'))
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path,
                      env={"BUDGETLINT_TODAY": "2026-06-01"})
    assert run.returncode == 0 and "BL101" not in run.stdout and "BL003" not in run.stdout, run.stdout
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path,
                      env={"BUDGETLINT_TODAY": "2100-01-01"})
    assert "BL503" in run.stdout and "expired on 2099-12-31 (1 day ago)" in run.stdout, run.stdout


@pytest.mark.parametrize(("text", "date"), [("2099-12-31", dt.date(2099, 12, 31)), ("2024-02-29", dt.date(2024, 2, 29)),
                                            ("2023-02-29", None), ("20991231", None), ("2099-12-31 ", None),
                                            (" 2099-12-31", None), ("99-12-31", None), (20991231, None)])
def test_parse_date(text: object, date: dt.date | None) -> None:
    assert parse_date(text) == date
