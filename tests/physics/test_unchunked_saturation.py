"""The saturation closed form (physics/capacity.steady_state) for an engine without chunked
prefill (vLLM V0: ``Scheduler.chunked_prefill`` False; the simulator's
``_Replica._plan_whole_prefills``): a finished request's replacement is prefilled whole in an
iteration of prompts only, and every decode iteration carries all the users. Until issue 25's
acc6 the closed form counted chunked iterations for it (prompts sharing the decodes' iteration),
so an unchunked budget's saturation and utilisation were the chunked engine's."""

from __future__ import annotations

import math

import pytest

from budgetlint.physics.capacity import saturation, simulated_saturation, steady_state
from budgetlint.physics.serving_sim import Scheduler, Traffic
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed, LogNormal

# decode 10 ms + 0.1 ms a sequence; a prompt-only iteration 5 ms + 0.01 ms a prompt token
# (LinearStepCost charges prefill_fixed_s only where no decode shares the iteration)
LAW = LinearStepCost(decode_fixed_s=0.01, decode_per_seq_s=1e-4, prefill_fixed_s=0.005, prefill_per_token_s=1e-5)


def _sched(seqs: int, budget: int = 8192, chunked: bool = False) -> Scheduler:
    return Scheduler(max_num_seqs=seqs, max_num_batched_tokens=budget, chunked_prefill=chunked)


def test_unchunked_closed_form_by_hand() -> None:
    """100 users, prompts of 100, replies of 51 (50 decode iterations after the prefill's token).
    Every decode iteration holds all 100 users: 0.01 + 1e-4 x 100 = 20 ms, and 100 / 50 = 2 of
    them finish in it. Each user ends in a given decode iteration with chance 1/50, so the
    iteration is followed by a prompt-only iteration unless none ended: 1 - 0.98^100 = 0.86738
    of the time (8,192 / 100 = 81 prompts fit one). Their prompts: 2 x 100 x 1e-5 = 2 ms.
    t = 20 + 5 x 0.86738 + 2 = 26.3369 ms a decode iteration; mu = 2 / 0.0263369 = 75.94
    request/s. (The chunked engine's closed form for the same limits: 90.11, with no prompt-only
    iteration and 98 decodes: test_saturation_closed_form.py.)"""
    traffic = Traffic(prompt=Fixed(100), output=Fixed(51), arrival_rate_per_s=1.0)
    busy = 1 - 0.98 ** 100
    t = 0.02 + 0.005 * busy + 2 * 100 * 1e-5
    ss = steady_state(LAW, traffic, _sched(100))
    assert busy == pytest.approx(0.86738, abs=1e-5)
    assert ss.decodes == 100 and ss.requests_per_iteration == pytest.approx(2.0, rel=1e-12)
    assert ss.iteration_s == pytest.approx(t, rel=1e-9)
    assert ss.request_per_s == pytest.approx(2 / t, rel=1e-9)
    assert 2 / t == pytest.approx(75.94, abs=0.01)
    assert saturation(LAW, traffic, _sched(100, chunked=True)) == pytest.approx(90.11, abs=0.01)


def test_one_user_by_hand_and_simulated() -> None:
    """One user, prompts of 100, replies of 51: a prompt-only iteration (5 + 1 ms) and 50 decode
    iterations of one sequence (10.1 ms): 511 ms a request, 1.9569 request/s. The simulator gives
    it exactly (one user cannot fall out of step), the closed form too (the one user ends in a
    decode iteration with chance 1/50: 10.1 + 6 / 50 = 10.22 ms, 0.02 / 0.01022)."""
    traffic = Traffic(prompt=Fixed(100), output=Fixed(51), arrival_rate_per_s=1.0)
    hand = 1 / (0.006 + 50 * 0.0101)
    assert hand == pytest.approx(1.9569, abs=1e-4)
    assert saturation(LAW, traffic, _sched(1)) == pytest.approx(hand, rel=1e-12)
    assert simulated_saturation(LAW, traffic, _sched(1), requests=60, warmup=10) == pytest.approx(hand, rel=1e-12)


def test_one_token_replies_are_prompt_iterations_only() -> None:
    """Replies of one token: no decode iteration; each iteration prefills min(users, 8,192 // 1,000 = 8)
    prompts of 1,000: 5 + 80 ms for 8 requests, 94.12 request/s."""
    traffic = Traffic(prompt=Fixed(1000), output=Fixed(1), arrival_rate_per_s=1.0)
    assert saturation(LAW, traffic, _sched(64)) == pytest.approx(8 / 0.085, rel=1e-12)


@pytest.mark.parametrize("prompt,output,seqs,budget", [(100, 51, 100, 8192), (1000, 11, 256, 2048),
                                                       (300, 200, 64, 512), (200, 100, 32, 4096)])
def test_the_simulated_unchunked_closed_loop_settles_on_the_closed_form(prompt: int, output: int, seqs: int,
                                                                        budget: int) -> None:
    """Lognormal lengths (p95 2.5x the mean, so the users fall out of step), 10 rounds of the users
    simulated, the first 5 unmeasured: within 3 % of the closed form (measured: 0.986, 1.006, 1.005,
    0.974 of the simulation), where the chunked count was 6-17 % off the same simulations (90.1 against
    77.0 request/s on the first)."""
    traffic = Traffic(prompt=LogNormal(prompt, 2.5 * prompt), output=LogNormal(output, 2.5 * output),
                      arrival_rate_per_s=1.0)
    sim = simulated_saturation(LAW, traffic, _sched(seqs, budget), requests=10 * seqs + 10, warmup=5 * seqs)
    mu = saturation(LAW, traffic, _sched(seqs, budget))
    assert math.isfinite(mu) and mu == pytest.approx(sim, rel=0.03)
