"""physics/step.py's terms on raw inputs counted by hand, and its closed-form sums against a plain
loop (issue 22: mutation testing against tests/physics). The worked-number tests reach the step
through whole deployments; here each term has its own number.

Raw inputs (PassInputs with ``model=None``): a target reading a fixed 4e9 B of weights, 1e9
active parameters, 100 B of KV per context token in full layers and 50 B in windowed ones
(window 10 tokens), decode attention 1,000 / 500 FLOP per context token; a draft reading 4e8 B,
1e8 parameters, 10 B of KV and 100 FLOP per token; 2 devices of 1e12 B/s and 1e14 FLOP/s,
collective overhead c = 20 % (factor 1.25), 2 draft tokens a pass, 1 ms per iteration.
"""

from __future__ import annotations

import math
import random

import pytest

from budgetlint.physics.shapes import ModelShape
from budgetlint.physics.step import (NO_PREFILL, TERM_LABELS, PassInputs, PrefillLoad, StepInputs,
                                     iteration, step_s, sum_lines, sum_components)

TARGET = PassInputs(model=None, weight_bytes_per_param=1.0, active_params=1e9, kv_full_bytes=100.0,
                    kv_window_bytes=50.0, window=10.0, attention_full_flop=1000.0, attention_window_flop=500.0,
                    fixed_weight_bytes=4e9)
DRAFT = PassInputs(model=None, weight_bytes_per_param=1.0, active_params=1e8, kv_full_bytes=10.0,
                   kv_window_bytes=0.0, window=0.0, attention_full_flop=100.0, attention_window_flop=0.0,
                   fixed_weight_bytes=4e8)


def _inputs(**kw) -> StepInputs:
    base = dict(devices=2, bandwidth_bytes_per_s=1e12, compute_flop_per_s=1e14, compute_known=True,
                compute_precision_key="", compute_peak_flop_per_s=1e14, collective_factor=1.25, lookahead=2,
                tokens_per_pass=2.0, target=TARGET, draft=DRAFT, overhead_s=1e-3)
    base.update(kw)
    return StepInputs(**base)


PREFILL = PrefillLoad(tokens=8, attention_flop=2e6, kv_bytes=3e6)


def test_every_term_of_one_iteration() -> None:
    """4 decodes holding 1,000 context tokens in all, 8 prefill tokens beside them: 4 x 3 + 8 = 20
    tokens in the pass.

    weights 4e9 / 2e12 = 2 ms; KV 100 x 1000 + 50 x min(1000, 4 x 10) = 102,000 B plus the prefill's
    3e6 B, over 2e12: 1.551 us; linear 2 x 1e9 x 20 + the draft's prefill 2 x 1e8 x 8 = 4.16e10 FLOP
    over 2e14: 208 us; attention 3 x (1000 x 1000 + 500 x 40) + 2e6 = 5.06e6 FLOP: 25.3 ns.
    Memory binds: collective 0.25 x 2.001551 ms; the draft's step: (4e8 + 10 x 1000) / 2e12 =
    200.005 us (its compute (8e8 + 1e5) / 2e14 = 4 us), x 1.25, twice; + 1 ms."""
    t = iteration(_inputs(), 4, 1000.0, PREFILL)
    assert t.weights_s == pytest.approx(2e-3)
    assert t.kv_s == pytest.approx(3.102e6 / 2e12)
    assert t.linear_s == pytest.approx(4.16e10 / 2e14)
    assert t.attention_s == pytest.approx(5.06e6 / 2e14)
    memory = 2e-3 + 3.102e6 / 2e12
    assert t.memory_s == pytest.approx(memory) and t.compute_s == pytest.approx(4.16e10 / 2e14 + 5.06e6 / 2e14)
    assert t.binding == "bandwidth"
    assert t.collective_s == pytest.approx(memory * 0.25)
    draft_step = (4e8 + 10 * 1000) / 2e12 * 1.25
    assert t.draft_s == pytest.approx(2 * draft_step)
    assert t.overhead_s == 1e-3
    assert t.target_s == pytest.approx(memory * 1.25)
    assert t.step_s == pytest.approx(memory * 1.25 + 2 * draft_step + 1e-3)
    assert step_s(_inputs(), 4, 1000.0, PREFILL) == pytest.approx(t.step_s)
    assert [n for n, _, _ in t.named()] == [n for n, _ in TERM_LABELS]
    assert dict((n, v) for n, _, v in t.named())["kv_s"] == t.kv_s


