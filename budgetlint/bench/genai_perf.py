"""NVIDIA GenAI-Perf and AIPerf ``profile_export_*.json`` and ``.csv``.

JSON: ``{metric: {unit, avg, p25, p50, ..., min, max, std}}`` plus
``input_config``. The unit of each metric comes from its ``unit`` field; a time
metric without one is refused. ``inter_token_latency`` is per request
(latency - ttft) / (osl - 1), i.e. TPOT excluding the first token, so it is
recorded as ``tpot`` with that definition.

CSV: ``Metric,avg,min,max,p99,...`` rows titled like ``Time To First Token (ms)``;
numbers may carry thousands separators (``"1,146.31"``), missing ones ``N/A``.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from .fields import TIME_UNITS, dig, first_path, to_float
from .json_values import Doc
from .percentiles import build_metric, percent_style_label, percentile_table
from .problems import NOT_MEASUREMENT, UNITLESS, Ctx
from .run_metadata import ENGINE_BACKENDS, iso_date
from .measurement import INFERRED, READ, ConditionsBuilder, Measurement, Metric, Provenance, RecordBuilder, RunRecord

NAME = "genai-perf"

#: source metric -> (budgetlint metric, definition, note)
_TIME_METRICS = {
    "time_to_first_token": ("ttft", "first_token", ""),
    "inter_token_latency": (
        "tpot",
        "excludes_first_token",
        "GenAI-Perf/AIPerf inter_token_latency is per request (latency - TTFT) / "
        "(output tokens - 1): TPOT excluding the first token; not converted",
    ),
    "request_latency": ("e2e", "request_latency", ""),
}

_CSV_TITLES = {
    "time to first token": "time_to_first_token",
    "inter token latency": "inter_token_latency",
    "request latency": "request_latency",
}


def detect(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    ttft = obj.get("time_to_first_token") or obj.get("request_latency")
    return isinstance(ttft, dict) and ("avg" in ttft or "unit" in ttft)


_TITLE = re.compile(r"^(?P<name>.*?)\s*(?:\((?P<unit>[^)]*)\))?\s*$")

#: row titles (lower case, unit dropped) that mark a GenAI-Perf/AIPerf CSV
_CSV_MARKERS = ("time to first token", "request latency")


def detect_csv(text: str) -> bool:
    """A ``Metric,...`` header and a TTFT or request-latency row, in any letter case.

    GenAI-Perf titles rows ``Time To First Token (ms)``; AIPerf (0.13) writes
    ``Time to First Token (ms)`` and sorts rows by metric tag, so the latency
    rows can come after dozens of others.
    """
    body = text.lstrip("\ufeff").lstrip()
    if not body.startswith("Metric,"):
        return False
    for line in body.splitlines():
        title = line.split(",", 1)[0].strip().strip('"')
        m = _TITLE.match(title)
        if m and m.group("name").strip().lower() in _CSV_MARKERS:
            return True
    return False


def _tool(obj: dict[str, Any]) -> tuple[str, str | None]:
    if "aiperf_version" in obj or "schema_version" in obj or "benchmark_duration" in obj:
        v = obj.get("aiperf_version")
        return "aiperf", str(v) if v is not None else None
    return NAME, None


def _profiling_phases(cfg: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """aiperf >= 0.13 ``input_config.phases``: those whose requests are in the results."""
    phases = cfg.get("phases")
    if not isinstance(phases, list):
        return []
    out = []
    for i, ph in enumerate(phases):
        if not isinstance(ph, dict):
            continue
        if ph.get("kind") == "warmup" or ph.get("name") == "warmup" or ph.get("exclude_from_results") is True:
            continue
        out.append((i, ph))
    return out


def _aiperf_013_conditions(ctx: Ctx, c: ConditionsBuilder, cfg: dict[str, Any]) -> None:
    """aiperf 0.13's config layout: ``models.items[].name``, ``phases[]``, ``datasets[].prompts``.

    Concurrency and rate are read from the profiling phases (warmup phases are
    excluded from the results); when those phases disagree, the value is left
    unknown rather than picked.
    """
    models = cfg.get("models")
    items = models.get("items") if isinstance(models, dict) else models
    if isinstance(items, list) and items:
        first = items[0]
        name = first.get("name") if isinstance(first, dict) else first
        if isinstance(name, str):
            c.set("model", name, READ, "input_config.models.items[0].name")
        if len(items) > 1:
            c.extra["models"] = len(items)
    phases = _profiling_phases(cfg)
    for key, field in (("concurrency", "concurrency"), ("request_rate", "rate")):
        found = {
            (i, to_float(ctx, ph.get(field), f"input_config.phases[{i}].{field}"))
            for i, ph in phases
            if ph.get(field) is not None
        }
        values = {v for _, v in found if v is not None}
        if len(values) == 1:
            where = ",".join(str(i) for i, _ in sorted(found))
            c.set(key, values.pop(), READ, f"input_config.phases[{where}].{field}")
    kinds = {ph.get("type") for _, ph in phases if isinstance(ph.get("type"), str)}
    if len(kinds) == 1:
        c.extra["load_type"] = kinds.pop()
    datasets = cfg.get("datasets")
    if isinstance(datasets, list):
        main = [d for d in datasets if isinstance(d, dict) and isinstance(d.get("prompts"), dict)]
        if len(main) == 1:
            i = datasets.index(main[0])
            for key, field in (("prompt_tokens", "isl"), ("output_tokens", "osl")):
                path = f"input_config.datasets[{i}].prompts.{field}.mean"
                v = to_float(ctx, dig(main[0], "prompts", field, "mean"), path)
                c.set(key, v, READ, path)


def _conditions(ctx: Ctx, obj: dict[str, Any]) -> ConditionsBuilder:
    c = ConditionsBuilder()
    cfg = obj.get("input_config") if isinstance(obj.get("input_config"), dict) else {}
    model, where = first_path(
        cfg, [("model",), ("model_names",), ("endpoint", "model_names"), ("formatted_model_name",)]
    )
    if isinstance(model, list):
        model = model[0] if model else None
    if isinstance(model, str):
        c.set("model", model, READ, f"input_config.{where}")
    _aiperf_013_conditions(ctx, c, cfg)
    for key, paths in (
        (
            "concurrency",
            [
                ("concurrency",),
                ("perf_analyzer", "stimulus", "concurrency"),
                ("loadgen", "concurrency"),
            ],
        ),
        (
            "request_rate",
            [
                ("request_rate",),
                ("perf_analyzer", "stimulus", "request_rate"),
                ("loadgen", "request_rate"),
            ],
        ),
        (
            "prompt_tokens",
            [
                ("synthetic_input_tokens_mean",),
                ("input", "synthetic_tokens", "mean"),
                ("input", "prompt", "input_tokens", "mean"),
            ],
        ),
        (
            "output_tokens",
            [
                ("output_tokens_mean",),
                ("input", "output_tokens", "mean"),
                ("input", "prompt", "output_tokens", "mean"),
            ],
        ),
    ):
        value, where = first_path(cfg, paths)
        v = to_float(ctx, value, f"input_config.{where}", allow_inf=key == "request_rate")
        c.set(key, v, READ, f"input_config.{where}")
    for key, metric in (("prompt_tokens", "input_sequence_length"), ("output_tokens", "output_sequence_length")):
        stats = obj.get(metric)
        if isinstance(stats, dict):
            c.set(key, to_float(ctx, stats.get("avg"), f"{metric}.avg"), INFERRED, f"{metric}.avg (measured)")
    c.set("measured_at", "client", INFERRED, "the benchmark client times requests")
    count = obj.get("request_count")
    if isinstance(count, dict):
        c.set("successful_requests", to_float(ctx, count.get("avg"), "request_count.avg"), READ, "request_count")
    for key in ("backend", "endpoint_type", "service_kind"):
        if isinstance(cfg.get(key), str):
            c.extra[key] = cfg[key]
    return c


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out = []
    for doc in docs:
        obj = doc.value
        if not detect(obj):
            ctx.problem("not a GenAI-Perf/AIPerf export; skipped", NOT_MEASUREMENT, doc.line)
            continue
        fmt, version = _tool(obj)
        cfg = obj.get("input_config") if isinstance(obj.get("input_config"), dict) else {}
        streaming = cfg.get("streaming")
        if streaming is None:
            streaming = (cfg.get("endpoint") or {}).get("streaming") if isinstance(cfg.get("endpoint"), dict) else None
        metrics: dict[str, Metric] = {}
        notes: list[str] = []
        for key, (name, definition, note) in _TIME_METRICS.items():
            stats = obj.get(key)
            if not isinstance(stats, dict):
                continue
            if streaming is False and name in ("ttft", "tpot"):
                notes.append(f"non-streaming run: {key} is not a real {name} and is ignored")
                continue
            unit = stats.get("unit")
            scale = TIME_UNITS.get(unit) if isinstance(unit, str) else None
            if scale is None:
                ctx.problem(
                    f"{key} has no time unit (unit: {unit!r}); refusing to guess one",
                    UNITLESS,
                    doc.line,
                )
                continue
            pcts, mean = percentile_table(ctx, stats, percent_style_label, scale, key, doc.line, metric=name)
            metric = build_metric(pcts, mean, definition, key, notes=(note,) if note else ())
            if metric is not None:
                metrics[name] = metric
        throughput = None
        ott = obj.get("output_token_throughput")
        if isinstance(ott, dict):
            unit = ott.get("unit")
            if unit in ("tokens/sec", "tokens/s", "token/s", "tokens_per_sec"):
                throughput = to_float(ctx, ott.get("avg"), "output_token_throughput.avg", doc.line)
            else:
                ctx.problem(
                    f"output_token_throughput unit {unit!r} is not tokens/sec; ignored",
                    UNITLESS,
                    doc.line,
                )
        rtp = obj.get("request_throughput")
        req_tp = to_float(ctx, rtp.get("avg"), "request_throughput.avg", doc.line) if isinstance(rtp, dict) else None
        dur = obj.get("benchmark_duration")
        duration = None
        if isinstance(dur, dict) and TIME_UNITS.get(dur.get("unit")) is not None:
            v = to_float(ctx, dur.get("avg"), "benchmark_duration.avg", doc.line)
            duration = None if v is None else v * TIME_UNITS[dur["unit"]]
        out.append(
            Measurement(
                run=_record(ctx, obj, cfg, doc.line),
                provenance=_provenance(obj, cfg),
                source=ctx.path,
                format=fmt,
                tool_version=version,
                conditions=_conditions(ctx, obj).build(),
                metrics=metrics,
                output_throughput=throughput,
                request_throughput=req_tp,
                duration=duration,
                notes=tuple(notes),
            )
        )
    return out


def _record(ctx: Ctx, obj: dict[str, Any], cfg: dict[str, Any], line: int) -> RunRecord:
    r = RecordBuilder()
    errors = obj.get("error_request_count")
    if isinstance(errors, dict):
        v = to_float(ctx, errors.get("avg"), "error_request_count.avg", line)
        if v is not None and v.is_integer():
            r.set("failed", int(v), "error_request_count")
    for name, metric in (("mean_output_tokens", "output_sequence_length"),
                         ("mean_prompt_tokens", "input_sequence_length")):
        stats = obj.get(metric)
        if isinstance(stats, dict):
            r.set(name, to_float(ctx, stats.get("avg"), f"{metric}.avg", line), f"{metric}.avg")
    value, where = first_path(cfg, [("extra_inputs", "ignore_eos"), ("input", "extra", "ignore_eos")])
    if isinstance(value, bool):
        r.set("ignore_eos", value, f"input_config.{where}")
    if obj.get("was_cancelled") is True:
        r.set("valid", False, "was_cancelled")
    return r.run()


def _provenance(obj: dict[str, Any], cfg: dict[str, Any]) -> Provenance:
    p = RecordBuilder()
    backend, where = first_path(cfg, [("backend",), ("endpoint", "backend")])
    if isinstance(backend, str) and backend.lower() in ENGINE_BACKENDS:
        p.set("engine", ENGINE_BACKENDS[backend.lower()], f"input_config.{where}")
    for key in ("start_time",):
        p.set("date", iso_date(obj.get(key)), key)
    return p.provenance()


#: CSV rows (lower-case title) -> condition, from the request table's avg
_CSV_LENGTHS = {
    "input sequence length": "prompt_tokens",
    "output sequence length": "output_tokens",
}


def read_csv(ctx: Ctx, text: str, path: Path) -> list[Measurement]:
    """GenAI-Perf / AIPerf ``profile_export_*.csv``.

    Block 1 (``Metric,avg,min,max,[sum,]p1...,p99[,std]``): per-request
    statistics; the time rows give ttft/tpot/e2e, the sequence-length rows the
    measured mean lengths. Block 2 (``Metric,Value``): run totals (throughputs,
    ``Request Count``, AIPerf's ``Benchmark Duration (sec)``). AIPerf is told
    from GenAI-Perf by its ``sum`` column or ``Benchmark Duration`` row.
    """
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    header: list[str] | None = None
    metrics: dict[str, Metric] = {}
    throughput = None
    req_tp = None
    duration = None
    aiperf = False
    c = ConditionsBuilder()
    for lineno, row in enumerate(rows, start=1):
        if not row or not any(cell.strip() for cell in row):
            header = None
            continue
        if row[0].strip() == "Metric":
            header = [h.strip() for h in row]
            if "sum" in header:
                aiperf = True
            continue
        if header is None:
            continue
        m = _TITLE.match(row[0].strip())
        if not m:
            continue
        title = m.group("name").strip().lower()
        unit = (m.group("unit") or "").strip()
        if header[:2] == ["Metric", "Value"] and len(row) >= 2:
            if title == "output token throughput":
                if unit in ("tokens/sec", "per sec", "tokens/s"):
                    throughput = to_float(ctx, row[1], row[0], lineno)
                else:
                    ctx.problem(f"{row[0]!r}: unknown throughput unit", UNITLESS, lineno)
            elif title == "request throughput":
                req_tp = to_float(ctx, row[1], row[0], lineno)
            elif title == "request count":
                c.set("successful_requests", to_float(ctx, row[1], row[0], lineno), READ, f"CSV {row[0]!r}")
            elif title == "benchmark duration":
                aiperf = True
                scale = TIME_UNITS.get(unit)
                v = to_float(ctx, row[1], row[0], lineno)
                if scale is not None and v is not None and v > 0:
                    duration = v * scale
            continue
        stats = {h: cell for h, cell in zip(header[1:], row[1:])}
        if title in _CSV_LENGTHS:
            v = to_float(ctx, stats.get("avg"), f"{row[0]}.avg", lineno)
            c.set(_CSV_LENGTHS[title], v, INFERRED, f"CSV {row[0]!r} avg (measured)")
            continue
        key = _CSV_TITLES.get(title)
        if key is None:
            continue
        name, definition, note = _TIME_METRICS[key]
        scale = TIME_UNITS.get(unit)
        if scale is None:
            ctx.problem(
                f"CSV row {row[0]!r} has no time unit in parentheses; refusing to guess one",
                UNITLESS,
                lineno,
            )
            continue
        pcts, mean = percentile_table(ctx, stats, percent_style_label, scale, row[0], lineno, metric=name)
        metric = build_metric(pcts, mean, definition, row[0], notes=(note,) if note else ())
        if metric is not None:
            metrics[name] = metric
    if not metrics and throughput is None:
        ctx.problem("CSV has no latency rows budgetlint can read", NOT_MEASUREMENT)
        return []
    c.set("measured_at", "client", INFERRED, "the benchmark client times requests")
    return [
        Measurement(
            source=ctx.path,
            format="aiperf" if aiperf else NAME,
            conditions=c.build(),
            metrics=metrics,
            output_throughput=throughput,
            request_throughput=req_tp,
            duration=duration,
            notes=(
                "CSV export carries no run configuration (model, concurrency, rate: see the "
                "JSON export); the lengths are the measured means",
            ),
        )
    ]
