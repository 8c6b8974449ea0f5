"""evaluate/roofline.evaluate and RooflineEvaluation.as_dict: what mutation testing of roofline.py
against tests/evaluate left unguarded (issue 22), worked by hand: a disaggregated deployment's edge,
the pool whose hardware lacks a compute peak, a realistic time beyond float range, a refusal by the
physics, and the cost keys of a lever in the JSON report.

The deployment is tests/evaluate/test_roofline_report.py's: fp8 Llama 3.1 70B on one H100 SXM
(3.35 TB/s), 100 prompt + 100 output tokens: the prefill of 100 tokens is one read of the touched
weights, (70.55e9 - 128,256 x 8,192 + 100 x 8,192) B / 3.35e12 B/s = 20.746 ms, bandwidth bound; at
the dense one-device default of 86.0 % of bandwidth 24.123 ms, + 2.1 ms for its pass. KV cache 2 x 80 layers x 8 KV heads
x 128 x 2 B = 327,680 B a token, so a prompt's 100 tokens are 32.768 MB, 655.36 us over a 50 GB/s
KV link."""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from budgetlint.reporters import get_reporter
from budgetlint.run.check import Options, run_check

BW = 3.35e12
PREFILL = (70.55e9 - 128_256 * 8_192 + 100 * 8_192) / BW  # 20.746 ms
REAL = 0.860
FIXED = 2.1e-3  # the default fixed part of an iteration; the prompt's pass is one (one device: no all-reduce)
KV_PROMPT = 100 * 2 * 80 * 8 * 128 * 2  # 32.768 MB
LINK = 50e9
SETUP = 0.010

