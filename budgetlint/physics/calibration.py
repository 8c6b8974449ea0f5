"""Calibration: fit a deployment's efficiency to measured runs (pure core, SI floats).

The cost model is :class:`~budgetlint.physics.step_cost.RooflineStepCost`
with five physical parameters (:class:`Params`):

* ``bandwidth``, ``compute``: the achieved fractions of peak memory bandwidth
  and of matmul compute (the roofline's efficiencies);
* ``iteration_overhead_s``: fixed seconds every engine iteration costs
  (scheduling, sampling, kernel launches);
* ``collective_latency_s``: seconds per layer per iteration under tensor
  parallelism (the all-reduces' latency; only when N > 1; it replaces the
  uncalibrated "10 % collective overhead" factor);
* ``ttft_overhead_s``: fixed seconds on every first token (tokenisation,
  detokenisation, HTTP, the client's own timing).

A run (:class:`Observation`) is predicted at its own lengths and
concurrency: through the serving simulator when it had traffic (an arrival
rate, or every request sent at once), else in closed form (``concurrency``
sequences decoding together: TPOT is one decode iteration at the mean
context, TTFT one prefill iteration beside the other sequences' decodes).

The fit minimises a robust loss of the log ratio of predicted to measured
value, ``r = ln(pred/meas)``, soft-L1: ``rho(r) = 2 s^2 (sqrt(1 + (r/s)^2) -
1)`` with ``s = 0.1`` (quadratic below a 10 % error, linear above, so one
odd run cannot drag the fit), over every target of every run, plus a weak
log-space prior towards :data:`PRIOR` (weight :data:`PRIOR_WEIGHT`) that
only decides parameters the runs say nothing about. The optimiser is
Nelder-Mead in the logarithm of each parameter (every parameter is positive
and spans decades), restarted from its best point until it stops improving.
A parameter no run is sensitive to (the collective latency when every run is
on one device, the compute fraction when no run is compute-bound anywhere)
is held at its prior and reported as not fitted.

:func:`leave_one_out` refits without each run in turn and predicts it: the
honest error of a prediction, and the calibration's band.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

from .shapes import Deployment, Efficiency
from .step_cost import RooflineStepCost, kv_capacity_tokens
from budgetlint.text import numbers

PARAM_NAMES = ("bandwidth", "compute", "iteration_overhead_s", "collective_latency_s", "ttft_overhead_s")
#: what each parameter is held to (log space): fractions in (0, 1], overheads 1 us .. 10 s
BOUNDS = {
    "bandwidth": (0.01, 1.0),
    "compute": (0.01, 1.0),
    "iteration_overhead_s": (1e-6, 10.0),
    "collective_latency_s": (1e-7, 1.0),
    "ttft_overhead_s": (1e-6, 10.0),
}
#: soft-L1 scale of the log error (10 %)
LOSS_SCALE = 0.1
PRIOR_WEIGHT = 1e-4


@dataclass(frozen=True)
class Params:
    """The calibration parameters (SI units)."""

    bandwidth: float = 0.7
    compute: float = 0.5
    iteration_overhead_s: float = 2e-3
    collective_latency_s: float = 2e-5
    ttft_overhead_s: float = 5e-3

    def __post_init__(self) -> None:
        for name in PARAM_NAMES:
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a non-negative finite number, got {v!r}")
        for name in ("bandwidth", "compute"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must be a fraction in (0, 1], got {getattr(self, name)!r}")

    def as_dict(self) -> dict[str, float]:
        return {n: getattr(self, n) for n in PARAM_NAMES}


#: the prior a fit falls back on where the runs are silent
PRIOR = Params()


def step_cost(deployment: Deployment, params: Params) -> RooflineStepCost:
    """The roofline iteration cost at a calibration (no collective factor: the latency replaces it)."""
    dep = replace(deployment, collective_overhead=0.0)
    return RooflineStepCost(dep, Efficiency(params.bandwidth, params.compute),
                            iteration_overhead_s=params.iteration_overhead_s,
                            collective_latency_s=params.collective_latency_s)


# ---- observations -------------------------------------------------------------

#: how a run's TPOT divides the decode time: by N output tokens, by N - 1, or e2e by N
TPOT_BUDGETLINT = "budgetlint"
TPOT_EXCLUDES_FIRST = "excludes_first_token"
TPOT_INCLUDES_TTFT = "includes_ttft"


@dataclass(frozen=True)
class Target:
    """One measured number: ``metric`` ttft | tpot, ``stat`` "mean" or "p50".."p99"."""

    metric: str
    stat: str
    value_s: float
    tpot_definition: str = TPOT_BUDGETLINT

    def __post_init__(self) -> None:
        if self.metric not in ("ttft", "tpot"):
            raise ValueError(f"metric must be ttft or tpot, got {self.metric!r}")
        if not (math.isfinite(self.value_s) and self.value_s > 0):
            raise ValueError(f"a measured {self.metric} must be a positive number of seconds, got {self.value_s!r}")


@dataclass(frozen=True)
class Observation:
    """One measured run at its own conditions.

    ``request_rate`` (finite, requests/s for the whole service): open-loop
    Poisson arrivals, simulated. ``request_rate`` infinite with ``requests``:
    every request sent at once, simulated (a closed loop of ``concurrency``
    users when a cap is given, else all of them). Otherwise ``concurrency``
    sequences decode together, in closed form.
    """

    deployment: Deployment
    prompt_tokens: float
    output_tokens: float
    targets: tuple[Target, ...]
    concurrency: Optional[float] = None
    request_rate: Optional[float] = None
    requests: Optional[int] = None
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 2048
    replicas: int = 1  # behind a round-robin balancer; ``request_rate`` is for all of them
    label: str = ""

    def __post_init__(self) -> None:
        if not (self.prompt_tokens >= 1 and self.output_tokens >= 1):
            raise ValueError("a run needs prompt and output lengths of at least one token")
        if not self.targets:
            raise ValueError("a run needs at least one measured TTFT or TPOT")

    @property
    def mode(self) -> str:
        """``open`` (simulated arrivals), ``burst`` (simulated, all at once) or ``closed-form``."""
        rate = self.request_rate
        if rate is not None and math.isfinite(rate) and rate > 0:
            return "open"
        if rate is not None and math.isinf(rate) and (self.requests or 0) >= 2:
            return "burst"
        return "closed-form"


#: at most this many simulated requests per open-loop prediction: the run's own count up to it.
#: A benchmark's statistics cover every request it sent, the ramp up to its steady concurrency
#: included, so the simulation sends as many and drops none. (160 requests, 30 dropped, was
#: what the fit first used: at 30 request/s on 4 replicas, whose requests each take ~7 s, the
#: 160 arrived in 5 s and the simulated batch never grew to the run's ~50 sequences: the
#: vLLM sweep's leave-one-out TPOT error was 21 %, and 0.8 % with the run's own 900.)
SIM_REQUESTS = 1_000


def _stat(values: Sequence[float], stat: str) -> float:
    from .load_stats import percentile

    if stat == "mean":
        return sum(values) / len(values)
    return percentile(sorted(values), float(stat.lstrip("p")))


def predict(obs: Observation, params: Params,
            allowance: Optional[Callable[[int], bool]] = None) -> dict[tuple[str, str], float]:
    """Predicted value of each of the run's targets, keyed ``(metric, stat)`` (seconds).

    ``allowance``: the caller's work budget for the simulated runs (serving_sim.run's hook;
    its WorkSpent propagates: issue 24, calibrate's time bound)."""
    cost = step_cost(obs.deployment, params)
    n_out = obs.output_tokens
    mode = obs.mode
    if mode == "closed-form":
        b = max(1, int(round(obs.concurrency or 1)))
        ctx = obs.prompt_tokens + n_out / 2.0
        decode = cost.iteration_s(b, b * ctx, ()) / cost.tokens_per_pass
        ttft = cost.iteration_s(b - 1, (b - 1) * ctx, ((int(round(obs.prompt_tokens)), 0),)) + params.ttft_overhead_s
        out: dict[tuple[str, str], float] = {}
        for t in obs.targets:
            if t.metric == "ttft":
                out[(t.metric, t.stat)] = ttft
            else:
                out[(t.metric, t.stat)] = _tpot(decode, ttft, n_out, t.tpot_definition)
        return out
    from .serving_sim import Scheduler, Traffic, run
    from .traffic import Fixed

    prompt, output = Fixed(int(round(obs.prompt_tokens))), Fixed(max(1, int(round(n_out))))
    kv = kv_capacity_tokens(replace(obs.deployment, memory_usable_fraction=0.9)) or math.inf
    sched = Scheduler(max_num_seqs=obs.max_num_seqs, max_num_batched_tokens=obs.max_num_batched_tokens,
                      kv_capacity_tokens=kv, replicas=obs.replicas)
    if mode == "open":
        n = min(obs.requests or SIM_REQUESTS, SIM_REQUESTS)
        n = max(n, 20)
        traffic = Traffic(prompt=prompt, output=output, arrival_rate_per_s=obs.request_rate)
        raw = run(cost, traffic, sched, requests=n, warmup=0, seed=0, allowance=allowance)
    else:
        n = int(obs.requests or 2)
        users = int(obs.concurrency) if obs.concurrency and obs.concurrency < n else n
        traffic = Traffic(prompt=prompt, output=output, concurrency=max(1, users))
        raw = run(cost, traffic, sched, requests=n, warmup=0, seed=0, allowance=allowance)
    recs = [r for r in raw.records if not r.rejected]
    if not recs:
        return {(t.metric, t.stat): math.inf for t in obs.targets}
    ttfts = [r.ttft_s + params.ttft_overhead_s for r in recs]
    out = {}
    for t in obs.targets:
        if t.metric == "ttft":
            out[(t.metric, t.stat)] = _stat(ttfts, t.stat)
        else:
            vals = [_tpot(r.tpot_s, r.ttft_s + params.ttft_overhead_s, r.output_tokens, t.tpot_definition)
                    for r in recs]
            out[(t.metric, t.stat)] = _stat(vals, t.stat)
    return out


