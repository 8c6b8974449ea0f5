"""physics/analysis.py: the plain dict and the pickled form (a ``--jobs`` worker sends analyses
to the parent), worked by hand."""

from __future__ import annotations

import pickle

import pytest

from budgetlint.physics import Accelerator, Deployment, Edge, ModelShape, Workload, analyse
from budgetlint.physics import analysis as analysis_module

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
LLAMA70 = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
WL = Workload(prompt_tokens=4096, output_tokens=200, concurrency=16)


def _a(concurrency: int = 16):  # type: ignore[no-untyped-def]
    return analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, engine_terms=True),
                   Workload(prompt_tokens=4096, output_tokens=200, concurrency=concurrency))


def test_as_dict_names_the_decode_terms_in_seconds() -> None:
    """Each decode pass carries 16 sequences' tokens and, spread over the 200 replies, the other 15
    sequences' 4,096-token prefills: (16 + 15 x 4096 / 200) x 2 x 70e9 FLOP on 4 x 989 TFLOP/s."""
    a = _a()
    d = a.as_dict()
    assert isinstance(d["decode_terms"], dict)
    assert d["decode_terms"]["linear_s"] == pytest.approx((16 + 15 * 4096 / 200) * 2 * 70e9 / (4 * 989e12), rel=1e-12)
    assert d["decode_terms"] == {name: s for name, _, s in a.decode_terms}
    assert "DECODE_TERMS" not in d and "XXdecode_termsXX" not in d
    assert d["concurrency"] == 16 and d["prompt_tokens"] == 4096


def test_an_analysis_pickles_as_its_values_and_equal_ones_unpickle_to_one() -> None:
    a, b = _a(16), _a(8)
    a2 = pickle.loads(pickle.dumps(a))
    assert a2 == a
    assert pickle.loads(pickle.dumps(a)) is a2  # equal values: the one object
    b2 = pickle.loads(pickle.dumps(b))
    assert b2 == b and b2 != a2 and b2.concurrency == 8
    assert a.__reduce__()[1][0][:2] == (a.devices, a.concurrency)  # the values, in field order
    assert len(analysis_module._UNPICKLED) == 2


def test_the_unpickled_analyses_are_bounded() -> None:
    a = _a()
    blob = pickle.dumps(a)
    filler = {i.to_bytes(2, "big"): a for i in range(4095)}
    analysis_module._UNPICKLED.update(filler)
    pickle.loads(blob)
    assert len(analysis_module._UNPICKLED) == 4096  # 4,095 + 1: not yet full
    other = pickle.dumps(_a(8))
    pickle.loads(other)
    assert len(analysis_module._UNPICKLED) == 1  # full: cleared, then the new one kept


def test_the_prefill_share_a_decode_pass_carries_by_hand() -> None:
    """5 sequences, 4,096-token prompts of which 1,024 come from the prefix cache, 200-token replies:
    each pass carries 4 x 1 / 200 = 0.02 of one prompt's prefill: 3,072 x 0.02 = 61.44 new tokens,
    the cached prefix's KV read 1,024 x 327,680 B x 0.02, and the attention over
    3,072 x 1,024 + 3,072 x 3,073 / 2 position pairs x 4 x 64 x 128 x 80 FLOP, x 0.02."""
    from budgetlint.physics.analysis import _prefill_share
    from budgetlint.physics.step import NO_PREFILL, StepInputs

    inputs = StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4))
    wl = Workload(prompt_tokens=4096, output_tokens=200, concurrency=5, cached_prompt_tokens=1024)
    share = _prefill_share(inputs, wl, 3072.0, 1024.0)
    assert share.tokens == pytest.approx(61.44, rel=1e-12)
    assert share.kv_bytes == pytest.approx(1024 * 327680 * 0.02, rel=1e-12)
    pairs = 3072 * 1024 + 3072 * 3073 / 2
    assert share.attention_flop == pytest.approx(pairs * 4 * 64 * 128 * 80 * 0.02, rel=1e-12)
    alone = Workload(prompt_tokens=4096, output_tokens=200, concurrency=1, cached_prompt_tokens=1024)
    assert _prefill_share(inputs, alone, 3072.0, 1024.0) == NO_PREFILL


@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan")])
def test_a_queue_allowance_must_be_non_negative_and_finite(bad: float) -> None:
    with pytest.raises(ValueError) as e:
        analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4), WL, queue_s=bad)
    assert str(e.value) == f"queue_s must be a non-negative finite number, got {bad!r}"


