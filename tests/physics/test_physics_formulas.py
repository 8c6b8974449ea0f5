"""Direct tests of the physics core's formulas, expected values by hand."""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import (
    Accelerator,
    Deployment,
    Edge,
    Efficiency,
    ModelShape,
    Workload,
    analyse,
    attention_flop,
    bytes_per_element,
    compute_key,
    compute_peak,
    decode_step,
    evaluate_levers,
    expected_experts_touched,
    kv_bytes_for_context,
    kv_bytes_per_token,
    kv_bytes_summed_over_contexts,
    moe_params_touched,
    proxy_delay_s,
    tpot_from_vllm,
)

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12,
                   compute_flop_per_s={"bf16": 989e12, "fp8": 1979e12, "int8": 1979e12})
LLAMA70 = ModelShape(total_params=70.55e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)


# ------------------------------------------------------------ precision
@pytest.mark.parametrize(
    ("name", "expected"),
    [("fp32", 4), ("bf16", 2), ("FP16", 2), ("fp8", 1), ("int8", 1), ("int4", 0.5), ("fp4", 0.5),
     ("4.5 bit", 4.5 / 8), ("6bit", 0.75), ("3 bits", 0.375)],
)
def test_bytes_per_element(name: str, expected: float) -> None:
    assert bytes_per_element(name) == pytest.approx(expected)


def test_unknown_precision_raises() -> None:
    with pytest.raises(ValueError, match="unknown precision"):
        bytes_per_element("fp7")
    with pytest.raises(ValueError):
        bytes_per_element("0 bit")


def test_compute_keys_and_fallback() -> None:
    assert compute_key("fp16") == "bf16"
    assert compute_key("int4") == "fp4"
    assert compute_key("4.5 bit") == "fp8"
    assert compute_peak(H100.compute_flop_per_s, "fp8") == ("fp8", 1979e12)
    # H100 has no fp4 peak: 4-bit weights are dequantised, fp8 is the next key
    assert compute_peak(H100.compute_flop_per_s, "fp4") == ("fp8", 1979e12)
    # a bf16-only part runs fp8 at bf16
    assert compute_peak({"bf16": 312e12}, "fp8") == ("bf16", 312e12)
    with pytest.raises(ValueError, match="tried"):
        compute_peak({"fp8": 1e15}, "bf16")


# ------------------------------------------------------------ KV cache
def test_kv_gqa_mla_and_window() -> None:
    assert kv_bytes_per_token(LLAMA70, 2.0) == 2 * 80 * 8 * 128 * 2
    dsv3 = ModelShape(total_params=671e9, active_params=37e9, layers=61, hidden_size=7168, attention_heads=128,
                      head_dim=128, attention="mla", kv_lora_rank=512, qk_rope_head_dim=64,
                      experts=256, experts_per_token=8)
    assert kv_bytes_per_token(dsv3, 2.0) == 61 * (512 + 64) * 2
    # gemma-2 like: half of 42 layers use a 4096-token window
    g = ModelShape(total_params=9e9, layers=42, hidden_size=3584, attention_heads=16, kv_heads=8, head_dim=256,
                   sliding_window=4096, sliding_window_layers=21)
    per_layer = 2 * 8 * 256 * 2
    assert kv_bytes_for_context(g, 2.0, 1000) == per_layer * 42 * 1000
    assert kv_bytes_for_context(g, 2.0, 10000) == per_layer * (21 * 10000 + 21 * 4096)


@pytest.mark.parametrize("window", [None, 5, 37, 1000])
@pytest.mark.parametrize(("start", "count"), [(0, 1), (0, 50), (3, 100), (40, 7), (100, 1)])
def test_kv_prefix_sum_matches_brute_force(window: int | None, start: int, count: int) -> None:
    m = ModelShape(total_params=1e9, layers=6, hidden_size=512, attention_heads=8, kv_heads=2,
                   sliding_window=window, sliding_window_layers=3 if window else None)
    brute = sum(kv_bytes_for_context(m, 1.0, start + j) for j in range(count))
    assert kv_bytes_summed_over_contexts(m, 1.0, start, count) == pytest.approx(brute, rel=1e-12)


