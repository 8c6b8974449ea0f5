"""physics/load_stats.py's percentile, t quantiles, sectioning interval and weighted percentile on
small samples worked by hand (issue 22: mutation testing against tests/physics)."""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import load_stats as ls


def test_percentile_interpolates_between_closest_ranks() -> None:
    v = [1.0, 2.0, 3.0, 4.0]
    # rank (n - 1) p / 100: p50 at 1.5 -> 2.5; p90 at 2.7 -> 3.7; p0 and p100 the ends
    assert ls.percentile(v, 50) == 2.5 and ls.percentile(v, 90) == pytest.approx(3.7)
    assert ls.percentile(v, 0) == 1.0 and ls.percentile(v, 100) == 4.0
    assert ls.percentile([7.0], 95) == 7.0 and math.isnan(ls.percentile([], 50))
    assert ls.percentile_label(95.0) == "p95" and ls.percentile_label(99.9) == "p99.9"


# two-sided 95 % Student t quantiles t_{0.975, df} from a standard table
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
           10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045}


def test_t_quantiles() -> None:
    for df, t in T_TABLE.items():
        assert ls.t_quantile(df) == t, df
    # between tabulated rows the next smaller df (a wider interval): 16 -> 15's, 20 -> 19's
    assert ls.t_quantile(16) == 2.131 and ls.t_quantile(20) == 2.093 and ls.t_quantile(28) == 2.093
    # from 30 on 1.96 + 2.4 / df, within 0.3 % of the table (t_30 = 2.042, t_60 = 2.000, t_120 = 1.980)
    assert ls.t_quantile(30) == pytest.approx(2.042, rel=3e-3)
    assert ls.t_quantile(60) == pytest.approx(2.000, rel=3e-3)
    assert ls.t_quantile(120) == pytest.approx(1.980, rel=3e-3)


def test_sectioned_interval_by_hand() -> None:
    """20 values in 10 sections of 2: (1, 3) and (2, 4) alternating, section medians 2 and 3, mean 2.5,
    sd sqrt(10 x 0.25 / 9) = 0.527; half-width t_9 x sd / sqrt(10) = 2.262 x 0.1667 = 0.377. The
    median of all 20 (five each of 1..4) is 2.5."""
    values = [1.0, 3.0, 2.0, 4.0] * 5
    point, lo, hi = ls.sectioned_interval(values, 50)
    half = 2.262 * math.sqrt(10 * 0.25 / 9) / math.sqrt(10)
    assert point == 2.5 and lo == pytest.approx(2.5 - half) and hi == pytest.approx(2.5 + half)
    # NaNs are left out (they are requests without the metric)
    assert ls.sectioned_interval(values + [math.nan] * 3, 50)[1] == pytest.approx(2.5 - half)
    # fewer than 2 values a section: no interval
    point, lo, hi = ls.sectioned_interval([1.0, 2.0, 3.0], 50)
    assert point == 2.0 and math.isnan(lo) and math.isnan(hi)
    assert math.isnan(ls.sectioned_interval(values, 50, sections=1)[1])
    # 4 sections of 5: [1,3,2,4,1] [3,2,4,1,3] [2,4,1,3,2] [4,1,3,2,4]: medians 2, 3, 2, 3
    point, lo, hi = ls.sectioned_interval(values, 50, sections=4)
    half4 = 3.182 * math.sqrt(4 * 0.25 / 3) / 2
    assert lo == pytest.approx(2.5 - half4) and hi == pytest.approx(2.5 + half4)


def test_cdf_band_is_the_sectioned_interval_at_each_percentile() -> None:
    values = [1.0, 3.0, 2.0, 4.0] * 5 + [math.nan]
    rows = ls.cdf_band(values, ps=(50.0, 90.0))
    half = 2.262 * math.sqrt(10 * 0.25 / 9) / math.sqrt(10)
    assert rows[0] == pytest.approx((50.0, 2.5, 2.5 - half, 2.5 + half))
    # p90 of each pair (a, b) is a + 0.9 (b - a): 2.8 and 3.8; of all 20: rank 17.1 -> 4
    half90 = 2.262 * math.sqrt(10 * 0.25 / 9) / math.sqrt(10)
    assert rows[1] == pytest.approx((90.0, 4.0, 4.0 - half90, 4.0 + half90))
    (row,) = ls.cdf_band([1.0, 2.0, 3.0], ps=(50.0,))
    assert row[:2] == (50.0, 2.0) and math.isnan(row[2]) and math.isnan(row[3])
    assert len(ls.cdf_band(values)) == len(ls.CDF_PERCENTILES)


