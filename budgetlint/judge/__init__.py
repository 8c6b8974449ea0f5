"""The judgement step: one verdict per promise, on one stated basis.

After the evaluation (``evaluate/``) a promise can have up to five answers:
the 100 % bound, the flat estimate (one request on an idle system), the
calibrated estimate, the simulated percentile under the declared traffic and
the measured percentile of a linked run. :func:`judge` weighs them once, by
the precedence below, and returns one :class:`Judgement` per promise. Every
output (the report's ``verdicts``, ``judgement`` and ``status``, the text
lines, explain, HTML, markdown, SARIF, JUnit, the PR diff, the exit code)
reads this and nothing else (docs/judgement.md).

Precedence (:data:`PRECEDENCE`, first that applies decides):

1. ``bound``: the 100 % roofline misses: ``cannot-be-met`` (nothing else can
   make a promise possible that the physics rules out).
2. ``production``: the engine's own histograms (a linked `/metrics` scrape,
   ``check --prometheus``; docs/slo.md): the share of requests at or under the
   promise, against the 95 % order-statistic ranks: ``met``, ``at-risk`` (a
   miss) or ``not-shown`` (straddles, too few requests).
3. ``measured``: a linked run that counts (conditions match, entry not
   expired, no run-quality problem) compared the promise: a miss is
   ``at-risk``, a met value that the sample shows at 95 % is ``met``, one it
   does not show is ``not-shown``.
4. ``simulated``: the budget declares traffic and the simulation ran: its
   percentile (on the calibrated step cost when the deployment is calibrated).
5. ``calibrated``: the flat estimate at the calibration's fitted efficiencies.
6. ``estimate``: the flat estimate at the assumed efficiencies; a percentile
   above p50 judged this way says it was judged for an idle system.

Adding a basis is one entry in :data:`PRECEDENCE`, one
``_<basis>`` function returning a :class:`Candidate`, and one row in the
docs' table.

Pure: reads a :class:`~budgetlint.evaluate.BudgetEvaluation`, computes no
physics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional
from budgetlint.text import numbers

#: the verdict words, worst first
VERDICTS = ("cannot-be-met", "at-risk", "not-shown", "unknown", "met")

#: the time promises (and the throughput promise) a judgement is made for, in order
TIME_PROMISES = ("ttft", "tpot", "e2e")

_LABEL = {"ttft": "TTFT", "tpot": "TPOT", "e2e": "E2E", "memory": "memory", "throughput": "throughput",
          "cost": "cost"}

#: what the flat estimate of one request at a time leaves out (concurrency 1), said wherever it is
#: printed beside a simulated figure or judges a percentile; at a concurrency B > 1 it is a steady
#: batch instead, whose decode passes each carry their average share of the others' prefill
#: (physics/analysis.py ``_prefill_share``): :func:`flat_words` says which
FLAT_IGNORES = "no queueing, no batch interference, no prefill sharing the iteration"


def flat_concurrency(ev: Any) -> int:
    """The concurrency the flat estimate was computed at (1 when there is no realistic analysis)."""
    realistic = getattr(getattr(ev, "roofline", None), "realistic", None)
    return int(getattr(realistic, "concurrency", 1) or 1)


def flat_words(ev: Any) -> str:
    """What the flat estimate is: ``one request on an idle system: no queueing, ...`` at concurrency
    1; at B > 1 ``a steady batch of B sequences: ...`` (it does charge prefill sharing the passes)."""
    b = flat_concurrency(ev)
    if b <= 1:
        return f"one request on an idle system: {FLAT_IGNORES}"
    return (f"a steady batch of {b} sequences: no queueing, no bursts, each decode pass carrying its "
            "average share of the others' prefill")


def _flat_judged(ev: Any) -> str:
    if flat_concurrency(ev) <= 1:
        return f"judged for an idle system, one request at a time ({FLAT_IGNORES})"
    return f"judged by the flat estimate ({flat_words(ev)})"


@dataclass(frozen=True)
class Candidate:
    """One basis's answer for one promise."""

    basis: str
    value: float  # SI, in the judgement's unit
    verdict: Optional[str] = None  # None: this basis only informs (``considered``), never decides
    interval: Optional[tuple[float, float]] = None
    words: str = ""  # "simulated p95 330 ms under 10 request/s"


