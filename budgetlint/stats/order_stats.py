"""Distribution-free confidence intervals for a quantile, from order statistics.

For ``n`` independent samples of any continuous distribution, the number
``B`` of samples below the true ``p``-quantile ``xi_p`` is Binomial(n, p).
With the samples sorted, ``X(1) <= ... <= X(n)`` (ranks are 1-based):

* ``X(r) <= xi_p``  exactly when ``B >= r``;
* ``X(s) >  xi_p``  exactly when ``B <= s - 1``;

so ``P(X(r) <= xi_p < X(s)) = P(r <= B <= s - 1) = F(s - 1) - F(r - 1)``,
``F`` the Binomial(n, p) CDF. No assumption about the shape of the latency
distribution is made: this is the classical interval (Thompson 1936; David &
Nagaraja, *Order Statistics*, 2.5).

:func:`quantile_ranks` picks the equal-tailed ranks at a confidence ``c``
(each tail at most ``(1 - c) / 2``): ``r`` the largest rank with
``F(r - 1) <= (1 - c) / 2`` and ``s`` the smallest with
``1 - F(s - 1) <= (1 - c) / 2``. Their coverage ``F(s - 1) - F(r - 1)`` is
then at least ``c`` (more, by the discreteness of the ranks). ``r = 0``
means the sample has no lower bound (the true quantile may be below the
smallest sample), ``s = n + 1`` that it has no upper bound (it may be above
the largest): for p99 at 95 % that is every run of fewer than 368 requests.

How many samples a percentile needs (:func:`needed_n`): *enough* means that
at confidence ``c`` the interval's ranks lie within the sample quantiles at
``p - d`` and ``p + d``, i.e. ``r / n >= p - d`` and ``s / n <= p + d``, with
the stated distance ``d = tolerance x min(p, 1 - p)``; the default tolerance
0.5 says: the true share of requests slower than the reported p99 is known
to be 1 % +- 0.5 % (between the p98.5 and p99.5 ranks). :func:`minimum_n` is
the weaker floor: the fewest samples for which both bounds exist at all.

Everything here is plain floats and ints; nothing knows a file or a budget.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

CONFIDENCE = 0.95
#: the stated distance of :func:`needed_n`, as a share of the tail min(p, 1 - p)
TAIL_TOLERANCE = 0.5


@dataclass(frozen=True)
class QuantileInterval:
    """A confidence interval for the p-quantile from n sorted samples."""

    p: float  # the quantile as a fraction (0.99)
    n: int
    confidence: float
    lower_rank: int  # 1-based; 0 = no lower bound in the sample
    upper_rank: int  # 1-based; n + 1 = no upper bound in the sample
    coverage: float  # the exact coverage of the two ranks (>= confidence when both exist)
    lower: float | None = None  # the sample value at lower_rank (None: no bound / no samples)
    upper: float | None = None  # the sample value at upper_rank (None: no bound / no samples)

    @property
    def bounded(self) -> bool:
        """Both ends are ranks of the sample."""
        return self.lower_rank >= 1 and self.upper_rank <= self.n


def _check(n: int, p: float, confidence: float) -> None:
    if not (0.0 < p < 1.0):
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n!r}")


def _log_pmf(k: int, n: int, log_p: float, log_q: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * log_p + (n - k) * log_q)


def _pmf_window(n: int, p: float) -> tuple[int, list[float]]:
    """(first k, pmf values) over the ks that carry all but < 1e-30 of the mass.

    One ``lgamma`` at the mode, then the ratio ``pmf(k + 1) / pmf(k) =
    (n - k) p / ((k + 1) q)`` outwards in both directions (no underflow from
    starting in a far tail).
    """
    q = 1.0 - p
    sd = math.sqrt(n * p * q)
    lo = max(0, int(math.floor(n * p - 15.0 * sd - 40)))
    hi = min(n, int(math.ceil(n * p + 15.0 * sd + 40)))
    mode = min(max(int(math.floor((n + 1) * p)), lo), hi)
    at_mode = math.exp(_log_pmf(mode, n, math.log(p), math.log1p(-p)))
    pmf = [0.0] * (hi - lo + 1)
    pmf[mode - lo] = at_mode
    ratio = p / q
    v = at_mode
    for k in range(mode, hi):
        v = v * (n - k) / (k + 1) * ratio
        pmf[k + 1 - lo] = v
    v = at_mode
    for k in range(mode, lo, -1):
        v = v * k / (n - k + 1) / ratio
        pmf[k - 1 - lo] = v
    return lo, pmf




@lru_cache(maxsize=4096)
def quantile_ranks(n: int, p: float, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """(r, s, coverage): the equal-tailed order-statistic ranks bounding the p-quantile.

    ``r`` is in 0..n (0: no lower bound), ``s`` in 1..n+1 (n + 1: no upper
    bound); ``coverage = P(r <= B <= s - 1)`` with the missing bounds taken as
    the whole line.
    """
    _check(n, p, confidence)
    if n == 0:
        return 0, 1, 1.0
    tail = (1.0 - confidence) / 2.0
    sd = math.sqrt(n * p * (1.0 - p))
    if 30.0 * sd + 80.0 > EXACT_WINDOW:
        # the exact window would hold over a million ranks (a production histogram's count of 10^12): the
        # normal approximation with continuity correction, within a rank of the exact walk there (n = 10^10
        # at p99: 9,899,980,499 and 9,900,019,502 against the walk's 9,899,980,498 and 9,900,019,503, ranks
        # 39,000 apart); until stop 47 a count of 10^30 built the window and ended the run (MemoryError)
        z = _normal_quantile(confidence)
        r = min(n, max(0, math.floor(n * p - z * sd - 0.5) + 1))
        s = max(r + 1, min(n + 1, math.ceil(n * p + z * sd + 0.5)))
        return r, s, confidence
    lo, pmf = _pmf_window(n, p)
    # cdf[i] = P(B <= lo + i); below lo the mass is < 1e-30
    cdf = list(itertools.accumulate(pmf))
    hi = lo + len(pmf) - 1

    def cdf_at(k: int) -> float:  # the docstring's F(k) = P(B <= k)
        if k < lo:
            return 0.0
        if k >= n:
            return 1.0
        return min(1.0, cdf[min(k, hi) - lo])

    # r: the largest rank with cdf_at(r - 1) <= tail (cdf_at(-1) = 0, so r >= 0 always exists)
    r = 0
    for k in range(max(0, lo), n + 1):
        if cdf_at(k - 1) <= tail:
            r = k
        else:
            break
    # s: the smallest rank with 1 - cdf_at(s - 1) <= tail (s = n + 1 always qualifies)
    s = n + 1
    hi = lo + len(pmf) - 1
    for k in range(min(n, hi + 1), max(0, lo) - 1, -1):
        if 1.0 - cdf_at(k - 1) <= tail:
            s = k
        else:
            break
    s = max(s, r + 1)
    coverage = cdf_at(s - 1) - cdf_at(r - 1)
    return r, s, coverage


def interval(samples: Sequence[float], p: float, confidence: float = CONFIDENCE,
             *, presorted: bool = False) -> QuantileInterval:
    """The confidence interval for the p-quantile, in the samples' unit.

    ``samples`` are per-request values (any order unless ``presorted``).
    """
    xs = list(samples) if presorted else sorted(samples)
    n = len(xs)
    r, s, cov = quantile_ranks(n, p, confidence)
    lower = xs[r - 1] if 1 <= r <= n else None
    upper = xs[s - 1] if 1 <= s <= n else None
    return QuantileInterval(p, n, confidence, r, s, cov, lower, upper)


def ranks_interval(n: int, p: float, confidence: float = CONFIDENCE) -> QuantileInterval:
    """The interval's ranks only (a file with summaries and a request count)."""
    r, s, cov = quantile_ranks(n, p, confidence)
    return QuantileInterval(p, n, confidence, r, s, cov)