def test_weighted_percentile() -> None:
    # batch 1 for 3 s, batch 4 for 1 s, batch 2 for 0 s (not counted): weight 4 in all
    pairs = [(3.0, 1), (1.0, 4), (0.0, 2)]
    assert ls.weighted_percentile(pairs, 50) == 1.0   # 2 of 4 s reached within batch 1
    assert ls.weighted_percentile(pairs, 75) == 1.0   # exactly 3 of 4 s: still batch 1
    assert ls.weighted_percentile(pairs, 76) == 4.0
    assert ls.weighted_percentile(pairs, 100) == 4.0
    assert math.isnan(ls.weighted_percentile([(0.0, 3)], 50)) and math.isnan(ls.weighted_percentile([], 50))


def test_percentile_promises() -> None:
    p = ls.PercentilePromise("ttft_s", 95.0, 0.5)
    assert p.key == "ttft_s.p95"
    ls.PercentilePromise("e2e_s", 100.0, 1.0)
    for bad, match in ((("ttfb_s", 95.0, 0.5), "metric must be one of ttft_s, tpot_s, e2e_s, queue_s"),
                       (("ttft_s", 0.0, 0.5), r"percentile must be in \(0, 100\]"),
                       (("ttft_s", 100.5, 0.5), r"percentile must be in \(0, 100\]"),
                       (("ttft_s", 95.0, 0.0), "limit_s must be positive"),
                       (("ttft_s", 95.0, math.inf), "limit_s must be positive")):
        with pytest.raises(ValueError, match=match):
            ls.PercentilePromise(*bad)


def test_simulation_result_as_dict_is_the_documented_json_shape() -> None:
    from budgetlint.physics.load_stats import SimulationResult

    r = SimulationResult(
        predicted={"ttft_s": {"p50": 0.1, "p95": 0.3}}, interval={"ttft_s.p95": (0.25, 0.35)},
        busy_fraction=0.5, batch_size_mean=3.5, batch_size_p95=7.0, preemptions_per_request=0.01,
        slo_attainment=0.97, goodput_request_per_s=9.7, throughput_request_per_s=10.0,
        output_token_per_s=2000.0, arrival_rate_per_s=10.5, mean_in_system=4.0, mean_sojourn_s=0.4,
        requests=400, rejected=2, replicas=3, window_s=40.0, promises_met={"ttft_s.p95": True},
        cdf={"ttft_s": ((50.0, 0.1, 0.09, 0.11), (99.0, 0.5, 0.4, 0.6))})
    d = r.as_dict()
    assert d == {
        "predicted": {"ttft_s": {"p50": 0.1, "p95": 0.3}},
        "interval": {"ttft_s.p95": {"low": 0.25, "high": 0.35, "confidence": 0.95, "method": "sectioning"}},
        "busy_fraction": 0.5,
        "batch_size": {"mean": 3.5, "p95": 7.0},
        "preemptions_per_request": 0.01,
        "slo_attainment": 0.97,
        "goodput_request_per_s": 9.7,
        "throughput_request_per_s": 10.0,
        "output_token_per_s": 2000.0,
        "requests_simulated": 400,
        "rejected": 2,
        "replicas": 3,
        "cdf": {"ttft_s": [{"p": 50.0, "value": 0.1, "low": 0.09, "high": 0.11},
                           {"p": 99.0, "value": 0.5, "low": 0.4, "high": 0.6}]},
    }
    # a copy: editing the dict leaves the result alone
    d["predicted"]["ttft_s"]["p50"] = 9.0
    assert r.predicted["ttft_s"]["p50"] == 0.1
    # no promises: the attainment is NaN, written as null
    import dataclasses
    import math as _math

    assert dataclasses.replace(r, slo_attainment=_math.nan).as_dict()["slo_attainment"] is None
    assert dataclasses.replace(r, cdf={}).as_dict()["cdf"] == {}


