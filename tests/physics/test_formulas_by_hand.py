"""The small formulas of physics/latency.py, prefill.py, decode.py and memory.py on tiny inputs whose
answers are counted by hand in each test (issue 22: mutation testing against tests/physics; the
worked-number tests reach these functions only through whole analyses, where an off-by-one or a
flipped boundary often moves a figure by less than their 2 % tolerance).

A toy model used below: 4 layers, 2 of them with a 3-token sliding window, 4 attention heads of
width 2, 2 KV heads, 1,000 parameters, no embedding size.
"""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import decode, latency, memory, prefill
from budgetlint.physics.shapes import ModelShape

TOY = ModelShape(total_params=1000, layers=4, attention_heads=4, kv_heads=2, head_dim=2,
                 sliding_window=3, sliding_window_layers=2)


# ---------------------------------------------------------------- latency.py

def test_ttft_is_queue_plus_prefill_plus_setup_plus_the_proxy_delay() -> None:
    # a 5-token proxy buffer at 20 token/s shows the first token (5 - 1) / 20 = 0.2 s late
    assert latency.proxy_delay_s(5, 20.0) == pytest.approx(0.2)
    assert latency.ttft_s(queue_s=0.1, prefill_s=0.3, connection_setup_s=0.05, proxy_flush_tokens=5,
                          pace_token_per_s=20.0) == pytest.approx(0.1 + 0.3 + 0.05 + 0.2)
    assert latency.ttft_s(queue_s=0.1, prefill_s=0.3) == pytest.approx(0.4)
    # a buffer of one token (or none) delays nothing
    assert latency.proxy_delay_s(1, 20.0) == 0.0 and latency.proxy_delay_s(0, 20.0) == 0.0
    assert latency.proxy_delay_s(1.5, 10.0) == pytest.approx(0.05)


def test_e2e_decode_budget_and_required_pace() -> None:
    # physics.md worked number 1 and 3
    assert latency.e2e_s(0.5, 300, 30.0) == pytest.approx(10.5)
    assert latency.decode_budget_s(30.0, 0.4) == pytest.approx(29.6)
    assert latency.required_pace(30.0, 0.4, 600) == pytest.approx(600 / 29.6)
    assert latency.required_pace(1.5, 1.0, 10) == pytest.approx(20.0)  # 10 tokens in half a second
    assert latency.required_pace(1.0, 0.2, 4) == pytest.approx(5.0)
    assert latency.required_pace(1.0, 1.0, 10) == math.inf  # no time left
    assert latency.required_pace(1.0, 2.0, 10) == math.inf


def test_vllm_tpot_over_n_minus_one_tokens() -> None:
    # 100 tokens, vLLM's 10 ms over 99 decode gaps: 0.99 s of decode over 100 tokens = 9.9 ms
    assert latency.tpot_from_vllm(0.010, 100) == pytest.approx(0.0099)
    assert latency.tpot_from_vllm(0.010, 1) == 0.0
    with pytest.raises(ValueError, match="^output_tokens must be positive"):
        latency.tpot_from_vllm(0.010, 0)


# ---------------------------------------------------------------- prefill.py

def test_prefill_flop_terms() -> None:
    assert prefill.linear_flop(1000, 3) == 6000
    # 3 new tokens after 2 cached attend to 3, 4 and 5 positions: 12 = 3 x 2 + 3 x 4 / 2
    assert prefill.attention_context_sum(3, 2) == 12
    assert prefill.attention_context_sum(1, 0) == 1
    assert prefill.prefill_flop(1000, 3, 7.0) == 6007
    assert prefill.prefill_flop(1000, 3) == 6000


