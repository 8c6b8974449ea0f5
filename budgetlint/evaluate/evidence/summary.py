"""The evidence as the report's ``analysis`` shows it: measured values, implied efficiency, each link."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from budgetlint.model.types import Budget

from .readings import PROMISE_NAMES, metric_value, tpot_in_our_definition

if TYPE_CHECKING:
    from .records import Link


def link_summary(link: Link) -> dict[str, Any]:
    """One measurement as the report shows it: samples, interval, quality, age, provenance."""
    m = link.measurement
    prov = {k: getattr(m.provenance, k) for k in ("engine", "engine_version", "gpu", "date", "tool", "tool_version")
            if getattr(m.provenance, k) is not None}
    promises = {}
    for name, r in link.readings.items():
        entry: dict[str, Any] = {"status": r.status, "percentile": r.percentile, "measured_s": r.measured_s,
                                 "promised_s": r.promised_s}
        s = link.sufficiency.get(name)
        if s is not None:
            entry.update(s.as_dict())
            met = None if r.margin is None else r.margin >= -1e-9
            entry["verdict"] = ("met" if met else "missed") if s.shown else (
                "not shown" if met else "missed")
        elif r.margin is not None:
            entry["verdict"] = "met" if r.margin >= -1e-9 else "missed"
        promises[name] = entry
    run = m.run
    return {
        "source": link.name,
        "counts": link.counts,
        "requests": run.completed,
        "promises": promises,
        "quality": [q.as_dict() for q in link.quality],
        "age_days": link.age_days,
        "provenance": prov,
        "stale": [st.message for st in link.stale],
        "expires": link.expires,
        "expired": link.expired,
        "mean_in_flight": run.mean_in_flight,
    }


def evidence_analysis(b: Budget, links: tuple[Link, ...]) -> dict[str, Any]:
    """Measured values and implied efficiency for the budget's report ``analysis``,
    and every linked measurement's samples, interval, quality, age (``evidence``)."""
    d: dict[str, Any] = {}
    if links:
        d["evidence"] = [link_summary(lk) for lk in links]
    counted = [lk for lk in links if lk.counts]
    if not counted:
        return d
    # the first link that compares the most promises speaks for the budget
    lk = max(counted, key=lambda x: sum(r.status == "compared" for r in x.readings.values()))
    label = b.percentile or "p50"
    d["measured_source"] = lk.name
    d["measured_percentile"] = label
    d["measured_conditions_inferred"] = lk.inferred
    m = lk.measurement
    values: dict[str, float] = {}
    for name in PROMISE_NAMES:
        r = lk.readings.get(name)
        if r is not None and r.status == "compared":
            values[name] = r.measured_s  # type: ignore[assignment]
            continue
        metric = m.metrics.get(name)
        v = metric_value(metric, label)
        if v is None:
            continue
        if name == "tpot":
            n, origin = lk.conditions.get("output_tokens", (None, ""))
            v, _ = tpot_in_our_definition(v, metric.definition, n, origin)
            if v is None:
                continue
        values[name] = v
    for name, v in values.items():
        d[f"measured_{name}_s"] = v
        r = lk.readings.get(name)
        if r is not None and r.margin is not None:
            d[f"measured_{name}_verdict"] = ("met" if lk.shown(name) else "not shown") \
                if r.margin >= -1e-9 else "missed"
        suff = lk.sufficiency.get(name)
        if suff is not None:
            d[f"measured_{name}_samples"] = suff.n
            d[f"measured_{name}_interval_s"] = [suff.lower_s, suff.upper_s]
    if values.get("tpot"):
        d["measured_pace_token_per_s"] = 1.0 / values["tpot"]
    if lk.bound is not None:
        if values.get("tpot"):
            d["implied_efficiency_decode"] = lk.bound.tpot_s / values["tpot"]
            d["implied_efficiency_decode_binding"] = lk.bound.decode_binding
        if values.get("ttft"):
            d["implied_efficiency_prefill"] = lk.bound.prefill_s / values["ttft"]
            d["implied_efficiency_prefill_binding"] = lk.bound.prefill_binding
    return d