def minimum_n(p: float, confidence: float = CONFIDENCE) -> int:
    """The fewest samples for which the p-quantile has both bounds in the sample.

    Upper bound exists when ``P(B = n) = p^n <= (1 - c) / 2``, lower when
    ``(1 - p)^n <= (1 - c) / 2``: ``n = ceil(ln((1 - c) / 2) / ln(max(p, 1 - p)))``.

    Capped at :data:`NEEDED_N_CAP` (a p so close to 0 or 1 that ``1 - p`` rounds to 1, such
    as 9e-92, needs more samples than any run holds: the cap is a lower bound on it). The
    logarithm is ``log1p(-min(p, 1 - p))``, exact where ``1 - p`` is not.
    """
    _check(1, p, confidence)
    log_tail = math.log((1.0 - confidence) / 2.0)
    log_side = math.log1p(-min(p, 1.0 - p))  # ln(max(p, 1 - p)) < 0
    if log_side == 0.0 or log_tail / log_side > NEEDED_N_CAP:
        return NEEDED_N_CAP
    n = math.ceil(log_tail / log_side - 1e-12)
    while n * log_side > log_tail:  # guard the ceil against rounding: max(p, 1 - p)^n > tail
        n += 1
    return max(1, n)


def distance(p: float, tolerance: float = TAIL_TOLERANCE) -> float:
    """The stated distance ``d = tolerance x min(p, 1 - p)`` of :func:`needed_n`."""
    return tolerance * min(p, 1.0 - p)