@dataclass(frozen=True)
class Judgement:
    """The one verdict of one promise, its basis, and what was weighed."""

    promise: str
    verdict: str  # cannot-be-met | at-risk | met | unknown | not-shown
    basis: str  # bound | estimate | calibrated | simulated | measured (| production)
    value: Optional[float]  # on that basis, in ``unit``
    unit: str  # s | s/token | B | request/s | token/s
    limit: Optional[float]  # the promise (memory: the usable memory)
    headroom: Optional[float]  # on that basis: limit / value - 1 (throughput: value / limit - 1)
    interval: Optional[tuple[float, float]] = None  # the basis's 95 % interval or band
    considered: Mapping[str, float] = field(default_factory=dict)  # every other basis -> its value
    words: str = ""  # the basis in words, as the text line prints it
    note: str = ""  # a caveat ("judged for an idle system: ...")

    def as_dict(self) -> dict[str, Any]:
        """The report's ``budgets[].judgement.<promise>`` (schemas/report.schema.json)."""
        out: dict[str, Any] = {"verdict": self.verdict, "basis": self.basis, "value": self.value,
                               "unit": self.unit, "headroom": self.headroom,
                               "interval": list(self.interval) if self.interval else None,
                               "considered": dict(self.considered)}
        if self.words:
            out["words"] = self.words
        if self.note:
            out["note"] = self.note
        return out


def headroom(promise: str, limit: Optional[float], value: Optional[float]) -> Optional[float]:
    """The one headroom: ``limit / value - 1`` for a time (and memory: usable / required - 1),
    ``value / limit - 1`` for a throughput."""
    if limit is None or value is None or not math.isfinite(value) or value <= 0 or limit <= 0:
        return None
    if promise == "throughput":
        return value / limit - 1.0
    return limit / value - 1.0


# --------------------------------------------------------------------------- the bases


def _unit(promise: str) -> str:
    if promise == "cost":
        return "USD/token"
    if promise == "tpot":
        return "s/token"
    if promise == "memory":
        return "B"
    return "s"


def fmt(value: float, unit: str) -> str:
    """The one formatter (budgetlint/text/numbers.py); a time per token is spelled as a time,
    as every other output spells a TPOT ("38.8 ms")."""
    from budgetlint.text.numbers import quantity

    return quantity(value, "s" if unit == "s/token" else unit)


def _pct(ev: Any) -> str:
    return ev.budget.percentile or "p50"


def _bound(ev: Any, name: str) -> Optional[Candidate]:
    v = ev.roofline.verdicts.get(name)
    if v is None or v.bound_value is None:
        return None
    verdict = "cannot-be-met" if v.verdict == "cannot-be-met" else None
    if name == "memory":
        return Candidate("bound", v.bound_value, verdict, words=f"memory needed at 100 % {fmt(v.bound_value, 'B')}")
    return Candidate("bound", v.bound_value, verdict, words=f"bound {fmt(v.bound_value, _unit(name))} (100 % of peak)")


def _measured(ev: Any, name: str) -> Optional[Candidate]:
    if name == "memory":
        return None
    if name == "throughput":
        return _measured_throughput(ev)
    if name == "cost":
        return _measured_cost(ev)
    best = None
    for lk in ev.evidence.links:
        r = lk.readings.get(name)
        if r is None or r.status != "compared" or r.measured_s is None:
            continue
        counts = lk.counts and not lk.quality
        if best is None or (counts and not best[0]):
            best = (counts, lk, r)
    if best is None:
        return None
    counts, lk, r = best
    s = lk.sufficiency.get(name)
    interval = (s.lower_s, s.upper_s) if s is not None and s.lower_s is not None and s.upper_s is not None else None
    n = s.n if s is not None else lk.measurement.run.completed
    samples = f" over {numbers.number(n)} requests" if n else ""
    words = f"measured {r.percentile} {_LABEL[name]} {fmt(r.measured_s, _unit(name))}{samples} ({lk.name})"
    if not counts:  # weighed, never decides
        why = "conditions do not match" if lk.mismatches else "the entry expired" if lk.expired else \
            "the run has quality problems"
        return Candidate("measured", r.measured_s, None, interval, words + f"; not counted: {why}")
    if r.margin is not None and r.margin < -1e-9:
        verdict = "at-risk"
    else:
        verdict = "met" if lk.shown(name) else "not-shown"
    return Candidate("measured", r.measured_s, verdict, interval, words)