def _tpot(budgetlint_tpot: float, ttft: float, n: float, definition: str) -> float:
    """A TPOT (decode time / N) in the run's definition."""
    if definition == TPOT_EXCLUDES_FIRST and n > 1:
        return budgetlint_tpot * n / (n - 1)
    if definition == TPOT_INCLUDES_TTFT:
        return budgetlint_tpot + ttft / n
    return budgetlint_tpot


# ---- the fit ------------------------------------------------------------------


def _rho(r: float) -> float:
    s = LOSS_SCALE
    return 2.0 * s * s * (math.sqrt(1.0 + (r / s) ** 2) - 1.0)


def _to_x(p: Params, names: Sequence[str]) -> list[float]:
    return [math.log(getattr(p, n)) for n in names]


def _from_x(x: Sequence[float], names: Sequence[str], base: Params) -> Params:
    vals = base.as_dict()
    for n, v in zip(names, x):
        lo, hi = BOUNDS[n]
        vals[n] = min(max(math.exp(v), lo), hi)
    return Params(**vals)


def residuals(observations: Sequence[Observation], params: Params,
              allowance: Optional[Callable[[int], bool]] = None) -> list[list[float]]:
    """Per run, per target, ``ln(predicted / measured)``."""
    out = []
    for obs in observations:
        pred = predict(obs, params, allowance)
        out.append([math.log(max(pred[(t.metric, t.stat)], 1e-12) / t.value_s) if math.isfinite(
            pred[(t.metric, t.stat)]) else 10.0 for t in obs.targets])
    return out


