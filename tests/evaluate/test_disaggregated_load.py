"""A disaggregated budget under a declared arrival rate is judged on the simulation of both pools
(the prefill pool's queue feeding the decode pool's admission: evaluate/disaggregated.py
``simulate_pools_load``), as a colocated budget is judged on its simulation: one verdict per promise,
basis ``simulated``; each pool's saturation, utilisation and the replicas that meet the promises.

Every expected number by hand, for Llama 3.1 70B (the catalog's 70.55e9 parameters, 80 layers,
64 heads x 128, 8 KV heads) on 4 H100s per replica at the realistic efficiency (50 % of the
H100's 989 TFLOP/s dense bf16, the class default):

    prefill FLOP  = 2 x 70.55e9 x 4096 + 4 x 64 x 128 x 80 x 4096 x 4097 / 2 = 5.9994e14
    prefill time  = 5.9994e14 / (4 x 989e12 x 0.5)                            = 0.30331 s
    KV of 4,096   = 2 (K, V) x 80 x 8 x 128 x 2 B x 4096 = 1,342,177,280 B over 50 GB/s + 1 ms = 27.84 ms
    one prompt    = a pass of its own on an idle pool: + its whole fixed part (2.1 ms + 80 layers x
                    12 us = 3.06 ms, docs/calibration.md)                     = 0.30637 s
    TTFT, idle    = 0.30637 + 0.02784                                         = 0.3342 s
    saturated     = two 4,096-token prompts fill an iteration of the 8,192-token budget and share
                    its fixed part (2.1 ms + 80 layers x 12 us = 3.06 ms, docs/calibration.md):
                    0.30331 + 3.06 / 2 ms = 0.30484 s a prompt, 3.280 request/s a replica
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

PREFILL_S = (2 * 70.55e9 * 4096 + 4 * 64 * 128 * 80 * 4096 * 4097 / 2) / (4 * 989e12 * 0.5)
TRANSFER_S = 2 * 80 * 8 * 128 * 2 * 4096 / 50e9 + 1e-3
SAT_S = PREFILL_S + (2.1e-3 + 80 * 12e-6) / 2  # a prompt's share of a saturated prefill pool's time
FLAT_S = PREFILL_S + 2.1e-3 + 80 * 12e-6  # one prompt alone: one pass, its whole fixed part


def check(tmp_path: Path, rate: str, prefill: int, decode: int, percentile: str = "p95") -> dict:
    (tmp_path / "b.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        kind: budgets
        budgets:
          - name: pd
            owner: "@a/b"
            percentile: {percentile}
            workload: {{prompt_tokens: 4096, output_tokens: 200, arrival_rate: {rate}}}
            promise: {{ttft: 1 s, tpot: 60 ms}}
            deployment:
              model: llama-3.1-70b
              hardware: h100-sxm
              devices: 4
              disaggregated:
                prefill: {{replicas: {prefill}}}
                decode: {{replicas: {decode}}}
                kv_link: {{bandwidth: 50 GB/s, latency: 1 ms}}
        """))
    from budgetlint.reporters import get_reporter
    from budgetlint.run.check import Options, run_check

    return json.loads(get_reporter("json")(run_check([str(tmp_path / "b.yaml")], Options(use_codeowners=False))))


def test_hand_figures() -> None:
    assert PREFILL_S == pytest.approx(0.30331, rel=1e-4) and FLAT_S == pytest.approx(0.30637, rel=1e-4)
    assert TRANSFER_S == pytest.approx(0.027844, rel=1e-4)
    assert SAT_S == pytest.approx(0.30484, rel=1e-4) and 1 / SAT_S == pytest.approx(3.280, abs=5e-4)


def test_at_low_load_the_judged_ttft_is_the_hand_derived_one(tmp_path: Path) -> None:
    """One request every 20 s: no queue in either pool, so the judged (simulated) median TTFT is the
    prefill of a 4k prompt (its own pass, with the pass's fixed part) plus its KV over the declared
    link, as the flat estimate has it."""
    doc = check(tmp_path, "0.05 request/s", 1, 1, "p50")
    j = doc["budgets"][0]["judgement"]["ttft"]
    assert j["basis"] == "simulated"
    assert j["verdict"] == "met"
    assert j["value"] == pytest.approx(FLAT_S + TRANSFER_S, rel=1e-3)
    assert j["considered"]["estimate"] == pytest.approx(FLAT_S + TRANSFER_S, rel=1e-3)
    load = doc["budgets"][0]["load"]
    assert load["simulated"] is True
    assert set(load["pools"]) >= {"prefill", "decode"}