def test_a_speculative_moe_pass_reads_the_experts_its_k_plus_1_tokens_touch() -> None:
    """A MoE (47e9, 13e9 active, 8 experts, 2 a token: an expert 34e9 / 6, the shared part 5/3 e9)
    verifying 3 draft tokens: one sequence pushes 4 tokens through the target, which touch
    8 x (1 - (6/8)^4) = 5.46875 experts on average. The decode step's bytes: those weights at 2 B
    plus the cache at the mean context 100 + (101 - 1) / 2 = 150 (2 x 32 x 8 x 128 x 2 B a token)."""
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    draft = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
    h200 = Accelerator(memory_bytes=141e9, bandwidth_bytes_per_s=4.8e12, compute_flop_per_s={"bf16": 989e12})
    a = analyse(Deployment(model=moe, accelerator=h200, draft=draft, draft_lookahead=3,
                           spec_accepted_tokens_per_pass=2.0),
                Workload(prompt_tokens=100, output_tokens=101, concurrency=1))
    touched = 8 * (1 - 0.75 ** 4)
    weights = 2 * (5e9 / 3 + touched * 34e9 / 6)
    assert a.decode_bytes_per_step == pytest.approx(weights + 131072 * 150, rel=1e-9)


def test_the_analysis_states_the_kv_bytes_of_a_token() -> None:
    # K and V x 80 layers x 8 heads x 128: 327,680 B at 2 B an element, 163,840 at 1 B
    assert analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4), WL).kv_bytes_per_token == 327680
    assert analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, kv_bytes_per_elem=1.0),
                   WL).kv_bytes_per_token == 163840


def _step(context: float) -> float:
    """One memory-bound decode pass of one sequence on 4 H100s: (140 GB + 327,680 B x L) / 13.4 TB/s."""
    return (140e9 + 327680 * context) / (4 * 3.35e12)


@pytest.mark.parametrize(("accepted", "out"), [(1.0, 11), (2.0, 11), (1.0, 2), (1.0, 10.5)])
def test_the_decode_after_the_first_token_by_hand(accepted: float, out: float) -> None:
    """Reply token j is charged a pass at context 1000 + j, over ``accepted`` tokens a pass; the
    first comes with the prefill, so its pass is dropped. A fractional reply (10.5) is charged as
    round(10.5) = 10 passes scaled by 10.5 / 10. (At one sequence every pass is memory-bound: the
    compute, 2 x 70e9 x 2 tokens / 3.956 PFLOP/s = 71 us, is under the 10.5 ms weight read.)"""
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, spec_accepted_tokens_per_pass=accepted),
                Workload(prompt_tokens=1000, output_tokens=out, concurrency=1))
    count = round(out)
    scale = out / count
    want = sum(_step(1000 + j) for j in range(1, count)) / accepted * scale
    assert a.decode_after_first_s == pytest.approx(want, rel=1e-9)


def test_a_one_token_reply_has_nothing_after_the_first() -> None:
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4), Workload(prompt_tokens=1000, output_tokens=1,
                                                                               concurrency=1))
    assert a.decode_after_first_s == 0.0
    assert a.e2e_s == pytest.approx(a.ttft_s, rel=1e-12)


def test_every_pass_carries_the_prefill_share_the_first_too() -> None:
    """Two sequences, 2-token replies, engine terms: each pass carries 1 x 1 / 2 = half of the other's
    1,000-token prefill, 500 tokens: compute-bound, (2 x 70e9 x 502 + 2,621,440 x 2L +
    0.5 x 2,621,440 x 1000 x 1001 / 2) / 3.956 PFLOP/s, over the memory (140 GB + 2 x 327,680 L)
    / 13.4 TB/s. After the first token: the pass at L = 1001."""
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, engine_terms=True),
                Workload(prompt_tokens=1000, output_tokens=2, concurrency=2))

    def step(c: float) -> float:
        compute = (2 * 70e9 * 502 + 2621440 * 2 * c + 0.5 * 2621440 * 1000 * 1001 / 2) / (4 * 989e12)
        memory = (140e9 + 327680 * 2 * c) / (4 * 3.35e12)
        return max(compute, memory)

    assert step(1001) > (140e9 + 327680 * 2 * 1001) / (4 * 3.35e12)  # compute-bound
    assert a.decode_after_first_s == pytest.approx(step(1001), rel=1e-9)


