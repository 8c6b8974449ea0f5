"""The simulator's parts: the iteration cost, the closed-form run of decode
steps, length distributions, arrival processes, percentiles, capacity search."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from budgetlint.physics import (
    ROOFLINE,
    Accelerator,
    Deployment,
    Efficiency,
    ModelShape,
    decode_step,
    kv_bytes_for_context,
    prefill_time,
)
from budgetlint.physics.capacity import capacity, replicas_needed, saturation
from budgetlint.physics.load_stats import PercentilePromise, percentile, sectioned_interval, weighted_percentile
from budgetlint.physics.serving_sim import Scheduler, Traffic
from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost, sum_components
from budgetlint.physics.traffic import Empirical, Fixed, LogNormal, Uniform, lognormal_params, unit_gap_sampler

LLAMA8 = ModelShape(total_params=8.03e9, layers=32, hidden_size=4096, attention_heads=32,
                    kv_heads=8, head_dim=128)
H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
WINDOWED = ModelShape(total_params=9e9, layers=42, hidden_size=3584, attention_heads=16, kv_heads=8,
                      head_dim=256, sliding_window=4096, sliding_window_layers=21)
MOE = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                 kv_heads=8, head_dim=128, experts=8, experts_per_token=2)


# ---------------------------------------------------------------- iteration cost
def test_prefill_of_a_70b_model_by_hand() -> None:
    """physics.md worked number 2: 2,000 tokens at 140 GFLOP each on 989 TFLOP/s ~ 0.28 s;
    causal attention adds 4 x heads x head_dim x layers x (2000 x 2001 / 2) FLOP."""
    m = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8)
    dep = Deployment(model=m, accelerator=H100, weight_bytes_per_param=1.0)
    t = RooflineStepCost(dep).iteration_s(0, 0.0, [(2000, 0)])
    linear = 140e9 * 2000 / 989e12
    assert linear == pytest.approx(0.28, rel=0.02)
    attention = 4 * 64 * 128 * 80 * (2000 * 2001 / 2) / 989e12
    assert t == pytest.approx(linear + attention, rel=1e-9)


@pytest.mark.parametrize("model", [LLAMA8, WINDOWED, MOE], ids=["dense", "windowed", "moe"])
@pytest.mark.parametrize("devices,overhead", [(1, 0.0), (2, 0.1)])
def test_a_decode_only_iteration_is_the_decode_step(model, devices: int, overhead: float) -> None:
    dep = Deployment(model=model, accelerator=H100, devices=devices, collective_overhead=overhead)
    eff = Efficiency(0.7, 0.5)
    cost = RooflineStepCost(dep, eff)
    from budgetlint.physics import moe_params_touched, weight_bytes
    for batch, ctx in ((1, 1000), (16, 3000), (64, 8000), (256, 500)):
        want = decode_step(
            weight_bytes=weight_bytes(moe_params_touched(model, batch), 2.0),
            kv_bytes_per_sequence=kv_bytes_for_context(model, 2.0, ctx), concurrency=batch,
            active_params=float(model.active_params), devices=devices,
            bandwidth_bytes_per_s=3.35e12 * 0.7, compute_flop_per_s=989e12 * 0.5,
            collective_overhead=overhead,
        ).step_s
        assert cost.iteration_s(batch, batch * ctx, []) == pytest.approx(want, rel=1e-9)
        comps, bp = cost.decode_terms(batch, batch * ctx)
        assert sum_components(comps, batch * ctx, batch, 1) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("model", [LLAMA8, MOE], ids=["dense", "moe"])
def test_a_prefill_only_iteration_is_the_prefill_time(model) -> None:
    from budgetlint.physics import attention_flop, moe_params_touched, prefill_flop, weight_bytes
    dep = Deployment(model=model, accelerator=H100, devices=2, collective_overhead=0.2)
    cost = RooflineStepCost(dep, ROOFLINE)
    for new, cached in ((1, 0), (300, 0), (2000, 1000)):
        flop = prefill_flop(float(model.active_params), new, attention_flop(model, new, cached))
        want = prefill_time(flop=flop, weight_bytes=weight_bytes(moe_params_touched(model, new), 2.0),
                            devices=2, compute_flop_per_s=989e12, bandwidth_bytes_per_s=3.35e12).time_s
        got = cost.iteration_s(0, 0.0, [(new, cached)])
        # the chunk also reads the cached prefix's KV, which prefill_time leaves out
        extra = kv_bytes_for_context(model, 2.0, cached) / 2 / 3.35e12 if cached else 0.0
        assert want <= got <= want + extra + 1e-15


def test_a_mixed_iteration_costs_more_than_either_part_and_less_than_both() -> None:
    cost = RooflineStepCost(Deployment(model=LLAMA8, accelerator=H100), Efficiency(0.7, 0.5))
    dec = cost.iteration_s(32, 32 * 2000, [])
    pf = cost.iteration_s(0, 0.0, [(1024, 0)])
    mixed = cost.iteration_s(32, 32 * 2000, [(1024, 0)])
    assert max(dec, pf) < mixed < dec + pf


def test_sum_components_equals_the_loop() -> None:
    rng = random.Random(1)
    for _ in range(200):
        comps = tuple((rng.uniform(0, 1e-2), rng.uniform(0, 1e-6), rng.uniform(0, 3e-2)) for _ in range(2))
        start, growth, count = rng.uniform(0, 1e5), rng.choice([0, 1, 8, 64.5]), rng.randint(0, 500)
        loop = sum(sum(max(f + p * (start + growth * j), fl) for f, p, fl in comps) for j in range(count))
        assert sum_components(comps, start, growth, count) == pytest.approx(loop, rel=1e-9, abs=1e-15)


def test_decode_terms_follow_iteration_cost_across_the_window() -> None:
    """Windowed layers stop growing at the window: the terms change at the breakpoint."""
    cost = RooflineStepCost(Deployment(model=WINDOWED, accelerator=H100), Efficiency(0.7, 0.5))
    batch = 4
    ctx = batch * 4000.0
    comps, bp = cost.decode_terms(batch, ctx)
    assert bp == batch * 4096
    k = int((bp - ctx) // batch)
    loop = sum(cost.iteration_s(batch, ctx + batch * j, []) for j in range(k))
    assert sum_components(comps, ctx, batch, k) == pytest.approx(loop, rel=1e-9)
    comps2, bp2 = cost.decode_terms(batch, bp)
    assert bp2 == math.inf
    loop2 = sum(cost.iteration_s(batch, bp + batch * j, []) for j in range(100))
    assert sum_components(comps2, bp, batch, 100) == pytest.approx(loop2, rel=1e-9)


def test_linear_law() -> None:
    law = LinearStepCost(decode_fixed_s=0.02, decode_per_seq_s=0.001, prefill_fixed_s=0.1,
                         prefill_per_token_s=1e-4)
    assert law.iteration_s(8, 0, []) == pytest.approx(0.028)
    assert law.iteration_s(0, 0, [(1000, 0)]) == pytest.approx(0.2)
    assert law.iteration_s(8, 0, [(1000, 0)]) == pytest.approx(0.028 + 0.1)
    with pytest.raises(ValueError, match="decode_fixed_s"):
        LinearStepCost(decode_fixed_s=-1)


# ---------------------------------------------------------------- traffic
def test_lognormal_by_mean_and_p95() -> None:
    mu, sigma = lognormal_params(300.0, 800.0)
    # closed forms back: mean = exp(mu + s^2/2), p95 = exp(mu + 1.6449 s)
    assert math.exp(mu + sigma * sigma / 2) == pytest.approx(300.0)
    assert math.exp(mu + 1.6448536 * sigma) == pytest.approx(800.0)
    d = LogNormal(300.0, 800.0)
    rng = random.Random(3)
    xs = sorted(d.sample(rng) for _ in range(100_000))
    assert statistics.fmean(xs) == pytest.approx(300.0, rel=0.02)
    assert percentile(xs, 95) == pytest.approx(800.0, rel=0.03)
    with pytest.raises(ValueError, match="must exceed its mean"):
        LogNormal(300.0, 200.0)
    with pytest.raises(ValueError, match="no lognormal"):
        LogNormal(100.0, 1000.0)


def test_uniform_fixed_empirical() -> None:
    rng = random.Random(0)
    assert {Uniform(3, 5).sample(rng) for _ in range(200)} == {3, 4, 5}
    assert Fixed(7).sample(rng) == 7
    e = Empirical((1, 2, 30))
    assert {e.sample(rng) for _ in range(200)} == {1, 2, 30}
    assert e.mean == 11
    with pytest.raises(ValueError):
        Uniform(5, 3)
    with pytest.raises(ValueError):
        Empirical(())


@pytest.mark.parametrize("kind,cv", [("poisson", 1.0), ("constant", 0.0), ("gamma", 0.5), ("gamma", 3.0)])
def test_arrival_gaps_have_unit_mean_and_the_stated_cv(kind: str, cv: float) -> None:
    gap = unit_gap_sampler(kind, cv if kind == "gamma" else 1.0)
    rng = random.Random(9)
    xs = [gap(rng) for _ in range(200_000)]
    m = statistics.fmean(xs)
    assert m == pytest.approx(1.0, rel=0.02)
    assert statistics.pstdev(xs) / m == pytest.approx(cv, abs=0.05 * max(cv, 1))


def test_traffic_and_scheduler_refuse_bad_values() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Traffic(arrival_rate_per_s=1.0, concurrency=2)
    with pytest.raises(ValueError, match="exactly one"):
        Traffic()
    with pytest.raises(ValueError, match="arrival must be"):
        Traffic(arrival_rate_per_s=1.0, arrival="bursty")
    with pytest.raises(ValueError, match="share"):
        Traffic(arrival_rate_per_s=1.0, prefix_hit_tokens=1.5)
    with pytest.raises(ValueError, match="in order"):
        Traffic(arrival_times_s=(2.0, 1.0))
    with pytest.raises(ValueError, match="max_num_seqs"):
        Scheduler(max_num_seqs=0)
    with pytest.raises(ValueError, match="load_balancer"):
        Scheduler(load_balancer="nearest")  # "random" is one since ttft25


# ---------------------------------------------------------------- statistics
def test_percentile_is_numpys_linear_rule() -> None:
    xs = [1.0, 2.0, 3.0, 4.0, 10.0]
    # numpy.percentile(xs, 90) = 4 + 0.6 x 6 = 7.6; p50 = 3; p0 = 1; p100 = 10
    assert percentile(xs, 90) == pytest.approx(7.6)
    assert percentile(xs, 50) == 3.0
    assert percentile(xs, 100) == 10.0
    assert math.isnan(percentile([], 50))


def test_sectioned_interval_covers_a_known_quantile() -> None:
    """iid exponential(1): the true p95 is ln 20 = 2.996; a 95 % interval should cover
    it in about 95 of 100 independent samples (at least 85 here)."""
    rng = random.Random(2)
    covered = 0
    for _ in range(100):
        xs = [rng.expovariate(1.0) for _ in range(2000)]
        _, lo, hi = sectioned_interval(xs, 95)
        covered += lo <= math.log(20) <= hi
    assert covered >= 85


def test_weighted_percentile() -> None:
    assert weighted_percentile([(1.0, 1), (1.0, 2), (8.0, 9)], 50) == 9
    assert weighted_percentile([(9.0, 1), (1.0, 9)], 50) == 1


# ---------------------------------------------------------------- capacity
SERVICE = 0.05 + 0.001 * 100  # one slot: prefill of 100 tokens makes the only token
LAW = LinearStepCost(decode_fixed_s=0.01, prefill_fixed_s=0.05, prefill_per_token_s=0.001)


def test_saturation_of_one_slot_is_one_over_the_service_time() -> None:
    mu = saturation(LAW, Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=1.0),
                    Scheduler(max_num_seqs=1), requests=500)
    assert mu == pytest.approx(1 / SERVICE, rel=1e-6)


def test_capacity_for_a_median_queue_promise_is_half_the_service_rate() -> None:
    """M/G/1: P(wait > 0) = rho, so the median wait is 0 exactly while rho <= 1/2
    (and the p90 wait while rho <= 0.1). A promise of 'no wait' at p50 holds up
    to lam = 0.5 / S."""
    traffic = Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=1.0)
    for pct, rho_max in ((50, 0.5), (90, 0.1)):
        cap = capacity(LAW, traffic, Scheduler(max_num_seqs=1), [PercentilePromise("queue_s", pct, 1e-6)],
                       requests=4000)
        assert cap.simulations <= 10
        assert cap.request_per_s * SERVICE == pytest.approx(rho_max, abs=0.04)
        assert cap.binding == f"queue_s.p{pct}"


def test_capacity_is_zero_when_even_one_request_alone_breaks_the_promise() -> None:
    traffic = Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=1.0)
    cap = capacity(LAW, traffic, Scheduler(max_num_seqs=1), [PercentilePromise("ttft_s", 95, 0.9 * SERVICE)],
                   requests=500)
    assert cap.request_per_s == 0.0


def test_capacity_falls_as_the_promise_tightens() -> None:
    traffic = Traffic(prompt=Uniform(100, 1000), output=Uniform(10, 200), arrival_rate_per_s=1.0)
    law = LinearStepCost(decode_fixed_s=0.01, decode_per_seq_s=0.0005, prefill_fixed_s=0.01,
                         prefill_per_token_s=1e-4)
    sched = Scheduler(max_num_seqs=32)
    loose = capacity(law, traffic, sched, [PercentilePromise("ttft_s", 95, 2.0)], requests=1500)
    tight = capacity(law, traffic, sched, [PercentilePromise("ttft_s", 95, 0.3)], requests=1500)
    assert 0 < tight.request_per_s < loose.request_per_s <= loose.saturation_request_per_s


def test_replicas_needed() -> None:
    assert replicas_needed(10.0, 4.1) == 3
    assert replicas_needed(8.2, 4.1) == 2
    assert replicas_needed(1.0, 4.1) == 1
    assert replicas_needed(1.0, 0.0) is None


def test_a_trace_is_replayed_and_can_be_rescaled() -> None:
    law = LinearStepCost(decode_fixed_s=0.01, prefill_fixed_s=0.05)
    from budgetlint.physics.serving_sim import run
    # three requests far apart: no queue; then three at once on one slot: 0, S, 2S
    t = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=(100.0, 101.0, 102.0, 110.0, 110.0, 110.0))
    raw = run(law, t, Scheduler(max_num_seqs=1), requests=6, warmup=0)
    assert [r.arrival_s for r in raw.records] == [0.0, 1.0, 2.0, 10.0, 10.0, 10.0]
    assert [round(r.queue_s, 9) for r in raw.records] == [0, 0, 0, 0, 0.05, 0.1]
    assert t.trace_rate_per_s == pytest.approx(0.5)
    assert t.at_rate(1.0).arrival_times_s == (0.0, 0.5, 1.0, 5.0, 5.0, 5.0)
