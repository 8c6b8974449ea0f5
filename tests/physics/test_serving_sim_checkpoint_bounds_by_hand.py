"""serving_sim's bounds on a run's warm-up and checkpoints, worked by hand (issue 22: survivors of
the seed-10 sample of 300 mutants). Every law is :class:`LinearStepCost`: 10 prompt tokens at 1 ms
a token and 1-token replies, so each request alone takes 10 ms."""

from __future__ import annotations

from budgetlint.physics.serving_sim import Scheduler, Traffic, run, stream
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed

LAW = LinearStepCost(0.01, prefill_per_token_s=0.001)


def test_a_trace_shorter_than_the_warm_up_measures_its_last_two_requests() -> None:
    """The default 2,000 requests take a warm-up of 200; a trace of 4 arrivals cuts the run to 4
    requests and the warm-up to 4 - 2 = 2 (two measured requests at least): requests 2 and 3."""
    traffic = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=(0.0, 1.0, 2.0, 3.0))
    raw = run(LAW, traffic, Scheduler())
    assert [r.index for r in raw.records] == [2, 3]
    assert (raw.window_start_s, raw.window_end_s) == (2.0, 3.0)


def test_a_checkpoint_at_the_run_s_length_is_no_checkpoint_even_in_a_closed_loop() -> None:
    """Checkpoints count below the run's length only (warm-up + 2 <= m < requests): one at 40 of 40 is
    none, so a closed loop (which takes no checkpoints) is not refused for it, and the full run comes
    back: 40 requests less a warm-up of 20 (at most half)."""
    traffic = Traffic(prompt=Fixed(10), output=Fixed(1), concurrency=2)
    raw = run(LAW, traffic, Scheduler(), requests=40, checkpoints=[40], stop=lambda raw: True)
    assert [r.index for r in raw.records] == list(range(20, 40))
    assert [m for m, _ in stream(LAW, traffic, Scheduler(), requests=40, checkpoints=[40])] == [None]
