"""Past reports for the headroom-over-commits chart (``check --history FILE``).

``FILE`` holds JSON lines: one JSON report per line (``budgetlint check
--format json``, compacted to one line, e.g. ``jq -c . report.json >>
history.jsonl`` in CI, kept as an artifact), oldest first. A line may also be
``{"commit": "...", "report": {...}}``; otherwise the label of a line is its
report's ``commit``, ``ref`` or ``label`` key when it has one, else its line
number. Blank lines are skipped.

What is kept per line is small: per budget, the headroom of each promise
(``analysis.headroom_<promise>``) and its verdict. The last
:data:`MAX_ENTRIES` lines are kept; a file over :data:`MAX_BYTES` or a line
that is not a JSON report is bad input (``file:line:column``, exit 2).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from budgetlint.files import InputError
from budgetlint.text import numbers

MAX_BYTES = 256 * 1024 * 1024
MAX_ENTRIES = 200


class HistoryError(InputError):
    """A --history file that cannot be read as JSON lines of reports: exit 2."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _entry(data: Any, lineno: int) -> dict | None:
    if isinstance(data, dict) and isinstance(data.get("report"), dict):
        label, report = data.get("commit") or data.get("label") or data.get("ref"), data["report"]
    else:
        report = data
        label = report.get("commit") or report.get("ref") or report.get("label") if isinstance(report, dict) else None
    if not isinstance(report, dict) or not isinstance(report.get("budgets"), list):
        return None
    budgets: dict[str, dict] = {}
    for b in report["budgets"]:
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            continue
        analysis = b.get("analysis") if isinstance(b.get("analysis"), dict) else {}
        headroom = {k[len("headroom_"):]: float(v) for k, v in analysis.items()
                    if isinstance(k, str) and k.startswith("headroom_") and isinstance(v, (int, float))
                    and not isinstance(v, bool) and math.isfinite(v)}
        # the judged headroom (budgets[].judgement, what every output shows) wins where there is one
        judgement = b.get("judgement") if isinstance(b.get("judgement"), dict) else {}
        for promise, j in judgement.items():
            v = j.get("headroom") if isinstance(j, dict) else None
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                headroom[str(promise)] = float(v)
        verdicts = {k: v for k, v in (b.get("verdicts") or {}).items() if isinstance(v, str)} \
            if isinstance(b.get("verdicts"), dict) else {}
        budgets[b["name"]] = {"headroom": headroom, "verdicts": verdicts}
    return {"label": str(label)[:80] if label else f"line {lineno}", "budgets": budgets}


def read_history(path: str) -> list[dict]:
    """The entries of ``path``, oldest first: ``{"label", "budgets": {name: {"headroom", "verdicts"}}}``."""
    import io

    from budgetlint.files import fs

    entries: list[dict] = []
    read = 0
    try:
        # a regular file of at most MAX_BYTES, opened without blocking (a named pipe waited for a writer for
        # ever, a link to /dev/zero was one line without end), and read no further than that as it streams
        with io.TextIOWrapper(fs.open_regular(Path(path), MAX_BYTES), encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                read += len(line)
                if read > MAX_BYTES:  # grew while read (its size was checked when opened)
                    raise fs.TooLarge(read, MAX_BYTES)
                if not line.strip():
                    continue
                try:
                    data = json.loads(line, parse_constant=_reject_constant)
                except ValueError as exc:
                    col = min(getattr(exc, "pos", 0), len(line.rstrip("\r\n"))) + 1
                    msg = getattr(exc, "msg", str(exc))
                    raise HistoryError(f"{path}:{lineno}:{col}: expected one JSON report per line "
                                       f"(budgetlint check --format json, on one line); found: {msg}") from None
                entry = _entry(data, lineno)
                if entry is None:
                    raise HistoryError(f"{path}:{lineno}:1: expected a JSON report (an object with "
                                       f"\"budgets\": [...]) or {{\"commit\": ..., \"report\": {{...}}}}; "
                                       f"found {type(data).__name__}")
                entries.append(entry)
                if len(entries) > MAX_ENTRIES:
                    entries.pop(0)
    except UnicodeDecodeError as exc:
        raise HistoryError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except fs.NotRegular as exc:
        raise HistoryError(f"--history {path}: {exc.kind}, not a regular file; name a file of JSON reports") from None
    except fs.TooLarge as exc:
        raise HistoryError(f"{path}: --history file of {numbers.number(exc.size)} bytes; at most "
                           f"{numbers.number(MAX_BYTES)} are read (keep the last reports only)") from None
    except OSError as exc:
        raise HistoryError(f"--history {path}: {exc.strerror or exc}") from None
    return entries