POOLS = """\
- name: chat
  owner: "@a/b"
  workload: {prompt_tokens: 100, output_tokens: 100, measured_at: client}
  promise: {ttft: 60 ms, pace: 30 token/s, e2e: 5 s}
  edge: {connection_setup: 10 ms}
  deployment:
    model: llama-3.1-70b
    hardware: h100-sxm
    weight_precision: fp8
    disaggregated:
      prefill: {devices: 1PF}
      decode: {devices: 1DC}
      kv_link: 50 GB/s
"""
FLAT = """\
- name: chat
  owner: "@a/b"
  workload: {prompt_tokens: 100, output_tokens: 100}
  promise: {ttft: 60 ms, pace: 30 token/s, e2e: 5 s}
  deployment: {model: llama-3.1-70b, hardware: h100-sxm, weight_precision: fp8}
"""
NO_PEAK = ("hw.yaml", """\
version: 1
kind: hardware
hardware:
  - name: no-peak
    memory: 80 GB
    bandwidth: 3.35 TB/s
""")


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: str,
           *extra: tuple[str, str]) -> tuple[dict, list]:
    """The JSON report's budget and the RooflineEvaluation the pipeline computed for it."""
    from budgetlint.evaluate import roofline

    seen: list = []
    real = roofline.evaluate
    monkeypatch.setattr(roofline, "evaluate", lambda b, options: seen.append(real(b, options)) or seen[-1])
    (tmp_path / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets:\n" + textwrap.indent(budget, "  "))
    paths = [str(tmp_path / "b.yaml")]
    for name, text in extra:
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    doc = json.loads(get_reporter("json")(run_check(paths, Options(use_codeowners=False))))
    (b,) = doc["budgets"]
    return b, seen


def test_the_pools_ttft_carries_the_edge_and_the_kv_transfer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TTFT across the pools = the prefill pool's prefill + the prompt's KV over the link + the 10 ms
    of connection setup at the client: 20.746 + 0.655 + 10 = 31.402 ms bound, (24.123 + 2.1) + 0.655
    + 10 = 36.879 ms estimated (the prompt's pass pays the fixed part of an iteration); the report's
    disaggregated part gives the KV and its transfer."""
    b, (ev,) = _check(tmp_path, monkeypatch, POOLS.replace("PF", "").replace("DC", ""))
    transfer = KV_PROMPT / LINK
    assert transfer == pytest.approx(655.36e-6, rel=1e-12)
    a = b["analysis"]
    assert a["bound_ttft_s"] == pytest.approx(PREFILL + transfer + SETUP, rel=1e-6)
    assert a["realistic_ttft_s"] == pytest.approx(PREFILL / REAL + FIXED + transfer + SETUP, rel=1e-6)
    pools = a["disaggregated"]
    assert pools["kv_bytes_per_prompt"] == pytest.approx(KV_PROMPT, rel=1e-12)
    assert pools["kv_transfer_s"] == pytest.approx(transfer, rel=1e-9)
    assert pools["bound_ttft_s"] == pytest.approx(PREFILL + transfer + SETUP, rel=1e-6)
    assert ev.bound.connection_setup_s == SETUP and ev.verdicts["ttft"].verdict == "met"


@pytest.mark.parametrize("role", ["prefill", "decode"])
def test_the_note_names_the_pool_hardware_without_a_compute_peak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  role: str) -> None:
    """The deployment is on h100-sxm, one pool on 'no-peak' (bandwidth and memory only): the time
    promises are not met but unknown, and the note names the pool's hardware, not the deployment's."""
    budget = POOLS.replace("PF", ", hardware: no-peak" if role == "prefill" else "").replace(
        "DC", ", hardware: no-peak" if role == "decode" else "")
    _, (ev,) = _check(tmp_path, monkeypatch, budget, NO_PEAK)
    assert [ev.verdicts[n].verdict for n in ("ttft", "tpot", "e2e")] == ["unknown"] * 3
    assert ev.notes == ["hardware 'no-peak' lists no compute peak: what needs compute is not checked (prefill, "
                        "and whether compute binds a decode step); time promises are checked against the "
                        "bandwidth bounds only, which can show a promise impossible but never met"]


def test_a_realistic_time_beyond_float_range_alone_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound finite, the estimate's end-to-end time infinite (an efficiency small enough): nothing
    is judged, and the skip names the end-to-end time; no analysis is kept."""
    from budgetlint.evaluate import analysis_cache

    real = analysis_cache.analyse

    def analyse(d, w, eff, *rest):  # type: ignore[no-untyped-def]
        a = real(d, w, eff, *rest)
        return a if (eff.bandwidth, eff.compute) == (1.0, 1.0) else replace(a, e2e_s=math.inf)

    monkeypatch.setattr(analysis_cache, "analyse", analyse)
    b, (ev,) = _check(tmp_path, monkeypatch, FLAT)
    assert ev.skipped == ("the end-to-end time of this deployment is beyond floating-point range (a peak or a "
                          "count at an extreme?): nothing can be judged against it")
    assert ev.bound is None and ev.realistic is None and ev.verdicts == {}
    assert b["analysis"]["skipped"] == ev.skipped and "bound_ttft_s" not in b["analysis"]


def test_a_refusal_by_the_physics_is_the_skip_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.evaluate import analysis_cache

    def analyse(*args):  # type: ignore[no-untyped-def]
        raise ValueError("the physics refuses this combination")

    monkeypatch.setattr(analysis_cache, "analyse", analyse)
    b, (ev,) = _check(tmp_path, monkeypatch, FLAT)
    assert ev.skipped == "the physics refuses this combination" and ev.verdicts == {}
    assert b["analysis"]["skipped"] == ev.skipped and "bound_ttft_s" not in b["analysis"]


def test_a_lever_s_cost_ratio_and_basis_reach_the_report() -> None:
    """A lever with a cost ratio carries it and its basis; one without (None, or no such attribute:
    the disaggregated levers) carries neither key."""
    from budgetlint.evaluate.roofline import RooflineEvaluation
    from budgetlint.physics.shapes import Efficiency

    analysis = SimpleNamespace(memory_required_bytes_per_device=40e9, memory_available_bytes_per_device=80e9,
                               memory_fits=True, compute_known=True, pace_token_per_s=50.0, ttft_s=0.25, e2e_s=4.0)
    priced = SimpleNamespace(name="fp8", description="fp8 weights", analysis=analysis, meets=True, cost_ratio=0.75,
                             cost_basis="flat estimate")
    unpriced = SimpleNamespace(name="kv-8bit", description="8-bit KV cache", analysis=analysis, meets=False,
                               cost_ratio=None, cost_basis="flat estimate")
    bare = SimpleNamespace(name="pools", description="3 prefill replicas", analysis=analysis, meets=True)
    ev = RooflineEvaluation(budget=SimpleNamespace(deployment=None), efficiency=Efficiency(0.8, 0.6),  # type: ignore[arg-type]
                            levers=[priced, unpriced, bare])
    words = ": pace 50 token/s, TTFT 250 ms, E2E 4 s, memory fits (40 GB of 80 GB per device)"
    assert ev.as_dict()["levers"] == [
        {"name": "fp8", "description": "fp8 weights" + words + ", at 75% of the cost per output token (flat estimate)",
         "meets": True, "cost_ratio": 0.75, "cost_basis": "flat estimate"},
        {"name": "kv-8bit", "description": "8-bit KV cache" + words, "meets": False},
        {"name": "pools", "description": "3 prefill replicas" + words, "meets": True}]
