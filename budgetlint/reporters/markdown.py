"""``markdown``: the job summary. A heading with the counts, one table row
per budget and promise (budget, promise, percentile, bound, measured,
headroom, owner, verdict), then the errors and warnings.

Numbers come from ``BudgetResult.promises`` (SI floats keyed like
``ttft_s``) and ``analysis`` (``bound_<key>``, ``measured_<key>``,
``headroom_<promise>`` as a fraction; either the key or the promise name is
accepted); what is absent renders as ``—``. Cells are escaped for GitHub
tables. The whole output stays under ``limit`` bytes (GitHub's step summary
takes at most 1 MiB): rows that do not fit are replaced by a note.
"""

from __future__ import annotations

import re

from budgetlint.findings import Finding, Severity, printable_lines
from budgetlint.report import BudgetResult, Report
from budgetlint.reporters._common import (
    TOOL_NAME,
    analysis_value,
    counts_phrase,
    format_fraction,
    format_quantity,
    promise_rows,
    scope_phrase,
)

#: GitHub's limit for one step's summary
STEP_SUMMARY_LIMIT = 1024 * 1024
#: what render aims for by default: below the limit, with room to spare
DEFAULT_LIMIT = STEP_SUMMARY_LIMIT - 16 * 1024

VERDICTS: dict[str, str] = {
    "met": "✅ met",
    "at-risk": "⚠️ at risk",
    "cannot-be-met": "❌ cannot be met",
    "unknown": "❔ unknown",
}
SEVERITY_MARKS: dict[Severity, str] = {
    Severity.ERROR: "❌ error",
    Severity.WARNING: "⚠️ warning",
    Severity.INFO: "ℹ️ info",
}


def cell(text: object) -> str:
    """Our own text (which may hold markdown, such as a `code` span) made safe for one table cell."""
    s = "" if text is None else str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("\\", "\\\\").replace("|", "\\|")
    s = s.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")
    return s.strip() or " "


#: what makes markdown of text: links and images ([...](...), ![...](...)), code spans, emphasis
#: and the backslash itself; backslash-escaped they render as themselves (CommonMark 2.4).
#: <, > and & become entities (no HTML, no autolink), | is escaped for the table.
_MARKUP = re.compile(r"([\\`*_~\[\]])")
_SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*):(?=//)")
_WWW = re.compile(r"(?i)\b(www)\.")


def text(value: object) -> str:
    """Text taken from the files (names, paths, messages quoting them) as markdown *text*.

    A budget named ``[click](https://evil.example)`` or ``![x](https://tracker)``
    renders as those characters, not as a link or an image; control characters
    are written as escapes (``\\x1b``); newlines become ``<br>``; the result is
    safe in a table cell. For our own markup use :func:`cell`.
    """
    lines = printable_lines("" if value is None else str(value).replace("\r\n", "\n"))
    out = []
    for line in lines:
        line = _MARKUP.sub(r"\\\1", line)  # first: the entities below must stay entities
        line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
        # GitHub links bare URLs as it reads them ("https:", "www."): an entity is not read as one
        out.append(_WWW.sub(r"\1&#46;", _SCHEME.sub(r"\1&#58;", line)))
    return "<br>".join(out).strip() or " "


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def heading(report: Report) -> str:
    s = report.summary()
    mark = "❌" if s["errors"] else ("⚠️" if s["warnings"] else "✅")
    return f"## {mark} {TOOL_NAME}: {counts_phrase(report)} in {scope_phrase(report)}"


BUDGET_HEADER = ["Budget", "Promise", "Percentile", "Bound", "Measured", "Headroom", "Owner", "Verdict"]
FINDING_HEADER = ["Severity", "Rule", "Where", "Budget", "Message"]


def budget_rows(budget: BudgetResult) -> list[str]:
    rows = []
    for p in promise_rows(budget):
        promise = p.name
        if p.value is not None:
            promise += f" {format_quantity(p.value, p.unit)}"
            if p.also:
                promise += f" ({p.also})"
        rows.append(
            _row(
                [
                    text(budget.name),
                    cell(promise),
                    cell(budget.percentile or "—"),
                    cell(format_quantity(analysis_value(budget, "bound", p), p.unit)),
                    cell(format_quantity(analysis_value(budget, "measured", p), p.unit)),
                    cell(format_fraction(analysis_value(budget, "headroom", p))),
                    text(budget.owner) if budget.owner else "—",
                    cell(VERDICTS.get(p.verdict or "", p.verdict or "—")),
                ]
            )
        )
    return rows


def finding_row(finding: Finding) -> str:
    where = str(finding.location) if finding.location else "—"
    message = finding.message if not finding.fix else f"{finding.message}\nhelp: {finding.fix}"
    return _row(
        [
            cell(SEVERITY_MARKS[finding.severity]),
            cell(f"`{finding.rule}`"),
            text(where) if finding.location else "—",
            text(finding.budget) if finding.budget else "—",
            text(message),
        ]
    )


class _Budgeted:
    """Collects lines while staying under a byte budget."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines: list[str] = []
        self.size = 0

    def fits(self, line: str, reserve: int = 0) -> bool:
        return self.size + len(line.encode("utf-8")) + 1 + reserve <= self.limit

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line.encode("utf-8")) + 1


_NOTE_RESERVE = 512


def render(report: Report, *, color: bool = False, limit: int = DEFAULT_LIMIT) -> str:
    out = _Budgeted(limit)
    out.add(heading(report))
    out.add("")

    budgets = sorted(report.budgets, key=lambda b: (b.file, b.line, b.name))
    rows = [r for b in budgets for r in budget_rows(b)]
    problems = [f for f in report.sorted_findings() if f.severity >= Severity.WARNING]
    problems.sort(key=lambda f: -int(f.severity))  # stable: errors first, file order within

    if rows:
        out.add(_row(BUDGET_HEADER))
        out.add(_row(["---"] * len(BUDGET_HEADER)))
        for i, row in enumerate(rows):
            if not out.fits(row, _NOTE_RESERVE):
                out.add("")
                out.add(
                    f"> [!NOTE]\n> {len(rows) - i} more budget rows and {len(problems)} findings are "
                    "not shown: the job summary is limited to 1 MiB. The SARIF or JSON output "
                    "has everything."
                )
                return "\n".join(out.lines) + "\n"
            out.add(row)
        out.add("")
    else:
        out.add("No budgets were checked.")
        out.add("")

    if problems:
        out.add(f"### Findings ({counts_phrase(report)})")
        out.add("")
        out.add(_row(FINDING_HEADER))
        out.add(_row(["---"] * len(FINDING_HEADER)))
        for i, finding in enumerate(problems):
            row = finding_row(finding)
            if not out.fits(row, _NOTE_RESERVE):
                out.add("")
                out.add(
                    f"> [!NOTE]\n> {len(problems) - i} more findings are not shown: the job "
                    "summary is limited to 1 MiB. The SARIF or JSON output has all of them."
                )
                break
            out.add(row)
        out.add("")
    diff = getattr(report, "diff", None)
    if diff:
        from budgetlint.reporters.diff_markdown import render_diff

        section = render_diff(diff)
        if out.fits(section, _NOTE_RESERVE):
            out.add(section)
        else:
            out.add("> [!NOTE]\n> The PR diff is not shown: the job summary is limited to 1 MiB. "
                    "The JSON output has it under \"diff\".")
    return "\n".join(out.lines) + "\n"