def test_attention_flop_counts_full_and_windowed_positions() -> None:
    # per position 4 x heads x head_dim = 4 x 4 x 2 = 32 FLOP; 3 new tokens after 2 cached:
    # 2 full layers see 3 + 4 + 5 = 12 positions each, 2 windowed layers min(., 3) = 3 + 3 + 3 = 9
    assert prefill.attention_flop(TOY, 3, 2) == 32 * (2 * 12 + 2 * 9)
    # no cache: 1 + 2 + 3 = 6 full, 1 + 2 + 3 = 6 windowed (the window is not yet full)
    assert prefill.attention_flop(TOY, 3) == 32 * (2 * 6 + 2 * 6)
    # 5 tokens: windowed 1 + 2 + 3 + 3 + 3 = 12, full 15
    assert prefill.attention_flop(TOY, 5) == 32 * (2 * 15 + 2 * 12)
    assert prefill.attention_flop(TOY, 0, 5) == 0.0 and prefill.attention_flop(TOY, -1) == 0.0
    assert prefill.attention_flop(TOY, 1) == 32 * (2 * 1 + 2 * 1)  # one new token attends to itself
    dense = ModelShape(total_params=1000, layers=3, attention_heads=2, head_dim=4)
    assert prefill.attention_flop(dense, 2, 1) == 4 * 2 * 4 * 3 * (2 + 3)


def test_prefill_time_is_compute_never_below_one_weight_read() -> None:
    # 8e12 FLOP on 2 x 1e12 FLOP/s = 4 s; 6e12 B / 2 / 1e12 B/s = 3 s: compute binds
    t = prefill.prefill_time(flop=8e12, weight_bytes=6e12, devices=2, compute_flop_per_s=1e12,
                             bandwidth_bytes_per_s=1e12)
    assert (t.compute_s, t.weight_read_s, t.time_s, t.binding) == (4.0, 3.0, 4.0, "compute")
    t = prefill.prefill_time(flop=2e12, weight_bytes=6e12, devices=2, compute_flop_per_s=1e12,
                             bandwidth_bytes_per_s=1e12)
    assert (t.compute_s, t.weight_read_s, t.time_s, t.binding) == (1.0, 3.0, 3.0, "bandwidth")
    t = prefill.prefill_time(flop=6e12, weight_bytes=6e12, devices=2, compute_flop_per_s=1e12,
                             bandwidth_bytes_per_s=1e12)
    assert t.binding == "compute" and t.time_s == 3.0  # a tie is compute


# ---------------------------------------------------------------- decode.py

def test_collective_factor_only_with_more_than_one_device() -> None:
    assert decode.collective_factor(1, 0.2) == 1.0
    assert decode.collective_factor(2, 0.0) == 1.0
    assert decode.collective_factor(2, 0.2) == pytest.approx(1.25)
    assert decode.collective_factor(8, 0.5) == pytest.approx(2.0)


def test_decode_step_on_raw_numbers() -> None:
    # bandwidth bound: (10e9 / 2 + 4 x 1e9 / 2) / 1e12 = 7 ms; compute 4 x 2 x 1e9 / (2 x 1e15) = 4 us
    s = decode.decode_step(weight_bytes=10e9, kv_bytes_per_sequence=1e9, concurrency=4, active_params=1e9,
                           devices=2, bandwidth_bytes_per_s=1e12, compute_flop_per_s=1e15)
    assert s.memory_s == pytest.approx(7e-3) and s.compute_s == pytest.approx(4e-6)
    assert s.step_s == pytest.approx(7e-3) and s.binding == "bandwidth"
    # with 20 % collective overhead on 2 devices the step is 7 ms / 0.8
    s = decode.decode_step(weight_bytes=10e9, kv_bytes_per_sequence=1e9, concurrency=4, active_params=1e9,
                           devices=2, bandwidth_bytes_per_s=1e12, compute_flop_per_s=1e15,
                           collective_overhead=0.2)
    assert s.step_s == pytest.approx(7e-3 / 0.8)
    # compute bound: 3 tokens a sequence (2 drafted), 4 sequences: 4 x 3 x 2 x 1e9 / 1e12 = 24 ms
    s = decode.decode_step(weight_bytes=1e9, kv_bytes_per_sequence=0.0, concurrency=4, active_params=1e9,
                           devices=1, bandwidth_bytes_per_s=1e12, compute_flop_per_s=1e12, tokens_per_sequence=3)
    assert s.compute_s == pytest.approx(24e-3) and s.memory_s == pytest.approx(1e-3)
    assert s.step_s == pytest.approx(24e-3) and s.binding == "compute"


def test_pace_and_aggregate() -> None:
    assert decode.per_user_pace(2.5, 0.05) == pytest.approx(50.0)
    assert decode.aggregate_throughput(8, 50.0) == pytest.approx(400.0)


# ---------------------------------------------------------------- memory.py