def loss(observations: Sequence[Observation], params: Params, prior: Params = PRIOR,
         allowance: Optional[Callable[[int], bool]] = None) -> float:
    total = sum(_rho(r) for row in residuals(observations, params, allowance) for r in row)
    for n in PARAM_NAMES:
        total += PRIOR_WEIGHT * math.log(getattr(params, n) / getattr(prior, n)) ** 2
    return total


def nelder_mead(f: Callable[[list[float]], float], x0: Sequence[float], step: float = 0.5,
                max_evals: int = 600, tol: float = 1e-7) -> tuple[list[float], float, int]:
    """Minimise ``f`` from ``x0`` (standard coefficients 1, 2, 0.5, 0.5). Returns (x, f(x), evaluations)."""
    n = len(x0)
    pts = [list(x0)]
    for i in range(n):
        p = list(x0)
        p[i] += step
        pts.append(p)
    vals = [f(p) for p in pts]
    evals = n + 1
    while evals < max_evals:
        order = sorted(range(n + 1), key=vals.__getitem__)
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) <= tol * (abs(vals[0]) + tol):
            break
        cen = [sum(p[i] for p in pts[:-1]) / n for i in range(n)]
        xr = [c + (c - w) for c, w in zip(cen, pts[-1])]
        fr = f(xr)
        evals += 1
        if fr < vals[0]:
            xe = [c + 2 * (c - w) for c, w in zip(cen, pts[-1])]
            fe = f(xe)
            evals += 1
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            inside = fr >= vals[-1]
            xc = [c + 0.5 * ((w if inside else r) - c) for c, w, r in zip(cen, pts[-1], xr)]
            fc = f(xc)
            evals += 1
            if fc < min(fr, vals[-1]):
                pts[-1], vals[-1] = xc, fc
            else:
                best = pts[0]
                pts = [best] + [[b + 0.5 * (q - b) for b, q in zip(best, p)] for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
                evals += n
    i = min(range(n + 1), key=vals.__getitem__)
    return pts[i], vals[i], evals


@dataclass(frozen=True)
class Fit:
    params: Params
    fitted: tuple[str, ...]  # the parameters the runs determined
    held: dict[str, str]  # parameter -> why it was held at the prior
    loss: float
    evaluations: int
    residuals: tuple[tuple[float, ...], ...]  # per run, per target: ln(pred/meas)
    #: fitted parameter -> its standard error (log) at the fit (:func:`standard_errors`)
    errors: dict[str, float] = field(default_factory=dict)
    #: fitted parameters the runs do not identify, with why (:func:`not_identified`): assumed
    assumed: dict[str, str] = field(default_factory=dict)


def sensitive_parameters(observations: Sequence[Observation], at: Params = PRIOR,
                         allowance: Optional[Callable[[int], bool]] = None) -> dict[str, str]:
    """Parameters no run responds to (a factor 2 moves no prediction by 0.5 %), with why."""
    base = residuals(observations, at, allowance)
    held: dict[str, str] = {}
    for n in PARAM_NAMES:
        if n == "collective_latency_s" and all(o.deployment.devices == 1 for o in observations):
            held[n] = "every run is on one device: no tensor-parallel collective to measure"
            continue
        moved = 0.0
        for factor in (0.5, 2.0):
            v = getattr(at, n) * factor
            lo, hi = BOUNDS[n]
            v = min(max(v, lo), hi)
            other = residuals(observations, replace(at, **{n: v}), allowance)
            moved = max(moved, max((abs(a - b) for ra, rb in zip(base, other) for a, b in zip(ra, rb)), default=0.0))
        if moved < 0.005:
            held[n] = "no run's prediction depends on it (a factor of 2 moves none by 0.5 %)"
    return held


#: the scatter of one measured number (log): what a run's repeat would move it by. The runs
#: identify a parameter when, at that scatter, they pin it within :data:`IDENTIFIED_WITHIN`
MEASUREMENT_SCATTER = 0.05
#: one standard error (log) within which a fitted parameter counts as identified by the runs
IDENTIFIED_WITHIN = 0.10


def _solve_inverse(m: list[list[float]]) -> Optional[list[list[float]]]:
    """The inverse of a small symmetric matrix (Gauss-Jordan, partial pivoting); None if singular."""
    n = len(m)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(m)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(a[r][i]))
        if abs(a[p][i]) < 1e-300:
            return None
        a[i], a[p] = a[p], a[i]
        piv = a[i][i]
        a[i] = [x / piv for x in a[i]]
        for r in range(n):
            if r != i and a[r][i]:
                f = a[r][i]
                a[r] = [x - f * y for x, y in zip(a[r], a[i])]
    return [row[n:] for row in a]


