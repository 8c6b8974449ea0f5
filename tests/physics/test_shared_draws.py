"""The seed's draws shared between runs (issue 28): request i's lengths and the unit gaps of the
arrivals are drawn once per (seed, distributions) and read by every run of the same lengths (a
capacity search's steps, the saturation run, the cap run after the first). A run must be the same
whatever ran before it in the process, and its lengths the seed's own stream."""

from __future__ import annotations

import random

from budgetlint.physics import serving_sim
from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Empirical, Fixed, LogNormal, Uniform

COST = LinearStepCost(0.01, 1e-4, prefill_fixed_s=0.02, prefill_per_token_s=1e-5)
SCHED = Scheduler(max_num_seqs=8, max_num_batched_tokens=2048, kv_capacity_tokens=20_000)
CHAT = dict(prompt=LogNormal(300, 900), output=LogNormal(60, 180), prefix_hit_tokens=0.5, prefix_hit_requests=0.5)


def _fields(raw):
    return [(r.index, r.arrival_s, r.queue_s, r.ttft_s, r.e2e_s, r.prompt_tokens, r.cached_tokens, r.output_tokens,
             r.preemptions, r.rejected) for r in raw.records]


def test_a_run_is_the_same_whatever_ran_before_it() -> None:
    target = Traffic(arrival_rate_per_s=3.0, **CHAT)
    serving_sim._DRAWS.clear()
    alone = _fields(run(COST, target, SCHED, requests=300, seed=4))
    serving_sim._DRAWS.clear()
    # the same lengths without the prefix hits first; then fewer requests (the stream then grows),
    # other rates, a closed loop, another arrival process; and other lengths and another seed
    run(COST, Traffic(arrival_rate_per_s=3.0, prompt=CHAT["prompt"], output=CHAT["output"]), SCHED,
        requests=400, seed=4)
    run(COST, Traffic(arrival_rate_per_s=1.0, **CHAT), SCHED, requests=120, seed=4)
    run(COST, Traffic(concurrency=6, **CHAT), SCHED, requests=200, seed=4)
    run(COST, Traffic(arrival_rate_per_s=3.0, arrival="gamma", cv=2.0, **CHAT), SCHED, requests=150, seed=4)
    run(COST, Traffic(arrival_rate_per_s=3.0, prompt=Fixed(10), output=Fixed(5)), SCHED, requests=500, seed=4)
    run(COST, Traffic(arrival_rate_per_s=3.0, **CHAT), SCHED, requests=500, seed=5)
    assert _fields(run(COST, target, SCHED, requests=300, seed=4)) == alone


def test_the_lengths_are_the_seeds_own_stream() -> None:
    """By hand: one random.Random named by the seed draws prompt, output and (with a share of
    requests hit) the hit, request after request, whatever the arrival rate."""
    prompt, output = Uniform(10, 500), LogNormal(40, 120)
    rng = random.Random("budgetlint:7:lengths")
    want = []
    for _ in range(250):
        p = rng.randint(10, 500)
        o = max(1, int(round(rng.lognormvariate(output._mu, output._sigma))))  # type: ignore[attr-defined]
        cached = min(p, int(round(p * 0.25))) if rng.random() < 0.5 else 0
        want.append((p, cached, o))
    for rate in (0.5, 40.0):  # the second run reads the first's draws
        raw = run(COST, Traffic(arrival_rate_per_s=rate, prompt=prompt, output=output, prefix_hit_tokens=0.25,
                                prefix_hit_requests=0.5),
                  Scheduler(kv_capacity_tokens=1e9), requests=250, warmup=0, seed=7)
        assert [(r.prompt_tokens, r.cached_tokens, r.output_tokens) for r in raw.records] == want


