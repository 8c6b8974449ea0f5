"""vLLM ``vllm bench serve --save-result`` / ``benchmark_serving.py`` results.

Handles every key generation seen (2024 ``request_inthroughput`` typo, the
``"request_goodput:"`` typo, 2025+ ``vllm bench serve`` keys), JSONL written by
``--append-result`` or concatenated by harnesses, ``vllm bench sweep``
``summary.json`` lists and ``run=N.json`` files, and the per-request arrays
(``ttfts``, ``itls``, ``output_lens``; **seconds**) from ``--save-detailed``
or older versions. Aggregate keys are ``{mean,median,std,pNN}_{metric}_ms``,
all milliseconds.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from .fields import integer, mean_lengths_from_totals, num, to_float
from .json_values import Doc
from .percentiles import build_metric
from .plausibility import check_latency, check_samples
from .problems import NOT_MEASUREMENT, NO_SUCCESS, Ctx
from .run_metadata import ENGINE_BACKENDS, ENGINE_VERSION_KEYS, iso_date
from .measurement import (
    INFERRED,
    READ,
    ConditionsBuilder,
    Measurement,
    Metric,
    Provenance,
    RecordBuilder,
    RunRecord,
    metric_from_samples,
    per_request_lengths,
    percent_label,
)

NAME = "vllm"

_KEY = re.compile(r"^(mean|median|std|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2el|e2e_latency)_ms$")

#: source metric -> (budgetlint metric, definition)
VLLM_METRICS = {
    "ttft": ("ttft", "first_token"),
    "tpot": ("tpot", "excludes_first_token"),
    "itl": ("itl", "pooled_gaps"),
    "e2el": ("e2e", "request_latency"),
    "e2e_latency": ("e2e", "request_latency"),
}

_HARDWARE_KEYS = ("gpu", "hardware", "accelerator", "device", "gpu_type")
_DEVICES_KEYS = ("tp", "tp_size", "tensor_parallel_size", "devices", "num_gpus")
_INPUT_LEN_KEYS = ("input_len", "random_input_len", "prompt_len", "isl")
_OUTPUT_LEN_KEYS = ("output_len", "random_output_len", "osl")


def detect(obj: Any) -> bool:
    if isinstance(obj, list):
        return bool(obj) and all(isinstance(o, dict) and detect(o) for o in obj)
    if not isinstance(obj, dict) or "total_output_tokens_retokenized" in obj:
        return False
    if any(k.endswith("_e2e_latency_ms") for k in obj):
        return False
    return "mean_ttft_ms" in obj or "median_ttft_ms" in obj


def is_pytorch_sidecar(obj: Any) -> bool:
    """``<name>.pytorch.json``: PyTorch-benchmark-format records vLLM writes alongside."""
    return (
        isinstance(obj, list)
        and bool(obj)
        and isinstance(obj[0], dict)
        and "benchmark" in obj[0]
        and "metric" in obj[0]
    )


def aggregate_metrics(
    ctx: Ctx, obj: dict[str, Any], line: int | None, fmt_note: str
) -> dict[str, Metric]:
    """``{mean,median,pNN}_{m}_ms`` keys -> metrics (shared with SGLang)."""
    tables: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    keys: dict[str, list[str]] = {}
    for key in obj:
        m = _KEY.match(key)
        if not m:
            continue
        stat, pct, source_metric = m.group(1), m.group(2), m.group(3)
        if stat == "std":
            continue
        value = num(ctx, obj, key, line)
        label = "mean" if stat == "mean" else "p50" if stat == "median" else percent_label(float(pct))
        value = check_latency(ctx, value, VLLM_METRICS[source_metric][0], key, line, stat=label)
        if value is None:
            continue
        seconds = value * 1e-3  # unit from the key suffix "_ms"
        keys.setdefault(source_metric, []).append(key)
        if stat == "mean":
            means[source_metric] = seconds
        elif stat == "median":
            tables.setdefault(source_metric, {}).setdefault("p50", seconds)
        else:
            tables.setdefault(source_metric, {})[percent_label(float(pct))] = seconds
    metrics: dict[str, Metric] = {}
    for source_metric, (name, definition) in VLLM_METRICS.items():
        if source_metric not in keys:
            continue
        notes: tuple[str, ...] = ()
        if name == "tpot":
            notes = (
                f"{fmt_note} TPOT divides by N-1 output tokens (excludes the first); "
                "budgetlint's divides by N. Aggregate percentiles are not converted.",
            )
        metric = build_metric(
            tables.get(source_metric, {}),
            means.get(source_metric),
            definition,
            ", ".join(sorted(keys[source_metric])),
            notes=notes,
        )
        if metric is not None:
            metrics[name] = metric
    return metrics


def detailed_metrics(ctx: Ctx, obj: dict[str, Any], line: int | None) -> dict[str, Metric]:
    """Per-request arrays (seconds) -> computed metrics, TPOT converted exactly."""
    ttfts = obj.get("ttfts")
    itls = obj.get("itls")
    lens = obj.get("output_lens")
    if not (isinstance(ttfts, list) and isinstance(itls, list) and isinstance(lens, list)):
        return {}
    if not (len(ttfts) == len(itls) == len(lens)) or not ttfts:
        ctx.problem(
            "per-request arrays ttfts/itls/output_lens differ in length; "
            "using the aggregate statistics only",
            NOT_MEASUREMENT,
            line,
        )
        return {}
    errors = obj.get("errors") if isinstance(obj.get("errors"), list) else [""] * len(ttfts)
    ttft_s, tpot_s, e2e_s, gaps = [], [], [], []
    seen_ttft: list[float] = []
    seen_gaps: list[float] = []
    for i, (t, gap_list, n) in enumerate(zip(ttfts, itls, lens)):
        if i < len(errors) and errors[i]:
            continue
        tt = to_float(ctx, t, f"ttfts[{i}]", line)
        nn = to_float(ctx, n, f"output_lens[{i}]", line)
        if tt is None or nn is None or nn <= 0 or not isinstance(gap_list, list):
            continue
        g = [to_float(ctx, x, f"itls[{i}]", line) for x in gap_list]
        g = [x for x in g if x is not None]
        seen_ttft.append(tt)
        seen_gaps.extend(g)
        if tt <= 0 or any(x < 0 for x in g):
            continue  # an impossible TTFT or gap: the request is not kept (reported below)
        gaps.extend(g)
        decode = math.fsum(g)
        ttft_s.append(tt)
        e2e_s.append(tt + decode)
        tpot_s.append(decode / nn)
    check_samples(ctx, seen_ttft, "ttft", "ttfts", line)
    check_samples(ctx, seen_gaps, "itl", "itls", line)
    out: dict[str, Metric] = {}
    note = "from the per-request arrays (ttfts, itls, output_lens; seconds)"
    for name, values, definition, extra in (
        ("ttft", ttft_s, "first_token", ()),
        (
            "tpot",
            tpot_s,
            "budgetlint",
            ("converted exactly per request: sum(itls) / output_len (vLLM divides by N-1)",),
        ),
        ("itl", gaps, "pooled_gaps", ("all inter-chunk gaps pooled",)),
        ("e2e", e2e_s, "request_latency", ("e2e = ttft + sum(itls) per request",)),
    ):
        metric = metric_from_samples(values, definition, "ttfts, itls, output_lens", (note, *extra))
        if metric is not None:
            out[name] = metric
    return out


def conditions(ctx: Ctx, obj: dict[str, Any], line: int | None) -> ConditionsBuilder:
    c = ConditionsBuilder()
    model = obj.get("model_id") or obj.get("model")
    if isinstance(model, str):
        c.set("model", model, READ, "model_id")
    for key in _HARDWARE_KEYS:
        if isinstance(obj.get(key), str):
            c.set("hardware", obj[key], READ, f"--metadata {key}")
    for key in _DEVICES_KEYS:
        v = num(ctx, obj, key, line)
        if v is not None:
            c.set("devices", v, READ, f"--metadata {key}")
    rate = obj.get("request_rate")
    r = to_float(ctx, rate, "request_rate", line, allow_inf=True)
    c.set("request_rate", r, READ, "request_rate")
    c.set("concurrency", num(ctx, obj, "max_concurrency", line), READ, "max_concurrency")
    completed = integer(ctx, obj, "completed", line)
    for key in _INPUT_LEN_KEYS:
        c.set("prompt_tokens", num(ctx, obj, key, line), READ, f"--metadata {key}")
    for key in _OUTPUT_LEN_KEYS:
        c.set("output_tokens", num(ctx, obj, key, line), READ, f"--metadata {key}")
    mean_in, mean_out = mean_lengths_from_totals(ctx, obj, c, completed, line)
    if mean_out is not None:
        c.extra["measured_mean_output_tokens"] = mean_out
    if mean_in is not None:
        c.extra["measured_mean_prompt_tokens"] = mean_in
    c.set("measured_at", "client", INFERRED, "the benchmark client times requests over HTTP")
    c.set("num_requests", integer(ctx, obj, "num_prompts", line), READ, "num_prompts")
    c.set("successful_requests", completed, READ, "completed")
    for key in ("backend", "endpoint_type", "label", "dataset_name", "deployment", "gateway"):
        if isinstance(obj.get(key), (str, int, float)) and not isinstance(obj.get(key), bool):
            c.extra[key] = obj[key]
    burst = num(ctx, obj, "burstiness", line)
    if burst is not None:
        c.extra["burstiness"] = burst
    for key in ("request_goodput", "request_goodput:"):  # `--goodput` runs (the older key has a typo)
        goodput = obj.get(key)
        if isinstance(goodput, (int, float)) and not isinstance(goodput, bool) and math.isfinite(goodput) \
                and goodput >= 0:
            c.extra["request_goodput"] = float(goodput)
            break
    if isinstance(obj.get("goodput"), (str, dict)):  # the thresholds, where a harness saved them
        c.extra["goodput"] = obj["goodput"] if isinstance(obj["goodput"], str) else " ".join(
            f"{k}:{v}" for k, v in obj["goodput"].items())
    failed = integer(ctx, obj, "failed", line)
    if failed is not None:
        c.extra["failed"] = failed
    return c


def read_object(ctx: Ctx, obj: dict[str, Any], line: int | None, label: str | None) -> Measurement:
    c = conditions(ctx, obj, line)
    notes: list[str] = []
    completed = integer(ctx, obj, "completed", line)
    metrics: dict[str, Metric] = {}
    if completed == 0:
        ctx.problem(
            f"{label or 'run'}: no request completed "
            f"(completed 0, failed {obj.get('failed', '?')}); its latency statistics "
            "are placeholders, not measurements",
            NO_SUCCESS,
            line,
        )
        notes.append("no successful requests: latency statistics ignored")
    else:
        metrics = aggregate_metrics(ctx, obj, line, "vLLM")
        detailed = detailed_metrics(ctx, obj, line)
        if detailed:
            notes.append(
                "percentiles computed from the per-request arrays replace the "
                "reported aggregates"
            )
            metrics.update(detailed)
    if "run_number" in obj:
        c.extra["sweep_run_number"] = obj["run_number"]
    version = obj.get("version")
    throughput = num(ctx, obj, "output_throughput", line)
    req_tp = num(ctx, obj, "request_throughput", line)
    if req_tp is None:
        req_tp = num(ctx, obj, "request_inthroughput", line)
    run, prov = _record(ctx, obj, line)
    return Measurement(
        run=run,
        provenance=prov,
        source=ctx.path,
        format=NAME,
        tool_version=str(version) if isinstance(version, (str, int, float)) else None,
        label=label,
        conditions=c.build(),
        metrics=metrics,
        output_throughput=throughput,
        request_throughput=req_tp,
        duration=num(ctx, obj, "duration", line),
        notes=tuple(notes),
        **lengths(obj),
    )


def lengths(obj: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The successful requests' token counts (--save-detailed ``input_lens``/``output_lens``;
    a request with an ``errors`` entry is left out)."""
    errors = obj.get("errors")
    keep = [not e for e in errors] if isinstance(errors, list) else None
    return {"prompt_lengths": per_request_lengths(obj.get("input_lens"), keep),
            "output_lengths": per_request_lengths(obj.get("output_lens"), keep, minimum=1)}


