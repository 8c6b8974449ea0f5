"""stats/order_stats.py: minimum_n, interval and close_enough at values worked by hand (issue 22:
mutation testing against tests/stats)."""

from __future__ import annotations

import math

import pytest

from budgetlint.stats import order_stats as o


def test_minimum_n_by_hand() -> None:
    # n = ceil(ln((1 - c) / 2) / ln(max(p, 1 - p))), c = 0.95: ln 0.025 = -3.68888
    # p = 0.5: 3.68888 / 0.69315 = 5.32 -> 6 (0.5^6 = 0.0156 <= 0.025 < 0.5^5 = 0.03125)
    assert o.minimum_n(0.5) == 6
    # p = 0.95: 3.68888 / 0.051293 = 71.9 -> 72 (0.95^72 = 0.02488; 0.95^71 = 0.02619)
    assert o.minimum_n(0.95) == 72 and o.minimum_n(0.05) == 72
    # p = 0.99: 3.68888 / 0.0100503 = 367.04 -> 368 (0.99^367 = 0.02501 > 0.025)
    assert o.minimum_n(0.99) == 368
    # an exact integer: c = 0.875, (1 - c) / 2 = 0.0625 = 0.5^4: n = 4, not 5
    assert o.minimum_n(0.5, 0.875) == 4
    # a p whose complement rounds to 1: the cap
    assert o.minimum_n(9.0874e-92) == o.NEEDED_N_CAP


def test_the_upper_bound_can_be_the_smallest_sample() -> None:
    # p = 0.01 with 2 samples: P(B <= 0) = 0.99^2 = 0.9801 >= 0.975, so the upper rank is 1: the
    # smallest sample bounds the 1st percentile from above; nothing bounds it from below
    iv = o.interval([7.0, 5.0], 0.01)
    assert (iv.lower_rank, iv.upper_rank, iv.lower, iv.upper) == (0, 1, None, 5.0)
    assert math.isclose(iv.coverage, 0.9801)


def test_close_enough_at_its_confidence() -> None:
    # at 95 %, 20 samples bound the median within the distance, 19 do not; at 50 % confidence 7 do
    assert o.close_enough(20, 0.5) and not o.close_enough(19, 0.5)
    assert o.close_enough(7, 0.5, confidence=0.5) and not o.close_enough(7, 0.5)
    assert not o.close_enough(0, 0.5)


def test_an_interval_end_exactly_at_the_stated_distance_is_close_enough() -> None:
    """p75 from 56 samples: the ranks 35 and 49 bound it with P(35 <= B <= 48) = 0.9698 >= 95 %
    (B ~ Binomial(56, 0.75), summed here); the stated distance is 0.5 x min(0.75, 0.25) = 0.125, and
    35 / 56 = 0.625 is exactly 0.75 - 0.125, 49 / 56 = 0.875 exactly 0.75 + 0.125: both ends on the
    boundary, which the criterion (at least p - d, at most p + d) admits."""
    coverage = sum(math.comb(56, k) * 0.75**k * 0.25 ** (56 - k) for k in range(35, 49))
    assert coverage == pytest.approx(0.96976, abs=1e-5)
    r, s, cov = o.quantile_ranks(56, 0.75)
    assert (r, s) == (35, 49) and cov == pytest.approx(coverage, rel=1e-9)
    assert 35 / 56 == 0.75 - 0.125 and 49 / 56 == 0.75 + 0.125
    assert o.close_enough(56, 0.75) is True


def test_a_count_of_any_size_is_ranked_in_bounded_time_and_memory() -> None:
    """Past a million ranks of window the normal approximation with continuity correction (hand: n = 10^12,
    p = 0.99: np = 9.9 x 10^11, sd = sqrt(n p q) = 99,498.74, z = 1.959964: r = floor(np - z sd - 0.5) + 1 =
    989,999,804,986, s = ceil(np + z sd + 0.5) = 990,000,195,015). Until stop 47 n = 10^30 raised MemoryError."""
    from budgetlint.stats.order_stats import quantile_ranks

    assert quantile_ranks(10**12, 0.99)[:2] == (989_999_804_986, 990_000_195_015)
    r, s, coverage = quantile_ranks(10**30, 0.99)
    assert 0 < r < 0.99 * 10**30 < s <= 10**30 and coverage == 0.95
    # below the switch the exact walk; it is within a rank of the same formula by hand at n = 10^10
    # (np = 9.9 x 10^9, sd = sqrt(9.9 x 10^7) = 9,949.874, z sd = 19,501.39: 9,899,980,499 and 9,900,019,502)
    import math

    n, p, z = 10**10, 0.99, 1.959963984540054
    sd = math.sqrt(n * p * (1 - p))
    by_hand = (math.floor(n * p - z * sd - 0.5) + 1, math.ceil(n * p + z * sd + 0.5))
    assert by_hand == (9_899_980_499, 9_900_019_502)
    exact = quantile_ranks(10**10, 0.99)
    assert abs(exact[0] - by_hand[0]) <= 1 and abs(exact[1] - by_hand[1]) <= 1, (exact, by_hand)