def test_a_one_token_lookahead_draft_is_charged() -> None:
    """Lookahead 1 loads the draft: its prefill of the 4,096-token prompt on 8 H100s,
    (2 x 1e9 x 4096 + 4 x 32 x 64 x 16 x 4096 x 4097 / 2) / (8 x 989 TFLOP/s) = 1.1744 ms."""
    draft = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=8, draft=draft, draft_lookahead=1), WL)
    want = (2 * 1e9 * 4096 + 4 * 32 * 64 * 16 * 4096 * 4097 / 2) / (8 * 989e12)
    assert a.draft_prefill_s == pytest.approx(want, rel=1e-6)
    assert a.draft_step_s > 0


DRAFT = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)


def test_the_memory_fit_with_a_draft_by_hand() -> None:
    """16 sequences of 4,096 + 200 tokens on 4 H100s (90 % usable, 2 GB reserved a device), a 1e9
    draft (2 GB; 32,768 B a token). Steady context 4,096 + 100 = 4,196, worst 4,296:
      weights 140 GB / 4 = 35 GB; KV 16 x 327,680 x 4,196 / 4 = 5,499,781,120 B;
      draft (2e9 + 16 x 32,768 x 4,196) / 4 = 1,049,978,112 B; required 43,549,759,232 B of 72 GB;
      worst: KV 5,630,853,120, draft 1,063,085,312, required 43,693,938,432;
      sequences that fit: (72 - 35 - 0.5 - 2) GB x 4 = 138 GB over (327,680 + 32,768) x 4,196 B = 91.2
      -> 91 (worst, x 4,296: 89.1 -> 89)."""
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=3,
                     memory_usable_fraction=0.9, memory_overhead_bytes=2e9)
    a = analyse(dep, WL)
    assert a.memory_context_steady_tokens == 4196
    assert a.memory_weight_bytes_per_device == pytest.approx(35e9, rel=1e-12)
    assert a.memory_kv_bytes_per_device == pytest.approx(5499781120, rel=1e-12)
    assert a.memory_draft_bytes_per_device == pytest.approx(1049978112, rel=1e-12)
    assert a.memory_overhead_bytes_per_device == 2e9
    assert a.memory_required_bytes_per_device == pytest.approx(43549759232, rel=1e-12)
    assert a.memory_available_bytes_per_device == pytest.approx(72e9, rel=1e-12)
    assert a.memory_headroom_bytes_per_device == pytest.approx(72e9 - 43549759232, rel=1e-12)
    assert a.memory_kv_worst_bytes_per_device == pytest.approx(5630853120, rel=1e-12)
    assert a.memory_required_worst_bytes_per_device == pytest.approx(43693938432, rel=1e-12)
    assert a.memory_headroom_worst_bytes_per_device == pytest.approx(72e9 - 43693938432, rel=1e-12)
    assert a.memory_fits is True and a.memory_fits_worst is True
    assert (a.memory_max_sequences, a.memory_max_sequences_worst) == (91, 89)
    # without a draft: nothing for it, exactly
    plain = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, memory_usable_fraction=0.9,
                               memory_overhead_bytes=2e9), WL)
    assert plain.memory_draft_bytes_per_device == 0.0
    assert plain.memory_required_bytes_per_device == pytest.approx(35e9 + 5499781120 + 2e9, rel=1e-15)
    assert plain.memory_required_worst_bytes_per_device == pytest.approx(35e9 + 5630853120 + 2e9, rel=1e-15)


def test_no_edge_no_proxy_delay_and_the_prefill_s_parts() -> None:
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=8, draft=DRAFT, draft_lookahead=3), WL)
    assert a.proxy_delay_s == 0.0
    # the prefill: the target's compute-bound prefill + the draft's (test_a_one_token_lookahead_...)
    linear = 2 * 70e9 * 4096
    attention = 4 * 64 * 128 * 80 * (4096 * 4097 / 2)
    draft = (2 * 1e9 * 4096 + 4 * 32 * 64 * 16 * 4096 * 4097 / 2) / (8 * 989e12)
    assert a.prefill_s == pytest.approx((linear + attention) / (8 * 989e12) + draft, rel=1e-6)
    # a speculative pass of one sequence: 2 tokens x 2 x 70e9 FLOP over 4 devices
    spec = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, spec_accepted_tokens_per_pass=2.0),
                   Workload(prompt_tokens=1000, output_tokens=10, concurrency=1))
    assert spec.decode_flop_per_step == pytest.approx(2 * 2 * 70e9 / 4, rel=1e-12)


