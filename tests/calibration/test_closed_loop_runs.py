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


def test_a_parameter_at_its_bound_and_a_residual_outside_the_band_are_warned() -> None:
    """bandwidth fitted to 1.0 (the upper bound: the run is faster than the roofline allows) and a
    run 25 % off the fit where the leave-one-out band is 10 %: two warnings; inside, none."""
    from budgetlint.physics.calibration import Fit, Params
    from budgetlint.run.calibrate import fit_warnings

    obs = [_run(4)]
    at_bound = Fit(Params(bandwidth=1.0), ("bandwidth", "iteration_overhead_s"), {}, 0.0, 1,
                   ((math.log(1.25),),))
    words = fit_warnings(at_bound, obs, {"tpot": {"median": 0.05, "max": 0.10, "count": 3}})
    assert len(words) == 2
    assert "bandwidth = 1 sits at its upper bound" in words[0]
    assert "+25% off the fit" in words[1] and "band (10%" in words[1]
    inside = Fit(Params(bandwidth=0.8), ("bandwidth",), {}, 0.0, 1, ((math.log(1.05),),))
    assert fit_warnings(inside, obs, {"tpot": {"median": 0.05, "max": 0.10, "count": 3}}) == []
