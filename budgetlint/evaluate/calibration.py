"""The edge between benchmark measurements and the calibration core.

:func:`observation` turns one :class:`~budgetlint.bench.Measurement` into a
:class:`~budgetlint.physics.calibration.Observation` at the run's own
conditions (lengths, concurrency, arrival rate, request count), or says why
it cannot. :func:`calibrated_prediction` predicts a budget's promises at a
calibration, with its band. No file reading or writing here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from budgetlint.physics import calibration as core
from budgetlint.physics.shapes import Deployment
from budgetlint.text import numbers

#: the statistics a fit uses of each metric, most robust first; tails are the band's business
FIT_STATS = ("p50", "mean", "p90")
TPOT_DEFINITIONS = {
    "budgetlint": core.TPOT_BUDGETLINT,
    "excludes_first_token": core.TPOT_EXCLUDES_FIRST,
    "per_token_timestamp": core.TPOT_EXCLUDES_FIRST,  # inference-perf: mean gap between tokens
    "includes_ttft": core.TPOT_INCLUDES_TTFT,
}


@dataclass(frozen=True)
class RunRef:
    """Where a run came from (for the calibration document)."""

    file: str
    label: str
    engine: Optional[str]
    engine_version: Optional[str]
    date: Optional[str]


def run_ref(m: Any) -> RunRef:
    prov = m.provenance
    return RunRef(m.source, m.label or "run 1", prov.engine, prov.engine_version, prov.date)


def observation(m: Any, deployment: Deployment, scheduler: tuple[int, int], replicas: int = 1) -> tuple[Optional[core.Observation], str]:
    """The run as a calibration observation, or ``(None, why not)``."""
    c = m.conditions
    # what the requests got, before what they asked for
    prompt = m.run.mean_prompt_tokens or c.prompt_tokens
    output = m.run.mean_output_tokens or c.output_tokens
    if not prompt or not output:
        return None, "its prompt and output lengths are not recorded"
    targets = []
    for metric in ("ttft", "tpot"):
        met = m.metrics.get(metric)
        if met is None:
            continue
        definition = TPOT_DEFINITIONS.get(met.definition, core.TPOT_EXCLUDES_FIRST)
        for stat in FIT_STATS:
            v = met.get(stat)
            if v is not None and math.isfinite(v) and v > 0:
                targets.append(core.Target(metric, stat, v, definition))
    if not targets:
        return None, "it has no TTFT or TPOT mean or median"
    rate = c.request_rate if c.request_rate is not None else m.run.request_rate
    conc = c.concurrency if c.concurrency is not None else m.run.max_concurrency
    requests = m.run.completed or c.successful_requests or c.num_requests
    if rate is None and conc is None:
        conc = m.run.mean_in_flight
        if conc is None:
            return None, "neither its concurrency nor its request rate is recorded"
    if rate is not None and math.isinf(rate) and not requests and conc is None:
        return None, "all requests were sent at once but their number is not recorded"
    dep = deployment
    if c.devices and c.devices != dep.devices:
        dep = replace(dep, devices=int(c.devices))
    try:
        obs = core.Observation(deployment=dep, prompt_tokens=float(prompt), output_tokens=float(output),
                               targets=tuple(targets), concurrency=conc, request_rate=rate,
                               requests=int(requests) if requests else None,
                               max_num_seqs=scheduler[0], max_num_batched_tokens=scheduler[1],
                               replicas=replicas,
                               label=f"{m.source} {m.label or 'run 1'}")
    except ValueError as exc:
        return None, str(exc)
    return obs, ""


SATURATED_WHY = ("every request was sent at once, more than the batch holds: its TTFT is queueing, not the "
                 "engine's speed, and simulating it costs tens of times a rate run (--include-saturated fits it)")


def saturated(obs: core.Observation) -> bool:
    """A run whose requests queue without bound (all sent at once, more than the batch holds):
    its TTFT is queueing, not physics; the TTFT criterion is for runs below saturation.

    ``request_rate: inf`` with a ``max_concurrency`` (the standard ``vllm bench serve`` sweep
    shape) is a closed loop of that many users, each sending its next request when the last
    one ends: saturated only when more users than the batch holds (``max_num_seqs``) wait in
    the server. Without a cap every request is sent at once: saturated."""
    if obs.mode != "burst":
        return False
    if obs.concurrency is None:
        return True
    return obs.concurrency > obs.max_num_seqs


# ---- a budget's deployment, calibrated ------------------------------------------

#: staleness checks (BL311) and a run outside the band (BL312)
ENGINE_VERSION = "engine-version"
AGE = "age"


@dataclass
class Outside:
    """A linked run whose measurement lies outside the calibration's band."""

    run: str  # file and label
    metric: str
    stat: str
    measured_s: float
    predicted_s: float
    band: float

    @property
    def error(self) -> float:
        return self.predicted_s / self.measured_s - 1.0