def test_weights_and_experts_touched() -> None:
    assert memory.weight_bytes(70e9, 0.5) == 35e9
    # 2 of 8 experts a token: one token misses an expert with probability 3/4; two tokens touch
    # 8 x (1 - 9/16) = 3.5 experts
    assert memory.expected_experts_touched(8, 2, 2) == pytest.approx(3.5)
    assert memory.expected_experts_touched(8, 2, 1) == pytest.approx(2.0)
    assert memory.expected_experts_touched(8, 2, 0) == 0.0
    assert memory.expected_experts_touched(4, 4, 3) == 4.0


def test_moe_parameters_touched() -> None:
    # 8 experts, top-2, 9,000 total and 3,000 active: an expert is (9000 - 3000) / 6 = 1,000, shared
    # 3000 - 2 x 1000 = 1,000; two tokens touch 1000 + 1000 x 3.5 = 4,500
    moe = ModelShape(total_params=9000, active_params=3000, layers=2, attention_heads=2, head_dim=2,
                     experts=8, experts_per_token=2)
    assert memory.moe_params_touched(moe, 2) == pytest.approx(4500)
    assert memory.moe_params_touched(moe, 1) == pytest.approx(3000)
    assert memory.moe_params_touched(moe, 0) == 0.0
    assert memory.moe_params_touched(TOY, 5) == 1000  # dense
    sparse_no_experts = ModelShape(total_params=9000, active_params=3000, layers=2, attention_heads=2, head_dim=2)
    assert memory.moe_params_touched(sparse_no_experts, 100) == 3000
    all_experts = ModelShape(total_params=9000, active_params=3000, layers=2, attention_heads=2, head_dim=2,
                             experts=2, experts_per_token=2)
    assert memory.moe_params_touched(all_experts, 1) == 9000


def test_the_input_embedding_is_gathered_not_read() -> None:
    m = ModelShape(total_params=10_000, layers=2, attention_heads=2, hidden_size=4, vocab_size=100)
    # 100 x 4 = 400 embedding parameters; 3 tokens gather 3 rows (12 parameters): 388 not read
    assert memory.embedding_params_not_read(m, 3) == 388
    assert memory.embedding_params_not_read(m) == 396
    assert memory.embedding_params_not_read(m, 500) == 0.0  # more tokens than rows: all rows read
    assert memory.embedding_params_not_read(m, -2) == 400
    assert memory.params_read(m, 3) == 10_000 - 388
    tied = ModelShape(total_params=10_000, layers=2, attention_heads=2, hidden_size=4, vocab_size=100,
                      tie_word_embeddings=True)
    assert memory.embedding_params_not_read(tied, 3) == 0.0
    assert memory.embedding_params_not_read(TOY, 3) == 0.0  # no vocabulary size: unknown, nothing removed


def test_kv_cache_bytes() -> None:
    # GQA: 2 x 4 layers x 2 KV heads x 2 x 2 B = 64 B a token, 16 B a layer
    assert memory.kv_bytes_per_token(TOY, 2.0) == 64
    assert memory.kv_bytes_per_token_per_layer(TOY, 2.0) == 16
    mla = ModelShape(total_params=1000, layers=3, attention_heads=2, head_dim=8, attention="mla",
                     kv_lora_rank=5, qk_rope_head_dim=2)
    assert memory.kv_bytes_per_token(mla, 2.0) == 3 * (5 + 2) * 2
    # context 10: 2 full layers hold 10 tokens, 2 windowed hold 3: 16 x (20 + 6)
    assert memory.kv_bytes_for_context(TOY, 2.0, 10) == 16 * 26
    assert memory.kv_bytes_for_context(TOY, 2.0, 2) == 16 * (4 + 4)


def test_kv_summed_over_consecutive_contexts() -> None:
    # sum_{j<4} min(1 + j, 3) = 1 + 2 + 3 + 3 = 9
    assert memory._sum_min(1.0, 4, 3.0) == 9
    assert memory._sum_min(5.0, 4, 3.0) == 12
    assert memory._sum_min(3.0, 2, 3.0) == 6
    assert memory._sum_min(1.0, 0, 3.0) == 0.0
    assert memory._sum_min(1.5, 3, 3.0) == pytest.approx(1.5 + 2.5 + 3)
    # 4 steps at contexts 1..4: full layers 1 + 2 + 3 + 4 = 10 each, windowed 9 each: 16 x (20 + 18)
    assert memory.kv_bytes_summed_over_contexts(TOY, 2.0, 1.0, 4) == 16 * (2 * 10 + 2 * 9)


