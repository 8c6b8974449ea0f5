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
