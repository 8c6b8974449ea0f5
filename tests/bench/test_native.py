"""The native format: schema validity, round trips, and reading it back."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from budgetlint.bench import Conditions, Measurement, Metric, from_native, read_benchmark, to_native
from budgetlint.bench.measurement import complete_record
from budgetlint.bench.native import schema_path, validation_errors


def sample() -> Measurement:
    return Measurement(
        source="probe.json",
        format="native",
        tool_version="budgetlint-probe 0.1",
        label="batch 8",
        conditions=Conditions(
            model="llama-3.1-8b",
            hardware="h200",
            devices=1,
            concurrency=8.0,
            request_rate=math.inf,
            prompt_tokens=1024.0,
            output_tokens=128.0,
            measured_at="server",
            num_requests=8,
            successful_requests=8,
            provenance={k: "read" for k in (
                "model", "hardware", "devices", "concurrency", "request_rate",
                "prompt_tokens", "output_tokens", "measured_at", "num_requests",
                "successful_requests")},
            sources={"model": "probe"},
            extra={"precision": "bf16", "batch": 8},
        ),
        metrics={
            "ttft": Metric(percentiles={"p50": 0.05, "p99.9": 0.08}, mean=0.055,
                           definition="first_token", method="computed", count=8,
                           source="probe", notes=("timed with cuda events",)),
            "tpot": Metric(percentiles={"p50": 0.006}, mean=None, definition="budgetlint"),
        },
        output_throughput=1300.0,
        request_throughput=None,
        duration=12.5,
        constraints={"ttft_latency": 2.0},
        notes=("synthetic weights",),
    )


def test_schema_is_valid_draft_2020_12() -> None:
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_round_trip_through_json(tmp_path: Path) -> None:
    m = sample()
    doc = to_native(m)
    assert validation_errors(doc) == []
    text = json.dumps(doc, allow_nan=False)  # strict JSON: inf is the string "inf"
    assert '"inf"' in text
    assert from_native(json.loads(text)) == [m]
    path = tmp_path / "evidence.json"
    path.write_text(text, encoding="utf-8")
    ms, problems = read_benchmark(path)
    # reading fills the run record and provenance from the conditions (idempotently)
    full = complete_record(m)
    assert problems == [] and ms == [full]
    assert full.run.requested == 8 and full.run.max_concurrency == 8.0
    assert full.provenance.tool == "native" and full.provenance.gpu == "h200"
    assert complete_record(full) == full
    assert from_native(json.loads(json.dumps(to_native(full), allow_nan=False))) == [full]


def test_run_record_provenance_and_samples_round_trip() -> None:
    from budgetlint.bench.measurement import Provenance, RunRecord

    m = replace(sample(), run=RunRecord(failed=2, ignore_eos=False, request_rate=math.inf,
                                        sources={"failed": "failures"}),
                provenance=Provenance(engine="vllm", engine_version="0.11.0", date="2025-11-05T10:00:00",
                                      sources={"engine_version": "hand"}))
    m = replace(m, metrics={**m.metrics, "e2e": Metric(percentiles={"p50": 2.0}, definition="request_latency",
                                                       method="computed", samples=(1.0, 2.0, 3.0))})
    doc = to_native(m)
    assert validation_errors(doc) == []
    back = from_native(json.loads(json.dumps(doc, allow_nan=False)))[0]
    assert back.run == m.run and back.provenance == m.provenance
    assert back.metrics["e2e"].samples == (1.0, 2.0, 3.0)


def test_invalid_native_is_a_problem(tmp_path: Path) -> None:
    doc = to_native(sample())
    doc["measurements"][0]["metrics"]["ttft"]["unit"] = "ms"
    doc["measurements"][0]["metrics"]["ttft"]["percentiles"]["median"] = 1.0
    with pytest.raises(ValueError, match="not a valid budgetlint benchmark document"):
        from_native(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    ms, problems = read_benchmark(path)
    assert ms == [] and {p.code for p in problems} == {"bench-schema"}
    assert any("unit" in p.message for p in problems)


def test_unknown_conditions_are_absent() -> None:
    m = Measurement(source="x", format="vllm")
    doc = to_native(m)
    assert doc["measurements"][0]["conditions"] == {}
    assert validation_errors(doc) == []
    (back,) = from_native(doc)
    assert back == m and back.conditions.status("model") == "unknown"
