"""Can a run show a percentile promise? The order-statistic interval held against it.

For one promise read from one measurement (:class:`~budgetlint.evaluate.evidence.records.Reading`):
the number of samples behind the percentile (the metric's ``count``, else
the run's completed requests), the 95 % distribution-free interval for the
true percentile (:mod:`budgetlint.stats.order_stats`) as sample ranks and,
when the file keeps per-request values, in seconds; and what that says:

``shown``
    the whole interval is on one side of the promise: met or missed at 95 %.
``straddles``
    the interval contains the promise: the run cannot say whether it holds.
``too-few``
    fewer samples than the percentile needs (``needed_n``), with only
    summaries to go on: the reported value may be far from the true one.
``unbounded``
    so few samples that the sample has no upper bound for the percentile
    (``minimum_n``; p99 below 368 requests): a met value shows nothing.
``unknown``
    the file does not say how many requests the percentile came from.

A met reading that is not ``shown`` is *not shown*, never *met*.
"""

from __future__ import annotations

from dataclasses import dataclass

from budgetlint.bench.measurement import label_percent
from budgetlint.stats import order_stats
from budgetlint.text import numbers

CONFIDENCE = order_stats.CONFIDENCE


@dataclass(frozen=True)
class Sufficiency:
    percentile: str  # "p99"
    n: int | None
    n_source: str  # where n came from
    lower_rank: int | None = None
    upper_rank: int | None = None  # n + 1: no upper bound in the sample
    lower_s: float | None = None  # in budgetlint's definition (TPOT over N)
    upper_s: float | None = None
    minimum_n: int = 0
    needed_n: int = 0
    status: str = "unknown"  # shown | straddles | too-few | unbounded | unknown
    met: bool | None = None  # the point estimate against the promise

    @property
    def band(self) -> str:
        """The sample's percentile band an interval of this many requests spans at 95 %:
        ``p94.8..p95.2`` for a p95 (``order_stats.distance``)."""
        from budgetlint.bench.measurement import percent_label

        pct = label_percent(self.percentile) or 50.0
        d = order_stats.distance(pct / 100.0) * 100.0
        return f"{percent_label(pct - d)}..{percent_label(pct + d)}"

    @property
    def shown(self) -> bool:
        return self.status == "shown"

    def words(self, pace: bool = False, figures: int = numbers.FIGURES) -> str:
        """``95% interval 486 ms .. 493.5 ms (ranks 371..389 of 400)``; a pace in token/s (1 / TPOT)."""
        if self.n is None:
            return ""
        if self.lower_s is not None or self.upper_s is not None:
            if pace:  # the slowest TPOT is the lowest pace
                lo = "no lower bound" if self.upper_s is None else numbers.quantity(1.0 / self.upper_s, "token/s", figures=figures)
                hi = "unbounded" if not self.lower_s else numbers.quantity(1.0 / self.lower_s, "token/s", figures=figures)
            else:
                lo = "-inf" if self.lower_s is None else numbers.quantity(self.lower_s, "s", figures=figures)
                hi = "no upper bound" if self.upper_s is None else numbers.quantity(self.upper_s, "s", figures=figures)
            return f"95% interval {lo} .. {hi} (ranks {self.lower_rank}..{self.upper_rank} of {self.n})"
        hi = "none (n + 1)" if self.upper_rank is not None and self.upper_rank > self.n else str(self.upper_rank)
        return f"95% interval between sample ranks {self.lower_rank} and {hi} of {self.n}"

    def as_dict(self) -> dict:
        return {
            "percentile": self.percentile, "samples": self.n, "samples_source": self.n_source,
            "confidence": CONFIDENCE, "lower_rank": self.lower_rank, "upper_rank": self.upper_rank,
            "interval_s": [self.lower_s, self.upper_s], "minimum_samples": self.minimum_n,
            "needed_samples": self.needed_n, "status": self.status,
        }



def assess(percentile: str, samples: tuple[float, ...], count: int | None, count_source: str,
           measured_s: float | None, promised_s: float | None, scale: float = 1.0) -> Sufficiency | None:
    """The sufficiency of one reading (None when the label is not a percentile, e.g. "mean").

    ``samples`` are the metric's sorted per-request values in the file's
    definition, ``scale`` converts them to budgetlint's (the reading's
    conversion: ``(N - 1) / N`` for a vLLM-style TPOT, else 1).
    """
    pct = label_percent(percentile)
    if pct is None or not (0.0 < pct < 100.0):
        return None
    p = pct / 100.0
    minimum = order_stats.minimum_n(p)
    needed = order_stats.needed_n(p)
    met = None if measured_s is None or promised_s is None else measured_s <= promised_s
    n = len(samples) if samples else count
    source = "per-request values" if samples else count_source
    if n is None or n <= 0:
        return Sufficiency(percentile, None, "", minimum_n=minimum, needed_n=needed, status="unknown", met=met)
    if samples:
        iv = order_stats.interval(samples, p, presorted=True)
        lo = None if iv.lower is None else iv.lower * scale
        hi = None if iv.upper is None else iv.upper * scale
        r, s = iv.lower_rank, iv.upper_rank
    else:
        r, s, _ = order_stats.quantile_ranks(n, p)
        lo = hi = None
    if samples and promised_s is not None:
        above = lo is not None and lo > promised_s
        below = hi is not None and hi <= promised_s
        status = "shown" if above or below else "unbounded" if hi is None else "straddles"
    elif n < minimum:
        status = "unbounded"
    elif samples:
        status = "shown"
    else:
        status = "too-few" if n < needed else "shown"
    return Sufficiency(percentile, n, source, r, s, lo, hi, minimum, needed, status, met)
