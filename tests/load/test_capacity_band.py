"""The uncalibrated capacity band (issue 25): from NEAR_SATURATION (0.95) up to the overload edge
1 / 0.98 an uncalibrated open loop's time promises are ``not-shown``; a calibrated one keeps the
edge at 1 (no measured error of that kind).

The band's source: budgetlint's uncalibrated saturation over the same systems' MLPerf Offline
throughput is 0.98-1.01 on the v5.1 Server rows whose scheduler matches Offline (docs/load.md,
"Capacity against MLPerf Offline"): the real saturation may be up to 1 / 0.98 of the simulated
one. The utilisations below come from a saturation worked by hand from the closed form.
"""

from __future__ import annotations

import math

import pytest

from budgetlint.evaluate.load import (NEAR_SATURATION, UNCALIBRATED_SATURATION_LOW, LoadEvaluation,
                                      overload_edge, replicas_under_near_saturation, settle_saturation)
from budgetlint.physics.capacity import saturation
from budgetlint.physics.serving_sim import Scheduler, Traffic
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed

# decode 10 ms + 0.1 ms a sequence; prefill 0.01 ms a token (tests/physics/test_saturation_closed_form.py)
LAW = LinearStepCost(decode_fixed_s=0.01, decode_per_seq_s=1e-4, prefill_per_token_s=1e-5)
# 100 users, prompts of 100, replies of 51, a budget of 8,192 tokens: r = 100 / 51 requests begin
# an iteration (1 prefill iteration + 50 decodes each), d = 50 r = 98.04 decodes (98 in the step),
# t = 0.01 + 1e-4 x 98 + 1e-5 x 100 r = 21.76 ms, mu = r / t = 90.11 request/s
R = 100 / 51
MU = R / (0.01 + 1e-4 * 98 + 1e-5 * 100 * R)
EDGE = 1 / 0.98  # 1.0204


def test_the_hand_saturation_is_the_closed_form() -> None:
    traffic = Traffic(prompt=Fixed(100), output=Fixed(51), arrival_rate_per_s=1.0)
    assert saturation(LAW, traffic, Scheduler(max_num_seqs=100, max_num_batched_tokens=8192)) == \
        pytest.approx(MU, rel=1e-12)
    assert MU == pytest.approx(90.11, abs=0.01)
    assert UNCALIBRATED_SATURATION_LOW == 0.98 and NEAR_SATURATION == 0.95


def _settled(rate: float, verdicts: dict, *, calibrated: bool) -> LoadEvaluation:
    load = LoadEvaluation(arrival_rate_per_s=rate, saturation_request_per_s=MU,
                          calibrated="calibrated from 2 runs of x (cal.yaml)" if calibrated else "")
    load.verdicts = dict(verdicts)
    settle_saturation(load, rate / MU, ["ttft", "tpot"])
    return load


def test_the_edges_by_hand() -> None:
    assert overload_edge(LoadEvaluation()) == pytest.approx(EDGE, rel=1e-15)
    assert overload_edge(LoadEvaluation(calibrated="calibrated from 2 runs")) == 1.0


@pytest.mark.parametrize("rate,u", [(86.0, 0.9544), (91.5, 1.0154), (91.9, 1.0199)])
def test_inside_the_band_uncalibrated_the_time_promises_are_not_shown(rate: float, u: float) -> None:
    """86 / 90.11 = 0.954, 91.5 / 90.11 = 1.015 and 91.9 / 90.11 = 1.0199: at least 0.95, under
    1.0204. A met and an at-risk percentile both become not-shown; the bound's cannot-be-met and a
    promise the simulation did not judge (the edge allowances used it up) stand."""
    assert rate / MU == pytest.approx(u, abs=1e-4)
    load = _settled(rate, {"ttft": "met", "tpot": "at-risk", "e2e": "at-risk"}, calibrated=False)
    assert load.in_capacity_band and load.near_saturation and not load.overloaded
    assert load.verdicts == {"ttft": "not-shown", "tpot": "not-shown", "e2e": "at-risk"}
    load = _settled(rate, {"ttft": "cannot-be-met", "tpot": "met"}, calibrated=False)
    assert load.verdicts == {"ttft": "cannot-be-met", "tpot": "not-shown"}


