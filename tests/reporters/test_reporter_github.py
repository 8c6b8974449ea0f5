from __future__ import annotations

import re

import pytest

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import Report
from budgetlint.reporters import github

from reporter_fixtures import TRICKY, many_findings_report

# A small parser of workflow commands, as the runner reads them.
COMMAND = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<data>.*)$")


def unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return unescape_data(text.replace("%3A", ":").replace("%2C", ","))


def parse(line: str) -> tuple[str, dict[str, str], str] | None:
    m = COMMAND.match(line)
    if not m:
        return None
    props: dict[str, str] = {}
    if m["props"]:
        for pair in m["props"].split(","):
            key, _, value = pair.partition("=")
            props[key] = unescape_property(value)
    return m["name"], props, unescape_data(m["data"])


def commands(out: str) -> list[tuple[str, dict[str, str], str]]:
    parsed = [parse(line) for line in out.splitlines()]
    return [p for p in parsed if p is not None]


def test_each_finding_is_one_parseable_line(report: Report) -> None:
    out = github.render(report)
    lines = out.splitlines()
    cmds = commands(out)
    assert len(cmds) == len(report.findings)
    assert all("\n" not in line and "\r" not in line for line in lines)
    assert lines[-1] == "budgetlint: Found 3 errors, 2 warnings, 1 info in 5 files (2 budgets)."


def test_file_line_col_title_and_message_round_trip(report: Report) -> None:
    cmds = commands(github.render(report))
    kinds = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    expected = []
    for f in report.findings:
        props = {"title": f.rule}
        if f.location:
            props.update(file=f.location.file, line=str(f.location.line), col=str(f.location.column))
        message = f.message if not f.fix else f"{f.message}\nhelp: {f.fix}"
        expected.append((kinds[f.severity], props, message))
    def key(c: tuple[str, dict[str, str], str]) -> str:
        return repr((c[0], sorted(c[1].items()), c[2]))

    assert sorted(cmds, key=key) == sorted(expected, key=key)
    tricky = [c for c in cmds if c[1].get("title") == "BL003"][0]
    assert tricky[2] == TRICKY


def test_worst_first(report: Report) -> None:
    names = [c[0] for c in commands(github.render(report))]
    assert names == sorted(names, key=["error", "warning", "notice"].index)


@pytest.mark.parametrize(
    ("raw", "data", "prop"),
    [
        ("100%", "100%25", "100%25"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("a:b,c", "a:b,c", "a%3Ab%2Cc"),
        ("%0A", "%250A", "%250A"),
    ],
)
def test_escaping(raw: str, data: str, prop: str) -> None:
    assert github.escape_data(raw) == data
    assert github.escape_property(raw) == prop
    assert unescape_data(github.escape_data(raw)) == raw
    assert unescape_property(github.escape_property(raw)) == raw


def test_properties_with_colons_and_commas_are_escaped() -> None:
    f = Finding("BL002", Severity.WARNING, "m", Location("odd,dir/a:b.yaml", 2, 3))
    line = github.annotation(f)
    assert line == "::warning file=odd%2Cdir/a%3Ab.yaml,line=2,col=3,title=BL002::m"
    assert parse(line) == ("warning", {"file": "odd,dir/a:b.yaml", "line": "2", "col": "3", "title": "BL002"}, "m")


def test_at_most_ten_of_each_kind_then_a_notice() -> None:
    report = many_findings_report(errors=13, warnings=11, infos=4)
    cmds = commands(github.render(report))
    names = [c[0] for c in cmds]
    assert names.count("error") == 10
    assert names.count("warning") == 10
    assert names.count("notice") == 5  # 4 infos + the closing notice
    last = cmds[-1]
    assert last[0] == "notice"
    assert "4 more findings were not annotated (3 errors, 1 warning)" in last[2]
    assert "job summary" in last[2] and "SARIF" in last[2]
    # worst first within a kind: the first errors in file order are the ones shown
    shown = [c for c in cmds if c[0] == "error"]
    assert [c[2] for c in shown] == [
        f.message for f in sorted([f for f in report.findings if f.severity == Severity.ERROR], key=Finding.sort_key)
    ][:10]


def test_notice_leaves_room_for_itself() -> None:
    cmds = commands(github.render(many_findings_report(errors=0, warnings=0, infos=25)))
    names = [c[0] for c in cmds]
    assert names.count("notice") == 10  # GitHub's limit, the closing notice included
    assert "16 more findings were not annotated (16 notices)" in cmds[-1][2]


def test_no_notice_when_nothing_was_left_out() -> None:
    cmds = commands(github.render(many_findings_report(errors=10, warnings=10, infos=10)))
    assert len(cmds) == 30
    assert not any("more" in c[2] for c in cmds)


def test_clean_report_prints_only_the_summary() -> None:
    assert github.render(Report(files=["a.yaml"])) == "budgetlint: No problems found in 1 file (0 budgets).\n"
