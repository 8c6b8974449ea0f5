"""Percentiles beyond p99.5 are read off as many simulated requests as they need (stop 47).

A 2,000-request stream's ten sections hold 195 measured requests each, fewer than one beyond p99.5: each
section's p99.9 is its maximum, and the sectioning interval is the spread of maxima. Until stop 47 a
p99.9 TTFT promise of 850 ms was met off 1,950 requests (689 ms, 95 % interval 541-838 ms) where the same
simulation read longer puts p99.9 at 883 ms: blocks of 3,688 requests of it range 0.59-1.43 s, the tail
coming in bursts (long prompts queueing together). Now the verdict reads TAIL_FLOOR (3.5) requests beyond
the percentile in each of its 10 sections: 10 x 3.5 / 0.001 = 35,000 for p99.9; a percentile one
simulation cannot hold (over 40,000) is not simulated (BL309) instead of read off a sample's maximum.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cli_runner import cli_json

BUDGET = """version: 1
kind: budgets
budgets:
  - name: tail
    owner: "@acme/x"
    percentile: {pct}
    workload:
      prompt_tokens: {{lognormal: {{mean: 1000, p95: 3000}}}}
      output_tokens: 200
      arrival_rate: 5 request/s
    promise: {{ttft: 850 ms, tpot: 50 ms}}
    # compute declared at the class's 50 %: the case was found and pinned at it (bf16 on Hopper now defaults
    # to its public runs' 0.319, docs/calibration.md)
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm, devices: 1, efficiency: {{compute: 0.5}}}}
"""


def test_the_requests_a_long_tail_needs_by_hand() -> None:
    from budgetlint.physics.load_stats import tail_requests

    assert tail_requests(99.0) is None and tail_requests(99.5) is None  # the stream's own reading
    assert tail_requests(99.9) == (35_000, 3_500)  # 10 x 3.5 / 0.001, 3.5 / 0.001
    assert tail_requests(99.99) == (350_000, 35_000)
    assert tail_requests(99.6) == (8_750, 875)  # 3.5 / 0.004 = 875


def _nearest_rank(values: list[float], p: float) -> float:
    """The p-th percentile by linear interpolation between closest ranks (NumPy's default), written here."""
    xs = sorted(values)
    h = (len(xs) - 1) * p / 100.0
    lo = math.floor(h)
    return xs[lo] + (h - lo) * (xs[min(lo + 1, len(xs) - 1)] - xs[lo])


def test_a_p999_verdict_covers_the_longer_simulation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.physics import serving_sim as sim

    seen: list = []
    run = sim.run

    def spy(cost, traffic, sched, **kw):  # type: ignore[no-untyped-def]
        if traffic.arrival_rate_per_s == 5.0 and not seen:
            seen.append((cost, traffic, sched))
        return run(cost, traffic, sched, **kw)

    monkeypatch.setattr(sim, "run", spy)
    (tmp_path / "b.yaml").write_text(BUDGET.format(pct="p99.9"))
    _, report = cli_json("check", "--no-cache", "--no-codeowners", str(tmp_path / "b.yaml"))
    load = report["budgets"][0]["load"]
    assert load["requests_simulated"] == 35_000
    assert load["stopping_rule"].startswith("35,000 requests measured after a warm-up of 50")
    low, high = load["interval"]["ttft_s.p99.9"]["low"], load["interval"]["ttft_s.p99.9"]["high"]
    # the reference: the same configuration simulated for 40,000 measured requests, read here
    (cost, traffic, sched), = seen
    long = run(cost, traffic, sched, requests=40_050, warmup=50)
    reference = _nearest_rank([r.ttft_s for r in long.records if not r.rejected], 99.9)
    # a guard that the case still shows what it was written for: the long reading (883 ms at stop 47) lies
    # above the old 1,950-request interval's top (838 ms), so a reading off that few would not cover it
    assert 0.86 < reference < 0.9
    assert low <= reference <= high, (low, reference, high)
    assert load["verdicts"]["ttft"] == "at-risk"


def test_a_percentile_one_simulation_cannot_hold_is_not_simulated(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(BUDGET.format(pct="p99.999"))
    _, report = cli_json("check", "--no-cache", "--no-codeowners", str(tmp_path / "b.yaml"))
    load = report["budgets"][0]["load"]
    assert load["simulated"] is False
    # 10 sections x 3.5 / 0.00001 = 3,500,000 requests, against one simulation's 40,000
    assert load["reason"].startswith("its percentile p99.999 is read off 3,500,000 simulated requests")
    codes = [f["rule"] for f in report["findings"]]
    assert "BL309" in codes


def test_a_closed_loop_reads_a_long_tail_off_the_same_count(tmp_path: Path) -> None:
    """Eight users instead of an arrival rate: the same 10 x 3.5 / 0.001 = 35,000 measured requests."""
    (tmp_path / "b.yaml").write_text(BUDGET.format(pct="p99.9").replace("arrival_rate: 5 request/s", "concurrency: 8"))
    _, report = cli_json("check", "--no-cache", "--no-codeowners", str(tmp_path / "b.yaml"))
    load = report["budgets"][0]["load"]
    assert load["requests_simulated"] == 35_000 and load["stopping_rule"].startswith("35,000 requests measured")


CATALOG = """version: 1
kind: hardware
hardware:
  - name: lab-card          # bandwidth only: memory and compute not published yet
    bandwidth: 2 TB/s
"""


def test_a_partial_catalog_entry_with_a_long_tail_is_said_for_what_it_lacks(tmp_path: Path) -> None:
    """A p99.9 budget on a bandwidth-only card beside one on a full card, in one run: the card without memory
    is not simulated for its missing memory (not for its percentile), the other is read off 35,000."""
    (tmp_path / "hw.yaml").write_text(CATALOG)
    (tmp_path / "b.yaml").write_text(BUDGET.format(pct="p99.9") + BUDGET.format(pct="p99.9").split("budgets:\n")[1]
                                     .replace("name: tail", "name: lab").replace("hardware: h100-sxm", "hardware: lab-card"))
    code, report = cli_json("check", "--no-cache", "--no-codeowners", str(tmp_path / "b.yaml"), str(tmp_path / "hw.yaml"))
    assert code in (0, 1)
    loads = {b["name"]: b["load"] for b in report["budgets"]}
    assert loads["lab"]["simulated"] is False and "declares no memory" in loads["lab"]["reason"]
    assert loads["tail"]["requests_simulated"] == 35_000
