"""BL403's words: what could make a measurement faster than the pure roofline.

The evaluation (evaluate/evidence/bound.py) finds the facts (how many times beyond the bound,
which lower-precision weights would allow the measured value, whether speculative decoding is
declared); rules/_messages.faster_words says them. Expected numbers are worked here by hand
for Llama-3.1-8B in bf16 on one H100 SXM (3.35 TB/s), 100-token prompts and replies:
the weights read per decode step are (8.03e9 - 128,256 x 4,096) parameters (the input
embedding is gathered, not read) = 7.505e9 parameters, x 2 B = 4.48 ms (223 token/s) in bf16,
x 1 B = 2.24 ms (446 token/s) in fp8, x 0.5 B = 1.12 ms (893 token/s) in int4; the KV cache
read at a ~150-token context adds well under 1 %.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .helpers import budget_yaml, by_rule, check, metric, native, write_budgets

H100_8B = "model: llama-3.1-8b, hardware: h100-sxm, devices: 1, weight_precision: bf16, kv_precision: bf16"
WEIGHTS_READ = 8.03e9 - 128256 * 4096  # parameters read per decode step
BW = 3.35e12


def _tpot_case(tmp_path: Path, tpot_ms: float) -> str:
    write_budgets(tmp_path, budget_yaml(promise="pace: 20 token/s", deployment=H100_8B, concurrency=1,
                                        prompt=100, output=100, bench=["r.json"]))
    native(tmp_path / "r.json", metrics={"tpot": metric("budgetlint", p50=tpot_ms, p95=tpot_ms)},
           conditions={"concurrency": 1.0, "prompt_tokens": 100.0, "output_tokens": 100.0})
    [f] = by_rule(check(tmp_path))["BL403"]
    return f.message


def _bound_in(message: str, precision: str) -> float:
    found = re.search(rf"{precision} weights \(bound ([\d.,]+) token/s\)", message)
    assert found, message
    return float(found.group(1).replace(",", ""))


def test_a_pace_only_fp8_weights_allow_names_fp8_and_its_bound(tmp_path: Path) -> None:
    # 3 ms: faster than bf16's 4.48 ms, slower than fp8's 2.24 ms
    message = _tpot_case(tmp_path, 3.0)
    assert ("the run's configuration is not the budget's: fp8 weights (bound " in message
            and " or speculative decoding the budget does not declare (deployment.speculative); or the TPOT "
                "definition or units are wrong: not a fast machine" in message), message
    assert _bound_in(message, "fp8") == pytest.approx(BW / (WEIGHTS_READ * 1), rel=0.01)  # 446 token/s


def test_a_pace_beyond_fp8_names_int4(tmp_path: Path) -> None:
    # 1.5 ms: faster than fp8's 2.24 ms, slower than int4's 1.12 ms
    message = _tpot_case(tmp_path, 1.5)
    assert "int4 weights (bound " in message and "fp8 weights" not in message, message
    assert _bound_in(message, "int4") == pytest.approx(BW / (WEIGHTS_READ * 0.5), rel=0.01)  # 893 token/s


def test_a_pace_beyond_every_precision_names_speculative_decoding_only(tmp_path: Path) -> None:
    message = _tpot_case(tmp_path, 0.5)  # 9x the bf16 bound: under the unit-error ratio, beyond int4
    assert ("the run's configuration is not the budget's: speculative decoding the budget does not declare "
            "(deployment.speculative); or the TPOT definition or units are wrong" in message), message


def test_fifty_times_the_bound_is_a_unit_error(tmp_path: Path) -> None:
    message = _tpot_case(tmp_path, 0.05)  # 4.48 ms / 0.05 ms = 90x
    found = re.search(r"([\d.]+)x faster than physics allows: wrong units \(a time in seconds read as "
                      r"milliseconds\?\) or a wrong key, not a fast machine", message)
    assert found, message
    assert float(found.group(1)) == pytest.approx(WEIGHTS_READ * 2 / BW / 0.05e-3, abs=1.5)


def _throughput_case(tmp_path: Path, token_per_s: float) -> str:
    write_budgets(tmp_path, budget_yaml(promise="pace: 20 token/s", deployment=H100_8B, concurrency=4,
                                        prompt=100, output=100, bench=["r.json"]))
    path = native(tmp_path / "r.json", metrics={"tpot": metric("budgetlint", p50=40.0, p95=40.0)},
                  conditions={"concurrency": 4.0, "prompt_tokens": 100.0, "output_tokens": 100.0})
    doc = json.loads(path.read_text())
    doc["measurements"][0]["output_throughput_token_per_s"] = token_per_s
    path.write_text(json.dumps(doc))
    found = [f for f in by_rule(check(tmp_path)).get("BL403", []) if f.promise == "throughput"]
    assert len(found) == 1, by_rule(check(tmp_path))
    return found[0].message


def test_throughput_far_beyond_the_bound_is_a_unit_error(tmp_path: Path) -> None:
    # the cap: 4 sequences x ~223 token/s = ~890 token/s; 100,000 is ~112x that
    message = _throughput_case(tmp_path, 100_000.0)
    found = re.search(r"(\d+)x more than physics allows: wrong units or a wrong key, not a fast machine", message)
    assert found, message
    assert 100_000 / (4 * BW / (WEIGHTS_READ * 2)) * 0.98 <= int(found.group(1)) <= 100_000 / (4 * BW / (WEIGHTS_READ * 2)) * 1.02


def test_throughput_a_little_beyond_the_bound_names_the_configurations(tmp_path: Path) -> None:
    message = _throughput_case(tmp_path, 1_500.0)  # 1.7x the ~890 token/s cap
    assert ("more devices, a smaller model, lower-precision weights or speculative decoding than the budget "
            "declares, or a concurrency higher than the file states: not a fast machine" in message), message


def test_a_ttft_faster_than_prefill_with_the_budget_s_prompt_length(tmp_path: Path) -> None:
    # the file gives no prompt length: the budget's 8000 tokens are assumed, so the words say so too
    write_budgets(tmp_path, budget_yaml(promise="ttft: 2 s", deployment=H100_8B, prompt=8000,
                                        concurrency=1, bench=["r.json"]))
    native(tmp_path / "r.json", metrics={"ttft": metric("first_token", p95=40)},
           conditions={"concurrency": 1.0, "output_tokens": 200.0})
    [f] = by_rule(check(tmp_path))["BL403"]
    # prefill >= 8000 x 2 x 8.03e9 FLOP / 989 TFLOP/s = 130 ms; 40 ms needs ~70 % of each prompt cached
    found = re.search(r"about (\d+)% of each prompt cached", f.message)
    assert found and 65 <= int(found.group(1)) <= 75, f.message
    assert ("or the prompts were shorter than the budget's 8000 tokens (the file does not say): not a fast "
            "machine" in f.message), f.message
