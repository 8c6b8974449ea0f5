"""Statistics of a simulated run: percentiles, their confidence intervals, and
the service figures (utilisation, batch sizes, preemptions, SLO attainment,
goodput, Little's law).

* **Percentile**: linear interpolation between the closest ranks
  (``numpy.percentile``'s default), over the measured requests (warm-up left
  out; rejected requests have no latency and count only against attainment).
* **Confidence interval** of a percentile, by *sectioning* (Asmussen &
  Glynn, *Stochastic Simulation*, ch. IV.5; batch means for a quantile): the
  measured requests, in arrival order, are cut into ``m = 10`` consecutive
  sections; the percentile of each is taken, and the interval is ``q_all +/-
  t_{0.975, m-1} x s / sqrt(m)`` with ``q_all`` the percentile of all
  requests and ``s`` the sample standard deviation of the section
  percentiles. Consecutive requests in a queue are correlated; sections
  long against the correlation time are nearly independent, which is what
  the t interval needs, so the interval widens honestly when the queue is
  slow to mix (near saturation). It describes the simulation's sampling
  error only, not the model's error.
* **Busy fraction**: the share of the window in which a replica was running
  an iteration, averaged over replicas (``rho`` for one slot; near 1 for any
  batching server with work). The offered load against the saturation
  throughput is ``budgetlint.evaluate.load.utilisation``. **Batch size**: sequences in an
  iteration, weighted by the iteration's duration (mean and p95).
* **SLO attainment**: the share of measured requests that met every promise
  at once; **goodput**: those requests per second of the window.
* **Little's law**: ``mean_in_system`` is the time average of requests in the
  system over the window, counted by the simulator's own counter;
  ``arrival_rate x mean sojourn`` must match it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Optional
from budgetlint.text import numbers

METRICS = ("ttft_s", "tpot_s", "e2e_s", "queue_s")
PERCENTILES = (50.0, 90.0, 95.0, 99.0)
#: the percentiles of the latency CDF the report draws (each with its sectioning interval)
CDF_PERCENTILES = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 98.0, 99.0)
SECTIONS = 10
CONFIDENCE = 0.95
#: two-sided 95 % Student t quantiles t_{0.975, df}
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         19: 2.093, 29: 2.045}


def percentile_label(p: float) -> str:
    """``95.0 -> "p95"``, ``99.9 -> "p99.9"``."""
    return f"p{numbers.stated(p)}"


@dataclass(frozen=True)
class PercentilePromise:
    """A latency promise: ``metric`` (one of :data:`METRICS`) at ``percentile`` within ``limit_s``."""

    metric: str
    percentile: float
    limit_s: float

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {self.metric!r}")
        if not (0 < self.percentile <= 100):
            raise ValueError(f"percentile must be in (0, 100], got {self.percentile!r}")
        if not (math.isfinite(self.limit_s) and self.limit_s > 0):
            raise ValueError(f"limit_s must be positive, got {self.limit_s!r}")

    @property
    def key(self) -> str:
        return f"{self.metric}.{percentile_label(self.percentile)}"


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Linear-interpolation percentile of already sorted values (NaN when empty)."""
    n = len(sorted_values)
    if n == 0:
        return math.nan
    if n == 1:
        return float(sorted_values[0])
    x = (n - 1) * p / 100.0
    lo = int(math.floor(x))
    hi = min(lo + 1, n - 1)
    frac = x - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def t_quantile(df: int) -> float:
    """``t_{0.975, df}`` (the next smaller tabulated df, so never narrower; 1.96 beyond 29)."""
    if df >= 30:
        return 1.96 + 2.4 / df  # within 0.3 % of the exact value for df >= 30
    best = max(k for k in _T975 if k <= df)
    return _T975[best]


#: the least tail a checkpoint of a run is read with (sample size by need, issue 28): the measured
#: requests beyond the promise's percentile, ``measured x (1 - p)``. A run of 400 requests (350
#: measured) read p99 off 3.5 of them before checkpoints, and no checkpoint reads any percentile
#: off fewer
TAIL_FLOOR = 3.5

