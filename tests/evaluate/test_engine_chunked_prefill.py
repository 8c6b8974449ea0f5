"""deployment.engine + engine_version select the release's chunked-prefill default
(budgetlint/deployed/defaults.py, each cited to the engine's source) for the load simulation:
vLLM 0.6.0 (V0) chunks only above 32,768 tokens of context (vllm/engine/arg_utils.py:843-869 at
v0.6.0); from 0.8.0 (V1) it always chunks. Without chunking a prompt runs in an iteration of its
own and the decodes wait for it (physics: tests/physics/test_unchunked_prefill.py, by hand), so
the same traffic on the same scheduler limits streams slower under 0.6.0."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from budgetlint.evaluate.deployed import chunked_prefill_default
from cli_runner import cli_process


def _dep(version: str | None, max_context: int | None) -> SimpleNamespace:
    return SimpleNamespace(engine="vllm", engine_version=version, model=SimpleNamespace(max_context=max_context))


def test_the_release_says_whether_prefills_are_chunked() -> None:
    off, why = chunked_prefill_default(_dep("0.6.0", 32768))  # type: ignore[misc]
    assert off is False and why == ("vLLM 0.6.0 default, vllm/engine/arg_utils.py:843-869 "
                                    "(on only for max_model_len > 32768)")
    on, why = chunked_prefill_default(_dep("0.6.3", 131072))  # type: ignore[misc]
    assert on is True and "max_model_len 131072 > 32768" in why  # V0 turns it on for long context
    assert chunked_prefill_default(_dep("0.11.0", 4096))[0] is True  # type: ignore[index]
    assert chunked_prefill_default(SimpleNamespace(engine="trtllm", engine_version="1.0", model=None)) is None


def _load(tmp_path: Path, version: str) -> dict:
    (tmp_path / "b.yaml").write_text(f"""version: 1
kind: budgets
budgets:
  - name: b
    owner: "@x"
    percentile: p99
    workload:
      prompt_tokens: 1000
      output_tokens: 100
      arrival_rate: 6 request/s
      arrival: poisson
    promise: {{ttft: 2 s, tpot: 100 ms}}
    deployment: {{model: mistral-7b-v0.1, hardware: h100-sxm, weight_precision: bf16, engine: vllm,
                  engine_version: "{version}", max_num_seqs: 256, max_num_batched_tokens: 32768}}
""")
    proc = cli_process("check", str(tmp_path / "b.yaml"), "--format", "json", "--quiet", cwd=tmp_path)
    return json.loads(proc.stdout)["budgets"][0]["load"]


def test_vllm_v0_streams_slower_on_the_same_limits(tmp_path: Path) -> None:
    v0, v1 = _load(tmp_path, "0.6.0"), _load(tmp_path, "0.8.0")
    assert "no chunked prefill (vLLM 0.6.0 default" in v0["scheduler"]["from"]
    assert "chunked prefill" not in v1["scheduler"]["from"]
    assert v0["scheduler"]["max_num_batched_tokens"] == v1["scheduler"]["max_num_batched_tokens"] == 32768
    assert v0["predicted"]["tpot_s"]["p99"] > v1["predicted"]["tpot_s"]["p99"]
