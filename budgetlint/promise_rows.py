"""Each promise of a report's budget row, with what is known about it: the promised value, the
analysis's figures and the judgement's entry.

These read a :class:`budgetlint.report.BudgetResult` (the report's vocabulary) and format
nothing but through :mod:`budgetlint.text.numbers`; the reporters and the PR diff
(``run/diff.py``, BL505) both read promises through them, so they sit below both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from budgetlint.report import BudgetResult
from budgetlint.text import numbers


#: unit suffixes of the SI keys in ``BudgetResult.promises`` (longest first)
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_usd_per_token", "USD/token"),
    ("_request_per_s", "request/s"),
    ("_token_per_s", "token/s"),
    ("_tokens_per_s", "token/s"),
    ("_s_per_token", "s/token"),
    ("_bytes", "B"),
    ("_b", "B"),
    ("_s", "s"),
)


@dataclass(frozen=True)
class PromiseRow:
    """One promise of one budget, with what is known about it."""

    name: str  # "ttft", "tpot", "e2e", "memory"...
    key: str | None  # SI key ("ttft_s"), from promises or analysis; None if unknown
    value: float | None  # the promised value, SI (None: a verdict without a number)
    unit: str  # "s", "token/s", "B", "" when unknown
    verdict: str | None
    also: str | None = None  # the same promise said another way ("25 token/s")


def split_key(key: str) -> tuple[str, str]:
    """``ttft_s`` -> (``ttft``, ``s``); ``pace_token_per_s`` -> (``pace``, ``token/s``)."""
    lowered = key.lower()
    for suffix, unit in _SUFFIXES:
        if lowered.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)], unit
    return key, ""


def _key_from_analysis(analysis: dict, name: str) -> tuple[str | None, str]:
    """For a promise known only by its verdict (``memory``): the SI key that
    ``analysis`` uses for it (``bound_memory_bytes`` -> ``memory_bytes``)."""
    for prefix in ("bound_", "measured_", "realistic_"):
        for key in analysis:
            if isinstance(key, str) and key.startswith(f"{prefix}{name}_"):
                rest = key[len(prefix):]
                found, unit = split_key(rest)
                if found == name and unit:
                    return rest, unit
    return None, ""


def promise_rows(budget: BudgetResult) -> list[PromiseRow]:
    """Each promise of ``budget`` once, in the order given: the promises with
    their SI values, then promises known only by a verdict (``memory``).

    ``pace`` is ``1 / tpot``: when both are present and pace has no verdict of
    its own, it is shown beside tpot (``also``) rather than as a row."""
    verdicts = budget.verdicts
    rows: dict[str, PromiseRow] = {}
    for key, value in budget.promises.items():
        name, unit = split_key(key)
        rows[name] = PromiseRow(name, key, _number(value), unit, verdicts.get(name, verdicts.get(key)))
    if "tpot" in rows and "pace" in rows and "pace" not in verdicts:
        pace = rows.pop("pace")
        tpot = rows["tpot"]
        rows["tpot"] = PromiseRow(
            tpot.name, tpot.key, tpot.value, tpot.unit, tpot.verdict, numbers.quantity(pace.value, pace.unit)
        )
    for name, verdict in verdicts.items():
        if name in rows or any(r.key == name for r in rows.values()):
            continue
        key, unit = _key_from_analysis(budget.analysis, name)
        rows[name] = PromiseRow(name, key, None, unit, verdict)
    return list(rows.values())


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def analysis_value(budget: BudgetResult, prefix: str, row: PromiseRow) -> float | None:
    """``analysis[prefix_<key>]`` or ``analysis[prefix_<name>]`` as a float, if present."""
    candidates = [f"{prefix}_{row.key}"] if row.key else []
    candidates.append(f"{prefix}_{row.name}")
    for candidate in candidates:
        value = _number(budget.analysis.get(candidate))
        if value is not None and math.isfinite(value):
            return value
    return None


def judged(budget: BudgetResult, row: PromiseRow | str) -> dict:
    """The judgement step's entry for a promise (``budgets[].judgement.<promise>``); {} when none."""
    name = row if isinstance(row, str) else row.name
    j = getattr(budget, "judgement", None) or {}
    entry = j.get(name)
    return entry if isinstance(entry, dict) else {}


def judged_headroom(budget: BudgetResult, row: PromiseRow | str) -> float | None:
    """The headroom every format prints: the judgement's, on its basis (docs/judgement.md);
    the flat estimate's ``analysis.headroom_<promise>`` only where no judgement was made."""
    j = judged(budget, row)
    if j:
        value = _number(j.get("headroom"))
        return value if value is not None and math.isfinite(value) else None
    if isinstance(row, str):
        value = _number(budget.analysis.get(f"headroom_{row}"))
        return value if value is not None and math.isfinite(value) else None
    return analysis_value(budget, "headroom", row)


def estimate_value(budget: BudgetResult, row: PromiseRow) -> float | None:
    """The Estimate column: the prediction the judgement decided on or weighed, best first
    (simulated, calibrated, flat estimate), so that the Headroom beside it is ``promise / it - 1``
    whenever a prediction decided; the analysis's flat estimate where no judgement was made."""
    j = judged(budget, row)
    if j.get("basis") in ("simulated", "calibrated", "estimate"):
        return _number(j.get("value"))
    considered = j.get("considered") or {}
    for basis in ("simulated", "calibrated", "estimate"):
        if basis in considered:
            return _number(considered[basis])
    return analysis_value(budget, "realistic", row)


def measured_value(budget: BudgetResult, row: PromiseRow) -> float | None:
    """The Measured column: the linked run's value (a throughput: the judgement's measured value)."""
    value = analysis_value(budget, "measured", row)
    if value is not None:
        return value
    j = judged(budget, row)
    if j.get("basis") == "measured":
        return _number(j.get("value"))
    return _number((j.get("considered") or {}).get("measured"))
