"""stats/histogram.py worked by hand (issue 22: mutation testing against tests/stats; its other
tests are in tests/slo/). The histogram used: buckets le 0.1, 0.2, 0.5, +Inf with cumulative
counts 10, 30, 90, 100 (10 at or under 0.1 s, 20 in (0.1, 0.2], 60 in (0.2, 0.5], 10 above)."""

from __future__ import annotations

import math

import pytest

from budgetlint.stats.histogram import Share, nearest_edges, quantile, quantile_band, share_at_most, total

INF = math.inf
H = ((0.1, 10.0), (0.2, 30.0), (0.5, 90.0), (INF, 100.0))


def test_total() -> None:
    assert total(H) == 100.0 and total(()) == 0.0


def test_quantile_as_promql_histogram_quantile() -> None:
    # rank 0.5 x 100 = 50: third bucket (30 below, 60 inside): 0.2 + 0.3 x (50 - 30) / 60 = 0.3
    assert quantile(H, 0.5) == pytest.approx(0.3)
    # rank 5 in the first bucket, which starts at 0: 0.1 x 5 / 10
    assert quantile(H, 0.05) == pytest.approx(0.05)
    # rank 20: 0.1 + 0.1 x (20 - 10) / 20 = 0.15; rank exactly 30 is the second bucket's top
    assert quantile(H, 0.2) == pytest.approx(0.15) and quantile(H, 0.3) == pytest.approx(0.2)
    # rank 95 is in the +Inf bucket: the highest finite edge
    assert quantile(H, 0.95) == 0.5
    assert quantile(H, 0.0) == 0.0 and quantile(H, 1.0) == 0.5
    # an empty bucket that reaches the rank: its upper edge
    assert quantile(((0.1, 0.0), (0.2, 0.0), (INF, 10.0)), 0.0) == 0.1
    # a first edge at or below 0 returns that edge
    assert quantile(((0.0, 5.0), (1.0, 10.0), (INF, 10.0)), 0.2) == 0.0
    assert quantile(((-1.0, 5.0), (1.0, 10.0), (INF, 10.0)), 0.2) == -1.0
    # NaN: one bucket, no +Inf bucket, no observations, q outside [0, 1]
    for h, q in ((((INF, 5.0),), 0.5), (((0.1, 1.0), (0.2, 2.0)), 0.5), (((0.1, 0.0), (INF, 0.0)), 0.5),
                 (H, -0.01), (H, 1.01)):
        assert math.isnan(quantile(h, q))


def test_quantile_band_is_the_bucket() -> None:
    assert quantile_band(H, 0.5) == (0.2, 0.5)
    assert quantile_band(H, 0.05) == (0.0, 0.1)
    assert quantile_band(H, 0.3) == (0.1, 0.2)
    assert quantile_band(H, 0.95) == (0.5, INF)
    assert all(math.isnan(x) for x in quantile_band(((INF, 5.0),), 0.5))
    assert all(math.isnan(x) for x in quantile_band(((0.1, 0.0), (INF, 0.0)), 0.5))


def test_share_at_an_edge_is_exact() -> None:
    s = share_at_most(H, 0.2)
    assert s == Share(0.2, 30.0, 30.0, 30.0, 0.2, 0.2, 100.0) and s.exact
    # within the relative tolerance of an edge the edge's count is taken (both bounds that edge);
    # outside it the threshold lies between 0.2 and 0.5
    near = share_at_most(H, 0.2 * (1 + 1e-12))
    assert (near.at_most_low, near.at_most_high, near.lower_edge, near.upper_edge) == (30.0, 30.0, 0.2, 0.2)
    # and it is exact: the count is the edge's (was False, T != the edge by 1e-12: "30% .. 30%")
    assert near.exact
    # between two edges it is bounded, even where the bucket between them is empty
    assert not share_at_most(((0.1, 10.0), (0.2, 10.0), (INF, 20.0)), 0.15).exact
    assert share_at_most(H, 0.2 * (1 + 1e-6)).upper_edge == 0.5
    assert share_at_most(H, 0.2 * (1 + 1e-6), rel_tol=1e-3).upper_edge == 0.2


