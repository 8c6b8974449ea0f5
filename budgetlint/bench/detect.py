"""Format detection from content (never from the file name) and dispatch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import genai_perf, guidellm, inference_perf, llmperf, mlperf, native, prometheus, sglang, vllm
from .json_values import Doc, parse_json_stream
from .problems import EMPTY, NOT_MEASUREMENT, UNKNOWN_FORMAT, Ctx, finish_nan
from .measurement import Measurement

JsonReader = Callable[[Ctx, "list[Doc]", Path], "list[Measurement]"]
TextReader = Callable[[Ctx, str, Path], "list[Measurement]"]


@dataclass(frozen=True)
class Reader:
    """One benchmark format: its names, how to recognise it, how to read it."""

    name: str  # the canonical --bench-format name
    aliases: tuple[str, ...]  # other names --bench-format accepts
    kind: str  # "json": detect() sees each parsed JSON value; "text": the file's text
    detect: Callable[[Any], bool]
    read: Callable[..., "list[Measurement]"]  # JsonReader or TextReader


#: Every reader, in detection order: the first whose ``detect`` says yes reads
#: the file. Adding a format: its module in bench/ and one line here.
READERS: tuple[Reader, ...] = (
    Reader("native", ("budgetlint",), "json", native.detect, native.read),
    Reader("guidellm", (), "json", guidellm.detect, guidellm.read),
    Reader("llmperf", (), "json", lambda v: llmperf.detect(v) or llmperf.detect_individual(v), llmperf.read),
    Reader("inference-perf", ("inference_perf",), "json", inference_perf.detect, inference_perf.read),
    Reader("genai-perf", ("genai_perf", "aiperf"), "json", genai_perf.detect, genai_perf.read),
    Reader("sglang", (), "json", sglang.detect, sglang.read),
    Reader("vllm", (), "json", vllm.detect, vllm.read),
    Reader("prometheus-query", ("promql",), "json", prometheus.detect_query, prometheus.read_query),
    Reader("prometheus", ("metrics", "openmetrics"), "text", prometheus.detect_text, prometheus.read_text),
    Reader("mlperf", (), "text", mlperf.detect_text, mlperf.read_text),
    Reader("genai-perf-csv", ("aiperf-csv",), "text", genai_perf.detect_csv, genai_perf.read_csv),
)
_BY_NAME = {r.name: r for r in READERS}

#: names accepted by ``--bench-format`` (aliases included) -> the reader's name
FORMATS: dict[str, str] = {alias: r.name for r in READERS for alias in (r.name, *r.aliases)}


def detect_json(value: Any) -> str | None:
    """The format of one parsed JSON value, or None."""
    return next((r.name for r in READERS if r.kind == "json" and r.detect(value)), None)


def detect_text(text: str) -> str | None:
    return next((r.name for r in READERS if r.kind == "text" and r.detect(text)), None)


def _refusal_for_json(value: Any) -> str:
    if vllm.is_pytorch_sidecar(value):
        return (
            "a vLLM '.pytorch.json' sidecar (PyTorch benchmark records with only "
            "median/mean/p99): read the main --save-result JSON instead"
        )
    if inference_perf.detect_config(value):
        return "an inference-perf config.yaml: it holds run conditions, not measurements"
    if isinstance(value, dict) and "load_summary" in value:
        return "an inference-perf report without 'successes' data"
    if isinstance(value, list) and not value:
        return "an empty JSON list: no measurements"
    if isinstance(value, dict) and not value:
        return "an empty JSON object: no measurements"
    kind = type(value).__name__
    return f"no supported benchmark format recognised in this JSON ({kind})"


def read_text(text: str, path: Path, ctx: Ctx, fmt: str | None) -> list[Measurement]:
    """Detect (or force) the format of ``text`` and read it."""
    if not text.strip():
        ctx.problem("file is empty", EMPTY)
        return []
    forced = None
    if fmt is not None:
        forced = FORMATS.get(fmt.strip().lower())
        if forced is None:
            ctx.problem(
                f"unknown benchmark format {fmt!r}; known: {', '.join(sorted(set(FORMATS.values())))}",
                UNKNOWN_FORMAT,
            )
            return []
    if forced is not None and _BY_NAME[forced].kind == "text":
        return _BY_NAME[forced].read(ctx, text, path)
    stripped = text.lstrip("\ufeff \t\r\n")
    if forced is None and not stripped.startswith(("{", "[")):
        kind = detect_text(text)
        if kind is not None:
            return _BY_NAME[kind].read(ctx, text, path)
        return _refuse_text(ctx, text)
    docs = parse_json_stream(text, ctx)
    if not docs:
        if not ctx.problems:
            ctx.problem("no JSON value in the file", EMPTY)
        return []
    kind = forced
    if kind is None:
        for doc in docs:
            kind = detect_json(doc.value)
            if kind is not None:
                break
    if kind is None:
        ctx.problem(f"refused: {_refusal_for_json(docs[0].value)}", UNKNOWN_FORMAT, docs[0].line)
        return []
    out = _BY_NAME[kind].read(ctx, docs, path)
    finish_nan(ctx)
    return out


def _refuse_text(ctx: Ctx, text: str) -> list[Measurement]:
    try:
        import yaml

        value = yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - any YAML failure just means "not YAML"
        value = None
    if inference_perf.detect_config(value):
        ctx.problem(
            "refused: an inference-perf config.yaml holds run conditions, not measurements; "
            "it is read as the sidecar of the lifecycle reports in the same directory",
            NOT_MEASUREMENT,
        )
        return []
    ctx.problem(
        "refused: not JSON and not a known text format (MLPerf LoadGen summary, GenAI-Perf CSV)",
        UNKNOWN_FORMAT,
        1,
    )
    return []
