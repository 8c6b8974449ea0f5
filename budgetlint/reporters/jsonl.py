"""``jsonl``: JSON lines, one finding a line (the ``findings[]`` objects of the json format).

For ``jq``, ``grep`` and log pipelines: each line is a whole JSON object, so
a reader can stop at any line; nothing else is written (the json format holds
the summary and the budgets). Every severity is written; ``--quiet`` leaves
out information findings.
"""

from __future__ import annotations

import json
from typing import Iterator

from budgetlint.report import Report


def chunks(report: Report, *, color: bool = False) -> Iterator[str]:
    from budgetlint.reporters.json_report import _finite

    for f in report.sorted_findings():
        yield json.dumps(_finite(f.as_dict()), allow_nan=False) + "\n"


def render(report: Report, *, color: bool = False) -> str:
    return "".join(chunks(report, color=color))