# ------------------------------------------------------------ MoE
def test_moe_touched_ends_and_middle() -> None:
    # Mixtral-like: 46.7B total, 12.9B active, 8 experts, top-2
    m = ModelShape(total_params=46.7e9, active_params=12.9e9, layers=32, hidden_size=4096, attention_heads=32,
                   kv_heads=8, experts=8, experts_per_token=2)
    assert moe_params_touched(m, 1) == pytest.approx(12.9e9)
    assert moe_params_touched(m, 10_000) == pytest.approx(46.7e9)
    per_expert = (46.7e9 - 12.9e9) / (8 - 2)
    shared = 12.9e9 - 2 * per_expert
    expected4 = shared + per_expert * 8 * (1 - (1 - 2 / 8) ** 4)
    assert moe_params_touched(m, 4) == pytest.approx(expected4)
    assert expected_experts_touched(8, 2, 1) == pytest.approx(2)
    # active < total without expert counts: the active count (lower bound)
    m2 = ModelShape(total_params=10e9, active_params=3e9, layers=8, hidden_size=1024, attention_heads=8)
    assert moe_params_touched(m2, 100) == 3e9


def test_moe_decode_reads_touched_experts() -> None:
    m = ModelShape(total_params=46.7e9, active_params=12.9e9, layers=32, hidden_size=4096, attention_heads=32,
                   kv_heads=8, experts=8, experts_per_token=2)
    dep = Deployment(model=m, accelerator=H100)
    a1 = analyse(dep, Workload(prompt_tokens=0, output_tokens=1, concurrency=1))
    assert a1.weight_bytes_touched_per_step == pytest.approx(2 * 12.9e9)
    assert a1.pace_token_per_s == pytest.approx(3.35e12 / (2 * 12.9e9))
    a64 = analyse(dep, Workload(prompt_tokens=0, output_tokens=1, concurrency=64))
    assert a64.weight_bytes_touched_per_step == pytest.approx(2 * 46.7e9, rel=1e-6)


# ------------------------------------------------------------ decode
def test_decode_compute_bound_and_collective() -> None:
    step = decode_step(weight_bytes=140e9, kv_bytes_per_sequence=0.0, concurrency=512, active_params=70e9,
                       devices=1, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s=989e12)
    assert step.compute_s == pytest.approx(512 * 2 * 70e9 / 989e12)
    assert step.binding == "compute"
    tp = decode_step(weight_bytes=140e9, kv_bytes_per_sequence=0.0, concurrency=1, active_params=70e9,
                     devices=4, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s=989e12, collective_overhead=0.1)
    assert tp.step_s == pytest.approx(140e9 / 4 / 3.35e12 / 0.9)
    one = decode_step(weight_bytes=140e9, kv_bytes_per_sequence=0.0, concurrency=1, active_params=70e9,
                      devices=1, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s=989e12, collective_overhead=0.1)
    assert one.step_s == pytest.approx(140e9 / 3.35e12)  # no overhead on one device


def test_collective_overhead_above_half_is_refused() -> None:
    with pytest.raises(ValueError, match="collective_overhead"):
        Deployment(model=LLAMA70, accelerator=H100, collective_overhead=0.6)


def test_reply_uses_growing_context() -> None:
    dep = Deployment(model=LLAMA70, accelerator=H100)
    wl = Workload(prompt_tokens=2000, output_tokens=600, concurrency=16)
    a = analyse(dep, wl)
    kv_tok = 2 * 80 * 8 * 128 * 2
    # bandwidth-bound throughout, so the exact sum = N x step(mean context)
    mean_ctx = 2000 + 599 / 2
    step = (70.55e9 * 2 + 16 * mean_ctx * kv_tok) / 3.35e12
    assert a.decode_binding == "bandwidth"
    assert a.decode_s == pytest.approx(600 * step)
    assert a.pace_token_per_s == pytest.approx(1 / step)
    assert a.aggregate_token_per_s == pytest.approx(16 / step)
    # the promise arithmetic is TTFT + N / pace; the physical floor of the reply
    # drops the first step (prefill made the first token): decode - step(2000)
    first = (70.55e9 * 2 + 16 * 2000 * kv_tok) / 3.35e12
    assert a.decode_after_first_s == pytest.approx(600 * step - first)
    assert a.e2e_s == pytest.approx(a.ttft_s + 600 / a.pace_token_per_s - first)