def _raw_run(records, window=(0.0, 10.0)):
    from budgetlint.physics.serving_sim import RawRun

    return RawRun(tuple(records), window[0], window[1], 2, 15.0, 99.0, ((2.0, 1), (3.0, 3), (0.0, 7)), 5, 3, 300)


def _rec(i, queue, ttft, e2e, tpot, preempt=0, rejected=False):
    from budgetlint.physics.serving_sim import RequestRecord

    return RequestRecord(i, i % 2, float(i), queue, ttft, e2e, tpot, 100, 0, 50, preempt, rejected)


NAN = float("nan")
RECS = [_rec(0, 0.1, 0.5, 2.0, 0.015), _rec(1, 0.2, 1.0, 3.0, 0.020, preempt=1), _rec(2, 0.0, 0.3, 1.0, 0.007),
        _rec(3, NAN, NAN, NAN, NAN, preempt=2, rejected=True)]


def test_summarise_by_hand() -> None:
    """Three served requests and one rejected, over a 10 s window on 2 replicas.

    TTFTs 0.3, 0.5, 1.0 (sorted): linear-interpolation percentiles p50 = 0.5, p90 = 0.5 + 0.8 x 0.5
    = 0.9, p95 = 0.95, p99 = 0.99. A TTFT p95 promise of 0.9 s is missed (0.95); an E2E p75 promise
    of 2.6 s is met (1, 2, 3: 2.5) and adds p75 to the E2E figures. Requests within both: 2 of the 4
    recorded, attainment 0.5, goodput 0.5 x 3 completions / 10 s = 0.15/s. Busy stretches 2 s at
    batch 1 and 3 s at batch 3 (a zero-length one ignored): busy 5 s of 2 x 10, 25 %; mean batch
    (2 + 9) / 5 = 2.2; p95 by time: 3. Preemptions (0 + 1 + 0 + 2) / 4. Arrivals in the window 5:
    rate (5 - 1) / 10; mean in system 15 / 10; mean sojourn (2 + 3 + 1) / 3."""
    from budgetlint.physics.load_stats import PercentilePromise, summarise

    promises = [PercentilePromise("ttft_s", 95, 0.9), PercentilePromise("e2e_s", 75, 2.6)]
    r = summarise(_raw_run(RECS), promises)
    assert r.predicted["ttft_s"] == {"p50": pytest.approx(0.5), "p90": pytest.approx(0.9), "p95": pytest.approx(0.95),
                                     "p99": pytest.approx(0.99)}
    assert r.predicted["e2e_s"] == {"p50": 2.0, "p90": pytest.approx(2.8), "p95": pytest.approx(2.9),
                                    "p99": pytest.approx(2.98), "p75": pytest.approx(2.5)}
    assert r.predicted["queue_s"]["p50"] == pytest.approx(0.1)
    assert r.predicted["tpot_s"]["p50"] == pytest.approx(0.015)
    assert r.promises_met == {"ttft_s.p95": False, "e2e_s.p75": True}
    assert set(r.interval) == {"ttft_s.p95", "e2e_s.p75"}  # too few requests to section: NaN bounds
    assert all(math.isnan(lo) and math.isnan(hi) for lo, hi in r.interval.values())
    assert r.slo_attainment == pytest.approx(0.5)
    assert r.goodput_request_per_s == pytest.approx(0.15)
    assert r.throughput_request_per_s == pytest.approx(0.3)
    assert r.output_token_per_s == pytest.approx(30.0)
    assert r.arrival_rate_per_s == pytest.approx(0.4)
    assert r.busy_fraction == pytest.approx(0.25)
    assert r.batch_size_mean == pytest.approx(2.2)
    assert r.batch_size_p95 == 3.0
    assert r.preemptions_per_request == pytest.approx(0.75)
    assert r.mean_in_system == pytest.approx(1.5)
    assert r.mean_sojourn_s == pytest.approx(2.0)
    assert (r.requests, r.rejected, r.replicas, r.window_s) == (4, 1, 2, 10.0)
    assert set(r.cdf) == {"ttft_s", "tpot_s", "e2e_s"}  # no CDF of the queue
    assert r.cdf["ttft_s"][0][:2] == (1.0, pytest.approx(0.3 + 0.02 * 0.2))  # p1: x = 0.02
    assert summarise(_raw_run(RECS), promises, cdf=False).cdf == {}


