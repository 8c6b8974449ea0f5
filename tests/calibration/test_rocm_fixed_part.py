"""The fixed part of a vLLM iteration on ROCm without graphs (physics/default_efficiency.py
ROCM_VLLM_EAGER_ITERATION_80_LAYERS_S, issue 25 acc41): the median over the Server and Interactive runs of
the five vLLM systems held out of the validation set (benchmarks/validation/heldout_rocm/, README.md there
names each file's source and engine config) of the fixed part ``a`` at which each run's second is spent
in full at its Little's-law batch. Recomputed here with a separate small implementation of the rule
(benchmarks/validation/rocm_fixed_part.py's docstring) at the stored compute defaults, and one run worked
by hand."""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

import pytest

from budgetlint.physics.default_efficiency import (ITERATION_OVERHEAD_S, ROCM_VLLM_EAGER_ITERATION_80_LAYERS_S,
                                                   ROCM_VLLM_EAGER_PER_LAYER_S, compute_default)

VALIDATION = Path(__file__).resolve().parents[2] / "benchmarks" / "validation"
HELD_OUT = VALIDATION / "heldout_rocm"
PROMPT = 5_463_976 / 24_576
WEIGHTS = 68.98e9  # Llama-2-70B, fp8: a byte a parameter
KV = 80 * 2 * 8 * 128  # bytes a token of fp8 cache
CV2 = 0.6567  # lognormal replies with a p95 2.5 x the mean (docs/calibration.md)
PEAK = 2614.9e12  # MI300X and MI325X fp8 (catalog)
BANDWIDTH = {"mi300x": 5.3e12 * 0.860, "mi325x": 6.0e12 * 0.860}  # catalog x the dense one-device fraction
#: system -> chip; each system's Server config: vLLM V0, 9 scheduler steps, no chunked prefill; its
#: Interactive config: Dell's (AMD's interactive_mi300x.yaml) V0, 8 steps, no chunked prefill, the MI325X
#: ones VLLM_USE_V1 with chunked prefill (heldout_rocm/README.md)
SYSTEMS = {"Dell_XE9680_MI300X_192GBx8": "mi300x", "GigaComputing_8xMI325X_2xEPYC_9575F": "mi325x",
           "MiTAC_8xMI325X_2xEPYC_9755": "mi325x", "Quanta_Cloud_Technology_D75T-7U_8xMI325X": "mi325x",
           "Vultr_8xMI325X_2xEPYC_9554": "mi325x"}


def _field(text: str, name: str) -> float:
    return float(re.search(re.escape(name) + r"\s*:\s*([0-9.]+)", text).group(1))


def _a(path: Path, chip: str, chunked: bool, steps: int) -> float:
    text = path.read_text()
    assert "Result is : VALID" in text
    t = _field(text, "50.00 percentile time to output token (ns)") / 1e9
    lam = _field(text, "Scheduled samples per second") / 8  # TP 1: a replica a device
    reply = _field(text, "Completed tokens per second") / _field(text, "Completed samples per second")
    batch = lam * reply * t
    per_token = 2 * WEIGHTS / (PEAK * compute_default(chip, "fp8").compute)
    weights = WEIGHTS / BANDWIDTH[chip]
    kv = batch * (PROMPT + reply * (1 + CV2) / 2) * KV / BANDWIDTH[chip]
    if chunked:  # the prompts share the iteration's linear layers: t = a + max(W, L (B + U)) + KV
        return t - max(weights, per_token * (batch + lam * PROMPT * t)) - kv
    # a second in full: decode iterations, the prompts' compute, one prompts-only iteration a block that saw an arrival
    prompts_only = (1 - math.exp(-lam * steps * t)) / (steps * t)
    return (1 - (max(weights, per_token * batch) + kv) / t - lam * PROMPT * per_token) / (1 / t + prompts_only)


def _all() -> dict[str, float]:
    out = {}
    for system, chip in SYSTEMS.items():
        stem = HELD_OUT / f"v5.1_{system}_llama2-70b-99"
        out[f"{system} Server"] = _a(Path(f"{stem}_Server_mlperf_log_summary.txt"), chip, False, 9)
        v1 = chip == "mi325x"
        out[f"{system} Interactive"] = _a(Path(f"{stem}_Interactive_mlperf_log_summary.txt"), chip, v1, 1 if v1 else 8)
    return out


def test_dell_mi300x_interactive_by_hand() -> None:
    """Dell XE9680, 8 x MI300X, Interactive: 28.42 / 8 = 3.5525 request/s a replica, reply 8,455.14 / 28.13 =
    300.574 tokens, p50 TPOT 32.148576 ms: 31.1056 decode iterations a second of B = 3.5525 x 300.574 x
    0.032149 = 34.33 decodes. The weights read 68.98 GB / (5.3 TB/s x 0.860) = 15.134 ms outlasts their
    linear layers (34.33 x 149.46 us = 5.13 ms at 0.353 of 2,614.9 TFLOP/s); KV 34.33 x 471.31 tokens x
    163,840 B / 4.558 TB/s = 0.582 ms; the prompts' compute 3.5525 x 222.33 x 149.46 us = 0.1181 s a second;
    blocks of 8 x 32.149 = 257.19 ms, 1 - exp(-3.5525 x 0.25719) = 0.5989 of them admit prompts: 2.3288
    prompts-only iterations a second. a = (1 - 31.1056 x 15.716 ms - 0.1181) / (31.1056 + 2.3288) =
    0.3931 / 33.434 = 11.76 ms."""
    a = _all()["Dell_XE9680_MI300X_192GBx8 Interactive"]
    assert a == pytest.approx(11.76e-3, abs=0.01e-3)


def test_the_default_is_the_median_of_ten_held_out_runs() -> None:
    a = _all()
    assert len(a) == 10
    # none is a validation-set system (benchmarks/validation/measured/, and ASUSTeK's MI325X in ../shared)
    validation = {p.name.split("_llama2")[0] for p in (VALIDATION / "measured").glob("*.txt")}
    assert not validation & {f"v5.1_{s.split()[0]}" for s in a}
    # at the stored (rounded) compute defaults the median is within 0.05 ms of the fixed point's 16.62 ms
    assert statistics.median(a.values()) == pytest.approx(ROCM_VLLM_EAGER_ITERATION_80_LAYERS_S, abs=0.05e-3)
    # every run within 11.7-18.2 ms, MI300X and MI325X alike; the V0 Interactive run (8-step blocks) lowest
    assert 11.7e-3 < min(a.values()) and max(a.values()) < 18.2e-3
    assert min(a, key=a.get) == "Dell_XE9680_MI300X_192GBx8 Interactive"


def test_per_layer_beside_the_default_fixed_part() -> None:
    # (16.62 - 2.1 ms) / 80 layers = 0.1815 ms
    assert ROCM_VLLM_EAGER_PER_LAYER_S == pytest.approx(0.1815e-3, rel=1e-9)
    assert ITERATION_OVERHEAD_S + 80 * ROCM_VLLM_EAGER_PER_LAYER_S == pytest.approx(16.62e-3, rel=1e-12)
