"""Capacity: the highest arrival rate per replica at which every promise holds,
found by bisection over simulations, and the replicas a service rate needs.

1. **Saturation**: one closed-loop simulation with ``max_num_seqs`` users
   (fewer when the KV cache cannot hold that many at the mean lengths: more
   users would only measure preemption thrash) gives the most requests per
   second a replica completes, ``mu``. Above ``mu`` an open queue grows
   without bound, so no percentile promise holds there.
2. **A bracketed search** on ``(0, mu)``: a rate passes when the point
   estimate of every promise at its percentile is within its limit. Every
   simulation uses the same seed, so the same unit inter-arrival gaps and
   lengths are scaled to each rate (common random numbers): the pass/fail
   curve is then nearly monotone. The bracket starts from what is known (a
   simulation at the declared rate, a request alone: the flat estimate);
   each next rate is where the worst promise's ratio to its limit, on a line
   in ``rate / (mu - rate)`` through the two points nearest the limit, reaches
   1, kept ``0.45 rel_tol mu`` inside the bracket, so an accurate guess closes
   it in two simulations (bisection when no two points serve). It stops when
   the bracket is narrower than ``rel_tol`` of ``mu`` or after
   ``max_simulations`` in all (10 by default); a bracket ``[0, hi]`` that
   narrow first tries :data:`LOW_PROBE_SHARE` of ``mu`` (nothing held yet:
   before saying no rate holds), and, when that holds, closes to ``rel_tol``
   of ``hi``.
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

from .load_stats import TAIL_FLOOR, SimulationResult, PercentilePromise, glance, percentile_label, summarise
from .serving_sim import Scheduler, Traffic, kept_for_lengths, run
from .step_cost import StepCost
from budgetlint.text import numbers

DEFAULT_REQUESTS = 2000
MAX_SIMULATIONS = 10
#: where the search looks, as a share of the saturation rate, before it says no rate holds a promise:
#: at 1 % of mu requests rarely share the engine (M/G/1: the mean wait is rho / (1 - rho) ~ 1 % of a
#: service time), so what breaks there is the lengths' own tail, not queueing
LOW_PROBE_SHARE = 0.01
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


#: a simulation's requests settle its promises when each percentile's interval is wholly on one
#: side of its limit and at most this share of the point estimate's distance to it (1: narrower than
#: the distance)
INTERVAL_SHARE = 1.0


def settled(result: SimulationResult, promises: Sequence[PercentilePromise],
            share: float = INTERVAL_SHARE) -> tuple[bool, str]:
    """Whether more requests could change what the simulation says of any promise (sample size
    by need): (settled, why in words). Each promise's 95 % interval must lie wholly on one side
    of its limit and be at most ``share`` of the point estimate's distance to it."""
    for pr in promises:
        iv = result.interval.get(pr.key)
        point = result.predicted[pr.metric].get(percentile_label(pr.percentile))
        if iv is None or point is None or not all(math.isfinite(v) for v in (iv[0], iv[1], point)):
            return False, f"the {pr.key} interval is unbounded after {numbers.number(result.requests)} requests"
        lo, hi = iv
        if (lo <= pr.limit_s <= hi) or (hi - lo) > share * abs(point - pr.limit_s):
            return False, f"the {pr.key} interval was too close to its promise after {numbers.number(result.requests)} requests"
    return True, (f"{numbers.number(result.requests)} requests: every promise's 95 % interval is narrower than "
                  f"{numbers.percent(share)} of its distance to the promise")


# TAIL_FLOOR: the least tail a checkpoint of a run is read with (defined in load_stats, imported above)


def tail_enough(result: SimulationResult, promises: Sequence[PercentilePromise]) -> bool:
    """Whether ``result`` has :data:`TAIL_FLOOR` measured requests beyond every promise's percentile."""
    return all(result.requests * (1.0 - pr.percentile / 100.0) >= TAIL_FLOOR - 1e-9 for pr in promises)


def steady(result: SimulationResult, rounds: float) -> bool:
    """Whether the measured requests turn the system's content over ``rounds`` times (Little's
    law: the mean number in the system, read off the run itself; issue 25's steady state)."""
    in_system = result.mean_in_system
    return math.isfinite(in_system) and result.requests >= rounds * in_system


def _broken(result: SimulationResult, promises: Sequence[PercentilePromise]) -> Optional[str]:
    for pr in promises:
        if not result.promises_met.get(pr.key, False):
            return pr.key
    if result.rejected:
        return "rejected"
    return None