def test_memory_fit_and_the_most_sequences_that_fit() -> None:
    # 2 devices of 100 B at 90 %: 90 B usable; weights 60 B -> 30 B each; 4 sequences x 10 B / 2 = 20 B;
    # draft 8 B / 2 = 4 B; overhead 5 B: 59 B of 90 B
    f = memory.memory_fit(weight_bytes_total=60, kv_bytes_per_sequence=10, concurrency=4, devices=2,
                          memory_bytes=100, usable_fraction=0.9, overhead_bytes=5, draft_bytes_total=8)
    assert (f.weight_bytes_per_device, f.kv_bytes_per_device, f.draft_bytes_per_device) == (30, 20, 4)
    assert f.overhead_bytes_per_device == 5 and f.required_bytes_per_device == 59
    assert f.available_bytes_per_device == 90 and f.headroom_bytes_per_device == 31 and f.fits is True
    exact = memory.memory_fit(weight_bytes_total=60, kv_bytes_per_sequence=10, concurrency=4, devices=2,
                              memory_bytes=100, usable_fraction=0.5, overhead_bytes=0)
    assert exact.required_bytes_per_device == 50 and exact.fits is True  # equal to the usable memory fits
    unknown = memory.memory_fit(weight_bytes_total=60, kv_bytes_per_sequence=10, concurrency=4, devices=2,
                                memory_bytes=None)
    assert unknown.fits is None and unknown.available_bytes_per_device is None
    assert unknown.required_bytes_per_device == 50
    assert (unknown.weight_bytes_per_device, unknown.kv_bytes_per_device, unknown.draft_bytes_per_device,
            unknown.overhead_bytes_per_device, unknown.headroom_bytes_per_device) == (30, 20, 0, 0, None)
    draft = memory.memory_fit(weight_bytes_total=60, kv_bytes_per_sequence=10, concurrency=4, devices=2,
                              memory_bytes=None, overhead_bytes=5, draft_bytes_total=8)
    assert (draft.draft_bytes_per_device, draft.overhead_bytes_per_device, draft.required_bytes_per_device) == (4, 5, 59)
    # (90 - 30 - 4 - 5) / (10 / 2) = 10.2 -> 10 sequences
    assert memory.max_sequences_that_fit(weight_bytes_total=60, kv_bytes_per_sequence=10, devices=2,
                                         memory_bytes=100, usable_fraction=0.9, overhead_bytes=5,
                                         fixed_bytes_total=8) == 10
    # an exact fit is not floored one below: (100 - 50) / 5 = 10
    assert memory.max_sequences_that_fit(weight_bytes_total=100, kv_bytes_per_sequence=10, devices=2,
                                         memory_bytes=100) == 10
    assert memory.max_sequences_that_fit(weight_bytes_total=300, kv_bytes_per_sequence=10, devices=2,
                                         memory_bytes=100) == 0
    # fractions of a byte are arithmetic like any other: room 100 - 199 / 2 = 0.5 B, 0.2 / 2 B a sequence: 5
    assert memory.max_sequences_that_fit(weight_bytes_total=199, kv_bytes_per_sequence=0.2, devices=2,
                                         memory_bytes=100) == 5
    assert memory.max_sequences_that_fit(weight_bytes_total=100, kv_bytes_per_sequence=0.5, devices=2,
                                         memory_bytes=100) == 200
    assert memory.max_sequences_that_fit(weight_bytes_total=60, kv_bytes_per_sequence=0, devices=2,
                                         memory_bytes=100) is None
    assert memory.max_sequences_that_fit(weight_bytes_total=60, kv_bytes_per_sequence=10, devices=2,
                                         memory_bytes=None) is None


# ---------------------------------------------------------------- precision.py

# bits per element of each name, from the formats' definitions (IEEE binary64/32/16, bfloat16, TF32
# stored in 32 bits, the OCP fp8 formats E4M3/E5M2, 8-bit integers, 4-bit formats NF4/MXFP4/NVFP4)
BITS = {"fp64": 64, "float64": 64, "fp32": 32, "float32": 32, "tf32": 32, "bf16": 16, "bfloat16": 16,
        "fp16": 16, "float16": 16, "half": 16, "fp8": 8, "e4m3": 8, "e5m2": 8, "fp8_e4m3": 8, "fp8_e5m2": 8,
        "int8": 8, "uint8": 8, "int4": 4, "uint4": 4, "fp4": 4, "nf4": 4, "mxfp4": 4, "nvfp4": 4}
