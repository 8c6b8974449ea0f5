"""A budget that declares traffic and names a calibration is simulated on the calibrated cost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main

CASE = Path(__file__).resolve().parents[1] / "cases" / "bl311_calibration_stale"

BUDGET = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    percentile: p50
    workload: {prompt_tokens: 2000, output_tokens: 200, arrival_rate: 0.01 request/s, measured_at: server}
    promise: {ttft: 2 s, tpot: 50 ms}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm%s}
"""


def _budget(tmp_path: Path, calibration: str) -> dict:
    shutil.copy(CASE / "cal.yaml", tmp_path / "cal.yaml")
    (tmp_path / "b.yaml").write_text(BUDGET % calibration)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "b.yaml"), "--no-codeowners", "--no-summary",
                                  "--format", "json"])
    return json.loads(r.output)["budgets"][0]


def _load(tmp_path: Path, calibration: str) -> dict:
    return _budget(tmp_path, calibration)["load"]


def test_the_load_simulation_runs_on_the_calibrated_step_cost(tmp_path: Path) -> None:
    """The case's calibration: 60 % of bandwidth, 3 ms per iteration, 10 ms on every first token.
    At 0.01 request/s each request runs alone (batch 1). TPOT by hand at the mean context
    2,000 + 100 tokens: weights 15.01 GB (8.03e9 x 2 B less the embedding rows not gathered,
    as in test_calibrate_command) + KV 2,100 x 131,072 B = 0.275 GB, over 0.6 x 3.35 TB/s,
    plus 3 ms = 10.60 ms."""
    load = _load(tmp_path, ", calibration: cal.yaml")
    want = (8.03e9 * 2 - (128256 - 16) * 4096 * 2 + 2100 * 131072) / (0.6 * 3.35e12) + 3e-3
    assert load["predicted"]["tpot_s"]["p50"] == pytest.approx(want, rel=0.02)
    assert load["calibrated"].startswith("calibrated from 3 runs of vllm 0.10.0")
    # TTFT: a 2,000-token prefill at 40 % of 989 TFLOP/s (2 x 8.03e9 FLOP a token, 81 ms) plus the
    # 3 ms iteration and the fitted 10 ms first-token overhead; attention only adds
    assert load["predicted"]["ttft_s"]["p50"] >= 2 * 8.03e9 * 2000 / (0.4 * 989e12) + 3e-3 + 0.010


def test_without_the_calibration_the_assumed_efficiency_is_used(tmp_path: Path) -> None:
    """The same hand calculation at the assumed bandwidth fraction the report states, plus the
    2.1 ms per iteration assumed where none is declared (docs/calibration.md, "The fixed part of
    an iteration": the vLLM sweep's fit; one device, so no per-layer all-reduce latency)."""
    budget = _budget(tmp_path, "")
    assumed = budget["analysis"]["efficiency_bandwidth"]
    assert "calibrated" not in budget["load"]
    want = (8.03e9 * 2 - (128256 - 16) * 4096 * 2 + 2100 * 131072) / (assumed * 3.35e12) + 2.1e-3
    assert budget["load"]["predicted"]["tpot_s"]["p50"] == pytest.approx(want, rel=0.02)
