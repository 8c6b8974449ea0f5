"""``json``: the report contract, ``Report.as_dict()``, described by
``schemas/report.schema.json`` (JSON Schema draft 2020-12).

Non-finite floats (``inf``, ``nan``, e.g. an unbounded headroom in
``analysis``) are written as ``null``: ``NaN``/``Infinity`` are not JSON.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from budgetlint.report import Report


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def chunks(report: Report, *, color: bool = False) -> Iterator[str]:
    """The report in pieces (one budget or finding at a time): see json_stream."""
    from budgetlint.reporters.json_stream import chunks as json_chunks

    yield from json_chunks(report.as_dict(lazy=True), each=_finite)
    yield "\n"


def render(report: Report, *, color: bool = False) -> str:
    return "".join(chunks(report, color=color))
