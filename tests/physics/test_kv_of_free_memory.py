"""The KV cache of an engine that sizes it from the memory left free (TensorRT-LLM), against the
default rule (vLLM, SGLang): physics/shapes.py Deployment.kv_of_free_memory, issue 25 (acc25).

TensorRT-LLM: "The default for free_gpu_memory_fraction is 0.9, which means TensorRT LLM will try
to allocate 90% of free GPU memory for KV cache" (nvidia.github.io/TensorRT-LLM/examples/
kvcacheconfig.html); vLLM's gpu_memory_utilization is a fraction of the whole device, the weights
and buffers inside it. Every number below is worked by hand from the figures in the comments."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from budgetlint.physics.memory import max_sequences_that_fit, memory_fit
from budgetlint.physics.shapes import Accelerator, Deployment, ModelShape
from budgetlint.physics.step_cost import kv_capacity_tokens
from cli_runner import child_env

RESERVE = 3 * 2**30  # the realistic defaults' runtime reserve, 3,221,225,472 bytes a device
#: Llama-2-70B (benchmarks/validation/models.yaml): 68.98 B parameters, 80 layers, 8 KV heads of 128:
#: fp8 weights 68.98e9 bytes, fp8 KV 80 x 2 x 8 x 128 x 1 = 163,840 bytes a token
LLAMA2_70B = ModelShape(total_params=68.98e9, layers=80, kv_heads=8, head_dim=128, attention_heads=64,
                        hidden_size=8192)
H200 = Accelerator(bandwidth_bytes_per_s=4.8e12, memory_bytes=141e9)  # the catalog's h200-sxm


def _dep(of_free: bool, fraction: float = 0.9) -> Deployment:
    return Deployment(model=LLAMA2_70B, accelerator=H200, weight_bytes_per_param=1.0, kv_bytes_per_elem=1.0,
                      memory_usable_fraction=fraction, memory_overhead_bytes=RESERVE, kv_of_free_memory=of_free)


def test_an_h200_holds_13_percent_more_cache_under_tensorrt_llms_rule() -> None:
    # TensorRT-LLM: (141e9 - 68.98e9 - 3,221,225,472) x 0.9 = 68,798,774,528 x 0.9 = 61,918,897,075.2 bytes,
    # / 163,840 = 377,922.96: 377,922 tokens
    assert kv_capacity_tokens(_dep(True)) == 377_922
    # vLLM: 141e9 x 0.9 - 68.98e9 - 3,221,225,472 = 54,698,774,528 bytes, / 163,840 = 333,854.83: 333,854
    assert kv_capacity_tokens(_dep(False)) == 333_854
    # the difference is 0.1 x (weights + reserve) = 0.1 x 72,201,225,472 = 7,220,122,547.2 bytes
    assert (kv_capacity_tokens(_dep(True)) - kv_capacity_tokens(_dep(False))) * 163_840 == pytest.approx(
        7_220_122_547.2, abs=2 * 163_840)


def test_the_two_rules_agree_at_all_of_memory() -> None:
    # (141e9 - 68.98e9 - 3,221,225,472) / 163,840 = 68,798,774,528 / 163,840 = 419,914.4: 419,914 either way
    assert kv_capacity_tokens(_dep(True, 1.0)) == kv_capacity_tokens(_dep(False, 1.0)) == 419_914


def test_a_draft_models_weights_are_taken_before_the_fraction() -> None:
    # a 1e9-parameter fp8 draft of one layer, 1 KV head of 128 (256 bytes a token): TensorRT-LLM's free memory
    # (141e9 - 68.98e9 - 1e9 - 3,221,225,472) x 0.9 = 67,798,774,528 x 0.9 = 61,018,897,075.2 bytes over
    # 163,840 + 256 = 164,096 bytes a token: 371,848 x 164,096 = 61,018,769,408, 127,667.2 bytes over:
    # 371,848.78, 371,848 tokens
    draft = ModelShape(total_params=1e9, layers=1, kv_heads=1, head_dim=128, attention_heads=8, hidden_size=1024)
    dep = replace(_dep(True), draft=draft, draft_lookahead=1, spec_accepted_tokens_per_pass=1.5)
    assert kv_capacity_tokens(dep) == 371_848


def test_the_memory_fit_uses_the_same_rule() -> None:
    # 100 sequences of 4,000 tokens: 100 x 4,000 x 163,840 = 65,536,000,000 bytes of cache, one device
    kw = dict(weight_bytes_total=68.98e9, kv_bytes_per_sequence=4_000 * 163_840.0, concurrency=100, devices=1,
              memory_bytes=141e9, usable_fraction=0.9, overhead_bytes=RESERVE)
    trt, vllm = memory_fit(of_free=True, **kw), memory_fit(**kw)
    # vLLM: available 126.9e9 against 68.98e9 + 65.536e9 + 3,221,225,472 = 137,737,225,472: does not fit
    assert vllm.available_bytes_per_device == pytest.approx(126.9e9) and vllm.fits is False
    # TensorRT-LLM: 72,201,225,472 + (141e9 - 72,201,225,472) x 0.9 = 72,201,225,472 + 61,918,897,075.2
    # = 134,120,122,547.2 against the same 137,737,225,472: does not fit either, by less
    assert trt.available_bytes_per_device == pytest.approx(134_120_122_547.2) and trt.fits is False
    # the most that fit: floor(61,918,897,075.2 / 655,360,000) = floor(94.48) = 94 against
    # floor(54,698,774,528 / 655,360,000) = floor(83.46) = 83
    most = dict(weight_bytes_total=68.98e9, kv_bytes_per_sequence=4_000 * 163_840.0, devices=1, memory_bytes=141e9,
                usable_fraction=0.9, overhead_bytes=RESERVE)
    assert max_sequences_that_fit(of_free=True, **most) == 94 and max_sequences_that_fit(**most) == 83


def _budget(tmp_path: Path, engine: str | None, part: str = "load") -> dict:
    shutil.copy(Path(__file__).resolve().parents[2] / "benchmarks" / "validation" / "models.yaml", tmp_path)
    engine_key = f", engine: {engine}" if engine else ""
    (tmp_path / "b.yaml").write_text(f"""version: 1
