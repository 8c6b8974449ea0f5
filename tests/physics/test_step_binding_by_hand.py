"""physics/step.iteration's binding worked by hand: the memory side (weights + KV) against the
compute side (linear + attention), bandwidth on a tie. Raw inputs on one device of 1 B/s and
1 FLOP/s, so every term in seconds is the bytes or the FLOP themselves."""

from __future__ import annotations

import pytest

from budgetlint.physics.step import BANDWIDTH, COMPUTE, PassInputs, StepInputs, iteration


def _raw(weights: float, kv_per_token: float, active: float, attention_per_token: float) -> StepInputs:
    target = PassInputs(model=None, weight_bytes_per_param=1.0, active_params=active, kv_full_bytes=kv_per_token,
                        kv_window_bytes=0.0, window=0.0, attention_full_flop=attention_per_token,
                        attention_window_flop=0.0, fixed_weight_bytes=weights)
    return StepInputs(devices=1, bandwidth_bytes_per_s=1.0, compute_flop_per_s=1.0, compute_known=True,
                      compute_precision_key="", compute_peak_flop_per_s=1.0, collective_factor=1.0,
                      lookahead=0, tokens_per_pass=1.0, target=target, draft=None, overhead_s=0.0)


@pytest.mark.parametrize("weights, kv, active, attention, memory, compute, binding", [
    # the KV read makes it bandwidth-bound: 1 + 1 x 4 = 5 s against 2 x 1.5 x 1 = 3 s (the weights
    # alone, 1 s, are below the compute)
    (1.0, 1.0, 1.5, 0.0, 5.0, 3.0, BANDWIDTH),
    # a tie, 2 + 0.5 x 4 = 4 s against 2 x 1 + 0.5 x 4 = 4 s: bandwidth (the docstring's rule)
    (2.0, 0.5, 1.0, 0.5, 4.0, 4.0, BANDWIDTH),
    # the attention makes it compute-bound: 1 + 0.25 x 4 = 2 s against 2 + 0.5 x 4 = 4 s (the linear
    # part alone, 2 s, ties the memory side)
    (1.0, 0.25, 1.0, 0.5, 2.0, 4.0, COMPUTE),
])
def test_the_binding_side_by_hand(weights: float, kv: float, active: float, attention: float, memory: float,
                                  compute: float, binding: str) -> None:
    """One decode (batch 1, no lookahead: 1 token) holding 4 context tokens."""
    t = iteration(_raw(weights, kv, active, attention), 1, 4.0)
    assert (t.memory_s, t.compute_s) == (memory, compute)
    assert t.binding == binding
    assert t.step_s == max(memory, compute)  # overlap 1: the larger side, no overhead


def test_decode_components_on_two_pipeline_stages_by_hand() -> None:
    """LLAMA-70B-like (140 GB of bf16 weights, 327,680 B of KV a token) on 4 H100s x 2 pipeline
    stages (8 devices: 8 x 3.35 TB/s = 2.68e13 B/s), one decode (one micro-batch: the stages pass
    it one after another, x 2) with a draft of 1e9 parameters (2 GB, 32,768 B a token) looking 2
    ahead. At 1,000 context tokens, memory-bound:
    target (140e9 + 327,680 x 1,000) x 2 / 2.68e13 = 0.0104722 s; the draft is not pipelined:
    2 passes x (2e9 + 32,768 x 1,000) / 2.68e13 = 1.51699e-4 s. A prefill chunk of 100 tokens
    after 500 earlier ones beside the decode reads their 327,680 x 500 = 163.84 MB of KV through
    both stages too: (140e9 + 163.84e6 + 327.68e6) x 2 / 2.68e13 = 0.0104844 s (the draft left out)."""
    from budgetlint.physics import Accelerator, Deployment, ModelShape
    from budgetlint.physics.step import decode_components, prefill_load, sum_components

    h100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
    llama = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                       head_dim=128)
    draft = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
    per_bw = 8 * 3.35e12
    inp = StepInputs.of(Deployment(model=llama, accelerator=h100, devices=4, pipeline_parallel=2, draft=draft,
                                   draft_lookahead=2))
    comps, breakpoint_ = decode_components(inp, 1, 1000.0)
    assert breakpoint_ == float("inf")
    target_s = (140e9 + 327680 * 1000) * 2 / per_bw
    draft_s = 2 * (2e9 + 32768 * 1000) / per_bw
    assert [max(c[0] + c[1] * 1000, c[2] + c[3] * 1000) for c in comps] == pytest.approx([target_s, draft_s],
                                                                                           rel=1e-12)
    assert sum_components(comps, 1000.0, 3.0, 1) == pytest.approx(target_s + draft_s, rel=1e-12)
    alone = StepInputs.of(Deployment(model=llama, accelerator=h100, devices=4, pipeline_parallel=2))
    pf = prefill_load(alone, [(100.0, 500.0)])
    assert pf.kv_bytes == 327680 * 500
    comps, _ = decode_components(alone, 1, 1000.0, pf)
    assert sum_components(comps, 1000.0, 1.0, 1) == pytest.approx((140e9 + 163.84e6 + 327.68e6) * 2 / per_bw,
                                                                  rel=1e-12)
