"""``sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

- ``tool.driver``: name, version, informationUri and ``rules[]`` (every
  registered rule: id, name, short and full description, help text and
  markdown from the rule's docs, default level).
- One result per located finding: ruleId, ruleIndex, level
  (error/warning/note), message, a physical location (repo-relative uri with
  forward slashes, ``uriBaseId: %SRCROOT%``, startLine/startColumn) and
  ``partialFingerprints`` that survive a number in the message changing.
- Findings without a location cannot be results (code scanning rejects a
  result without a location), so they go to
  ``invocations[0].toolExecutionNotifications``.
- At most 25,000 results (GitHub's limit per run): the worst are kept and the
  rest counted in a notification and ``run.properties``.
- Information findings (a met promise and its headroom) are left out by
  default: code scanning turns every result into an alert, and a met promise
  is not one. Their count is in ``run.properties.informationLeftOut``;
  ``include_info=True`` (``check --sarif-info``) adds them at level ``note``.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Iterator
from urllib.parse import quote

from budgetlint import __version__
from budgetlint.findings import Finding, Severity
from budgetlint.model.units import format_headroom
from budgetlint.report import Report
from budgetlint.reporters.wording import INFORMATION_URI, TOOL_NAME, without_numbers, worst_first
from budgetlint.reporters.json_stream import Lazy
from budgetlint.reporters.json_stream import chunks as json_chunks

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
MAX_RESULTS = 25_000
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "budgetlint/v1"

LEVELS: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
}

_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[\\/]")


def artifact_location(path: str) -> dict[str, str]:
    """A SARIF artifactLocation: repo-relative uri under %SRCROOT% with forward
    slashes (absolute paths become file: URIs without a base)."""
    if _WINDOWS_ABS.match(path):
        return {"uri": PureWindowsPath(path).as_uri()}
    posix = path.replace("\\", "/")
    if posix.startswith("/"):
        return {"uri": PurePosixPath(posix).as_uri()}
    while posix.startswith("./"):
        posix = posix[2:]
    return {"uri": quote(posix, safe="/-._~!$&'()*+,;=@"), "uriBaseId": SRCROOT}


def fingerprint(finding: Finding) -> str:
    """Stable across runs: rule, file, budget, promise and the message with its
    numbers masked, so that a re-measured number keeps the alert's identity."""
    loc = finding.location
    parts = [
        finding.rule,
        (loc.file.replace("\\", "/") if loc else ""),
        finding.budget or "",
        finding.promise or "",
        " ".join(without_numbers(finding.message).split()),
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def _rule_descriptor(code: str) -> dict[str, Any]:
    from budgetlint.rules import get_rule

    rule = get_rule(code)
    if rule is None:
        return {
            "id": code,
            "shortDescription": {"text": code},
            "fullDescription": {"text": code},
            "help": {"text": code, "markdown": code},
            "defaultConfiguration": {"level": "warning"},
        }
    checks = rule.section("What it checks") or rule.summary
    why = rule.section("Why")
    full = checks if not why else f"{checks}\n\n{why}"
    markdown = f"# {rule.code} {rule.name}\n\n{rule.doc}"
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": _markdown_to_text(rule.doc), "markdown": markdown},
        "helpUri": rule_doc_uri(rule.code),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["latency-budget", _block_tag(rule.code)]},
    }


def rule_doc_uri(code: str) -> str:
    """The rule's documentation page (docs/rules/BLNNN.md, generated from the rule's module:
    ``python -m budgetlint.rules.docs``)."""
    return f"{INFORMATION_URI}/blob/main/docs/rules/{code}.md"


def _block_tag(code: str) -> str:
    blocks = {
        "0": "input",
        "1": "ownership",
        "2": "budget-arithmetic",
        "3": "roofline",
        "4": "measurements",
        "5": "configuration",
    }
    digit = code[2:3] if code.upper().startswith("BL") else ""
    return blocks.get(digit, "other")


def _markdown_to_text(doc: str) -> str:
    """The rule doc as plain text: headings lose their ``#``, fences go."""
    out = []
    for line in doc.splitlines():
        if line.startswith("```"):
            continue
        out.append(line.lstrip("#").strip() if line.startswith("#") else line)
    return "\n".join(out).strip()


def _all_rule_codes(report: Report) -> list[str]:
    from budgetlint.rules import all_rules

    codes = [r.code for r in all_rules()]
    known = set(codes)
    seen = {f.rule for f in report.sorted_findings()}
    seen |= {item.finding.rule for item in getattr(report, "suppressed", None) or [] if hasattr(item, "finding")}
    extra = sorted(seen - known)
    return codes + extra