def saturation_users(traffic: Traffic, scheduler: Scheduler) -> int:
    """The users of a replica with every slot busy: ``max_num_seqs`` (at most
    :data:`MAX_SATURATION_USERS`), but no more than the KV cache holds at the mean lengths
    (more would only measure preemption thrash, not the throughput a queue in front gets)."""
    per_seq = max(1.0, traffic.prompt.mean + traffic.output.mean)
    users = min(scheduler.max_num_seqs, MAX_SATURATION_USERS)
    if math.isfinite(scheduler.kv_capacity_tokens):
        users = max(1, min(users, int(scheduler.kv_capacity_tokens // per_seq)))
    return users


#: lengths drawn to take the moments the closed form needs (seeded: the same every call)
MOMENT_SAMPLES = 1000


@dataclass(frozen=True)
class SteadyState:
    """The closed form of a replica with every slot busy (:func:`saturation`), per iteration."""

    request_per_s: float  # mu
    requests_per_iteration: float  # r: prefills begun (= requests completed) per iteration
    decodes: float  # d: decodes per iteration
    iteration_s: float  # the mean iteration
    bound_by: str  # "slots" (max_num_seqs or the KV cache) or "tokens" (max_num_batched_tokens)


def steady_state(cost: StepCost, traffic: Traffic, scheduler: Scheduler, *, seed: int = 0) -> SteadyState:
    """The saturation throughput in closed form: a closed loop of :func:`saturation_users`
    users ``U`` at steady state, counted per iteration.

    A request prefills its ``P_new`` new prompt tokens (the prefix cache's share left out) in
    ``q = E[ceil(P_new / (M - d k))]`` iterations (the budget ``M`` less what the decodes take;
    ``q`` and ``d`` found together in three rounds), then
    takes ``n = (O - 1) / a`` decode iterations (the prefill's iteration gives its first
    token; ``a`` tokens per pass). With ``r`` requests begun (and ended) per iteration, Little's
    law per iteration gives ``d = r n`` decodes and ``r q`` prefilling slots; the slots hold
    ``d + r q <= U`` and the budget ``d k + r P_new <= M`` (``k`` budget tokens a decode
    takes), so ``r = min(U / (n + q), M / (n k + P_new))``. The decodes hold the context a
    sequence has on average over its decode iterations, ``E[n (P + O / 2)] / E[n]``. The
    iteration cost is the step cost's own: with ``r <= 1`` a share ``r`` of the iterations
    carry one prompt and ``d + r - 1`` decodes, the rest ``d + r`` decodes only; with ``r > 1`` every
    iteration carries ``floor(r)`` or ``floor(r) + 1`` prompts (the mean cost interpolated).
    Then ``mu = r / t``. The means are the length distributions' own; the context's weighting and
    ``q`` come from :data:`MOMENT_SAMPLES` seeded draws.

    An engine without chunked prefill (``scheduler.chunked_prefill`` False) has its own shape,
    :func:`_steady_unchunked` (``r`` and ``t`` then per decode iteration, its prompt-only
    iterations counted in ``t``). The discrete-event simulation of the same closed loop reaches
    this after its start-up transient (every user arriving at once) has passed:
    tests/physics/test_saturation_closed_form.py, tests/physics/test_unchunked_saturation.py."""
    import random

    users = saturation_users(traffic, scheduler)

    def draw() -> list:
        rng = random.Random(f"budgetlint:{seed}:saturation")
        return [[int(traffic.prompt.sample(rng)) for _ in range(MOMENT_SAMPLES)],
                [max(1, int(traffic.output.sample(rng))) for _ in range(MOMENT_SAMPLES)],
                traffic.prompt, traffic.output]  # the distributions kept alive: an Empirical's key is its id

    # the draws kept with the simulator's (budgets of the same lengths, whatever their deployment and
    # rate, draw the same: issue 28)
    ps, os_, _, _ = kept_for_lengths(traffic, ("saturation", seed), draw, MOMENT_SAMPLES)
    a = float(cost.tokens_per_pass) or 1.0
    k = max(1, int(cost.spec_tokens))
    budget = float(scheduler.max_num_batched_tokens)
    hit = traffic.prefix_hit_tokens * traffic.prefix_hit_requests
    # the means are the distributions' own (1,000 draws of a lognormal reply with p95 2.5x its
    # mean scatter 3 %); the draws give the context's weighting and the prefill's iterations
    p_mean = float(traffic.prompt.mean)
    cached = p_mean * hit
    p_new = max(1.0, p_mean - cached)
    ns = [(o - 1) / a for o in os_]
    n = max(0.0, float(traffic.output.mean) - 1.0) / a
    weight = sum(ns)
    context = (sum(ni * (p + o / 2.0) for ni, p, o in zip(ns, ps, os_)) / weight) if weight > 0 else p_mean
    if not scheduler.chunked_prefill:
        return _steady_unchunked(cost, users, n, p_new, cached, context, budget)
    by_tokens = budget / (n * k + p_new) if math.isfinite(budget) else math.inf
    # max(1.0, x) spelled out as x if x > 1.0 else 1.0 (max keeps its first argument unless the second is
    # larger: the same values, ints staying ints), here and in q's sum: 1,000 draws, three rounds (issue 28)
    news = [x if x > 1.0 else 1.0 for x in [p * (1.0 - hit) for p in ps]]
    d = 0.0
    longest = max(news)
    for _ in range(3):  # q depends on the budget the decodes leave, d on q: a few rounds settle it
        room = max(1.0, budget - d * k)
        # every prompt in one iteration when the longest fits (x / room <= 1: the sum's 1.0 each)
        q = sum([c if c > 1.0 else 1.0 for c in [math.ceil(x / room) for x in news]]) / len(news) \
            if math.isfinite(room) and longest > room else 1.0
        by_slots = users / (n + q)
        r = min(by_slots, by_tokens)
        d = r * n
    bound_by = "slots" if by_slots <= by_tokens else "tokens"

    def cost_at(decodes: float, prompts: int) -> float:
        b = max(0, int(round(decodes)))
        chunk = min(p_new, budget) if prompts else 0.0
        chunks = [(chunk, cached)] * prompts
        return cost.iteration_s(b, b * context, chunks)

    if r <= 1.0:  # a share r of the iterations carries a prompt (its slot not yet decoding), the rest only decodes
        busy = d + r
        t = r * cost_at(max(busy - 1.0, 0.0), 1) + (1.0 - r) * cost_at(busy, 0)
    else:
        lo = int(math.floor(r))
        f = r - lo
        t = (1.0 - f) * cost_at(d, lo) + (f * cost_at(d, lo + 1) if f > 0 else 0.0)
    mu = r / t if t > 0 else math.inf
    return SteadyState(mu, r, d, t, bound_by)


def _steady_unchunked(cost: StepCost, users: int, n: float, p_new: float, cached: float, context: float,
                      budget: float) -> SteadyState:
    """:func:`steady_state` for an engine without chunked prefill (``Scheduler.chunked_prefill``
    False; serving_sim ``_Replica._plan_whole_prefills``): a finished request's replacement is
    prefilled whole in an iteration of prompts only, before the next decode iteration, so every
    decode iteration carries all ``d = U`` users and ``r = U / n`` of them finish in it. The
    ``N`` that finish in one decode iteration are taken as binomial, ``U`` users each ending with
    chance ``1 / n`` (memoryless: independent replies; one user alternates exactly); they are
    prefilled in ``ceil(N / c)`` prompt-only iterations
    of at most ``c = max(1, floor(M / P_new))`` whole prompts (the token budget ``M``; the first
    prompt always). Per decode iteration ``t = t_decode(U) + E[prefill iterations' cost]`` and
    ``mu = r / t``. With ``n = 0`` (one-token replies) no decode iteration runs: each iteration
    prefills ``min(U, c)`` prompts."""
    per = max(1, int(budget // p_new)) if math.isfinite(budget) else max(1, users)

    def prefill_s(prompts: int) -> float:  # whole prompts, ``per`` to an iteration
        full, rest = divmod(prompts, per)
        t = full * cost.iteration_s(0, 0.0, [(p_new, cached)] * per) if full else 0.0
        return t + (cost.iteration_s(0, 0.0, [(p_new, cached)] * rest) if rest else 0.0)

    if n <= 0.0:
        m = min(users, per)
        t = cost.iteration_s(0, 0.0, [(p_new, cached)] * m)
        return SteadyState(m / t if t > 0 else math.inf, float(m), 0.0, t, "slots")
    d = float(users)
    q = min(1.0, 1.0 / n)  # a decoding user's chance to finish in a given decode iteration
    r = d * q
    # E[prefill_s(N)], N ~ Binomial(U, q): the terms summed until the tail is below 1e-12
    if q >= 1.0:
        t_prefill = prefill_s(users)
    else:
        t_prefill, term, j, tail = 0.0, (1.0 - q) ** users, 0, 1.0
        while j < users and (tail > 1e-12 or j <= r):
            tail -= term
            term *= (users - j) / (j + 1) * q / (1.0 - q)
            j += 1
            t_prefill += term * prefill_s(j)
    t = cost.iteration_s(users, users * context, []) + t_prefill
    return SteadyState(r / t if t > 0 else math.inf, r, d, t, "slots")


def saturation(cost: StepCost, traffic: Traffic, scheduler: Scheduler, *,
               requests: int = DEFAULT_REQUESTS, seed: int = 0,
               allowance: Optional[Callable[[int], bool]] = None) -> float:
    """Completed requests per second of one replica with every slot kept busy: the closed form
    of :func:`steady_state` (``requests`` and ``allowance`` are kept for callers; nothing is
    simulated). Until issue 25 this was a closed-loop simulation of ``3 x users + 10``
    requests: a start-up transient, 30 % under the steady state on an MLPerf B200 Server
    replica (31.4 request/s against 47), which called sustained runs overloaded."""
    return steady_state(cost, traffic, replace(scheduler, replicas=1), seed=seed).request_per_s


def simulated_saturation(cost: StepCost, traffic: Traffic, scheduler: Scheduler, *, requests: int,
                         warmup: Optional[int] = None, seed: int = 0,
                         allowance: Optional[Callable[[int], bool]] = None) -> float:
    """The same closed loop simulated (``requests`` in all, the first ``warmup`` unmeasured):
    what the closed form is checked against."""
    users = saturation_users(traffic, scheduler)
    closed = Traffic(prompt=traffic.prompt, output=traffic.output, concurrency=users,
                     prefix_hit_requests=traffic.prefix_hit_requests,
                     prefix_hit_tokens=traffic.prefix_hit_tokens)
    one = replace(scheduler, replicas=1)
    res = summarise(run(cost, closed, one, requests=requests, warmup=warmup, seed=seed, allowance=allowance), ())
    return res.throughput_request_per_s


def _ratio(result: SimulationResult, promises: Sequence[PercentilePromise]) -> float:
    """How far the worst promise is from its limit at a simulated rate: max predicted / limit
    (inf when requests were rejected or a percentile is missing)."""
    if result.rejected:
        return math.inf
    worst = 0.0
    for pr in promises:
        value = result.predicted[pr.metric].get(percentile_label(pr.percentile))
        if value is None or not math.isfinite(value) or pr.limit_s <= 0:
            return math.inf
        worst = max(worst, value / pr.limit_s)
    return worst


def _log(ratio: float) -> Optional[float]:
    """The chord's f: ``ln(ratio)`` (0 at the limit; None when not finite and positive)."""
    return math.log(ratio) if math.isfinite(ratio) and ratio > 0 else None


def _line(p1: tuple[float, float], p2: tuple[float, float], mu: float) -> Optional[float]:
    """The rate where the line through two (rate, ratio) points reaches ratio 1, in
    ``x = rate / (mu - rate)`` (queueing delays grow about linearly in x: M/G/1's
    ``rho / (1 - rho)``); None when the two do not make a line."""
    (a, ra), (b, rb) = p1, p2
    if not (math.isfinite(ra) and math.isfinite(rb) and 0 <= a < mu and 0 <= b < mu) or ra == rb:
        return None
    xa, xb = a / (mu - a), b / (mu - b)
    if xa == xb:
        return None
    x = xa + (1.0 - ra) * (xb - xa) / (rb - ra)
    return mu * x / (1.0 + x) if x > 0 else 0.0


def capacity(cost: StepCost, traffic: Traffic, scheduler: Scheduler, promises: Sequence[PercentilePromise], *,
             requests: int = DEFAULT_REQUESTS, seed: int = 0, max_simulations: int = MAX_SIMULATIONS,
             rel_tol: float = 0.02, allowance: Optional[Callable[[int], bool]] = None,
             known: Sequence[tuple[float, SimulationResult]] = (),
             alone: Optional[dict[str, float]] = None, mu: Optional[float] = None,
             runner: Optional[Callable[..., object]] = None) -> Capacity:
    """The highest per-replica arrival rate at which every promise holds (module doc).

    ``known``: simulations already run at per-replica rates (the declared rate's, one
    replica): they bracket the search and guide it, without being run again. ``alone``:
    each promise's value for a request alone (promise key -> seconds; the flat estimate),
    ``runner(traffic, scheduler, requests)``: the raw run of a step (default :func:`~.serving_sim.run`
    with ``seed`` and ``allowance``), so a caller can share steps between searches;
    the search's point at rate 0. Each next rate: while nothing has failed, just below
    ``mu`` (queueing delays stay small until near saturation: one simulation there often
    settles it) unless the line through the two highest passes crosses the limit in the
    bracket's lower half; then the chord between the bracket's ends (regula falsi; a
    bisection after two chord steps that moved the same end); always kept ``0.45 x rel_tol x mu`` inside the bracket, so an accurate
    guess closes it in two simulations."""
    if max_simulations < 2:
        raise ValueError("a capacity search needs at least 2 simulations")
    one = replace(scheduler, replicas=1)
    if mu is None:  # ``mu`` given: the caller's saturation run of the same lengths (it has no rate)
        mu = saturation(cost, traffic, scheduler, requests=requests, seed=seed, allowance=allowance)
    sims = 1
    if not (mu > 0 and math.isfinite(mu)):
        return Capacity(0.0, mu, 0.0, sims, None)
    lo, hi = 0.0, mu
    binding: Optional[str] = None
    ratios: list[tuple[float, float]] = []
    if alone is not None and promises and all(pr.key in alone for pr in promises):
        ratios.append((0.0, max(alone[pr.key] / pr.limit_s if pr.limit_s > 0 else math.inf for pr in promises)))
    for rate, res in known:
        if not (0 < rate < mu):
            continue
        ratios.append((rate, _ratio(res, promises)))
        broke = _broken(res, promises)
        if broke is None:
            lo = max(lo, rate)
        elif rate < hi:
            hi, binding = rate, broke
    points: list[tuple[float, dict[str, float]]] = []
    width = rel_tol * mu
    ratio_at = dict(ratios)
    # regula falsi on f = ratio - 1 at the bracket's ends; when two chord steps in a row move
    # the same end (a hockey-stick curve), one bisection: the bracket halves at least every
    # other step
    f_lo = _log(ratio_at[lo]) if lo in ratio_at else None
    f_hi = _log(ratio_at[hi]) if hi in ratio_at else None
    last: Optional[bool] = None
    repeat = False
    probed_low = False
    while sims < max_simulations:
        guess: Optional[float] = None
        low = False
        if hi - lo <= width:
            # nothing held above 0 yet: before saying no rate holds, one step where requests rarely meet
            # (LOW_PROBE_SHARE of mu, below the failing rate), unless a request alone already breaks it
            # (until stop 47 a bracket [0, hi] narrower than rel_tol x mu stopped the search at 0: "no
            # arrival rate holds it", and no replica count fixes it, where rates below hi held)
            if lo > 0 or probed_low or hi <= LOW_PROBE_SHARE * mu or ratio_at.get(0.0, 0.0) >= 1.0:
                break
            probed_low = low = True
            rate = min(LOW_PROBE_SHARE * mu, hi / 2.0)
        elif hi - lo <= 2.0 * width or (repeat and f_hi is not None and f_lo is not None):
            guess = None  # too narrow to aim inside, or the chord moved the same end twice: bisect
        elif f_hi is not None and f_lo is not None and f_hi != f_lo:
            guess = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        elif hi == mu:  # nothing has failed yet: the line through the two highest passes, or the top
            below = sorted((rate, r) for rate, r in ratio_at.items() if rate <= lo)[-2:]
            line = _line(below[0], below[1], mu) if len(below) == 2 else None
            guess = line if line is not None and line < (lo + hi) / 2 else hi
        if not low:  # the low step's rate is set above
            rate = (lo + hi) / 2.0 if guess is None else min(max(guess, lo + 0.45 * width), hi - 0.45 * width)
        # a step is read for its promises alone (load_stats.glance: the same percentiles, intervals and
        # verdicts as summarise, none of the other figures)
        if runner is None:
            res = glance(run(cost, traffic.at_rate(rate), one, requests=requests, seed=seed, allowance=allowance),
                         promises)
        else:  # the caller's run (a cache of raw runs shared by searches of other promises)
            res = glance(runner(traffic.at_rate(rate), one, requests), promises)
        sims += 1
        points.append((rate, {pr.key: res.predicted[pr.metric][percentile_label(pr.percentile)] for pr in promises}))
        r = _ratio(res, promises)
        ratio_at[rate] = r
        f = _log(r)
        broke = _broken(res, promises)
        passed = broke is None
        repeat = last is passed and guess is not None
        if passed:
            lo, f_lo = rate, (min(f, -1e-12) if f is not None else None)
            if low:  # the capacity is far below mu: the bracket is read to rel_tol of its own scale
                width = rel_tol * hi
        else:
            hi, f_hi, binding = rate, (max(f, 1e-12) if f is not None else None), broke
        last = passed
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
