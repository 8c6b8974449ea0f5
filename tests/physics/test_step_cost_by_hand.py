"""physics/step_cost.py worked by hand: the stated linear law, the roofline law's overrides and
decode-term cache, and the KV capacity a replica holds (every figure computed in the comments)."""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import Accelerator, Deployment, ModelShape
from budgetlint.physics.step import decode_components, iteration_step_s
from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost, kv_capacity_tokens

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
# 70e9 parameters at 2 B: 140 GB of weights; K and V x 80 layers x 8 heads x 128 x 2 B = 327,680 B a token
LLAMA70 = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
# a draft: 1e9 parameters (2 GB at 2 B); K and V x 16 layers x 8 heads x 64 x 2 B = 32,768 B a token
DRAFT = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
# MLA: 10 layers x (512 + 64) x 2 B = 11,520 B a token, 20 GB of weights
MLA = ModelShape(total_params=10e9, layers=10, hidden_size=4096, attention_heads=32, head_dim=128,
                 attention="mla", kv_lora_rank=512, qk_rope_head_dim=64)


# ------------------------------------------------------------------ LinearStepCost
@pytest.mark.parametrize("name", ["decode_fixed_s", "decode_per_seq_s", "prefill_fixed_s", "prefill_per_token_s"])
@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_linear_law_refuses_a_negative_or_non_finite_term(name: str, bad: float) -> None:
    kw = {"decode_fixed_s": 0.01, name: bad}
    with pytest.raises(ValueError) as e:
        LinearStepCost(**kw)  # type: ignore[arg-type]
    assert str(e.value) == f"{name} must be a non-negative finite number, got {bad!r}"


def test_linear_law_accepts_zero_terms_and_keeps_them() -> None:
    law = LinearStepCost(0.0, 0.0, 0.0, 0.0)
    assert (law.decode_fixed_s, law.decode_per_seq_s, law.prefill_fixed_s, law.prefill_per_token_s) == (0, 0, 0, 0)
    assert law.tokens_per_pass == 1.0 and law.spec_tokens == 1
    assert LinearStepCost(0.01, tokens_per_pass=2.5).tokens_per_pass == 2.5


def test_linear_law_iterations_by_hand() -> None:
    law = LinearStepCost(0.01, 0.002, 0.05, 1e-4)
    # 3 decodes: 0.01 + 3 x 0.002 = 0.016; chunks of 100 and 50 new tokens: 150 x 1e-4 = 0.015, no fixed
    # prefill cost beside decodes: 0.031
    assert law.iteration_s(3, 999.0, [(100, 0), (50, 20)]) == pytest.approx(0.031, rel=1e-12)
    # prefill alone: 0.05 + 0.015 = 0.065
    assert law.iteration_s(0, 0.0, [(100, 0), (50, 20)]) == pytest.approx(0.065, rel=1e-12)
    assert law.iteration_s(2, 10.0, []) == pytest.approx(0.014, rel=1e-12)  # 0.01 + 2 x 0.002
    assert law.iteration_s(0, 0.0, []) == 0.0  # nothing to do
    # the defaults: no per-sequence, no prefill terms
    assert LinearStepCost(0.01).iteration_s(5, 0.0, [(100, 0)]) == pytest.approx(0.01, rel=1e-12)
    assert LinearStepCost(0.01).iteration_s(0, 0.0, [(100, 0)]) == 0.0


def test_linear_law_decode_terms_are_one_constant_component() -> None:
    terms, breakpoint = LinearStepCost(0.01, 0.002).decode_terms(3, 123.0)
    assert terms == ((pytest.approx(0.016, rel=1e-12), 0.0, 0.0, 0.0),)
    assert breakpoint == math.inf


# ------------------------------------------------------------------ RooflineStepCost
def test_roofline_law_overrides_only_what_is_given() -> None:
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4, iteration_overhead_s=0.003,
                     collective_latency_s=5e-6)
    same = RooflineStepCost(dep)
    assert same.deployment is dep
    a = RooflineStepCost(dep, iteration_overhead_s=0.001)
    assert (a.deployment.iteration_overhead_s, a.deployment.collective_latency_s) == (0.001, 5e-6)
    b = RooflineStepCost(dep, collective_latency_s=1e-6)
    assert (b.deployment.iteration_overhead_s, b.deployment.collective_latency_s) == (0.003, 1e-6)
    c = RooflineStepCost(dep, iteration_overhead_s=0.0, collective_latency_s=0.0)
    assert (c.deployment.iteration_overhead_s, c.deployment.collective_latency_s) == (0.0, 0.0)
    # the fixed part of a step: overhead + collective latency x layers on 4 devices
    assert a.inputs.overhead_s == pytest.approx(0.001 + 5e-6 * 80, rel=1e-12)
    assert b.inputs.overhead_s == pytest.approx(0.003 + 1e-6 * 80, rel=1e-12)
    assert same.inputs.overhead_s == pytest.approx(0.003 + 5e-6 * 80, rel=1e-12)


