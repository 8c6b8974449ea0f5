"""The capacity search (issue 28): from the saturation rate, the flat estimate and the declared
rate's simulation, it closes its bracket in a few simulations, to the same answer as bisection."""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import Accelerator, Deployment, Efficiency, ModelShape
from budgetlint.physics.capacity import capacity, simulate
from budgetlint.physics.load_stats import PercentilePromise
from budgetlint.physics.serving_sim import Scheduler, Traffic
from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost, kv_capacity_tokens
from budgetlint.physics.traffic import Fixed, LogNormal

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
LLAMA8 = ModelShape(total_params=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128)
DEP = Deployment(model=LLAMA8, accelerator=H100, memory_usable_fraction=0.9)
COST = RooflineStepCost(DEP, Efficiency(0.7, 0.5))
SCHED = Scheduler(kv_capacity_tokens=kv_capacity_tokens(DEP), max_num_seqs=256, max_num_batched_tokens=2048)
CHAT = Traffic(prompt=LogNormal(1000, 3000), output=LogNormal(200, 600), arrival_rate_per_s=1.0)

# (TTFT limit, TPOT limit, declared rate): the common case, promises that hold until near
# saturation (queueing delays stay small until then); and promises that break well below it
COMMON = [(2.0, 0.08, 2.0), (5.0, 0.1, 8.0)]
CLOSE = [(0.5, 0.03, 1.0), (0.3, 0.025, 2.0), (0.25, 0.02, 3.0)]
# promises that break within 15 % of the saturation rate (capacity 21.2 and 23.0 request/s against
# mu = 24.9): in the common set while mu was a 3-round closed-loop transient (18.2 request/s, 27 %
# under the steady state the closed form and a 30-round simulation agree on, issue 25), where they
# sat at the top of the bracket; now the curve is steep in the bracket's top 15 %
NEAR = [(0.8, 0.05, 4.0), (1.0, 0.06, 6.0)]


def _search(ttft: float, tpot: float, rate: float, **kw):
    promises = [PercentilePromise("ttft_s", 95, ttft), PercentilePromise("tpot_s", 95, tpot)]
    known = simulate(COST, CHAT.at_rate(rate), SCHED, promises, requests=600)
    return capacity(COST, CHAT, SCHED, promises, requests=600, rel_tol=0.04, known=[(rate, known)], **kw), promises


@pytest.mark.parametrize("ttft,tpot,rate", COMMON)
def test_at_most_four_simulations_in_the_common_case(ttft: float, tpot: float, rate: float) -> None:
    """With the declared rate's simulation known: the saturation run and at most two search
    steps, so at most four with the declared rate's own; the bracket is inside the precision."""
    cap, _ = _search(ttft, tpot, rate)
    assert 1 + cap.simulations <= 4, cap
    assert cap.failing_request_per_s - cap.request_per_s <= 0.04 * cap.saturation_request_per_s + 1e-12


@pytest.mark.parametrize("ttft,tpot,rate", CLOSE)
def test_no_more_than_bisection_when_the_promise_breaks_early(ttft: float, tpot: float, rate: float) -> None:
    """Bisection of a 4 % bracket takes 5 steps after the saturation run (main's search):
    the search takes no more."""
    cap, _ = _search(ttft, tpot, rate)
    assert cap.simulations <= 6, cap
    assert cap.failing_request_per_s - cap.request_per_s <= 0.04 * cap.saturation_request_per_s + 1e-12


@pytest.mark.parametrize("ttft,tpot,rate", NEAR)
def test_at_most_one_more_than_bisection_near_saturation(ttft: float, tpot: float, rate: float) -> None:
    """Promises that break in the top 15 % of the bracket: the chord of ln(ratio) takes at most one
    step more than bisection's 5 after the saturation (7 in all)."""
    cap, _ = _search(ttft, tpot, rate)
    assert cap.simulations <= 7, cap
    assert cap.failing_request_per_s - cap.request_per_s <= 0.04 * cap.saturation_request_per_s + 1e-12


