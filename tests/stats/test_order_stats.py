"""The order-statistic interval against an exact computation written here, and simulation.

The oracle: exact binomial tail sums in integers. For p = a / b (from its
decimal string), ``T_i = C(n, i) a^i (b - a)^(n - i)`` and
``P(B <= k) = sum_{i <= k} T_i / b^n``. ``T_{i+1} = T_i (n - i) a / ((i + 1)(b - a))``
is an exact integer division (both sides are integers), so the sums are
exact; ``T_0`` is checked against ``math.comb``-built terms at a few ranks.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from statistics import NormalDist

import pytest

from budgetlint.stats import order_stats as os_
from cli_runner import child_env

TAIL = Fraction(1, 40)  # (1 - 0.95) / 2


def exact_cdf_table(n: int, p: str) -> tuple[list[int], int]:
    """(S, b^n): S[k] = b^n x P(B <= k), exact integers, for B ~ Binomial(n, p)."""
    frac = Fraction(p)
    a, b = frac.numerator, frac.denominator
    c = b - a
    term = c ** n  # T_0
    sums, acc = [], 0
    for i in range(n + 1):
        acc += term
        sums.append(acc)
        if i < n:
            num = term * (n - i) * a
            den = (i + 1) * c
            assert num % den == 0
            term = num // den
    total = b ** n
    assert sums[-1] == total  # the pmf sums to one
    # the recurrence agrees with math.comb at a few ranks
    for k in (0, n // 3, n // 2, n):
        t_k = math.comb(n, k) * a ** k * c ** (n - k)
        assert (sums[k] - (sums[k - 1] if k else 0)) == t_k
    return sums, total


def exact_ranks(n: int, p: str) -> tuple[int, int, float]:
    sums, total = exact_cdf_table(n, p)

    def below(k: int) -> int:  # b^n x P(B <= k)
        return 0 if k < 0 else total if k >= n else sums[k]

    # r: largest with P(B <= r - 1) <= 1/40 ; s: smallest with P(B >= s) <= 1/40
    r = max(k for k in range(0, n + 1) if 40 * below(k - 1) <= total)
    s = min(k for k in range(1, n + 2) if 40 * (total - below(k - 1)) <= total)
    return r, s, float(Fraction(below(s - 1) - below(r - 1), total))


CASES = [(p, n) for p in ("0.5", "0.95", "0.99") for n in (50, 200, 1000, 10000)]


@pytest.mark.parametrize("p,n", CASES)
def test_ranks_match_exact_binomial_sums(p: str, n: int) -> None:
    r, s, cov = os_.quantile_ranks(n, float(p))
    er, es, ecov = exact_ranks(n, p)
    assert (r, s) == (er, es)
    assert cov == pytest.approx(ecov, abs=1e-9)
    assert ecov >= 0.95


def test_known_table_values() -> None:
    # textbook: the 95 % interval for the median of 50 samples is X(18)..X(33)
    assert os_.quantile_ranks(50, 0.5)[:2] == (18, 33)
    # p99 from 50 requests: no upper bound in the sample (0.99^50 = 0.605 > 0.025)
    r, s, _ = os_.quantile_ranks(50, 0.99)
    assert s == 51 and not os_.ranks_interval(50, 0.99).bounded


@pytest.mark.parametrize("p", ["0.5", "0.9", "0.95", "0.99", "0.999"])
def test_minimum_n_closed_form(p: str) -> None:
    frac = Fraction(p)
    big = max(frac, 1 - frac)

    def ok(n: int) -> bool:
        return big ** n <= TAIL

    n = os_.minimum_n(float(p))
    assert ok(n) and not ok(n - 1)
    r, s, _ = os_.quantile_ranks(n, float(p))
    assert r >= 1 and s <= n
    assert not os_.ranks_interval(n - 1, float(p)).bounded


@pytest.mark.parametrize("p", ["0.5", "0.95", "0.99"])
def test_needed_n_meets_the_stated_criterion(p: str) -> None:
    """The 95 % ranks lie within the sample quantiles p -+ d, d = min(p, 1 - p) / 2."""
    pf = float(p)
    d = 0.5 * min(pf, 1 - pf)
    n = os_.needed_n(pf)

    def criterion(m: int) -> bool:
        r, s, _ = exact_ranks(m, p)
        return r >= 1 and s <= m and r / m >= pf - d - 1e-12 and s / m <= pf + d + 1e-12

    # normal approximation of the same criterion: n ~ (z / d)^2 p (1 - p)
    approx = (1.959964 / d) ** 2 * pf * (1 - pf)
    assert 0.9 * approx < n < 1.4 * approx + 3  # + 3: coarse ranks at small n (p50: 23 vs 15.4)
    assert criterion(n) and not criterion(n - 1)
    # and it keeps holding above (sampled up to twice the approximation)
    step = max(1, int(approx) // 15)
    for m in range(n, int(2 * approx), step):
        assert criterion(m), m


def test_needed_n_table() -> None:
    # every shortcut entry equals the search (which the test above checks exactly)
    for p, n in os_.KNOWN_NEEDED_N.items():
        assert os_.search_needed_n(p) == n
    assert os_.minimum_n(0.99) == 368
    assert os_.minimum_n(0.95) == 72


def test_interval_in_seconds_takes_the_ranked_samples() -> None:
    xs = [float(i) for i in range(1, 51)]  # 1..50 s, shuffled
    random.Random(1).shuffle(xs)
    iv = os_.interval(xs, 0.5)
    assert (iv.lower, iv.upper) == (18.0, 33.0)
    iv99 = os_.interval(xs, 0.99)
    assert iv99.lower == 48.0 and iv99.upper is None


DISTRIBUTIONS = {
    "exponential": (lambda rng: rng.expovariate(1.0), lambda p: -math.log1p(-p)),
    "lognormal": (lambda rng: rng.lognormvariate(0.0, 1.0), lambda p: math.exp(NormalDist().inv_cdf(p))),
    "uniform": (lambda rng: rng.uniform(0.2, 0.7), lambda p: 0.2 + 0.5 * p),
}


@pytest.mark.parametrize("p", ["0.5", "0.95", "0.99"])
@pytest.mark.parametrize("n", [50, 200, 1000])
def test_simulated_coverage(p: str, n: int) -> None:
    """The true quantile falls inside the interval about as often as the exact coverage says.

    Tolerance: with M independent repetitions the observed share is
    Binomial(M, c)/M around the exact coverage c (>= 0.95), standard error
    sqrt(c (1 - c) / M); 4 standard errors (about 1 in 16,000 for a correct
    interval) is the tolerance. The seed is fixed, so the test is deterministic.
    """
    pf = float(p)
    reps = 600 if n < 1000 else 300
    _, _, exact_cov = exact_ranks(n, p)
    rng = random.Random(hash((p, n)) & 0xFFFF)
    for name, (draw, quantile) in DISTRIBUTIONS.items():
        truth = quantile(pf)
        inside = 0
        for _ in range(reps):
            iv = os_.interval([draw(rng) for _ in range(n)], pf)
            lo = -math.inf if iv.lower is None else iv.lower
            hi = math.inf if iv.upper is None else iv.upper
            inside += lo <= truth <= hi
        share = inside / reps
        se = math.sqrt(exact_cov * (1 - exact_cov) / reps)
        assert abs(share - exact_cov) <= 4 * se + 1.0 / reps, (name, share, exact_cov)
        assert share >= 0.95 - 4 * math.sqrt(0.95 * 0.05 / reps)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        os_.quantile_ranks(10, 1.0)
    with pytest.raises(ValueError):
        os_.quantile_ranks(10, 0.5, 1.5)
    assert os_.quantile_ranks(0, 0.5) == (0, 1, 1.0)


def test_interval_of_ten_samples_by_hand() -> None:
    """Binomial(10, 1/2) by hand: F(0) = 1/1024, F(1) = 11/1024, F(2) = 56/1024.

    At 90 % (tails of 0.05): r = 2 (F(1) = 0.0107 <= 0.05 < F(2) = 0.0547), s = 9 by symmetry,
    coverage F(8) - F(1) = 1 - 2 x 11/1024. At 99 % (tails of 0.005): r = 1 (F(0) = 0.00098),
    s = 10, coverage 1 - 2/1024: the lowest and highest sample bound it (rank 1 is a bound).
    """
    xs = [float(i) for i in range(10, 0, -1)]  # 10..1 s
    iv90 = os_.interval(xs, 0.5, 0.90)
    assert (iv90.lower_rank, iv90.upper_rank, iv90.lower, iv90.upper) == (2, 9, 2.0, 9.0)
    assert iv90.confidence == 0.90
    assert iv90.coverage == pytest.approx(1 - 22 / 1024, abs=1e-12)
    iv99 = os_.interval(xs, 0.5, 0.99)
    assert (iv99.lower_rank, iv99.upper_rank, iv99.lower, iv99.upper) == (1, 10, 1.0, 10.0)
    assert iv99.coverage == pytest.approx(1 - 2 / 1024, abs=1e-12)
    r = os_.ranks_interval(10, 0.5, 0.99)
    assert (r.lower_rank, r.upper_rank, r.confidence) == (1, 10, 0.99)


def test_presorted_samples_are_taken_as_given() -> None:
    xs = [float(i) for i in range(1, 51)]
    assert os_.interval(xs, 0.5, presorted=True) == os_.interval(list(reversed(xs)), 0.5)
    # presorted means the caller vouches for the order: the ranks index the list as it is
    assert os_.interval(list(reversed(xs)), 0.5, presorted=True).lower == 51.0 - 18.0


def test_bounds_at_the_ends_of_the_sample() -> None:
    """Three samples, by hand. p = 1/2 at 95 %: P(B = 0) = P(B = 3) = 1/8 > 0.025, so r = 0 and
    s = n + 1: no bound at either end (never the last or first sample in its place).
    p = 0.99 at 90 %: F(2) = 1 - 0.99^3 = 0.0297 <= 0.05, so r = 3 = n: the largest sample is
    the lower bound, and 0.99^3 = 0.970 > 0.05 leaves no upper bound."""
    xs = [1.0, 2.0, 3.0]
    none = os_.interval(xs, 0.5)
    assert (none.p, none.n, none.lower_rank, none.upper_rank, none.lower, none.upper) == (0.5, 3, 0, 4, None, None)
    top = os_.interval(xs, 0.99, 0.90)
    assert (top.lower_rank, top.lower, top.upper) == (3, 3.0, None)
    r = os_.ranks_interval(3, 0.5)
    assert (r.p, r.n) == (0.5, 3) and r.coverage == pytest.approx(1.0)


def test_needed_n_off_the_table_asks_the_search_with_every_argument() -> None:
    """A percentile, confidence or tolerance the table lacks is searched, with the caller's
    arguments (a wider tolerance or a lower confidence needs fewer requests than the table's)."""
    assert os_.needed_n(0.8) == os_.search_needed_n(0.8)
    assert os_.needed_n(0.8) not in os_.KNOWN_NEEDED_N.values()
    loose = os_.needed_n(0.5, tolerance=2 * os_.TAIL_TOLERANCE)
    assert loose == os_.search_needed_n(0.5, os_.CONFIDENCE, 2 * os_.TAIL_TOLERANCE) < os_.needed_n(0.5)
    assert os_.needed_n(0.5, confidence=0.80) == os_.search_needed_n(0.5, 0.80) < os_.needed_n(0.5)
    assert not os_.close_enough(1, 0.5) and os_.close_enough(os_.needed_n(0.5), 0.5)


@pytest.mark.parametrize(("n", "p", "confidence", "message"), [
    (10, 0.0, 0.95, "p must be in (0, 1), got 0.0"), (10, 1.0, 0.95, "p must be in (0, 1), got 1.0"),
    (10, 1.5, 0.95, "p must be in (0, 1), got 1.5"),
    (10, 0.5, 0.0, "confidence must be in (0, 1), got 0.0"), (10, 0.5, 1.0, "confidence must be in (0, 1), got 1.0"),
    (-1, 0.5, 0.95, "n must be >= 0, got -1"),
])
def test_out_of_range_arguments_say_which_and_what(n: int, p: float, confidence: float, message: str) -> None:
    with pytest.raises(ValueError) as err:
        os_.quantile_ranks(n, p, confidence)
    assert str(err.value) == message
    assert os_.close_enough(0, 0.5) is False


def test_needed_n_is_capped_for_an_extreme_quantile_instead_of_raising():
    """Fuzz (issue 24): an SLO objective of 2.2e-16 made every check end in an internal error.

    Seeing even one sample below the 2.2e-16 quantile takes about 1 / p = 4.5e15 samples (the
    chance that n samples all lie above it is (1 - p)^n), so what it needs is far beyond 1e9:
    the answer is the cap, a lower bound, never an exception. The same from the top (1 - 1e-12).
    """
    from budgetlint.stats.order_stats import NEEDED_N_CAP, needed_n

    assert NEEDED_N_CAP == 10**9
    assert needed_n(2.220446049250313e-16) == 10**9
    assert needed_n(1.0 - 1e-12) == 10**9
    assert needed_n(0.99) == 1867  # unchanged below the cap


@pytest.mark.parametrize("objective", ["2.220446049250313e-16", "9.0874e-92"])
def test_low_traffic_on_an_objective_too_strict_for_any_window(tmp_path, objective):
    """The SLO planner's call site: the objectives 2.2e-16 and 9.0874e-92 (the second found in
    CI: 1 - p rounds to 1) are short on every alert window, and no check ends in an internal error."""
    import subprocess
    import sys

    f = tmp_path / "b.yaml"
    f.write_text(
        "version: 1\nkind: budgets\nbudgets:\n  - name: tiny\n    owner: '@a/b'\n    percentile: p95\n"
        "    workload: {prompt_tokens: 100, output_tokens: 10, arrival_rate: 1 request/s}\n"
        f"    promise: {{ttft: 1 s, slo_attainment: {objective}}}\n"
        "    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n"
        "    slo: {window: 30d}\n")
    r = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--isolated", "--format", "json", str(f)],
                       capture_output=True, text=True, timeout=120, env=child_env())
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert "internal error" not in r.stderr


