"""kubernetes-sigs inference-perf reports (+ the run's ``config.yaml``).

``*_lifecycle_metrics.json`` (summary or per stage): client-side distributions
``successes.latency.<metric>`` with keys ``mean, min, p0.1, ..., median, ...,
p99.9, max``. inference-perf fixes every latency in **seconds** in its report
schema (``reportgen/base.py``; the keys carry no suffix). Mapping:
``time_to_first_token`` -> ttft, ``time_per_output_token`` -> tpot
(excludes_first_token), ``inter_token_latency`` -> itl (pooled gaps),
``request_latency`` -> e2e. ``normalized_time_per_output_token`` (latency /
output_len, includes TTFT) is noted, not used.

``*_prometheus_metrics.json``: the server's view scraped from Prometheus
(seconds), percentiles estimated from histogram buckets.

The report names no model or hardware; a ``config.yaml`` (or a single
``*config.yaml``) in the same directory supplies the model and load type.
``config.yaml`` alone holds no measurement and is refused as such.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ._common import (
    NO_SUCCESS,
    NOT_MEASUREMENT,
    Ctx,
    Doc,
    build_metric,
    dig,
    num,
    percent_style_label,
    percentile_table,
    to_float,
)
from .measurement import INFERRED, READ, ConditionsBuilder, Measurement, Metric

NAME = "inference-perf"

_LIFECYCLE = {
    "time_to_first_token": ("ttft", "first_token", ""),
    "time_per_output_token": (
        "tpot",
        "excludes_first_token",
        "inference-perf time_per_output_token = (latency - TTFT) / (output tokens - 1) "
        "per request; not converted",
    ),
    "inter_token_latency": ("itl", "pooled_gaps", "inter-chunk gaps pooled over requests"),
    "request_latency": ("e2e", "request_latency", ""),
}


def detect(obj: Any) -> bool:
    return isinstance(obj, dict) and "load_summary" in obj and isinstance(obj.get("successes"), dict)


def is_lifecycle(obj: dict[str, Any]) -> bool:
    return isinstance(dig(obj, "successes", "latency"), dict)


def detect_config(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("load"), dict) and (
        isinstance(obj.get("server"), dict) or isinstance(obj.get("data"), dict)
    )


def _sidecar(path: Path) -> tuple[dict[str, Any] | None, Path | None]:
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        return None, None
    folder = path.parent
    candidates = [folder / "config.yaml"]
    if not candidates[0].is_file():
        candidates = sorted(p for p in folder.glob("*config.yaml") if p.is_file())
        if len(candidates) != 1:
            return None, None
    try:
        cfg = yaml.safe_load(candidates[0].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None, None
    return (cfg, candidates[0]) if detect_config(cfg) else (None, None)


_STAGE = re.compile(r"stage_(\d+)_")


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out = []
    cfg, cfg_path = _sidecar(path)
    for doc in docs:
        obj = doc.value
        if not detect(obj):
            ctx.problem("not an inference-perf report; skipped", NOT_MEASUREMENT, doc.line)
            continue
        out.append(_read_report(ctx, obj, doc.line, path, cfg, cfg_path))
    return out


def _read_report(
    ctx: Ctx, obj: dict[str, Any], line: int, path: Path, cfg: Any, cfg_path: Path | None
) -> Measurement:
    lifecycle = is_lifecycle(obj)
    succ = obj["successes"]
    load = obj.get("load_summary") if isinstance(obj.get("load_summary"), dict) else {}
    count = succ.get("count") if isinstance(succ.get("count"), int) else None
    metrics: dict[str, Metric] = {}
    notes: list[str] = []
    if lifecycle:
        latency = succ["latency"]
        table = _LIFECYCLE
        measured_at = ("client", "lifecycle metrics are timed by the inference-perf client")
        if "normalized_time_per_output_token" in latency:
            notes.append(
                "normalized_time_per_output_token (latency / output tokens, includes TTFT) not used"
            )
    else:
        latency = succ
        table = {
            "time_to_first_token": ("ttft", "first_token", "server-side, from Prometheus histograms"),
            "request_latency": ("e2e", "request_latency", "server-side, from Prometheus histograms"),
            "time_per_output_token": (
                "itl",
                "pooled_gaps",
                "server histogram of per-step output-token intervals (vllm:time_per_output_token_seconds), "
                "percentiles interpolated within Prometheus buckets",
            ),
        }
        measured_at = ("server", "Prometheus metrics are recorded by the model server")
    if count == 0:
        ctx.problem("no successful request: statistics are not measurements", NO_SUCCESS, line)
    else:
        for key, (name, definition, note) in table.items():
            stats = latency.get(key)
            if not isinstance(stats, dict):
                continue
            pcts, mean = percentile_table(ctx, stats, percent_style_label, 1.0, key, line)
            metric = build_metric(pcts, mean, definition, key, count, (note,) if note else ())
            if metric is not None:
                metrics[name] = metric
    c = ConditionsBuilder()
    c.set("measured_at", measured_at[0], INFERRED, measured_at[1])
    c.set("request_rate", num(ctx, load, "requested_rate", line), READ, "load_summary.requested_rate")
    c.set("concurrency", num(ctx, load, "concurrency", line), READ, "load_summary.concurrency")
    achieved = num(ctx, load, "achieved_rate", line)
    if achieved is not None:
        c.extra["achieved_rate"] = achieved
    if lifecycle and "requested_rate" not in load:
        notes.append("summary over all stages: no single request rate")
    for key, src in (("prompt_tokens", "prompt_len"), ("output_tokens", "output_len")):
        c.set(key, to_float(ctx, dig(succ, src, "mean"), f"successes.{src}.mean", line), INFERRED, f"successes.{src}.mean (measured)")
    if lifecycle:
        c.set("num_requests", load.get("count") if isinstance(load.get("count"), int) else None, READ, "load_summary.count")
    c.set("successful_requests", count, READ, "successes.count")
    if isinstance(cfg, dict) and cfg_path is not None:
        where = f"sidecar {cfg_path.name}"
        model = dig(cfg, "server", "model_name")
        if isinstance(model, str):
            c.set("model", model, INFERRED, f"{where}: server.model_name")
        kind = dig(cfg, "load", "type")
        if isinstance(kind, str):
            c.extra["load_type"] = kind
        server = dig(cfg, "server", "type")
        if isinstance(server, str):
            c.extra["server"] = server
    throughput = dig(succ, "throughput", "output_tokens_per_sec")
    req_tp = dig(succ, "throughput", "requests_per_sec")
    if not lifecycle:
        req_tp = succ.get("rate")
    m = _STAGE.search(path.name)
    label = f"stage {m.group(1)}" if m else None
    if not lifecycle:
        label = (label + " " if label else "") + "prometheus"
    return Measurement(
        source=ctx.path,
        format=NAME,
        label=label,
        conditions=c.build(),
        metrics=metrics,
        output_throughput=to_float(ctx, throughput, "output_tokens_per_sec", line),
        request_throughput=to_float(ctx, req_tp, "requests_per_sec", line),
        duration=num(ctx, load, "send_duration", line),
        notes=tuple(notes),
    )