def test_reply_sum_with_crossover_matches_brute_force() -> None:
    # small model, big batch: compute binds early, KV bandwidth later
    m = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=16, kv_heads=16, head_dim=128)
    acc = Accelerator(memory_bytes=1e12, bandwidth_bytes_per_s=1e12, compute_flop_per_s={"bf16": 20e12})
    dep = Deployment(model=m, accelerator=acc)
    wl = Workload(prompt_tokens=100, output_tokens=1000, concurrency=64)
    a = analyse(dep, wl)
    kv_tok = 2 * 16 * 16 * 128 * 2
    t_cmp = 64 * 2 * 1e9 / 20e12
    brute = sum(max((2e9 + 64 * (100 + j) * kv_tok) / 1e12, t_cmp) for j in range(1000))
    assert a.decode_s == pytest.approx(brute, rel=1e-12)
    first = (2e9 + 64 * 100 * kv_tok) / 1e12
    last = (2e9 + 64 * 1099 * kv_tok) / 1e12
    assert first < t_cmp < last  # the crossover really is inside the reply


def test_speculative_with_draft_is_charged() -> None:
    draft = ModelShape(total_params=1.24e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
    wl = Workload(prompt_tokens=0, output_tokens=1)
    dep = Deployment(model=LLAMA70, accelerator=H100, weight_bytes_per_param=1.0,
                     spec_accepted_tokens_per_pass=2.53, draft=draft)
    a = analyse(dep, wl)
    assert a.draft_lookahead_tokens == 2  # ceil(2.53) - 1
    target = 70.55e9 / 3.35e12
    draft_step = 1.24e9 / 3.35e12
    assert a.decode_pass_s == pytest.approx(target + 2 * draft_step)
    assert a.pace_token_per_s == pytest.approx(2.53 / (target + 2 * draft_step))
    # the declared lookahead wins
    dep4 = Deployment(model=LLAMA70, accelerator=H100, weight_bytes_per_param=1.0,
                      spec_accepted_tokens_per_pass=2.53, draft=draft, draft_lookahead=4)
    a4 = analyse(dep4, wl)
    assert a4.pace_token_per_s == pytest.approx(2.53 / (target + 4 * draft_step))
    with pytest.raises(ValueError, match="lookahead"):
        Deployment(model=LLAMA70, accelerator=H100, spec_accepted_tokens_per_pass=2.53, draft_lookahead=1)


# ------------------------------------------------------------ prefill
def test_attention_flop_formula() -> None:
    u, c = 500, 1500
    expected = 4 * 64 * 128 * 80 * (u * c + u * (u + 1) / 2)
    assert attention_flop(LLAMA70, u, c) == pytest.approx(expected)
    g = ModelShape(total_params=9e9, layers=4, hidden_size=1024, attention_heads=8, head_dim=128,
                   sliding_window=100, sliding_window_layers=2)
    brute = sum(4 * 8 * 128 * (2 * (c + i + 1) + 2 * min(c + i + 1, 100)) for i in range(u))
    assert attention_flop(g, u, c) == pytest.approx(brute)


def test_prefill_efficiency_and_devices() -> None:
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=2)
    wl = Workload(prompt_tokens=4000, output_tokens=10)
    a = analyse(dep, wl, Efficiency(0.7, 0.5))
    flop = 2 * 70.55e9 * 4000 + 4 * 80 * 64 * 128 * 4000 * 4001 / 2
    assert a.prefill_flop == pytest.approx(flop)
    assert a.prefill_s == pytest.approx(flop / (2 * 989e12 * 0.5))


# ------------------------------------------------------------ latency
def test_tpot_conventions() -> None:
    # 101 tokens, decode 5 s after the first token's arrival in vLLM terms
    tpot_v = 5.0 / 100
    tpot_b = tpot_from_vllm(tpot_v, 101)
    assert tpot_b == pytest.approx(5.0 / 101)
    assert tpot_b * 101 / 100 == pytest.approx(tpot_v)  # the same decode time, over N - 1 tokens