@dataclass
class CalibrationEvaluation:
    """What a deployment's ``calibration:`` gives its budget."""

    path: str  # as resolved (relative to the working directory)
    declared_at: Any  # Location of the deployment's `calibration` key
    calibration: Any = None  # run.calibrate.Calibration, None when unusable
    problems: list = field(default_factory=list)  # Findings: unreadable, invalid, other model/hardware
    predicted: dict = field(default_factory=dict)  # ttft_s, tpot_s, e2e_s
    bands: dict = field(default_factory=dict)  # ttft, tpot, e2e -> relative band (None: no leave-one-out)
    stale: list = field(default_factory=list)  # (check, message)
    outside: list = field(default_factory=list)  # Outside

    def band_words(self, metric: str) -> str:
        b = self.bands.get(metric)
        return f"+/- {numbers.percent(b)}" if b is not None else "(no band: fewer than 3 runs)"

    def origin_words(self) -> str:
        c = self.calibration
        engine = " ".join(x for x in (c.engine, c.engine_version) if x) or "an unrecorded engine"
        return f"calibrated from {c.runs} run{'s' if c.runs != 1 else ''} of {engine} ({self.path})"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.path, "declared_at": str(self.declared_at)}
        c = self.calibration
        if c is None:
            out["usable"] = False
            out["problems"] = [f.message for f in self.problems]
            return out
        out.update({
            "usable": True,
            "runs": c.runs,
            "engine": c.engine,
            "engine_version": c.engine_version,
            "created": c.created,
            "parameters": c.params.as_dict(),
            "leave_one_out_median_error": {m: v["median"] for m, v in c.error.items()},
            "leave_one_out_max_error": {m: v["max"] for m, v in c.error.items()},
            "predicted": dict(self.predicted),
            "band": dict(self.bands),
            "stale": [{"check": k, "message": m} for k, m in self.stale],
            "outside_band": [{"run": o.run, "metric": f"{o.metric}.{o.stat}", "measured_s": o.measured_s,
                              "predicted_s": o.predicted_s, "error": o.error, "band": o.band}
                             for o in self.outside],
        })
        return out


def load_calibration(path: Any) -> tuple[Any, list]:
    """A ``kind: calibration`` file read (:mod:`budgetlint.files.calibration_file`) with its
    parameters made the physics core's :class:`~budgetlint.physics.calibration.Params`."""
    from budgetlint.files.calibration_file import load_calibration as read
    from budgetlint.physics.calibration import Params

    return read(path, Params)


def _load(path: str, cache: dict | None) -> tuple[Any, list]:
    """A calibration file, read once per run (``cache`` is the run's, in its Environment)."""
    if cache is None:
        return load_calibration(path)
    hit = cache.get(path)
    if hit is None:
        hit = load_calibration(path)
        cache[path] = hit
    return hit


