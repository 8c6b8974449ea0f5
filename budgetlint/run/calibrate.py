"""``budgetlint calibrate``: fit a deployment's calibration to benchmark runs and write it.

Reads the benchmark files (every format ``check --bench`` reads), turns each
run into an observation at its own conditions
(:mod:`budgetlint.evaluate.calibration`), fits the five parameters
(:mod:`budgetlint.physics.calibration`), refits without each run in turn,
and returns a ``kind: calibration`` document (schemas/calibration.schema.json).
Runs that cannot be used are listed with why; they never stop the fit.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from budgetlint.files import fs
from budgetlint.evaluate.calibration import load_calibration  # noqa: F401 (the command's API)
from budgetlint.files.calibration_file import Calibration  # noqa: F401 (the command's API)
from budgetlint.text import numbers


class CalibrateError(Exception):
    """Bad input to the command: a message for the user, exit code 2."""


@dataclass
class CalibrateResult:
    document: dict[str, Any]
    problems: list[str] = field(default_factory=list)  # unreadable benchmark files


def from_budget(name: str, path: str, given: dict[str, Any]) -> dict[str, Any]:
    """The deployment a calibration is for, from the budget ``name`` under ``path``: model, hardware,
    devices (its tensor-parallel degree), replicas, precisions and engine. A flag in ``given`` that
    says otherwise is a mismatch: refused (:class:`CalibrateError`), never silently overridden."""
    from budgetlint.options import Options
    from budgetlint.run.check import InputError, evaluate_run

    try:
        result = evaluate_run([path], Options(simulate=False), keep=True)
    except InputError as exc:
        raise CalibrateError(f"--budgets {path}: {exc}") from None
    by_name = {ev.budget.name: ev.budget for ev in result.evaluations}
    b = by_name.get(name)
    if b is None:
        listed = ", ".join(sorted(by_name)[:10]) or "none"
        raise CalibrateError(f"--budget {name!r}: no budget of that name under {path} (budgets: {listed})")
    dep = b.deployment
    if dep is None or dep.model is None or dep.hardware is None:
        raise CalibrateError(f"--budget {name!r} declares no deployment model and hardware to calibrate")
    taken = {"model": dep.model.name, "hardware": dep.hardware.name, "devices": int(dep.devices or 1),
             "replicas": int(dep.replicas or 1), "weight_precision": dep.weight_precision or "bf16",
             "kv_precision": dep.kv_precision or "bf16", "engine": dep.engine}
    clash = []
    for key, value in given.items():
        mine = taken.get(key)
        if key in ("model", "hardware"):
            same = str(value).lower() in (str(mine).lower(), *(a.lower() for a in getattr(
                dep.model if key == "model" else dep.hardware, "aliases", ()) or ()))
        else:
            same = str(value).lower() == str(mine).lower()
        if not same:
            clash.append(f"--{key.replace('_', '-')} {value} but the budget says {mine}")
    if clash:
        raise CalibrateError(f"--budget {name!r}: " + "; ".join(clash)
                             + " (drop the flag, or calibrate without --budget)")
    return taken


def bench_paths(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.is_file() and q.suffix in (".json", ".jsonl", ".txt")))
        elif p.is_file():
            out.append(p)
        elif fs.exists(p):  # a FIFO, a device, a socket: there, but not a file to read (issue 24)
            import os

            from budgetlint.files.fs import file_kind

            raise CalibrateError(f"{raw}: {file_kind(os.stat(p).st_mode)}, not a regular file; "
                                 "name a benchmark result file or a folder of them")
        else:
            raise CalibrateError(f"{raw}: no such file or directory")
    return out


#: the run's work budget while calibrate runs (evaluate/workbudget.py): set before the leave-one-out
#: workers fork, so they draw on one count; module-level so that :func:`_take` pickles by name
_WORK: Any = None


def _take(n: int) -> bool:
    """serving_sim.run's ``allowance``: spend ``n`` events of the run's work budget."""
    return _WORK is None or _WORK.take(n)


def _spent(stage: str, observations: list) -> CalibrateError:
    """The message when the work budget runs out: what was not fitted, and what to do."""

    labels = ", ".join(o.label for o in observations[:6]) + (", ..." if len(observations) > 6 else "")
    open_runs = sum(1 for o in observations if o.mode != "closed-form")
    return CalibrateError(
        f"calibrate: {stage} was not finished: calibrate's simulation work budget "
        f"({numbers.count(_WORK.events, 'scheduler event') if _WORK is not None else 'its events'}, "
        f"docs/limits.md) was spent fitting {numbers.count(len(observations), 'run')} ({labels}; "
        f"{open_runs} of them simulated); no calibration was written. "
        "Calibrate from fewer runs or runs with fewer requests"
        + (", or without the leave-one-out refits (--no-loo)" if "leave-one-out" in stage else ""))


def _leave_one_out(observations: list, fit: Any, jobs: Optional[int]) -> list:
    """The leave-one-out refits, one per run, over ``jobs`` forked processes (default: every
    core; 1: in this process). Each refit is independent and the results come back in run
    order, so the document is the same whatever the worker count."""
    import multiprocessing

    from budgetlint.physics import calibration as core
    from budgetlint.run.check import _jobs

    workers = min(_jobs(jobs), len(observations))
    if workers < 2 or len(observations) < 3 or "fork" not in multiprocessing.get_all_start_methods():
        return core.leave_one_out(observations, fit, allowance=_take)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return core.leave_one_out(observations, fit, mapper=pool.map, allowance=_take)


#: called with each long stage's words, then None when done (the CLI's progress line on a terminal)
PROGRESS: Any = None


def calibrate(paths: list[str], *, model: str, hardware: str, devices: int = 1, replicas: int = 1,
              weight_precision: str = "bf16", kv_precision: Optional[str] = None,
              engine: Optional[str] = None, loo: bool = True, include_saturated: bool = False,
              today: Optional[_dt.date] = None, jobs: Optional[int] = None,
              strict_devices: bool = False) -> CalibrateResult:
    from budgetlint.bench import read_benchmark
    from budgetlint.evaluate.physics_inputs import Skip, catalog_deployment
    from budgetlint.evaluate.calibration import SATURATED_WHY, observation, run_ref, saturated
    from budgetlint.evaluate.load import engine_defaults
    from budgetlint.model.build import Sink
    from budgetlint.physics import calibration as core
    from budgetlint.run.check import _load_builtin_catalog

    catalog = _load_builtin_catalog(Sink())
    md = catalog.find(model, catalog.models)[0]  # names as budgets write them (h100-sxm5, ...-Instruct)
    hd = catalog.find(hardware, catalog.hardware)[0]
    for name, entry, table in (("--model", md, catalog.models), ("--hardware", hd, catalog.hardware)):
        if entry is None:
            value = model if name == "--model" else hardware
            hint = catalog.suggest(value, table)
            raise CalibrateError(f"{name} {value!r} is not in the catalog"
                                 + (f"; did you mean {hint!r}?" if hint else "")
                                 + " (`budgetlint catalog models` / `catalog hardware` list them)")
    try:
        dep = catalog_deployment(md, hd, devices, weight_precision, kv_precision or "bf16")
    except (Skip, ValueError, KeyError) as exc:
        raise CalibrateError(f"cannot model {model} on {hardware}: {exc}") from None
    scheduler = engine_defaults(hd.memory_bytes, hd.name)
    problems: list[str] = []
    observations = []
    refs = []
    skipped = []
    files = bench_paths(paths)
    for path in files:
        ms, probs = read_benchmark(path)
        problems.extend(str(p) for p in probs)
        for m in ms:
            ref = run_ref(m)
            if engine and ref.engine and ref.engine.lower() != engine.lower():
                skipped.append({"file": ref.file, "run": ref.label, "reason": f"engine {ref.engine}, not {engine}"})
                continue
            if strict_devices and m.conditions.devices and int(m.conditions.devices) != devices:
                skipped.append({"file": ref.file, "run": ref.label,
                                "reason": f"it ran on {m.conditions.devices} devices; the budget's tensor-parallel "
                                          f"degree is {devices} (a calibration is for one deployment)"})
                continue
            obs, why = observation(m, dep, scheduler, replicas)
            if obs is None:
                skipped.append({"file": ref.file, "run": ref.label, "reason": why})
                continue
            if saturated(obs) and not include_saturated:
                skipped.append({"file": ref.file, "run": ref.label, "reason": SATURATED_WHY})
                continue
            observations.append(obs)
            refs.append(ref)
    if not observations:  # every reason: the runs set aside and the files that gave none (unreadable, no benchmark)
        if not files:
            raise CalibrateError(f"no benchmark result files (.json, .jsonl, .txt) in {', '.join(paths)}")
        raise CalibrateError("no usable run in the benchmark files"
                             + "".join(f"\n  {s['file']} {s['run']}: {s['reason']}" for s in skipped)
                             + "".join(f"\n  {p}" for p in problems))
    global _WORK
    from budgetlint.evaluate import workbudget
    from budgetlint.evaluate.workbudget import WorkSpent

    _WORK = workbudget.WorkBudget(workbudget.CALIBRATE_EVENTS)  # the run's cap on simulated events (issue 24): made before any worker forks
    try:
        if PROGRESS is not None:
            PROGRESS(f"fitting {len(observations)} runs")
        try:
            fit = core.fit(observations, allowance=_take)
        except WorkSpent:
            raise _spent("the fit of the five parameters", observations) from None
        if PROGRESS is not None and loo:
            PROGRESS(f"leave-one-out: {len(observations)} refits")
        try:
            held_out = _leave_one_out(observations, fit, jobs) if loo else []
        except WorkSpent:
            raise _spent("the leave-one-out refits (the error band)", observations) from None
    finally:
        _WORK = None
        if PROGRESS is not None:
            PROGRESS(None)
    runs = []
    for i, (obs, ref) in enumerate(zip(observations, refs)):
        row: dict[str, Any] = {"file": ref.file, "run": ref.label, "engine": ref.engine,
                               "engine_version": ref.engine_version, "date": ref.date, "mode": obs.mode,
                               "residuals": {f"{t.metric}.{t.stat}": _round(_rel(r))
                                             for t, r in zip(obs.targets, fit.residuals[i])}}
        if held_out:
            row["leave_one_out"] = {f"{m}.{s}": _round(e) for (m, s), e in held_out[i].errors.items()}
        runs.append(row)
    versions = [r.engine_version for r in refs if r.engine_version]
    engines = [r.engine for r in refs if r.engine]
    doc: dict[str, Any] = {
        "version": 1,
        "kind": "calibration",
        "created": (today or _dt.date.today()).isoformat(),
        "deployment": {"model": md.name, "hardware": hd.name, "devices": devices, "replicas": replicas,
                       "weight_precision": weight_precision, "kv_precision": kv_precision or "bf16",
                       "engine": engine or (max(set(engines), key=engines.count) if engines else None),
                       "engine_version": max(versions, key=_version_key) if versions else None},
        "parameters": {k: _round(v) for k, v in fit.params.as_dict().items()},
        "held": dict(fit.held),
        **({"assumed": dict(fit.assumed)} if fit.assumed else {}),
        "runs": runs,
    }
    if skipped:
        doc["skipped"] = skipped
    errors = core.error_summary(held_out) if held_out else {}
    if held_out:
        doc["error"] = {metric: {"median": _round(v["median"]), "max": _round(v["max"]), "runs": int(v["count"])}
                        for metric, v in errors.items()}
    problems.extend(fit_warnings(fit, observations, errors))
    problems.extend(f"calibrate: {name}: {why}" for name, why in fit.assumed.items())
    return CalibrateResult(doc, problems)


#: a fitted parameter this close (relative, in log space) to a bound sits at it
AT_BOUND = 0.01


def fit_warnings(fit: Any, observations: Any, errors: dict[str, dict[str, float]]) -> list[str]:
    """What the fit cannot vouch for: a fitted parameter at its bound (the runs push it past what
    the model allows: a wrong precision, device count or engine), and a run whose residual is
    outside the band the leave-one-out error states."""
    import math

    from budgetlint.physics.calibration import BOUNDS

    out = []
    for name in fit.fitted:
        v = getattr(fit.params, name)
        lo, hi = BOUNDS[name]
        for bound, word in ((lo, "lower"), (hi, "upper")):
            if abs(math.log(v / bound)) <= AT_BOUND:
                out.append(f"calibration: {name} = {numbers.number(v)} sits at its {word} bound {numbers.stated(bound)}: the runs push it "
                           "past what the model allows (check the precision, the device count and the engine)")
    from budgetlint.evaluate.calibration import MAX_BAND

    for metric, e in sorted(errors.items()):
        if not (e.get("max", 0.0) <= MAX_BAND):
            out.append(f"calibration: the {metric} band (the leave-one-out maximum, a relative error of "
                       f"{numbers.number(e['max'])}) is wider than +/- {numbers.percent(MAX_BAND)}: `check` will not "
                       "trust this file (BL310); "
                       "check the model, the hardware, the precision and the device count")
    for obs, res in zip(observations, fit.residuals):
        for t, r in zip(obs.targets, res):
            band = errors.get(t.metric, {}).get("max")
            err = math.exp(r) - 1.0
            if band is not None and abs(err) > band:
                out.append(f"calibration: {obs.label} {t.metric} {t.stat} is {numbers.percent(err, signed=True)} off "
                           f"the fit, outside the band ({numbers.percent(band)}, the leave-one-out maximum)")
    return out


def _rel(log_ratio: float) -> float:
    import math

    return math.exp(log_ratio) - 1.0


def _round(v: float) -> float:
    return float(f"{v:.6g}")  # a value written to the calibration file: data, not text


def _version_key(v: str) -> tuple:
    """Orders versions part by part, numbers as numbers: compared as digit strings by length
    then text, never ``int()`` (a 5,000-digit part passed Python's limit on integer digits:
    issue 24), so the cost stays linear in the version's length."""
    parts = []
    for p in v.lstrip("v").replace("-", ".").split("."):
        if p.isascii() and p.isdigit():
            digits = p.lstrip("0") or "0"
            parts.append((0, len(digits), digits, ""))
        else:
            parts.append((1, 0, "", p))
    return tuple(parts)


def dump(doc: dict[str, Any]) -> str:
    import yaml

    head = "# Written by `budgetlint calibrate` (docs/calibration.md). Refit rather than edit.\n"
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
