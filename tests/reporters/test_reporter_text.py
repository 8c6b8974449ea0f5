from __future__ import annotations

import re

import click

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import Report
from budgetlint.reporters.text import render

LINE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<code>BL\d{3}) (?P<sev>error|warning|info): (?P<msg>.*)$")


def test_lines_parse_as_path_line_col_code(report: Report) -> None:
    out = render(report)
    parsed = [m.groupdict() for m in map(LINE.match, out.splitlines()) if m]
    located = [f for f in report.findings if f.location]
    assert len(parsed) == len(located)
    assert {(p["file"], int(p["line"]), int(p["col"]), p["code"], p["sev"]) for p in parsed} == {
        (f.location.file, f.location.line, f.location.column, f.rule, f.severity.label) for f in located  # type: ignore[union-attr]
    }


def test_grouped_by_file_with_blank_lines_between(report: Report) -> None:
    out = render(report)
    blocks = out.rstrip("\n").split("\n\n")
    # unlocated, batch.yml, chat.yaml, notes.yaml, dir with space, summary
    assert len(blocks) == 6
    assert blocks[0].startswith("budgetlint: BL010 error: cannot read")
    assert blocks[2].splitlines()[0].startswith("budgets/chat.yaml:9:3: BL003 error: 100% of 3,350 GB/s")


def test_multiline_message_and_fix_are_indented(report: Report) -> None:
    out = render(report)
    assert "\n    second line <b>&</b>\n" in out
    assert "BL301 error: tpot 50 ms cannot be met" in out
    assert "\n    help: use 2 devices, or fp8 weights\n" in out


def test_summary_line(report: Report) -> None:
    assert render(report).splitlines()[-1] == "Found 3 errors, 2 warnings, 1 info in 5 files (2 budgets)."
    one = Report(files=["a.yaml"], findings=[Finding("BL003", Severity.WARNING, "m", Location("a.yaml", 1, 1))])
    assert render(one).splitlines()[-1] == "Found 0 errors, 1 warning in 1 file (0 budgets)."
    assert render(Report(files=["a.yaml"])) == "No problems found in 1 file (0 budgets).\n"


def test_colour_only_when_asked(report: Report) -> None:
    plain = render(report)
    coloured = render(report, color=True)
    assert "\x1b[" not in plain
    assert click.style("error", fg="red", bold=True) in coloured  # click's own styling
    assert click.style("warning", fg="yellow", bold=True) in coloured
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert stripped == plain