#: above this percentile a 2,000-request stream cannot be read: each of its SECTIONS sections (195
#: measured requests) holds fewer than one request beyond p99.5, so a section's percentile is its maximum
#: and the sections' spread is that of maxima, not of the percentile. Until stop 47 a p99.9 TTFT read
#: 689 ms (95 % interval 541-838 ms) off 1,950 requests where 40,000 of the same simulation read 883 ms
#: (blocks of 3,688 requests ranged 0.59-1.43 s: the tail comes in bursts), and an 850 ms promise was met
LONG_TAIL_ABOVE = 99.5


def tail_requests(p: float) -> Optional[tuple[int, int]]:
    """For a percentile above :data:`LONG_TAIL_ABOVE` (None at or below it): the measured requests
    (a verdict's, a capacity step's) it is read off. A verdict's: :data:`TAIL_FLOOR` beyond it in each of
    the SECTIONS sections of its interval (p99.9: 10 x 3,500 = 35,000); a step's, which reads the point
    alone: TAIL_FLOOR beyond it in all (p99.9: 3,500), the standard of a p99 step's 350."""
    if not p > LONG_TAIL_ABOVE:
        return None
    share = 1.0 - p / 100.0
    beyond = math.ceil(TAIL_FLOOR / share - 1e-9) if share > 1e-15 else 10**18
    return SECTIONS * beyond, beyond


def sectioned_interval(values: Sequence[float], p: float, sections: int = SECTIONS) -> tuple[float, float, float]:
    """(point, low, high) for the p-th percentile of ``values`` (in arrival order), module doc."""
    clean = [v for v in values if v == v]  # not NaN (math.isnan without a call per value)
    point = percentile(sorted(clean), p)
    size = len(clean) // sections
    if sections < 2 or size < 2:
        return point, math.nan, math.nan
    qs = [percentile(sorted(clean[i * size:(i + 1) * size]), p) for i in range(sections)]
    mean = sum(qs) / sections
    sd = math.sqrt(sum((q - mean) ** 2 for q in qs) / (sections - 1))
    half = t_quantile(sections - 1) * sd / math.sqrt(sections)
    return point, point - half, point + half


def cdf_band(values: Sequence[float], ps: Sequence[float] = CDF_PERCENTILES,
             sections: int = SECTIONS) -> list[tuple[float, float, float, float]]:
    """(p, point, low, high) per percentile ``p`` of ``ps``: the empirical CDF of
    ``values`` (in arrival order) with the sectioning interval of each point, as
    :func:`sectioned_interval` gives it (each section sorted once for all ``ps``)."""
    clean = [v for v in values if v == v]  # not NaN
    whole = sorted(clean)
    size = len(clean) // sections
    parts = [sorted(clean[i * size:(i + 1) * size]) for i in range(sections)] if sections >= 2 and size >= 2 else []
    out = []
    for p in ps:
        point = percentile(whole, p)
        if not parts:
            out.append((p, point, math.nan, math.nan))
            continue
        qs = [percentile(part, p) for part in parts]
        mean = sum(qs) / sections
        sd = math.sqrt(sum((q - mean) ** 2 for q in qs) / (sections - 1))
        half = t_quantile(sections - 1) * sd / math.sqrt(sections)
        out.append((p, point, point - half, point + half))
    return out


def weighted_percentile(pairs: Iterable[tuple[float, int]], p: float) -> float:
    """The p-th percentile of values weighted by durations: ``pairs`` of (weight, value)."""
    # sorted((v, w) for w, v in pairs if w > 0), built as buckets by value (batch sizes are few
    # integers) each with its weights sorted: the same order, so the same sums, at a fraction of
    # the cost of sorting thousands of tuples (a simulation records one pair per iteration)
    buckets: dict = {}
    for w, v in pairs:
        if w > 0:
            got = buckets.get(v)
            if got is None:
                buckets[v] = [w]
            else:
                got.append(w)
    items = [(v, w) for v in sorted(buckets) for w in sorted(buckets[v])]
    total = sum(w for _, w in items)
    if total <= 0:
        return math.nan
    target = total * p / 100.0
    acc = 0.0
    for v, w in items:
        acc += w
        if acc >= target - 1e-12 * total:
            return float(v)
    return float(items[-1][0])