kind: budgets
budgets:
  - name: b
    owner: "@x"
    workload: {{prompt_tokens: 222, output_tokens: 293, arrival_rate: 1 request/s}}
    promise: {{ttft: 2 s, tpot: 200 ms}}
    deployment: {{model: llama-2-70b, hardware: h200-sxm, weight_precision: fp8, kv_precision: fp8{engine_key}}}
""")
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(tmp_path / "b.yaml"), "--format", "json",
                           "--quiet"], capture_output=True, text=True, cwd=tmp_path, env=child_env())
    return json.loads(proc.stdout)["budgets"][0][part]


def test_a_budget_naming_tensorrt_llm_is_simulated_with_its_engines_cache(tmp_path: Path) -> None:
    """The simulator's cache (load.scheduler.kv_capacity_tokens) is the engine's: the numbers above (a budget
    naming no engine takes the default rule at the default 0.9)."""
    assert _budget(tmp_path, "trtllm")["scheduler"]["kv_capacity_tokens"] == 377_922
    assert _budget(tmp_path, None)["scheduler"]["kv_capacity_tokens"] == 333_854


def test_the_flat_estimates_memory_fit_takes_the_engines_rule(tmp_path: Path) -> None:
    """The same budget's memory fit (analysis): a sequence at its steady context, 222 + 293 / 2 = 368.5
    tokens, holds 368.5 x 163,840 = 60,375,040 bytes; at its last token, 515 tokens, 84,377,600.
    TensorRT-LLM: floor(61,918,897,075.2 / 60,375,040) = floor(1,025.57) = 1,025 sequences, worst case
    floor(61,918,897,075.2 / 84,377,600) = floor(733.83) = 733; vLLM's rule: floor(54,698,774,528 /
    60,375,040) = floor(905.98) = 905 and floor(648.26) = 648. The headroom of one sequence (weights
    68.98e9 + 60,375,040 + 3,221,225,472 = 72,261,600,512 bytes): TensorRT-LLM's available 72,201,225,472
    + 61,918,897,075.2 = 134,120,122,547.2, 134,120,122,547.2 / 72,261,600,512 - 1 = 0.8560; vLLM's
    126.9e9 / 72,261,600,512 - 1 = 0.7561."""
    trt, default = _budget(tmp_path, "trtllm", "analysis"), _budget(tmp_path, None, "analysis")
    assert (trt["realistic_max_concurrency"], trt["realistic_max_concurrency_worst_case"]) == (1025, 733)
    assert (default["realistic_max_concurrency"], default["realistic_max_concurrency_worst_case"]) == (905, 648)
    assert trt["headroom_memory"] == pytest.approx(0.8560, abs=1e-4)
    assert default["headroom_memory"] == pytest.approx(0.7561, abs=1e-4)
    # the bound (all of memory, no reserve) is the same under either rule
    assert trt["bound_max_concurrency"] == default["bound_max_concurrency"]


def test_the_free_memory_rule_on_two_devices_with_a_draft_by_hand() -> None:
    """Tensor-parallel 2 with a 1e9-byte draft model: the weights and the draft split over the two
    devices, the reserve is each device's. Per device: 68.98e9 / 2 + 1e9 / 2 + 3,221,225,472 =
    38,211,225,472 bytes held, (141e9 - 38,211,225,472) x 0.9 = 92,509,897,075.2 bytes for caches,
    available 130,721,122,547.2. A 4,000-token sequence is 655,360,000 bytes, 327,680,000 a device:
    floor(92,509,897,075.2 / 327,680,000) = floor(282.31) = 282 sequences."""
    most = dict(weight_bytes_total=68.98e9, kv_bytes_per_sequence=4_000 * 163_840.0, devices=2, memory_bytes=141e9,
                usable_fraction=0.9, overhead_bytes=RESERVE, fixed_bytes_total=1e9)
    assert max_sequences_that_fit(of_free=True, **most) == 282
    fit = memory_fit(weight_bytes_total=68.98e9, kv_bytes_per_sequence=4_000 * 163_840.0, concurrency=100, devices=2,
                     memory_bytes=141e9, usable_fraction=0.9, overhead_bytes=RESERVE, draft_bytes_total=1e9,
                     of_free=True, draft_weight_bytes_total=1e9)
    assert fit.available_bytes_per_device == pytest.approx(130_721_122_547.2, abs=1e-3)
    # 100 sequences: 34.49e9 + 327.68e8 + 0.5e9 + 3,221,225,472 = 70,979,225,472 bytes required: fits
    assert fit.required_bytes_per_device == pytest.approx(70_979_225_472, abs=1e-3) and fit.fits
    # without a draft: held 34.49e9 + 3,221,225,472 = 37,711,225,472, available
    # 37,711,225,472 + (141e9 - 37,711,225,472) x 0.9 = 37,711,225,472 + 92,959,897,075.2 = 130,671,122,547.2
    bare = memory_fit(weight_bytes_total=68.98e9, kv_bytes_per_sequence=4_000 * 163_840.0, concurrency=100, devices=2,
                      memory_bytes=141e9, usable_fraction=0.9, overhead_bytes=RESERVE, of_free=True)
    assert bare.available_bytes_per_device == pytest.approx(130_671_122_547.2, abs=1e-3)
