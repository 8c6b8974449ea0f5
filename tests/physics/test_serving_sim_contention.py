"""Contention under continuous batching: the p95 questions a flat estimate cannot ask.

Deployment: an 8B dense GQA model (Llama-3.1-8B's shape: 32 layers, 8 KV heads
of 128, 8.03e9 parameters), 16-bit weights and cache, on one device of
3.35 TB/s and 989 TFLOP/s (H100 SXM datasheet), 80 GB, 90 % usable, at 70 %
of bandwidth and 50 % of compute. By hand:

* weights 16.06 GB; one step reads them in 16.06e9 / (0.7 x 3.35e12) = 6.85 ms;
* KV per token 2 x 32 x 8 x 128 x 2 B = 131,072 B, read at 56 us per 1,000
  tokens of context: 1,000 tokens add 0.056 ms to a step;
* KV cache: (72e9 - 16.06e9) / 131,072 = 426,788 tokens.
"""

from __future__ import annotations

import pytest

from budgetlint.physics import REALISTIC_EFFICIENCY, Accelerator, Deployment, ModelShape
from budgetlint.physics.capacity import simulate
from budgetlint.physics.load_stats import PercentilePromise, summarise
from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import RooflineStepCost, kv_capacity_tokens
from budgetlint.physics.traffic import Fixed, Uniform

MODEL = ModelShape(total_params=8.03e9, layers=32, hidden_size=4096, attention_heads=32,
                   kv_heads=8, head_dim=128)
H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12,
                   compute_flop_per_s={"bf16": 989e12})
DEP = Deployment(model=MODEL, accelerator=H100, memory_usable_fraction=0.9)
COST = RooflineStepCost(DEP, REALISTIC_EFFICIENCY)
WEIGHT_STEP_S = 16.06e9 / (0.7 * 3.35e12)
KV_S_PER_TOKEN = 131072 / (0.7 * 3.35e12)
CAP = 426_788


def little(res) -> None:  # type: ignore[no-untyped-def]
    assert res.mean_in_system == pytest.approx(res.arrival_rate_per_s * res.mean_sojourn_s, rel=0.02)


def test_kv_capacity_by_hand() -> None:
    assert kv_capacity_tokens(DEP) == pytest.approx(CAP, abs=2)


def test_solo_pace_is_the_weight_read_plus_the_cache_read() -> None:
    res = simulate(COST, Traffic(prompt=Fixed(1000), output=Fixed(301), concurrency=1),
                   Scheduler(kv_capacity_tokens=CAP), requests=50)
    # 300 decode steps at contexts 1001..1300 (mean 1150.5); TPOT over 301 tokens
    step = WEIGHT_STEP_S + KV_S_PER_TOKEN * 1150.5
    assert res.predicted["tpot_s"]["p50"] == pytest.approx(300 * step / 301, rel=0.005)


def test_batch_8_pace_is_near_solo() -> None:
    solo = simulate(COST, Traffic(prompt=Uniform(500, 1500), output=Uniform(200, 400), concurrency=1),
                    Scheduler(kv_capacity_tokens=CAP), requests=300)
    eight = simulate(COST, Traffic(prompt=Uniform(500, 1500), output=Uniform(200, 400), concurrency=8),
                     Scheduler(kv_capacity_tokens=CAP), requests=600)
    assert eight.batch_size_mean == pytest.approx(8, rel=0.1)
    # 8 sequences add 8 x 1,300 tokens of KV read (~0.6 ms) to a 6.9 ms weight read,
    # and prefills of newcomers share some iterations
    ratio = eight.predicted["tpot_s"]["p50"] / solo.predicted["tpot_s"]["p50"]
    assert 1.0 < ratio < 1.2
    little(eight)


def test_doubling_peak_load_doubles_the_batch_and_p95_pace_falls() -> None:
    traffic = Traffic(prompt=Uniform(500, 1500), output=Uniform(100, 500), arrival_rate_per_s=5.0)
    sched = Scheduler(kv_capacity_tokens=CAP)
    base = simulate(COST, traffic, sched, requests=3000)
    peak = simulate(COST, traffic.at_rate(10.0), sched, requests=3000)
    # twice the arrivals, each staying longer: the batch at least doubles (Little: B = lam x W)
    assert peak.batch_size_mean >= 2.0 * base.batch_size_mean
    assert peak.predicted["tpot_s"]["p95"] > 1.2 * base.predicted["tpot_s"]["p95"]
    assert peak.predicted["tpot_s"]["p50"] > base.predicted["tpot_s"]["p50"]
    assert base.preemptions_per_request == peak.preemptions_per_request == 0
    little(base)
    little(peak)


def test_a_cache_too_small_for_32_long_sequences_preempts_and_p95_collapses() -> None:
    traffic = Traffic(prompt=Fixed(2000), output=Fixed(2000), concurrency=32)
    promises = [PercentilePromise("ttft_s", 95, 2.0), PercentilePromise("tpot_s", 95, 0.02)]
    roomy = simulate(COST, traffic, Scheduler(kv_capacity_tokens=CAP), promises, requests=1500)
    # 32 sequences reach 4,000 tokens each: 128,000 tokens; give the cache 80,000
    tight = simulate(COST, traffic, Scheduler(kv_capacity_tokens=80_000), promises, requests=1500)
    assert roomy.preemptions_per_request == 0
    assert tight.preemptions_per_request > 0.3
    assert tight.predicted["ttft_s"]["p95"] > 5 * roomy.predicted["ttft_s"]["p95"]
    assert tight.predicted["tpot_s"]["p95"] > 1.3 * roomy.predicted["tpot_s"]["p95"]
    assert roomy.slo_attainment == 1.0 and tight.slo_attainment < 0.7
    little(roomy)
    little(tight)


