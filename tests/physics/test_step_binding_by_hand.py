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


def test_decode_components_compute_bound_by_hand() -> None:
    """The compute side of the components, with a 4,000-token prompt (nothing before it) beside one
    decode. (a) LLAMA-70B-like on 4 H100s x 2 stages (8 x 989 TFLOP/s = 7.912e15 FLOP/s) with a 1e9
    draft looking 2 ahead: linear (2 x 70e9 x (3 + 4,000) + 2 x 1e9 x 4,000, the draft's prefill
    of the prompt) x 2 stages / 7.912e15 = 0.1436855 s; the prompt's attention 4 x 64 x 128 x 80
    layers x 4,000 x 4,001 / 2 = 2.0977e13 FLOP, x 2 / 7.912e15 = 0.0053025 s; the draft's two
    passes are memory-bound: 2 x (2e9 + 32,768 x 1,000) / 2.68e13 = 1.51699e-4 s.
    (b) the MoE of 47e9 (13e9 active; 8 experts, 2 a token: an expert 34e9 / 6) on 1 device x data
    parallel 2 with an imbalance of 1.5: the busiest device's linear parameters 13e9 + 0.5 x 2 x
    34e9 / 6 = 18.667e9, so 2 x 18.667e9 x 4,001 / (2 x 989e12) = 0.075516 s, + attention
    4 x 32 x 128 x 32 x 4,000 x 4,001 / 2 / 1.978e15 = 0.002121 s."""
    from budgetlint.physics import Accelerator, Deployment, ModelShape
    from budgetlint.physics.step import decode_components, prefill_load, sum_components

    h100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
    llama = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                       head_dim=128)
    draft = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
    inp = StepInputs.of(Deployment(model=llama, accelerator=h100, devices=4, pipeline_parallel=2, draft=draft,
                                   draft_lookahead=2))
    pf = prefill_load(inp, [(4000.0, 0.0)])
    comps, _ = decode_components(inp, 1, 1000.0, pf)
    linear = (2 * 70e9 * 4003 + 2 * 1e9 * 4000) * 2 / 7.912e15
    attention = 4 * 64 * 128 * 80 * 4000 * 4001 / 2 * 2 / 7.912e15
    draft_s = 2 * (2e9 + 32768 * 1000) / (8 * 3.35e12)
    assert comps[0][2] + comps[0][3] * 1000 == pytest.approx(linear + attention, rel=1e-12)
    assert sum_components(comps, 1000.0, 3.0, 1) == pytest.approx(linear + attention + draft_s, rel=1e-12)

    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    m = StepInputs.of(Deployment(model=moe, accelerator=h100, devices=1, data_parallel=2, expert_parallel=2,
                                 expert_imbalance=1.5))
    pf = prefill_load(m, [(4000.0, 0.0)])
    comps, _ = decode_components(m, 1, 1000.0, pf)
    busiest = 13e9 + 0.5 * 2 * 34e9 / 6
    by_hand = 2 * busiest * 4001 / (2 * 989e12) + 4 * 32 * 128 * 32 * 4000 * 4001 / 2 / (2 * 989e12)
    assert sum_components(comps, 1000.0, 1.0, 1) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(0.0776370, rel=1e-6)


def _grid() -> list:
    from budgetlint.physics import Accelerator, Deployment, ModelShape

    h100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
    # 21 of 42 layers on a 4,096-token window; a draft of 16 layers on a 64-token window
    windowed = ModelShape(total_params=9e9, layers=42, hidden_size=3584, attention_heads=16, kv_heads=8,
                          head_dim=256, sliding_window=4096, sliding_window_layers=21)
    wdraft = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8,
                        head_dim=64, sliding_window=64)
    # a MoE of 47e9 (13e9 active, 8 experts, 2 a token) whose experts exchange tokens all-to-all
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    out = []
    for engine in (False, True):
        for extra in ({}, {"per_operator": True}, {"overlap": 0.5}, {"draft": wdraft, "draft_lookahead": 2},
                      {"per_operator": True, "draft": wdraft, "draft_lookahead": 2, "collective_overhead": 0.2}):
            out.append(Deployment(model=windowed, accelerator=h100, devices=2, pipeline_parallel=4,
                                  engine_terms=engine, **extra))  # type: ignore[arg-type]
        for per_op in (False, True):
            out.append(Deployment(model=moe, accelerator=h100, devices=2, expert_parallel=2, engine_terms=engine,
                                  alltoall_bandwidth_bytes_per_s=400e9, alltoall_latency_s=1e-5, draft=wdraft,
                                  draft_lookahead=2, per_operator=per_op, collective_overhead=0.2))
    return out


