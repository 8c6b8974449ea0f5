"""``json``: the report contract, ``Report.as_dict()``, described by
``schemas/report.schema.json`` (JSON Schema draft 2020-12).

Non-finite floats (``inf``, ``nan``, e.g. an unbounded headroom in
``analysis``) are written as ``null``: ``NaN``/``Infinity`` are not JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any

from budgetlint.report import Report


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def render(report: Report, *, color: bool = False) -> str:
    data = _finite(report.as_dict())
    return json.dumps(data, indent=2, sort_keys=False, allow_nan=False) + "\n"