def test_the_all_to_all_adds_to_the_prefill() -> None:
    """Expert parallel 2 with a 10 us latency: 32 MoE layers x 2 x 10 us = 0.64 ms on top of the
    compute-bound prefill."""
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    a = analyse(Deployment(model=moe, accelerator=H100, devices=1, data_parallel=2, expert_parallel=2,
                           alltoall_latency_s=1e-5), WL)
    assert a.prefill_alltoall_s == pytest.approx(0.00064, rel=1e-12)
    assert a.prefill_binding == "compute"
    assert a.prefill_s == pytest.approx(a.prefill_compute_s + 0.00064, rel=1e-9)


def test_the_analysis_fields_by_hand() -> None:
    """4 H100s at 80 % of the bandwidth and 50 % of the compute; 16 sequences of 4,096-token prompts
    (1,024 cached) and 200-token replies; a 50 ms queue, a 20 ms connection set-up, a 4-token proxy."""
    from budgetlint.physics import Efficiency

    wl = Workload(prompt_tokens=4096, output_tokens=200, concurrency=16, cached_prompt_tokens=1024)
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4), wl, Efficiency(bandwidth=0.8, compute=0.5),
                queue_s=0.05, edge=Edge(connection_setup_s=0.02, proxy_flush_tokens=4))
    assert (a.devices, a.concurrency, a.prompt_tokens, a.cached_prompt_tokens, a.prefill_tokens, a.output_tokens) == (
        4, 16, 4096, 1024, 3072, 200)
    assert (a.accepted_tokens_per_pass, a.draft_lookahead_tokens, a.draft_step_s) == (1.0, 0, 0.0)
    assert (a.efficiency_bandwidth, a.efficiency_compute) == (0.8, 0.5)
    bw, flops = 0.8 * 3.35e12, 0.5 * 989e12
    assert a.bandwidth_effective_bytes_per_s == pytest.approx(bw, rel=1e-12)
    assert a.bandwidth_peak_bytes_per_s == 3.35e12
    assert (a.compute_precision_key, a.compute_known, a.compute_peak_flop_per_s) == ("bf16", True, 989e12)
    assert a.compute_effective_flop_per_s == pytest.approx(flops, rel=1e-12)
    assert a.ridge_intensity_flop_per_byte == pytest.approx(flops / bw, rel=1e-12)
    assert a.weight_bytes == 140e9 and a.weight_bytes_touched_per_step == pytest.approx(140e9, rel=1e-12)
    assert a.kv_bytes_per_sequence_final == pytest.approx(327680 * 4296, rel=1e-12)
    mean = 4096 + 199 / 2
    assert a.decode_context_mean_tokens == mean
    # the roofline picture, per device
    dec_flop = 16 * 2 * 70e9 / 4
    dec_bytes = (140e9 + 16 * 327680 * mean) / 4
    assert a.decode_flop_per_step == pytest.approx(dec_flop, rel=1e-12)
    assert a.decode_bytes_per_step == pytest.approx(dec_bytes, rel=1e-12)
    assert a.decode_intensity_flop_per_byte == pytest.approx(dec_flop / dec_bytes, rel=1e-12)
    assert a.decode_attainable_flop_per_s == pytest.approx(dec_flop / dec_bytes * bw, rel=1e-12)  # below the ridge
    lin = 2 * 70e9 * 3072
    attn = 2621440 * (3072 * 1024 + 3072 * 3073 / 2)
    assert (a.prefill_linear_flop, a.prefill_attention_flop) == (pytest.approx(lin, rel=1e-12),
                                                                 pytest.approx(attn, rel=1e-12))
    assert a.prefill_bytes == pytest.approx(35e9, rel=1e-12)
    assert a.prefill_intensity_flop_per_byte == pytest.approx((lin + attn) / 4 / 35e9, rel=1e-12)
    assert a.prefill_attainable_flop_per_s == pytest.approx(flops, rel=1e-12)  # above the ridge
    # the latency's parts
    assert (a.queue_s, a.connection_setup_s) == (0.05, 0.02)
    assert a.proxy_delay_s == pytest.approx(3 / a.pace_token_per_s, rel=1e-12)  # 4 - 1 tokens late
    assert a.tpot_s == pytest.approx(a.decode_s / 200, rel=1e-12)
    assert a.pace_token_per_s == pytest.approx(200 / a.decode_s, rel=1e-12)
    assert a.aggregate_token_per_s == pytest.approx(16 * 200 / a.decode_s, rel=1e-12)
    assert a.e2e_s == pytest.approx(0.05 + a.prefill_s + 0.02 + a.decode_after_first_s, rel=1e-12)
    # a bandwidth-only accelerator: no effective compute stated
    bw_only = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12)
    b = analyse(Deployment(model=LLAMA70, accelerator=bw_only, devices=4), wl)
    assert (b.compute_known, b.compute_peak_flop_per_s, b.compute_effective_flop_per_s) == (False, None, None)


