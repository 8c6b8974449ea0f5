"""Production evidence: the serving engine's own latency histograms.

Two shapes, one result:

* a **Prometheus text exposition** (a saved ``/metrics`` scrape of vLLM or
  SGLang, version 0.0.4 text format: ``# TYPE name histogram`` then
  ``name_bucket{...,le="0.5"} 4850``);
* the **JSON answer of a Prometheus query** (``/api/v1/query``) whose series
  carry ``__name__`` (``X_bucket``) and ``le``: what ``check --prometheus``
  asks a live server for, saved to a file.

Every engine histogram budgetlint maps a promise to
(:mod:`budgetlint.model.engine_metrics`) becomes one :class:`Metric` with
``method="histogram"``: its cumulative buckets (summed over every label set
but ``le``: one scrape is one server), the observation count, and the
percentiles ``histogram_quantile`` interpolates (never more precise than the
bucket holding them: evaluate/production.py says by how much). Counters
are cumulative since the engine started: a scrape is the engine's whole
life, a query result the window it was asked for.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path
from typing import Any

from budgetlint.model import engine_metrics

from .json_values import Doc
from .problems import EMPTY, MALFORMED, Ctx
from .measurement import (
    READ, ConditionsBuilder, Measurement, Metric, Provenance,
)

FORMAT = "prometheus"
#: promise key -> budgetlint's definition of the engine's histogram
DEFINITIONS = {"ttft": "first_token", "tpot": "excludes_first_token", "e2e": "request_latency",
               "queue": "queue", "prefill": "prefill", "decode": "decode"}
METHOD = ("interpolated inside the bucket as Prometheus's histogram_quantile does; the true value lies "
          "anywhere in that bucket")

_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+(?P<ts>-?\d+))?\s*$")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:\\.|[^"\\])*)"\s*,?')
MAX_LINES = 2_000_000


def detect_text(text: str) -> bool:
    head = text[:20000]
    return ("# TYPE " in head or "# HELP " in head or "_bucket{" in head) and "_bucket{" in text and 'le="' in text


def detect_query(value: Any) -> bool:
    """A Prometheus HTTP API answer whose series are histogram buckets."""
    if not isinstance(value, dict) or value.get("status") != "success" or not isinstance(value.get("data"), dict):
        return False
    result = value["data"].get("result")
    return isinstance(result, list) and any(
        isinstance(s, dict) and isinstance(s.get("metric"), dict) and "le" in s["metric"] for s in result)


def _labels(text: str | None) -> dict[str, str] | None:
    if not text:
        return {}
    out: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if m is None:
            return None
        out[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        pos = m.end()
    return out


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value


class _Collect:
    """Buckets and counts per histogram, summed over label sets; the model names seen; the latest timestamp."""

    def __init__(self) -> None:
        self.buckets: dict[str, dict[float, float]] = {}
        self.models: set[str] = set()
        self.latest_ms: float | None = None

    def add(self, name: str, labels: dict[str, str], value: float, ts_ms: float | None) -> None:
        if not name.endswith("_bucket") or "le" not in labels:
            return
        base = name[: -len("_bucket")]
        if engine_metrics.by_name(base) is None:
            return
        le = _float(labels["le"].replace("+Inf", "inf"))
        if le is None or math.isnan(le) or not math.isfinite(value) or value < 0:
            return
        per = self.buckets.setdefault(base, {})
        per[le] = per.get(le, 0.0) + value
        model = labels.get(engine_metrics.by_name(base).model_label)  # type: ignore[union-attr]
        if model:
            self.models.add(model)
        if ts_ms is not None:
            self.latest_ms = ts_ms if self.latest_ms is None else max(self.latest_ms, ts_ms)


def read_text(ctx: Ctx, text: str, path: Path) -> list[Measurement]:
    col = _Collect()
    bad = 0
    for i, line in enumerate(text.splitlines()[:MAX_LINES], 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        labels = _labels(m.group("labels")) if m else None
        value = _float(m.group("value").replace("+Inf", "inf")) if m else None
        if m is None or labels is None or value is None:
            bad += 1
            if bad <= 3:
                ctx.problem(f"line {i}: not a Prometheus sample line (name{{labels}} value [timestamp])",
                            MALFORMED, i)
            continue
        ts = _float(m.group("ts")) if m.group("ts") else None
        col.add(m.group("name"), labels, value, ts)
    return _measurements(ctx, col, "a /metrics scrape (cumulative since the engine started)")


def read_query(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    col = _Collect()
    for doc in docs:
        if not detect_query(doc.value):
            continue
        for s in doc.value["data"]["result"]:
            if not isinstance(s, dict) or not isinstance(s.get("metric"), dict):
                continue
            metric = {str(k): str(v) for k, v in s["metric"].items()}
            name = metric.pop("__name__", "")
            value = s.get("value")
            if not (isinstance(value, list) and len(value) == 2):
                continue
            number = _float(str(value[1]))
            ts = value[0] * 1000.0 if isinstance(value[0], (int, float)) and not isinstance(value[0], bool) else None
            if number is None:
                continue
            col.add(name or metric.pop("metric", ""), metric, number, ts)
    return _measurements(ctx, col, "a Prometheus query result (the window it was asked for)")


def from_buckets(path: str, buckets: dict[str, dict[float, float]], what: str) -> tuple[list[Measurement], Ctx]:
    """A measurement from histograms already summed by ``le`` (``check --prometheus``: one query per
    histogram, ``sum by (le) (increase(X_bucket[window]))``)."""
    ctx = Ctx(path)
    col = _Collect()
    for base, per in buckets.items():
        if engine_metrics.by_name(base) is not None:
            col.buckets[base] = dict(per)
    return _measurements(ctx, col, what), ctx


def histogram_metric(key: str, name: str, buckets: dict[float, float]) -> Metric | None:
    """One engine histogram as a :class:`Metric`; None without a ``+Inf`` bucket or observations."""
    pairs = tuple(sorted(buckets.items()))
    if not pairs or not math.isinf(pairs[-1][0]) or pairs[-1][1] <= 0:
        return None
    # cumulative counts never fall; a scrape where they do (a restart between series) is repaired upwards
    fixed: list[tuple[float, float]] = []
    top = 0.0
    for edge, count in pairs:
        top = max(top, count)
        fixed.append((edge, top))
    h = tuple(fixed)
    # no percentiles here: evaluate/production.py interpolates them (stats/histogram.py) with their band
    return Metric(percentiles={}, definition=DEFINITIONS.get(key, key), method="histogram", count=int(h[-1][1]),
                  source=f"{name}_bucket", notes=(METHOD,), histogram=h)


def _measurements(ctx: Ctx, col: _Collect, what: str) -> list[Measurement]:
    metrics: dict[str, Metric] = {}
    engines: set[str] = set()
    for base, buckets in sorted(col.buckets.items()):
        row = engine_metrics.by_name(base)
        if row is None:
            continue
        metric = histogram_metric(row.key, base, buckets)
        if metric is None:
            ctx.problem(f"{base}: no observations or no +Inf bucket", EMPTY)
            continue
        metrics[row.key] = metric
        engines.add(row.engine)
    if not metrics:
        ctx.problem("no engine latency histogram (vllm:time_to_first_token_seconds, "
                    "sglang:time_to_first_token_seconds, ...) with observations", EMPTY)
        return []
    c = ConditionsBuilder()
    if len(col.models) == 1:
        c.set("model", next(iter(col.models)), READ, "model_name label")
    c.set("measured_at", "server", READ, "the engine's own histograms")
    count = max((m.count or 0) for m in metrics.values())
    c.set("successful_requests", count, READ, "the largest histogram count")
    date = None
    if col.latest_ms is not None and math.isfinite(col.latest_ms):
        try:
            date = dt.datetime.fromtimestamp(col.latest_ms / 1000.0, dt.timezone.utc).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            date = None
    engine = next(iter(engines)) if len(engines) == 1 else None
    prov = Provenance(engine=engine, date=date,
                      sources={"engine": "metric names", **({"date": "sample timestamps"} if date else {})})
    return [Measurement(source=ctx.path, format=FORMAT, label=what, conditions=c.build(), metrics=metrics,
                        provenance=prov)]
