"""The busy-machine judge of the wall-clock tests (tests/clients/wall_clock.py): a miss on a busy
machine is a skip with the measurement, a miss on an idle one stays a failure, a pass is a pass."""

from __future__ import annotations

import pytest

from .wall_clock import BUSY_LATE_S, WakeProbe, judge_on_this_machine


def _probe(late: list[float]) -> WakeProbe:
    probe = WakeProbe()
    probe.late = list(late)
    return probe


def _miss() -> None:
    assert 0.096 == pytest.approx(0.079, rel=0.2)


def test_a_miss_on_a_busy_machine_is_a_skip_that_says_what_was_measured() -> None:
    busy = _probe([0.0001] * 5 + [0.030] * 5)  # half the wake-ups 30 ms late: p90 (rank 9 of 10) is 30 ms
    with pytest.raises(pytest.skip.Exception) as skipped:
        judge_on_this_machine(busy, "the law", _miss)
    words = str(skipped.value)
    assert "the law cannot be checked on this machine now" in words
    assert "30.0 ms late at p90 over 10 wake-ups" in words
    assert "0.096" in words  # the comparison that failed


def test_a_miss_on_an_idle_machine_is_a_failure() -> None:
    idle = _probe([0.0001] * 10)
    with pytest.raises(AssertionError):
        judge_on_this_machine(idle, "the law", _miss)
    with pytest.raises(AssertionError):  # nothing measured: not busy
        judge_on_this_machine(_probe([]), "the law", _miss)


def test_a_pass_is_a_pass_however_busy() -> None:
    judge_on_this_machine(_probe([1.0] * 10), "the law", lambda: None)


def test_the_quantile_and_the_threshold() -> None:
    probe = _probe([0.004, 0.001, 0.003, 0.002])  # sorted 1, 2, 3, 4 ms: q 0.9 -> rank int(3.6) = 3 -> 4 ms
    assert probe.late_s(0.9) == 0.004
    assert probe.late_s(0.5) == 0.003
    assert _probe([BUSY_LATE_S] * 10).late_s(0.9) == BUSY_LATE_S  # at the threshold: not busy (strictly over)
    with pytest.raises(AssertionError):
        judge_on_this_machine(_probe([BUSY_LATE_S] * 10), "the law", _miss)


def test_the_probe_measures_real_sleeps() -> None:
    import time

    with WakeProbe(period_s=0.001) as probe:
        time.sleep(0.05)
    assert probe.late, "the probe's thread never woke"
    assert all(x >= 0 for x in probe.late)
