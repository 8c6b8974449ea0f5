"""The sticky pull-request comment (the Action's ``comment: true``), rendered from a JSON report.

``render_comment(data, marker)`` turns the JSON report (``Report.as_dict()``,
read back from the file the Action wrote) into one markdown comment, in the
order size-limit and Lighthouse CI use:

1. a heading with the counts, and the diff against the base when ``--base``
   was given (how many regressions);
2. the errors and warnings, errors first (at most ``FINDINGS_SHOWN``);
3. each promise whose judged value or verdict changed against the base, with
   its value before and after, its headroom and its verdict; promises not met
   first;
4. the promises not met (without a diff: every one; with one: those that did
   not change);
5. the budgets whose promises are all met, folded in ``<details>``.

The ``marker`` (an HTML comment, invisible on GitHub) starts the body: the
poster (:mod:`budgetlint.github_comment`) finds the comment it wrote before
by it and edits that one. The body stays under GitHub's 65,536 characters.
Not an output format of its own (it is not in ``REPORTERS``).
"""

from __future__ import annotations

from typing import Any

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import BudgetResult
from budgetlint.reporters.wording import (
    TOOL_NAME,
    format_headroom_cell,
    format_quantity,
    plural,
)
from budgetlint.reporters.markdown import (
    BUDGET_HEADER,
    MET,
    VERDICT_ORDER,
    VERDICTS,
    cell,
    finding_row,
    FINDING_HEADER,
    verdict_rows,
)
from budgetlint.reporters.markdown_text import text

#: GitHub refuses a comment body longer than this (characters)
COMMENT_LIMIT = 65536
#: what render aims for, with room for the notes
_LIMIT = COMMENT_LIMIT - 2048
FINDINGS_SHOWN = 20
CHANGE_HEADER = ["Budget", "Promise", "Before", "After", "Headroom", "Verdict"]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _budget(b: dict) -> BudgetResult:
    return BudgetResult(name=str(b.get("name", "")), file=str(b.get("file", "")), line=int(b.get("line") or 0),
                        owner=b.get("owner"), percentile=b.get("percentile"),
                        promises=dict(b.get("promises") or {}), analysis=dict(b.get("analysis") or {}),
                        verdicts=dict(b.get("verdicts") or {}), judgement=dict(b.get("judgement") or {}),
                        status=b.get("status"))


def _finding(f: dict) -> Finding:
    loc = Location(f["file"], int(f.get("line") or 0), int(f.get("column") or 0)) if f.get("file") else None
    return Finding(str(f.get("rule", "")), Severity.parse(str(f.get("severity", "info"))), str(f.get("message", "")),
                   loc, budget=f.get("budget"), promise=f.get("promise"), fix=f.get("fix"))


def _verdict(v: str | None) -> str:
    return VERDICTS.get(v or "", v or "—")


def _transition(old: str | None, new: str | None) -> str:
    return _verdict(new) if old == new else f"{_verdict(old)} → {_verdict(new)}"


def _headroom(old: float | None, new: float | None) -> str:
    a, b = format_headroom_cell(old), format_headroom_cell(new)
    return b if a == b else f"{a} → {b}"


def change_rows(diff: dict | None) -> list[tuple[str, str]]:
    """(new verdict, row) per promise whose judged value or verdict changed, not met first."""
    rows = []
    for c in (diff or {}).get("changed", []):
        for v in c.get("values", []):
            promise = v["promise"]
            if v.get("promised") is not None:
                promise += f" {format_quantity(v['promised'], v.get('unit', ''))}"
            def value(x: Any, basis: Any) -> str:
                shown = format_quantity(x, v.get("unit", ""))
                return f"{shown} ({basis})" if basis and shown != "—" else shown

            rows.append((v.get("verdict_new") or "unknown", _row([
                text(c["name"]), cell(promise),
                cell(value(v.get("old"), v.get("basis_old"))),
                cell(value(v.get("new"), v.get("basis_new"))),
                cell(_headroom(v.get("headroom_old"), v.get("headroom_new"))),
                cell(_transition(v.get("verdict_old"), v.get("verdict_new"))),
            ])))
    rows.sort(key=lambda r: VERDICT_ORDER.get(r[0], 3) if r[0] != MET else 9)  # stable
    return rows