def test_the_gaps_are_the_seeds_own_stream_scaled_by_the_rate() -> None:
    rng = random.Random("budgetlint:3:arrivals")
    gaps = [rng.expovariate(1.0) for _ in range(99)]
    for rate in (2.0, 8.0):
        raw = run(COST, Traffic(arrival_rate_per_s=rate, prompt=Fixed(20), output=Fixed(3)), SCHED,
                  requests=100, warmup=0, seed=3)
        t, want = 0.0, [0.0]
        for g in gaps:
            t = t + g / rate
            want.append(t)
        assert [r.arrival_s for r in raw.records] == want


def test_distributions_that_differ_do_not_share_draws() -> None:
    a = run(COST, Traffic(arrival_rate_per_s=2.0, prompt=Fixed(100), output=Fixed(7)), SCHED, requests=60, seed=1)
    b = run(COST, Traffic(arrival_rate_per_s=2.0, prompt=Fixed(200), output=Fixed(7)), SCHED, requests=60, seed=1)
    assert {r.prompt_tokens for r in a.records} == {100} and {r.prompt_tokens for r in b.records} == {200}
    e1, e2 = Empirical((5, 6, 7)), Empirical((50, 60, 70))  # by identity: equal values or not, never mixed
    r1 = run(COST, Traffic(arrival_rate_per_s=2.0, prompt=e1, output=Fixed(2)), SCHED, requests=60, seed=1)
    r2 = run(COST, Traffic(arrival_rate_per_s=2.0, prompt=e2, output=Fixed(2)), SCHED, requests=60, seed=1)
    assert {r.prompt_tokens for r in r1.records} <= {5, 6, 7} and {r.prompt_tokens for r in r2.records} <= {50, 60, 70}


def test_the_kept_draws_are_bounded() -> None:
    serving_sim._DRAWS.clear()
    for n in range(serving_sim.DRAWS_KEPT + 10):
        run(COST, Traffic(arrival_rate_per_s=2.0, prompt=Fixed(n + 1), output=Fixed(2)), SCHED, requests=10, seed=0)
    assert len(serving_sim._DRAWS) <= serving_sim.DRAWS_KEPT


def test_a_long_run_keeps_nothing_and_draws_the_same(monkeypatch) -> None:
    """Past DRAWS_KEPT_REQUESTS a run draws its own streams and keeps none (a 3,000,000-request
    queueing check must not hold its lengths after it returns): the same requests either way."""
    traffic = Traffic(arrival_rate_per_s=3.0, **CHAT)
    serving_sim._DRAWS.clear()
    kept = _fields(run(COST, traffic, SCHED, requests=100, seed=2))
    assert serving_sim._DRAWS
    serving_sim._DRAWS.clear()
    monkeypatch.setattr(serving_sim, "DRAWS_KEPT_REQUESTS", 50)
    assert _fields(run(COST, traffic, SCHED, requests=100, seed=2)) == kept
    assert serving_sim._DRAWS == {}


def test_a_stateful_length_source_is_drawn_afresh() -> None:
    """A length source outside physics/traffic.py (disaggregated's replay of given lengths keeps an
    iterator) is not shared: each run draws from its own object, as it did before the sharing."""

    class Counting:
        mean = 5.0

        def __init__(self) -> None:
            self.n = 0

        def sample(self, rng: random.Random) -> int:
            self.n += 1
            return self.n

        def __eq__(self, other: object) -> bool:  # equal to any other: a key by value would share them
            return isinstance(other, Counting)

        def __hash__(self) -> int:
            return 0

    serving_sim._DRAWS.clear()
    first = run(COST, Traffic(arrival_rate_per_s=2.0, prompt=Counting(), output=Fixed(2)), SCHED, requests=20,
                warmup=0, seed=0)
    again = Counting()
    again.n = 100
    second = run(COST, Traffic(arrival_rate_per_s=2.0, prompt=again, output=Fixed(2)), SCHED, requests=20,
                 warmup=0, seed=0)
    assert [r.prompt_tokens for r in first.records] == list(range(1, 21))
    assert [r.prompt_tokens for r in second.records] == list(range(101, 121))