def test_summarise_without_promises_or_requests() -> None:
    from budgetlint.physics.load_stats import summarise

    r = summarise(_raw_run(RECS))
    assert math.isnan(r.slo_attainment) and r.promises_met == {} and r.interval == {}
    assert r.goodput_request_per_s == pytest.approx(0.3)  # every completion counts
    empty = summarise(_raw_run([]))
    assert empty.preemptions_per_request == 0.0 and empty.requests == 0
    assert empty.goodput_request_per_s == 0.0  # no recorded request: the good ones (none) per second
    assert math.isnan(empty.mean_sojourn_s) and math.isnan(empty.predicted["ttft_s"]["p50"])
    # a window of no length: per-second figures and the busy fraction are NaN, not a division by zero
    flat = summarise(_raw_run(RECS, window=(5.0, 5.0)))
    assert all(math.isnan(x) for x in (flat.throughput_request_per_s, flat.output_token_per_s,
                                       flat.arrival_rate_per_s, flat.busy_fraction, flat.mean_in_system))
    assert flat.window_s == 0.0
    # a run with no busy stretch: batch figures 0
    from budgetlint.physics.serving_sim import RawRun

    idle = summarise(RawRun(tuple(RECS), 0.0, 10.0, 1, 0.0, 0.0, (), 1, 0, 0))
    assert (idle.batch_size_mean, idle.batch_size_p95, idle.busy_fraction) == (0.0, 0.0, 0.0)


def test_percentile_promise_bounds_and_words() -> None:
    from budgetlint.physics.load_stats import PercentilePromise

    assert PercentilePromise("ttft_s", 0.5, 1.0).key == "ttft_s.p0.5"  # any percentile in (0, 100]
    assert PercentilePromise("e2e_s", 100, 1.0).key == "e2e_s.p100"
    with pytest.raises(ValueError, match=r"^percentile must be in \(0, 100\], got 0$"):
        PercentilePromise("ttft_s", 0, 1.0)
    with pytest.raises(ValueError, match=r"^percentile must be in \(0, 100\], got 100.5$"):
        PercentilePromise("ttft_s", 100.5, 1.0)
    with pytest.raises(ValueError, match=r"^metric must be one of ttft_s, tpot_s, e2e_s, queue_s, got 'ttft'$"):
        PercentilePromise("ttft", 50, 1.0)
    with pytest.raises(ValueError, match=r"^limit_s must be positive, got inf$"):
        PercentilePromise("ttft_s", 50, float("inf"))


def test_small_cases_of_the_interpolated_percentile_and_the_t_table() -> None:
    from budgetlint.physics.load_stats import percentile, t_quantile

    assert percentile([1.0, 3.0], 50) == 2.0 and percentile([7.0], 99) == 7.0
    # df 30: 1.96 + 2.4 / 30 = 2.04 (the table's 29 is 2.045)
    assert t_quantile(30) == pytest.approx(2.04) and t_quantile(29) == 2.045


