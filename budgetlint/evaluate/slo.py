"""A budget's promises as production SLOs: one ratio indicator per promise, its buckets, its alerts.

:func:`plan` is a pure function of the budget (no physics, no files): the
exporters (budgetlint/slo/) render it and the bucket and traffic rules
(BL601..BL603) read it. docs/slo.md is the long form.

* **One SLO per promise**: ``p95 <= T`` becomes "95 % of requests at or
  under T over the window", the ratio ``X_bucket{le="T"} / X_count`` of the
  engine's per-request histogram for that promise (TTFT, per-request time
  per output token for a TPOT or pace promise, E2E, and queue / prefill /
  decode for segments with an allowance). An ``slo_attainment`` promise is
  the objective of every promise's SLO instead of its percentile.
* **The bucket rule**: the ratio needs an edge at exactly T. Otherwise the
  export uses the nearest edge *below* T (stricter: it never passes a
  miss), and ``histogram_quantile`` near T may be off by up to the width of
  the bucket holding T.
* **Burn-rate alerts**: the SRE workbook's multi-window multi-burn-rate
  table as Sloth ships it (``internal/alert/windows/google-30d.yaml``:
  page 2 % of the budget in 1 h (5 m short window) and 5 % in 6 h (30 m);
  ticket 10 % in 1 d (2 h) and 10 % in 3 d (6 h)), scaled to the budget's
  window: the windows scale with it and the burn rates
  ``budget share x window / long window`` (14.4, 6, 3, 1) stay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from budgetlint.findings import Location
from budgetlint.model import engine_metrics
from budgetlint.model.engine_metrics import EngineMetric
from budgetlint.model.types import Budget
from budgetlint.stats import histogram as hist

DAY = 86400.0
#: (severity, share of the error budget, long window, short window) for a 30-day SLO
#: (slok/sloth internal/alert/windows/google-30d.yaml, from the SRE workbook's table)
ALERT_WINDOWS_30D = (
    ("page", 0.02, 3600.0, 300.0),
    ("page", 0.05, 6 * 3600.0, 1800.0),
    ("ticket", 0.10, DAY, 2 * 3600.0),
    ("ticket", 0.10, 3 * DAY, 6 * 3600.0),
)
WORKBOOK_WINDOW_S = 30 * DAY


@dataclass(frozen=True)
class BurnAlert:
    severity: str  # page | ticket
    budget_share: float  # of the error budget consumed in the long window when it fires
    long_s: float
    short_s: float
    burn_rate: float  # the error ratio that fires it, in units of the allowed error ratio

    def name(self) -> str:
        return f"{self.severity}-{duration_text(self.long_s)}"


@dataclass(frozen=True)
class Indicator:
    """One promise as a ratio SLI."""

    key: str  # "ttft" | "tpot" | "e2e" | "segment:<name>"
    kind: str  # the engine metric key: ttft tpot e2e queue prefill decode
    threshold_s: float
    objective: float  # 0..1: share of requests at or under the threshold
    owner: str | None
    location: Location
    words: str  # "ttft 400 ms", "pace 25 token/s"
    metric: EngineMetric | None
    edges: tuple[float, ...] = ()
    edges_from: str = ""  # "vLLM defaults (source)" | "slo.buckets in the budget"
    lower_edge: float | None = None
    upper_edge: float | None = None
    at_edge: bool = False
    exported_s: float | None = None  # the edge the ratio uses
    error_s: float | None = None  # worst-case histogram_quantile error near T (the bucket's width)
    unmeasurable: str | None = None  # why no ratio can be exported at all

    @property
    def name(self) -> str:
        return self.key.replace("segment:", "segment-")


@dataclass(frozen=True)
class SloPlan:
    budget: str
    owner: str | None
    engine: str
    engine_from: str
    engine_version: str | None
    window: str
    window_s: float
    percentile: str
    objective: float  # the percentile, or the slo_attainment promise
    objective_from: str  # "percentile p95" | "slo_attainment"
    indicators: tuple[Indicator, ...]
    alerts: tuple[BurnAlert, ...]
    selectors: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    request_rate_per_s: float | None = None  # the budget's declared traffic, for the low-traffic rule
    rate_from: str = ""
    production_bound: bool = False  # the budget says it runs on an engine / as an SLO: the bucket rules apply


def production_bound(b: Budget) -> bool:
    """Whether the budget declares where it runs in production: ``deployment.engine``, an ``slo:``
    block or an ``slo_attainment`` promise (the bucket and traffic rules speak only then)."""
    return bool((b.deployment is not None and b.deployment.engine) or b.slo.declared
                or b.promise.slo_attainment is not None)


def duration_text(seconds: float) -> str:
    """A Prometheus duration: 300 -> "5m", 3600 -> "1h", 86400 -> "1d" (whole minutes at least)."""
    s = max(60, int(round(seconds / 60.0)) * 60)
    for unit, size in (("w", 7 * DAY), ("d", DAY), ("h", 3600), ("m", 60)):
        if s % size == 0:
            return f"{int(s // size)}{unit}"
    return f"{s // 60}m"


def alerts_for(window_s: float) -> tuple[BurnAlert, ...]:
    scale = window_s / WORKBOOK_WINDOW_S
    out = []
    for sev, share, long_s, short_s in ALERT_WINDOWS_30D:
        lo = max(60.0, round(long_s * scale / 60.0) * 60.0)
        sh = max(60.0, round(short_s * scale / 60.0) * 60.0)
        out.append(BurnAlert(sev, share, lo, sh, share * window_s / lo))
    return tuple(out)


def _percent(label: str | None) -> float:
    if not label or label == "median":
        return 0.5
    try:
        value = float(label[1:]) / 100.0
    except ValueError:
        return 0.5
    return value if 0.0 < value < 1.0 else 0.5


def _quantity(value: float, unit: str) -> str:
    from budgetlint.text.numbers import quantity

    return quantity(value, unit)


def _fmt_s(seconds: float) -> str:
    """A promised time in the one formatter's spelling (budgetlint/text/numbers.py)."""
    from budgetlint.text.numbers import quantity

    return quantity(seconds, "s")