def render_comment(data: dict, marker: str) -> str:
    """The comment's markdown for the JSON report ``data``, starting with ``marker``."""
    budgets = [_budget(b) for b in data.get("budgets") or []]
    findings = [_finding(f) for f in data.get("findings") or []]
    s = data.get("summary") or {}
    diff = data.get("diff")
    errors, warnings = int(s.get("errors") or 0), int(s.get("warnings") or 0)
    mark = "❌" if errors else ("⚠️" if warnings else "✅")
    scope = f"{plural(int(s.get('files') or 0), 'file')} ({plural(len(budgets), 'budget')})"
    lines = [marker, f"## {mark} {TOOL_NAME}: {plural(errors, 'error')}, {plural(warnings, 'warning')} in {scope}", ""]
    if diff:
        n = int(diff.get("regressions") or 0)
        commit = diff.get("base_commit")
        against = f"`{text(diff.get('base') or 'base')}`" + (f" (`{commit[:12]}`)" if commit else "")
        lines += [f"Against {against}: {plural(n, 'regression')}.", ""]

    problems = sorted((f for f in findings if f.severity >= Severity.WARNING), key=lambda f: -int(f.severity))
    if problems:
        lines += [f"### Findings ({plural(errors, 'error')}, {plural(warnings, 'warning')})", "",
                  _row(FINDING_HEADER), _row(["---"] * len(FINDING_HEADER))]
        lines += [finding_row(f) for f in problems[:FINDINGS_SHOWN]]
        if len(problems) > FINDINGS_SHOWN:
            lines += ["", f"{len(problems) - FINDINGS_SHOWN} more in the job summary."]
        lines.append("")

    changed = change_rows(diff)
    changed_names = {c["name"] for c in (diff or {}).get("changed", []) if c.get("values")}
    if changed:
        lines += [f"### Changed against the base ({plural(len(changed), 'promise')})", "",
                  "The judged value (on its basis: measured, simulated, calibrated or the estimate; "
                "docs/judgement.md) before and after this change.", "",
                  _row(CHANGE_HEADER), _row(["---"] * len(CHANGE_HEADER))]
        lines += [row for _, row in changed]
        lines.append("")

    failing: list[tuple[str, str]] = []
    met_budgets: list[BudgetResult] = []
    for b in budgets:
        pairs = verdict_rows(b)
        if pairs and all(v == MET for v, _ in pairs):
            met_budgets.append(b)
        elif b.name not in changed_names:
            failing += [(v, r) for v, r in pairs if v != MET]
    failing.sort(key=lambda p: VERDICT_ORDER.get(p[0], 3))
    if failing:
        title = "Promises not met" if not changed else "Other promises not met"
        lines += [f"### {title} ({plural(len(failing), 'promise')})", "",
                  _row(BUDGET_HEADER), _row(["---"] * len(BUDGET_HEADER))]
        lines += [r for _, r in failing]
        lines.append("")
    if met_budgets:
        lines += [f"<details><summary>{plural(len(met_budgets), 'budget')} with every promise met</summary>", "",
                  _row(BUDGET_HEADER), _row(["---"] * len(BUDGET_HEADER))]
        lines += [r for b in met_budgets for _, r in verdict_rows(b)]
        lines += ["", "</details>", ""]
    if not budgets:
        lines += ["No budgets were checked.", ""]
    return _fit("\n".join(lines) + "\n")


def _fit(body: str) -> str:
    """``body`` cut at a line boundary to GitHub's limit, with a note (``</details>`` closed)."""
    if len(body) <= _LIMIT:
        return body
    head = body[:_LIMIT]
    head = head[: head.rfind("\n") + 1]
    if head.count("<details>") > head.count("</details>"):
        head += "\n</details>\n"
    return head + ("\n> [!NOTE]\n> The comment was cut here: GitHub takes at most 65,536 characters. "
                   "The job summary and the HTML report have everything.\n")