def test_the_decode_pass_at_the_mean_context_by_hand() -> None:
    """One sequence, prompt 1,000, reply 11: the mean context 1,000 + 10 / 2 = 1,005; the pass
    memory-bound (the weights and the cache at 1,005), compute 2 x 70e9 / 3.956 PFLOP/s."""
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4),
                Workload(prompt_tokens=1000, output_tokens=11, concurrency=1))
    assert a.decode_context_mean_tokens == 1005
    assert a.decode_memory_s == pytest.approx(_step(1005), rel=1e-12)
    assert a.decode_compute_s == pytest.approx(2 * 70e9 / (4 * 989e12), rel=1e-12)
    assert a.decode_step_s == pytest.approx(_step(1005), rel=1e-12)
    assert a.decode_pass_s == pytest.approx(_step(1005), rel=1e-12)
    assert a.decode_binding == "bandwidth"
    assert a.decode_s == pytest.approx(sum(_step(1000 + j) for j in range(11)), rel=1e-9)


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_a_reply_crossing_the_window_by_hand(batch: int) -> None:
    """4 layers, 2 of them with a 100-token window (4,096 B a token a layer), on one H100: each
    sequence's pass reads 2 GB of weights, 2 x 4,096 x L of the full layers' cache and
    2 x 4,096 x min(L, 100) of the windowed ones (memory-bound: the compute is 4e9 FLOP / 989 TFLOP/s
    a sequence). A 90-token prompt and a 21-token reply: contexts 90 .. 110 cross the window at 100."""
    g = ModelShape(total_params=1e9, layers=4, hidden_size=1024, attention_heads=8, kv_heads=8, head_dim=128,
                   sliding_window=100, sliding_window_layers=2)
    a = analyse(Deployment(model=g, accelerator=H100), Workload(prompt_tokens=90, output_tokens=21,
                                                                concurrency=batch))

    def step(c: float) -> float:
        return (2e9 + batch * (8192 * c + 8192 * min(c, 100))) / 3.35e12

    assert a.decode_s == pytest.approx(sum(step(90 + j) for j in range(21)), rel=1e-9)
    assert a.decode_after_first_s == pytest.approx(sum(step(90 + j) for j in range(1, 21)), rel=1e-9)


def test_a_draft_step_by_hand() -> None:
    """One sequence, a 1e9 draft proposing 3 tokens a pass: one draft step at the mean context
    1,000 + 10 / 2 reads its 2 GB and 32,768 B x 1,005 of cache over 13.4 TB/s."""
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=DRAFT, draft_lookahead=3,
                           spec_accepted_tokens_per_pass=2.0),
                Workload(prompt_tokens=1000, output_tokens=11, concurrency=1))
    assert a.draft_step_s == pytest.approx((2e9 + 32768 * 1005) / (4 * 3.35e12), rel=1e-9)
    assert a.tpot_s == pytest.approx(a.decode_s / 11, rel=1e-12)


def test_a_draft_prefills_after_the_cached_prefix() -> None:
    """1,024 of the 4,096 prompt tokens cached: the draft prefills 3,072 new tokens attending to the
    1,024 before them too: (2 x 1e9 x 3072 + 131,072 x (3072 x 1024 + 3072 x 3073 / 2)) FLOP on
    8 x 989 TFLOP/s (compute-bound: its 2 GB / 26.8 TB/s is 75 us)."""
    wl = Workload(prompt_tokens=4096, output_tokens=200, concurrency=16, cached_prompt_tokens=1024)
    a = analyse(Deployment(model=LLAMA70, accelerator=H100, devices=8, draft=DRAFT, draft_lookahead=3), wl)
    want = (2 * 1e9 * 3072 + 131072 * (3072 * 1024 + 3072 * 3073 / 2)) / (8 * 989e12)
    assert a.draft_prefill_s == pytest.approx(want, rel=1e-9)