def _indicator(b: Budget, key: str, kind: str, threshold: float, objective: float, owner: str | None,
               loc: Location, words: str, engine: str, engine_name: str) -> Indicator:
    metric = engine_metrics.metric_for(engine, kind)
    custom = b.slo.buckets.get(kind)
    if metric is None:
        return Indicator(key, kind, threshold, objective, owner, loc, words, None,
                         unmeasurable=f"{engine_name} exposes no per-request {kind} histogram budgetlint knows")
    edges = custom if custom else metric.buckets
    edges_from = "slo.buckets in the budget" if custom else f"{engine_name}'s default buckets"
    finite = tuple(e for e in edges if e > 0 and math.isfinite(e))
    lo, hi, exact = hist.nearest_edges(finite, threshold)
    if exact:
        return Indicator(key, kind, threshold, objective, owner, loc, words, metric, finite, edges_from,
                         lo, hi, True, lo, None)
    width = (hi - (lo or 0.0)) if hi is not None else None
    exported = lo if lo is not None else hi
    unmeasurable = None
    if hi is None:
        unmeasurable = (f"{_fmt_s(threshold)} is above the last finite edge {_fmt_s(lo)}: "
                        "histogram_quantile can say nothing above it") if lo is not None else "no edges"
    return Indicator(key, kind, threshold, objective, owner, loc, words, metric, finite, edges_from,
                     lo, hi, False, exported, width, unmeasurable)


def engine_of(b: Budget) -> tuple[str, str, str | None]:
    dep = b.deployment
    if dep is not None and dep.engine:
        return dep.engine, "deployment.engine", dep.engine_version
    return engine_metrics.DEFAULT_ENGINE, "default (the deployment names no engine)", \
        dep.engine_version if dep is not None else None