def test_just_outside_the_band_uncalibrated_is_overloaded() -> None:
    """92.0 / 90.11 = 1.021: past 1.0204, no steady state even at a saturation 2 % higher."""
    assert 92.0 / MU == pytest.approx(1.0210, abs=1e-4)
    load = _settled(92.0, {"ttft": "met", "tpot": "at-risk"}, calibrated=False)
    assert load.overloaded and not load.in_capacity_band and not load.near_saturation
    assert load.verdicts == {"ttft": "at-risk", "tpot": "at-risk"}


def test_just_below_the_band_the_percentile_decides() -> None:
    """85.5 / 90.11 = 0.9488: under 0.95, the simulated verdicts stand."""
    assert 85.5 / MU == pytest.approx(0.9488, abs=1e-4)
    load = _settled(85.5, {"ttft": "met", "tpot": "at-risk"}, calibrated=False)
    assert not (load.in_capacity_band or load.near_saturation or load.overloaded)
    assert load.verdicts == {"ttft": "met", "tpot": "at-risk"}


def test_calibrated_keeps_todays_rule() -> None:
    """Calibrated: 91.5 / 90.11 = 1.015 is at or above 1: overloaded, the met promise at risk; at
    86 / 90.11 = 0.954 near saturation, the percentile's verdicts stand (a note, no band)."""
    load = _settled(91.5, {"ttft": "met", "tpot": "met"}, calibrated=True)
    assert load.overloaded and not load.in_capacity_band
    assert load.verdicts == {"ttft": "at-risk", "tpot": "at-risk"}
    load = _settled(86.0, {"ttft": "met", "tpot": "at-risk"}, calibrated=True)
    assert load.near_saturation and not load.in_capacity_band and not load.overloaded
    assert load.verdicts == {"ttft": "met", "tpot": "at-risk"}


@pytest.mark.parametrize("rate,replicas,want", [(91.5, 1, 2), (171.2, 1, 2), (171.3, 1, 3), (86.0, 1, 2)])
def test_the_replicas_that_bring_it_under_095(rate: float, replicas: int, want: int) -> None:
    """The fewest n with rate / (n x 90.11) < 0.95, i.e. n > rate / 85.61: 91.5 -> 1.069 -> 2;
    171.2 -> 1.9998 -> 2 (171.2 / (2 x 90.11) = 0.94998); 171.3 -> 2.0010 -> 3; 86 -> 1.0046 -> 2."""
    load = LoadEvaluation(arrival_rate_per_s=rate, saturation_request_per_s=MU, replicas=replicas)
    n = replicas_under_near_saturation(load)
    assert n == want
    assert rate / (n * MU) < 0.95 <= rate / ((n - 1) * MU) if n > 1 else True
    assert math.floor(rate / (0.95 * MU)) + 1 == want


@pytest.mark.parametrize("calibrated, want", [(False, 3), (True, 2)])
def test_the_fix_count_does_not_land_in_the_band(calibrated: bool, want: int) -> None:
    """A capacity search that found every promise held up to 89 request/s a replica (0.988 of
    mu = 90.11), at 175 request/s: ceil(175 / 89) = ceil(1.966) = 2 replicas hold the promises in
    the simulation, but 175 / (2 x 90.11) = 0.9710 is in the band (0.95 to 1.0204), where the next
    run would say not shown and BL330. Uncalibrated the fix is the fewest under 0.95:
    175 / (0.95 x 90.11) = 2.044 -> 3 (175 / (3 x 90.11) = 0.6474). Calibrated (no band) keeps
    ceil(175 / 89) = 2. Before: physics ``replicas_needed`` alone, 2 either way."""
    from budgetlint.evaluate.load import fix_replicas
    from budgetlint.physics.capacity import Capacity

    rate, held = 175.0, 89.0
    assert math.ceil(rate / held) == 2 and rate / (2 * MU) == pytest.approx(0.9710, abs=1e-4)
    assert math.floor(rate / (0.95 * MU)) + 1 == 3 and rate / (3 * MU) < 0.95
    load = LoadEvaluation(arrival_rate_per_s=rate, saturation_request_per_s=MU,
                          capacity=Capacity(held, MU, 90.0, 5, "ttft"),
                          calibrated="calibrated from 2 runs of x (cal.yaml)" if calibrated else "")
    assert fix_replicas(load) == want
    # where ceil(rate / capacity) is already under 0.95 it stands: 100 / 89 -> 2, 100 / (2 x 90.11) = 0.5549
    load.arrival_rate_per_s = 100.0
    assert fix_replicas(load) == 2