# the compute units each runs on: floating point of its width (fp64 on the fp32 peak, the widest listed),
# integers on the int8 units, every 4-bit format on the fp4 peak
UNIT = {"fp64": "fp32", "float64": "fp32", "fp32": "fp32", "float32": "fp32", "tf32": "tf32", "bf16": "bf16",
        "bfloat16": "bf16", "fp16": "bf16", "float16": "bf16", "half": "bf16", "fp8": "fp8", "e4m3": "fp8",
        "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "int8": "int8", "uint8": "int8", "int4": "fp4",
        "uint4": "fp4", "fp4": "fp4", "nf4": "fp4", "mxfp4": "fp4", "nvfp4": "fp4"}


@pytest.mark.parametrize("name", sorted(BITS))
def test_bytes_and_compute_unit_of_every_precision_name(name: str) -> None:
    from budgetlint.physics import precision
    assert precision.bytes_per_element(name) == BITS[name] / 8
    assert precision.bytes_per_element(f" {name.upper()} ") == BITS[name] / 8
    assert precision.compute_key(name) == UNIT[name]
    assert precision.compute_key(f" {name.upper()} ") == UNIT[name]


def test_bit_counts() -> None:
    from budgetlint.physics import precision
    assert precision.bytes_per_element("4.5 bit") == 4.5 / 8
    assert precision.bytes_per_element("6 bits") == 0.75
    assert precision.bytes_per_element("3bit") == 3 / 8
    assert precision.bytes_per_element("1e1 bits") == 10 / 8
    assert precision.bytes_per_element("5-bit") == 5 / 8
    # the compute unit of N bits: fp32 above 16, bf16 above 8, fp8 above 4, else fp4
    for bits, unit in ((17, "fp32"), (16, "bf16"), (9, "bf16"), (8, "fp8"), (5, "fp8"), (4.5, "fp8"),
                       (4, "fp4"), (2, "fp4")):
        assert precision.compute_key(f"{bits} bit") == unit, bits
    with pytest.raises(ValueError, match="bit count must be positive"):
        precision.bytes_per_element("0 bit")
    with pytest.raises(ValueError, match=r"^unknown precision 'fp7': expected one of .*bf16.* or a bit count"):
        precision.bytes_per_element("fp7")
    with pytest.raises(ValueError, match="^unknown compute precision 'bits'"):
        precision.compute_key("bits")


def test_compute_peak_walks_the_fallback_chain() -> None:
    from budgetlint.physics import precision
    h100 = {"BF16": 989e12, "fp16": 989e12, "fp8": 1979e12, "int8": 1979e12}
    assert precision.compute_peak(h100, "fp8") == ("fp8", 1979e12)
    assert precision.compute_peak(h100, "bf16") == ("bf16", 989e12)  # keys compared lower-cased
    # no fp4 units: 4-bit weights are dequantised and run on the fp8 peak
    assert precision.compute_peak(h100, "int4") == ("fp8", 1979e12)
    assert precision.compute_peak({"int8": 2e15, "bf16": 1e15}, "fp8") == ("int8", 2e15)
    assert precision.compute_peak({"fp8": 2e15, "bf16": 1e15}, "int8") == ("fp8", 2e15)
    assert precision.compute_peak({"fp16": 5e14}, "bf16") == ("fp16", 5e14)
    assert precision.compute_peak({"tf32": 4e14, "bf16": 8e14}, "fp32") == ("tf32", 4e14)
    assert precision.compute_peak({"bf16": 8e14}, "tf32") == ("bf16", 8e14)
    assert precision.compute_peak({"fp8": 0.0, "bf16": 1e15}, "fp8") == ("bf16", 1e15)  # a zero peak is none
    assert precision.compute_peak({"fp4": 9e15, "int4": 8e15}, "nf4") == ("fp4", 9e15)
    with pytest.raises(ValueError, match=r"^no compute peak for precision 'fp8': tried fp8, int8, bf16, fp16; "
                                         r"the accelerator lists fp32"):
        precision.compute_peak({"fp32": 1e14}, "fp8")
    with pytest.raises(ValueError, match="the accelerator lists none"):
        precision.compute_peak({}, "bf16")


