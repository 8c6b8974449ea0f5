"""The event engine (decode-only stretches advanced in one closed-form step) against the
iteration engine (every iteration priced on its own by ``StepCost.iteration_s``): the
same requests, the same TTFT, TPOT, E2E and preemptions, request by request (issue 28).

The iteration engine is the independent reference: it never calls
``sum_components`` or ``decode_components``; each decode-only iteration is one
``step.iteration`` call, the function the flat analysis's worked numbers hold."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from budgetlint.physics import Accelerator, Deployment, Efficiency, ModelShape
from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost
from budgetlint.physics.traffic import Fixed, LogNormal, Uniform

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
LLAMA8 = ModelShape(total_params=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128)
WINDOWED = ModelShape(total_params=9e9, layers=42, hidden_size=3584, attention_heads=16, kv_heads=8,
                      head_dim=256, sliding_window=256, sliding_window_layers=21)
MOE = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                 kv_heads=8, head_dim=128, experts=8, experts_per_token=2, vocab_size=32000)
DRAFT = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)

REL = 1e-9


def _close(a: float, b: float, clock: float) -> bool:
    """Within REL of each other, or of the clock: each time is a difference of two clock
    readings (seconds since the first arrival), so a short queue wait late in a run carries the
    clock's rounding (1e-16 of 20 s is 2e-15 s, a part in 1e9 of a 2 us wait)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= REL * max(abs(a), abs(b)) + 1e-12 * clock


def assert_same_requests(cost, traffic: Traffic, sched: Scheduler, requests: int, seed: int = 0) -> None:
    ev = run(cost, traffic, sched, requests=requests, seed=seed, engine="event")
    it = run(cost, traffic, sched, requests=requests, seed=seed, engine="iteration")
    assert len(ev.records) == len(it.records)
    for a, b in zip(ev.records, it.records):
        assert (a.index, a.replica, a.preemptions, a.rejected, a.output_tokens) == \
               (b.index, b.replica, b.preemptions, b.rejected, b.output_tokens), (a, b)
        for name in ("arrival_s", "queue_s", "ttft_s", "tpot_s", "e2e_s"):
            assert _close(getattr(a, name), getattr(b, name), a.arrival_s + abs(a.e2e_s or 0.0)), (name, a, b)


deployments = st.builds(
    lambda model, devices, overhead, spec, engine_terms, it: Deployment(
        model=model, accelerator=H100, devices=devices, collective_overhead=overhead,
        spec_accepted_tokens_per_pass=spec, draft=DRAFT if spec > 1 else None,
        engine_terms=engine_terms, iteration_overhead_s=it),
    st.sampled_from([LLAMA8, WINDOWED, MOE]), st.sampled_from([1, 2]), st.sampled_from([0.0, 0.2]),
    st.sampled_from([1.0, 2.0, 2.5]), st.booleans(), st.sampled_from([0.0, 1e-3]))

lengths = st.one_of(
    st.integers(1, 600).map(Fixed),
    st.tuples(st.integers(20, 300), st.floats(1.2, 3.0)).map(lambda mp: LogNormal(mp[0], mp[0] * mp[1], maximum=2000)),
    st.tuples(st.integers(1, 200), st.integers(0, 300)).map(lambda lw: Uniform(lw[0], lw[0] + lw[1])),
)


@st.composite
def traffics(draw):
    prompt, output = draw(lengths), draw(lengths)
    kind = draw(st.sampled_from(["poisson", "constant", "gamma", "closed"]))
    hit = draw(st.sampled_from([0.0, 0.5]))
    common = dict(prompt=prompt, output=output, prefix_hit_tokens=hit,
                  prefix_hit_requests=draw(st.sampled_from([1.0, 0.5])) if hit else 1.0)
    if kind == "closed":
        return Traffic(concurrency=draw(st.integers(1, 24)), **common)
    return Traffic(arrival_rate_per_s=draw(st.floats(0.5, 60.0)), arrival=kind,
                   cv=draw(st.sampled_from([0.5, 2.0])) if kind == "gamma" else 1.0, **common)


schedulers = st.builds(
    lambda seqs, tokens, kv, replicas, lb, steps: Scheduler(max_num_seqs=seqs, max_num_batched_tokens=tokens,
                                                             kv_capacity_tokens=kv, replicas=replicas, load_balancer=lb,
                                                             scheduler_steps=steps),
    st.sampled_from([1, 4, 16, 256]), st.sampled_from([64, 512, 8192]),
    st.sampled_from([math.inf, 6000.0, 30000.0]), st.sampled_from([1, 2, 3]),
    st.sampled_from(["round_robin", "least_loaded"]), st.sampled_from([1, 1, 4, 9]))


