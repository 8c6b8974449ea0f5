"""The simulator with one slot is an M/G/1 queue: checked against queueing theory
written here, independently of the simulator.

* Sample path: with ``max_num_seqs: 1`` every request's queue wait must equal
  the Lindley recursion ``W_{n+1} = max(0, W_n + S_n - A_{n+1})`` fed the same
  arrival times and the service times the stated law gives (so the p95 of
  the waits agrees as well, far inside 5 %).
* Mean: the mean queue wait must equal Pollaczek-Khinchine
  ``lambda E[S^2] / (2 (1 - rho))`` within 3 %. The sampling error of a
  simulated mean wait grows like ``(1 - rho)^-2``: measured over 12 seeds
  of a Lindley recursion, its relative standard deviation is about 1.5 % at
  rho 0.5 with 1e5 requests, 1.3 % at rho 0.8 with 3e5 and 4 % at rho 0.95
  with 3e5 (about 1.2 % with 3e6). The long runs are marked ``slow``.
* Little's law on every run here: time-average number in system (the
  simulator's own counter) = arrival rate x mean time in system, within 2 %.

Service law (LinearStepCost): a request of p prompt tokens and n output
tokens alone takes ``S = a + b p + (n - 1) d``: prefill ``a + b p`` (it makes
the first token), then ``n - 1`` decode steps of ``d``.
"""

from __future__ import annotations

import math
import random

import pytest

from budgetlint.physics.load_stats import PercentilePromise, percentile, summarise
from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed, Uniform

A_S, B_S, D_S = 0.05, 0.001, 0.01
COST = LinearStepCost(decode_fixed_s=D_S, prefill_fixed_s=A_S, prefill_per_token_s=B_S)


def service_s(prompt: int, output: int) -> float:
    return A_S + B_S * prompt + (output - 1) * D_S


def uniform_moments(lo: int, hi: int) -> tuple[float, float]:
    """Mean and variance of a discrete uniform on lo..hi."""
    k = hi - lo + 1
    return (lo + hi) / 2.0, (k * k - 1) / 12.0


# (name, prompt, output, E[S], E[S^2]) -- by hand from the law above
FIXED = ("M/D/1", Fixed(100), Fixed(10), service_s(100, 10), service_s(100, 10) ** 2)
_mp, _vp = uniform_moments(1, 199)
_mo, _vo = uniform_moments(1, 19)
_es = A_S + B_S * _mp + D_S * (_mo - 1)
_vs = B_S ** 2 * _vp + D_S ** 2 * _vo  # prompt and output independent
SPREAD = ("M/G/1", Uniform(1, 199), Uniform(1, 19), _es, _vs + _es ** 2)


def lindley(arrivals: list[float], services: list[float]) -> list[float]:
    waits = [0.0]
    for i in range(1, len(arrivals)):
        waits.append(max(0.0, waits[-1] + services[i - 1] - (arrivals[i] - arrivals[i - 1])))
    return waits


def check_little(raw) -> None:  # type: ignore[no-untyped-def]
    res = summarise(raw)
    lam_w = res.arrival_rate_per_s * res.mean_sojourn_s
    assert res.mean_in_system == pytest.approx(lam_w, rel=0.02), (res.mean_in_system, lam_w)


