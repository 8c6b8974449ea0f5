"""The PR diff as a markdown section, for the job summary (``check --base REF``).

``render_diff(report.diff)`` returns a ``###`` heading and one table row per
change: budgets added or removed, promises loosened or tightened, headroom
that shrank, verdicts and owners that changed; regressions are marked. The
markdown reporter appends it when ``report.diff`` is set. Not an output format
of its own (it is not in ``REPORTERS``).
"""

from __future__ import annotations

from typing import Any

from budgetlint.text import numbers
from budgetlint.reporters.markdown_text import text

HEADER = ["Budget", "Change", "Before", "After", ""]
REGRESSION_MARK = "⚠️ regression"


def _cell(value: object) -> str:
    """Budget names, files and values as markdown text (no link, image or control byte gets through)."""
    return text(value)


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def diff_rows(diff: dict) -> list[list[Any]]:
    """The table rows, regressions first within each budget."""
    rows: list[list[Any]] = []
    for r in diff.get("removed", []):
        rows.append([r["name"], "budget removed", r.get("file"), "—", REGRESSION_MARK])
    for a in diff.get("added", []):
        rows.append([a["name"], "budget added", "—", a.get("file"), ""])
    for c in diff.get("changed", []):
        name = c["name"]
        items: list[tuple[bool, list[Any]]] = []
        for p in c.get("promises", []):
            items.append((p["regression"], [name, f"{p['promise']} promise {p['change']}",
                                             numbers.quantity(p["old"], _unit(p), absent="none"),
                                             numbers.quantity(p["new"], _unit(p), absent="none"),
                                             REGRESSION_MARK if p["regression"] else ""]))
        for h in c.get("headroom", []):
            gone = f" (−{numbers.percent(h['shrink'], absent='unbounded')} of it)" if h.get("shrink") is not None else ""
            items.append((h["regression"], [name, f"{h['promise']} headroom shrank{gone}",
                                             numbers.headroom(h["old"], absent="unbounded"), numbers.headroom(h["new"], absent="unbounded"),
                                             REGRESSION_MARK if h["regression"] else ""]))
        for v in c.get("verdicts", []):
            items.append((v["regression"], [name, f"{v['promise']} verdict {v['change']}",
                                             v["old"] or "—", v["new"] or "—",
                                             REGRESSION_MARK if v["regression"] else ""]))
        o = c.get("owner")
        if o:
            items.append((o["regression"], [name, f"owner {o['change']}", o["old"] or "—", o["new"] or "—",
                                             REGRESSION_MARK if o["regression"] else ""]))
        items.sort(key=lambda item: not item[0])
        rows.extend(row for _, row in items)
    return rows


def render_diff(diff: dict | None) -> str:
    """A markdown section (ending in a newline) for ``diff``; empty when there is none."""
    if not diff:
        return ""
    ref = diff.get("base") or "base"
    commit = diff.get("base_commit")
    against = _code(ref) + (f" ({_code(commit[:12])})" if commit else "")
    n = int(diff.get("regressions", 0))
    mark = "⚠️" if n else "✅"
    plural = "regression" if n == 1 else "regressions"
    lines = [f"### {mark} Changes against {against}: {n} {plural}", ""]
    rows = diff_rows(diff)
    if not rows:
        lines.append("No budget changed.")
        return "\n".join(lines) + "\n"
    threshold = diff.get("threshold") or 0
    if threshold:
        lines += [f"Headroom may shrink by {numbers.percent(threshold, absent='unbounded')} before it counts as a regression.", ""]
    lines.append(_row(HEADER))
    lines.append("| " + " | ".join(["---"] * len(HEADER)) + " |")
    lines += [_row(r) for r in rows]
    return "\n".join(lines) + "\n"


def _unit(p: dict) -> str:
    """A changed promise's unit: a cost promise is USD per token (docs/cost.md), the others times."""
    return "USD/token" if p.get("promise") == "cost" else "s"
