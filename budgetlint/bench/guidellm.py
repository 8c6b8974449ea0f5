"""guidellm benchmark reports: the v0.2/0.3 layout and report v2 (v0.4+).

Each entry of ``benchmarks`` (``type_ == "generative_benchmark"``) is one load
point. Metrics are ``metrics.<name>.successful`` distributions; names ending in
``_ms`` are milliseconds, and ``request_latency`` is seconds (fixed by
guidellm's schema: ``request_latency`` is built from ``request_end -
request_start`` in seconds). Percentile keys are fraction digits
(``p001`` = p0.1, ``p05`` = p5, ``p999`` = p99.9); v0.3 lacks ``p50`` and has
``median``.

Definitions differ between versions (checked against the fixtures' means):
v0.3 ``time_per_output_token_ms`` = (latency - TTFT) / N (budgetlint's TPOT)
and ``inter_token_latency_ms`` = (latency - TTFT) / (N - 1); v2's
``time_per_output_token_ms`` = latency / N (includes TTFT), weighted by tokens.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .fields import dig, first_path, to_float
from .json_values import Doc
from .percentiles import build_metric, fraction_style_label, percentile_table
from .problems import NOT_MEASUREMENT, NO_SUCCESS, Ctx
from .run_metadata import iso_date
from .measurement import INFERRED, READ, ConditionsBuilder, Measurement, Metric, RecordBuilder

NAME = "guidellm"


def detect(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("benchmarks"), list):
        return False
    first = obj["benchmarks"][0] if obj["benchmarks"] else None
    return isinstance(first, dict) and first.get("type_") == "generative_benchmark"


def _dist(
    ctx: Ctx, metrics: dict[str, Any], key: str, scale: float, line: int, metric: str | None = None
) -> tuple[dict[str, float], float | None, int | None]:
    node = dig(metrics, key, "successful")
    if not isinstance(node, dict):
        return {}, None, None
    stats: dict[str, Any] = dict(node.get("percentiles") or {})
    if "median" in node:
        stats["median"] = node["median"]
    if "mean" in node:
        stats["mean"] = node["mean"]
    pcts, mean = percentile_table(ctx, stats, fraction_style_label, scale, f"metrics.{key}", line, metric=metric)
    count = node.get("count")
    return pcts, mean, count if isinstance(count, int) else None


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out = []
    for doc in docs:
        if not detect(doc.value):
            ctx.problem("not a guidellm report; skipped", NOT_MEASUREMENT, doc.line)
            continue
        report = doc.value
        v2 = dig(report, "metadata", "version") == 2
        version = dig(report, "metadata", "guidellm_version")
        for i, bench in enumerate(report["benchmarks"]):
            if not isinstance(bench, dict) or not isinstance(bench.get("metrics"), dict):
                ctx.problem(f"benchmarks[{i}] has no metrics; skipped", NOT_MEASUREMENT, doc.line)
                continue
            out.append(_read_benchmark(ctx, report, bench, i, v2, version, doc.line))
    return out


def _read_benchmark(
    ctx: Ctx, report: dict[str, Any], bench: dict[str, Any], i: int, v2: bool, version: Any, line: int
) -> Measurement:
    m = bench["metrics"]
    metrics: dict[str, Metric] = {}
    notes: list[str] = ["guidellm reports no pooled inter-chunk gaps: itl not measured"]
    totals = m.get("request_totals") if v2 else bench.get("request_totals")
    successful = totals.get("successful") if isinstance(totals, dict) else None
    if successful == 0:
        ctx.problem(f"benchmarks[{i}]: no successful request", NO_SUCCESS, line)
    else:
        spec: list[tuple[str, str, float, str, str]] = [
            ("ttft", "time_to_first_token_ms", 1e-3, "first_token", ""),
            ("e2e", "request_latency", 1.0, "request_latency", ""),
        ]
        if v2:
            spec.append(
                (
                    "tpot",
                    "inter_token_latency_ms",
                    1e-3,
                    "excludes_first_token",
                    "guidellm v2 inter_token_latency = (latency - TTFT) / (N - 1), "
                    "distribution weighted by tokens; not converted",
                )
            )
        else:
            spec.append(
                (
                    "tpot",
                    "time_per_output_token_ms",
                    1e-3,
                    "budgetlint",
                    "guidellm v0.3 time_per_output_token = (latency - TTFT) / N",
                )
            )
        for name, key, scale, definition, note in spec:
            pcts, mean, count = _dist(ctx, m, key, scale, line, name)
            metric = build_metric(pcts, mean, definition, f"metrics.{key}.successful", count, (note,) if note else ())
            if metric is not None:
                metrics[name] = metric
    c = ConditionsBuilder()
    model, where = None, None
    for path in (("config", "backend", "model"), ("worker", "backend_model")):
        model = dig(bench, *path)
        if isinstance(model, str):
            where = ".".join(path)
            break
    if not isinstance(model, str):
        model = dig(report, "config", "spec", "backend", "model")
        where = "config.spec.backend.model"
    if isinstance(model, str):
        c.set("model", model, READ, where or "")
    strategy = dig(bench, "config", "strategy") if v2 else dig(bench, "args", "strategy")
    if isinstance(strategy, dict):
        kind = strategy.get("type_")
        c.extra["strategy"] = str(kind)
        if kind == "synchronous":
            c.set("concurrency", 1, INFERRED, "synchronous strategy: one request at a time")
        elif kind == "concurrent":
            c.set("concurrency", to_float(ctx, strategy.get("streams"), "strategy.streams", line), READ, "strategy.streams")
        elif kind in ("constant", "poisson"):
            c.set("request_rate", to_float(ctx, strategy.get("rate"), "strategy.rate", line), READ, "strategy.rate")
        elif kind == "throughput":
            c.set("request_rate", float("inf"), INFERRED, "throughput strategy: all requests at once")
        if kind != "concurrent" and kind != "synchronous":
            mc = to_float(ctx, strategy.get("max_concurrency"), "strategy.max_concurrency", line)
            if mc is not None and mc < 10000:
                c.set("concurrency", mc, READ, "strategy.max_concurrency")
    _lengths(ctx, c, report, bench, v2, line)
    for key, name in (("prompt_tokens", "prompt_token_count"), ("output_tokens", "output_token_count")):
        pcts, mean, _ = _dist(ctx, m, name, 1.0, line)
        if mean is not None:
            c.set(key, mean, INFERRED, f"metrics.{name}.successful.mean (measured)")
    c.set("measured_at", "client", INFERRED, "guidellm times requests at its HTTP client")
    if isinstance(totals, dict):
        c.set("num_requests", totals.get("total"), READ, "request_totals.total")
        c.set("successful_requests", successful, READ, "request_totals.successful")
    tput = dig(m, "output_tokens_per_second", "successful", "mean")
    req_tp = dig(m, "requests_per_second", "successful", "mean")
    label = f"benchmark {i}"
    if isinstance(strategy, dict) and strategy.get("type_"):
        label += f" ({strategy['type_']})"
    r = RecordBuilder()
    if isinstance(totals, dict):
        errored = totals.get("errored")
        if isinstance(errored, int) and not isinstance(errored, bool):
            r.set("failed", errored, "request_totals.errored")
    # the planned request count (a time-bounded run has none: its last request may be cut short)
    planned, where = first_path(bench, [("args", "max_number"), ("scheduler_state", "end_processing_constraints",
                                        "max_requests", "metadata", "max_requests")])
    if isinstance(planned, int) and not isinstance(planned, bool):
        r.set("requested", planned, where or "max_number")
    elif dig(bench, "run_stats", "termination_reason") == "max_seconds_reached" and isinstance(totals, dict):
        done = [totals.get(k) for k in ("successful", "errored")]
        if all(isinstance(x, int) and not isinstance(x, bool) for x in done):
            r.set("requested", sum(done), "request_totals.successful + errored (a time-bounded run: "
                  "requests still in flight at max_duration are incomplete, not failed)")
    r.set("warmup_s", to_float(ctx, bench.get("warmup_duration"), "warmup_duration", line), "warmup_duration")
    r.set("mean_in_flight", to_float(ctx, dig(m, "request_concurrency", "successful", "mean"),
                                     "request_concurrency.successful.mean", line),
          "metrics.request_concurrency.successful.mean")
    for name, key in (("mean_output_tokens", "output_token_count"), ("mean_prompt_tokens", "prompt_token_count")):
        r.set(name, to_float(ctx, dig(m, key, "successful", "mean"), f"{key}.successful.mean", line),
              f"metrics.{key}.successful.mean")
    p = RecordBuilder()
    p.set("date", iso_date(bench.get("start_time")), "start_time")
    return Measurement(
        run=r.run(),
        provenance=p.provenance(),
        source=ctx.path,
        format=NAME,
        tool_version=str(version) if version is not None else None,
        label=label,
        conditions=c.build(),
        metrics=metrics,
        output_throughput=to_float(ctx, tput, "output_tokens_per_second.mean", line),
        request_throughput=to_float(ctx, req_tp, "requests_per_second.mean", line),
        duration=to_float(ctx, bench.get("duration"), "duration", line),
        notes=tuple(notes),
    )


_DATA_KV = re.compile(r"(prompt_tokens|output_tokens)\s*=\s*(\d+(?:\.\d+)?)")


def _lengths(ctx: Ctx, c: ConditionsBuilder, report: dict[str, Any], bench: dict[str, Any], v2: bool, line: int) -> None:
    if v2:
        data = dig(report, "config", "spec", "data")
        if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
            for key in ("prompt_tokens", "output_tokens"):
                c.set(key, to_float(ctx, data[0].get(key), f"config.spec.data[0].{key}", line), READ, f"config.spec.data[0].{key}")
        return
    data = dig(bench, "request_loader", "data")
    if isinstance(data, str):
        for key, value in _DATA_KV.findall(data):
            c.set(key, float(value), READ, f"request_loader.data {key}")