@pytest.mark.parametrize("dep", _grid())
@pytest.mark.parametrize("batch, context", [(1, 1000.0), (1, 9000.0), (2, 6000.0), (3, 20000.0), (8, 1000.0)])
def test_the_components_are_the_iteration_on_pipeline_stages(dep, batch: int, context: float) -> None:
    """decode_components' contract (their sum at a context is iteration's step there), on 4
    pipeline stages, where a batch below 4 runs in fewer micro-batches than stages (each term's
    x p / m is 4, 2, 4/3 and, at 8 sequences, 1), below and above each window's reach (B x 4,096
    and B x 64 tokens), with and without the engine's attention terms, per operator, half
    overlapped, with a windowed draft, per operator with a draft and a collective overhead (every
    component scaled by 1 / (1 - 0.2) and the draft's by its 2 passes), and a MoE's all-to-all over
    the decodes' 3 tokens each and the chunk's; a 300-token chunk after 2,000 earlier ones, or a
    4,000-token prompt (compute-bound), beside the decodes. Held to 1e-12: the simulator's closed
    form against the flat analysis's terms."""
    from budgetlint.physics.step import decode_components, prefill_load, sum_components

    inp = StepInputs.of(dep)
    for pf in (prefill_load(inp, []), prefill_load(inp, [(300.0, 2000.0)]), prefill_load(inp, [(4000.0, 0.0)])):
        comps, _ = decode_components(inp, batch, context, pf)
        assert sum_components(comps, context, 1.0, 1) == pytest.approx(
            iteration(inp, batch, context, pf).step_s, rel=1e-12)


def test_the_all_to_all_of_a_pass_by_hand() -> None:
    """alltoall_s = per token x tokens / micro-batches + the fixed latency; nothing for an empty
    pass or when neither is charged. 2 us a token and 50 us fixed: 1 token 52 us, 100 tokens in
    one micro-batch 250 us, in 2 micro-batches (each moves half) 150 us; 0 tokens 0; the per-token
    part alone (no latency): 100 tokens 200 us; the latency alone: 50 us."""
    from dataclasses import replace

    base = _raw(1.0, 1.0, 1.0, 0.0)
    both = replace(base, alltoall_s_per_token=2e-6, alltoall_fixed_s=50e-6)
    assert both.alltoall_s(1) == pytest.approx(52e-6, rel=1e-12)
    assert both.alltoall_s(100) == pytest.approx(250e-6, rel=1e-12)
    assert both.alltoall_s(100, 2) == pytest.approx(150e-6, rel=1e-12)
    assert both.alltoall_s(0) == 0.0
    assert replace(base, alltoall_s_per_token=2e-6).alltoall_s(100) == pytest.approx(200e-6, rel=1e-12)
    assert replace(base, alltoall_fixed_s=50e-6).alltoall_s(100) == pytest.approx(50e-6, rel=1e-12)
    assert base.alltoall_s(100) == 0.0


def test_the_simulator_s_iteration_of_raw_inputs_counts_every_chunk() -> None:
    """iteration_step_s on inputs without a model shape (no attention): one decode at 4 context
    tokens beside chunks of 3 tokens after 2 earlier ones and 5 after none: 1 + 3 + 5 = 9 tokens,
    linear 2 x 1 x 9 = 18 s; memory 1 (weights) + 1 x 4 + 1 x 2 (the first chunk's earlier KV) =
    7 s; the step is the larger, 18 s (the flat analysis's iteration says the same)."""
    from budgetlint.physics.step import iteration_step_s, prefill_load

    inp = _raw(1.0, 1.0, 1.0, 0.0)
    chunks = [(3.0, 2.0), (5.0, 0.0)]
    assert iteration_step_s(inp, 1, 4.0, chunks) == 18.0
    t = iteration(inp, 1, 4.0, prefill_load(inp, chunks))
    assert (t.memory_s, t.compute_s, t.step_s) == (7.0, 18.0, 18.0)