def test_the_window_caps_the_read_at_batch_times_window() -> None:
    # 4 decodes at 20 context tokens in all: below 4 x 10, the windowed layers read all 20
    t = iteration(_inputs(draft=None, lookahead=0, overhead_s=0.0), 4, 20.0)
    assert t.kv_s == pytest.approx((100 * 20 + 50 * 20) / 2e12)
    assert t.attention_s == pytest.approx((1000 * 20 + 500 * 20) / 2e14)
    assert t.linear_s == pytest.approx(2 * 1e9 * 4 / 2e14)
    assert t.draft_s == 0.0


def test_overlap_adds_the_part_of_the_smaller_side_that_does_not_hide() -> None:
    t = iteration(_inputs(overlap=0.5), 4, 1000.0, PREFILL)
    memory, compute = t.memory_s, t.compute_s
    assert t.roofline_s == pytest.approx(memory + 0.5 * compute)
    assert t.collective_s == pytest.approx((memory + 0.5 * compute) * 0.25)
    # the draft's own step overlaps the same way: (200.005 us + 0.5 x 4.0005 us) x 1.25, twice
    assert t.draft_s == pytest.approx(2 * (200.005e-6 + 0.5 * (8e8 + 1e5) / 2e14) * 1.25)
    none = iteration(_inputs(overlap=0.0), 4, 1000.0, PREFILL)
    assert none.roofline_s == pytest.approx(memory + compute)


def test_compute_binds_when_the_pass_is_wide() -> None:
    # 1,000 decodes x 3 tokens: 2 x 1e9 x 3000 / 2e14 = 30 ms of linear FLOP against 2 ms of weights
    t = iteration(_inputs(draft=None, overhead_s=0.0), 1000, 1000.0)
    assert t.binding == "compute"
    assert t.linear_s == pytest.approx(2 * 1e9 * 3000 / 2e14)
    assert t.collective_s == pytest.approx(t.compute_s * 0.25)


def test_a_prefill_only_iteration_has_no_collective_or_draft_and_an_empty_one_costs_nothing() -> None:
    t = iteration(_inputs(), 0, 0.0, PREFILL)
    assert t.collective_s == 0.0 and t.draft_s == 0.0 and t.overhead_s == 1e-3
    assert t.linear_s == pytest.approx((2 * 1e9 * 8 + 2 * 1e8 * 8) / 2e14)
    empty = iteration(_inputs(), 0, 0.0, NO_PREFILL)
    assert empty.step_s == 0.0 and empty.binding == "bandwidth"


def test_pass_inputs_of_a_model() -> None:
    """4 layers, 2 with a 3-token window, 4 heads of width 2, 2 KV heads, 2 B a KV element:
    2 x 2 x 2 x 2 = 16 B per token and layer; attention 4 x 4 x 2 = 32 FLOP per position and layer."""
    toy = ModelShape(total_params=1000, layers=4, attention_heads=4, kv_heads=2, head_dim=2,
                     sliding_window=3, sliding_window_layers=2)
    p = PassInputs.of(toy, 0.5, 2.0)
    assert (p.kv_full_bytes, p.kv_window_bytes, p.window) == (32, 32, 3)
    assert (p.attention_full_flop, p.attention_window_flop) == (64, 64)
    assert p.active_params == 1000 and p.weight_bytes_per_param == 0.5
    assert p.weights_read_bytes(5) == 500 and p.weights_read_bytes(5) == 500  # the second from the cache
    assert p.kv_bytes_at(10) == 32 * 10 + 32 * 3 and p.kv_bytes_at(2) == 32 * 2 + 32 * 2
    bound = PassInputs.of(toy, 0.5, 2.0, attention=False)
    assert (bound.attention_full_flop, bound.attention_window_flop) == (0, 0)
    assert TARGET.weights_read_bytes(12345) == 4e9  # raw inputs: a fixed read
    s = _inputs()
    assert s.spec_tokens == 3
    assert s.kv_bytes_per_sequence(1000) == 100 * 1000 + 50 * 10 + 10 * 1000


def _brute(components, start, growth, count):
    total = 0.0
    for j in range(count):
        x = start + growth * j
        for c in components:
            floor_per = c[3] if len(c) > 3 else 0.0
            total += max(c[0] + c[1] * x, c[2] + floor_per * x)
    return total