def _measured_throughput(ev: Any) -> Optional[Candidate]:
    p = ev.budget.promise
    want_tokens = p.throughput_token_per_s is not None
    for lk in ev.evidence.links:
        m = lk.measurement
        if want_tokens:
            value, how = m.output_throughput, "output throughput"
            if value is None:  # the per-user pace times the concurrency
                tpot = m.metrics.get("tpot")
                t = None
                if tpot is not None:
                    t = tpot.get("mean") if tpot.get("mean") is not None else tpot.get("p50")
                conc = m.conditions.concurrency or m.run.max_concurrency
                if t and conc:
                    value, how = conc / t, f"{fmt(conc, '')} users x {fmt(1 / t, 'token/s')} each ="
        else:
            value, how = m.request_throughput, "request throughput"
        if value is None or not math.isfinite(value) or value <= 0:
            continue
        limit = p.throughput_token_per_s if want_tokens else p.throughput_request_per_s
        counts = lk.counts and not lk.quality
        unit = "token/s" if want_tokens else "request/s"
        words = f"measured {how} {fmt(value, unit)} ({lk.name})"
        verdict = ("met" if value >= limit * (1 - 1e-9) else "at-risk") if counts else None
        return Candidate("measured", value, verdict, None, words if counts else words + "; not counted")
    return None


def _measured_cost(ev: Any) -> Optional[Candidate]:
    """A cost promise on a linked run's output throughput (docs/cost.md): the fleet's price over the
    output tokens per second the run completed."""
    c = getattr(ev, "cost", None)
    if c is None or c.result.fleet_usd_per_s is None:
        return None
    limit = ev.budget.promise.cost_usd_per_token
    for lk in ev.evidence.links:
        tokens = lk.measurement.output_throughput
        if tokens is None or not math.isfinite(tokens) or tokens <= 0:
            continue
        value = c.result.fleet_usd_per_s / tokens
        counts = lk.counts and not lk.quality
        words = (f"{fmt(value, 'USD/token')} at the measured output throughput {fmt(tokens, 'token/s')} "
                 f"({lk.name})")
        verdict = ("met" if value <= limit * (1 + 1e-9) else "at-risk") if counts else None
        return Candidate("measured", value, verdict, None, words if counts else words + "; not counted")
    return None


def _simulated(ev: Any, name: str) -> Optional[Candidate]:
    load = ev.load
    if load is None or load.skipped is not None or load.result is None:
        return None
    from budgetlint.evaluate.load import load_words

    cal = " (calibrated step cost)" if load.calibrated else ""
    if name == "cost":
        return _cost(ev, "simulated")
    if name == "throughput":
        if load.throughput_verdict is None or load.throughput_sustained_request_per_s is None:
            return None
        value, unit = load.throughput_sustained_request_per_s, "request/s"
        if ev.budget.promise.throughput_token_per_s is not None and ev.budget.promise.throughput_request_per_s is None:
            mean_out = getattr(load.output_lengths, "mean", None) or 1.0
            value, unit = value * mean_out, "token/s"
        return Candidate("simulated", value, load.throughput_verdict,
                         words=f"simulated sustained {fmt(value, unit)}{cal}")
    if name not in load.verdicts:
        return None
    value = load.predicted(name)
    if value is None:
        return None
    verdict = load.verdicts[name]
    if verdict == "cannot-be-met":  # the bound's word, not the simulation's
        verdict = "at-risk"
    return Candidate("simulated", value, verdict, load.interval(name),
                     f"simulated p{numbers.stated(load.percentile)} {_LABEL[name]} {fmt(value, _unit(name))} "
                     f"{load_words(load)}{cal}")


def _calibrated(ev: Any, name: str) -> Optional[Candidate]:
    roof = ev.roofline
    v = roof.verdicts.get(name)
    if not roof.calibrated or v is None or name not in TIME_PROMISES or v.realistic_value is None:
        return None
    band = (roof.calibration_bands or {}).get(name)
    interval = (v.realistic_value * (1 - band), v.realistic_value * (1 + band)) if band else None
    verdict = v.verdict if v.verdict in ("at-risk", "met") else None
    return Candidate("calibrated", v.realistic_value, verdict, interval,
                     f"calibrated {_LABEL[name]} {fmt(v.realistic_value, _unit(name))}"
                     + (f" +/- {numbers.percent(band)}" if band else ""))


