"""SGLang ``python -m sglang.bench_serving --output-file`` JSONL.

One JSON object per line; ``request_rate`` may be the bare ``Infinity`` token.
Latency keys ``{mean,median,std,pNN}_{ttft,tpot,itl,e2e_latency}_ms`` are
milliseconds. Old (2024) lines carry only medians and means: no p99.
The file names no model or hardware.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .fields import integer, mean_lengths_from_totals, num, to_float
from .json_values import Doc
from .problems import NOT_MEASUREMENT, NO_SUCCESS, Ctx
from .measurement import (
    INFERRED,
    READ,
    ConditionsBuilder,
    Measurement,
    Metric,
    Provenance,
    RecordBuilder,
    RunRecord,
)
from .vllm import _record, aggregate_metrics, detailed_metrics, lengths
from budgetlint.text import numbers

NAME = "sglang"


def detect(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    return "total_output_tokens_retokenized" in obj or any(
        k.endswith("_e2e_latency_ms") for k in obj
    )


def _conditions(ctx: Ctx, obj: dict[str, Any], line: int) -> ConditionsBuilder:
    c = ConditionsBuilder()
    c.set(
        "request_rate",
        to_float(ctx, obj.get("request_rate"), "request_rate", line, allow_inf=True),
        READ,
        "request_rate",
    )
    c.set("concurrency", num(ctx, obj, "max_concurrency", line), READ, "max_concurrency")
    completed = integer(ctx, obj, "completed", line)
    dataset = obj.get("dataset_name")
    ratio = num(ctx, obj, "random_range_ratio", line)
    if dataset == "random" and ratio == 1.0:
        c.set("prompt_tokens", num(ctx, obj, "random_input_len", line), READ, "random_input_len")
        c.set("output_tokens", num(ctx, obj, "random_output_len", line), READ, "random_output_len")
    mean_lengths_from_totals(ctx, obj, c, completed, line)
    c.set("measured_at", "client", INFERRED, "the benchmark client times requests over HTTP")
    c.set("num_requests", integer(ctx, obj, "num_prompts", line), READ, "num_prompts")
    c.set("successful_requests", completed, READ, "completed")
    for key in ("backend", "dataset_name"):
        if isinstance(obj.get(key), str):
            c.extra[key] = obj[key]
    achieved = num(ctx, obj, "concurrency", line)
    if achieved is not None:
        c.extra["achieved_mean_concurrency"] = achieved
    return c


def _sglang_record(ctx: Ctx, obj: dict[str, Any], line: int, completed: int | None,
                   run_vllm_style: tuple[RunRecord, Provenance]) -> tuple[RunRecord, Provenance]:
    """Run quality: measured means from the totals, the requested mean of a random dataset.

    ``--dataset-name random`` draws each length uniformly from
    ``[max(int(len x random_range_ratio), 1), len]``, so the requested mean is
    the midpoint; a ShareGPT run asks ``sharegpt_output_len`` when given.
    """
    base, prov = run_vllm_style
    r = RecordBuilder()
    r.values.update({k: v for k, v in vars(base).items() if v is not None and k != "sources"})
    r.sources.update(base.sources)
    if completed:
        for name, key in (("mean_output_tokens", "total_output_tokens"), ("mean_prompt_tokens", "total_input_tokens")):
            total = num(ctx, obj, key, line)
            if total is not None:
                r.set(name, total / completed, f"{key} / completed")
    ratio = num(ctx, obj, "random_range_ratio", line)
    if obj.get("dataset_name") == "random" and ratio is not None and 0.0 <= ratio <= 1.0:
        for name, key in (("requested_output_tokens", "random_output_len"), ("requested_prompt_tokens", "random_input_len")):
            n = num(ctx, obj, key, line)
            if n is not None and n >= 1:
                low = max(int(n * ratio), 1)
                r.set(name, (low + n) / 2.0, f"{key} {numbers.stated(n)}, random_range_ratio {numbers.stated(ratio)}: uniform over [{low}, {numbers.stated(n)}]")
    elif obj.get("dataset_name") == "sharegpt":
        r.set("requested_output_tokens", num(ctx, obj, "sharegpt_output_len", line), "sharegpt_output_len")
    r.set("mean_in_flight", num(ctx, obj, "concurrency", line), "concurrency (SGLang's mean in flight)")
    return r.run(), prov


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out = []
    many = len(docs) > 1
    for doc in docs:
        obj = doc.value
        if not detect(obj):
            ctx.problem("line is not an SGLang result object; skipped", NOT_MEASUREMENT, doc.line)
            continue
        c = _conditions(ctx, obj, doc.line)
        completed = integer(ctx, obj, "completed", doc.line)
        metrics: dict[str, Metric] = {}
        notes: list[str] = []
        if completed == 0:
            ctx.problem(
                "no request completed (completed 0): latency statistics are not measurements",
                NO_SUCCESS,
                doc.line,
            )
        else:
            metrics = aggregate_metrics(ctx, obj, doc.line, "SGLang")
            detailed = detailed_metrics(ctx, obj, doc.line)
            if detailed:
                notes.append("percentiles computed from --output-details arrays")
                metrics.update(detailed)
        if not any(label != "p50" for m in metrics.values() for label in m.percentiles):
            notes.append("old SGLang key set: medians and means only, no tail percentiles")
        run, prov = _sglang_record(ctx, obj, doc.line, completed, run_vllm_style=_record(ctx, obj, doc.line))
        out.append(
            Measurement(
                run=run,
                provenance=prov,
                source=ctx.path,
                format=NAME,
                label=f"line {doc.line}" if many else None,
                conditions=c.build(),
                metrics=metrics,
                output_throughput=num(ctx, obj, "output_throughput", doc.line),
                request_throughput=num(ctx, obj, "request_throughput", doc.line),
                duration=num(ctx, obj, "duration", doc.line),
                notes=tuple(notes),
                **lengths(obj),  # --output-details: input_lens/output_lens, as vLLM's
            )
        )
    return out