def standard_errors(observations: Sequence[Observation], params: Params, names: Sequence[str],
                    allowance: Optional[Callable[[int], bool]] = None,
                    scatter: float = MEASUREMENT_SCATTER) -> dict[str, float]:
    """Each fitted parameter's standard error (log: 0.1 is about +/- 10 %) at ``params``, were
    every measured number scattered by ``scatter``: ``scatter x sqrt(((J^T J)^-1)_ii)`` with ``J``
    the runs' log-predictions' derivatives in the log-parameters (finite differences, 5 %). Two
    parameters the runs cannot tell apart (the same effect on every prediction) both get a large
    one; ``inf`` where the runs do not determine them at all."""
    if not names:
        return {}
    h = 0.05
    base = [r for row in residuals(observations, params, allowance) for r in row]
    cols = []
    for n in names:
        lo, hi = BOUNDS[n]
        v = getattr(params, n)
        step = h if v * math.exp(h) <= hi else -h
        moved = replace(params, **{n: min(max(v * math.exp(step), lo), hi)})
        other = [r for row in residuals(observations, moved, allowance) for r in row]
        cols.append([(b - a) / step for a, b in zip(base, other)])
    jtj = [[sum(a * b for a, b in zip(ci, cj)) for cj in cols] for ci in cols]
    inv = _solve_inverse(jtj)
    if inv is None:
        return {n: math.inf for n in names}
    return {n: scatter * math.sqrt(inv[i][i]) if inv[i][i] > 0 else math.inf for i, n in enumerate(names)}


