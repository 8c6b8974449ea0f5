"""Expert, data and pipeline parallelism in the one step cost (physics/step.py): each term
worked by hand, and the flat analysis, the simulator's iteration and its closed form agreeing
on any topology (as tests/physics/test_step_terms.py holds them for tensor parallelism)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.physics import Accelerator, Deployment, Efficiency, ModelShape, Workload, analyse
from budgetlint.physics.step import StepInputs, alltoall_remote_ranks, iteration, steps_sum, sum_components
from budgetlint.physics.step_cost import RooflineStepCost, kv_capacity_tokens

# H200 SXM: 141 GB, 4.8 TB/s, 989 / 1979 TFLOP/s dense bf16 / fp8, NVLink 4 450 GB/s per direction
# (shared/reference/hardware.csv: "NVLink4 900 GB/s" bidirectional aggregate)
H200 = Accelerator(memory_bytes=141e9, bandwidth_bytes_per_s=4.8e12,
                   compute_flop_per_s={"bf16": 989e12, "fp8": 1979e12}, interconnect_bytes_per_s=450e9)
# DeepSeek-R1 (= V3 architecture; shared/reference/models.csv, config_671B.json): 671B total, 37B active,
# 61 layers of which 58 MoE, hidden 7168, 128 heads, MLA 512 + 64, 256 routed experts, 8 per token
R1 = ModelShape(total_params=671e9, active_params=37e9, layers=61, hidden_size=7168, attention_heads=128,
                attention="mla", kv_lora_rank=512, qk_rope_head_dim=64, experts=256, experts_per_token=8,
                vocab_size=129280, tie_word_embeddings=False)
DENSE = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
MOE = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                 kv_heads=8, head_dim=128, experts=8, experts_per_token=2, vocab_size=32000)


def r1_ep8_dp8(**kw: object) -> Deployment:
    """DeepSeek-R1 on 8 H200s, attention data parallel 8 (tensor 1 per rank), experts over 8."""
    return Deployment(model=R1, accelerator=H200, devices=1, data_parallel=8, expert_parallel=8,
                      moe_layers=58, weight_bytes_per_param=1.0, compute_precision="fp8", **kw)  # type: ignore[arg-type]


def test_remote_ranks_by_hand() -> None:
    # one expert per token: (e - 1)/e of the tokens leave their rank
    assert alltoall_remote_ranks(8, 1) == pytest.approx(7 / 8, rel=1e-12)
    # 8 experts per token over 8 ranks: a rank is missed by all 8 with probability (7/8)^8 = 0.34361
    assert alltoall_remote_ranks(8, 8) == pytest.approx(7 * (1 - 0.343608915), rel=1e-8)
    assert alltoall_remote_ranks(1, 8) == 0.0


def test_deepseek_r1_ep8_dp8_step_includes_the_all_to_all_by_hand() -> None:
    """Batch 8 (one sequence per rank) at 2,000 tokens of context each, 10 us per all-to-all."""
    dep = r1_ep8_dp8(alltoall_latency_s=10e-6)
    t = iteration(StepInputs.of(dep), 8, 8 * 2000.0)
    # each device sends its 1 token (8 tokens / 8 ranks) to 7 x (1 - (7/8)^8) = 4.5947 other
    # ranks, 7168 x 2 bytes each, twice (dispatch and combine), in each of the 58 MoE layers
    remote = 7 * (1 - (7 / 8) ** 8)
    bytes_per_device = 58 * 2 * 1 * 7168 * 2 * remote
    assert bytes_per_device == pytest.approx(7.641e6, rel=1e-3)
    want = bytes_per_device / 450e9 + 58 * 2 * 10e-6
    assert want == pytest.approx(16.98e-6 + 1.16e-3, rel=1e-3)
    assert t.alltoall_s == pytest.approx(want, rel=1e-12)
    assert t.step_s == pytest.approx(t.target_s + want, rel=1e-12)
    # and with no expert parallelism, no all-to-all
    assert iteration(StepInputs.of(r1_ep8_dp8().__class__(
        model=R1, accelerator=H200, devices=8, weight_bytes_per_param=1.0)), 8, 16000.0).alltoall_s == 0.0


def test_deepseek_r1_weights_per_device_by_hand() -> None:
    """Attention and dense layers replicated on each of the 8 data-parallel ranks, experts split."""
    # one routed expert over all layers: (671e9 - 37e9) / (256 - 8) = 2.5565e9 parameters
    per_expert = (671e9 - 37e9) / 248
    shared = 671e9 - 256 * per_expert  # 16.55e9: attention, dense layers, shared expert, embeddings
    assert shared == pytest.approx(16.55e9, rel=1e-3)
    held = shared + 256 * per_expert / 8  # fp8: 1 byte a parameter
    inp = StepInputs.of(r1_ep8_dp8())
    assert inp.devices == 8
    assert inp.weight_bytes_per_device == pytest.approx(held, rel=1e-12)
    assert held == pytest.approx(98.36e9, rel=1e-3)  # fits in 141 GB; pure TP 8 would hold 83.9 GB
    # the decode weight read at batch 8: the experts 64 token choices touch, the shared part (less
    # the embedding rows not gathered) once per rank
    touched = 256 * (1 - (1 - 8 / 256) ** 8)
    shared_read = shared - (129280 - 8) * 7168
    want = (8 * shared_read + touched * per_expert) / 8 / 4.8e12
    assert iteration(inp, 8, 16000.0).weights_s == pytest.approx(want, rel=1e-12)
    # the memory fit reads the same per-device weights
    a = analyse(r1_ep8_dp8(), Workload(prompt_tokens=2000, output_tokens=200, concurrency=8))
    assert a.memory_weight_bytes_per_device == pytest.approx(held, rel=1e-12)


def test_expert_imbalance_slows_the_expert_compute_only() -> None:
    """At a large batch the pass is compute bound; the busiest rank does g x the mean expert work."""
    base, skew = StepInputs.of(r1_ep8_dp8()), StepInputs.of(r1_ep8_dp8(expert_imbalance=1.2))
    per_expert = (671e9 - 37e9) / 248
    routed = 8 * per_expert  # 20.45e9 of the 37e9 active
    tokens = 4096
    assert iteration(base, tokens, 0.0).linear_s == pytest.approx(2 * 37e9 * tokens / (8 * 1979e12), rel=1e-12)
    assert iteration(skew, tokens, 0.0).linear_s == pytest.approx(
        2 * (37e9 + 0.2 * routed) * tokens / (8 * 1979e12), rel=1e-12)
    with pytest.raises(ValueError, match="expert_imbalance"):
        r1_ep8_dp8(expert_imbalance=0.9)


def test_pipeline_bubble_at_small_batch_by_hand() -> None:
    """Four stages, one sequence: one micro-batch walks the four stages in turn, so the step is
    one device's (W / BW); four sequences fill the pipeline: four micro-batches share a round."""
    pp = Deployment(model=DENSE, accelerator=H200, pipeline_parallel=4)
    inp = StepInputs.of(pp)
    w = 70e9 * 2
    assert iteration(inp, 1, 0.0).weights_s == pytest.approx(w / 4.8e12, rel=1e-12)
    # tensor parallel 4 reads a quarter each: pipeline parallelism is no faster than one device at B = 1
    tp = iteration(StepInputs.of(Deployment(model=DENSE, accelerator=H200, devices=4)), 1, 0.0)
    assert tp.weights_s == pytest.approx(w / 4 / 4.8e12, rel=1e-12)
    # B = 4 at context 1,000 each: each stage reads its weights once per micro-batch (4 x W/4 per
    # round), the KV once: 4 x 1,000 x 327,680 B over the 4 devices
    kv_tok = 2 * 80 * 8 * 128 * 2
    t4 = iteration(inp, 4, 4000.0)
    assert t4.weights_s == pytest.approx(w / 4.8e12, rel=1e-12)
    assert t4.kv_s == pytest.approx(4000 * kv_tok / 4 / 4.8e12, rel=1e-12)
    with pytest.raises(ValueError, match="pipeline_parallel"):
        Deployment(model=DENSE, accelerator=H200, pipeline_parallel=81)