def test_an_overloaded_prefill_pool_is_judged_at_risk_on_the_simulated_basis(tmp_path: Path) -> None:
    """8 prompts a second against one prefill replica that completes 1 / 0.30331 s = 3.30 a second
    (prompts batch two to an 8,192-token iteration, which takes twice as long: the same rate):
    utilisation 8 x 0.30484 = 2.44. The flat estimate (one prompt on an idle pool, 0.334 s) meets the
    1 s promise; the judged verdict, on the simulated pools, is at risk (before: the flat estimate
    judged it met)."""
    doc = check(tmp_path, "8 request/s", 1, 3)
    b = doc["budgets"][0]
    j = b["judgement"]["ttft"]
    assert j["basis"] == "simulated" and j["verdict"] == "at-risk"
    assert j["considered"]["estimate"] == pytest.approx(FLAT_S + TRANSFER_S, rel=1e-3)
    pools = b["load"]["pools"]
    assert pools["prefill"]["saturation_request_per_s_per_replica"] == pytest.approx(1 / SAT_S, rel=0.02)
    assert pools["prefill"]["utilisation"] == pytest.approx(8 * SAT_S, rel=0.02)
    assert pools["prefill"]["replicas_to_keep_up"] == 3  # 8 x 0.30484 = 2.44 busy: 3 keep up (81 %)
    assert b["load"]["overloaded"] is True
    # the replicas that meet it: at least the 3 that keep up; the decode pool alone is no fix
    fix = pools["prefill"]["replicas_that_meet"]
    assert fix is not None and fix >= 3
    assert pools["decode"]["replicas_that_meet"] is None
    (f,) = [f for f in doc["findings"] if f["rule"] == "BL307" and f["promise"] == "ttft"]
    assert "the prefill pool's 1 replica completes at most 3.28 request/s" in f["message"]
    assert "prefill pool 1 x h100-sxm of 4 devices at utilisation 2.44" in f["message"]
    assert f["fix"] == f"disaggregated.prefill.replicas: {fix}"
    (f,) = [f for f in doc["findings"] if f["rule"] == "BL350"]
    # BL350 words the flat prefill, a prompt alone: 8 x 0.30637 = 2.451
    assert "245% utilised" in f["message"] and "306 ms of prefill a prompt" in f["message"]
    assert f"{fix} prefill replicas meet the promises (simulated)" in f["message"]
    assert not [f for f in doc["findings"] if f["rule"] == "BL305"]  # the simulation assumes no idle pool
    # the fix it names, checked: the budget with that many prefill replicas is judged met, simulated
    again = check(tmp_path, "8 request/s", fix, 3)
    j2 = again["budgets"][0]["judgement"]["ttft"]
    assert j2["basis"] == "simulated" and j2["verdict"] == "met"
    assert again["budgets"][0]["load"]["pools"]["prefill"]["utilisation"] == pytest.approx(
        8 * SAT_S / fix, rel=0.02)


def test_a_throughput_promise_is_the_slower_pools(tmp_path: Path) -> None:
    """10 request/s promised; one prefill replica completes at most 1 / 0.30484 s = 3.28 prompts a
    second, so that is what the pools sustain whatever the three decode replicas do."""
    (tmp_path / "b.yaml").write_text(textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: pd
            owner: "@a/b"
            percentile: p95
            workload: {prompt_tokens: 4096, output_tokens: 200, arrival_rate: 2 request/s}
            promise: {ttft: 2 s, throughput: 10 request/s}
            deployment:
              model: llama-3.1-70b
              hardware: h100-sxm
              devices: 4
              disaggregated:
                prefill: {replicas: 1}
                decode: {replicas: 3}
                kv_link: {bandwidth: 50 GB/s, latency: 1 ms}
        """))
    from budgetlint.reporters import get_reporter
    from budgetlint.run.check import Options, run_check

    doc = json.loads(get_reporter("json")(run_check([str(tmp_path / "b.yaml")], Options(use_codeowners=False))))
    j = doc["budgets"][0]["judgement"]["throughput"]
    assert j["basis"] == "simulated" and j["verdict"] == "at-risk"
    assert j["value"] == pytest.approx(1 / SAT_S, rel=0.02)
    (f,) = [f for f in doc["findings"] if f["rule"] == "BL308"]
    assert "the pools sustain 3.28 request/s at saturation" in f["message"] and "prefill 1 x 3.28 request/s" in f["message"]


def test_edges_are_words_not_tracebacks(tmp_path: Path) -> None:
    """A rate no replicas serve (1e300 request/s: more than 1,000,000 prefill replicas), one so low
    that arrivals never meet (1e-300 request/s over 4 replicas), and a pool too large to simulate
    replica by replica (100 decode replicas > 64): each is said, none raises."""
    doc = check(tmp_path, "1e300 request/s", 1, 3)
    (f,) = [f for f in doc["findings"] if f["rule"] == "BL350"]
    assert "replicas are not the fix" in f["message"] and f.get("fix") is None
    assert doc["budgets"][0]["load"]["pools"]["prefill"]["replicas_to_keep_up"] is None
    low = check(tmp_path, "1e-300 request/s", 1, 3)
    assert low["budgets"][0]["load"]["simulated"] is False
    assert low["budgets"][0]["judgement"]["ttft"]["basis"] == "estimate"
    big = check(tmp_path, "5 request/s", 1, 100)
    assert "more than 64 replicas" in big["budgets"][0]["load"]["reason"]


def test_the_lever_moves_replicas_between_the_pools(tmp_path: Path) -> None:
    """2 prefill + 2 decode at 5 request/s: the prefill pool is 5 x 0.30484 / 2 = 76 % utilised and its
    queue breaks the p95 TTFT; the 3 + 1 split of the same four replicas (5 x 0.30484 / 3 = 51 % on
    the prefill pool) meets it (as test_disaggregated.py's split test shows), so BL307's fix moves a
    replica instead of adding one."""
    doc = check(tmp_path, "5 request/s", 2, 2)
    b = doc["budgets"][0]
    assert b["load"]["pools"]["prefill"]["utilisation"] == pytest.approx(5 * SAT_S / 2, rel=0.02)
    assert {"prefill_replicas": 3, "decode_replicas": 1} in b["load"]["pools"]["moves_that_meet"]
    (f,) = [f for f in doc["findings"] if f["rule"] == "BL307" and f["promise"] == "ttft"]
    assert "prefill pool 2 x h100-sxm of 4 devices at utilisation 0.762" in f["message"]  # 5 x 0.30484 / 2
    assert "the same replicas moved: 3 prefill + 1 decode meets it" in f["message"]
    assert f["fix"] == "disaggregated.prefill.replicas: 3, disaggregated.decode.replicas: 1"
