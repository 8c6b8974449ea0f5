"""physics/step.py worked by hand where the other step tests do not reach: a windowed draft's
step, the all-to-all's remote ranks, the overlap's roofline."""

from __future__ import annotations

import pytest

from budgetlint.physics import Accelerator, Deployment, ModelShape
from budgetlint.physics.step import StepInputs, _roofline, alltoall_remote_ranks

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
LLAMA70 = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
# a draft whose 16 layers all use a 64-token window: K and V x 8 heads x 64 x 2 B = 2,048 B a token a
# layer, 32,768 B a token in all; attention 4 x 32 heads x 64 = 8,192 FLOP a position a layer, 131,072 in all
WINDOWED_DRAFT = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8,
                            head_dim=64, sliding_window=64)


def _inputs(**kw: object) -> StepInputs:
    return StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=WINDOWED_DRAFT,
                                    draft_lookahead=2, **kw))  # type: ignore[arg-type]


def test_a_windowed_draft_step_by_hand() -> None:
    """2 sequences holding 1,000 context tokens in all: each windowed layer reads at most 2 x 64
    positions. Memory: (2 GB of weights + 32,768 x 128 B) / (4 x 3.35 TB/s) = 149.567 us; compute:
    2 x 1e9 x 2 FLOP + 131,072 x 128 (attention, an engine term) over 4 x 989 TFLOP/s."""
    memory = (2e9 + 32768 * 128) / (4 * 3.35e12)
    linear = 2 * 1e9 * 2 / (4 * 989e12)
    attention = 131072 * 128 / (4 * 989e12)
    # the roofline: the larger, memory
    assert _inputs()._draft_step_s(2, 1000.0) == pytest.approx(memory, rel=1e-12)
    # no overlap: they add; attention is counted only with the engine terms
    assert _inputs(overlap=0.0)._draft_step_s(2, 1000.0) == pytest.approx(memory + linear, rel=1e-12)
    assert _inputs(overlap=0.0, engine_terms=True)._draft_step_s(2, 1000.0) == pytest.approx(
        memory + linear + attention, rel=1e-12)
    # below the window (100 < 2 x 64) all of the context is read
    assert _inputs(overlap=0.0, engine_terms=True)._draft_step_s(2, 100.0) == pytest.approx(
        (2e9 + 32768 * 100) / (4 * 3.35e12) + linear + 131072 * 100 / (4 * 989e12), rel=1e-12)
    # per operator: max(weights, linear) + max(kv, attention)
    assert _inputs(per_operator=True, engine_terms=True)._draft_step_s(2, 1000.0) == pytest.approx(
        2e9 / (4 * 3.35e12) + 32768 * 128 / (4 * 3.35e12), rel=1e-12)


def test_remote_ranks_of_the_all_to_all_by_hand() -> None:
    # (e - 1)(1 - (1 - 1/e)^k): 2 ranks, 2 experts: 1 x (1 - 1/4) = 0.75; 1 expert: (e - 1)/e = 0.5
    assert alltoall_remote_ranks(2, 2) == pytest.approx(0.75, rel=1e-12)
    assert alltoall_remote_ranks(2, 1) == pytest.approx(0.5, rel=1e-12)
    # 4 ranks, 2 experts: 3 x (1 - 9/16) = 21/16
    assert alltoall_remote_ranks(4, 2) == pytest.approx(21 / 16, rel=1e-12)
    assert alltoall_remote_ranks(1, 8) == 0.0  # one rank: nothing leaves it


def test_the_overlap_roofline_by_hand() -> None:
    assert _roofline(3.0, 1.0, 1.0) == 3.0
    assert _roofline(3.0, 1.0, 0.0) == 4.0
    assert _roofline(1.0, 3.0, 0.25) == pytest.approx(3.75, rel=1e-12)  # 3 + 0.75 x 1


def test_one_prompt_s_prefill_alone_off_the_plain_path_by_hand() -> None:
    """A MoE of 47e9 parameters, 13e9 active, 8 experts, 2 a token: an expert is (47 - 13) / 6 e9 =
    5.667e9, the routed part of a token 11.333e9, the shared part 1.667e9. On data parallel 2 with
    an imbalance of 1.5, a 1,000-token prompt (attention 1e12 FLOP given) costs
    2 x 1000 x (1.667e9 x 2 + 1.5 x 11.333e9) + 1e12 x 2 = 4.2667e14 / 10 FLOP; it touches all 8
    experts: weights (1.667e9 x 2 + min(1.5 x 45.333e9, 45.333e9)) x 2 B."""
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    inp = StepInputs.of(Deployment(model=moe, accelerator=H100, devices=1, data_parallel=2, expert_parallel=2,
                                   expert_imbalance=1.5))
    expert = 34e9 / 6
    shared = 13e9 - 2 * expert
    flop, weights, a2a = inp.prefill_alone(1000.0, 1e12)
    assert flop == pytest.approx(2 * 1000 * (shared * 2 + 1.5 * 2 * expert) + 1e12 * 2, rel=1e-12)
    assert flop == pytest.approx(4.26667e13, rel=1e-5)
    assert weights == pytest.approx((shared * 2 + 8 * expert) * 2, rel=1e-12)
    assert a2a == 0.0  # no all-to-all link or latency given
    # a dense model through 2 pipeline stages: every stage's FLOP and weights, one after another
    pp = StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4, pipeline_parallel=2))
    flop, weights, a2a = pp.prefill_alone(1000.0, 1e12)
    assert flop == pytest.approx((2 * 1000 * 70e9 + 1e12) * 2, rel=1e-12)
    assert weights == pytest.approx(140e9 * 2, rel=1e-12)
    # plain (tensor only): 2 x 70e9 x 1000 + 1e12, 140 GB
    plain = StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4))
    assert plain.prefill_alone(1000.0, 1e12) == pytest.approx((2 * 1000 * 70e9 + 1e12, 140e9, 0.0), rel=1e-12)