def not_identified(errors: dict[str, float], prior: Params = PRIOR) -> dict[str, str]:
    """The fitted parameters the runs do not pin within :data:`IDENTIFIED_WITHIN`, with why: their
    value is the prior's pull and the others' trade-off, an assumption, not a measurement."""
    out = {}
    for n, se in errors.items():
        if se > IDENTIFIED_WITHIN:
            pinned = "not at all" if not math.isfinite(se) else f"only to +/- {numbers.percent(min(se, 9.99))}"
            out[n] = (f"not identified by these runs: at {numbers.percent(MEASUREMENT_SCATTER)} scatter they pin it {pinned} "
                      f"(another parameter can do what it does); its value is assumed (prior {numbers.stated(getattr(prior, n))})")
    return out


def fit(observations: Sequence[Observation], start: Params = PRIOR, prior: Params = PRIOR,
        max_evals: int = 900, held: Optional[dict[str, str]] = None, step: float = 0.7,
        allowance: Optional[Callable[[int], bool]] = None, identify: bool = True) -> Fit:
    """The robust log-space fit of :class:`Params` to the runs. ``allowance``: see :func:`predict`."""
    if not observations:
        raise ValueError("calibration needs at least one run")
    if held is None:
        held = sensitive_parameters(observations, start, allowance)
    names = [n for n in PARAM_NAMES if n not in held]
    base = replace(start, **{n: getattr(prior, n) for n in held})
    total_evals = 0
    x = _to_x(base, names)
    best = math.inf
    cache: dict[tuple[float, ...], float] = {}

    def f(xs: list[float]) -> float:
        key = tuple(round(v, 12) for v in xs)
        hit = cache.get(key)
        if hit is None:
            hit = loss(observations, _from_x(xs, names, base), prior, allowance)
            cache[key] = hit
        return hit

    for _ in range(6):  # restarts: Nelder-Mead stalls on ridges
        if not names:
            best = f(x)
            break
        x, val, ev = nelder_mead(f, x, step=step, max_evals=max(60, max_evals - total_evals))
        total_evals += ev
        if val >= best - 1e-9 or total_evals >= max_evals:
            best = min(best, val)
            break
        best = val
        step = min(step, 0.2)
    params = _from_x(x, names, base)
    res = residuals(observations, params, allowance)
    errors = standard_errors(observations, params, names, allowance) if identify else {}
    return Fit(params, tuple(names), dict(held), best, total_evals, tuple(tuple(r) for r in res),
               errors, not_identified(errors, prior))


@dataclass(frozen=True)
class HeldOut:
    label: str
    errors: dict[tuple[str, str], float]  # (metric, stat) -> predicted/measured - 1, fitted without it


def leave_one_out(observations: Sequence[Observation], full: Fit, max_evals: int = 400,
                  mapper: Callable[..., Any] = map,
                  allowance: Optional[Callable[[int], bool]] = None) -> list[HeldOut]:
    """Refit without each run (from the full fit's point) and predict it. Needs 3 runs or more.

    The refits are independent: ``mapper`` (``map`` by default; the command passes a pool's)
    runs :func:`held_out` over the run indices, in order."""
    if len(observations) < 3:
        return []
    return list(mapper(functools.partial(held_out, tuple(observations), full, max_evals=max_evals,
                                         allowance=allowance),
                       range(len(observations))))


def held_out(observations: Sequence[Observation], full: Fit, i: int, max_evals: int = 400,
             allowance: Optional[Callable[[int], bool]] = None) -> HeldOut:
    """Run ``i`` predicted by the fit to the others."""
    obs = observations[i]
    rest = [o for j, o in enumerate(observations) if j != i]
    f = fit(rest, start=full.params, max_evals=max_evals, held=full.held, step=0.15, allowance=allowance,
            identify=False)
    pred = predict(obs, f.params, allowance)
    return HeldOut(obs.label, {(t.metric, t.stat): pred[(t.metric, t.stat)] / t.value_s - 1.0
                               for t in obs.targets})


def error_summary(held_out: Sequence[HeldOut]) -> dict[str, dict[str, float]]:
    """Per metric (ttft, tpot): median and max absolute leave-one-out relative error over every held-out
    statistic (p50, mean, ...) of every run, and ``count``: the runs held out."""
    by: dict[str, list[float]] = {}
    runs: dict[str, int] = {}
    for h in held_out:
        seen = set()
        for (metric, _), e in h.errors.items():
            by.setdefault(metric, []).append(abs(e))
            seen.add(metric)
        for metric in seen:
            runs[metric] = runs.get(metric, 0) + 1
    out = {}
    for metric, errs in by.items():
        s = sorted(errs)
        mid = len(s) // 2
        med = s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
        out[metric] = {"median": med, "max": s[-1], "count": float(runs[metric])}
    return out