def _cost(ev: Any, basis: str) -> Optional[Candidate]:
    """A cost promise on the basis its throughput stands on (evaluate/cost.py, docs/cost.md):
    the devices' price over the output tokens they serve at the operating point."""
    c = getattr(ev, "cost", None)
    if c is None or c.basis != basis or c.usd_per_token is None:
        return None
    limit = ev.budget.promise.cost_usd_per_token
    verdict = "met" if c.usd_per_token <= limit * (1 + 1e-9) else "at-risk"
    return Candidate(basis, c.usd_per_token, verdict,
                     words=f"{fmt(c.usd_per_token, 'USD/token')} at {c.throughput_words} "
                     f"({fmt(c.output_tokens_per_s, 'token/s')} of output)")


def _estimate(ev: Any, name: str) -> Optional[Candidate]:
    if name == "cost":
        return _cost(ev, "estimate")
    roof = ev.roofline
    v = roof.verdicts.get(name)
    if v is None:
        return None
    value = v.estimate_value if getattr(v, "estimate_value", None) is not None else v.realistic_value
    if value is None:
        return None
    verdict = v.verdict if v.verdict in ("at-risk", "met", "unknown") else None
    if roof.calibrated and name in TIME_PROMISES:
        verdict = None  # the calibrated estimate speaks for the flat one
    if name == "memory":
        return Candidate("estimate", value, verdict, words=f"memory needed {fmt(value, 'B')} per device "
                         f"(usable {fmt(v.budget_value, 'B')})" if v.budget_value else "")
    return Candidate("estimate", value, verdict, words=f"estimate {fmt(value, _unit(name))}")


def _production(ev: Any, name: str) -> Optional[Candidate]:
    """The engine's own histograms in production (evaluate/production.py, docs/slo.md): the share of
    requests at or under the promise decides; the value shown is ``histogram_quantile`` with the
    bucket that holds it as the band."""
    slo = getattr(ev, "slo", None)
    if slo is None or name not in TIME_PROMISES:
        return None
    readings = [r for r in slo.production if r.indicator == name]
    if not readings:
        return None
    r = next((x for x in readings if x.counts), readings[0])
    if not math.isfinite(r.quantile_s):
        return None
    share = (f"{numbers.percent(r.share_low)}" if r.exact else f"{numbers.percent(r.share_low)} .. {numbers.percent(r.share_high)}")
    words = (f"production {_pct(ev)} {_LABEL[name]} {fmt(r.quantile_s, _unit(name))} (bucket "
             f"{fmt(r.band[0], _unit(name))} .. {fmt(r.band[1], _unit(name)) if math.isfinite(r.band[1]) else '+Inf'}), "
             f"{share} of {numbers.number(r.n)} requests at or under the promise ({r.file})")
    verdict = {"met": "met", "missed": "at-risk", "straddles": "not-shown", "too-few": "not-shown"}[r.verdict]
    if not r.counts:
        return Candidate("production", r.quantile_s, None, r.band, words + "; not counted: stale or expired")
    return Candidate("production", r.quantile_s, verdict, r.band, words)


#: the precedence, written once: the first basis with a deciding verdict decides
#: (docs/judgement.md has it as a table). ``bound`` decides only ``cannot-be-met``.
PRECEDENCE: tuple[tuple[str, Callable[[Any, str], Optional[Candidate]]], ...] = (
    ("bound", _bound),
    ("production", _production),
    ("measured", _measured),
    ("simulated", _simulated),
    ("calibrated", _calibrated),
    ("estimate", _estimate),
)

BASES = tuple(name for name, _ in PRECEDENCE)


# --------------------------------------------------------------------------- judging


def promise_names(ev: Any) -> list[str]:
    """The promises judged: ttft, tpot, e2e, segments, memory (as the roofline has them), throughput."""
    names: list[str] = []
    p = ev.budget.promise
    for name in TIME_PROMISES:
        if getattr(p, f"{name}_s", None) is not None:
            names.append(name)
    names += [k for k in ev.roofline.verdicts if k.startswith("segment:")]
    if "memory" in ev.roofline.verdicts:
        names.append("memory")
    if p.throughput_request_per_s is not None or p.throughput_token_per_s is not None:
        names.append("throughput")
    if p.cost_usd_per_token is not None:
        names.append("cost")
    return names