def test_contradictions_are_refused() -> None:
    with pytest.raises(ValueError, match="routed experts"):
        Deployment(model=DENSE, accelerator=H200, devices=8, expert_parallel=8)
    with pytest.raises(ValueError, match="must divide"):
        Deployment(model=R1, accelerator=H200, devices=2, data_parallel=2, expert_parallel=8)


def test_kv_capacity_counts_the_replicated_attention() -> None:
    dep = r1_ep8_dp8()
    held = StepInputs.of(dep).weight_bytes_per_device
    per_token = 61 * (512 + 64) * 2
    assert kv_capacity_tokens(dep) == int((141e9 - held) * 8 // per_token)


# ---------------------------------------------------------------- the callers agree
topologies = st.builds(
    lambda model, t, d, p, g, lat, engine: Deployment(
        model=model, accelerator=H200, devices=t, data_parallel=d, pipeline_parallel=p,
        expert_parallel=t * d if model.experts else 1, expert_imbalance=g if model.experts else 1.0,
        alltoall_latency_s=lat, engine_terms=engine),
    st.sampled_from([MOE, DENSE]), st.sampled_from([1, 2]), st.sampled_from([1, 2, 4]),
    st.sampled_from([1, 2, 4]), st.sampled_from([1.0, 1.18]), st.sampled_from([0.0, 5e-6]), st.booleans())


@settings(max_examples=150, deadline=None)
@given(dep=topologies, batch=st.integers(1, 256), context=st.integers(0, 9000))
def test_flat_simulator_and_closed_form_agree_on_any_topology(dep: Deployment, batch: int, context: int) -> None:
    eff = Efficiency(0.7, 0.5)
    flat = analyse(dep, Workload(prompt_tokens=context, output_tokens=1, concurrency=batch), eff)
    sim = RooflineStepCost(dep, eff)
    chunks = [(max(context, 1), 0)] * (batch - 1) if dep.engine_terms else []
    assert flat.decode_pass_s == pytest.approx(sim.iteration_s(batch, batch * context, chunks), rel=1e-12)
    alone = sim.iteration_s(batch, batch * context, [])
    comps, _ = sim.decode_terms(batch, batch * context)
    assert sum_components(comps, batch * context, batch, 1) == pytest.approx(alone, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(dep=topologies, batch=st.integers(1, 64), start=st.integers(0, 5000), count=st.integers(1, 200))
def test_the_reply_sum_is_the_sum_of_the_steps_on_any_topology(dep: Deployment, batch: int, start: int,
                                                               count: int) -> None:
    inp = StepInputs.of(dep)
    brute = sum(iteration(inp, batch, batch * (start + j)).step_s for j in range(count))
    assert steps_sum(inp, batch, start, count) == pytest.approx(brute, rel=1e-9)


def test_mla_latent_cache_is_whole_on_every_tensor_rank() -> None:
    """MLA's latent (512 + 64 values a token a layer) is shared by all 128 heads, so tensor
    parallelism does not split it: each of 8 tensor ranks holds and reads all of it
    (shared/reference/specs.md, MLA (a)). By hand, bf16 KV: 61 x (512 + 64) x 2 B = 70,272 B a token.
    Before: the cache was divided by the 8 devices, as per-head K and V are."""
    from budgetlint.physics.memory import kv_bytes_per_token
    from budgetlint.physics.step import iteration
    from budgetlint.physics.step_cost import kv_capacity_tokens

    per_token = 61 * (512 + 64) * 2
    assert kv_bytes_per_token(R1, 2.0) == per_token == 70_272
    tp8 = Deployment(model=R1, accelerator=H200, devices=8, weight_bytes_per_param=1.0, compute_precision="fp8")
    s = StepInputs.of(tp8)
    # decode of 16 sequences of 4,000 tokens each: every device reads all 16 x 4,000 tokens' latent
    terms = iteration(s, 16, 16 * 4000.0)
    assert terms.kv_s == pytest.approx(16 * 4000 * per_token / 4.8e12, rel=1e-12)
    # a GQA model's K and V are split: 8 KV heads over 8 ranks read 1/8 each
    dense = StepInputs.of(Deployment(model=DENSE, accelerator=H200, devices=8))
    gqa_token = 2 * 80 * 8 * 128 * 2
    assert iteration(dense, 16, 16 * 4000.0).kv_s == pytest.approx(16 * 4000 * gqa_token / 8 / 4.8e12, rel=1e-12)
    # memory: 16 sequences at prompt 4,000 + 200 / 2 in flight hold 16 x 4,100 x 70,272 B on each device
    a = analyse(tp8, Workload(prompt_tokens=4000, output_tokens=200, concurrency=16))
    assert a.memory_kv_bytes_per_device == pytest.approx(16 * 4100 * per_token, rel=1e-12)
    # the KV capacity: each device's free memory holds the whole latent of each token it caches
    free = 141e9 * tp8.memory_usable_fraction - tp8.memory_overhead_bytes - 671e9 * 1.0 / 8
    assert kv_capacity_tokens(tp8) == int(free // per_token)
    # data parallelism does split it: 8 ranks of tensor 1 hold 1/8 of the sequences each
    dp8 = Deployment(model=R1, accelerator=H200, devices=1, data_parallel=8, weight_bytes_per_param=1.0,
                     compute_precision="fp8")
    assert StepInputs.of(dp8).kv_copies == 1 and s.kv_copies == 8


def test_mla_tensor_parallel_decode_reads_the_whole_latent_on_each_rank() -> None:
    """Why the property tests exempt MLA from "more devices never slower" under a collective
    overhead: at 1 device the step is (W + K) / BW; at 2 it is (W/2 + K) / BW / (1 - c), the latent K
    read whole on each rank. DeepSeek-R1 at batch 64 x 4,000 tokens: K = 64 x 4,000 x 70,272 B =
    17.99 GB, read in 17.99e9 / 4.8e12 = 3.75 ms on 1 device and on each of 2 (not halved)."""
    from budgetlint.physics.step import iteration

    one = StepInputs.of(Deployment(model=R1, accelerator=H200, devices=1, weight_bytes_per_param=1.0,
                                   compute_precision="fp8"))
    two = StepInputs.of(Deployment(model=R1, accelerator=H200, devices=2, weight_bytes_per_param=1.0,
                                   compute_precision="fp8", collective_overhead=0.5))
    k = 64 * 4000 * 70_272
    assert iteration(one, 64, 64 * 4000.0).kv_s == pytest.approx(k / 4.8e12, rel=1e-12)
    assert iteration(two, 64, 64 * 4000.0).kv_s == pytest.approx(k / 4.8e12, rel=1e-12)  # not halved


def test_an_mla_prompt_moves_one_copy_of_its_latent() -> None:
    """Disaggregated DeepSeek-R1, tensor 8 on both pools: the step counts the latent on each of the 8
    ranks, but the KV link moves the prompt's cache once: 61 x (512 + 64) x 2 B x 4,096 tokens =
    287,834,112 B (5.76 ms over 50 GB/s)."""
    from budgetlint.physics.disaggregated import Pools, prompt_kv_bytes

    tp8 = Deployment(model=R1, accelerator=H200, devices=8, weight_bytes_per_param=1.0, compute_precision="fp8")
    assert prompt_kv_bytes(Pools(prefill=tp8, decode=tp8), 4096) == pytest.approx(70_272 * 4096, rel=1e-12)
