"""A disaggregated deployment's pools reach every output: text, JSON, markdown, HTML (BL351 and,
in markdown, a section) and explain (a section with each pool, the link and the TTFT's parts)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BUDGET = textwrap.dedent("""\
    version: 1
    kind: budgets
    budgets:
      - name: pd
        owner: "@a/b"
        workload: {prompt_tokens: 4096, output_tokens: 200, concurrency: 16}
        promise: {ttft: 1 s}
        deployment:
          model: llama-3.1-70b
          hardware: h100-sxm
          disaggregated:
            prefill: {devices: 4, replicas: 2}
            decode: {hardware: h200-sxm, devices: 4, replicas: 6}
            kv_link: infiniband-ndr
    """)
# 4,096 x 327,680 B (2 x 80 layers x 8 KV heads x 128 x 2 B) = 1.34 GB over 50 GB/s = 26.8 ms
POOLS = ("2 x h100-sxm of 4 devices", "6 x h200-sxm of 4 devices", "26.8 ms")


def _run(tmp_path: Path, *args: str) -> str:
    (tmp_path / "b.yaml").write_text(BUDGET)
    done = subprocess.run([sys.executable, "-m", "budgetlint", *args, str(tmp_path / "b.yaml")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert "Traceback" not in done.stderr
    return done.stdout


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json"])
def test_check_shows_the_pools(tmp_path: Path, fmt: str) -> None:
    out = _run(tmp_path, "check", "--no-codeowners", "--format", fmt)
    if fmt == "json":
        d = json.loads(out)["budgets"][0]["analysis"]["disaggregated"]
        assert (d["prefill"]["name"], d["decode"]["name"]) == POOLS[:2]
        assert d["kv_transfer_s"] == pytest.approx(4096 * 327680 / 50e9, rel=1e-9)
        return
    for words in POOLS:
        assert words in out, (fmt, words)


def test_explain_has_a_pools_section(tmp_path: Path) -> None:
    out = _run(tmp_path, "explain")
    assert "Disaggregated pools" in out
    assert "prefill pool  2 x h100-sxm of 4 devices" in out
    assert "decode pool   6 x h200-sxm of 4 devices" in out
    assert "infiniband-ndr, 50 GB/s" in out and "= 26.8 ms" in out


def test_explain_arithmetic_is_the_pools_not_the_deployment_default(tmp_path: Path) -> None:
    """The deployment's own `devices` is unset (1): the arithmetic is the decode pool's 4 devices and
    the prefill line the prefill pool's: 2 x 70.55e9 x 4,096 + attention = 600 TFLOP over
    4 x 989 TFLOP/s = 152 ms (before: "(1 x 989 TFLOP/s) = 152 ms", N = 1 device). TTFT at the
    bound: 5.99941e14 / 3.956e15 = 0.151654 s + 1,342,177,280 B / 50 GB/s = 0.026844 s = 0.178498 s."""
    out = _run(tmp_path, "explain")
    assert "N = 4 devices per decode replica (4 devices per prefill replica" in out
    assert "600 TFLOP / (4 x 989 TFLOP/s) = 152 ms" in out
    assert "TTFT = prefill 152 ms + KV transfer 26.8 ms = 178 ms" in out
    assert "hardware  h200-sxm (the decode pool)" in out


def test_the_assumed_efficiency_is_the_pools_class(tmp_path: Path) -> None:
    """Both pools have 4 devices: the assumed efficiency is the tensor-parallel class's, not the
    single-device one of the deployment's unset `devices` (BL304 said "dense, 1 device")."""
    out = _run(tmp_path, "check", "--no-codeowners")
    assert "BL304" in out and "1 device" not in out
    assert "tensor-parallel on 4 devices" in out


def test_html_shows_each_pool_under_load(tmp_path: Path) -> None:
    """With a declared rate the pools are simulated: HTML's load section has a row per pool. One
    prefill replica of 4 H100s prefills a 4,096-token prompt in 5.9994e14 FLOP / (4 x 989e12 x 0.319:
    Hopper bf16's default, docs/calibration.md) = 0.4754 s; saturated, two prompts fill an iteration of
    8,192 tokens and share its fixed part (2.1 ms + 80 x 12 us = 3.06 ms): 0.4754 + 0.00153 = 0.4769 s a
    prompt, so at 5 request/s it is 5 x 0.4769 = 238 % utilised (152 % at the class's former 50 %)."""
    (tmp_path / "b.yaml").write_text(textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: pd
            owner: "@a/b"
            percentile: p95
            workload: {prompt_tokens: 4096, output_tokens: 200, arrival_rate: 5 request/s}
            promise: {ttft: 1 s}
            deployment:
              model: llama-3.1-70b
              hardware: h100-sxm
              devices: 4
              disaggregated:
                prefill: {replicas: 1}
                decode: {replicas: 3}
                kv_link: {bandwidth: 50 GB/s, latency: 1 ms}
        """))
    done = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-codeowners", "--format", "html",
                           str(tmp_path / "b.yaml")], capture_output=True, text=True, cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert 'class="bl-pools"' in done.stdout
    assert "<td>prefill pool 1 x h100-sxm of 4 devices</td><td class=\"num\">238%</td>" in done.stdout
    ex = subprocess.run([sys.executable, "-m", "budgetlint", "explain", str(tmp_path / "b.yaml")],
                        capture_output=True, text=True, cwd=tmp_path)
    assert "Traceback" not in ex.stderr
    # one replica completes 1 / (0.4754 s + 3.06 ms / 2) = 2.097 prompts a second (two 4,096-token prompts
    # share an iteration of 8,192 tokens and its fixed part, 2.1 ms + 80 x 12 us: docs/calibration.md):
    # 5 / (1 x 2.097) = 2.38 (at the class's former 50 %: 3.28 and 1.52)
    assert "prefill pool 1 x h100-sxm of 4 devices: utilisation 2.38 = 5 request/s / (1 x 2.1 request/s" in ex.stdout
