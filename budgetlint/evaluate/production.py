"""Production as evidence: each SLO indicator judged from the engine's own histograms.

For one indicator (a promise ``p-quantile <= T``, evaluate/slo.py) and one
production measurement (a saved ``/metrics`` scrape, a saved query result,
or ``check --prometheus``: bench/prometheus.py), the reading gives

* the **share** of observations at or under T: exact when T is a bucket
  edge, else bounded by the edges either side (and the linear guess inside);
* the **interpolated percentile** (``histogram_quantile``) and its **bucket
  error band** (the bucket that holds it: the true value is somewhere in it);
* the **sample count** and the same order-statistic sufficiency the
  benchmark rules use: with n requests the true p-quantile lies between the
  r-th and s-th smallest at 95 % (stats/order_stats.py). It is **met** when
  at least s requests are certainly at or under T, **missed** when fewer
  than r can be, else it **straddles** (or, with too few requests for an
  upper rank, it is **too-few**);
* freshness as for a benchmark link: the measurement's age and the `bench:`
  entry's expiry (evidence/trust.py).

The verdict's basis is ``production``. An ``slo_attainment`` promise is
judged from production too, conservatively: the share of requests meeting
*every* promise at once lies between ``1 - sum(1 - share_i)`` and
``min(share_i)`` (separate histograms cannot say more).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from budgetlint.evaluate.slo import Indicator, SloPlan
from budgetlint.stats import histogram as hist
from budgetlint.text import numbers

BASIS = "production"


@dataclass(frozen=True)
class ProductionReading:
    indicator: str  # Indicator.key
    file: str
    via: str
    where: Any  # Location of the bench: entry / the URL
    metric: str  # the histogram read
    n: int
    share_low: float  # share certainly at or under T
    share_high: float  # share possibly at or under T
    share_interpolated: float
    exact: bool
    quantile_s: float  # histogram_quantile at the objective
    band: tuple[float, float]  # the bucket holding it
    ranks: tuple[int, int]  # (r, s) of the 95 % interval
    verdict: str  # met | missed | straddles | too-few
    counts: bool = True  # False: stale or expired (the reading does not decide)
    stale: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"basis": BASIS, "file": self.file, "metric": self.metric, "samples": self.n,
                "share_at_or_under": [self.share_low, self.share_high], "share_interpolated": self.share_interpolated,
                "exact": self.exact, "quantile_s": self.quantile_s, "band_s": list(self.band),
                "ranks": list(self.ranks), "verdict": self.verdict, "counts": self.counts,
                "stale": list(self.stale)}


@dataclass(frozen=True)
class AttainmentReading:
    basis: str  # simulation | run | production
    source: str
    share: float | None  # point value (production: the lower bound)
    share_high: float | None = None  # production: the upper bound
    verdict: str = "unknown"  # met | missed | straddles | not-comparable
    reason: str = ""
    n: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"basis": self.basis, "source": self.source, "share": self.share, "share_high": self.share_high,
                "verdict": self.verdict, "reason": self.reason, "samples": self.n}


@dataclass(frozen=True)
class SloEvaluation:
    plan: SloPlan
    traffic: tuple[Any, ...] = ()  # slo.TrafficShortfall
    production: tuple[ProductionReading, ...] = ()
    attainment: tuple[AttainmentReading, ...] = ()
    problems: tuple[tuple[str, str], ...] = field(default=())  # (source, message): a query that failed

    def as_dict(self) -> dict[str, Any]:
        return {"engine": self.plan.engine, "window": self.plan.window, "objective": self.plan.objective,
                "indicators": {i.key: {"metric": i.metric.name if i.metric else None, "threshold_s": i.threshold_s,
                                       "at_edge": i.at_edge, "exported_s": i.exported_s, "error_s": i.error_s}
                               for i in self.plan.indicators},
                "production": [r.as_dict() for r in self.production],
                "attainment": [a.as_dict() for a in self.attainment]}


def judge_histogram(ind: Indicator, h: hist.Histogram) -> tuple[hist.Share, str, tuple[int, int]]:
    """(share, verdict, (r, s)) of one indicator against one histogram."""
    from budgetlint.stats import order_stats

    share = hist.share_at_most(h, ind.threshold_s)
    n = int(hist.total(h))
    r, s, _ = order_stats.quantile_ranks(n, ind.objective)
    if s <= share.at_most_low:
        verdict = "met"
    elif r > share.at_most_high:
        verdict = "missed"
    elif s > n:
        verdict = "too-few"
    else:
        verdict = "straddles"
    return share, verdict, (r, s)


def read_link(ind: Indicator, link: Any) -> ProductionReading | None:
    metric = link.measurement.metrics.get(ind.kind)
    if metric is None or not metric.histogram or ind.metric is None:
        return None
    h = metric.histogram
    share, verdict, ranks = judge_histogram(ind, h)
    n = max(1.0, share.total)
    q = hist.quantile(h, ind.objective)
    band = hist.quantile_band(h, ind.objective)
    stale = tuple(s.message for s in getattr(link, "stale", ()))
    counts = not getattr(link, "expired", False) and not stale
    return ProductionReading(ind.key, link.file, link.via, link.where, metric.source, int(share.total),
                             share.at_most_low / n, share.at_most_high / n, share.interpolated / n,
                             share.exact, q, band, ranks, verdict, counts, stale)


def attainment_from_runs(b: Any, links: tuple[Any, ...]) -> list[AttainmentReading]:
    """vLLM ``request_goodput`` over the run's throughput, errored requests as misses, when the run's
    ``--goodput`` thresholds are the budget's promises."""
    out = []
    pr = b.promise
    wanted = {k: v for k, v in (("ttft", pr.ttft_s), ("tpot", pr.tpot_s), ("e2el", pr.e2e_s)) if v is not None}
    for lk in links:
        m = lk.measurement
        extra = m.conditions.extra
        goodput = extra.get("request_goodput")
        if not isinstance(goodput, (int, float)) or isinstance(goodput, bool):
            continue
        src = f"{lk.file} (request_goodput)"
        thresholds = _thresholds(extra.get("goodput")) if isinstance(extra.get("goodput"), str) else b.slo.goodput
        if not thresholds:
            out.append(AttainmentReading("run", src, None, verdict="not-comparable",
                                         reason="the run's --goodput thresholds are unknown: the file does not "
                                                "record them; declare them as the budget's slo.goodput"))
            continue
        differ = [f"{k} {numbers.stated(thresholds.get(k, 0) * 1e3)} ms vs the promise's {numbers.stated(v * 1e3)} ms" for k, v in wanted.items()
                  if not _close(thresholds.get(k), v)]
        extra_keys = [k for k in thresholds if k not in wanted]
        if differ or extra_keys:
            why = "; ".join(differ + [f"{k} is no promise of the budget" for k in extra_keys])
            out.append(AttainmentReading("run", src, None, verdict="not-comparable",
                                         reason=f"the run's --goodput thresholds are not the promises: {why}"))
            continue
        completed = m.conditions.successful_requests
        failed = extra.get("failed") if isinstance(extra.get("failed"), int) else 0
        tput = m.request_throughput
        if not tput or not completed:
            out.append(AttainmentReading("run", src, None, verdict="not-comparable",
                                         reason="the run records no request throughput or completed count"))
            continue
        share = (goodput / tput) * completed / (completed + failed)
        share = min(1.0, max(0.0, share))
        verdict = "met" if share >= (pr.slo_attainment or 0) else "missed"
        out.append(AttainmentReading("run", src, share, verdict=verdict, n=completed + failed,
                                     reason=f"request_goodput {numbers.number(goodput)} / request_throughput {numbers.number(tput)} "
                                            f"x completed {completed} / (completed + failed {failed})"))
    return out