# ---------------------------------------------------------------- default_efficiency.py

def test_deployment_classes_and_their_words() -> None:
    from budgetlint.physics import default_efficiency as de
    assert [de.class_key(moe, n) for moe in (False, True) for n in (1, 2, 8)] == [
        "dense-1", "dense-tp", "dense-tp", "moe-1", "moe-tp", "moe-tp"]
    assert de.class_default(False, 1).label == "dense, 1 device"
    assert de.DEFAULTS["dense-1"].basis() == "median of 3 public runs"
    assert de.DEFAULTS["moe-tp"].basis() == ("the MoE, 1 device median of 2 public runs; the MoE, tensor-parallel "
                                             "runs come from one source")
    one = de.ClassDefault("x", "x class", 0.5, 0.5, 0.0, 1)
    assert one.basis() == "median of 1 public run"
    assert de.median([3.0, 1.0, 2.0]) == 2.0 and de.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert de.median([5.0]) == 5.0
    with pytest.raises(ValueError, match="^median of no values"):
        de.median([])


def test_compute_default_basis_words() -> None:
    from budgetlint.physics.default_efficiency import ComputeDefault

    assert ComputeDefault("hopper", "fp8", 0.681, 5, 4).basis() == \
        "Hopper fp8: median of 5 MLPerf v5.1 Offline runs, 4 submitters"
    assert ComputeDefault("cdna3", "fp8", 0.478, 7, 6).basis() == \
        "CDNA3 fp8: median of 7 MLPerf v5.1 Offline runs, 6 submitters"
    assert ComputeDefault("blackwell", "fp4", 0.484, 5, 5).basis().startswith("Blackwell fp4: median of 5 ")
    assert ComputeDefault("cdna3", "fp8", 0.353, 3, 3, device="mi300x").basis() == \
        "CDNA3 (MI300X) fp8: median of 3 MLPerf v5.1 Offline runs, 3 submitters"


def test_one_bit_is_an_eighth_of_a_byte_and_zero_bits_are_refused() -> None:
    from budgetlint.physics import precision

    assert precision.bytes_per_element("1 bit") == 0.125
    with pytest.raises(ValueError, match=r"^precision '0 bit': bit count must be positive"):
        precision.bytes_per_element("0 bit")


def test_edge_refusals_name_the_field() -> None:
    from budgetlint.physics.shapes import Edge

    with pytest.raises(ValueError, match=r"^connection_setup_s must be a non-negative finite number, got -1"):
        Edge(connection_setup_s=-1.0)
    with pytest.raises(ValueError, match=r"^proxy_flush_tokens must be a non-negative finite number, got nan"):
        Edge(proxy_flush_tokens=math.nan)
    assert Edge(0.0, 0.0) == Edge()


def test_a_shape_repr_is_the_dataclass_repr_written_once() -> None:
    from budgetlint.physics.shapes import Accelerator

    acc = Accelerator(bandwidth_bytes_per_s=1e12, memory_bytes=8e10)
    text = repr(acc)
    assert text == ("Accelerator(bandwidth_bytes_per_s=1000000000000.0, memory_bytes=80000000000.0, "
                    "compute_flop_per_s={}, interconnect_bytes_per_s=None)")
    assert acc.__dict__["_repr"] == text and repr(acc) is text
    assert type(acc).__repr__.__qualname__ == "Accelerator.__repr__"
    assert repr(TOY).startswith("ModelShape(total_params=1000, layers=4, ")


def test_unknown_precision_lists_the_names() -> None:
    from budgetlint.physics import precision

    with pytest.raises(ValueError) as e:
        precision.bytes_per_element("fp7")
    msg = str(e.value)
    assert msg.startswith("unknown precision 'fp7': expected one of bf16, bfloat16, e4m3, e5m2, float16, ")
    assert msg.endswith(", uint4, uint8 or a bit count such as '4.5 bit'")


