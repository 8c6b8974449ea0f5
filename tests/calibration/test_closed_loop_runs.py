"""The standard `vllm bench serve` sweep shape, `request_rate: inf` with `max_concurrency: c`,
is a closed loop of c users (issue 25): calibrate fits it instead of refusing it as "sent at
once"; only a loop with more users than the engine's batch, or no cap at all, is saturated."""

from __future__ import annotations

import math

import pytest

from budgetlint.evaluate.calibration import saturated
from budgetlint.physics import Accelerator, Deployment, ModelShape
from budgetlint.physics.calibration import Observation, Target

LLAMA8 = ModelShape(total_params=8.03e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128)
H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})


def _run(concurrency: float | None, requests: int = 200) -> Observation:
    return Observation(deployment=Deployment(model=LLAMA8, accelerator=H100), prompt_tokens=1000,
                       output_tokens=200, targets=(Target("tpot", "p50", 0.01),), concurrency=concurrency,
                       request_rate=math.inf, requests=requests, max_num_seqs=256)


@pytest.mark.parametrize("c", [1, 4, 16, 32])
def test_a_closed_loop_below_the_batch_is_fitted(c: int) -> None:
    obs = _run(c)
    assert obs.mode == "burst"  # simulated: c users in a closed loop (physics.calibration.predict)
    assert not saturated(obs)  # the code before called every such run saturated (200 > c)


def test_more_users_than_the_batch_or_no_cap_is_saturated() -> None:
    assert saturated(_run(512, requests=1000))  # 512 users, 256 in the batch: the rest queue
    assert saturated(_run(None))  # every request at once
