"""Exporters: a budget's promises as production SLOs (``budgetlint slo``; docs/slo.md).

Each format renders the :class:`~budgetlint.evaluate.slo.SloPlan` of every
budget (pure: no physics, no files): one SLO per promise with a ratio
objective, the engine's per-request histogram for it, the budget's
selectors, the owner (and each segment's owner) as labels, and
multi-window multi-burn-rate alerts over the budget's ``slo.window``.
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

#: --format name -> module in budgetlint/slo/ with ``render(plans) -> str``
FORMATS: dict[str, str] = {
    "prometheus": "prometheus_rules",
    "sloth": "sloth",
    "pyrra": "pyrra",
    "openslo": "openslo",
}


def render(plans: Sequence[Any], fmt: str) -> str:
    module = importlib.import_module(f"budgetlint.slo.{FORMATS[fmt]}")
    return module.render(list(plans))