def test_minimum_n_for_a_quantile_whose_complement_rounds_to_one():
    """Fuzz in CI (issue 24): slo_attainment drawn as 9.0874e-92 made 1 - p round to 1.0, so
    ln(max(p, 1 - p)) was 0 and minimum_n divided by zero. Both bounds of that quantile exist only
    after about ln(40) / p = 4e91 samples: far past the cap, which is what it answers."""
    from budgetlint.stats.order_stats import NEEDED_N_CAP, minimum_n, needed_n

    for p in (9.0874e-92, 5e-324, 1e-300, 1e-12):
        assert minimum_n(p) == NEEDED_N_CAP
        assert needed_n(p) == NEEDED_N_CAP
    # unchanged where 1 - p is exact: p99 needs ceil(ln(0.025) / ln(0.99)) = ceil(367.04) = 368
    assert minimum_n(0.99) == 368
    assert minimum_n(0.5) == 6  # ceil(ln(0.025) / ln(0.5)) = ceil(5.32)


def test_needed_n_far_in_a_tail_is_found_in_a_bounded_number_of_steps(monkeypatch):
    """Fuzz in CI (this session): slo_attainment 0.99999994 (p = 5.96e-8, below the cap) made the
    search walk down from its upper bound one n at a time, about 1.3e8 close_enough calls: a check
    that did not end. Counted, not timed: at most a few hundred calls now.

    The answer by the normal approximation the module doc states: d = 0.5 p, n ~ (z / d)^2 p (1 - p)
    = (1.96 / (0.5 x 5.96e-8))^2 x 5.96e-8 = 4 x 1.96^2 / 5.96e-8 = 2.58e8; the exact criterion holds
    at the answer and not one below it."""
    from budgetlint.stats import order_stats as os_

    p = 5.960464477539063e-08
    calls = []
    real = os_.close_enough

    def counted(*a, **k):
        calls.append(a[0])
        assert len(calls) <= 10_000, "the search walks: it would take ~1.3e8 steps"
        return real(*a, **k)

    monkeypatch.setattr(os_, "close_enough", counted)
    os_.search_needed_n.cache_clear()
    n = os_.needed_n(p)
    assert len(calls) < 200, len(calls)
    z = 1.959963984540054
    approx = (z / (0.5 * p)) ** 2 * p * (1 - p)
    assert approx == pytest.approx(4 * 1.96 ** 2 / p, rel=1e-3)
    assert 0.8 * approx <= n <= 1.5 * approx < os_.NEEDED_N_CAP
    assert real(n, p) and not real(n - 1, p)
    # the exact walk below EXACT_WALK is unchanged: the table's p99.9 is still found by it
    os_.search_needed_n.cache_clear()
    assert os_.search_needed_n(0.999) == 18667


