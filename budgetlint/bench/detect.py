"""Format detection from content (never from the file name) and dispatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import genai_perf, guidellm, inference_perf, llmperf, mlperf, native, sglang, vllm
from ._common import EMPTY, NOT_MEASUREMENT, UNKNOWN_FORMAT, Ctx, Doc, finish_nan, parse_json_stream
from .measurement import Measurement

JsonReader = Callable[[Ctx, "list[Doc]", Path], "list[Measurement]"]
TextReader = Callable[[Ctx, str, Path], "list[Measurement]"]

#: names accepted by ``--bench-format`` (aliases included)
FORMATS: dict[str, str] = {
    "native": "native",
    "budgetlint": "native",
    "vllm": "vllm",
    "sglang": "sglang",
    "genai-perf": "genai-perf",
    "genai_perf": "genai-perf",
    "aiperf": "genai-perf",
    "genai-perf-csv": "genai-perf-csv",
    "aiperf-csv": "genai-perf-csv",
    "llmperf": "llmperf",
    "guidellm": "guidellm",
    "inference-perf": "inference-perf",
    "inference_perf": "inference-perf",
    "mlperf": "mlperf",
}

_JSON_READERS: dict[str, JsonReader] = {
    "native": native.read,
    "vllm": vllm.read,
    "sglang": sglang.read,
    "genai-perf": genai_perf.read,
    "llmperf": llmperf.read,
    "guidellm": guidellm.read,
    "inference-perf": inference_perf.read,
}
_TEXT_READERS: dict[str, TextReader] = {
    "mlperf": mlperf.read_text,
    "genai-perf-csv": genai_perf.read_csv,
}


def detect_json(value: Any) -> str | None:
    """The format of one parsed JSON value, or None."""
    if native.detect(value):
        return "native"
    if guidellm.detect(value):
        return "guidellm"
    if llmperf.detect(value) or llmperf.detect_individual(value):
        return "llmperf"
    if inference_perf.detect(value):
        return "inference-perf"
    if genai_perf.detect(value):
        return "genai-perf"
    if sglang.detect(value):
        return "sglang"
    if vllm.detect(value):
        return "vllm"
    return None


def detect_text(text: str) -> str | None:
    if mlperf.detect_text(text):
        return "mlperf"
    if genai_perf.detect_csv(text):
        return "genai-perf-csv"
    return None


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
    if forced in _TEXT_READERS:
        return _TEXT_READERS[forced](ctx, text, path)
    stripped = text.lstrip("\ufeff \t\r\n")
    if forced is None and not stripped.startswith(("{", "[")):
        kind = detect_text(text)
        if kind is not None:
            return _TEXT_READERS[kind](ctx, text, path)
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
    out = _JSON_READERS[kind](ctx, docs, path)
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