def test_shape_refusals_name_the_field_and_the_peaks_are_copied() -> None:
    from budgetlint.physics.shapes import Accelerator

    with pytest.raises(ValueError, match=r"^total_params must be a positive finite number, got 0"):
        ModelShape(total_params=0, layers=1, attention_heads=1, head_dim=1)
    with pytest.raises(ValueError, match=r"^memory_bytes must be a positive finite number, got -1"):
        Accelerator(bandwidth_bytes_per_s=1.0, memory_bytes=-1)
    with pytest.raises(ValueError, match=r"^bandwidth_bytes_per_s must be a positive finite number, got inf"):
        Accelerator(bandwidth_bytes_per_s=math.inf)
    with pytest.raises(ValueError, match=r"^interconnect_bytes_per_s must be a positive finite number, got 0"):
        Accelerator(bandwidth_bytes_per_s=1.0, interconnect_bytes_per_s=0)
    with pytest.raises(ValueError, match=r"^compute_flop_per_s\['bf16'\] must be a positive finite number, got -2"):
        Accelerator(bandwidth_bytes_per_s=1.0, compute_flop_per_s={"bf16": -2})
    peaks = {"bf16": 1e15}
    acc = Accelerator(bandwidth_bytes_per_s=1.0, compute_flop_per_s=peaks)
    peaks["bf16"] = 2e15  # the caller's dict changed afterwards: the accelerator keeps its own copy
    assert acc.compute_flop_per_s == {"bf16": 1e15} and acc.compute_flop_per_s is not peaks


def test_class_and_compute_defaults_by_name() -> None:
    from budgetlint.physics import default_efficiency as de

    assert de.class_default(True, 1).key == "moe-1" and de.class_default(False, 1).key == "dense-1"
    assert de.class_default(True, 4).key == "moe-tp" and de.class_default(False, 2).key == "dense-tp"
    # docs/calibration.md: Hopper fp8 65.0 % (5 runs), Blackwell fp4 47.7 %, CDNA3 fp8 35.3 % on MI300X
    # (3 runs) and 45.3 % on MI325X (4; 34.2 and 42.8 % with vLLM's 4.3 ms until acc41, 42.0 % for all seven
    # until issue 25 split them), the
    # rows' medians at the dataset's 222.33-token prompts with the eager runs' fixed part charged (TensorRT-LLM
    # 15.50 ms, vLLM on ROCm 16.62 ms; shared by the sequences the TensorRT-LLM engine's cache holds, 0.9 of the memory
    # the weights and 3 GiB leave: an H200's 732-735, a B200's 1,569-1,576); 65.9 / 47.9 % at vLLM's cache rule
    # (an H200's 647 slots, a B200's 1,530; until issue 25 acc25); 59.6 / 43.3 / 42.0 % with 4.3 ms for every eager
    # row and 1,024 slots; 59.0 / 42.1 / 41.6 % with 2.1 ms for every row; 68.9 / 50.1 / 48.4 % at the 300-token
    # prompts assumed before)
    h = de.compute_default("h100-sxm", "fp8")
    assert (h.generation, h.precision, h.compute, h.runs) == ("hopper", "fp8", 0.650, 5)
    assert de.compute_default("mi325x", "fp8").compute == 0.453
    m = de.compute_default("mi300x", "fp8")
    assert (m.generation, m.device, m.compute, m.runs, m.sources) == ("cdna3", "mi300x", 0.353, 3, 3)
    assert de.compute_default("gb200", "fp4").compute == 0.477
    # bf16 on Hopper: 31.9 %, the median of nine public SGLang / vLLM throughput runs of Llama-3.x-70B TP 4
    # (docs/calibration.md "Compute default for bf16 on Hopper"; 0.264-0.399, three organisations)
    b = de.compute_default("h100-sxm", "bf16")
    assert (b.generation, b.precision, b.compute, b.runs, b.sources) == ("hopper", "bf16", 0.319, 9, 3)
    assert de.compute_default("h100-sxm", "tf32") is None  # no row: the class's 50 %
    assert de.compute_default("a100-sxm", "fp8") is None  # no generation


def test_no_compute_peak_lists_what_the_accelerator_has() -> None:
    from budgetlint.physics import precision

    with pytest.raises(ValueError, match=r"^no compute peak for precision 'fp4': tried fp4, int4, fp8, int8, bf16, fp16; "
                                         r"the accelerator lists fp32, tf32$"):
        precision.compute_peak({"TF32 ": 1e14, "fp32": 5e13}, "fp4")