@pytest.mark.parametrize("case", [FIXED, SPREAD], ids=lambda c: c[0])
@pytest.mark.parametrize("rho", [0.5, 0.8, 0.95])
def test_queue_waits_follow_the_lindley_recursion(case, rho: float) -> None:
    _, prompt, output, es, _ = case
    lam = rho / es
    raw = run(COST, Traffic(prompt=prompt, output=output, arrival_rate_per_s=lam),
              Scheduler(max_num_seqs=1), requests=6000, warmup=0, seed=11)
    recs = sorted(raw.records, key=lambda r: r.index)
    assert len(recs) == 6000
    arrivals = [r.arrival_s for r in recs]
    services = [service_s(r.prompt_tokens, r.output_tokens) for r in recs]
    expected = lindley(arrivals, services)
    got = [r.queue_s for r in recs]
    worst = max(abs(g - e) for g, e in zip(got, expected))
    assert worst < 1e-9 * (1 + arrivals[-1])
    p95_sim = percentile(sorted(got), 95)
    p95_lindley = percentile(sorted(expected), 95)
    assert p95_sim == pytest.approx(p95_lindley, rel=0.05)
    # the service law itself: e2e of a request = its wait + its service time
    assert all(abs(r.e2e_s - r.queue_s - service_s(r.prompt_tokens, r.output_tokens)) < 1e-9
               for r in recs)
    # and the arrivals are Poisson at lam: mean gap 1/lam (sd of the mean ~1.3 %)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert sum(gaps) / len(gaps) == pytest.approx(1 / lam, rel=0.04)
    check_little(run(COST, Traffic(prompt=prompt, output=output, arrival_rate_per_s=lam),
                     Scheduler(max_num_seqs=1), requests=6000, seed=11))


def test_p95_wait_against_an_independent_lindley_run() -> None:
    """Not the same random numbers: the simulator's p95 wait at rho 0.8 against a
    long Lindley run of the test's own (M/D/1), within 5 %."""
    _, prompt, output, es, _ = FIXED
    lam = 0.8 / es
    raw = run(COST, Traffic(prompt=prompt, output=output, arrival_rate_per_s=lam),
              Scheduler(max_num_seqs=1), requests=40000, seed=5)
    sim_p95 = percentile(sorted(r.queue_s for r in raw.records), 95)
    rng = random.Random(12345)
    n = 400000
    t, arrivals = 0.0, []
    for _ in range(n):
        arrivals.append(t)
        t += rng.expovariate(lam)
    waits = lindley(arrivals, [es] * n)[n // 10:]
    ref = percentile(sorted(waits), 95)
    assert sim_p95 == pytest.approx(ref, rel=0.05)


def pk_mean_wait(lam: float, es: float, es2: float) -> float:
    rho = lam * es
    return lam * es2 / (2.0 * (1.0 - rho))


@pytest.mark.parametrize("case", [FIXED, SPREAD], ids=lambda c: c[0])
@pytest.mark.parametrize("rho,requests", [
    (0.5, 100_000), pytest.param(0.8, 300_000, marks=pytest.mark.slow)])
def test_mean_wait_is_pollaczek_khinchine(case, rho: float, requests: int) -> None:
    _, prompt, output, es, es2 = case
    lam = rho / es
    raw = run(COST, Traffic(prompt=prompt, output=output, arrival_rate_per_s=lam),
              Scheduler(max_num_seqs=1), requests=requests, seed=2)
    mean_wait = math.fsum(r.queue_s for r in raw.records) / len(raw.records)
    assert mean_wait == pytest.approx(pk_mean_wait(lam, es, es2), rel=0.03)
    res = summarise(raw, [PercentilePromise("queue_s", 95, 1.0)])
    assert res.busy_fraction == pytest.approx(rho, rel=0.02)  # busy fraction of one slot = rho
    check_little(raw)


@pytest.mark.slow
@pytest.mark.parametrize("case", [FIXED, SPREAD], ids=lambda c: c[0])
def test_mean_wait_is_pollaczek_khinchine_near_saturation(case) -> None:
    """rho 0.95 needs millions of requests for 3 % (module doc): ~1 min each."""
    _, prompt, output, es, es2 = case
    lam = 0.95 / es
    raw = run(COST, Traffic(prompt=prompt, output=output, arrival_rate_per_s=lam),
              Scheduler(max_num_seqs=1), requests=3_000_000, warmup=100_000, seed=2)
    mean_wait = math.fsum(r.queue_s for r in raw.records) / len(raw.records)
    assert mean_wait == pytest.approx(pk_mean_wait(lam, es, es2), rel=0.03)
    check_little(raw)
