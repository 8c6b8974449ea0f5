"""``markdown``: the job summary. A heading with the counts, one table row
per budget and promise (budget, promise, percentile, bound, measured,
headroom, owner, verdict), then the errors and warnings.

Numbers come from ``BudgetResult.promises`` (SI floats keyed like
``ttft_s``) and ``analysis`` (``bound_<key>``, ``measured_<key>``,
``realistic_<key>``, ``headroom_<promise>`` as a fraction; either the key
or the promise name is accepted); what is absent renders as ``—``. The
headroom is ``promise / estimate - 1`` (the Estimate column, at the
realistic efficiency), in the one rounding rule of
:func:`budgetlint.model.units.format_headroom`, as in every other format. A
segment's row names the segment's owner. The measured cell adds what the
evidence shows (``measured_<promise>_verdict``: met, not shown, missed), the
requests behind it and the count of run-quality problems. Cells are escaped for GitHub
tables. The whole output stays under ``limit`` bytes (GitHub's step summary
takes at most 1 MiB): rows that do not fit are replaced by a note.
"""

from __future__ import annotations

from budgetlint.findings import Finding, Severity
from budgetlint.report import BudgetResult, Report
from budgetlint.reporters.markdown_text import text
from budgetlint.reporters.wording import (
    TOOL_NAME,
    analysis_value,
    assumed_efficiency_words,
    calibration_words,
    cost_words,
    counts_phrase,
    plural,
    format_headroom_cell,
    format_quantity,
    promise_rows,
    row_owner,
    scope_phrase,
    estimate_value,
    judged,
    judged_headroom,
    measured_value,
    status_line,
)
from budgetlint.text import numbers

#: GitHub's limit for one step's summary
STEP_SUMMARY_LIMIT = 1024 * 1024
#: what render aims for by default: below the limit, with room to spare
DEFAULT_LIMIT = STEP_SUMMARY_LIMIT - 16 * 1024

