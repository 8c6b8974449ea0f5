"""ray-project LLMPerf ``*_summary.json`` and ``*_individual_responses.json``.

Summary keys ``results_{metric}_quantiles_pNN`` / ``results_{metric}_mean``;
the unit is the metric name's suffix (``ttft_s``, ``end_to_end_latency_s``:
seconds). LLMPerf's ``inter_token_latency_s`` is the per-request total
generation time divided by the output tokens, **including TTFT**; it is
recorded as ``tpot`` with definition ``includes_ttft`` (not converted, since a
percentile of a sum is not a sum of percentiles).

Individual responses (a list of per-request dicts) allow exact conversion:
TPOT = (e2e - ttft) / number_output_tokens per request, then percentiles.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .fields import integer, num, to_float
from .json_values import Doc
from .percentiles import build_metric
from .plausibility import check_latency, check_samples
from .problems import NOT_MEASUREMENT, NO_SUCCESS, Ctx
from .run_metadata import iso_date
from .measurement import (
    INFERRED,
    READ,
    ConditionsBuilder,
    Measurement,
    Metric,
    RecordBuilder,
    metric_from_samples,
    per_request_lengths,
    percent_label,
)

NAME = "llmperf"

_SUMMARY = {
    "ttft_s": ("ttft", "first_token", 1.0, ""),
    "end_to_end_latency_s": ("e2e", "request_latency", 1.0, ""),
    "inter_token_latency_s": (
        "tpot",
        "includes_ttft",
        1.0,
        "LLMPerf inter_token_latency is total generation time / output tokens, "
        "including TTFT; an upper bound on budgetlint's TPOT, not converted",
    ),
}
_QUANTILE = re.compile(r"^results_(?P<m>[a-z_]+?)_quantiles_p(?P<p>\d+(?:\.\d+)?)$")


def detect(obj: Any) -> bool:
    return isinstance(obj, dict) and "results_ttft_s_quantiles_p50" in obj


def detect_individual(obj: Any) -> bool:
    return (
        isinstance(obj, list)
        and bool(obj)
        and isinstance(obj[0], dict)
        and "ttft_s" in obj[0]
        and "end_to_end_latency_s" in obj[0]
    )


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out = []
    for doc in docs:
        obj = doc.value
        if detect_individual(obj):
            m = _read_individual(ctx, obj, doc.line)
            if m is not None:
                out.append(m)
        elif detect(obj):
            out.append(_read_summary(ctx, obj, doc.line))
        else:
            ctx.problem("not an LLMPerf summary or response list; skipped", NOT_MEASUREMENT, doc.line)
    return out


def _read_summary(ctx: Ctx, obj: dict[str, Any], line: int) -> Measurement:
    tables: dict[str, dict[str, float]] = {}
    for key in obj:
        m = _QUANTILE.match(key)
        if not m or m.group("m") not in _SUMMARY:
            continue
        label = percent_label(float(m.group("p")))
        v = check_latency(ctx, num(ctx, obj, key, line), _SUMMARY[m.group("m")][0], key, line, stat=label)
        if v is not None:
            scale = _SUMMARY[m.group("m")][2]
            tables.setdefault(m.group("m"), {})[percent_label(float(m.group("p")))] = v * scale
    metrics: dict[str, Metric] = {}
    completed = integer(ctx, obj, "results_num_completed_requests", line)
    notes: list[str] = []
    if completed == 0:
        ctx.problem("no request completed: statistics are not measurements", NO_SUCCESS, line)
    else:
        for src, (name, definition, scale, note) in _SUMMARY.items():
            mean = check_latency(
                ctx, num(ctx, obj, f"results_{src}_mean", line), name, f"results_{src}_mean", line, stat="mean"
            )
            metric = build_metric(
                tables.get(src, {}),
                None if mean is None else mean * scale,
                definition,
                f"results_{src}_*",
                count=completed,
                notes=(note,) if note else (),
            )
            if metric is not None:
                metrics[name] = metric
    c = ConditionsBuilder()
    if isinstance(obj.get("model"), str):
        c.set("model", obj["model"], READ, "model")
    c.set("concurrency", num(ctx, obj, "num_concurrent_requests", line), READ, "num_concurrent_requests")
    c.set("prompt_tokens", num(ctx, obj, "mean_input_tokens", line), READ, "mean_input_tokens")
    c.set("output_tokens", num(ctx, obj, "mean_output_tokens", line), READ, "mean_output_tokens")
    c.set("measured_at", "client", INFERRED, "LLMPerf times requests at the API client")
    c.set("num_requests", integer(ctx, obj, "results_num_requests_started", line), READ, "results_num_requests_started")
    c.set("successful_requests", completed, READ, "results_num_completed_requests")
    for key in ("framework", "model_size", "api", "name"):
        if isinstance(obj.get(key), str):
            c.extra[key] = obj[key]
    measured_out = num(ctx, obj, "results_number_output_tokens_mean", line)
    if measured_out is not None:
        c.extra["measured_mean_output_tokens"] = measured_out
    version = obj.get("version")
    per_min = num(ctx, obj, "results_num_completed_requests_per_min", line)
    r = RecordBuilder()
    r.set("failed", integer(ctx, obj, "results_number_errors", line), "results_number_errors")
    r.set("mean_output_tokens", measured_out, "results_number_output_tokens_mean")
    r.set("mean_prompt_tokens", num(ctx, obj, "results_number_input_tokens_mean", line),
          "results_number_input_tokens_mean")
    p = RecordBuilder()
    p.set("date", iso_date(obj.get("timestamp")), "timestamp")
    return Measurement(
        run=r.run(),
        provenance=p.provenance(),
        source=ctx.path,
        format=NAME,
        tool_version=str(version) if version is not None else None,
        conditions=c.build(),
        metrics=metrics,
        output_throughput=num(ctx, obj, "results_mean_output_throughput_token_per_s", line),
        request_throughput=None if per_min is None else per_min / 60.0,
        notes=tuple(notes),
    )


def _read_individual(ctx: Ctx, items: list[Any], line: int) -> Measurement | None:
    ttft, e2e, tpot = [], [], []
    seen_ttft: list[float] = []
    seen_e2e: list[float] = []
    failed = 0
    for i, r in enumerate(items):
        if not isinstance(r, dict):
            continue
        if r.get("error_code") not in (None, 0) or r.get("error_msg"):
            failed += 1
            continue
        t = to_float(ctx, r.get("ttft_s"), f"[{i}].ttft_s", line)
        e = to_float(ctx, r.get("end_to_end_latency_s"), f"[{i}].end_to_end_latency_s", line)
        n = to_float(ctx, r.get("number_output_tokens"), f"[{i}].number_output_tokens", line)
        if t is None or e is None:
            continue
        seen_ttft.append(t)
        seen_e2e.append(e)
        if t <= 0 or e <= 0:
            continue  # an impossible latency: the request is not kept (reported below)
        ttft.append(t)
        e2e.append(e)
        if n is not None and n > 0:
            tpot.append((e - t) / n)
    check_samples(ctx, seen_ttft, "ttft", "ttft_s", line)
    check_samples(ctx, seen_e2e, "e2e", "end_to_end_latency_s", line)
    if not ttft:
        ctx.problem(
            f"no successful request among {len(items)} responses ({failed} errored)",
            NO_SUCCESS,
            line,
        )
        return None
    tpot = check_samples(ctx, tpot, "tpot", "(end_to_end_latency_s - ttft_s) / number_output_tokens", line)
    note = "from LLMPerf individual responses (ttft_s, end_to_end_latency_s; seconds)"
    metrics: dict[str, Metric] = {}
    for name, values, definition, extra in (
        ("ttft", ttft, "first_token", ()),
        ("e2e", e2e, "request_latency", ()),
        (
            "tpot",
            tpot,
            "budgetlint",
            ("converted exactly per request: (end_to_end_latency_s - ttft_s) / number_output_tokens",),
        ),
    ):
        m = metric_from_samples(values, definition, "individual responses", (note, *extra))
        if m is not None:
            metrics[name] = m
    c = ConditionsBuilder()
    c.set("measured_at", "client", INFERRED, "LLMPerf times requests at the API client")
    c.set("num_requests", len(items), READ, "number of responses")
    c.set("successful_requests", len(items) - failed, READ, "responses without error_code")
    ins = [r.get("number_input_tokens") for r in items if isinstance(r, dict)]
    outs = [r.get("number_output_tokens") for r in items if isinstance(r, dict)]
    ins_f = [float(x) for x in ins if isinstance(x, (int, float)) and not isinstance(x, bool)]
    outs_f = [float(x) for x in outs if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if ins_f:
        c.set("prompt_tokens", sum(ins_f) / len(ins_f), INFERRED, "mean of number_input_tokens")
    if outs_f:
        c.set("output_tokens", sum(outs_f) / len(outs_f), INFERRED, "mean of number_output_tokens")
    ok = [r for r in items if isinstance(r, dict) and r.get("error_code") in (None, 0) and not r.get("error_msg")]
    r = RecordBuilder()
    r.set("failed", failed, "responses with an error_code or error_msg")
    if outs_f:
        r.set("mean_output_tokens", sum(outs_f) / len(outs_f), "mean of number_output_tokens")
    if ins_f:
        r.set("mean_prompt_tokens", sum(ins_f) / len(ins_f), "mean of number_input_tokens")
    return Measurement(
        run=r.run(),
        source=ctx.path,
        format=NAME,
        label="individual responses",
        conditions=c.build(),
        metrics=metrics,
        notes=("per-request file: model and concurrency are in the matching *_summary.json",),
        prompt_lengths=per_request_lengths([r.get("number_input_tokens") for r in ok]),
        output_lengths=per_request_lengths([r.get("number_output_tokens") for r in ok], minimum=1),
    )