def _limit(ev: Any, name: str) -> tuple[Optional[float], str]:
    p = ev.budget.promise
    if name == "cost":
        return p.cost_usd_per_token, "USD/token"
    if name == "throughput":
        if p.throughput_request_per_s is not None:
            return p.throughput_request_per_s, "request/s"
        return p.throughput_token_per_s, "token/s"
    if name in TIME_PROMISES:
        return getattr(p, f"{name}_s"), _unit(name)
    v = ev.roofline.verdicts.get(name)
    if v is None:
        return None, _unit(name)
    if name.startswith("segment:"):
        decode = v.binding != "" and not v.binding.startswith("prefill")
        return v.budget_value, "s/token" if decode else "s"
    return v.budget_value, _unit(name)


def judge_promise(ev: Any, name: str) -> Optional[Judgement]:
    limit, unit = _limit(ev, name)
    candidates: list[Candidate] = []
    for basis, fn in PRECEDENCE:
        if name.startswith("segment:") and basis not in ("bound", "estimate"):
            continue
        c = fn(ev, name)
        if c is not None:
            candidates.append(c)
    if name == "throughput" and ev.budget.promise.throughput_token_per_s is not None and \
            ev.budget.promise.throughput_request_per_s is None:
        unit = "token/s"
    decider = next((c for c in candidates if c.verdict is not None), None)
    if decider is None:
        if not candidates:
            if name == "cost":
                return _cost_unknown(ev, limit, unit)
            if name == "throughput":
                return Judgement(name, "unknown", "estimate", None, unit, limit, None,
                                 note="no simulation and no linked run speak for a throughput")
            return None
        c = candidates[0]
        return Judgement(name, "unknown", c.basis, c.value, unit, limit, headroom(name, limit, c.value), c.interval,
                         {x.basis: x.value for x in candidates[1:]}, c.words)
    considered = {c.basis: c.value for c in candidates if c is not decider}
    note = ""
    pct = _pct(ev)
    from budgetlint.evaluate.load import percentile_number

    number = percentile_number(pct) or 50.0
    load = ev.load
    if decider.basis in ("estimate", "calibrated") and name in TIME_PROMISES and load is not None \
            and load.skipped is not None:
        note = (f"{_flat_judged(ev)}: the declared traffic "
                f"was not simulated ({load.skipped})")
    elif decider.basis in ("estimate", "calibrated") and name in TIME_PROMISES and number > 50.0:
        note = (f"{_flat_judged(ev)}: a {pct} needs declared traffic "
                "(workload arrival_rate or concurrency) to mean anything")
    in_band = decider.basis == "simulated" and load is not None and getattr(load, "in_capacity_band", False) \
        and name in TIME_PROMISES and decider.verdict == "not-shown"
    in_pct_band = decider.basis == "simulated" and load is not None and name in TIME_PROMISES \
        and name in getattr(load, "in_percentile_band", ()) and decider.verdict == "not-shown"
    if in_band:
        note = capacity_band_words(load)
    elif in_pct_band:
        note = percentile_band_words(load, name)
    elif decider.basis == "simulated" and load is not None and getattr(load, "near_saturation", False) \
            and name != "throughput" and load.capacity is not None:
        from budgetlint.evaluate.load import utilisation as _utilisation

        note = (f"near saturation (utilisation {numbers.number(_utilisation(load))}, at least 0.95): the percentile swings with "
                f"the saturation estimate itself ({fmt(load.saturation_request_per_s, 'request/s')} per replica); "
                f"read the capacity first: holds up to {fmt(load.capacity.request_per_s, 'request/s')} per replica")
    if decider.basis == "simulated" and load is not None and load.overloaded and name != "throughput":
        note = ("no steady state: arrivals exceed what the replicas complete, the queue grows without bound, "
                "and the simulated percentile (and so this headroom) only grows with a longer simulation")
    words = decider.words
    if decider.basis == "simulated" and "estimate" in considered:
        words += f"; flat estimate {fmt(considered['estimate'], unit)} ({flat_words(ev)})"
    # in the band the simulated percentile is a transient: it is shown (words, value) but gives no headroom
    room = None if in_band else headroom(name, limit, decider.value)
    return Judgement(name, decider.verdict or "unknown", decider.basis, decider.value, unit, limit,
                     room, decider.interval, considered, words, note)