def test_edge_terms() -> None:
    assert proxy_delay_s(1, 20.0) == 0.0
    assert proxy_delay_s(5, 20.0) == pytest.approx(4 / 20)
    dep = Deployment(model=LLAMA70, accelerator=H100)
    wl = Workload(prompt_tokens=100, output_tokens=50)
    plain = analyse(dep, wl, queue_s=0.08)
    edge = analyse(dep, wl, queue_s=0.08, edge=Edge(connection_setup_s=0.05, proxy_flush_tokens=4))
    assert edge.ttft_s == pytest.approx(plain.ttft_s + 0.05 + 3 / plain.pace_token_per_s)
    assert edge.e2e_s == pytest.approx(plain.e2e_s + 0.05)
    assert plain.ttft_s == pytest.approx(0.08 + plain.prefill_s)


# ------------------------------------------------------------ analysis dict
def test_as_dict_keys_carry_units() -> None:
    a = analyse(Deployment(model=LLAMA70, accelerator=H100), Workload(prompt_tokens=10, output_tokens=10))
    d = a.as_dict()
    for key in ("ttft_s", "e2e_s", "pace_token_per_s", "weight_bytes", "kv_bytes_per_token", "prefill_flop",
                "decode_step_s", "memory_required_bytes_per_device", "memory_fits", "decode_binding"):
        assert key in d
    for key, value in d.items():
        if isinstance(value, float):
            assert math.isfinite(value), key


# ------------------------------------------------------------ levers
def test_levers_item4_story() -> None:
    model = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
    dep = Deployment(model=model, accelerator=Accelerator(memory_bytes=192e9, bandwidth_bytes_per_s=3.35e12,
                                                          compute_flop_per_s={"bf16": 989e12}))
    wl = Workload(prompt_tokens=0, output_tokens=1)
    b200 = Accelerator(memory_bytes=192e9, bandwidth_bytes_per_s=8e12, compute_flop_per_s={"bf16": 2250e12})
    h200 = Accelerator(memory_bytes=141e9, bandwidth_bytes_per_s=4.8e12, compute_flop_per_s={"bf16": 989e12})

    def meets(a):  # needs 40 token/s and to fit
        return a.pace_token_per_s >= 40 and a.memory_fits

    levers = evaluate_levers(dep, wl, meets, accelerators=[("b200", b200), ("h200", h200)])
    by_name = {lv.name: lv for lv in levers}
    assert by_name["weights-8bit"].meets
    assert by_name["weights-8bit"].analysis.pace_token_per_s == pytest.approx(3.35e12 / 70e9)
    assert by_name["weights-4bit"].meets
    assert by_name["speculative"].meets  # 2.5 x 24 = 60
    assert by_name["more-devices"].deployment.devices == 2  # 48 token/s
    assert by_name["faster-accelerator"].description.startswith("b200")  # h200 gives 34 < 40
    assert "fewer-sequences" not in by_name  # already one sequence
    assert "prefix-cache" not in by_name  # no shared prefix declared
    assert [lv.meets for lv in levers] == sorted((lv.meets for lv in levers), reverse=True)
    meeting = [lv.analysis.e2e_s for lv in levers if lv.meets]
    assert meeting == sorted(meeting)


def test_levers_fewer_sequences_and_prefix() -> None:
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4)
    wl = Workload(prompt_tokens=8000, output_tokens=500, concurrency=64)
    kv_tok = 2 * 80 * 8 * 128 * 2
    ctx = 8000 + 499 / 2
    # need 60 token/s: (W/4 + B ctx kv/4)/BW <= 1/60
    limit = ((3.35e12 / 60) * 4 - 2 * 70.55e9) / (ctx * kv_tok)
    levers = evaluate_levers(dep, wl, lambda a: a.pace_token_per_s >= 60, shared_prefix_tokens=6000)
    by_name = {lv.name: lv for lv in levers}
    assert by_name["fewer-sequences"].workload.concurrency == math.floor(limit)
    assert by_name["prefix-cache"].workload.cached_prompt_tokens == 6000