def evaluate_calibration(b: Any, roof: Any, links: Any, today: Any = None, max_age_days: Any = None,
                         roots: Any = None, cache: dict | None = None) -> Optional[CalibrationEvaluation]:
    """The budget's calibration: its predictions with their band, staleness, runs outside the band.

    Updates ``roof``'s realistic TTFT/TPOT/E2E to the calibrated values (the
    top of the band), so the at-risk verdicts use the calibration; the
    bound and the *cannot be met* verdicts are never touched.
    """
    from pathlib import Path

    from budgetlint.findings import Finding, Severity

    dep = b.deployment
    if dep is None or not dep.calibration:
        return None
    raw = Path(dep.calibration)
    path = raw if raw.is_absolute() else Path(b.doc.file).parent / raw
    ce = CalibrationEvaluation(str(path), b.loc("deployment", "calibration"))
    from budgetlint.files.discovery import inside, outside_words

    if roots is not None and not inside(path, roots):
        ce.problems.append(Finding("BL310", Severity.ERROR, f"calibration file {str(path)!r} is not read: it is "
                                   + outside_words(roots), ce.declared_at,
                                   budget=b.name))
        return ce
    from budgetlint.files import fs

    if not fs.is_file(path):
        ce.problems.append(Finding("BL310", Severity.ERROR, f"calibration file {str(path)!r} does not exist",
                                   ce.declared_at, budget=b.name))
        return ce
    cal, problems = _load(str(path), cache)
    if cal is None:
        ce.problems.extend(problems)
        return ce
    if dep.model is not None and dep.hardware is not None and (
            cal.model.lower() != dep.model.name.lower() or cal.hardware.lower() != dep.hardware.name.lower()):
        ce.problems.append(Finding(
            "BL310", Severity.ERROR,
            f"calibration {str(path)!r} is for {cal.model} on {cal.hardware}, not {dep.model.name} on "
            f"{dep.hardware.name}", ce.declared_at, budget=b.name))
        return ce
    why = untrusted(cal, today)
    if why:
        ce.problems.append(Finding(
            "BL310", Severity.WARNING,
            f"it is not trusted to judge the budget: {why}; the estimate without it judges the budget "
            "(refit it with `budgetlint calibrate` rather than edit it)", ce.declared_at, budget=b.name))
        return ce
    ce.calibration = cal
    for m in ("ttft", "tpot"):
        ce.bands[m] = cal.band(m)
    ce.bands["e2e"] = max((v for v in (ce.bands["ttft"], ce.bands["tpot"]) if v is not None), default=None)
    if roof.skipped or roof.deployment is None or roof.workload is None:
        return ce
    wl, d = roof.workload, roof.deployment
    try:
        obs = core.Observation(deployment=d, prompt_tokens=max(1.0, wl.uncached_prompt_tokens),
                               output_tokens=max(1.0, float(wl.output_tokens)),
                               targets=(core.Target("ttft", "mean", 1.0), core.Target("tpot", "mean", 1.0)),
                               concurrency=wl.concurrency)
        pred = core.predict(obs, cal.params)
    except ValueError:
        return ce
    rl = roof.realistic
    extra = rl.ttft_s - rl.prefill_s  # declared queue and edge allowances, as the realistic TTFT has
    ttft = pred[("ttft", "mean")] + extra
    tpot = pred[("tpot", "mean")]
    ce.predicted = {"ttft_s": ttft, "tpot_s": tpot, "e2e_s": ttft + wl.output_tokens * tpot}
    _rejudge(roof, ce)
    _staleness(ce, links, today, max_age_days)
    _outside(ce, links, d)
    return ce


#: a calibration dated this many days after the check's day is in the future (time zones: calibrate
#: writes its machine's local date)
FUTURE_SLACK_DAYS = 1


#: the widest band a calibration may state and still judge a budget: past +/- 100 % its own
#: leave-one-out predictions are off by more than the value they predict
MAX_BAND = 1.0


def _created(text: Any) -> Optional[Any]:
    """The ``created:`` day, or None when it is no real date (2026-02-30, 'yesterday')."""
    import datetime as dt

    s = str(text).strip()
    if len(s) > 10 and s[10] not in "T ":
        return None
    try:
        return dt.date.fromisoformat(s[:10])
    except ValueError:
        return None


