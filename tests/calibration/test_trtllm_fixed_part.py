"""The fixed part of a TensorRT-LLM iteration without CUDA graphs (physics/default_efficiency.py
TRTLLM_EAGER_ITERATION_80_LAYERS_S): the median intercept of ``t = a + b T`` over the MLPerf v5.1
Server/Interactive pairs held out of the validation set (benchmarks/validation/heldout/, README.md
there names each file's source and engine config). Recomputed here from the LoadGen summaries with
a separate small implementation of the rule (benchmarks/validation/trtllm_fixed_part.py's
docstring), and one pair worked by hand."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from budgetlint.physics.default_efficiency import (ITERATION_OVERHEAD_S, TRTLLM_EAGER_ITERATION_80_LAYERS_S,
                                                   TRTLLM_EAGER_PER_LAYER_S)

VALIDATION = Path(__file__).resolve().parents[2] / "benchmarks" / "validation"
HELD_OUT = VALIDATION / "heldout"
PROMPT = 5_463_976 / 24_576  # the official llama2-70b dataset's mean prompt (build.py)


def _field(text: str, name: str) -> float:
    return float(re.search(re.escape(name) + r"\s*:\s*([0-9.]+)", text).group(1))


def _iteration(path: Path, devices: int) -> tuple[float, float]:
    text = path.read_text()
    assert "Result is : VALID" in text
    step = _field(text, "50.00 percentile time to output token (ns)") / 1e9
    per_replica = _field(text, "Scheduled samples per second") / devices
    reply = _field(text, "Completed tokens per second") / _field(text, "Completed samples per second")
    return per_replica * (reply + PROMPT) * step, step


def _intercepts() -> dict[str, float]:
    out = {}
    for server in sorted(HELD_OUT.glob("*_Server_mlperf_log_summary.txt")):
        system = server.name[len("v5.1_"):-len("_llama2-70b-99_Server_mlperf_log_summary.txt")]
        devices = int(re.search(r"x(\d+)_TRT$", system).group(1))
        (t1, s1) = _iteration(server, devices)
        (t2, s2) = _iteration(server.with_name(server.name.replace("_Server_", "_Interactive_")), devices)
        out[system] = s2 - (s1 - s2) / (t1 - t2) * t2
    return out


def test_the_hpe_pair_by_hand() -> None:
    """HPE Cray XD670, 8 x H200 SXM (TP 1: 8 replicas). Server: 114.23 / 8 = 14.279 request/s a
    replica, reply 33,164.39 / 113.29 = 292.74 tokens, p50 TPOT 174.327 ms: 14.279 x (292.74 + 222.33)
    x 0.174327 = 1,282.1 tokens an iteration. Interactive: 70.17 / 8 = 8.771, reply 20,432.07 / 69.79 =
    292.76, 35.197 ms: 8.771 x 515.09 x 0.035197 = 159.0 tokens. b = (174.327 - 35.197) / (1,282.1 -
    159.0) = 0.12388 ms a token; a = 35.197 - 0.12388 x 159.0 = 15.50 ms."""
    a = _intercepts()["HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT"]
    assert a == pytest.approx(15.50e-3, abs=0.01e-3)


def test_the_default_is_the_median_of_nine_held_out_systems() -> None:
    a = _intercepts()
    assert len(a) == 9
    # none of them is a validation-set system (benchmarks/validation/measured/)
    validation = {p.name.split("_llama2")[0] for p in (VALIDATION / "measured").glob("*.txt")}
    assert not validation & {f"v5.1_{s}" for s in a}
    assert statistics.median(a.values()) == pytest.approx(TRTLLM_EAGER_ITERATION_80_LAYERS_S, abs=0.005e-3)
    # every system within 13.4-19.4 ms: H200 and B200 alike (a host cost, not the device's)
    assert 13.3e-3 < min(a.values()) and max(a.values()) < 19.5e-3


def test_per_layer_beside_the_default_fixed_part() -> None:
    # (15.50 - 2.1 ms) / 80 layers = 0.1675 ms
    assert TRTLLM_EAGER_PER_LAYER_S == pytest.approx(0.1675e-3, rel=1e-9)
    assert ITERATION_OVERHEAD_S + 80 * TRTLLM_EAGER_PER_LAYER_S == pytest.approx(15.50e-3, rel=1e-12)
