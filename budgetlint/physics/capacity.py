"""Capacity: the highest arrival rate per replica at which every promise holds,
found by bisection over simulations, and the replicas a service rate needs.

1. **Saturation**: one closed-loop simulation with ``max_num_seqs`` users
   (fewer when the KV cache cannot hold that many at the mean lengths: more
   users would only measure preemption thrash) gives the most requests per
   second a replica completes, ``mu``. Above ``mu`` an open queue grows
   without bound, so no percentile promise holds there.
2. **Bisection** on ``(0, mu)``: a rate passes when the point estimate of
   every promise at its percentile is within its limit. Every simulation
   uses the same seed, so the same unit inter-arrival gaps and lengths are
   scaled to each rate (common random numbers): the pass/fail curve is then
   nearly monotone. It stops when the bracket is narrower than ``rel_tol`` of
   ``mu`` or after ``max_simulations`` in all (10 by default).
3. **Replicas needed** for a service rate ``lam``: ``ceil(lam / capacity)``.
   Each replica is tested with Poisson arrivals at the per-replica rate;
   round-robin splitting of a Poisson stream is smoother than Poisson, and
   least-loaded smoother still, so this count errs on the safe side.

A throughput promise is met when ``replicas x capacity`` (the rate the
service sustains with every latency promise held) reaches it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Callable, Optional

from .load_stats import SimulationResult, PercentilePromise, percentile_label, summarise
from .serving_sim import Scheduler, Traffic, run
from .step_cost import StepCost

DEFAULT_REQUESTS = 2000
MAX_SIMULATIONS = 10
#: users of the saturation run at most (its cost grows with them)
MAX_SATURATION_USERS = 4096


@dataclass(frozen=True)
class Capacity:
    """Per replica (request/s)."""

    request_per_s: float  # highest rate found to hold every promise (0 if none)
    saturation_request_per_s: float  # the closed-loop throughput, mu
    failing_request_per_s: float  # lowest rate found to break a promise (mu if none)
    simulations: int
    #: the promise that broke first at ``failing_request_per_s`` (its key), if any
    binding: Optional[str]
    #: each rate the search simulated and what it predicted there: (rate, {promise key: seconds})
    points: tuple[tuple[float, dict[str, float]], ...] = ()


def simulate(cost: StepCost, traffic: Traffic, scheduler: Scheduler,
             promises: Sequence[PercentilePromise] = (), *, requests: int = DEFAULT_REQUESTS,
             seed: int = 0, allowance: Optional[Callable[[int], bool]] = None) -> SimulationResult:
    """Run one simulation and summarise it (:func:`~.serving_sim.run` + :func:`~.load_stats.summarise`);
    ``allowance``: the caller's work budget (:func:`~.serving_sim.run`), here and below."""
    return summarise(run(cost, traffic, scheduler, requests=requests, seed=seed, allowance=allowance), promises)


def _broken(result: SimulationResult, promises: Sequence[PercentilePromise]) -> Optional[str]:
    for pr in promises:
        if not result.promises_met.get(pr.key, False):
            return pr.key
    if result.rejected:
        return "rejected"
    return None


def saturation(cost: StepCost, traffic: Traffic, scheduler: Scheduler, *,
               requests: int = DEFAULT_REQUESTS, seed: int = 0,
               allowance: Optional[Callable[[int], bool]] = None) -> float:
    """Completed requests per second of one replica with every slot kept busy."""
    # as many users as slots, but no more than the KV cache holds at the mean lengths:
    # more would only measure preemption thrash, not the throughput a queue in front gets
    per_seq = max(1.0, traffic.prompt.mean + traffic.output.mean)
    users = min(scheduler.max_num_seqs, MAX_SATURATION_USERS)
    if math.isfinite(scheduler.kv_capacity_tokens):
        users = max(1, min(users, int(scheduler.kv_capacity_tokens // per_seq)))
    closed = Traffic(prompt=traffic.prompt, output=traffic.output, concurrency=users,
                     prefix_hit_requests=traffic.prefix_hit_requests,
                     prefix_hit_tokens=traffic.prefix_hit_tokens)
    one = replace(scheduler, replicas=1)
    res = simulate(cost, closed, one, requests=max(requests, 3 * users + 10), seed=seed, allowance=allowance)
    return res.throughput_request_per_s


def capacity(cost: StepCost, traffic: Traffic, scheduler: Scheduler, promises: Sequence[PercentilePromise], *,
             requests: int = DEFAULT_REQUESTS, seed: int = 0, max_simulations: int = MAX_SIMULATIONS,
             rel_tol: float = 0.02, allowance: Optional[Callable[[int], bool]] = None) -> Capacity:
    """The highest per-replica arrival rate at which every promise holds (module doc)."""
    if max_simulations < 2:
        raise ValueError("a capacity search needs at least 2 simulations")
    one = replace(scheduler, replicas=1)
    mu = saturation(cost, traffic, scheduler, requests=requests, seed=seed, allowance=allowance)
    sims = 1
    if not (mu > 0 and math.isfinite(mu)):
        return Capacity(0.0, mu, 0.0, sims, None)
    lo, hi = 0.0, mu
    binding: Optional[str] = None
    points: list[tuple[float, dict[str, float]]] = []
    while sims < max_simulations and (hi - lo) > rel_tol * mu:
        mid = (lo + hi) / 2.0
        res = simulate(cost, traffic.at_rate(mid), one, promises, requests=requests, seed=seed,
                       allowance=allowance)
        sims += 1
        points.append((mid, {pr.key: res.predicted[pr.metric][percentile_label(pr.percentile)] for pr in promises}))
        broke = _broken(res, promises)
        if broke is None:
            lo = mid
        else:
            hi = mid
            binding = broke
    return Capacity(lo, mu, hi, sims, binding, tuple(sorted(points, key=lambda pt: pt[0])))


def replicas_needed(service_rate_per_s: float, capacity_per_replica: float) -> Optional[int]:
    """``ceil(rate / capacity)``; None when no rate holds the promises (capacity 0)."""
    if not (capacity_per_replica > 0):
        return None
    return max(1, math.ceil(service_rate_per_s / capacity_per_replica - 1e-9))


def load_verdict(limit: float, bound: float, predicted: float, interval_high: float = math.nan) -> str:
    """Verdict of a percentile promise under load, in the words the flat physics uses.

    ``cannot-be-met`` only when the roofline bound (one request alone, 100 % of
    peak, no queue) misses: a simulation never makes a promise impossible,
    and never rescues one the bound rules out. ``at-risk`` when the simulated
    percentile, or the top of its confidence interval, misses. ``met`` otherwise.
    """
    tol = 1 + 1e-9
    if bound > limit * tol:
        return "cannot-be-met"
    if predicted > limit * tol or (not math.isnan(interval_high) and interval_high > limit * tol):
        return "at-risk"
    return "met"