def test_two_sections_by_hand() -> None:
    from budgetlint.physics.load_stats import cdf_band, sectioned_interval

    # 1..8 in two sections of 4: medians 2.5 and 6.5, mean 4.5, sd sqrt((4 + 4) / 1) = 2.828;
    # half-width t(1) x sd / sqrt 2 = 12.706 x 2 = 25.412 around the whole median 4.5
    point, lo, hi = sectioned_interval([1, 2, 3, 4, 5, 6, 7, 8], 50, sections=2)
    assert (point, lo, hi) == (4.5, pytest.approx(4.5 - 25.412), pytest.approx(4.5 + 25.412))
    (row,) = cdf_band([1, 2, 3, 4, 5, 6, 7, 8], ps=(50.0,), sections=2)
    assert row == (50.0, 4.5, pytest.approx(4.5 - 25.412), pytest.approx(4.5 + 25.412))
    # one section: no interval
    assert math.isnan(sectioned_interval([1, 2, 3, 4], 50, sections=1)[1])
    assert math.isnan(cdf_band([1, 2, 3, 4], ps=(50.0,), sections=1)[0][2])


def test_a_cdf_of_too_few_values_has_every_row_and_no_band() -> None:
    from budgetlint.physics.load_stats import CDF_PERCENTILES, cdf_band

    # 15 values in 10 sections: sections of one value, too few to spread: NaN bands, every p listed
    rows = cdf_band([float(v) for v in range(15)])
    assert [r[0] for r in rows] == list(CDF_PERCENTILES)
    assert all(math.isnan(r[2]) and math.isnan(r[3]) for r in rows)
    assert rows[7][1] == 7.0  # p50 of 0..14


def test_weighted_percentile_by_hand() -> None:
    from budgetlint.physics.load_stats import weighted_percentile

    # values 2 (weight 3) and 5 (weight 1), a zero weight ignored: half the time at 2; 80 % needs 5
    pairs = [(1.0, 5), (0.0, 100), (3.0, 2)]
    assert weighted_percentile(pairs, 50) == 2.0 and weighted_percentile(pairs, 80) == 5.0
    assert weighted_percentile(pairs, 75) == 2.0  # exactly 3 of 4 at 2
    # weights 1 and 1: 50.5 % is past the first
    assert weighted_percentile([(1.0, 2), (1.0, 5)], 50.5) == 5.0
    # weights 2, 1, 1 of values 1, 5, 9: 75 % reaches the second
    assert weighted_percentile([(2.0, 1), (1.0, 5), (1.0, 9)], 75) == 5.0
    # less than a second of weight in all
    assert weighted_percentile([(0.5, 7)], 95) == 7.0
    # a zero-weight value is never the answer, even at p0
    assert weighted_percentile([(0.0, 1), (1.0, 5)], 0) == 5.0
    assert math.isnan(weighted_percentile([(0.0, 1)], 50)) and math.isnan(weighted_percentile([], 50))


def test_summarise_at_the_limits() -> None:
    from budgetlint.physics.load_stats import PercentilePromise, summarise
    from budgetlint.physics.serving_sim import RawRun

    # a promise exactly at the point estimate is met, and a request exactly at the limit is good
    r = summarise(_raw_run(RECS), [PercentilePromise("ttft_s", 50, 0.5)])
    assert r.promises_met == {"ttft_s.p50": True}
    assert r.slo_attainment == pytest.approx(2 / 4)  # 0.5 and 0.3 of the 4 recorded
    # promises but no request: attainment NaN, not a division by zero
    assert math.isnan(summarise(_raw_run([]), [PercentilePromise("ttft_s", 50, 0.5)]).slo_attainment)
    # a half-second window with half a second busy at batch 2: every per-second figure doubles
    short = summarise(RawRun(tuple(RECS), 0.0, 0.5, 1, 1.5, 0.5, ((0.5, 2),), 3, 3, 30))
    assert short.batch_size_mean == 2.0 and short.busy_fraction == 1.0
    assert (short.throughput_request_per_s, short.output_token_per_s, short.arrival_rate_per_s,
            short.mean_in_system) == (6.0, 60.0, 4.0, 3.0)
    # the batch p95 is the 95th percentile by time: 95 s at 1, 5 s at 9 -> 1 (96 % would be 9)
    p95 = summarise(RawRun(tuple(RECS), 0.0, 100.0, 1, 1.0, 100.0, ((95.0, 1), (5.0, 9)), 3, 3, 30))
    assert p95.batch_size_p95 == 1.0
