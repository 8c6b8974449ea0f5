"""serving_sim's edges that a sampled mutation run (issue 22) found unguarded: the smallest run it
accepts, and the words of a simulation stopped for its length."""

from __future__ import annotations

import pytest

from budgetlint.physics.serving_sim import Scheduler, SimulationTooLong, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed


def test_two_requests_are_the_smallest_run() -> None:
    """Two requests of 10 prompt and 3 output tokens, closed loop of one user: both are served, the
    second after the first (no warm-up). One request is refused."""
    law = LinearStepCost(0.01)
    raw = run(law, Traffic(prompt=Fixed(10), output=Fixed(3), concurrency=1), Scheduler(), requests=2, warmup=0)
    assert [r.index for r in raw.records] == [0, 1]
    with pytest.raises(ValueError):
        run(law, Traffic(prompt=Fixed(10), output=Fixed(3), concurrency=1), Scheduler(), requests=1, warmup=0)


def test_a_simulation_too_long_names_what_made_it_long() -> None:
    """Stopped after 5 scheduler events: the words give the events, the requests, the iteration
    budget, the replicas and the KV cache the user can change."""
    law = LinearStepCost(0.01)
    with pytest.raises(SimulationTooLong) as got:
        run(law, Traffic(prompt=Fixed(10), output=Fixed(3), arrival_rate_per_s=10.0),
            Scheduler(replicas=2, max_num_batched_tokens=512, kv_capacity_tokens=4096), requests=60, max_events=5)
    words = str(got.value)
    assert words.startswith("the simulation needed more than 5 scheduler events for 60 requests")
    assert "an iteration budget of 512 tokens, 2 replicas or a KV cache of 4096 tokens makes it too long" in words
