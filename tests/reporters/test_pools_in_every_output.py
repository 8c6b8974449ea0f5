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