# no shrinking: a failing case is printed as drawn (shrinking one took over five minutes);
# BUDGETLINT_EVENT_EXAMPLES: fewer examples, for benchmarks/mutation.sh's simulator selection
@settings(max_examples=int(os.environ.get("BUDGETLINT_EVENT_EXAMPLES", "200")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(dep=deployments, eff=st.tuples(st.floats(0.3, 1.0), st.floats(0.2, 1.0)), traffic=traffics(),
       sched=schedulers, seed=st.integers(0, 3))
def test_the_event_engine_is_the_iteration_engine(dep: Deployment, eff, traffic: Traffic, sched: Scheduler,
                                                  seed: int) -> None:
    """200 random cases: dense, windowed (a 256-token window: breakpoints inside the stretches),
    MoE, speculative with a draft, 1-2 devices, prefix hits, open and closed loops, KV caches
    small enough to preempt, 1-3 replicas behind either balancer, multi-step blocks of 4 or 9 (issue 25)."""
    cost = RooflineStepCost(dep, Efficiency(*eff))
    assert_same_requests(cost, traffic, sched, requests=40, seed=seed)


def test_preemptions_happen_and_agree() -> None:
    """A case that certainly preempts (32 users of 2,000 + 2,000 tokens in a 20,000-token cache):
    the property test's agreement is not only on easy runs."""
    cost = RooflineStepCost(Deployment(model=LLAMA8, accelerator=H100), Efficiency(0.7, 0.5))
    traffic = Traffic(prompt=Fixed(2000), output=Fixed(2000), concurrency=16)
    sched = Scheduler(kv_capacity_tokens=20_000)
    ev = run(cost, traffic, sched, requests=40, engine="event")
    assert sum(r.preemptions for r in ev.records) > 0
    assert_same_requests(cost, traffic, sched, requests=40)


def test_a_stated_law_by_hand() -> None:
    """One request, 100 prompt tokens, 5 output tokens, law 10 ms + 0 per sequence, prefill
    1 ms/token alone: TTFT 0.1 s (the prefill), E2E 0.1 + 4 x 0.01 s; both engines."""
    cost = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(5), concurrency=1)
    for engine in ("event", "iteration"):
        raw = run(cost, traffic, Scheduler(), requests=3, warmup=0, engine=engine)
        r = raw.records[0]
        assert r.ttft_s == pytest.approx(0.1, rel=1e-12)
        assert r.e2e_s == pytest.approx(0.14, rel=1e-12)


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine must be one of"):
        run(LinearStepCost(0.01), Traffic(concurrency=1), Scheduler(), requests=3, engine="fast")


def test_replicas_in_lockstep_agree_on_a_tied_boundary() -> None:
    """Found by the property test (seed 1): three replicas behind round robin, a closed loop of 18
    users with one prompt length, so the replicas' iterations end at the same instants. Request 13
    finishes on replica 1 at the instant replica 0's iteration ends; the iteration engine commits
    replica 0 first (ties go to the lowest index), so request 18, born of that completion and routed
    to replica 0, waits out one more iteration: its TTFT is two iterations, not one. The event engine
    cut replica 0's run of iterations at the tied boundary and admitted it one iteration early."""
    dep = Deployment(model=LLAMA8, accelerator=H100, devices=1)
    cost = RooflineStepCost(dep, Efficiency(0.392, 0.61))
    traffic = Traffic(prompt=Fixed(256), output=Uniform(111, 387), concurrency=18)
    sched = Scheduler(max_num_seqs=16, max_num_batched_tokens=8192, kv_capacity_tokens=30000.0, replicas=3,
                      load_balancer="round_robin")
    assert_same_requests(cost, traffic, sched, requests=40, seed=1)


def test_the_random_balancer_agrees_in_both_engines() -> None:
    """``random`` (issue 25, ttft25) draws its routes in arrival order, so both engines send every
    request to the same replica and agree on its times: Poisson and closed-loop traffic on 3 replicas."""
    cost = RooflineStepCost(Deployment(model=LLAMA8, accelerator=H100), Efficiency(0.7, 0.5))
    sched = Scheduler(max_num_seqs=16, max_num_batched_tokens=512, kv_capacity_tokens=30000.0, replicas=3,
                      load_balancer="random")
    for traffic in (Traffic(prompt=LogNormal(200, 500, maximum=2000), output=Uniform(20, 200), arrival_rate_per_s=40.0),
                    Traffic(prompt=Fixed(300), output=LogNormal(100, 250, maximum=2000), concurrency=12)):
        assert_same_requests(cost, traffic, sched, requests=300)