@pytest.mark.parametrize("ttft,tpot,rate", COMMON + CLOSE + NEAR)
def test_the_same_answer_as_bisection(ttft: float, tpot: float, rate: float) -> None:
    """Bisection (what main did, 10 steps at most) finds the same capacity to the precision."""
    cap, promises = _search(ttft, tpot, rate)
    lo, hi, mu = 0.0, cap.saturation_request_per_s, cap.saturation_request_per_s
    for _ in range(12):
        mid = (lo + hi) / 2
        res = simulate(COST, CHAT.at_rate(mid), SCHED, promises, requests=600)
        if all(res.promises_met[p.key] for p in promises) and not res.rejected:
            lo = mid
        else:
            hi = mid
    # both brackets are 4 % of mu wide, and the pass/fail curve is nearly monotone
    assert cap.request_per_s == pytest.approx(lo, abs=0.08 * mu)


def test_an_md1_capacity_by_hand() -> None:
    """One slot, a 0.1 s service (prefill of 100 tokens at 1 ms each, one output token): an M/D/1
    queue. Pollaczek-Khinchine: mean wait rho s / (2 (1 - rho)); the median TTFT promise of
    0.1 s + a little holds up to where the queue is still mostly empty; the capacity is inside
    (0, 10 request/s) and the search's bracket is 4 % of mu wide around a pass/fail change."""
    cost = LinearStepCost(0.01, prefill_fixed_s=0.0, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=1.0)
    promises = [PercentilePromise("e2e_s", 50, 0.15)]
    cap = capacity(cost, traffic, Scheduler(max_num_seqs=1), promises, requests=2000, rel_tol=0.04)
    assert cap.saturation_request_per_s == pytest.approx(10.0, rel=1e-6)  # 1 / 0.1 s
    # M/D/1 at rho: P(wait = 0) = 1 - rho; the median E2E is 0.1 s while 1 - rho >= 0.5, and
    # the mean wait at rho = 0.5 is 0.5 x 0.1 / (2 x 0.5) = 0.05 s: the 0.15 s median breaks
    # between rho 0.5 and the rho where the median wait reaches 0.05 s (below 0.75)
    assert 4.5 <= cap.request_per_s <= 7.5
    # a hockey stick (flat to rho 0.5, then steep) is the chord's worst case: more steps than
    # bisection's 6 here, never more than the cap
    assert cap.simulations <= 8
    assert cap.failing_request_per_s - cap.request_per_s <= 0.04 * 10.0 + 1e-9
    assert math.isfinite(cap.failing_request_per_s)


def test_a_capacity_far_below_saturation_is_found_not_called_none() -> None:
    """The M/D/1 queue above with a p98 E2E promise of 0.101 s: it holds while at most 2 % of the arrivals
    wait, and by PASTA an arrival finds the one slot busy with probability rho, so it holds up to rho ~ 0.02,
    0.2 request/s against mu = 10: a capacity below the search's 4 % bracket (0.4 request/s). Until stop 47
    the bracket [0, hi] narrower than that stopped the search at 0 ("no arrival rate holds it", no replica
    count fixing it). Now one step at 1 % of mu (rho 0.01: about 1 % wait, inside 2 %) passes, and the
    bracket closes to 4 % of its own scale."""
    cost = LinearStepCost(0.01, prefill_fixed_s=0.0, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=1.0)
    promises = [PercentilePromise("e2e_s", 98, 0.101)]
    cap = capacity(cost, traffic, Scheduler(max_num_seqs=1), promises, requests=2000, rel_tol=0.04)
    assert cap.saturation_request_per_s == pytest.approx(10.0, rel=1e-6)
    assert 0.1 <= cap.request_per_s <= 0.3, cap
    assert cap.request_per_s < cap.failing_request_per_s <= 0.4 + 1e-9


def test_no_rate_holds_a_promise_broken_at_one_percent_of_saturation() -> None:
    """The same queue with a p98 E2E of 0.099 s: every request alone takes 0.1 s, so none holds; the
    search says 0 (and looks no lower than 1 % of mu, 0.1 request/s, to say it)."""
    cost = LinearStepCost(0.01, prefill_fixed_s=0.0, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=1.0)
    promises = [PercentilePromise("e2e_s", 98, 0.099)]
    cap = capacity(cost, traffic, Scheduler(max_num_seqs=1), promises, requests=2000, rel_tol=0.04)
    assert cap.request_per_s == 0.0
    assert min(rate for rate, _ in cap.points) == pytest.approx(0.1, rel=1e-9)