def test_line_sum() -> None:
    # a component on the line 0 for j < 3, then 5 + 2 j: over 5 iterations (5 + 2 x 3) + (5 + 2 x 4) = 24
    assert sum_lines([(True, 0.0, 0.0, 5.0, 2.0, 3)], 5) == 24
    # crossing at or after the run's end: the first line alone, 3 x 5 + 2 x (0 + 1 + 2) = 21
    assert sum_lines([(True, 5.0, 2.0, 9.0, 9.0, 3)], 3) == 21 == sum_lines([(True, 5.0, 2.0, 9.0, 9.0, 4)], 3)
    # one line throughout (not crossed): 3 x 5 + 2 x 3 = 21; a flat one 3 x 5
    assert sum_lines([(False, 5.0, 2.0, 0.0, 0.0, 0)], 3) == 21 and sum_lines([(False, 5.0, 0.0, 0.0, 0.0, 0)], 3) == 15


@pytest.mark.parametrize("components", [
    [(10.0, 1.0, 20.0, 0.0)],     # memory overtakes a flat compute floor at X = 10
    [(20.0, 0.0, 10.0, 1.0)],     # compute overtakes memory at X = 10
    [(10.0, 1.0, 10.0, 1.0)],     # equal lines
    [(10.0, 1.0, 15.0, 1.0)],     # parallel, compute above
    [(15.0, 1.0, 10.0, 1.0)],     # parallel, memory above
    [(10.0, 1.0, 20.0)],          # a three-number component: flat floor
    [(0.0, 2.0, 12.0, 0.5), (3.0, 0.0, 0.0, 0.25), (1.0, 0.0, 0.0, 0.0)],
])
@pytest.mark.parametrize("start,growth", [(0.0, 1.0), (4.0, 2.0), (10.0, 1.0), (9.5, 0.5)])
def test_sum_components_is_the_loop(components, start: float, growth: float) -> None:
    for count in (0, 1, 2, 5, 6, 7, 11, 30):
        assert sum_components(components, start, growth, count) == pytest.approx(
            _brute(components, start, growth, count), rel=1e-12, abs=1e-12), count


def test_sum_components_on_random_lines() -> None:
    rng = random.Random(22)
    for _ in range(300):
        comps = [tuple(rng.choice([0.0, rng.uniform(0, 20), float(rng.randint(0, 20))]) for _ in range(4))
                 for _ in range(rng.randint(1, 3))]
        start, growth, count = float(rng.randint(0, 20)), float(rng.choice([0.5, 1, 3])), rng.randint(0, 25)
        assert sum_components(comps, start, growth, count) == pytest.approx(
            _brute(comps, start, growth, count), rel=1e-9, abs=1e-9)


def test_step_inputs_of_a_deployment() -> None:
    """2 x H100-like devices at 50 % bandwidth and 25 % compute; 1 ms per iteration and 10 us of
    all-reduce latency per layer on more than one device (4 layers: 40 us); c = 0.2: factor 1.25."""
    from budgetlint.physics.shapes import Accelerator, Deployment, Efficiency
    toy = ModelShape(total_params=1000, layers=4, attention_heads=4, kv_heads=2, head_dim=2)
    acc = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=4e12, compute_flop_per_s={"bf16": 1e15})
    dep = Deployment(model=toy, accelerator=acc, devices=2, collective_overhead=0.2, iteration_overhead_s=1e-3,
                     collective_latency_s=1e-5, weight_bytes_per_param=0.5)
    s = StepInputs.of(dep, Efficiency(0.5, 0.25))
    assert s.bandwidth_bytes_per_s == 2e12 and s.compute_flop_per_s == 2.5e14 and s.compute_known
    assert s.compute_precision_key == "bf16" and s.compute_peak_flop_per_s == 1e15
    assert s.collective_factor == pytest.approx(1.25)
    assert s.overhead_s == pytest.approx(1e-3 + 4 * 1e-5)
    assert s.weight_bytes_total == 500 and s.draft is None and s.draft_weight_bytes_total == 0.0
    one = StepInputs.of(Deployment(model=toy, accelerator=acc, devices=1, collective_overhead=0.2,
                                   iteration_overhead_s=1e-3, collective_latency_s=1e-5))
    assert one.collective_factor == 1.0 and one.overhead_s == 1e-3  # neither on one device
    no_fp8 = Deployment(model=toy, accelerator=acc, compute_precision="fp4")
    no_peak = Deployment(model=toy, accelerator=Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=4e12,
                                                            compute_flop_per_s={}))
    unknown = StepInputs.of(no_peak)
    assert unknown.compute_known is False and unknown.compute_flop_per_s == math.inf
    assert unknown.compute_peak_flop_per_s is None and unknown.compute_precision_key == ""
    with pytest.raises(ValueError, match="no compute peak"):
        StepInputs.of(no_peak, require_compute=True)
    assert StepInputs.of(no_fp8).compute_precision_key == "bf16"  # fp4 falls back to the bf16 units