def test_roofline_law_counts_and_cache() -> None:
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=3,
                     spec_accepted_tokens_per_pass=2.5)
    law = RooflineStepCost(dep)
    assert law.tokens_per_pass == 2.5
    assert law.spec_tokens == 4  # k + 1 tokens of the budget per decode
    assert law.kv_bytes_per_token == 327680.0
    assert law.efficiency.bandwidth == 1.0
    # the iteration is the step's own function, prefill chunks and all
    assert law.iteration_s(3, 3000.0, [(128, 0)]) == iteration_step_s(law.inputs, 3, 3000.0, [(128, 0)])
    # decode terms: cached per batch, each batch its own
    one = law.decode_terms(1, 1000.0)
    two = law.decode_terms(2, 1000.0)
    assert one == decode_components(law.inputs, 1, 1000.0)
    assert two == decode_components(law.inputs, 2, 1000.0)
    assert one != two
    assert law.decode_terms(1, 1000.0) is one
    assert law._windows == ()  # no windowed pass


def test_roofline_law_keys_a_windowed_pass_by_the_side_of_the_window() -> None:
    """A 4-layer model, 2 layers with a 100-token window: below B x 100 summed context the window
    holds everything; above it the windowed layers read a fixed cache. The terms differ."""
    g = ModelShape(total_params=1e9, layers=4, hidden_size=1024, attention_heads=8, kv_heads=8, head_dim=128,
                   sliding_window=100, sliding_window_layers=2)
    law = RooflineStepCost(Deployment(model=g, accelerator=H100))
    assert law._windows == (100,)
    below = law.decode_terms(2, 150.0)  # 150 < 2 x 100
    above = law.decode_terms(2, 250.0)
    assert below == decode_components(law.inputs, 2, 150.0)
    assert above == decode_components(law.inputs, 2, 250.0)
    assert below != above
    assert law.decode_terms(2, 199.0) is below  # the same side: the cached terms
    assert law.decode_terms(2, 200.0) is above  # 200 is not below 2 x 100


def test_roofline_law_cache_is_bounded() -> None:
    law = RooflineStepCost(Deployment(model=LLAMA70, accelerator=H100, devices=4))
    for b in range(1, 4097):
        law.decode_terms(b, 0.0)
    assert len(law._decode) == 4096  # full, not yet cleared
    law.decode_terms(5000, 0.0)
    assert len(law._decode) == 1  # cleared, then the new one kept


