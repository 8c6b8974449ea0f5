"""The fixed part of an iteration (issue 25) as a user declares it: ``deployment.iteration_overhead``
and ``collective_latency`` replace the defaults (2.1 ms an iteration, 12 us a layer under tensor
parallelism, physics/default_efficiency.py), ``0 ms`` removes them, and the assumed-efficiency words
name only the default part that was charged. Expected values by hand from the catalog's datasheet
figures (H100 SXM: 3.35 TB/s) and the dense class fractions of docs/calibration.md."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from budgetlint.reporters import get_reporter
from budgetlint.run.check import Options, run_check

# Llama-3.1-8B bf16, prompt 0 and one output token: a step reads (8.03e9 - 128,256 x 4,096) x 2 B
# = 15.01 GB of weights and no KV cache
STEP_BYTES = (8.03e9 - 128_256 * 4_096) * 2
BW = 3.35e12


def _budget(tmp_path: Path, extra: str, devices: int = 1) -> dict:
    (tmp_path / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets:\n" + textwrap.indent(textwrap.dedent(f"""\
        - name: b
          owner: "@a/b"
          workload: {{prompt_tokens: 0, output_tokens: 1}}
          promise: {{tpot: 1 s, e2e: 10 s}}
          deployment: {{model: llama-3.1-8b, hardware: h100-sxm, weight_precision: bf16, devices: {devices}{extra}}}
        """), "  "))
    report = run_check([str(tmp_path / "b.yaml")], Options(use_codeowners=False))
    doc = json.loads(get_reporter("json")(report))
    (b,) = doc["budgets"]
    # the assumed-efficiency sentence (AssumedEfficiency.words) as the E2E finding words it
    met = [f for f in doc["findings"] if f["rule"] == "BL304" and f.get("promise") == "e2e"]
    return {"tpot": b["analysis"]["realistic_tpot_s"], "words": met[0]["message"] if met else ""}


def test_the_default_fixed_part_on_one_device(tmp_path: Path) -> None:
    got = _budget(tmp_path, "")
    assert got["tpot"] == pytest.approx(STEP_BYTES / (0.860 * BW) + 2.1e-3, rel=1e-3)  # 5.21 + 2.1 = 7.31 ms
    assert "86% of bandwidth plus 2.1 ms an iteration" in got["words"]


def test_a_declared_iteration_overhead_replaces_the_default(tmp_path: Path) -> None:
    five = _budget(tmp_path, ", iteration_overhead: 5 ms")
    assert five["tpot"] == pytest.approx(STEP_BYTES / (0.860 * BW) + 5e-3, rel=1e-3)  # 10.21 ms
    none = _budget(tmp_path, ", iteration_overhead: 0 ms")
    assert none["tpot"] == pytest.approx(STEP_BYTES / (0.860 * BW), rel=1e-3)  # 5.21 ms
    for got in (five, none):  # the deployment's own figure: not worded as the default
        assert "plus 2.1 ms" not in got["words"]


def test_tensor_parallel_charges_the_layers_latency_unless_declared(tmp_path: Path) -> None:
    # 4 devices: each reads a quarter of the weights at the tensor-parallel 63.4 %, plus 2.1 ms
    # and 32 layers x 12 us = 0.384 ms of all-reduce latency
    quarter = STEP_BYTES / 4 / (0.634 * BW)
    got = _budget(tmp_path, "", devices=4)
    assert got["tpot"] == pytest.approx(quarter + 2.1e-3 + 32 * 12e-6, rel=1e-3)
    assert "plus 2.1 ms an iteration and 12 µs a layer" in got["words"]
    declared = _budget(tmp_path, ", collective_latency: 0 ms", devices=4)
    assert declared["tpot"] == pytest.approx(quarter + 2.1e-3, rel=1e-3)
    assert "12 µs a layer" not in declared["words"] and "plus 2.1 ms an iteration" in declared["words"]


@pytest.mark.parametrize("value", ["nan ms", "inf ms", "-1 ms"])
def test_a_fixed_part_that_is_not_a_time_is_refused(tmp_path: Path, value: str) -> None:
    (tmp_path / "b.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        kind: budgets
        budgets:
          - name: b
            owner: "@a/b"
            workload: {{prompt_tokens: 0, output_tokens: 1}}
            promise: {{tpot: 1 s}}
            deployment: {{model: llama-3.1-8b, hardware: h100-sxm, iteration_overhead: {value}}}
        """))
    report = run_check([str(tmp_path / "b.yaml")], Options(use_codeowners=False))
    doc = json.loads(get_reporter("json")(report))
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert errors and all(f["line"] == 8 for f in errors), errors