def test_share_between_edges_is_bounded_and_interpolated() -> None:
    # 0.3 s: at least the 30 under 0.2, at most the 90 under 0.5, linearly 30 + 60 x 0.1 / 0.3 = 50
    s = share_at_most(H, 0.3)
    assert (s.at_most_low, s.at_most_high, s.lower_edge, s.upper_edge, s.total) == (30.0, 90.0, 0.2, 0.5, 100.0)
    assert s.interpolated == pytest.approx(50.0) and not s.exact
    # below the first edge: from 0, none certainly under, 10 x 0.05 / 0.1 = 5 interpolated
    s = share_at_most(H, 0.05)
    assert (s.at_most_low, s.at_most_high, s.lower_edge, s.upper_edge) == (0.0, 10.0, None, 0.1)
    assert s.interpolated == pytest.approx(5.0)
    # above the last finite edge: the +Inf bucket cannot be interpolated
    s = share_at_most(H, 1.0)
    assert (s.at_most_low, s.at_most_high, s.interpolated, s.lower_edge, s.upper_edge) == (90.0, 100.0, 90.0, 0.5, INF)
    # no +Inf bucket and a threshold above every edge: the total as the upper count
    s = share_at_most(((0.1, 4.0), (0.2, 8.0)), 0.5)
    assert (s.at_most_low, s.at_most_high, s.interpolated, s.upper_edge, s.total) == (8.0, 8.0, 8.0, None, 8.0)
    # the share is exact only at an edge: equal counts alone are not enough
    s = share_at_most(((0.1, 4.0), (0.2, 4.0), (INF, 4.0)), 0.15)
    assert s.at_most_low == s.at_most_high == 4.0 and not s.exact
    # a bucket of no width (edges out of order) is not interpolated
    s = share_at_most(((0.2, 4.0), (0.1, 6.0), (INF, 8.0)), 0.15)
    assert s.interpolated == s.at_most_low


def test_nearest_edges() -> None:
    edges = (0.5, 0.1, 0.2)
    assert nearest_edges(edges, 0.2) == (0.2, 0.2, True)
    assert nearest_edges(edges, 0.3) == (0.2, 0.5, False)
    assert nearest_edges(edges, 0.05) == (None, 0.1, False)
    assert nearest_edges(edges, 0.7) == (0.5, None, False)
    assert nearest_edges(edges, 0.2 * (1 + 1e-12)) == (0.2, 0.2, True)
    assert nearest_edges(edges, 0.2 * (1 + 1e-6), rel_tol=1e-3)[2] is True
    assert nearest_edges(edges, 0.2 * (1 + 1e-6))[2] is False


def test_small_histograms_and_one_observation_buckets() -> None:
    # two buckets: 4 of 10 at or under 1 s; rank 2 inside the first: 1 x 2 / 4
    two = ((1.0, 4.0), (INF, 10.0))
    assert quantile(two, 0.2) == pytest.approx(0.5) and quantile_band(two, 0.2) == (0.0, 1.0)
    # one observation in all: the median is half-way up its bucket
    one = ((1.0, 1.0), (INF, 1.0))
    assert quantile(one, 0.5) == pytest.approx(0.5) and quantile_band(one, 0.5) == (0.0, 1.0)
    # a bucket holding one observation: rank 1.5 of 2, one below 1 s and one in (1, 2]: 1.5
    assert quantile(((1.0, 1.0), (2.0, 2.0), (INF, 2.0)), 0.75) == pytest.approx(1.5)
    # five buckets, rank in +Inf: the highest finite edge (the fourth), not the third
    five = ((0.1, 1.0), (0.2, 2.0), (0.3, 3.0), (0.4, 4.0), (INF, 10.0))
    assert quantile(five, 0.9) == 0.4


def test_shares_next_to_the_first_edge() -> None:
    # 0.15 s: between the first and second edges: 10 certainly under, 30 possibly
    s = share_at_most(H, 0.15)
    assert (s.threshold, s.lower_edge, s.upper_edge, s.at_most_low, s.at_most_high) == (0.15, 0.1, 0.2, 10.0, 30.0)
    assert s.interpolated == pytest.approx(20.0)
    assert share_at_most(H, 0.3).threshold == 0.3
    assert nearest_edges((0.1, 0.2, 0.5), 0.15) == (0.1, 0.2, False)


def test_a_threshold_below_a_first_edge_at_zero_counts_nothing() -> None:
    """Buckets at 0 s (2 observations), 0.1 s (5 cumulative) and +Inf (6): a threshold of -0.05 s lies
    below the first edge; the bucket it falls in, (0, 0], has no width to interpolate in: at most
    0 observations for sure, up to the 2 at 0 s, and 0 as the estimate."""
    h = ((0.0, 2.0), (0.1, 5.0), (math.inf, 6.0))
    assert share_at_most(h, -0.05) == Share(-0.05, 0.0, 2.0, 0.0, None, 0.0, 6.0)