def _record(ctx: Ctx, obj: dict[str, Any], line: int | None) -> tuple[RunRecord, Provenance]:
    """What the file says of run quality and provenance (shared with SGLang)."""
    r = RecordBuilder()
    r.set("failed", integer(ctx, obj, "failed", line), "failed")
    errors = obj.get("errors")
    if isinstance(errors, list) and errors:
        r.set("failed", sum(1 for e in errors if e), "errors (per-request array)")
    lens = obj.get("output_lens")
    if isinstance(lens, list) and lens:
        vals = [float(x) for x in lens if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if vals:
            r.set("mean_output_tokens", math.fsum(vals) / len(vals), "output_lens (per-request array)")
    for key in ("ignore_eos", "ignore-eos"):
        v = obj.get(key)
        if isinstance(v, bool) or v in ("true", "false", "True", "False"):
            r.set("ignore_eos", v if isinstance(v, bool) else v.lower() == "true", key)
    p = RecordBuilder()
    backend = obj.get("backend")
    if isinstance(backend, str) and backend.lower() in ENGINE_BACKENDS:
        p.set("engine", ENGINE_BACKENDS[backend.lower()], "backend")
    for key in ("engine", *ENGINE_VERSION_KEYS):
        v = obj.get(key)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            p.set("engine" if key == "engine" else "engine_version", str(v), f"--metadata {key}")
    p.set("date", iso_date(obj.get("date")), "date")
    return r.run(), p.provenance()


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    items: list[tuple[dict[str, Any], int]] = []
    for doc in docs:
        if isinstance(doc.value, list):
            items.extend((o, doc.line) for o in doc.value if isinstance(o, dict))
        elif isinstance(doc.value, dict):
            items.append((doc.value, doc.line))
    many = len(items) > 1
    out = []
    for i, (obj, line) in enumerate(items):
        if not detect(obj):
            ctx.problem(f"entry {i} is not a vLLM result object; skipped", NOT_MEASUREMENT, line)
            continue
        label = f"run {i}" if many else None
        if many and len(docs) > 1:
            label = f"line {line}"
        out.append(read_object(ctx, obj, line, label))
    return out