def close_enough(n: int, p: float, confidence: float = CONFIDENCE,
                 tolerance: float = TAIL_TOLERANCE) -> bool:
    """Do n samples bound the p-quantile within the stated distance (see module doc)?"""
    if n < 1:
        return False
    r, s, _ = quantile_ranks(n, p, confidence)
    d = distance(p, tolerance)
    return r >= 1 and s <= n and r / n >= p - d - 1e-12 and s / n <= p + d + 1e-12


#: the most ranks :func:`quantile_ranks` walks exactly (beyond it, the normal approximation)
EXACT_WINDOW = 1_000_000
#: the most :func:`needed_n` answers: beyond it no run or alert window could hold the samples
NEEDED_N_CAP = 10**9
#: the longest exact walk :func:`search_needed_n` takes down from its upper bound (one
#: :func:`close_enough` a step); past it the answer is bisected (p99.99 walks ~80,000 steps)
EXACT_WALK = 200_000

#: needed_n at the default confidence and tolerance for the usual percentiles (the
#: search takes 0.5 s for p99.9); tests/stats recompute every entry with the search
KNOWN_NEEDED_N = {0.5: 23, 0.9: 167, 0.95: 364, 0.99: 1867, 0.999: 18667}


def needed_n(p: float, confidence: float = CONFIDENCE, tolerance: float = TAIL_TOLERANCE) -> int:
    """The number of samples the p-quantile needs (see :func:`search_needed_n`)."""
    if confidence == CONFIDENCE and tolerance == TAIL_TOLERANCE and p in KNOWN_NEEDED_N:
        return KNOWN_NEEDED_N[p]
    return search_needed_n(p, confidence, tolerance)


@lru_cache(maxsize=256)
def search_needed_n(p: float, confidence: float = CONFIDENCE, tolerance: float = TAIL_TOLERANCE) -> int:
    """The number of samples the p-quantile needs (criterion in the module doc).

    The smallest n from which :func:`close_enough` holds for every larger n.
    The ranks are integers, so the criterion jitters near the threshold (it
    can hold at some n and fail at n + 1); the answer is where it holds from
    on, checked exactly up to 1.5 times the normal approximation
    ``(z / d)^2 p (1 - p)``, beyond which the interval is narrower by a factor
    sqrt(1.5) than the criterion needs, far more than the jitter of a rank
    (the last jitter seen for p50..p99.9 is below 1.25 times it).

    Capped at :data:`NEEDED_N_CAP`: a quantile that needs more (p within about
    1e-7 of 0 or 1) gets the cap, a lower bound on what it needs, which every
    run and alert window falls short of just the same.
    """
    _check(1, p, confidence)
    least = minimum_n(p, confidence)
    if least >= NEEDED_N_CAP:  # before the approximation, which divides by d = tolerance x p
        return NEEDED_N_CAP
    z = _normal_quantile(confidence)
    d = distance(p, tolerance)
    approx = (z / d) ** 2 * p * (1.0 - p)
    top = max(least + 1, int(math.ceil(1.5 * approx)) + 10)
    if top > NEEDED_N_CAP:
        return NEEDED_N_CAP
    while not close_enough(top, p, confidence, tolerance):
        top *= 2
        if top > NEEDED_N_CAP:
            return NEEDED_N_CAP
    if top - least > EXACT_WALK:
        # a p within about 1e-5 of 0 or 1: the walk down one n at a time would take as many steps
        # as the answer is large (1.3e8 for p = 6e-8, found by CI's fuzz as a run that did not
        # end); at these sizes a rank's jitter is far below the figures reported, so the answer is
        # bisected (close_enough holds at ``top``), about 30 steps
        low, high = least - 1, top
        while high - low > 1:
            mid = (low + high) // 2
            if close_enough(mid, p, confidence, tolerance):
                high = mid
            else:
                low = mid
        return high
    n = top
    while n > 1 and close_enough(n - 1, p, confidence, tolerance):
        n -= 1
    return n


def _normal_quantile(confidence: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2.0)