def plan(b: Budget, export: bool = False) -> SloPlan:
    """The SLOs of one budget (pure: the budget only). ``export``: ``budgetlint slo`` asked for them, so
    the bucket rules speak whether or not the budget declares its engine (vLLM's buckets by default)."""
    engine, engine_from, version = engine_of(b)
    engine_name = {"vllm": "vLLM", "sglang": "SGLang"}.get(engine, engine)
    pct = _percent(b.percentile)
    attainment = b.promise.slo_attainment
    objective = attainment if attainment is not None else pct
    objective_from = "slo_attainment" if attainment is not None else f"percentile {b.percentile or 'p50'}"
    inds: list[Indicator] = []
    pr = b.promise
    if pr.ttft_s is not None:
        inds.append(_indicator(b, "ttft", "ttft", pr.ttft_s, objective, b.owner, b.loc("promise", "ttft"),
                               f"ttft {_fmt_s(pr.ttft_s)}", engine, engine_name))
    if pr.tpot_s is not None:
        which = "pace" if pr.pace_given else "tpot"
        words = f"pace {_quantity(1.0 / pr.tpot_s, 'token/s')} (TPOT {_fmt_s(pr.tpot_s)})" if pr.pace_given \
            else f"tpot {_fmt_s(pr.tpot_s)}"
        inds.append(_indicator(b, "tpot", "tpot", pr.tpot_s, objective, b.owner, b.loc("promise", which),
                               words, engine, engine_name))
    if pr.e2e_s is not None:
        inds.append(_indicator(b, "e2e", "e2e", pr.e2e_s, objective, b.owner, b.loc("promise", "e2e"),
                               f"e2e {_fmt_s(pr.e2e_s)}", engine, engine_name))
    for seg in b.segments:
        if seg.kind in ("queue", "prefill", "decode") and seg.allowance_s is not None:
            inds.append(_indicator(b, f"segment:{seg.name}", seg.kind, seg.allowance_s, objective,
                                   seg.owner or b.owner, seg.loc("allowance"),
                                   f"segment {seg.name} ({seg.kind}) {_fmt_s(seg.allowance_s)}",
                                   engine, engine_name))
    rate, rate_from = None, ""
    wl = b.workload
    if wl is not None and wl.arrival_rate_per_s is not None:
        replicas = b.deployment.replicas if b.deployment is not None else 1
        rate = wl.arrival_rate_per_s * (replicas if wl.arrival_rate_per == "replica" else 1)
        rate_from = "workload.arrival_rate"
    elif pr.throughput_request_per_s is not None:
        rate, rate_from = pr.throughput_request_per_s, "promise.throughput"
    return SloPlan(b.name, b.owner, engine, engine_from, version, b.slo.window, b.slo.window_s,
                   b.percentile or "p50", objective, objective_from, tuple(inds), alerts_for(b.slo.window_s),
                   dict(b.slo.selectors), dict(b.slo.labels), rate, rate_from, export or production_bound(b))


@dataclass(frozen=True)
class TrafficShortfall:
    """A burn-rate alert whose short window holds too few requests for the objective's percentile."""

    alert: BurnAlert
    requests: float  # expected in the short window
    needed: int
    rate_needed_per_s: float


def low_traffic(p: SloPlan) -> list[TrafficShortfall]:
    """The alert windows the declared traffic cannot fill (order_stats.needed_n, as the evidence rules)."""
    if p.request_rate_per_s is None or p.request_rate_per_s <= 0 or not p.indicators:
        return []
    from budgetlint.stats import order_stats

    q = p.objective
    needed = order_stats.needed_n(q) if 0.0 < q < 1.0 else 0
    out = []
    for a in p.alerts:
        n = p.request_rate_per_s * a.short_s
        if n < needed:
            out.append(TrafficShortfall(a, n, needed, needed / a.short_s))
    return out
