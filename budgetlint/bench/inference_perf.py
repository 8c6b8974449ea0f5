"""kubernetes-sigs inference-perf reports (+ the run's ``config.yaml``).

``*_lifecycle_metrics.json`` (summary or per stage): client-side distributions
``successes.latency.<metric>`` with keys ``mean, min, p0.1, ..., median, ...,
p99.9, max``. inference-perf fixes every latency in **seconds** in its report
schema (``reportgen/base.py``; the keys carry no suffix). Mapping:
``time_to_first_token`` -> ttft, ``time_per_output_token`` -> tpot
(excludes_first_token), ``inter_token_latency`` -> itl (pooled gaps),
``request_latency`` -> e2e. ``normalized_time_per_output_token`` (latency /
output_len, includes TTFT) is noted, not used.

``time_per_output_token`` (inference-perf 0.7 ``reportgen/base.py``,
``compute_request_latency_metrics``) is, per request, (last output-token time -
first output-token time) / (N - 1), N the output tokens (the client's
re-tokenised count of the whole reply, or the server's usage count with
``use_server_output_tokens``); every token of a streamed chunk gets the chunk's
arrival time. That is TPOT excluding the first token. Older reports (the
``prompt_len`` layout, before the fix of inference-perf #564) re-tokenised each
chunk *with special tokens*, so about two timestamps per token at one token per
chunk: their TPOT and ITL come out about halved. Such a file is recognised by
its means (TPOT x (N - 1) far from mean latency - mean TTFT) and its TPOT gets
the definition ``per_token_timestamp``: not per output token, not convertible.

Run conditions: 0.7 writes ``successes.prompt_tokens`` (older: ``prompt_len``)
and ``successes.output_len``; a concurrency stage writes
``load_summary.concurrency``, its ``requested_rate`` is only the scheduler's
pacing (num_requests over 1 s), not a load bound, and is not kept as the rate.
The summary file has neither: the sidecar ``config.yaml`` gives
``load.stages[].concurrency_level`` (or ``rate``).

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

from .fields import dig, num, to_float
from .json_values import Doc
from .percentiles import build_metric, percent_style_label, percentile_table
from .problems import IO, NOT_MEASUREMENT, NO_SUCCESS, Ctx
from .run_metadata import ENGINE_BACKENDS
from .measurement import INFERRED, READ, ConditionsBuilder, Measurement, Metric, RecordBuilder
from budgetlint.text import numbers

#: the run's config.yaml beside its reports (:func:`_sidecar`) is read only up to this size (an
#: inference-perf config is a few kB; a larger file of that name is not the run's)
MAX_CONFIG_BYTES = 1024 * 1024

NAME = "inference-perf"

TPOT_NOTE = (
    "inference-perf time_per_output_token = (last output-token time - first output-token "
    "time) / (N - 1) per request, N = output tokens (client re-tokenised reply, or the "
    "server's usage count with use_server_output_tokens): TPOT excluding the first token "
    "(inference-perf 0.7 reportgen/base.py); not converted"
)
OLD_TPOT_DEFINITION = "per_token_timestamp"
#: TPOT x (N - 1) / (mean latency - mean TTFT) outside this range: not per output token
_TPOT_CHECK = (0.8, 1.25)

_LIFECYCLE = {
    "time_to_first_token": ("ttft", "first_token", ""),
    "time_per_output_token": (
        "tpot",
        "excludes_first_token",
        TPOT_NOTE,
    ),
    "inter_token_latency": (
        "itl",
        "pooled_gaps",
        "gaps between consecutive output-token times pooled over requests; the tokens of "
        "one streamed chunk share its arrival time, so intra-chunk gaps are 0",
    ),
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


def _sidecar(path: Path) -> tuple[dict[str, Any] | None, Path | None, str | None]:
    """The run's ``config.yaml`` beside ``path``: (config, its path, why it could not be read)."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        return None, None, None
    folder = path.parent
    candidates = [folder / "config.yaml"]
    if not candidates[0].is_file():
        candidates = sorted(p for p in folder.glob("*config.yaml") if p.is_file())
        if len(candidates) != 1:
            return None, None, None
    from budgetlint.files import fs

    try:  # bounded: the sidecar is read as a benchmark file is (at most MAX_CONFIG_BYTES, a regular file)
        text = fs.read_regular(candidates[0], MAX_CONFIG_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None, None, None
    try:
        cfg = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as exc:  # a date like 2024-02-30, nesting
        if not detect_config_text(text):  # some other *config.yaml: not ours to report
            return None, None, None
        why = getattr(exc, "problem", None) or f"{type(exc).__name__}: {exc}"
        return None, candidates[0], f"not valid YAML ({why})"
    return (cfg, candidates[0], None) if detect_config(cfg) else (None, None, None)


def detect_config_text(text: str) -> bool:
    """Whether a YAML text may be an inference-perf config (a top-level ``load:`` key)."""
    return re.search(r"^load\s*:", text, re.MULTILINE) is not None


_STAGE = re.compile(r"stage_(\d+)_")


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out = []
    cfg, cfg_path, broken = _sidecar(path)
    if broken and cfg_path is not None:
        ctx.problem(f"its sidecar {cfg_path.name} cannot be read: {broken}; the run conditions it holds "
                    "(concurrency, rate) are unknown", IO)
        cfg_path = None
    for doc in docs:
        obj = doc.value
        if not detect(obj):
            ctx.problem("not an inference-perf report; skipped", NOT_MEASUREMENT, doc.line)
            continue
        out.append(_read_report(ctx, obj, doc.line, path, cfg, cfg_path))
    return out


def _is_v07_layout(succ: dict[str, Any]) -> bool:
    """inference-perf 0.7's successes: ``prompt_tokens``/``output_tokens`` usage dicts."""
    return isinstance(succ.get("prompt_tokens"), dict) or "token_count_mismatches" in succ


def _tpot_check(ctx: Ctx, latency: dict[str, Any], succ: dict[str, Any], line: int) -> float | None:
    """mean TPOT x (mean N - 1) / (mean latency - mean TTFT); ~1 when TPOT is per output token."""
    means = {}
    for key in ("time_per_output_token", "request_latency", "time_to_first_token"):
        means[key] = dig(latency, key, "mean")
    n = dig(succ, "output_len", "mean")
    values = [v for v in (*means.values(), n) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(values) != 4:
        return None
    tpot, lat, ttft = (float(means[k]) for k in ("time_per_output_token", "request_latency", "time_to_first_token"))
    n = float(n)
    decode = lat - ttft
    if not (decode > 0 and n > 1 and tpot > 0):
        return None
    return tpot * (n - 1) / decode


def _tpot_definition(
    ctx: Ctx, latency: dict[str, Any], succ: dict[str, Any], line: int
) -> tuple[str, tuple[str, ...], list[str]]:
    """The TPOT definition of this report, its metric notes and measurement notes."""
    if _is_v07_layout(succ):
        return "excludes_first_token", (TPOT_NOTE,), []
    ratio = _tpot_check(ctx, latency, succ, line)
    if ratio is None:
        return "excludes_first_token", (
            TPOT_NOTE,
            "older report layout (prompt_len): the divisor could not be checked against the means",
        ), []
    lo, hi = _TPOT_CHECK
    if lo <= ratio <= hi:
        return "excludes_first_token", (
            TPOT_NOTE,
            f"older report layout (prompt_len): checked on the means, TPOT x (N - 1) = "
            f"{numbers.number(ratio)} x (latency - TTFT)",
        ), []
    note = (
        f"time_per_output_token is not per output token here: mean TPOT x (mean output_len - 1) "
        f"= {numbers.number(ratio)} x (mean latency - mean TTFT). Reports older than inference-perf 0.7 "
        f"(fix of #564) re-tokenised each streamed chunk with special tokens, about two "
        f"timestamps per token at one token per chunk, and divided by the timestamps: TPOT "
        f"and ITL come out about halved. Definition {OLD_TPOT_DEFINITION!r}: not convertible "
        f"from aggregates, not compared"
    )
    short = (
        f"time_per_output_token is about {numbers.number(ratio)} x the per-token value (report older than "
        f"inference-perf 0.7): TPOT definition {OLD_TPOT_DEFINITION!r}, not compared"
    )
    return OLD_TPOT_DEFINITION, (note,), [short]


def _stage_index(path: Path) -> int | None:
    m = _STAGE.search(path.name)
    return int(m.group(1)) if m else None


def _sidecar_load(
    ctx: Ctx, c: ConditionsBuilder, cfg: dict[str, Any], where: str, stage: int | None, line: int
) -> list[str]:
    """concurrency / rate of the run from the sidecar's ``load`` section; notes."""
    notes: list[str] = []
    kind = dig(cfg, "load", "type")
    stages = dig(cfg, "load", "stages")
    if not isinstance(stages, list) or not stages:
        return notes
    if stage is not None:
        if stage >= len(stages) or not isinstance(stages[stage], dict):
            return notes
        picked = [(stage, stages[stage])]
    else:
        picked = [(i, st) for i, st in enumerate(stages) if isinstance(st, dict)]
    if kind == "concurrent" or any("concurrency_level" in st for _, st in picked):
        values = {to_float(ctx, st.get("concurrency_level"), f"load.stages[{i}].concurrency_level", line)
                  for i, st in picked}
        if len(values) == 1 and None not in values:
            idx = picked[0][0] if len(picked) == 1 else "*"
            c.set("concurrency", values.pop(), INFERRED, f"{where}: load.stages[{idx}].concurrency_level")
        elif len(values) > 1:
            notes.append(f"{where}: stages differ in concurrency_level; the summary has no single concurrency")
        return notes
    if kind in ("constant", "poisson") or any("rate" in st for _, st in picked):
        values = {to_float(ctx, st.get("rate"), f"load.stages[{i}].rate", line) for i, st in picked}
        if len(values) == 1 and None not in values:
            idx = picked[0][0] if len(picked) == 1 else "*"
            c.set("request_rate", values.pop(), INFERRED, f"{where}: load.stages[{idx}].rate")
    return notes


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
        table = {key: (name, d, (note,) if note else ()) for key, (name, d, note) in _LIFECYCLE.items()}
        measured_at = ("client", "lifecycle metrics are timed by the inference-perf client")
        if "normalized_time_per_output_token" in latency:
            notes.append(
                "normalized_time_per_output_token (latency / output tokens, includes TTFT) not used"
            )
        definition, tpot_notes, more = _tpot_definition(ctx, latency, succ, line)
        table["time_per_output_token"] = ("tpot", definition, tpot_notes)
        notes.extend(more)
        if definition == OLD_TPOT_DEFINITION:
            name, itl_def, itl_notes = table["inter_token_latency"]
            table["inter_token_latency"] = (
                name,
                itl_def,
                (*itl_notes, "this older report also pools the near-zero gaps of per-chunk special tokens"),
            )
    else:
        latency = succ
        table = {
            "time_to_first_token": ("ttft", "first_token", ("server-side, from Prometheus histograms",)),
            "request_latency": ("e2e", "request_latency", ("server-side, from Prometheus histograms",)),
            "time_per_output_token": (
                "itl",
                "pooled_gaps",
                (
                    "server histogram of per-step output-token intervals (vllm:time_per_output_token_seconds), "
                    "percentiles interpolated within Prometheus buckets",
                ),
            ),
        }
        measured_at = ("server", "Prometheus metrics are recorded by the model server")
    if count == 0:
        ctx.problem("no successful request: statistics are not measurements", NO_SUCCESS, line)
    else:
        for key, (name, definition, metric_notes) in table.items():
            stats = latency.get(key)
            if not isinstance(stats, dict):
                continue
            pcts, mean = percentile_table(ctx, stats, percent_style_label, 1.0, key, line, metric=name)
            metric = build_metric(pcts, mean, definition, key, count, metric_notes)
            if metric is not None:
                metrics[name] = metric
    c = ConditionsBuilder()
    c.set("measured_at", measured_at[0], INFERRED, measured_at[1])
    concurrency = num(ctx, load, "concurrency", line)
    c.set("concurrency", concurrency, READ, "load_summary.concurrency")
    requested = num(ctx, load, "requested_rate", line)
    if concurrency is not None and requested is not None:
        # concurrent stages are paced as num_requests over one second: not a bound
        c.extra["scheduled_rate"] = requested
        notes.append(
            f"concurrency stage: load_summary.requested_rate {numbers.stated(requested)} is the scheduler's "
            "pacing (num_requests over 1 s), not a request-rate bound; not kept as request_rate"
        )
    else:
        c.set("request_rate", requested, READ, "load_summary.requested_rate")
    achieved = num(ctx, load, "achieved_rate", line)
    if achieved is not None:
        c.extra["achieved_rate"] = achieved
    if lifecycle and "requested_rate" not in load:
        notes.append("summary over all stages: no single request rate")
    for key, srcs in (
        ("prompt_tokens", ("prompt_tokens", "prompt_len")),
        ("output_tokens", ("output_len", "output_tokens")),
    ):
        for src in srcs:
            v = to_float(ctx, dig(succ, src, "mean"), f"successes.{src}.mean", line)
            c.set(key, v, INFERRED, f"successes.{src}.mean (measured)")
    if lifecycle:
        c.set("num_requests", load.get("count") if isinstance(load.get("count"), int) else None, READ, "load_summary.count")
    c.set("successful_requests", count, READ, "successes.count")
    stage = _stage_index(path)
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
        if lifecycle:
            notes.extend(_sidecar_load(ctx, c, cfg, where, stage, line))
        for key, dist in (("prompt_tokens", "input_distribution"), ("output_tokens", "output_distribution")):
            v = to_float(ctx, dig(cfg, "data", dist, "mean"), f"data.{dist}.mean", line)
            c.set(key, v, INFERRED, f"{where}: data.{dist}.mean (configured)")
    throughput = dig(succ, "throughput", "output_tokens_per_sec")
    req_tp = dig(succ, "throughput", "requests_per_sec")
    if not lifecycle:
        req_tp = succ.get("rate")
    label = f"stage {stage}" if stage is not None else None
    if not lifecycle:
        label = (label + " " if label else "") + "prometheus"
    r = RecordBuilder()
    prov = RecordBuilder()
    failures = obj.get("failures")
    if lifecycle and isinstance(failures, dict) and isinstance(failures.get("count"), int):
        r.set("failed", failures["count"], "failures.count")
    r.set("achieved_rate", achieved, "load_summary.achieved_rate")
    for name, src in (("mean_output_tokens", "output_len"), ("mean_prompt_tokens", "prompt_len")):
        r.set(name, to_float(ctx, dig(succ, src, "mean"), f"successes.{src}.mean", line), f"successes.{src}.mean")
    if isinstance(cfg, dict) and cfg_path is not None:
        where = f"sidecar {cfg_path.name}"
        eos = dig(cfg, "server", "ignore_eos")
        if isinstance(eos, bool):
            r.set("ignore_eos", eos, f"{where}: server.ignore_eos")
        out_len = dig(cfg, "data", "shared_prefix", "output_len")
        if isinstance(out_len, (int, float)) and not isinstance(out_len, bool):
            r.set("requested_output_tokens", float(out_len), f"{where}: data.shared_prefix.output_len")
        out_mean = dig(cfg, "data", "output_distribution", "mean")
        if isinstance(out_mean, (int, float)) and not isinstance(out_mean, bool):
            r.set("requested_output_tokens", float(out_mean), f"{where}: data.output_distribution.mean")
        server = dig(cfg, "server", "type")
        if isinstance(server, str) and server.lower() in ENGINE_BACKENDS:
            prov.set("engine", ENGINE_BACKENDS[server.lower()], f"{where}: server.type")
    return Measurement(
        run=r.run(),
        provenance=prov.provenance(),
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