# ------------------------------------------------------------------ kv_capacity_tokens
def test_kv_capacity_by_hand() -> None:
    # 4 H100s, 90 % usable less 2 GB: 72 - 2 - 140/4 = 35 GB a device, 140 GB / 327,680 B = 427,246.09
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4)
    assert kv_capacity_tokens(dep, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 427246
    # the deployment's own fraction and reserve by default
    own = Deployment(model=LLAMA70, accelerator=H100, devices=4, memory_usable_fraction=0.9,
                     memory_overhead_bytes=2e9)
    assert kv_capacity_tokens(own) == 427246
    # 100 % and no reserve: 80 - 35 = 45 GB a device, 180 GB / 327,680 = 549,316.4
    assert kv_capacity_tokens(dep) == 549316
    # a given argument wins over the deployment's
    assert kv_capacity_tokens(own, usable_fraction=1.0) == 524902  # 80 - 2 - 35 = 43 GB x 4 / 327,680
    assert kv_capacity_tokens(own, reserve_bytes_per_device=0.0) == 451660  # 72 - 35 = 37 GB x 4 / 327,680


def test_kv_capacity_with_data_and_pipeline_parallel_by_hand() -> None:
    # data parallel 2 of tensor 4 (8 devices): a dense model's weights are held once per rank,
    # 140 GB x 2 / 8 = 35 GB a device; 72 - 2 - 35 = 35 GB x 8 = 280 GB / 327,680 = 854,492.2
    dp = Deployment(model=LLAMA70, accelerator=H100, devices=4, data_parallel=2)
    assert kv_capacity_tokens(dp, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 854492
    # pipeline 2 of tensor 4: 140 / 8 = 17.5 GB a device; 70 - 17.5 = 52.5 GB x 8 = 420 GB -> 1,281,738.3
    pp = Deployment(model=LLAMA70, accelerator=H100, devices=4, pipeline_parallel=2)
    assert kv_capacity_tokens(pp, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 1281738


def test_kv_capacity_with_a_draft_by_hand() -> None:
    # 35 GB a device less the draft's 2 GB / 4 = 34.5 GB; x 4 = 138 GB over 327,680 + 32,768 B a token
    # = 382,856.9
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=3)
    assert kv_capacity_tokens(dep, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 382856
    # the draft at 1 B a parameter: 1 GB / 4 = 0.25 GB; 34.75 x 4 = 139 GB / 360,448 = 385,631.7
    d8 = Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=3,
                    draft_weight_bytes_per_param=1.0)
    assert kv_capacity_tokens(d8, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 385631
    # no lookahead: the draft is not loaded
    off = Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=0)
    assert kv_capacity_tokens(off, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 427246


def test_kv_capacity_of_an_mla_latent_on_every_tensor_rank() -> None:
    # one device: 80 - 20 = 60 GB / 11,520 B = 5,208,333.3
    assert kv_capacity_tokens(Deployment(model=MLA, accelerator=H100)) == 5208333
    # 4 devices: (80 - 5) x 4 = 300 GB over 4 copies of 11,520 B = 46,080 -> 6,510,416.7
    assert kv_capacity_tokens(Deployment(model=MLA, accelerator=H100, devices=4)) == 6510416


def test_kv_capacity_is_zero_when_the_weights_do_not_fit() -> None:
    # one H100: 80 GB < 140 GB of weights
    assert kv_capacity_tokens(Deployment(model=LLAMA70, accelerator=H100)) == 0
    # 2 devices at 87.5 %: 70 - 70 = 0 exactly: nothing left
    two = Deployment(model=LLAMA70, accelerator=H100, devices=2)
    assert kv_capacity_tokens(two, usable_fraction=0.875) == 0
    # a reserve that eats the rest: 80 - 35 - 45 = 0
    assert kv_capacity_tokens(Deployment(model=LLAMA70, accelerator=H100, devices=4),
                              reserve_bytes_per_device=45e9) == 0
    # just above: 1 byte a device x 4 devices is 0 tokens (a floor), 100,000 B x 4 is one token
    assert kv_capacity_tokens(Deployment(model=LLAMA70, accelerator=H100, devices=4),
                              reserve_bytes_per_device=45e9 - 100000) == 1


def test_the_roofline_law_needs_a_compute_peak() -> None:
    bw_only = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12)
    with pytest.raises(ValueError):
        RooflineStepCost(Deployment(model=LLAMA70, accelerator=bw_only, devices=4))


def test_a_windowed_draft_keys_the_cache_too() -> None:
    windowed = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64,
                          sliding_window=64)
    law = RooflineStepCost(Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=windowed, draft_lookahead=2))
    assert law._windows == (64,)
    below, above = law.decode_terms(2, 100.0), law.decode_terms(2, 200.0)  # 100 < 2 x 64 <= 200
    assert below == decode_components(law.inputs, 2, 100.0) and above == decode_components(law.inputs, 2, 200.0)


def test_kv_capacity_with_a_one_token_lookahead() -> None:
    # lookahead 1 loads the draft: as test_kv_capacity_with_a_draft_by_hand, 382,856
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=1)
    assert kv_capacity_tokens(dep, usable_fraction=0.9, reserve_bytes_per_device=2e9) == 382856


def test_kv_capacity_of_a_byte_left_on_each_device() -> None:
    """A toy model: 1,000 parameters at 2 B on 4 devices (500 B each) on 501-byte devices: 1 B free on
    each, 4 B in all; a token's cache is K and V x 1 layer x 1 head x 1 x 1 B = 2 B: 2 tokens."""
    toy = ModelShape(total_params=1000, layers=1, hidden_size=1, attention_heads=1, kv_heads=1, head_dim=1)
    dep = Deployment(model=toy, accelerator=Accelerator(memory_bytes=501, bandwidth_bytes_per_s=1e9,
                                                        compute_flop_per_s={"bf16": 1e12}),
                     devices=4, kv_bytes_per_elem=1.0)
    assert kv_capacity_tokens(dep) == 2
