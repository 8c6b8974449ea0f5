"""Helpers shared by the reporters (stdlib only; numbers become text in :mod:`budgetlint.text.numbers`)."""

from __future__ import annotations

import math
import re
from typing import Iterable

from budgetlint.findings import Finding
from budgetlint.report import BudgetResult, Report
from budgetlint.text import numbers

TOOL_NAME = "budgetlint"
#: where SARIF consumers and help texts send people for the tool itself
INFORMATION_URI = "https://github.com/budgetlint/budgetlint"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 error``, ``3 errors`` (:func:`budgetlint.text.numbers.count`)."""
    return numbers.count(n, word, words)


def counts_phrase(report: Report) -> str:
    """``3 errors, 1 warning`` (infos only when there are some)."""
    s = report.summary()
    parts = [plural(s["errors"], "error"), plural(s["warnings"], "warning")]
    if s["infos"]:
        parts.append(plural(s["infos"], "info"))
    return ", ".join(parts)


def scope_phrase(report: Report) -> str:
    """``5 files (7 budgets)``."""
    s = report.summary()
    return f"{plural(s['files'], 'file')} ({plural(s['budgets'], 'budget')})"


def summary_line(report: Report) -> str:
    """``Found 3 errors, 1 warning in 5 files (7 budgets).``"""
    s = report.summary()
    suppressed = s.get("suppressed") or 0
    tail = f" ({suppressed} suppressed)" if suppressed else ""
    if not (s["errors"] or s["warnings"] or s["infos"]):
        return f"No problems found in {scope_phrase(report)}.{tail}"
    return f"Found {counts_phrase(report)} in {scope_phrase(report)}.{tail}"


def worst_first(findings: Iterable[Finding]) -> list[Finding]:
    """Errors, then warnings, then infos; each in file/line order."""
    return sorted(findings, key=lambda f: (-int(f.severity), f.sort_key()))


_NUMBER = re.compile(r"[-+]?(?:\d+(?:[.,_]\d+)*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?")


def without_numbers(text: str) -> str:
    """The text with every number replaced by ``#``: what stays the same when
    a measured or computed value changes (fingerprints rely on it)."""
    return _NUMBER.sub("#", text)


# --- promises: budgetlint/promise_rows.py (below run/diff.py too) -------------

from budgetlint.promise_rows import (PromiseRow, _number, analysis_value, estimate_value, judged,  # noqa: E402,F401
                                     judged_headroom, measured_value, promise_rows, split_key)


def judged_words(budget: BudgetResult, row: PromiseRow | str) -> str:
    """``met (simulated)``: the judged verdict with its basis; the verdict alone without a judgement."""
    j = judged(budget, row)
    if not j:
        name = row if isinstance(row, str) else row.name
        return budget.verdicts.get(name, "") if isinstance(budget.verdicts.get(name), str) else ""
    return f"{j.get('verdict')} ({j.get('basis')})"


def smallest_judged_headroom(budget: BudgetResult) -> tuple[str | None, float | None]:
    """The promise with the smallest judged headroom (:func:`judged_headroom`) and that headroom."""
    if not getattr(budget, "judgement", None):
        return smallest_headroom(budget.analysis)
    best: tuple[str | None, float | None] = (None, None)
    for name in budget.judgement:
        v = judged_headroom(budget, name)
        if v is not None and (best[1] is None or v < best[1]):
            best = (name, v)
    return best


def status_counts(report: Report) -> dict[str, int]:
    """``{"fail": n, "warn": n, "pass": n}``: budgets by ``status`` (their worst finding after policy)."""
    out = {"fail": 0, "warn": 0, "pass": 0}
    for b in report.sorted_budgets():
        out[b.status or "pass"] = out.get(b.status or "pass", 0) + 1
    return out


def status_line(report: Report) -> str:
    """``Budgets: 1 failing, 0 with warnings, 2 passing``."""
    c = status_counts(report)
    return f"Budgets: {c['fail']} failing, {c['warn']} with warnings, {c['pass']} passing"


def smallest_headroom(analysis: dict) -> tuple[str | None, float | None]:
    """The promise with the smallest finite ``headroom_<promise>`` in
    ``analysis`` and that headroom (a fraction); (None, None) when none."""
    best: tuple[str | None, float | None] = (None, None)
    for key, value in analysis.items():
        v = _number(value)
        if isinstance(key, str) and key.startswith("headroom_") and v is not None and math.isfinite(v):
            if best[1] is None or v < best[1]:
                best = (key[len("headroom_"):], v)
    return best


def format_quantity(value: float | None, unit: str) -> str:
    """A human number with its unit: ``400 ms``, ``20 token/s``, ``80 GB``; ``—`` when absent
    (:func:`budgetlint.text.numbers.quantity`, the one formatter)."""
    return numbers.quantity(value, unit)


def row_owner(budget: BudgetResult, row: PromiseRow) -> str | None:
    """Who owns a row: a segment's own owner (``analysis["owner_segment:<name>"]``), else the budget's."""
    owner = budget.analysis.get(f"owner_{row.name}")
    return owner if isinstance(owner, str) else budget.owner


def format_headroom_cell(value: float | None) -> str:
    """The one headroom (``promise / estimate - 1``) in the one rounding rule; ``—`` when absent."""
    return numbers.headroom(value)


def assumed_efficiency_words(analysis: dict) -> str | None:
    """``dense, 1 device: 72% of bandwidth, 50% of compute (class default: median of 3 public runs,
    docs/calibration.md)`` from ``analysis.efficiency_assumed`` (written once, by the evaluation);
    None when the physics did not run."""
    assumed = analysis.get("efficiency_assumed")
    if not isinstance(assumed, dict) or not isinstance(assumed.get("words"), str):
        return None
    return assumed["words"]


def calibration_words(analysis: dict, percentile: str | None = None) -> str | None:
    """``p95 TTFT 640 ms +/- 12 %, TPOT ... ; calibrated from 6 runs of vllm 0.11 (cal.yaml, declared at
    budgets.yaml:9:5); leave-one-out median error ...`` from ``analysis.calibration``; None when absent."""
    cal = analysis.get("calibration")
    if not isinstance(cal, dict):
        return None
    where = f"{cal.get('source')}, declared at {cal.get('declared_at')}"
    if not cal.get("usable"):
        return f"calibration not used ({where}): " + "; ".join(cal.get("problems") or ())
    band = cal.get("band") or {}
    pred = cal.get("predicted") or {}
    parts = []
    for key, label, unit in (("ttft", "TTFT", "s"), ("tpot", "TPOT", "s")):
        v = pred.get(f"{key}_s")
        if v is None:
            continue
        b = band.get(key)
        parts.append(f"{label} {format_quantity(v, unit)} " + (f"+/- {numbers.percent(b)}" if b is not None else "(no band)"))
    engine = " ".join(x for x in (cal.get("engine"), cal.get("engine_version")) if x) or "an unrecorded engine"
    med = cal.get("leave_one_out_median_error") or {}
    loo = ", ".join(f"{k.upper()} {numbers.percent(v)}" for k, v in med.items())
    runs = cal.get("runs")
    head = (f"{percentile + ' ' if percentile else ''}" + ", ".join(parts) + "; ") if parts else ""
    runs_words = numbers.count(runs, "run") if isinstance(runs, (int, float)) else f"{runs} runs"
    return (f"{head}calibrated from {runs_words} of {engine} ({where})"
            + (f"; leave-one-out median error {loo}" if loo else ""))


def cost_words(analysis: dict) -> str | None:
    """``1.39 USD/Mtok, 0.000347 USD per request, 1.4 J/token at the declared traffic, ... (500 token/s of
    output; price: deployment.price at ...; power: h100-sxm TDP ...)`` from ``analysis.cost``
    (evaluate/cost.py, docs/cost.md); None when the evaluation computed no cost."""
    c = analysis.get("cost")
    if not isinstance(c, dict) or not isinstance(c.get("output_token_per_s"), (int, float)):
        return None
    parts = []
    if isinstance(c.get("usd_per_token"), (int, float)):
        parts.append(numbers.quantity(c["usd_per_token"], "USD/token"))
    else:
        parts.append("no price")
    if isinstance(c.get("usd_per_request"), (int, float)):
        parts.append(f"{numbers.quantity(c['usd_per_request'], 'USD')} per request")
    if isinstance(c.get("joules_per_token"), (int, float)):
        parts.append(numbers.quantity(c["joules_per_token"], "J/token"))
    inputs = [f"{numbers.quantity(c['output_token_per_s'], 'token/s')} of output"]
    if isinstance(c.get("price_usd_per_s"), (int, float)):
        inputs.append(f"{numbers.quantity(c['price_usd_per_s'], 'USD/s')} per device ({c.get('price_from')})")
    if isinstance(c.get("power_w"), (int, float)):
        inputs.append(f"{numbers.quantity(c['power_w'], 'W')} per device ({c.get('power_from')})")
    full = c.get("at_capacity")
    cap = ""
    if isinstance(full, dict) and isinstance(full.get("usd_per_token"), (int, float)) and \
            isinstance(full.get("output_token_per_s"), (int, float)):
        cap = (f"; at capacity, {numbers.quantity(full['output_token_per_s'], 'token/s')} of output: "
               f"{numbers.quantity(full['usd_per_token'], 'USD/token')}")
    return f"{', '.join(parts)} at {c.get('throughput')} ({'; '.join(inputs)}){cap}"
