"""The declared traffic's simulation takes the requests its promises need (issue 28): an easy
promise is read off the first checkpoint that settles it, a close one goes on to the cap, and a
promise judged met is met with its interval whatever the sample (the verdict rule is unchanged)."""

from __future__ import annotations

from pathlib import Path

from budgetlint.evaluate.load import CHECKPOINTS, FIRST_WARMUP, REQUESTS, STEADY_ROUNDS
from budgetlint.run.check import Options, run_check

BUDGET = """version: 1
kind: budgets
budgets:
  - name: svc
    owner: "@acme/chat"
    percentile: {pct}
    workload:
      prompt_tokens: 500
      output_tokens: 150
      arrival_rate: {rate} request/s
    promise: {{ttft: {ttft}, tpot: 50 ms}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm}}
"""


def _load(tmp_path: Path, monkeypatch, **kw) -> dict:
    (tmp_path / "b.yaml").write_text(BUDGET.format(**kw))
    monkeypatch.chdir(tmp_path)
    report = run_check(["b.yaml"], Options(use_codeowners=False, jobs=1))
    return {r.name: r for r in report.budgets}["svc"].as_dict()["load"]


def test_an_easy_promise_is_read_off_the_first_checkpoint(tmp_path: Path, monkeypatch) -> None:
    """1 request/s against a replica that completes ~40: a p50 TTFT of ~40 ms against 2 s. The first
    checkpoint (100 requests, 50 measured after the warm-up) settles it and is a steady state (the
    system holds well under 5 requests: 10 x that is under 50)."""
    load = _load(tmp_path, monkeypatch, pct="p50", rate=1, ttft="2 s")
    assert load["requests_simulated"] == CHECKPOINTS[0] - FIRST_WARMUP == 50
    # Little's law by hand: arrivals x mean E2E (at least the median's) is the mean in the system
    assert load["requests_simulated"] >= STEADY_ROUNDS * 1.0 * load["predicted"]["e2e_s"]["p50"]
    assert "the first of 100, 200, 400, 800, 1600 requests" in load["stopping_rule"]
    assert "Little's law" in load["stopping_rule"]
    assert load["verdicts"] == {"ttft": "met", "tpot": "met"}
    for key, iv in load["interval"].items():  # met: the interval's top within the promise
        limit = {"ttft_s": 2.0, "tpot_s": 0.05}[key.split(".")[0]]
        assert iv["high"] <= limit


def test_a_p99_is_never_read_off_fewer_than_350_requests(tmp_path: Path, monkeypatch) -> None:
    """The tail floor: 3.5 measured requests beyond the percentile, so p99 needs 350 (the 400-request run
    that preceded checkpoints); the first checkpoint with that many is 400."""
    load = _load(tmp_path, monkeypatch, pct="p99", rate=1, ttft="2 s")
    assert load["requests_simulated"] >= 350


def test_a_close_promise_gets_the_cap(tmp_path: Path, monkeypatch) -> None:
    """A TTFT promise at about the simulated p90 itself: no checkpoint settles it, so the stream runs to
    its cap and the rule says so."""
    probe = _load(tmp_path, monkeypatch, pct="p90", rate=20, ttft="2 s")
    close = probe["predicted"]["ttft_s"]["p90"]
    (tmp_path / "b.yaml").unlink()
    load = _load(tmp_path, monkeypatch, pct="p90", rate=20, ttft=f"{close * 1000:.6f} ms")
    assert load["requests_simulated"] + FIRST_WARMUP == REQUESTS
    assert "read at 100, 200, 400, 800, 1600 first" in load["stopping_rule"]
