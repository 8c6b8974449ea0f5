"""The uncalibrated percentile band (issue 25, BL331): an uncalibrated simulated percentile, or the
top of its interval, above its promise by no more than the model's measured pessimism is
``not-shown``, never ``at-risk``.

The band's source: the largest predicted / measured ratio over every p50, p90 and p99 TTFT and
TPOT of benchmarks/validation's sustained runs (issue 25 ttft25, the llm-d sweep's random router) is
vLLM on 4 x L40S (llm-d, kvcache) at 30 request/s, p99 TTFT 199.41 / 168.38 ms = 1.1842 (rounded up
to four figures: 1.185; from acc25 Dell XE9680 H200 Interactive, p99 TTFT 406.48 / 367.12 ms =
1.1072, band 1.108; until acc25 SGLang 4 x H200 at 1 request/s, p50 TPOT 14.98 / 13.61 ms = 1.1006,
band 1.101). The numbers below are worked by hand from that factor: a promise of 40 ms has its band
up to 40 x 1.185 = 47.40 ms.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from budgetlint.evaluate.load import (UNCALIBRATED_PERCENTILE_PESSIMISM, LoadEvaluation, percentile_band_edge,
                                      settle_percentile_error)
from budgetlint.physics.capacity import load_verdict

LIMIT = 0.040


def test_the_factor_is_the_validation_sets_largest_pessimism_rounded_up() -> None:
    assert 199.41 / 168.38 == pytest.approx(1.1843, abs=1e-4)
    assert UNCALIBRATED_PERCENTILE_PESSIMISM == 1.185
    assert UNCALIBRATED_PERCENTILE_PESSIMISM >= 199.41 / 168.38 > 406.48 / 367.12 > 14.98 / 13.61


def _load(value: float, low: float, high: float, *, limit: float = LIMIT, promise: str = "tpot",
          calibrated: bool = False, extra: float = 0.0) -> LoadEvaluation:
    """A p99 load whose simulated ``promise`` is ``value`` (interval ``low``-``high``), its verdict
    the one the simulation gives (load_verdict: the bound far under the promise), then settled."""
    key = f"{promise}_s"
    result = SimpleNamespace(predicted={key: {"p99": value - extra}}, interval={f"{key}.p99": (low - extra, high - extra)})
    load = LoadEvaluation(percentile=99.0, arrival_rate_per_s=5.0, result=result, edge_extra_s=extra,
                          calibrated="calibrated from 2 runs of x (cal.yaml)" if calibrated else "")
    load.limits[promise] = limit
    load.verdicts[promise] = load_verdict(limit, 0.001, value, high)
    settle_percentile_error(load, [promise])
    return load


def test_the_edge_by_hand() -> None:
    load = LoadEvaluation()
    load.limits["tpot"] = LIMIT
    assert percentile_band_edge(load, "tpot") == pytest.approx(0.04740, rel=1e-12)


def test_just_inside_the_band_is_not_shown() -> None:
    """42.3 ms (interval 41.5-43.0 ms) against 40 ms: the top 43.0 is under 47.40: not shown (was at
    risk). Near the Dell XE9680 Interactive run's figures: 42.25 ms against 39.9 ms before acc25 (edge
    39.9 x 1.185 = 47.28 now)."""
    load = _load(0.0423, 0.0415, 0.0430)
    assert load.verdicts == {"tpot": "not-shown"} and load.in_percentile_band == ["tpot"]


def test_the_point_estimate_holds_and_the_interval_is_inside_the_band() -> None:
    """39.5 ms with its top at 41 ms: at risk on the interval alone; 41 < 47.40: not shown."""
    load = _load(0.0395, 0.0380, 0.0410)
    assert load.verdicts == {"tpot": "not-shown"} and load.in_percentile_band == ["tpot"]


@pytest.mark.parametrize("value,low,high", [(0.0475, 0.0469, 0.0479), (0.0460, 0.0450, 0.0475)])
def test_just_outside_the_band_is_at_risk(value: float, low: float, high: float) -> None:
    """47.5 ms itself, or an interval's top of 47.5 ms: past 47.40 ms, at risk (BL307 says it)."""
    load = _load(value, low, high)
    assert load.verdicts == {"tpot": "at-risk"} and load.in_percentile_band == []


def test_below_the_band_is_met() -> None:
    """39 ms with its top at 39.9 ms: under the promise, met; the band does not touch it (one-sided)."""
    load = _load(0.0390, 0.0380, 0.0399)
    assert load.verdicts == {"tpot": "met"} and load.in_percentile_band == []


def test_calibrated_keeps_its_own_error() -> None:
    load = _load(0.0423, 0.0415, 0.0430, calibrated=True)
    assert load.verdicts == {"tpot": "at-risk"} and load.in_percentile_band == []


def test_overloaded_and_the_capacity_band_are_left_alone() -> None:
    key = "tpot_s"
    for flag in ("overloaded", "in_capacity_band"):
        load = LoadEvaluation(percentile=99.0, arrival_rate_per_s=5.0,
                              result=SimpleNamespace(predicted={key: {"p99": 0.0423}},
                                                     interval={f"{key}.p99": (0.0415, 0.0430)}))
        setattr(load, flag, True)
        load.limits["tpot"] = LIMIT
        load.verdicts["tpot"] = "at-risk" if flag == "overloaded" else "not-shown"
        settle_percentile_error(load, ["tpot"])
        assert load.in_percentile_band == []
        assert load.verdicts["tpot"] == ("at-risk" if flag == "overloaded" else "not-shown")


def test_the_bound_decides_first() -> None:
    result = SimpleNamespace(predicted={"tpot_s": {"p99": 0.0423}}, interval={"tpot_s.p99": (0.0415, 0.0430)})
    load = LoadEvaluation(percentile=99.0, arrival_rate_per_s=5.0, result=result)
    load.limits["tpot"] = LIMIT
    load.verdicts["tpot"] = load_verdict(LIMIT, 0.041, 0.0423, 0.0430)  # the bound 41 ms misses
    settle_percentile_error(load, ["tpot"])
    assert load.verdicts == {"tpot": "cannot-be-met"} and load.in_percentile_band == []


@pytest.mark.parametrize("value,want", [(0.455, "not-shown"), (0.456, "at-risk")])
def test_the_edge_allowances_are_added_outside_the_band(value: float, want: str) -> None:
    """A TTFT promise of 400 ms with 100 ms of declared edge allowances: the simulated part's promise
    is 300 ms, its band up to 300 x 1.185 = 355.5 ms, plus the 100 ms: 455.5 ms (not 400 x 1.185 =
    474.0 ms). 455 ms is inside, 456 ms outside."""
    load = _load(value, value - 0.005, value, limit=0.400, promise="ttft", extra=0.100)
    assert percentile_band_edge(load, "ttft") == pytest.approx(0.4555, rel=1e-12)
    assert load.verdicts == {"ttft": want}