def percentile_band_words(load: Any, name: str) -> str:
    """The judgement note of a time promise whose uncalibrated simulated percentile misses the
    promise by no more than the model's measured pessimism (issue 25, BL331)."""
    from budgetlint.evaluate.load import PERCENTILE_BAND_SOURCE, band_factor, percentile_band_edge

    return (f"the simulated percentile, or its interval's top, is above the promise by no more than the "
            f"uncalibrated model's measured error: inside the band from the promise up to {fmt(percentile_band_edge(load, name), 's')} "
            f"({band_factor()} x, {PERCENTILE_BAND_SOURCE}), where the real "
            "percentile may fall on either side of the promise, so it is shown but not judged")


def capacity_band_words(load: Any) -> str:
    """The judgement note of a time promise in the uncalibrated capacity band (issue 25): the
    capacity first, then the utilisation, the band and why the simulation cannot tell."""
    from budgetlint.evaluate.load import NEAR_SATURATION, band_error_words, band_figure, overload_edge, utilisation

    if getattr(load, "pools", None) is not None:  # a disaggregated deployment: the busier pool
        from budgetlint.evaluate.load import POOLS_BAND_ASSUMPTION

        pl = load.pools
        return (f"{pl.band_words(load.arrival_rate_per_s or 0.0)}: the busier pool's utilisation "
                f"{band_figure(pl.busier[1])}, inside the band {numbers.number(NEAR_SATURATION)} to "
                f"{band_figure(overload_edge(load))} where an uncalibrated simulation can tell neither met nor at "
                f"risk ({load.band_source}; {POOLS_BAND_ASSUMPTION}): {band_error_words(load)} in the saturation "
                "moves the percentile 2x or more, and a simulation there is a transient, not a steady state, so its "
                "percentile is shown but not judged")
    cap = load.capacity
    first = (f"capacity {fmt(cap.request_per_s, 'request/s')} per replica with every promise held; "
             if cap is not None else "")
    per = (load.arrival_rate_per_s or 0.0) / load.replicas
    return (f"{first}{fmt(per, 'request/s')} arrive per replica against a simulated saturation of "
            f"{fmt(load.saturation_request_per_s, 'request/s')}: utilisation {band_figure(utilisation(load))}, "
            f"inside the band {numbers.number(NEAR_SATURATION)} to {band_figure(overload_edge(load))} where an "
            f"uncalibrated simulation can tell neither met nor at risk ({load.band_source}): "
            f"{band_error_words(load)} in the saturation moves the percentile 2x or more, and a simulation there is a transient, "
            "not a steady state, so its percentile is shown but not judged")


def _cost_unknown(ev: Any, limit: Optional[float], unit: str) -> Judgement:
    """A cost promise nothing can judge: no price, or no throughput to divide it by (BL361 says which)."""
    c = getattr(ev, "cost", None)
    if c is None:
        return Judgement("cost", "unknown", "estimate", None, unit, limit, None,
                         note="no throughput to charge the devices' price to: neither the simulation nor the "
                              "flat estimate gave one")
    hw = ev.budget.deployment.hardware.name if ev.budget.deployment and ev.budget.deployment.hardware else "the hardware"
    return Judgement("cost", "unknown", c.basis, None, unit, limit, None,
                     words=f"{fmt(c.output_tokens_per_s, 'token/s')} of output at {c.throughput_words}",
                     note=c.no_price_words(hw))


def judge(ev: Any) -> dict[str, Judgement]:
    """promise -> its :class:`Judgement` (empty when nothing speaks for any promise)."""
    out: dict[str, Judgement] = {}
    for name in promise_names(ev):
        j = judge_promise(ev, name)
        if j is not None:
            out[name] = j
    return out


def judged(ev: Any) -> Any:
    """``ev`` with its ``judgement`` (the pipeline calls this between evaluate/ and rules/)."""
    from types import MappingProxyType

    return replace(ev, judgement=MappingProxyType(judge(ev)))