@pytest.mark.parametrize("p", ["0.02", "0.025"])
def test_needed_n_in_a_low_tail_is_where_the_exact_criterion_holds_from_on(p: str) -> None:
    """Low quantiles jitter well above the normal approximation: for p2 at 95 % the exact criterion
    (ranks from exact binomial sums, this file's own implementation) still fails at n = 1,099, 1.46
    times (1.96 / 0.01)^2 x 0.02 x 0.98 = 753. The search must start above that jitter: scanned
    exactly up to 1.6 times the approximation, the smallest n from which it holds is the answer.
    (Starting the walk from z(0.5 + c / 3) = 0.90 instead of 1.96 stopped p2 at 1,000 and p2.5 at
    800: mutant _normal_quantile 5.)"""
    pf = float(p)
    d = 0.5 * min(pf, 1 - pf)

    def criterion(m: int) -> bool:
        r, s, _ = exact_ranks(m, p)
        return r >= 1 and s <= m and r / m >= pf - d - 1e-12 and s / m <= pf + d + 1e-12

    approx = (1.959964 / d) ** 2 * pf * (1 - pf)
    top = int(1.6 * approx)
    assert criterion(top)
    n = top
    while n > 1 and criterion(n - 1):
        n -= 1
    assert os_.search_needed_n(pf) == n
    if p == "0.02":
        assert n == 1100 and not criterion(1099)
