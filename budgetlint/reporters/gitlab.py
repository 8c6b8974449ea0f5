"""``gitlab``: GitLab Code Quality (the ``codequality`` report of a CI job).

A JSON array, one issue per warning or error: ``description``, ``check_name``
(the rule code), ``fingerprint`` (the SARIF one: stable across runs, numbers
masked), ``severity`` (error -> major, warning -> minor) and ``location``
(``path`` and ``lines.begin``). Information findings (met promises) are left
out, as in SARIF by default: the merge request widget would list every met
promise as an issue. A finding of the whole run (no file) is placed at the
first checked file, or at the repository root ("."), line 1.
Format: https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
"""

from __future__ import annotations

import json
from typing import Iterator

from budgetlint.findings import Severity
from budgetlint.report import Report

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def issues(report: Report) -> Iterator[dict]:
    from budgetlint.reporters.sarif import fingerprint

    first = report.files[0] if report.files else "."
    seen: set[str] = set()
    for f in report.sorted_findings():
        if f.severity < Severity.WARNING:
            continue
        loc = f.location
        description = f"{f.rule} {f.message}" + (f" (help: {f.fix})" if f.fix else "")
        mark = fingerprint(f)
        n = 1
        while mark in seen:  # GitLab keeps one issue per fingerprint: two alike findings stay two
            mark, n = f"{fingerprint(f)}-{n}", n + 1
        seen.add(mark)
        yield {"description": description, "check_name": f.rule, "fingerprint": mark,
               "severity": SEVERITIES[f.severity],
               "location": {"path": loc.file if loc else first, "lines": {"begin": loc.line if loc else 1}}}


def chunks(report: Report, *, color: bool = False) -> Iterator[str]:
    yield "["
    for i, issue in enumerate(issues(report)):
        yield ("," if i else "") + "\n  " + json.dumps(issue, allow_nan=False)
    yield "\n]\n"


def render(report: Report, *, color: bool = False) -> str:
    return "".join(chunks(report, color=color))
