"""budgetlint's native benchmark format (``schemas/benchmark.schema.json``).

A JSON document ``{"kind": "budgetlint-benchmark", "version": 1,
"measurements": [...]}``; every other reader normalises into this shape.
Times are seconds (``"unit": "s"`` on each metric, ``_s`` suffixes elsewhere),
throughput tokens/s. An unbounded request rate is the string ``"inf"``.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Union

from budgetlint.files import fs
from .json_values import Doc
from .problems import NOT_MEASUREMENT, SCHEMA, Ctx
from .measurement import (
    CONDITION_FIELDS,
    PROVENANCE_FIELDS,
    RUN_FIELDS,
    Conditions,
    Measurement,
    Metric,
    Provenance,
    RunRecord,
    label_percent,
)

NAME = "native"
KIND = "budgetlint-benchmark"
VERSION = 1


def detect(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == KIND


def schema_path() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (
        here.parent.parent / "schemas" / "benchmark.schema.json",  # source checkout
        here.parent / "_schemas" / "benchmark.schema.json",  # installed wheel
    ):
        if fs.is_file(candidate):
            return candidate
    raise FileNotFoundError("benchmark.schema.json not found beside budgetlint")


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # deferred: keeps `import budgetlint.bench` cheap

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validation_errors(doc: Any) -> list[str]:
    """Schema violations of a native document, as ``path: message`` strings."""
    out = []
    for err in sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{where}: {err.message}")
    return out


def _num_out(value: float | None) -> float | str | None:
    if value is None:
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _num_in(value: Any) -> float | None:
    if value is None:
        return None
    if value == "inf":
        return math.inf
    return float(value)


def measurement_to_dict(m: Measurement) -> dict[str, Any]:
    c = m.conditions
    conditions: dict[str, Any] = {}
    for name in CONDITION_FIELDS:
        value = getattr(c, name)
        if value is None:
            continue
        if isinstance(value, float):
            value = _num_out(value)
        entry = {"value": value, "provenance": c.provenance.get(name, "read")}
        if name in c.sources:
            entry["source"] = c.sources[name]
        conditions[name] = entry
    metrics = {}
    for name, metric in m.metrics.items():
        metrics[name] = {
            "unit": "s",
            "definition": metric.definition,
            "method": metric.method,
            "mean": metric.mean,
            "percentiles": dict(metric.percentiles),
            "count": metric.count,
            "source": metric.source,
            "notes": list(metric.notes),
        }
        if metric.samples:
            metrics[name]["samples"] = list(metric.samples)
    run = {k: _num_out(v) if isinstance(v, float) else v
           for k in RUN_FIELDS if (v := getattr(m.run, k)) is not None}
    if m.run.sources:
        run["sources"] = dict(m.run.sources)
    origin = {k: v for k in PROVENANCE_FIELDS if (v := getattr(m.provenance, k)) is not None}
    if m.provenance.sources:
        origin["sources"] = dict(m.provenance.sources)
    return {
        "source": m.source,
        "format": m.format,
        "tool_version": m.tool_version,
        "label": m.label,
        "conditions": conditions,
        "extra_conditions": dict(c.extra),
        "metrics": metrics,
        "output_throughput_token_per_s": m.output_throughput,
        "request_throughput_per_s": m.request_throughput,
        "duration_s": m.duration,
        "constraints": {k: _num_out(v) if isinstance(v, float) else v for k, v in m.constraints.items()},
        "notes": list(m.notes),
        "run": run,
        "provenance": origin,
    }


def to_native(measurements: Union[Measurement, Iterable[Measurement]]) -> dict[str, Any]:
    """A native document holding one measurement or several."""
    if isinstance(measurements, Measurement):
        measurements = [measurements]
    return {
        "kind": KIND,
        "version": VERSION,
        "measurements": [measurement_to_dict(m) for m in measurements],
    }


def measurement_from_dict(d: Mapping[str, Any]) -> Measurement:
    cond = d.get("conditions") or {}
    values: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    sources: dict[str, str] = {}
    for name in CONDITION_FIELDS:
        entry = cond.get(name)
        if not isinstance(entry, dict) or entry.get("value") is None:
            continue
        value = entry["value"]
        if name in ("concurrency", "request_rate", "prompt_tokens", "output_tokens"):
            value = _num_in(value)
        elif name in ("devices", "num_requests", "successful_requests"):
            value = int(value)
        values[name] = value
        provenance[name] = entry.get("provenance", "read")
        if "source" in entry:
            sources[name] = entry["source"]
    conditions = Conditions(
        **values, provenance=provenance, sources=sources, extra=dict(d.get("extra_conditions") or {})
    )
    metrics = {}
    for name, md in (d.get("metrics") or {}).items():
        pcts = {k: float(v) for k, v in (md.get("percentiles") or {}).items()}
        metrics[name] = Metric(
            percentiles=dict(sorted(pcts.items(), key=lambda kv: label_percent(kv[0]) or 0.0)),
            mean=None if md.get("mean") is None else float(md["mean"]),
            definition=md.get("definition", ""),
            method=md.get("method", "reported"),
            count=md.get("count"),
            source=md.get("source", ""),
            notes=tuple(md.get("notes") or ()),
            samples=tuple(sorted(float(x) for x in md.get("samples") or ())),
        )
    return Measurement(
        source=d.get("source", ""),
        format=d.get("format", NAME),
        tool_version=d.get("tool_version"),
        label=d.get("label"),
        conditions=conditions,
        metrics=metrics,
        output_throughput=d.get("output_throughput_token_per_s"),
        request_throughput=d.get("request_throughput_per_s"),
        duration=d.get("duration_s"),
        constraints={k: _num_in(v) if v in ("inf", "-inf") else v for k, v in (d.get("constraints") or {}).items()},
        notes=tuple(d.get("notes") or ()),
        run=_run_in(d.get("run") or {}),
        provenance=Provenance(**{k: str(v) for k, v in (d.get("provenance") or {}).items()
                                 if k in PROVENANCE_FIELDS},
                              sources=dict((d.get("provenance") or {}).get("sources") or {})),
    )


def _run_in(d: Mapping[str, Any]) -> RunRecord:
    values: dict[str, Any] = {}
    for k in RUN_FIELDS:
        v = d.get(k)
        if v is None:
            continue
        values[k] = _num_in(v) if k == "request_rate" else v
    return RunRecord(**values, sources=dict(d.get("sources") or {}))


def from_native(doc: Mapping[str, Any], *, validate: bool = True) -> list[Measurement]:
    """Measurements from a native document; raises ValueError if it is invalid."""
    if validate:
        errors = validation_errors(doc)
        if errors:
            raise ValueError("not a valid budgetlint benchmark document: " + "; ".join(errors[:5]))
    return [measurement_from_dict(d) for d in doc.get("measurements", [])]


def read(ctx: Ctx, docs: list[Doc], path: Path) -> list[Measurement]:
    out: list[Measurement] = []
    for doc in docs:
        if not detect(doc.value):
            ctx.problem("not a budgetlint benchmark document; skipped", NOT_MEASUREMENT, doc.line)
            continue
        errors = validation_errors(doc.value)
        if errors:
            for e in errors[:10]:
                ctx.problem(f"schema: {e}", SCHEMA, doc.line)
            continue
        out.extend(from_native(doc.value, validate=False))
    return out