VERDICTS: dict[str, str] = {
    "met": "✅ met",
    "at-risk": "⚠️ at risk",
    "cannot-be-met": "❌ cannot be met",
    "unknown": "❔ unknown",
    "not-shown": "❔ not shown",
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




def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def heading(report: Report) -> str:
    s = report.summary()
    mark = "❌" if s["errors"] else ("⚠️" if s["warnings"] else "✅")
    return f"## {mark} {TOOL_NAME}: {counts_phrase(report)} in {scope_phrase(report)}"


BUDGET_HEADER = ["Budget", "Promise", "Percentile", "Bound", "Estimate", "Measured", "Headroom", "Owner", "Verdict"]
FINDING_HEADER = ["Severity", "Rule", "Where", "Budget", "Message"]


#: the order of the budget table: what fails first, what is met last (folded)
VERDICT_ORDER = {"cannot-be-met": 0, "at-risk": 1, "unknown": 2}
MET = "met"


def budget_rows(budget: BudgetResult) -> list[str]:
    return [row for _, row in verdict_rows(budget)]


def verdict_rows(budget: BudgetResult) -> list[tuple[str, str]]:
    """(verdict, table row) per promise of ``budget``."""
    rows = []
    for p in promise_rows(budget):
        promise = p.name
        if p.value is not None:
            promise += f" {format_quantity(p.value, p.unit)}"
            if p.also:
                promise += f" ({p.also})"
        rows.append((p.verdict or "unknown",
            _row(
                [
                    text(budget.name),
                    text(promise),  # a segment row: "segment:<name>", the name from the files
                    cell(budget.percentile or "—"),
                    cell(format_quantity(analysis_value(budget, "bound", p), p.unit)),
                    cell(format_quantity(estimate_value(budget, p), p.unit)),
                    cell(measured_cell(budget, p)),
                    cell(format_headroom_cell(judged_headroom(budget, p))),
                    text(row_owner(budget, p)) if row_owner(budget, p) else "—",
                    cell(_verdict_cell(budget, p)),
                ]
            )
        ))
    return rows


def _verdict_cell(budget: BudgetResult, p) -> str:
    """``✅ met (simulated)``: the judged verdict and its basis (docs/judgement.md)."""
    word = VERDICTS.get(p.verdict or "", p.verdict or "—")
    basis = judged(budget, p).get("basis")
    return f"{word} ({basis})" if basis else word


def measured_cell(budget: BudgetResult, p) -> str:
    """The measured value, with what the evidence shows: ``380 ms (not shown, 300 requests)``."""
    text = format_quantity(measured_value(budget, p), p.unit)
    verdict = budget.analysis.get(f"measured_{p.name}_verdict")
    samples = budget.analysis.get(f"measured_{p.name}_samples")
    quality = sum(len(e.get("quality") or ()) for e in budget.analysis.get("evidence") or ()
                  if isinstance(e, dict) and e.get("counts"))
    notes = []
    if verdict:
        notes.append(str(verdict))
    if isinstance(samples, int):
        notes.append(f"{numbers.number(samples)} requests")
    if quality:
        notes.append(f"{quality} run-quality problem{'s' if quality != 1 else ''}")
    return f"{text} ({', '.join(notes)})" if notes and text != "—" else text


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
    """The job summary: the heading, then what fails (the findings, errors first; the
    promises not met, worst first), then the met promises folded in ``<details>``."""
    out = _Budgeted(limit)
    out.add(heading(report))
    out.add("")
    if report.summary()["budgets"]:
        out.add(status_line(report))
        out.add("")

    budgets = list(report.sorted_budgets())
    pairs = [pair for b in budgets for pair in verdict_rows(b)]
    failing = sorted((p for p in pairs if p[0] != MET), key=lambda p: VERDICT_ORDER.get(p[0], 3))  # stable
    met = [row for verdict, row in pairs if verdict == MET]
    problems = [f for f in report.sorted_findings() if f.severity >= Severity.WARNING]
    problems.sort(key=lambda f: -int(f.severity))  # stable: errors first, file order within

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
            out.add("")
        else:
            out.add("> [!NOTE]\n> The PR diff is not shown: the job summary is limited to 1 MiB. "
                    "The JSON output has it under \"diff\".")
    if not pairs:
        out.add("No budgets were checked.")
        out.add("")
    shown = 0
    for title, rows, folded in (
        (f"### Promises not met ({plural(len(failing), 'promise')})", [r for _, r in failing], False),
        (f"{plural(len(met), 'promise')} met", met, True),
    ):
        if not rows:
            continue
        if folded:
            out.add(f"<details><summary>{title}</summary>")
        else:
            out.add(title)
        out.add("")
        out.add(_row(BUDGET_HEADER))
        out.add(_row(["---"] * len(BUDGET_HEADER)))
        for row in rows:
            if not out.fits(row, _NOTE_RESERVE):
                out.add("")
                if folded:
                    out.add("</details>")
                    out.add("")
                out.add(
                    f"> [!NOTE]\n> {len(pairs) - shown} more budget rows are "
                    "not shown: the job summary is limited to 1 MiB. The SARIF or JSON output "
                    "has everything."
                )
                return "\n".join(out.lines) + "\n"
            out.add(row)
            shown += 1
        out.add("")
        if folded:
            out.add("</details>")
            out.add("")

    # the assumed efficiencies of the budgets estimated without a calibration, once per distinct
    # assumption (a repository has a few deployment classes, not one line per budget)
    assumed: dict[str, int] = {}
    for b in budgets:
        words = assumed_efficiency_words(b.analysis)
        if words and not calibration_words(b.analysis, b.percentile):
            assumed[words] = assumed.get(words, 0) + 1
    if assumed:
        section = ("### Assumed efficiency\n\n" + "\n".join(
            f"- {cell(w)}: {n} budget{'s' if n != 1 else ''}" for w, n in assumed.items()) + "\n")
        if out.fits(section, _NOTE_RESERVE):
            out.add(section)

    costs = [(b.name, cost_words(b.analysis)) for b in budgets]
    costs = [(n, w) for n, w in costs if w]
    if costs:  # docs/cost.md: USD per million output tokens, per request, J per token, on their basis
        section = "### Cost and energy\n\n" + "\n".join(f"- **{cell(n)}**: {cell(w)}" for n, w in costs) + "\n"
        if out.fits(section, _NOTE_RESERVE):
            out.add(section)

    pools = [(b.name, (b.analysis.get("disaggregated") or {}).get("summary")) for b in budgets]
    pools = [(n, w) for n, w in pools if w]
    if pools:  # a disaggregated deployment's pools (docs/topologies.md)
        section = "### Disaggregated pools\n\n" + "\n".join(f"- **{cell(n)}**: {cell(w)}" for n, w in pools) + "\n"
        if out.fits(section, _NOTE_RESERVE):
            out.add(section)

    calibrated = [(b.name, calibration_words(b.analysis, b.percentile)) for b in budgets]
    calibrated = [(n, w) for n, w in calibrated if w]
    if calibrated:
        section = "### Calibration\n\n" + "\n".join(f"- **{cell(n)}**: {cell(w)}" for n, w in calibrated) + "\n"
        if out.fits(section, _NOTE_RESERVE):
            out.add(section)

    return "\n".join(out.lines) + "\n"