def test_a_compute_default_with_a_wider_spread_widens_the_band() -> None:
    """bf16 on Hopper's default predicts its fastest public run at 0.810 of what it measured
    (docs/calibration.md; tests/calibration/test_compute_defaults.py): its edge is 1 / 0.810 = 1.2346. At
    1.10 x MU (99.12 request/s) the global band would call it overloaded; on that default it is not shown."""
    wide = LoadEvaluation(arrival_rate_per_s=99.12, saturation_request_per_s=MU, saturation_low=0.810)
    assert overload_edge(wide) == pytest.approx(1.2346, abs=1e-4)
    wide.verdicts = {"ttft": "met", "tpot": "at-risk"}
    settle_saturation(wide, 99.12 / MU, ["ttft", "tpot"])
    assert (wide.overloaded, wide.in_capacity_band) == (False, True)
    assert wide.verdicts == {"ttft": "not-shown", "tpot": "not-shown"}
    over = LoadEvaluation(arrival_rate_per_s=112.0, saturation_request_per_s=MU, saturation_low=0.810)
    over.verdicts = {"ttft": "met"}
    settle_saturation(over, 112.0 / MU, ["ttft"])  # 112 / 90.11 = 1.243: past 1.2346
    assert over.overloaded and over.verdicts == {"ttft": "at-risk"}
    narrow = _settled(99.12, {"ttft": "met"}, calibrated=False)
    assert narrow.overloaded and narrow.verdicts == {"ttft": "at-risk"}


def test_a_bf16_hopper_budget_reads_its_defaults_band(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """End to end: Llama-3.1-8B bf16 on one H100 (the compute default 0.319, its band to 1 / 0.810) at 1.1 x
    its simulated saturation is not shown, with the band's source in the words; declared at 50 % compute
    (no measured default) the same utilisation is overloaded, at risk (the global edge 1 / 0.98)."""
    import json
    import subprocess
    import sys

    def run(extra: str, rate: float | None = None) -> dict:
        (tmp_path / "b.yaml").write_text(f"""version: 1
kind: budgets
budgets:
  - name: b
    owner: "@x"
    percentile: p95
    workload:
      prompt_tokens: {{lognormal: {{mean: 1500, p95: 4000}}}}
      output_tokens: {{lognormal: {{mean: 300, p95: 800}}}}
      arrival_rate: {rate or 1} request/s
    promise: {{ttft: 800 ms, tpot: 50 ms}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm{extra}}}
""")
        proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-cache", "--no-codeowners",
                               "--format", "json", "--quiet", str(tmp_path / "b.yaml")],
                              capture_output=True, text=True, cwd=tmp_path)
        return json.loads(proc.stdout)["budgets"][0]

    for extra, edge, band in (("", 1 / 0.810, True), (", efficiency: {compute: 0.5}", 1 / 0.98, False)):
        mu = run(extra)["load"]["saturation_request_per_s"]
        b = run(extra, round(1.1 * mu, 3))
        load = b["load"]
        assert load["overload_edge"] == pytest.approx(edge, rel=1e-12)
        assert load["in_capacity_band"] is band and load["overloaded"] is not band
        if band:
            assert b["load"]["verdicts"] == {"ttft": "not-shown", "tpot": "not-shown"}
            assert "fastest public run behind its compute default (Hopper bf16" in b["judgement"]["ttft"]["note"]
        else:
            assert "at-risk" in b["load"]["verdicts"].values()
