"""The default, human format: ``path:line:col: CODE severity: message``.

One line per finding (the prefix editors and CI problem matchers parse),
grouped by file with a blank line between files, a ``help:`` line under a
finding that carries a fix, and a closing summary line. Findings without a
location start with ``budgetlint:`` instead of a path. Colour (ANSI, made by
``click.style``) only when ``color=True``: the CLI decides (``--color``,
``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb``, the TTY; never into a file).
"""

from __future__ import annotations

from typing import Iterator

from budgetlint.findings import Finding, Severity, printable_lines
from budgetlint.report import Report
from budgetlint.reporters.wording import TOOL_NAME, summary_line

_BOLD: dict = {"bold": True}
_SEVERITY_COLOR: dict[Severity, dict] = {
    Severity.ERROR: {"fg": "red", "bold": True},
    Severity.WARNING: {"fg": "yellow", "bold": True},
    Severity.INFO: {"fg": "cyan", "bold": True},
}
_HELP: dict = {"fg": "green"}


def _paint(text: str, style: dict, color: bool) -> str:
    if not (color and text):
        return text
    import click

    return click.style(text, **style)


def format_finding(finding: Finding, *, color: bool = False) -> list[str]:
    """The lines for one finding (its first line is the parseable one)."""
    loc = finding.location
    where = str(loc) if loc else TOOL_NAME  # the file name with its control characters escaped
    first, *rest = printable_lines(finding.message) or [""]
    head = (
        f"{_paint(where, _BOLD, color)}: {_paint(finding.rule, _BOLD, color)} "
        f"{_paint(finding.severity.label, _SEVERITY_COLOR[finding.severity], color)}: {first}"
    )
    lines = [head]
    lines.extend(f"    {line}" for line in rest)
    if finding.fix:
        fix_first, *fix_rest = printable_lines(finding.fix) or [""]
        lines.append(f"    {_paint('help', _HELP, color)}: {fix_first}")
        lines.extend(f"          {line}" for line in fix_rest)
    return lines


def chunks(report: Report, *, color: bool = False) -> Iterator[str]:
    """The output in pieces, a finding at a time (the CLI writes them as made)."""
    current: str | None = None
    any_finding = False
    for finding in report.sorted_findings():
        group = finding.location.file if finding.location else ""
        if current is not None and group != current:
            yield "\n"
        current = group
        any_finding = True
        yield "".join(line + "\n" for line in format_finding(finding, color=color))
    if any_finding:
        yield "\n"
    summary = summary_line(report)
    s = report.summary()
    if color:
        if s["errors"]:
            summary = _paint(summary, _SEVERITY_COLOR[Severity.ERROR], True)
        elif s["warnings"]:
            summary = _paint(summary, _SEVERITY_COLOR[Severity.WARNING], True)
        else:
            summary = _paint(summary, _BOLD, True)
    yield summary + "\n"


def render(report: Report, *, color: bool = False) -> str:
    return "".join(chunks(report, color=color))
