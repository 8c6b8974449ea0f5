"""Each promise read from a measurement at the budget's percentile, in budgetlint's definitions."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .records import Reading
from budgetlint.text import numbers

if TYPE_CHECKING:
    from .records import Link


PROMISE_NAMES = ("ttft", "tpot", "e2e")


def metric_value(metric: Any, label: str) -> float | None:
    value = metric.get(label) if metric is not None else None
    if value is None or not math.isfinite(value):
        return None
    return value


def _reported(metric: Any) -> str:
    labels = list(metric.percentiles)
    if metric.mean is not None:
        labels.append("mean")
    return ", ".join(labels) if labels else "nothing"


def tpot_in_our_definition(value: float, definition: str, n: float | None,
                           n_origin: str = "read") -> tuple[float | None, str]:
    """A TPOT value in budgetlint's definition (over all N tokens), and how; None if refused."""
    if definition == "budgetlint":
        return value, ""
    if definition == "excludes_first_token":
        if n is None or n <= 1:
            return None, ("TPOT over N - 1 tokens cannot be converted without the output length N "
                          "(more than 1)")
        where = "from the budget" if n_origin == "budget" else "from the file"
        from budgetlint.physics.latency import tpot_from_vllm

        return tpot_from_vllm(value, n), (f"converted from TPOT over N - 1 tokens: x (N - 1) / N, "
                                     f"N = {numbers.stated(n)} ({where})")
    if definition == "includes_ttft":
        return None, ("its TPOT includes the time to first token (e2e / N, LLMPerf's inter-token "
                      "latency): not comparable with a TPOT promise; give per-request data or a "
                      "tool that reports TPOT after the first token")
    return None, f"unknown TPOT definition {definition!r}: not compared"


def readings_for(link: Link) -> dict[str, Reading]:
    b, m = link.budget, link.measurement
    label = b.percentile or "p50"
    out: dict[str, Reading] = {}
    p = b.promise
    promised = {"ttft": p.ttft_s, "tpot": p.tpot_s, "e2e": p.e2e_s}
    for name in PROMISE_NAMES:
        if promised[name] is None:
            continue
        r = Reading(name, label, "not-measured", promised_s=promised[name])
        metric = m.metrics.get(name)
        if metric is None:
            r.reason = f"the file has no {title(name)} metric"
        else:
            value = metric_value(metric, label)
            if value is None:
                r.reason = (f"the file reports {title(name)} {_reported(metric)}, not {label} "
                            "(never interpolated or taken from a mean)")
            elif name == "tpot":
                n, origin = link.conditions.get("output_tokens", (None, ""))
                converted, how = tpot_in_our_definition(value, metric.definition, n, origin)
                if converted is None:
                    r.status, r.reason = "refused", how
                else:
                    r.status, r.measured_s, r.how = "compared", converted, how
            else:
                r.status, r.measured_s = "compared", value
        out[name] = r
    return out


def title(name: str) -> str:
    return {"ttft": "TTFT", "tpot": "TPOT", "e2e": "E2E"}.get(name, name)