def test_the_weights_a_pass_reads_on_the_busiest_device_by_hand() -> None:
    """target_weight_bytes = d x S(T) + min(g x P_x(T), P_x,all) in bf16 (2 B a parameter), so that
    / devices is the busiest device's read. A dense 70e9 on data parallel 2: 2 x 70e9 x 2 B =
    280 GB (each rank reads its own copy), whatever the tokens. The MoE of 47e9 (13e9 active;
    an expert 34e9 / 6 = 5.667e9; shared 13e9 - 2 x 5.667e9 = 1.667e9), one token (2 experts):
    data parallel 2: 1.667e9 x 2 + 2 x 5.667e9 = 14.667e9 parameters, 29.333 GB; one rank with an
    imbalance of 1.5: 1.667e9 + 1.5 x 11.333e9 = 18.667e9, 37.333 GB; of 2: 1.667e9 + 22.667e9 =
    24.333e9, 48.667 GB; no imbalance, one rank: the 13e9 a token reads, 26 GB. Raw inputs (no
    model shape) on 2 ranks read their fixed weights twice."""
    from dataclasses import replace

    from budgetlint.physics import Accelerator, Deployment, ModelShape

    h100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
    llama = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                       head_dim=128)
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    dense2 = StepInputs.of(Deployment(model=llama, accelerator=h100, devices=4, data_parallel=2))
    assert dense2.target_weight_bytes(1.0) == pytest.approx(280e9, rel=1e-13)
    assert dense2.target_weight_bytes(4096.0) == pytest.approx(280e9, rel=1e-13)
    expert = 34e9 / 6
    shared = 13e9 - 2 * expert

    def moe_inputs(**kw: object) -> StepInputs:
        return StepInputs.of(Deployment(model=moe, accelerator=h100, devices=1, expert_parallel=2 if kw else 1,
                                        **kw))  # type: ignore[arg-type]

    assert moe_inputs(data_parallel=2).target_weight_bytes(1.0) == pytest.approx((shared * 2 + 2 * expert) * 2,
                                                                                 rel=1e-12)
    assert moe_inputs(data_parallel=2).target_weight_bytes(1.0) == pytest.approx(29.333e9, rel=1e-4)
    assert moe_inputs().target_weight_bytes(1.0) == pytest.approx(26e9, rel=1e-12)
    raw2 = replace(_raw(5.0, 1.0, 1.0, 0.0), data=2)
    assert raw2.target_weight_bytes(1.0) == 10.0


@pytest.mark.parametrize("imbalance, params", [(1.5, 13e9 - 2 * 34e9 / 6 + 1.5 * 2 * 34e9 / 6),
                                               (2.0, 13e9 - 2 * 34e9 / 6 + 2.0 * 2 * 34e9 / 6)])
def test_an_imbalance_on_one_rank_reads_more_experts_by_hand(imbalance: float, params: float) -> None:
    """The busiest device of one data-parallel rank under an expert imbalance g (the docstring
    above): 1.667e9 + g x 11.333e9 parameters, 18.667e9 at 1.5 and 24.333e9 at 2, x 2 B."""
    from budgetlint.physics import Accelerator, Deployment, ModelShape

    h100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    inp = StepInputs.of(Deployment(model=moe, accelerator=h100, devices=2, expert_parallel=2,
                                   expert_imbalance=imbalance))
    assert inp.target_weight_bytes(1.0) == pytest.approx(params * 2, rel=1e-12)