@dataclass(frozen=True)
class SimulationResult:
    """What a simulation predicts (SI units; per service unless named per replica)."""

    predicted: dict[str, dict[str, float]]  # metric -> "p50".. -> seconds
    interval: dict[str, tuple[float, float]]  # "ttft_s.p95" -> (low, high), 95 % confidence
    busy_fraction: float
    batch_size_mean: float
    batch_size_p95: float
    preemptions_per_request: float
    slo_attainment: float  # NaN without promises
    goodput_request_per_s: float
    throughput_request_per_s: float
    output_token_per_s: float
    arrival_rate_per_s: float
    mean_in_system: float
    mean_sojourn_s: float
    requests: int
    rejected: int
    replicas: int
    window_s: float
    promises_met: dict[str, bool]  # promise key -> point estimate within its limit
    #: metric -> (p, point, low, high) at CDF_PERCENTILES: the simulated requests' CDF and its band
    cdf: dict[str, tuple[tuple[float, float, float, float], ...]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """The JSON shape of the ``load`` result (see docs/load.md)."""
        return {
            "predicted": {m: dict(v) for m, v in self.predicted.items()},
            "interval": {k: {"low": lo, "high": hi, "confidence": CONFIDENCE, "method": "sectioning"}
                         for k, (lo, hi) in self.interval.items()},
            "busy_fraction": self.busy_fraction,
            "batch_size": {"mean": self.batch_size_mean, "p95": self.batch_size_p95},
            "preemptions_per_request": self.preemptions_per_request,
            "slo_attainment": None if math.isnan(self.slo_attainment) else self.slo_attainment,
            "goodput_request_per_s": self.goodput_request_per_s,
            "throughput_request_per_s": self.throughput_request_per_s,
            "output_token_per_s": self.output_token_per_s,
            "requests_simulated": self.requests,
            "rejected": self.rejected,
            "replicas": self.replicas,
            "cdf": {m: [{"p": p, "value": v, "low": lo, "high": hi} for p, v, lo, hi in rows]
                    for m, rows in self.cdf.items()},
        }


def _read_promises(series: dict[str, list[float]], promises: Sequence[PercentilePromise],
                   predicted: dict[str, dict[str, float]]) -> tuple[dict[str, tuple[float, float]], dict[str, bool]]:
    """Each promise's percentile (into ``predicted``, unless already there), its sectioning interval
    and whether it is met, from the measured ``series`` of its metric: what :func:`summarise` and
    :func:`glance` both read."""
    interval: dict[str, tuple[float, float]] = {}
    met: dict[str, bool] = {}
    for pr in promises:
        point, lo, hi = sectioned_interval(series[pr.metric], pr.percentile)
        predicted[pr.metric].setdefault(percentile_label(pr.percentile), point)
        interval[pr.key] = (lo, hi)
        met[pr.key] = point <= pr.limit_s
    return interval, met


def summarise(raw, promises: Sequence[PercentilePromise] = (), *,  # type: ignore[no-untyped-def]
              cdf: bool = True) -> SimulationResult:
    """:class:`SimulationResult` of a :class:`~budgetlint.physics.serving_sim.RawRun`
    (``cdf=False``: no CDF bands, for a capacity search's steps, which read only the promises)."""
    recs = raw.records
    ok = [r for r in recs if not r.rejected]
    series = {m: list(map(operator.attrgetter(m), ok)) for m in METRICS}
    predicted: dict[str, dict[str, float]] = {}
    for m in METRICS:
        s = sorted(series[m])
        predicted[m] = {percentile_label(p): percentile(s, p) for p in PERCENTILES}
    interval, met = _read_promises(series, promises, predicted)
    window = raw.window_end_s - raw.window_start_s
    good = math.nan
    if promises:
        cols = [series[pr.metric] for pr in promises]
        limits = [pr.limit_s for pr in promises]
        if len(cols) == 1:
            good_n = sum(1 for v in cols[0] if v <= limits[0])
        else:
            good_n = sum(1 for vs in zip(*cols) if all(v <= lim for v, lim in zip(vs, limits)))
        good = good_n / len(recs) if recs else math.nan
    else:
        good_n = len(ok)
    bt = raw.batch_time
    ws, bs = (list(x) for x in zip(*bt)) if bt else ([], [])
    busy = sum(ws)  # the same order as sum(w for w, _ in bt): the same float
    mean_b = sum(map(operator.mul, ws, bs)) / busy if busy > 0 else 0.0
    sojourn = [r.e2e_s for r in ok]
    per_s = (lambda x: x / window) if window > 0 else (lambda x: math.nan)
    bands = {m: tuple(cdf_band(series[m])) for m in METRICS if m != "queue_s"} if cdf else {}
    return SimulationResult(
        cdf=bands,
        predicted=predicted,
        interval=interval,
        busy_fraction=busy / (window * raw.replicas) if window > 0 else math.nan,
        batch_size_mean=mean_b,
        batch_size_p95=weighted_percentile(bt, 95.0) if bt else 0.0,
        preemptions_per_request=sum(r.preemptions for r in recs) / len(recs) if recs else 0.0,
        slo_attainment=good,
        # goodput = attainment x throughput (docs/load.md): never above the throughput, the same
        # definition in an open and a closed loop (counting every recorded request over the window
        # gave a closed loop a goodput above its own throughput)
        goodput_request_per_s=(good if promises else 1.0) * per_s(raw.completions_in_window)
        if recs else per_s(good_n),
        throughput_request_per_s=per_s(raw.completions_in_window),
        output_token_per_s=per_s(raw.output_tokens_in_window),
        arrival_rate_per_s=per_s(raw.arrivals_in_window - 1),
        mean_in_system=raw.in_system_area / window if window > 0 else math.nan,
        mean_sojourn_s=sum(sojourn) / len(sojourn) if sojourn else math.nan,
        requests=len(recs),
        rejected=len(recs) - len(ok),
        replicas=raw.replicas,
        window_s=window,
        promises_met=met,
    )


def glance(raw, promises: Sequence[PercentilePromise]) -> SimulationResult:  # type: ignore[no-untyped-def]
    """What a run's checkpoint is read for (sample size by need, issue 28): each promise's
    percentile and sectioning interval, the requests, the rejected and the mean number in the system,
    as :func:`summarise` gives them; every other figure NaN (a stopping rule reads no more, and a
    checkpoint is read up to five times a run)."""
    recs = raw.records
    ok = [r for r in recs if not r.rejected]
    predicted: dict[str, dict[str, float]] = {m: {} for m in METRICS}
    series = {pr.metric: list(map(operator.attrgetter(pr.metric), ok)) for pr in promises}
    interval, met = _read_promises(series, promises, predicted)
    window = raw.window_end_s - raw.window_start_s
    nan = math.nan
    return SimulationResult(predicted=predicted, interval=interval, busy_fraction=nan, batch_size_mean=nan,
                            batch_size_p95=nan, preemptions_per_request=nan, slo_attainment=nan,
                            goodput_request_per_s=nan, throughput_request_per_s=nan, output_token_per_s=nan,
                            arrival_rate_per_s=nan,
                            mean_in_system=raw.in_system_area / window if window > 0 else math.nan,
                            mean_sojourn_s=nan, requests=len(recs), rejected=len(recs) - len(ok),
                            replicas=raw.replicas, window_s=window, promises_met=met)