def _thresholds(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in text.split():
        k, _, v = part.partition(":")
        try:
            out[k.strip()] = float(v) / 1000.0
        except ValueError:
            continue
    return out


def _close(a: float | None, b: float) -> bool:
    # budgetlint's TPOT is over N tokens, vLLM's over N - 1: equal thresholds within 1 % are the same promise
    return a is not None and math.isclose(a, b, rel_tol=0.01)


def attainment_from_simulation(b: Any, load: Any) -> list[AttainmentReading]:
    if load is None or getattr(load, "result", None) is None:
        return []
    share = load.result.slo_attainment
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return []
    verdict = "met" if share >= (b.promise.slo_attainment or 0) else "missed"
    return [AttainmentReading("simulation", "the load simulation (docs/load.md)", share, verdict=verdict,
                              reason="simulated requests meeting every latency promise at once")]


def attainment_from_production(b: Any, readings: tuple[ProductionReading, ...],
                               indicators: tuple[Indicator, ...]) -> list[AttainmentReading]:
    """Per production file: the share meeting every promise lies in [1 - sum(misses), min(share)]."""
    target = b.promise.slo_attainment or 0
    wanted = {i.key for i in indicators if not i.key.startswith("segment:")}
    out = []
    for file in sorted({r.file for r in readings}):
        rs = [r for r in readings if r.file == file and r.indicator in wanted and r.counts]
        if not rs or {r.indicator for r in rs} != wanted:
            continue
        low = max(0.0, 1.0 - sum(1.0 - r.share_low for r in rs))
        high = min(r.share_high for r in rs)
        verdict = "met" if low >= target else "missed" if high < target else "straddles"
        out.append(AttainmentReading(BASIS, file, low, high, verdict, n=min(r.n for r in rs),
                                     reason="between 1 - the sum of each promise's misses and the smallest "
                                            "share (separate histograms)"))
    return out


def evaluate_slo(b: Any, evidence: Any, load: Any, live: tuple[Any, ...] = (),
                 problems: tuple[tuple[str, str], ...] = (), export: bool = False) -> SloEvaluation:
    from budgetlint.evaluate.slo import low_traffic, plan

    p = plan(b, export)
    readings: list[ProductionReading] = []
    for link in (*evidence.production, *live):
        for ind in p.indicators:
            r = read_link(ind, link)
            if r is not None:
                readings.append(r)
    att: list[AttainmentReading] = []
    if b.promise.slo_attainment is not None:
        att += attainment_from_simulation(b, load)
        att += attainment_from_runs(b, evidence.links)
        att += attainment_from_production(b, tuple(readings), p.indicators)
    return SloEvaluation(p, tuple(low_traffic(p)), tuple(readings), tuple(att), tuple(problems))
