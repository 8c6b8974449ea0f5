"""`calibrate --budget NAME`: the deployment comes from the budget; a flag that says otherwise is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from budgetlint.run.calibrate import CalibrateError, from_budget

BUDGET = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@x"
    workload: {prompt_tokens: 1000, output_tokens: 200}
    promise: {ttft: 1 s}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, devices: 2, replicas: 3, weight_precision: fp8,
                 kv_precision: fp8, engine: vllm}
"""


def _dir(tmp_path: Path) -> Path:
    (tmp_path / "budgets.yaml").write_text(BUDGET)
    return tmp_path


def test_the_deployment_is_the_budgets(tmp_path: Path) -> None:
    got = from_budget("chat", str(_dir(tmp_path)), {})
    assert got == {"model": "llama-3.1-8b", "hardware": "h100-sxm", "devices": 2, "replicas": 3,
                   "weight_precision": "fp8", "kv_precision": "fp8", "engine": "vllm"}
    # a flag that agrees is fine
    assert from_budget("chat", str(tmp_path), {"devices": 2, "weight_precision": "FP8"})["devices"] == 2


@pytest.mark.parametrize("given, said", [({"devices": 4}, "--devices 4 but the budget says 2"),
                                         ({"weight_precision": "bf16"}, "--weight-precision bf16 but the budget says fp8"),
                                         ({"hardware": "a100-sxm-80gb"}, "--hardware a100-sxm-80gb but the budget says h100-sxm")])
def test_a_mismatch_is_refused(tmp_path: Path, given: dict, said: str) -> None:
    with pytest.raises(CalibrateError, match=said):
        from_budget("chat", str(_dir(tmp_path)), given)


def test_an_unknown_budget_lists_the_known(tmp_path: Path) -> None:
    with pytest.raises(CalibrateError, match=r"no budget of that name.*chat"):
        from_budget("nope", str(_dir(tmp_path)), {})


def test_the_command_refuses_a_mismatch_with_exit_2(tmp_path: Path) -> None:
    bench = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "bench" / "vllm" / \
        "vllm-0.25.1_cpu_opt125m_save-result_prettyprinted.json"
    target = str(bench) if bench.exists() else str(tmp_path / "budgets.yaml")
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "calibrate", target, "--budget", "chat",
                           "--budgets", str(_dir(tmp_path)), "--devices", "4", "--no-loo"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "--devices 4 but the budget says 2" in proc.stderr
    assert "Traceback" not in proc.stderr