def test_a_draft_with_full_and_windowed_layers_by_hand() -> None:
    """8 of the draft's 16 layers windowed (64 tokens): 2,048 B a token a layer, so 16,384 B x L for
    the full layers and 16,384 B x min(L, 2 x 64) for the windowed, at 2 sequences holding 1,000."""
    mixed = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64,
                       sliding_window=64, sliding_window_layers=8)
    inp = StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4, draft=mixed, draft_lookahead=2))
    assert inp._draft_step_s(2, 1000.0) == pytest.approx((2e9 + 16384 * 1000 + 16384 * 128) / (4 * 3.35e12),
                                                         rel=1e-12)


def test_a_dense_prompt_runs_on_one_data_parallel_rank() -> None:
    """A dense model's layers are replicated on every data-parallel rank, so one prompt's prefill
    runs on one rank's t = 4 devices, whatever d is. prefill_alone's FLOP are divided by all
    t x d x p devices, so they must be d x (2 x U x A + attention): for d = 2,
    (2 x 4,096 x 70e9 + attn) x 2 over 8 devices = (2 x 4,096 x 70e9 + attn) over 4, the same
    time as d = 1 (mut3 found it: the dense model's whole parameter count was taken as routed
    experts, so the linear part was not multiplied by d and the prefill read twice too fast,
    0.078 s against 0.1505 s for this prompt on 4 H100s)."""
    attn = 1.0e12
    one = StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4))
    two = StepInputs.of(Deployment(model=LLAMA70, accelerator=H100, devices=4, data_parallel=2))
    by_hand = 2.0 * 4096 * 70e9 + attn
    assert one.prefill_alone(4096.0, attn)[0] == pytest.approx(by_hand, rel=1e-12)
    assert two.prefill_alone(4096.0, attn)[0] == pytest.approx(by_hand * 2, rel=1e-12)


# 8 of 16 layers windowed (64 tokens): K and V x 8 heads x 64 x 2 B = 2,048 B a token a layer, so
# 8 x 2,048 = 16,384 B a token in the full layers and 16,384 in the windowed ones
HALF_WINDOWED = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8,
                           head_dim=64, sliding_window=64, sliding_window_layers=8)


def test_a_prefill_chunk_reads_one_window_of_its_earlier_tokens_by_hand() -> None:
    """A chunk of 100 new tokens after 1,000 earlier ones is one sequence: its windowed layers read
    the last 64 earlier positions, not 2 x 64 (the window of a batch of one). KV bytes:
    16,384 x 1,000 + 16,384 x 64 = 17,432,576; a second chunk of 10 after 30 earlier (below the
    window: all 30 read in both kinds of layer) adds 32,768 x 30 = 983,040; a chunk with nothing
    before it reads nothing."""
    from budgetlint.physics.step import prefill_load

    inp = StepInputs.of(Deployment(model=HALF_WINDOWED, accelerator=H100, devices=1))
    one = prefill_load(inp, [(100.0, 1000.0)])
    assert (one.tokens, one.kv_bytes) == (100.0, pytest.approx(16384 * 1000 + 16384 * 64, rel=1e-12))
    two = prefill_load(inp, [(100.0, 1000.0), (10.0, 30.0), (5.0, 0.0)])
    assert two.tokens == 115.0
    assert two.kv_bytes == pytest.approx(16384 * 1000 + 16384 * 64 + 32768 * 30, rel=1e-12)


@pytest.mark.parametrize("active, per_token", [(None, 2), (70e9, 8)])
def test_a_moe_without_an_expert_split_runs_its_prompt_on_one_data_parallel_rank(active, per_token) -> None:
    """A MoE whose split into shared and routed parameters is unknown: 8 experts, 2 a token but no
    active count (active = total = 70e9), or every expert active (8 of 8): one expert's parameters
    are (P_t - P_a) / (E - k) = 0 there (no split), and the weights are counted as the dense part,
    replicated on each data-parallel rank (target_weight_bytes: d x S(T)). So, as for a dense
    model, one prompt's prefill runs on one rank's t = 4 devices: FLOP d x (2 x U x A + attention)
    = (2 x 4,096 x 70e9 + 1e12) x 2 over the 8 devices, the time of d = 1 (mut4 found it: the whole
    count was taken as routed, spread over all 8, so the linear part ran twice too fast)."""
    moe = ModelShape(total_params=70e9, active_params=active, layers=80, hidden_size=8192, attention_heads=64,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=per_token)
    attn = 1.0e12
    two = StepInputs.of(Deployment(model=moe, accelerator=H100, devices=4, data_parallel=2))
    assert two.per_expert_params == 0.0
    by_hand = 2.0 * 4096 * 70e9 + attn
    assert two.prefill_alone(4096.0, attn)[0] == pytest.approx(by_hand * 2, rel=1e-12)
    # the weights it reads: 70e9 x 2 B on each of the 2 ranks' copies, counted as d x S = 280 GB
    assert two.prefill_alone(4096.0, attn)[1] == pytest.approx(2 * 140e9, rel=1e-12)
