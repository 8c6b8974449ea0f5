"""``github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=F,line=L,col=C,title=CODE::message`` (``warning``, ``notice``
for infos). GitHub shows at most 10 error, 10 warning and 10 notice
annotations per step and drops the rest silently, so the worst are printed
first, at most 10 of each kind, and a last ``::notice`` says how many were
left out (it takes one of the 10 notice places). A plain summary line closes
the output for the log.

Escaping follows the runner: data escapes ``%``, CR and LF; property values
additionally escape ``:`` and ``,``.
"""

from __future__ import annotations

from budgetlint.findings import Finding, Severity
from budgetlint.report import Report
from budgetlint.reporters.wording import TOOL_NAME, plural, summary_line, worst_first

#: annotations GitHub shows per step, per kind
PER_KIND_LIMIT = 10

COMMANDS: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """One workflow command line; properties with value None are left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(finding: Finding) -> str:
    loc = finding.location
    message = finding.message if not finding.fix else f"{finding.message}\nhelp: {finding.fix}"
    return command(
        COMMANDS[finding.severity],
        message,
        file=loc.file.replace("\\", "/") if loc else None,
        line=loc.line if loc else None,
        col=loc.column if loc else None,
        title=finding.rule,
    )


def render(report: Report, *, color: bool = False) -> str:
    ordered = worst_first(report.sorted_findings())
    by_kind: dict[Severity, list[Finding]] = {s: [] for s in Severity}
    for finding in ordered:
        by_kind[finding.severity].append(finding)

    truncated = any(len(v) > PER_KIND_LIMIT for v in by_kind.values())
    limits = {s: PER_KIND_LIMIT for s in Severity}
    if truncated:
        limits[Severity.INFO] = PER_KIND_LIMIT - 1  # room for our closing notice

    lines: list[str] = []
    left_out: dict[Severity, int] = {}
    for severity in sorted(Severity, reverse=True):
        shown = by_kind[severity][: limits[severity]]
        lines.extend(annotation(f) for f in shown)
        if len(by_kind[severity]) > len(shown):
            left_out[severity] = len(by_kind[severity]) - len(shown)

    if left_out:
        total = sum(left_out.values())
        detail = ", ".join(
            plural(n, {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}[s])
            for s, n in sorted(left_out.items(), reverse=True)
        )
        lines.append(
            command(
                "notice",
                f"{total} more {'finding was' if total == 1 else 'findings were'} not annotated "
                f"({detail}): GitHub shows at most {PER_KIND_LIMIT} annotations of each kind per "
                "step. See the job summary or the SARIF results for all of them.",
                title=f"{TOOL_NAME}: {total} more",
            )
        )
    lines.append(f"{TOOL_NAME}: {summary_line(report)}")
    return "\n".join(lines) + "\n"