def test_prefix_cache_hits_cut_first_token_time() -> None:
    base = Traffic(prompt=Fixed(3000), output=Fixed(50), arrival_rate_per_s=2.0)
    hit = Traffic(prompt=Fixed(3000), output=Fixed(50), arrival_rate_per_s=2.0, prefix_hit_tokens=0.9)
    a = simulate(COST, base, Scheduler(kv_capacity_tokens=CAP), requests=500)
    b = simulate(COST, hit, Scheduler(kv_capacity_tokens=CAP), requests=500)
    assert b.predicted["ttft_s"]["p50"] < 0.3 * a.predicted["ttft_s"]["p50"]


def test_replicas_share_the_load_and_least_loaded_beats_round_robin_in_the_tail() -> None:
    # 8 slots of ~2.6 s each (310 tokens at ~8 ms): ~3 request/s per replica; load it to ~0.8
    traffic = Traffic(prompt=Uniform(200, 2000), output=Uniform(20, 600), arrival_rate_per_s=2.4)
    one = simulate(COST, traffic, Scheduler(kv_capacity_tokens=CAP, max_num_seqs=8), requests=2000)
    two_rr = simulate(COST, traffic.at_rate(4.8), Scheduler(kv_capacity_tokens=CAP, max_num_seqs=8,
                                                            replicas=2), requests=4000)
    two_ll = simulate(COST, traffic.at_rate(4.8), Scheduler(kv_capacity_tokens=CAP, max_num_seqs=8, replicas=2,
                                                             load_balancer="least_loaded"), requests=4000)
    # round robin halves a Poisson stream into smoother ones: no worse than one replica at half the rate
    assert two_rr.predicted["queue_s"]["p95"] <= 1.1 * one.predicted["queue_s"]["p95"]
    assert two_ll.predicted["queue_s"]["p95"] <= two_rr.predicted["queue_s"]["p95"]
    assert two_rr.busy_fraction == pytest.approx(one.busy_fraction, abs=0.05)
    for r in (one, two_rr, two_ll):
        little(r)


def test_same_seed_same_run_other_seed_other_run() -> None:
    traffic = Traffic(prompt=Uniform(200, 2000), output=Uniform(20, 600), arrival_rate_per_s=8.0,
                      arrival="gamma", cv=2.0)
    a = run(COST, traffic, Scheduler(kv_capacity_tokens=CAP), requests=500, seed=4)
    b = run(COST, traffic, Scheduler(kv_capacity_tokens=CAP), requests=500, seed=4)
    c = run(COST, traffic, Scheduler(kv_capacity_tokens=CAP), requests=500, seed=5)
    assert a == b
    assert a.records != c.records


def test_bursty_arrivals_lengthen_the_queue() -> None:
    sched = Scheduler(kv_capacity_tokens=CAP, max_num_seqs=16)
    kw = dict(prompt=Uniform(200, 2000), output=Uniform(20, 600), arrival_rate_per_s=8.0)
    smooth = simulate(COST, Traffic(arrival="constant", **kw), sched, requests=2000)  # type: ignore[arg-type]
    poisson = simulate(COST, Traffic(**kw), sched, requests=2000)  # type: ignore[arg-type]
    bursty = simulate(COST, Traffic(arrival="gamma", cv=3.0, **kw), sched, requests=2000)  # type: ignore[arg-type]
    assert smooth.predicted["ttft_s"]["p95"] < poisson.predicted["ttft_s"]["p95"] < bursty.predicted["ttft_s"]["p95"]


def test_a_request_larger_than_the_cache_is_rejected_and_counts_against_attainment() -> None:
    traffic = Traffic(prompt=Uniform(100, 3000), output=Fixed(100), arrival_rate_per_s=1.0)
    res = simulate(COST, traffic, Scheduler(kv_capacity_tokens=2000), [PercentilePromise("e2e_s", 95, 60.0)],
                   requests=400)
    assert res.rejected > 0
    assert res.slo_attainment <= 1 - res.rejected / res.requests + 1e-12


def test_speculative_decoding_lifts_the_pace() -> None:
    spec = Deployment(model=MODEL, accelerator=H100, memory_usable_fraction=0.9,
                      spec_accepted_tokens_per_pass=2.5, draft_lookahead=3)
    t = Traffic(prompt=Fixed(500), output=Fixed(400), concurrency=1)
    plain = simulate(COST, t, Scheduler(kv_capacity_tokens=CAP), requests=20)
    fast = simulate(RooflineStepCost(spec, REALISTIC_EFFICIENCY), t, Scheduler(kv_capacity_tokens=CAP), requests=20)
    # no draft model charged: 2.5 tokens per pass of nearly the same cost
    assert fast.predicted["tpot_s"]["p50"] == pytest.approx(plain.predicted["tpot_s"]["p50"] / 2.5, rel=0.05)


def test_summarise_is_pure() -> None:
    raw = run(COST, Traffic(prompt=Fixed(100), output=Fixed(10), arrival_rate_per_s=20.0),
              Scheduler(kv_capacity_tokens=CAP), requests=300)
    assert summarise(raw) == summarise(raw)