def _headrooms(report: Report) -> dict[tuple[str, str], Any]:
    """(budget, promise) -> the judgement's headroom, verdict and basis (docs/judgement.md);
    ``analysis["headroom_<promise>"]`` where a budget has no judgement."""
    out: dict[tuple[str, str], Any] = {}
    for b in report.sorted_budgets():
        if b.judgement:
            for name, j in b.judgement.items():
                out[(b.name, name)] = j
            continue
        for key, value in b.analysis.items():
            if isinstance(key, str) and key.startswith("headroom_") and isinstance(value, (int, float)) \
                    and math.isfinite(value):
                out[(b.name, key[len("headroom_"):])] = float(value)
    return out


def build(report: Report, *, lazy: bool = False, include_info: bool = False) -> dict[str, Any]:
    """The SARIF log as a dict; with ``lazy``, ``results`` is a
    :class:`~budgetlint.reporters.json_stream.Lazy` built while it is written.
    Information findings are in it only with ``include_info`` (as ``note``)."""
    codes = _all_rule_codes(report)
    rules = [_rule_descriptor(code) for code in codes]
    index = {code: i for i, code in enumerate(codes)}

    shown = [f for f in report.sorted_findings() if include_info or f.severity > Severity.INFO]
    info_left_out = sum(report.count(s) for s in Severity) - len(shown)
    located = [f for f in shown if f.location is not None]
    unlocated = [f for f in shown if f.location is None]
    omitted = 0
    if len(located) > MAX_RESULTS:
        keep = set(map(id, worst_first(located)[:MAX_RESULTS]))
        omitted = len(located) - MAX_RESULTS
        located = [f for f in located if id(f) in keep]

    suppressed = [item for item in list(getattr(report, "suppressed", None) or [])[: max(MAX_RESULTS - len(located), 0)]
                  if getattr(item, "finding", None) is not None and item.finding.location is not None
                  and item.finding.rule in index and (include_info or item.finding.severity > Severity.INFO)]

    rooms = _headrooms(report)

    def results() -> Iterator[dict[str, Any]]:
        seen: dict[str, int] = {}
        for finding in located:
            fp = fingerprint(finding)
            n = seen.get(fp, 0)
            seen[fp] = n + 1
            result = _result(finding, index[finding.rule], fp if n == 0 else f"{fp}:{n}")
            room = rooms.get((finding.budget, "tpot" if finding.promise == "pace" else finding.promise))
            if isinstance(room, dict):  # the judged verdict, its basis and its headroom
                props = result.setdefault("properties", {})
                props.update(verdict=room.get("verdict"), basis=room.get("basis"))
                room = room.get("headroom")
                if not isinstance(room, (int, float)) or not math.isfinite(room):
                    room = None
            if room is not None:  # the one headroom, as the JSON fraction and as every format prints it
                result.setdefault("properties", {}).update(headroom=room, headroomText=format_headroom(room))
            yield result
        # findings a budget suppressed (with a reason): results marked as
        # suppressed in source, so code scanning shows them as dismissed
        for item in suppressed:
            finding = item.finding
            result = _result(finding, index[finding.rule], fingerprint(finding))
            suppression: dict[str, Any] = {
                "kind": "inSource",
                "status": "accepted",
                "justification": str(getattr(item, "reason", "") or ""),
            }
            expires = getattr(item, "expires", None)
            if expires:
                suppression["properties"] = {"expires": str(expires)}
            result["suppressions"] = [suppression]
            yield result

    notifications = [
        {
            "level": LEVELS[f.severity],
            "message": {"text": f"{f.rule}: {f.message}"},
            "descriptor": {"id": f.rule, "index": index[f.rule]},
            "associatedRule": {"id": f.rule, "index": index[f.rule]},
        }
        for f in unlocated
    ]
    if omitted:
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{omitted} more results were left out: code scanning accepts at "
                    f"most {MAX_RESULTS} per run (the worst were kept)."
                },
            }
        )

    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": notifications,
            }
        ],
        "columnKind": "unicodeCodePoints",
        "results": Lazy(results()) if lazy else list(results()),
        "properties": {"summary": report.summary(), "omittedResults": omitted,
                       "informationLeftOut": info_left_out},
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _result(finding: Finding, rule_index: int, fp: str) -> dict[str, Any]:
    loc = finding.location
    assert loc is not None
    text = finding.message if not finding.fix else f"{finding.message}\nFix: {finding.fix}"
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(loc.file),
                    "region": {"startLine": max(1, loc.line), "startColumn": max(1, loc.column)},
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fp},
    }
    props = {k: v for k, v in (("budget", finding.budget), ("promise", finding.promise)) if v}
    if props:
        result["properties"] = props
    return result


def chunks(report: Report, *, color: bool = False, include_info: bool = False) -> Iterator[str]:
    """The log in pieces, one result at a time (see json_stream)."""
    yield from json_chunks(build(report, lazy=True, include_info=include_info))
    yield "\n"


def render(report: Report, *, color: bool = False, include_info: bool = False) -> str:
    return "".join(chunks(report, color=color, include_info=include_info))
