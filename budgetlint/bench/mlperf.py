"""MLPerf Inference LoadGen ``mlperf_log_summary.txt`` (LLM benchmarks).

Plain ``Label : value`` lines. Latencies carry ``(ns)`` in the label; a
latency line without a unit is refused. Server-scenario files give e2e
(``latency``), TTFT (``first token latency``) and TPOT (``time to output
token``, excluding the first token) at 50/90/95/97/99/99.9 percentiles.
``Test Parameters Used`` holds the constraints the run was held to
(``target_qps``, ``ttft_latency``, ``tpot_latency``), kept in
``Measurement.constraints`` (seconds).

Offline runs issue one query holding every sample, so their "latency" is time
since that query was issued, not a request latency: only throughput is kept.
Model and hardware come from the results path convention
``.../results/<system>/<benchmark>/<Scenario>/performance/run_N/`` when present.
"""

from __future__ import annotations

import re
from pathlib import Path

from .fields import to_float
from .percentiles import build_metric
from .plausibility import check_latency
from .problems import NOT_MEASUREMENT, UNITLESS, Ctx
from .measurement import INFERRED, READ, ConditionsBuilder, Measurement, Metric, RecordBuilder, percent_label

NAME = "mlperf"

_LINE = re.compile(r"^\s*(?P<label>[^:]+?)\s*:\s*(?P<value>.*?)\s*$")
_PCT = re.compile(
    r"^(?P<p>\d+(?:\.\d+)?) percentile (?P<what>latency|first token latency|time to output token|time per output token)(?: \((?P<unit>\w+)\))?$",
    re.IGNORECASE,
)
_MEAN = re.compile(
    r"^Mean (?P<what>latency|First Token latency|Time to Output Token|Time per Output Token)(?: \((?P<unit>\w+)\))?$",
    re.IGNORECASE,
)
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_WHAT = {
    "latency": ("e2e", "request_latency", ""),
    "first token latency": ("ttft", "first_token", ""),
    "time to output token": (
        "tpot",
        "excludes_first_token",
        "LoadGen TPOT = (latency - TTFT) / (output tokens - 1) per sample; not converted",
    ),
}


def detect_text(text: str) -> bool:
    head = text[:2000]
    return "MLPerf Results Summary" in head or (
        "Scenario" in head and "percentile latency (ns)" in text
    )


def read_text(ctx: Ctx, text: str, path: Path) -> list[Measurement]:
    fields: dict[str, tuple[str, int]] = {}
    tables: dict[str, dict[str, float]] = {}
    means: dict[str, float] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        m = _LINE.match(raw)
        if not m:
            continue
        label, value = m.group("label"), m.group("value")
        pm = _PCT.match(label)
        mm = _MEAN.match(label)
        hit = pm or mm
        if hit:
            what = hit.group("what").lower().replace("time per output token", "time to output token")
            unit = hit.group("unit")
            if unit is None or unit.lower() not in _UNITS:
                ctx.problem(f"{label!r} has no time unit; refusing to guess one", UNITLESS, lineno)
                continue
            v = to_float(ctx, value, label, lineno)
            if v is None:
                ctx.problem(f"{label!r}: {value!r} is not a number", NOT_MEASUREMENT, lineno)
                continue
            stat = percent_label(float(pm.group("p"))) if pm else "mean"
            if check_latency(ctx, v, _WHAT[what][0], label, lineno, stat=stat) is None:
                continue
            seconds = v * _UNITS[unit.lower()]
            if pm:
                tables.setdefault(what, {})[percent_label(float(pm.group("p")))] = seconds
            else:
                means[what] = seconds
            continue
        fields.setdefault(label.strip(), (value, lineno))
    scenario = fields.get("Scenario", ("", 0))[0]
    if not scenario:
        ctx.problem("no 'Scenario :' line: not a LoadGen summary", NOT_MEASUREMENT)
        return []

    def f(label: str, *, unit_scale: float = 1.0) -> float | None:
        if label not in fields:
            return None
        v = to_float(ctx, fields[label][0], label, fields[label][1])
        return None if v is None else v * unit_scale

    notes: list[str] = []
    metrics: dict[str, Metric] = {}
    if scenario.lower() == "offline":
        notes.append(
            "Offline scenario: latencies count from the single query's issue, not per request; "
            "only throughput is kept"
        )
    else:
        for what, (name, definition, note) in _WHAT.items():
            metric = build_metric(
                tables.get(what, {}), means.get(what), definition, f"{what} (ns)", notes=(note,) if note else ()
            )
            if metric is not None:
                metrics[name] = metric
    constraints: dict[str, float | str | bool] = {"scenario": scenario}
    for label, key, scale in (
        ("target_qps", "target_qps", 1.0),
        ("ttft_latency (ns)", "ttft_latency", 1e-9),
        ("tpot_latency (ns)", "tpot_latency", 1e-9),
        ("min_duration (ms)", "min_duration", 1e-3),
        ("samples_per_query", "samples_per_query", 1.0),
        ("max_async_queries", "max_async_queries", 1.0),
    ):
        v = f(label, unit_scale=scale)
        if v is not None:
            constraints[key] = v
    for label, key in (
        ("Result is", "result"),
        ("Performance constraints satisfied", "performance_constraints_satisfied"),
        ("Mode", "mode"),
        ("SUT name", "sut_name"),
    ):
        if label in fields:
            constraints[key] = fields[label][0]
    c = ConditionsBuilder()
    c.set("measured_at", "server", INFERRED, "LoadGen times samples in-process with the SUT (no network edge)")
    if scenario.lower() == "server":
        c.set("request_rate", f("target_qps"), READ, "target_qps (Server scenario, Poisson arrivals)")
    _from_path(c, path)
    tokens = f("Completed tokens per second")
    if tokens is None:
        tokens = f("Tokens per second")
    samples = f("Completed samples per second")
    if samples is None:
        samples = f("Samples per second")
    if metrics.get("ttft") is None and scenario.lower() == "server":
        notes.append("no first-token section: not an LLM streaming run")
    r = RecordBuilder()
    if "Result is" in fields:
        verdict = str(fields["Result is"][0]).strip().upper()
        if verdict in ("VALID", "INVALID"):
            r.set("valid", verdict == "VALID", "Result is")
    # the summary has no request count, but a run that says "Min duration satisfied : Yes"
    # lasted at least min_duration: at least that many seconds x completed samples per second
    min_s = constraints.get("min_duration")
    satisfied = str(fields.get("Min duration satisfied", ("",))[0]).strip().lower() == "yes"
    if (scenario.lower() != "offline" and satisfied and isinstance(min_s, float) and samples
            and samples > 0 and min_s > 0 and min_s * samples < 1e12):
        r.set("completed", int(min_s * samples),
              "at least: Completed samples per second x min_duration (Min duration satisfied : Yes)")
    return [
        Measurement(
            run=r.run(),
            source=ctx.path,
            format=NAME,
            label=scenario,
            conditions=c.build(),
            metrics=metrics,
            output_throughput=tokens,
            request_throughput=samples,
            constraints=constraints,
            notes=tuple(notes),
        )
    ]


def _from_path(c: ConditionsBuilder, path: Path) -> None:
    parts = path.resolve().parts
    if "performance" not in parts or "results" not in parts:
        return
    i = len(parts) - 1 - parts[::-1].index("results")
    if i + 2 < len(parts):
        c.set("hardware", parts[i + 1], INFERRED, "results path <system> directory")
        c.set("model", parts[i + 2], INFERRED, "results path <benchmark> directory")