def untrusted(cal: Any, today: Any) -> str:
    """Why a calibration file, as written, cannot vouch for its band ('' when it can), led by
    where in the file (``cal.yaml:25:10: ...``): its ``created:`` is no date or in the future
    (it would never go stale), a run is dated after it, or its ``runs:`` rows cannot support the
    ``error:`` band it states (issue 24: a hand-written perfect file turned every "at risk" into
    "met"). ``calibrate`` writes none of these."""
    at = getattr(cal, "at", None) or (lambda *path: str(cal.path))
    made = None
    if cal.created is not None:
        made = _created(cal.created)
        if made is None:
            return (f"{at('created')}: its created date {str(cal.created)[:40]!r} is not a real date (YYYY-MM-DD), "
                    "so its age cannot be judged and it would never go stale")
        if today is not None and (made - today).days > FUTURE_SLACK_DAYS:
            return (f"{at('created')}: its created date {made.isoformat()} is after today ({today.isoformat()}), "
                    "so it would never go stale")
    rows = [r for r in cal.run_rows if isinstance(r, dict)]
    if made is not None:
        for i, r in enumerate(cal.run_rows):
            ran = _created(r.get("date")) if isinstance(r, dict) and r.get("date") else None
            if ran is not None and (ran - made).days > FUTURE_SLACK_DAYS:
                return (f"{at('runs', i)}: its run {str(r.get('run') or i + 1)[:60]!r} is dated {ran.isoformat()}, "
                        f"after the file's created date {made.isoformat()}: no fit can have used a later run")
    for metric, e in sorted(cal.error.items()):
        band, median, runs = e.get("max"), e.get("median"), e.get("runs")
        if band is None:
            continue
        if not (band <= MAX_BAND):  # was: "+/- 968,173,000,000 %" called calibrated (issue 24)
            return (f"{at('error', metric, 'max')}: its {metric} band is wider than +/- {numbers.percent(MAX_BAND)} "
                    f"(it states a relative error of {numbers.number(band)}): the fit does not predict its own runs")
        if median is not None and median > band:
            return (f"{at('error', metric, 'median')}: its {metric} band states a median error "
                    f"({numbers.percent(median)}) above its maximum ({numbers.percent(band)})")
        if runs is not None and runs < 3:
            return (f"{at('error', metric, 'runs')}: its {metric} band is from {numbers.count(runs, 'run')}; "
                    "a leave-one-out band needs 3 or more")
        loo = [abs(v) for r in rows for k, v in (r.get("leave_one_out") or {}).items()
               if str(k).split(".")[0] == metric and isinstance(v, (int, float))]
        held = sum(1 for r in rows if any(str(k).split(".")[0] == metric for k in (r.get("leave_one_out") or {})))
        if runs is not None and held < runs:
            return (f"{at('error', metric, 'runs')}: its {metric} band is stated from "
                    f"{numbers.count(runs, 'run')} held out, but "
                    f"{'no' if held == 0 else f'only {held} of the'} {numbers.count(len(rows), 'listed run')} "
                    f"{'has' if held == 1 else 'have'} a {metric} leave-one-out error")
        worst = max(loo, default=0.0)
        if worst > band * (1 + 1e-3) + 1e-6:
            return (f"{at('error', metric, 'max')}: its runs' own {metric} leave-one-out errors reach "
                    f"{numbers.percent(worst)}, above the stated band ({numbers.percent(band)})")
        mid = _median(loo)
        if median is not None and mid is not None and median < mid * (1 - 1e-3) - 1e-6:
            # calibrate writes the median of the rows' own errors (physics.calibration.error_summary)
            return (f"{at('error', metric, 'median')}: its {metric} band states a median error of "
                    f"{numbers.percent(median)}, below the median of its runs' own leave-one-out errors "
                    f"({numbers.percent(mid)})")
    return ""


def _median(values: list) -> Optional[float]:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _rejudge(roof: Any, ce: CalibrationEvaluation) -> None:
    roof.calibrated = ce.origin_words()
    roof.calibration_bands = dict(ce.bands)
    for name in ("ttft", "tpot", "e2e"):
        v = roof.verdicts.get(name)
        value = ce.predicted.get(f"{name}_s")
        if v is None or value is None:
            continue
        if v.estimate_value is None:
            v.estimate_value = v.realistic_value  # the flat estimate, weighed by the judgement
        v.realistic_value = value
        if v.verdict == "cannot-be-met" or v.verdict == "unknown":
            continue
        top = value * (1.0 + (ce.bands.get(name) or 0.0))
        v.verdict = "at-risk" if top > v.budget_value * (1 + 1e-9) else "met"


def _staleness(ce: CalibrationEvaluation, links: Any, today: Any, max_age_days: Any) -> None:
    import datetime as dt

    cal = ce.calibration
    newest = None
    for lk in links or ():
        prov = lk.measurement.provenance
        if prov.engine_version and (newest is None or (prov.date or "") > (newest.date or "")):
            newest = prov
    if newest is not None and cal.engine_version and newest.engine_version != cal.engine_version:
        ce.stale.append((ENGINE_VERSION, f"calibrated on {cal.engine or 'the engine'} {cal.engine_version}, but "
                         f"the newest linked run is on {newest.engine or 'the engine'} {newest.engine_version}"))
    if max_age_days is not None and cal.created and today is not None:
        try:
            made = dt.date.fromisoformat(str(cal.created)[:10])
        except ValueError:
            return
        age = (today - made).days
        if age > max_age_days:
            ce.stale.append((AGE, f"calibrated {age} days ago ({cal.created}), older than the {numbers.stated(max_age_days)} "
                             "days allowed"))


def _outside(ce: CalibrationEvaluation, links: Any, d: Deployment) -> None:
    from budgetlint.evaluate.load import engine_defaults

    cal = ce.calibration
    for lk in links or ():
        if not getattr(lk, "counts", True):
            continue
        m = lk.measurement
        obs, _ = observation(m, d, engine_defaults(d.accelerator.memory_bytes, ""))
        if obs is None or saturated(obs):
            continue
        try:
            pred = core.predict(obs, cal.params)
        except ValueError:
            continue
        for t in obs.targets:
            band = ce.bands.get(t.metric)
            p = pred[(t.metric, t.stat)]
            if band is not None and abs(p / t.value_s - 1.0) > band:
                ce.outside.append(Outside(f"{m.source} {m.label or 'run 1'}", t.metric, t.stat, t.value_s, p, band))
