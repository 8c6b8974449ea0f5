"""budgetlint.run.ingest: native document + BL406 findings, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from budgetlint.bench import from_native
from budgetlint.run.ingest import exit_code, ingest

from .helpers import chdir, metric, native

VLLM = {
    "date": "20250101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "num_prompts": 10, "request_rate": "inf", "max_concurrency": 4, "completed": 10,
    "total_input_tokens": 1000, "total_output_tokens": 500, "duration": 5.0,
    "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "p99_ttft_ms": 200.0,
    "mean_tpot_ms": 20.0, "median_tpot_ms": 19.0, "p99_tpot_ms": 30.0,
    "mean_itl_ms": 20.0, "median_itl_ms": 19.0, "p99_itl_ms": 31.0,
    "mean_e2el_ms": 1100.0, "median_e2el_ms": 1050.0, "p99_e2el_ms": 1600.0,
}


def test_ingest_native_and_vllm(tmp_path: Path) -> None:
    native(tmp_path / "a.json", metrics={"ttft": metric("first_token", p95=300)})
    (tmp_path / "b.json").write_text(json.dumps(VLLM))
    with chdir(tmp_path):
        doc, findings = ingest(["a.json", "b.json"])
    assert findings == []
    assert exit_code(doc, findings) == 0
    ms = from_native(doc)  # valid against the schema
    assert [m.format for m in ms] == ["native", "vllm"]
    assert ms[0].metrics["ttft"].get("p95") == pytest.approx(0.3)
    assert ms[1].metrics["ttft"].get("p50") == pytest.approx(0.090)
    assert ms[1].metrics["tpot"].definition == "excludes_first_token"
    assert doc["measurements"][1]["conditions"]["concurrency"]["value"] == 4.0


def test_ingest_some_refused(tmp_path: Path) -> None:
    native(tmp_path / "a.json", metrics={"ttft": metric("first_token", p95=300)})
    (tmp_path / "bad.json").write_text('{"kind": "budgetlint-benchmark", "version": 1, "measurements": [')
    with chdir(tmp_path):
        doc, findings = ingest(["a.json", "bad.json"])
    assert len(doc["measurements"]) == 1
    assert [f.rule for f in findings] == ["BL406"]
    assert findings[0].location.file == "bad.json" and "bench-truncated" in findings[0].message
    assert exit_code(doc, findings) == 1


def test_ingest_none_readable(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("")
    with chdir(tmp_path):
        doc, findings = ingest(["empty.json", "missing.json"])
    assert doc["measurements"] == []
    assert sorted(f.message.rsplit("[", 1)[1] for f in findings) == ["bench-empty]", "bench-io]"]
    assert exit_code(doc, findings) == 2


def test_ingest_forced_format(tmp_path: Path) -> None:
    native(tmp_path / "a.json", metrics={"ttft": metric("first_token", p95=300)})
    with chdir(tmp_path):
        doc, findings = ingest(["a.json"], fmt="mlperf")
    assert doc["measurements"] == [] and findings
    assert exit_code(doc, findings) == 2
