"""benchmarks/gpu_decode_probe.py: its code path on the CPU with a tiny shape.

torch and transformers are an optional extra (``probe``), never a runtime
dependency. The run uses, in order: the interpreter of ``.venvs/probe``
(set up by .ci/run), or this interpreter when it has torch and transformers;
otherwise the test is skipped and says why.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from tool_skips import tool_missing

from budgetlint.bench import read_benchmark

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "benchmarks" / "gpu_decode_probe.py"
PROBE_VENV_PYTHON = REPO / ".venvs" / "probe" / "bin" / "python"

TINY = ["--layers", "2", "--hidden-size", "64", "--heads", "4", "--kv-heads", "2",
        "--intermediate-size", "128", "--vocab-size", "256", "--batch", "1,2", "--context", "16,32",
        "--steps", "4", "--repeats", "2", "--precision", "fp32", "--device", "cpu"]


def _load_probe_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gpu_decode_probe", PROBE)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _probe_python() -> str:
    if PROBE_VENV_PYTHON.is_file():
        return str(PROBE_VENV_PYTHON)
    if importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        return sys.executable
    tool_missing(f"torch/transformers are not importable here and {PROBE_VENV_PYTHON} is absent "
                 "(optional extra 'probe'; .ci/run sets up .venvs/probe)")


def test_catalog_shape_adds_up() -> None:
    """The MLP width derived from the catalog's parameter count is the published one."""
    probe = _load_probe_module()
    assert probe.derive_intermediate(probe.catalog_model("llama-3.1-8b")) == 14336
    assert probe.derive_intermediate(probe.catalog_model("meta-llama/Llama-3.1-70B")) == 28672


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = _probe_python()
    out = tmp_path_factory.mktemp("probe") / "probe.json"
    proc = subprocess.run([python, str(PROBE), *TINY, "-o", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return out


def test_tiny_probe_writes_valid_native_measurements(probe_file: Path) -> None:
    measurements, problems = read_benchmark(probe_file)
    assert problems == []
    assert [m.label for m in measurements] == [
        "batch 1, context 16", "batch 1, context 32", "batch 2, context 16", "batch 2, context 32"]
    for m, (batch, context) in zip(measurements, [(1, 16), (1, 32), (2, 16), (2, 32)]):
        c = m.conditions
        assert m.format == "gpu-decode-probe"
        assert (c.concurrency, c.prompt_tokens, c.output_tokens, c.devices) == (batch, context, 5, 1)
        assert c.measured_at == "server" and c.hardware.startswith("cpu")
        assert c.model.startswith("llama-3.1-8b[layers=2,hidden_size=64")
        assert c.extra["precision"] == "fp32" and c.extra["batch"] == batch
        assert c.extra["layers"] == 2 and c.extra["head_dim"] == 16 and c.extra["full_catalog_shape"] is False
        assert c.extra["weights"] == "random (no download)"
        assert set(m.metrics) == {"ttft", "tpot", "itl", "e2e"}
        assert m.metrics["tpot"].definition == "excludes_first_token"
        assert m.metrics["tpot"].count == 2 and m.metrics["itl"].count == 8
        ttft, tpot, e2e = (m.metrics[k].mean for k in ("ttft", "tpot", "e2e"))
        assert ttft > 0 and tpot > 0
        assert e2e == pytest.approx(ttft + 4 * tpot, rel=1e-9)  # N - 1 = 4 steps of TPOT after the first
        assert m.output_throughput == pytest.approx(batch / tpot)