def test_step_inputs_of_drafts_experts_and_latents_by_hand() -> None:
    """StepInputs.of where the plain tests do not reach. A draft with lookahead 0 is not run: no
    draft pass, and a sequence holds only the target's KV (327,680 B x 1,000 tokens). The all-to-all
    of the MoE (32 MoE layers, hidden 4,096, 2 B activations, 2 experts a token) over expert
    parallel 2 on 2 devices with a 450 GB/s link: 32 x 2 x 4,096 x 2 B x (1 - (1/2)^2) remote share
    / (2 x 450e9) = 4.3691e-7 s a token, and 32 x 2 x 10 us = 0.64 ms of latency a pass; without
    expert parallelism nothing is exchanged, whatever latency is given; nor for a MoE whose split
    is unknown (no active count: no routed experts known). An MLA latent ((512 + 64) x 2 B =
    1,152 B a layer) is whole on each of 4 tensor ranks, in its windowed layers too: 6 full layers
    x 1,152 x 4 = 27,648 B a token and 4 windowed x 1,152 x 4 = 18,432, so a sequence of 1,000
    holds 27,648 x 1,000 + 18,432 x 64 = 28,827,648 B. Every expert active (8 of 8, 60e9 of 70e9
    active): no expert can be told from the rest, 0 parameters an expert."""
    from budgetlint.physics import Accelerator, Deployment, ModelShape
    from budgetlint.physics.step import _per_expert_params

    acc = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12},
                      interconnect_bytes_per_s=450e9)
    llama = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                       head_dim=128)
    draft = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
    idle = StepInputs.of(Deployment(model=llama, accelerator=acc, devices=4, draft=draft, draft_lookahead=0))
    assert idle.draft is None and idle.lookahead == 0
    assert idle.kv_bytes_per_sequence(1000.0) == 327680 * 1000

    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    ep = StepInputs.of(Deployment(model=moe, accelerator=acc, devices=2, expert_parallel=2, alltoall_latency_s=1e-5))
    assert ep.alltoall_s_per_token == pytest.approx(32 * 2 * 4096 * 2 * 0.75 / (2 * 450e9), rel=1e-12)
    assert ep.alltoall_fixed_s == pytest.approx(32 * 2 * 1e-5, rel=1e-12)
    one = StepInputs.of(Deployment(model=moe, accelerator=acc, devices=2, alltoall_latency_s=1e-5))
    assert (one.alltoall_s_per_token, one.alltoall_fixed_s) == (0.0, 0.0)
    nosplit = ModelShape(total_params=47e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8,
                         head_dim=128, experts=8, experts_per_token=2)
    ns = StepInputs.of(Deployment(model=nosplit, accelerator=acc, devices=2, expert_parallel=2,
                                  alltoall_latency_s=1e-5))
    assert (ns.alltoall_s_per_token, ns.alltoall_fixed_s) == (0.0, 0.0)

    mla = ModelShape(total_params=10e9, layers=10, hidden_size=4096, attention_heads=32, head_dim=128,
                     attention="mla", kv_lora_rank=512, qk_rope_head_dim=64, sliding_window=64,
                     sliding_window_layers=4)
    m = StepInputs.of(Deployment(model=mla, accelerator=acc, devices=4))
    assert (m.target.kv_full_bytes, m.target.kv_window_bytes) == (27648.0, 18432.0)
    assert m.kv_bytes_per_sequence(1000.0) == 28827648.0

    all8 = ModelShape(total_params=70e9, active_params=60e9, layers=80, hidden_size=8192, attention_heads=64,
                      kv_heads=8, head_dim=128, experts=8, experts_per_token=8)
    assert _per_expert_params(all8) == 0.0


def test_an_all_to_all_without_a_hidden_size_charges_only_its_latency() -> None:
    """The activations a token sends are 2 x hidden x 2 B a MoE layer: a model given without a
    hidden size (head_dim given instead) has no per-token exchange to charge, only the latency:
    32 layers x 2 x 10 us = 0.64 ms a pass."""
    from budgetlint.physics import Accelerator, Deployment, ModelShape

    acc = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12},
                      interconnect_bytes_per_s=450e9)
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, attention_heads=32, kv_heads=8,
                     head_dim=128, experts=8, experts_per_token=2)
    assert moe.hidden_size is None
    ep = StepInputs.of(Deployment(model=moe, accelerator=acc, devices=2, expert_parallel=2, alltoall_latency_s=1e-5))
    assert ep.alltoall_s_per_token == 0.0
    assert ep.alltoall_fixed_s == pytest.approx(0.64e-3, rel=1e-12)
