"""physics/capacity.py's pure parts worked by hand, where the simulator suites do not reach:
whether a simulation's intervals settle its promises, the chord of the capacity search, and the
replicas a service rate needs."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from budgetlint.physics.capacity import _line, replicas_needed, settled
from budgetlint.physics.load_stats import PercentilePromise, SimulationResult
from budgetlint.physics.traffic import Fixed

TTFT = PercentilePromise("ttft_s", 95.0, 0.5)
TPOT = PercentilePromise("tpot_s", 50.0, 0.05)


def _result(ttft: tuple[float, float, float], tpot: tuple[float, float, float] = (0.02, 0.019, 0.021),
            requests: int = 2000) -> SimulationResult:
    """(point, low, high) of each promise's percentile."""
    return SimulationResult(
        predicted={"ttft_s": {"p95": ttft[0]}, "tpot_s": {"p50": tpot[0]}},
        interval={"ttft_s.p95": ttft[1:], "tpot_s.p50": tpot[1:]}, busy_fraction=0.5, batch_size_mean=1.0,
        batch_size_p95=1.0, preemptions_per_request=0.0, slo_attainment=1.0, goodput_request_per_s=1.0,
        throughput_request_per_s=1.0, output_token_per_s=1.0, arrival_rate_per_s=1.0, mean_in_system=1.0,
        mean_sojourn_s=1.0, requests=requests, rejected=0, replicas=1, window_s=1.0, promises_met={})


def test_settled_when_every_interval_is_narrow_and_on_one_side() -> None:
    """TTFT p95 0.3 s in (0.28, 0.34) against 0.5 s: all below the limit, 0.06 s wide against a
    distance of 0.2 s; TPOT p50 20 ms in (19, 21) ms against 50 ms: 2 ms against 30 ms."""
    ok, why = settled(_result((0.3, 0.28, 0.34)), [TTFT, TPOT])
    assert ok is True
    assert why == "2000 requests: every promise's 95 % interval is narrower than 100% of its distance to the promise"
    # above the limit on one side: 0.8 s in (0.7, 0.9), 0.2 s wide against a distance of 0.3 s
    assert settled(_result((0.8, 0.7, 0.9)), [TTFT])[0] is True
    # no promise: nothing to settle
    assert settled(_result((0.3, 0.28, 0.34)), []) == (True, "2000 requests: every promise's 95 % interval "
                                                            "is narrower than 100% of its distance to the promise")


@pytest.mark.parametrize("ttft", [(0.45, 0.4, 0.5), (0.45, 0.5, 0.6), (0.55, 0.5, 0.6), (0.1, 0.4, 0.5),
                                  (1.0, 0.5, 0.6)])
def test_an_interval_that_reaches_the_limit_is_not_settled(ttft: tuple[float, float, float]) -> None:
    """The limit (0.5 s) at either end of the interval, or inside it; the last two narrow (0.1 s
    wide) against their point's distance (0.4, 0.5 s), so only the touching end unsettles them."""
    ok, why = settled(_result(ttft, requests=400), [TPOT, TTFT])
    assert ok is False
    assert why == "the ttft_s.p95 interval was too close to its promise after 400 requests"


def test_an_interval_wider_than_the_distance_is_not_settled() -> None:
    """0.3 s in (0.1, 0.45): wholly below 0.5 s but 0.35 s wide against a distance of 0.2 s; at a
    share of 2 (0.35 <= 2 x 0.2 = 0.4) it is settled; exactly the distance (0.2 wide, 0.2 away) is
    narrow enough."""
    assert settled(_result((0.3, 0.1, 0.45)), [TTFT]) == (
        False, "the ttft_s.p95 interval was too close to its promise after 2000 requests")
    assert settled(_result((0.3, 0.1, 0.45)), [TTFT], share=2.0)[0] is True
    assert settled(_result((0.3, 0.25, 0.45)), [TTFT])[0] is True


@pytest.mark.parametrize("ttft", [(math.nan, 0.1, 0.2), (0.3, -math.inf, 0.4), (0.3, 0.2, math.inf)])
def test_an_unbounded_interval_is_not_settled(ttft: tuple[float, float, float]) -> None:
    ok, why = settled(_result(ttft, requests=50), [TTFT])
    assert (ok, why) == (False, "the ttft_s.p95 interval is unbounded after 50 requests")


def test_a_promise_without_an_interval_or_a_percentile_is_not_settled() -> None:
    r = _result((0.3, 0.28, 0.34))
    del r.interval["ttft_s.p95"]
    assert settled(r, [TTFT]) == (False, "the ttft_s.p95 interval is unbounded after 2000 requests")
    assert settled(_result((0.3, 0.28, 0.34)), [PercentilePromise("ttft_s", 99.0, 0.5)])[0] is False


def test_the_chord_of_the_capacity_search_by_hand() -> None:
    """In x = rate / (mu - rate) with mu = 10: (2, 0.5) and (5, 0.8) are x = 0.25 and 1; the ratio
    reaches 1 at x = 0.25 + (1 - 0.5) x 0.75 / 0.3 = 1.5, the rate 10 x 1.5 / 2.5 = 6. From
    (0, 0.2) and (5, 0.6): x = 0.8 / 0.4 = 2, the rate 20 / 3. A line that reaches 1 below x = 0
    ((2, 2) and (5, 3): x = 0.25 - 0.75 = -0.5) gives 0."""
    assert _line((2.0, 0.5), (5.0, 0.8), 10.0) == pytest.approx(6.0, rel=1e-12)
    assert _line((5.0, 0.8), (2.0, 0.5), 10.0) == pytest.approx(6.0, rel=1e-12)
    assert _line((0.0, 0.2), (5.0, 0.6), 10.0) == pytest.approx(20 / 3, rel=1e-12)
    assert _line((2.0, 2.0), (5.0, 3.0), 10.0) == 0.0
    # the rate 0 as the second point; a crossing below x = 1: (2, 0.5), (5, 2): x = 0.25 + 0.5 x
    # 0.75 / 1.5 = 0.5, the rate 10 x 0.5 / 1.5 = 10/3
    assert _line((5.0, 0.6), (0.0, 0.2), 10.0) == pytest.approx(20 / 3, rel=1e-12)
    assert _line((2.0, 0.5), (5.0, 2.0), 10.0) == pytest.approx(10 / 3, rel=1e-12)


@pytest.mark.parametrize("p1, p2", [
    ((2.0, 0.5), (5.0, 0.5)),  # the same ratio: no line
    ((2.0, math.inf), (5.0, 0.8)), ((2.0, 0.5), (5.0, math.nan)),  # a ratio not finite
    ((-1.0, 0.5), (5.0, 0.8)), ((2.0, 0.5), (10.0, 0.8)), ((10.0, 0.5), (5.0, 0.8)),  # outside [0, mu)
    ((5.0, 0.5), (5.0, 0.8)),  # one rate twice
])
def test_no_chord_through_points_that_make_no_line(p1: tuple[float, float], p2: tuple[float, float]) -> None:
    assert _line(p1, p2, 10.0) is None


def test_replicas_needed_by_hand() -> None:
    """ceil(rate / capacity): 2 request/s at 0.5 a replica needs 4; 3 at exactly 1 needs 3; 3.2 at
    1 needs 4; a rate a replica holds alone, 1; no capacity (nothing holds the promises): None."""
    assert replicas_needed(2.0, 0.5) == 4
    assert replicas_needed(3.0, 1.0) == 3
    assert replicas_needed(3.2, 1.0) == 4
    assert replicas_needed(0.1, 5.0) == 1
    assert replicas_needed(2.0, 0.0) is None
    assert replicas_needed(2.0, math.nan) is None


def test_the_load_verdict_by_hand() -> None:
    """A 0.5 s promise: a roofline bound above it cannot be met whatever the simulation says (even
    0.1 s predicted); one 1e-10 above is a float's noise (the 1e-9 tolerance): judged on. The
    simulated point or the top of its interval above the limit: at risk; both within: met (exactly at
    the limit is within); an interval not known (NaN) is not read."""
    from budgetlint.physics.capacity import load_verdict

    assert load_verdict(0.5, 0.6, 0.1) == "cannot-be-met"
    assert load_verdict(0.5, 0.5 * (1 + 2e-9), 0.1, 0.2) == "cannot-be-met"
    assert load_verdict(0.5, 0.5 * (1 + 1e-10), 0.1, 0.2) == "met"
    assert load_verdict(0.5, 0.5 * (1 + 1e-9), 0.1, 0.2) == "met"  # exactly at the tolerance: within
    assert load_verdict(0.5, 0.2, 0.5 * (1 + 1e-9), 0.5 * (1 + 1e-9)) == "met"
    assert load_verdict(0.5, 0.2, 0.6) == "at-risk"
    assert load_verdict(0.5, 0.2, 0.5 * (1 + 2e-9)) == "at-risk"
    assert load_verdict(0.5, 0.2, 0.4, 0.55) == "at-risk"
    assert load_verdict(0.5, 0.2, 0.4, 0.5 * (1 + 2e-9)) == "at-risk"
    assert load_verdict(0.5, 0.2, 0.4, 0.45) == "met"
    assert load_verdict(0.5, 0.5, 0.5, 0.5) == "met"
    assert load_verdict(0.5, 0.2, 0.5 * (1 + 1e-10), 0.5 * (1 + 1e-10)) == "met"
    assert load_verdict(0.5, 0.2, 0.4) == "met"
    assert load_verdict(0.5, 0.2, 0.4, math.nan) == "met"


def test_simulated_saturation_hands_run_the_closed_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The closed loop it simulates: saturation_users users (8 sequences a replica, no cache
    limit: 8), the traffic's lengths and prefix hits, one replica of the scheduler, the requests,
    warm-up, seed and allowance given (seed 0 by default), summarised without promises; the answer
    is the run's throughput."""
    from budgetlint.physics import capacity
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.traffic import Fixed

    calls: list = []

    class Summary:
        throughput_request_per_s = 12.5

    def fake_run(cost, traffic, scheduler, **kw):  # type: ignore[no-untyped-def]
        calls.append((cost, traffic, scheduler, kw))
        return "raw"

    def fake_summarise(raw, promises, **kw):  # type: ignore[no-untyped-def]
        calls.append((raw, promises, kw))
        return Summary()

    monkeypatch.setattr(capacity, "run", fake_run)
    monkeypatch.setattr(capacity, "summarise", fake_summarise)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(20), arrival_rate_per_s=3.0, prefix_hit_requests=0.5,
                      prefix_hit_tokens=0.25)

    def allow(n: int) -> bool:
        return True

    got = capacity.simulated_saturation("cost", traffic, Scheduler(max_num_seqs=8, replicas=3), requests=300,
                                        warmup=30, allowance=allow)
    assert got == 12.5
    (cost, closed, sched, kw), (raw, promises, skw) = calls
    assert cost == "cost" and raw == "raw" and promises == () and skw == {}
    assert (closed.concurrency, closed.arrival_rate_per_s, closed.prompt, closed.output) == (8, None, Fixed(100),
                                                                                              Fixed(20))
    assert (closed.prefix_hit_requests, closed.prefix_hit_tokens) == (0.5, 0.25)
    assert sched == Scheduler(max_num_seqs=8, replicas=1)
    assert kw == {"requests": 300, "warmup": 30, "seed": 0, "allowance": allow}
    calls.clear()
    capacity.simulated_saturation("cost", traffic, Scheduler(max_num_seqs=8), requests=300, seed=7)
    assert calls[0][3] == {"requests": 300, "warmup": None, "seed": 7, "allowance": None}


def test_the_promise_that_broke_first_by_hand() -> None:
    """_broken: the first promise whose point estimate is not within its limit (a promise the
    summary does not know counts as broken), then "rejected" when requests were rejected, else None."""
    from dataclasses import replace

    from budgetlint.physics.capacity import _broken

    r = _result((0.3, 0.28, 0.34))
    assert _broken(replace(r, promises_met={"ttft_s.p95": True, "tpot_s.p50": True}), [TTFT, TPOT]) is None
    assert _broken(replace(r, promises_met={"ttft_s.p95": True, "tpot_s.p50": False}), [TTFT, TPOT]) == "tpot_s.p50"
    assert _broken(replace(r, promises_met={"tpot_s.p50": True}), [TTFT, TPOT]) == "ttft_s.p95"
    assert _broken(replace(r, promises_met={"ttft_s.p95": True}, rejected=2), [TTFT]) == "rejected"
    assert _broken(replace(r, promises_met={"ttft_s.p95": False}, rejected=2), [TTFT]) == "ttft_s.p95"


def test_simulate_hands_run_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate = summarise(run(cost, traffic, scheduler, requests, seed, allowance), promises)."""
    from budgetlint.physics import capacity

    calls: list = []
    monkeypatch.setattr(capacity, "run", lambda *a, **kw: calls.append((a, kw)) or "raw")
    monkeypatch.setattr(capacity, "summarise", lambda raw, promises: calls.append((raw, promises)) or "summary")

    def allow(n: int) -> bool:
        return True

    assert capacity.simulate("cost", "traffic", "sched", [TTFT], requests=50, seed=3, allowance=allow) == "summary"
    assert calls == [(("cost", "traffic", "sched"), {"requests": 50, "seed": 3, "allowance": allow}), ("raw", [TTFT])]
    calls.clear()
    capacity.simulate("cost", "traffic", "sched")
    assert calls == [(("cost", "traffic", "sched"), {"requests": 2000, "seed": 0, "allowance": None}), ("raw", ())]


def test_the_worst_promise_ratio_by_hand() -> None:
    """_ratio: max predicted / limit, 0.3 / 0.5 = 0.6 against 0.02 / 0.05 = 0.4; infinite when a
    request was rejected, a percentile is missing, or a prediction is not finite; 0 with no promise."""
    from dataclasses import replace

    from budgetlint.physics.capacity import _ratio

    r = _result((0.3, 0.28, 0.34))
    assert _ratio(r, [TTFT, TPOT]) == pytest.approx(0.6, rel=1e-12)
    assert _ratio(r, [TPOT]) == pytest.approx(0.4, rel=1e-12)
    assert _ratio(r, []) == 0.0
    assert _ratio(replace(r, rejected=1), [TPOT]) == math.inf
    assert _ratio(r, [PercentilePromise("ttft_s", 99.0, 0.5)]) == math.inf
    assert _ratio(_result((math.nan, 0.28, 0.34)), [TPOT, TTFT]) == math.inf
    assert _ratio(_result((math.inf, 0.28, 0.34)), [TTFT]) == math.inf


def test_a_capacity_search_needs_two_simulations() -> None:
    """At least 2 simulations (the saturation run and one rate): 1 is refused in words; 2 is
    enough (here with no saturation throughput given as mu = 0: no rate can hold, capacity 0)."""
    from budgetlint.physics.capacity import Capacity, capacity
    from budgetlint.physics.serving_sim import Scheduler

    with pytest.raises(ValueError) as e:
        capacity(None, None, Scheduler(), [TTFT], max_simulations=1, mu=1.0)  # type: ignore[arg-type]
    assert str(e.value) == "a capacity search needs at least 2 simulations"
    assert capacity(None, None, Scheduler(), [TTFT], max_simulations=2, mu=0.0) == Capacity(  # type: ignore[arg-type]
        0.0, 0.0, 0.0, 1, None)


def test_saturation_users_by_hand() -> None:
    """max_num_seqs (at most 4,096), but no more than the KV cache holds at the mean lengths:
    10,000 tokens / (100 + 100) = 50 sequences; 10,050 still 50; a cache below one sequence: 1."""
    from budgetlint.physics.capacity import saturation_users
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.traffic import Fixed

    t = Traffic(prompt=Fixed(100), output=Fixed(100), concurrency=1)
    assert saturation_users(t, Scheduler(max_num_seqs=256)) == 256
    assert saturation_users(t, Scheduler(max_num_seqs=5000)) == 4096
    assert saturation_users(t, Scheduler(max_num_seqs=256, kv_capacity_tokens=10_000)) == 50
    assert saturation_users(t, Scheduler(max_num_seqs=256, kv_capacity_tokens=10_050)) == 50
    assert saturation_users(t, Scheduler(max_num_seqs=40, kv_capacity_tokens=10_000)) == 40
    assert saturation_users(t, Scheduler(max_num_seqs=256, kv_capacity_tokens=100)) == 1


def test_the_closed_form_saturation_by_hand() -> None:
    """steady_state with a stated linear law (a decode iteration 20 ms + 1 ms a sequence; a
    prefill alone 50 ms + 0.1 ms a token, beside decodes only its 0.1 ms a token), prompts of 100
    and replies of 11 tokens: a request takes n = 10 decode iterations and q = 1 prefill iteration.
    (a) 8 slots: r = 8 / (10 + 1) = 8/11 requests an iteration, d = 80/11 decodes; r <= 1, so a
    share 8/11 of the iterations carry a prompt beside d + r - 1 = 7 decodes (20 + 7 + 10 = 37 ms),
    the rest 8 decodes (28 ms): t = (8 x 0.037 + 3 x 0.028) / 11 = 0.38 / 11 s, mu = r / t =
    8 / 0.38 = 21.0526 request/s, bound by the slots.
    (b) 256 slots, a 300-token budget: r = 300 / (10 + 100) = 30/11 (the tokens bind), d = 300/11,
    27 decodes an iteration beside 2 or 3 prompts (20 + 27 + 20 = 67 ms; 77 ms) in the shares 3/11
    and 8/11: t = 0.817 / 11, mu = 30 / 0.817 = 36.7197 request/s."""
    from budgetlint.physics.capacity import saturation, steady_state
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.step_cost import LinearStepCost
    from budgetlint.physics.traffic import Fixed

    law = LinearStepCost(0.02, decode_per_seq_s=0.001, prefill_fixed_s=0.05, prefill_per_token_s=1e-4)
    t = Traffic(prompt=Fixed(100), output=Fixed(11), arrival_rate_per_s=1.0)
    a = steady_state(law, t, Scheduler(max_num_seqs=8))
    assert (a.requests_per_iteration, a.decodes) == (pytest.approx(8 / 11, rel=1e-12), pytest.approx(80 / 11, rel=1e-12))
    assert a.iteration_s == pytest.approx(0.38 / 11, rel=1e-12)
    assert a.request_per_s == pytest.approx(8 / 0.38, rel=1e-12)
    assert a.bound_by == "slots"
    assert saturation(law, t, Scheduler(max_num_seqs=8, replicas=3)) == pytest.approx(8 / 0.38, rel=1e-12)
    b = steady_state(law, t, Scheduler(max_num_seqs=256, max_num_batched_tokens=300))
    assert (b.requests_per_iteration, b.decodes) == (pytest.approx(30 / 11, rel=1e-12), pytest.approx(300 / 11, rel=1e-12))
    assert b.iteration_s == pytest.approx(0.817 / 11, rel=1e-12)
    assert b.request_per_s == pytest.approx(30 / 0.817, rel=1e-12)
    assert b.bound_by == "tokens"


def test_capacity_hands_saturation_and_each_step_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without mu, the search asks saturation with the requests, seed and allowance given; each
    step runs one replica (the scheduler's replicas are the caller's business) at the rate, with the
    requests given, through the caller's runner."""
    from budgetlint.physics import capacity as cap
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.traffic import Fixed

    asked: list = []
    monkeypatch.setattr(cap, "saturation", lambda *a, **kw: asked.append(kw) or 0.0)

    def allow(n: int) -> bool:
        return True

    got = cap.capacity(None, None, Scheduler(replicas=3), [TTFT], requests=500, seed=3,  # type: ignore[arg-type]
                       allowance=allow)
    assert asked == [{"requests": 500, "seed": 3, "allowance": allow}]
    assert got == cap.Capacity(0.0, 0.0, 0.0, 1, None)  # mu 0: nothing can hold

    steps: list = []
    # a step is read with load_stats.glance (sim3, issue 28), a whole run with summarise
    monkeypatch.setattr(cap, "summarise", lambda raw, promises, cdf=True: _result((0.3, 0.28, 0.34)))
    monkeypatch.setattr(cap, "glance", lambda raw, promises: _result((0.3, 0.28, 0.34)))
    traffic = Traffic(prompt=Fixed(100), output=Fixed(10), arrival_rate_per_s=1.0)
    cap.capacity(None, traffic, Scheduler(replicas=3), [TTFT], requests=500, mu=10.0, max_simulations=2,  # type: ignore[arg-type]
                 runner=lambda t, s, n: steps.append((t.arrival_rate_per_s, s.replicas, n)))
    # nothing has failed and no two passes: the first step is just below mu, 10 - 0.45 x 0.02 x 10
    assert steps == [(pytest.approx(9.91, rel=1e-12), 1, 500)]


class _Alternating:
    """Replies of 3 and 13 tokens in turn (mean 8), whatever the generator: a mix known exactly,
    so the closed form's context weighting can be worked by hand."""

    def __init__(self, *lengths: int) -> None:
        self.lengths, self.drawn = lengths, 0

    def sample(self, rng: object) -> int:
        self.drawn += 1
        return self.lengths[(self.drawn - 1) % len(self.lengths)]

    @property
    def mean(self) -> float:
        return sum(self.lengths) / len(self.lengths)


class _ContextLaw:
    """An iteration of B decodes over C context tokens beside prefill chunks of u new tokens:
    10 ms + 1 ms a decode + 0.1 ms a context token + 0.1 ms a new prompt token."""

    tokens_per_pass = 1.0
    spec_tokens = 1

    def iteration_s(self, batch: int, context_tokens: float, prefill: list) -> float:
        return 0.010 + 0.001 * batch + 1e-4 * context_tokens + 1e-4 * sum(u for u, _ in prefill)


def test_the_closed_form_weights_each_reply_context_by_its_decode_iterations() -> None:
    """Prompts of 100, replies of 3 and 13 tokens half each (mean 8), 6 slots, a 2,048-token budget.
    A reply of O tokens takes O - 1 decode iterations (its first token comes with the prefill): 2
    and 12, mean n = 7. Over them its context averages P + O / 2: 101.5 and 106.5, so the decodes
    hold, weighted by their iterations, C = (2 x 101.5 + 12 x 106.5) / 14 = 1481 / 14 = 105.7857
    tokens each (an unweighted mean would be 104; weighting by O - 2 gives 1273 / 12 = 106.08).
    q = 1 (100 tokens fit the budget), r = 6 / (7 + 1) = 0.75 (the tokens allow 2048 / 107 = 19),
    d = r n = 5.25; a share 0.75 of the iterations carry the prompt beside round(6 - 1) = 5
    decodes (10 + 5 + 0.5 C + 10 ms), the rest 6 decodes (10 + 6 + 0.6 C ms):
    t = 0.75 (25 + 0.5 C) + 0.25 (16 + 0.6 C) = 22.75 + 0.525 C ms = 78.2875 ms, mu = 0.75 / t."""
    from budgetlint.physics.capacity import steady_state
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.traffic import Fixed

    context = (2 * (100 + 3 / 2) + 12 * (100 + 13 / 2)) / (2 + 12)
    assert context == pytest.approx(1481 / 14, rel=1e-15)
    t_ms = 0.75 * (25 + 0.5 * context) + 0.25 * (16 + 0.6 * context)
    assert t_ms == pytest.approx(78.2875, rel=1e-12)
    traffic = Traffic(prompt=Fixed(100), output=_Alternating(3, 13), arrival_rate_per_s=1.0)  # type: ignore[arg-type]
    got = steady_state(_ContextLaw(), traffic, Scheduler(max_num_seqs=6, max_num_batched_tokens=2048))  # type: ignore[arg-type]
    assert (got.requests_per_iteration, got.decodes) == (pytest.approx(0.75, rel=1e-12), pytest.approx(5.25, rel=1e-12))
    assert got.bound_by == "slots"
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)
    assert got.request_per_s == pytest.approx(0.75 / (t_ms / 1000), rel=1e-12)


# --- the capacity search's first step, from what a caller already knows (known runs, alone) ------

KEY = "ttft_s.p95"


def _step_result(ttft: float) -> SimulationResult:
    """A simulated step whose TTFT p95 is ``ttft``: met when at most the 0.5 s limit."""
    r = _result((ttft, ttft * 0.99, ttft * 1.01))
    r.promises_met[KEY] = ttft <= 0.5
    return r


def _search(monkeypatch: pytest.MonkeyPatch, mu: float, known: list, *, step_ttft: float | list = 0.3,
            alone: dict | None = None, rel_tol: float = 0.02, max_simulations: int = 2,
            rejected: int = 0) -> tuple:
    """capacity() with ``mu`` given and the caller's runner: the rates it simulated, and its answer.
    ``step_ttft``: every step's TTFT p95, or each step's in turn."""
    from budgetlint.physics import capacity as cap
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.traffic import Fixed

    rates: list[float] = []

    def runner(traffic: Traffic, scheduler: Scheduler, requests: int) -> SimulationResult:
        assert scheduler.replicas == 1
        rates.append(traffic.arrival_rate_per_s)  # type: ignore[arg-type]
        res = _step_result(step_ttft[len(rates) - 1] if isinstance(step_ttft, list) else step_ttft)
        return replace(res, rejected=rejected) if rejected else res

    def glance(raw: SimulationResult, promises: list) -> SimulationResult:
        assert promises == [TTFT]
        return raw

    monkeypatch.setattr(cap, "glance", glance)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(10), arrival_rate_per_s=1.0)
    got = cap.capacity(None, traffic, Scheduler(replicas=4), [TTFT], mu=mu,  # type: ignore[arg-type]
                       known=[(rate, _step_result(t)) for rate, t in known], alone=alone, rel_tol=rel_tol,
                       max_simulations=max_simulations, runner=runner)
    return rates, got


def test_with_nothing_failed_the_first_step_aims_at_the_line_through_alone_and_the_known_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """mu = 10, a request alone at TTFT 0.1 s (ratio 0.2 at rate 0), a known pass at 2 request/s with
    0.2 s (ratio 0.4). In x = rate / (mu - rate) they are x = 0 and 0.25; the line reaches ratio 1 at
    x = 0.8 x 0.25 / 0.2 = 1, rate 10 x 1 / 2 = 5, below the bracket's middle (2 + 10) / 2 = 6: the
    step is at 5. It passes (0.3 s): the capacity 5, nothing failed (binding None, failing rate mu).
    Known runs at mu or beyond (12, 10 request/s), or at rate 0, are outside the search and left out."""
    rates, got = _search(monkeypatch, 10.0, [(12.0, 0.9), (10.0, 0.9), (0.0, 0.9), (2.0, 0.2)], alone={KEY: 0.1})
    assert rates == [pytest.approx(5.0, rel=1e-12)]
    assert (got.request_per_s, got.saturation_request_per_s, got.failing_request_per_s, got.simulations) == (
        pytest.approx(5.0, rel=1e-12), 10.0, 10.0, 2)
    assert got.binding is None
    assert got.points == ((pytest.approx(5.0, rel=1e-12), {KEY: 0.3}),)
    # without the request alone there is one point below: no line, so the top less 0.45 x 2 % x mu
    rates, _ = _search(monkeypatch, 10.0, [(2.0, 0.2)])
    assert rates == [pytest.approx(10.0 - 0.45 * 0.2, rel=1e-12)]


def test_between_a_known_pass_and_a_known_failure_the_first_step_is_the_chord(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """mu = 10, known: a pass at 4 request/s (TTFT 0.25 s, ratio 0.5) and a failure at 6 (0.625 s,
    1.25): the bracket is (4, 6), the binding promise TTFT. Regula falsi on ln(ratio):
    rate = (4 ln 1.25 - 6 ln 0.5) / (ln 1.25 - ln 0.5) = 5.0515 / 0.9163 = 5.513 (a bisection would take 5). The step
    fails (0.55 s): the bracket closes to (4, 5.513)."""
    chord = (4 * math.log(1.25) - 6 * math.log(0.5)) / (math.log(1.25) - math.log(0.5))
    assert 5.51 < chord < 5.52
    rates, got = _search(monkeypatch, 10.0, [(4.0, 0.25), (6.0, 0.625)], step_ttft=0.55)
    assert rates == [pytest.approx(chord, rel=1e-12)]
    assert (got.request_per_s, got.failing_request_per_s, got.simulations, got.binding) == (
        4.0, pytest.approx(chord, rel=1e-12), 2, KEY)


def test_a_bracket_within_twice_the_stop_width_is_bisected_and_one_within_it_is_done(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """mu = 8 at a 25 % stop width (2 request/s): known pass at 2 (ratio 0.5), failure at 6 (1.25):
    the bracket is exactly twice the width, so the step bisects it at 4, not the chord's 5.03. A
    bracket (2, 4) of exactly the width is already narrow enough: no step, 1 simulation (mu's)."""
    rates, got = _search(monkeypatch, 8.0, [(2.0, 0.25), (6.0, 0.625)], rel_tol=0.25, step_ttft=0.45)
    assert rates == [4.0]
    assert (got.request_per_s, got.failing_request_per_s, got.binding) == (4.0, 6.0, KEY)
    rates, got = _search(monkeypatch, 8.0, [(2.0, 0.25), (4.0, 0.625)], rel_tol=0.25)
    assert rates == [] and got == _capacity(2.0, 8.0, 4.0, 1, KEY)
    # a bracket (2, 7) between twice and three times the width: the chord,
    # (2 ln 1.25 - 7 ln 0.5) / (ln 1.25 - ln 0.5) = 5.782, not the middle 4.5
    chord = (2 * math.log(1.25) - 7 * math.log(0.5)) / (math.log(1.25) - math.log(0.5))
    rates, _ = _search(monkeypatch, 8.0, [(2.0, 0.25), (7.0, 0.625)], rel_tol=0.25)
    assert rates == [pytest.approx(chord, rel=1e-12)] and 5.78 < chord < 5.79


def _capacity(*args: object) -> object:
    from budgetlint.physics.capacity import Capacity

    return Capacity(*args)  # type: ignore[arg-type]


def test_a_saturation_that_is_not_a_positive_finite_rate_holds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """mu infinite or negative: no search (0 request/s, failing at 0); mu = 0.5 (below 1) is a rate
    like any other: the first step, with nothing known, is the top less 0.45 x 2 % x 0.5."""
    for mu in (math.inf, -1.0):
        rates, got = _search(monkeypatch, mu, [])
        assert rates == [] and got == _capacity(0.0, mu, 0.0, 1, None)
    rates, got = _search(monkeypatch, 0.5, [])
    assert rates == [pytest.approx(0.5 - 0.45 * 0.01, rel=1e-12)]
    assert got.request_per_s == pytest.approx(0.4955, rel=1e-12) and got.binding is None


# --- more of the closed form by hand: speculation, a prefix cache, the token budget, r > 1 --------

class _Law:
    """10 ms + 1 ms a decode + 0.01 ms a context token + 0.01 ms a new prompt token an iteration,
    ``a`` tokens accepted a pass, ``k`` budget tokens a decode takes."""

    def __init__(self, a: float = 1.0, k: int = 1, scale: float = 1.0) -> None:
        self.tokens_per_pass, self.spec_tokens, self.scale = a, k, scale

    def iteration_s(self, batch: int, context_tokens: float, prefill: list) -> float:
        return self.scale * 1e-3 * (10 + batch + 0.01 * context_tokens + 0.01 * sum(u for u, _ in prefill))


def _ms(b: int, context: float, new: float = 0.0) -> float:
    """_Law's iteration in ms: b decodes each holding ``context`` tokens, ``new`` prompt tokens."""
    return 10 + b + 0.01 * b * context + 0.01 * new


def _steady(law: _Law, prompt: object, output: object, **kw: object) -> object:
    from budgetlint.physics.capacity import steady_state
    from budgetlint.physics.serving_sim import Scheduler, Traffic

    hit = {k: kw.pop(k) for k in ("prefix_hit_tokens", "prefix_hit_requests") if k in kw}
    traffic = Traffic(prompt=prompt, output=output, arrival_rate_per_s=1.0, **hit)  # type: ignore[arg-type]
    return steady_state(law, traffic, Scheduler(**kw))  # type: ignore[arg-type, arg-type]


def test_speculation_and_a_prefix_cache_in_the_closed_form_by_hand() -> None:
    """Prompts of 1,000 tokens, a prefix cache hitting half the tokens of half the requests (a share
    0.25: 250 cached, 750 new), replies of 21 tokens at 2 tokens a pass (n = 20 / 2 = 10 decode
    iterations), each decode taking k = 3 budget tokens, 7 slots, a 512-token budget. A prompt's 750
    new tokens take q = ceil(750 / 512) = 2 iterations (the decodes leave 512 - 3 d = 494.5: still 2);
    the slots allow r = 7 / (10 + 2) = 7/12, the tokens 512 / (10 x 3 + 750) = 0.656: the slots bind;
    d = 10 r = 5.833. A decode holds 1000 + 21 / 2 = 1010.5 tokens. A share 7/12 of the iterations
    carry a 512-token chunk beside round(d + r - 1) = 5 decodes, the rest round(6.417) = 6 decodes."""
    got = _steady(_Law(a=2.0, k=3), Fixed(1000), Fixed(21), prefix_hit_tokens=0.5, prefix_hit_requests=0.5,
                  max_num_seqs=7, max_num_batched_tokens=512)
    r = 7 / 12
    t_ms = r * _ms(5, 1010.5, 512) + (1 - r) * _ms(6, 1010.5)
    assert 73.13 < t_ms < 73.14
    assert (got.requests_per_iteration, got.decodes, got.bound_by) == (
        pytest.approx(r, rel=1e-12), pytest.approx(10 * r, rel=1e-12), "slots")
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)
    assert got.request_per_s == pytest.approx(r / (t_ms / 1000), rel=1e-12)


def test_the_token_budget_binds_and_r_above_one_interpolates_the_prompts_by_hand() -> None:
    """Prompts of 100, replies of 11 (n = 10), k = 2, 256 slots, a 300-token budget: the tokens allow
    r = 300 / (10 x 2 + 100) = 2.5 requests an iteration (the slots 256 / 11), d = 25; every iteration
    carries 2 or 3 prompts, half each: t = (63.375 + 64.375) / 2 ms (25 decodes at 105.5 tokens each
    beside 200 or 300 new tokens). At a 240-token budget r = 2 exactly: every iteration carries 2
    prompts beside 20 decodes, 53.1 ms."""
    got = _steady(_Law(k=2), Fixed(100), Fixed(11), max_num_batched_tokens=300)
    t_ms = 0.5 * _ms(25, 105.5, 200) + 0.5 * _ms(25, 105.5, 300)
    assert t_ms == pytest.approx(63.875, rel=1e-12)
    assert (got.requests_per_iteration, got.decodes, got.bound_by) == (2.5, 25.0, "tokens")
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)
    assert got.request_per_s == pytest.approx(2.5 / (t_ms / 1000), rel=1e-12)
    two = _steady(_Law(k=2), Fixed(100), Fixed(11), max_num_batched_tokens=240)
    assert two.requests_per_iteration == 2.0
    assert two.iteration_s == pytest.approx(_ms(20, 105.5, 200) / 1000, rel=1e-12) == pytest.approx(0.0531)


def test_slots_and_tokens_at_a_tie_are_bound_by_the_slots() -> None:
    """Prompts of 10, replies of 11: 11 slots allow 11 / (10 + 1) = 1, a 20-token budget 20 / (10 + 10)
    = 1; the slots are named. r = 1: every iteration carries the prompt beside d = 10 decodes."""
    got = _steady(_Law(), Fixed(10), Fixed(11), max_num_seqs=11, max_num_batched_tokens=20)
    assert (got.requests_per_iteration, got.bound_by) == (1.0, "slots")
    assert got.iteration_s == pytest.approx(_ms(10, 15.5, 10) / 1000, rel=1e-12)


def test_one_token_replies_weigh_nothing_in_the_context() -> None:
    """Replies of 1 and 21 tokens in turn (mean 11, n = 10): a 1-token reply has no decode iteration,
    so the decodes hold 100 + 21 / 2 = 110.5 tokens (counting it as 2 tokens would give 110.05).
    4 slots: r = 4 / 11, d = 40 / 11; 4/11 of the iterations carry the prompt beside 3 decodes."""
    got = _steady(_Law(), Fixed(100), _Alternating(1, 21), max_num_seqs=4)
    r = 4 / 11
    t_ms = r * _ms(3, 110.5, 100) + (1 - r) * _ms(4, 110.5)
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)


def test_a_prompt_wholly_cached_still_prefills_one_token() -> None:
    """Every prompt token cached: one new token a request (its prefill still takes an iteration's
    slot): 4 slots, replies of 11: r = 4 / 11, 4/11 of the iterations carry 1 new token beside 3
    decodes (105.5 tokens each)."""
    got = _steady(_Law(), Fixed(100), Fixed(11), prefix_hit_tokens=1.0, prefix_hit_requests=1.0, max_num_seqs=4)
    r = 4 / 11
    t_ms = r * _ms(3, 105.5, 1) + (1 - r) * _ms(4, 105.5)
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)


def test_an_iteration_that_costs_nothing_serves_without_limit() -> None:
    got = _steady(_Law(scale=0.0), Fixed(100), Fixed(11))
    assert got.iteration_s == 0.0 and got.request_per_s == math.inf


def test_saturation_users_count_at_least_one_token_a_sequence() -> None:
    """Empty prompts and 1-token replies hold 1 token each: a 10-token cache holds 10 users (the
    floor of 1 token, not 2); 25 tokens at 2 + 3 = 5 a sequence hold 5."""
    from budgetlint.physics.capacity import saturation_users
    from budgetlint.physics.serving_sim import Scheduler, Traffic

    assert saturation_users(Traffic(prompt=Fixed(0), output=Fixed(1), arrival_rate_per_s=1.0),
                            Scheduler(kv_capacity_tokens=10)) == 10
    assert saturation_users(Traffic(prompt=Fixed(2), output=Fixed(3), arrival_rate_per_s=1.0),
                            Scheduler(kv_capacity_tokens=25)) == 5


def test_the_closed_form_s_draws_are_seeded() -> None:
    """Replies uniform on 2..40: the context weighting comes from seeded draws, so one seed gives
    one answer, call after call; the default is seed 0, saturation's too, and saturation passes its
    seed on (seed 5 draws other replies: another figure)."""
    from budgetlint.physics.capacity import saturation, steady_state
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.traffic import Uniform

    traffic = Traffic(prompt=Fixed(100), output=Uniform(2, 40), arrival_rate_per_s=1.0)
    law, sched = _Law(), Scheduler(max_num_seqs=8)
    zero = steady_state(law, traffic, sched, seed=0)  # type: ignore[arg-type]
    assert steady_state(law, traffic, sched, seed=0) == zero  # type: ignore[arg-type]
    assert steady_state(law, traffic, sched) == zero  # type: ignore[arg-type]
    assert saturation(law, traffic, sched) == zero.request_per_s  # type: ignore[arg-type]
    five = steady_state(law, traffic, sched, seed=5)  # type: ignore[arg-type]
    assert five.request_per_s != zero.request_per_s
    assert saturation(law, traffic, sched, seed=5) == five.request_per_s  # type: ignore[arg-type]


def test_the_line_uses_the_two_highest_passes_and_only_below_the_middle(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a third point, alone at rate 0 (ratio 0.2), passes at 1 (0.3) and 2 (0.4): the line
    through the two highest, (1, 0.3) and (2, 0.4), in x = 1/9 and 1/4: x* = 1/9 + 0.7 x (5/36) / 0.1
    = 1.0833, rate 10 x 1.0833 / 2.0833 = 5.2. A line that reaches the limit above the bracket's
    middle (alone 0.2, a pass at 2 with 0.25: x* = 0.8 x 0.25 / 0.05 = 4, rate 8 > 6) is not trusted:
    the step goes to the top less 0.45 x 2 % x mu, 9.91."""
    x = 1 / 9 + 0.7 * (1 / 4 - 1 / 9) / 0.1
    rates, _ = _search(monkeypatch, 10.0, [(1.0, 0.15), (2.0, 0.2)], alone={KEY: 0.1})
    assert rates == [pytest.approx(10 * x / (1 + x), rel=1e-12)] and 5.19 < rates[0] < 5.21
    rates, _ = _search(monkeypatch, 10.0, [(2.0, 0.125)], alone={KEY: 0.1})
    assert rates == [pytest.approx(9.91, rel=1e-12)]


def test_a_chord_near_an_end_is_kept_inside_the_bracket(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass at 4 just under the limit (ratio 0.99) and a failure at 6 far over it (100): the chord
    (4 ln 100 - 6 ln 0.99) / (ln 100 - ln 0.99) = 4.004 lies within 0.45 x 0.2 of the low end: the
    step is at 4 + 0.09. Near the high end (ratio 0.01 at 4, 1.01 at 6: 5.996) it is 6 - 0.09."""
    low = (4 * math.log(100) - 6 * math.log(0.99)) / (math.log(100) - math.log(0.99))
    assert 4.0 < low < 4.01
    rates, _ = _search(monkeypatch, 10.0, [(4.0, 0.495), (6.0, 50.0)])
    assert rates == [pytest.approx(4.09, rel=1e-12)]
    rates, _ = _search(monkeypatch, 10.0, [(4.0, 0.005), (6.0, 0.505)])
    assert rates == [pytest.approx(5.91, rel=1e-12)]


def test_two_chord_steps_that_move_the_same_end_are_followed_by_a_bisection(monkeypatch: pytest.MonkeyPatch) -> None:
    """mu = 10 at a 1 % stop width (0.1): a pass at 4 (ratio 0.5), a failure at 6 (1.25). Every step
    passes at ratio 0.9. Step 1, the chord: c1 = (4 ln 1.25 - 6 ln 0.5) / (ln 1.25 - ln 0.5) = 5.513;
    step 2, the chord from (c1, ln 0.9): c2 = (c1 ln 1.25 - 6 ln 0.9) / (ln 1.25 - ln 0.9) = 5.669;
    both moved the low end, so step 3 bisects (c2 + 6) / 2 = 5.835 (the bracket, 0.33, is still
    wider than twice the width). The capacity is 5.835, failing at 6 on TTFT, in 4 simulations."""
    l125, l05, l09 = math.log(1.25), math.log(0.5), math.log(0.9)
    c1 = (4 * l125 - 6 * l05) / (l125 - l05)
    c2 = (c1 * l125 - 6 * l09) / (l125 - l09)
    assert 5.66 < c2 < 5.67 and 6 - c2 > 0.2
    rates, got = _search(monkeypatch, 10.0, [(4.0, 0.25), (6.0, 0.625)], step_ttft=0.45, rel_tol=0.01,
                         max_simulations=4)
    assert rates == [pytest.approx(c1, rel=1e-12), pytest.approx(c2, rel=1e-12), pytest.approx((c2 + 6) / 2, rel=1e-12)]
    assert (got.request_per_s, got.failing_request_per_s, got.simulations, got.binding) == (
        pytest.approx((c2 + 6) / 2, rel=1e-12), 6.0, 4, KEY)
    assert [pt[0] for pt in got.points] == rates


def test_after_a_pass_the_line_runs_through_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 1 as in the first test (the line through alone and the known pass: rate 5), passing at
    ratio 0.6; step 2, the line through (2, 0.4) and (5, 0.6), in x = 0.25 and 1: x* = 0.25 + 0.6 x
    0.75 / 0.2 = 2.5, rate 10 x 2.5 / 3.5 = 7.143, below the middle 7.5. It fails (ratio 1.2): the
    points come back in rate order whatever order they were run in."""
    rates, got = _search(monkeypatch, 10.0, [(2.0, 0.2)], alone={KEY: 0.1}, step_ttft=[0.3, 0.6],
                         max_simulations=3)
    assert rates == [pytest.approx(5.0, rel=1e-12), pytest.approx(25 / 3.5, rel=1e-12)]
    assert (got.request_per_s, got.failing_request_per_s, got.binding) == (
        pytest.approx(5.0, rel=1e-12), pytest.approx(25 / 3.5, rel=1e-12), KEY)
    # a first step at 9.91 that fails, then the chord can not be drawn (no ratio below): a bisection
    rates, got = _search(monkeypatch, 10.0, [], step_ttft=[0.6, 0.3], max_simulations=3)
    assert rates == [pytest.approx(9.91, rel=1e-12), pytest.approx(9.91 / 2, rel=1e-12)]
    assert [pt[0] for pt in got.points] == sorted(rates)


def test_a_step_that_rejects_requests_breaks_the_search_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rejected requests: the ratio is infinite (no chord through it) and the binding is 'rejected'
    even with the TTFT met."""
    rates, got = _search(monkeypatch, 10.0, [], rejected=1)
    assert rates == [pytest.approx(9.91, rel=1e-12)]
    assert (got.request_per_s, got.failing_request_per_s, got.binding) == (0.0, pytest.approx(9.91, rel=1e-12),
                                                                           "rejected")


def test_without_a_runner_each_step_is_simulated_with_the_seed_and_the_allowance(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The default step: serving_sim.run of one replica at the rate, with the requests, seed and
    allowance given, read by glance for the promises."""
    from budgetlint.physics import capacity as cap
    from budgetlint.physics.serving_sim import Scheduler, Traffic

    calls: list = []

    def run(cost: object, traffic: Traffic, scheduler: Scheduler, **kw: object) -> SimulationResult:
        calls.append((cost, traffic.arrival_rate_per_s, scheduler.replicas, kw))
        return _step_result(0.3)

    def glance(raw: SimulationResult, promises: list) -> SimulationResult:
        assert promises == [TTFT]
        return raw

    def allow(n: int) -> bool:
        return True

    monkeypatch.setattr(cap, "run", run)
    monkeypatch.setattr(cap, "glance", glance)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(10), arrival_rate_per_s=1.0)
    got = cap.capacity("the cost", traffic, Scheduler(replicas=3), [TTFT], mu=10.0, requests=123,  # type: ignore[arg-type]
                       seed=7, allowance=allow, max_simulations=2)
    assert calls == [("the cost", pytest.approx(9.91, rel=1e-12), 1, {"requests": 123, "seed": 7, "allowance": allow})]
    assert got.request_per_s == pytest.approx(9.91, rel=1e-12)


def test_the_decodes_budget_tokens_can_push_a_prompt_into_a_second_iteration() -> None:
    """Prompts of 400, replies of 61 (n = 60), k = 2, 55 slots, a 500-token budget. Round 1: the
    whole budget is free, q = 1, the slots allow 55 / 61 (the tokens 500 / 520 = 0.96): d = 54.1,
    whose 108.2 budget tokens leave 391.8 < 400: round 2 takes q = 2, r = 55 / 62, d = 53.2
    (106.5 tokens: 393.5 left, still q = 2). A share r of the iterations carry the 400-token prompt
    beside round(d + r - 1) = 53 decodes at 400 + 61 / 2 = 430.5 tokens, the rest 54 decodes."""
    got = _steady(_Law(k=2), Fixed(400), Fixed(61), max_num_seqs=55, max_num_batched_tokens=500)
    r = 55 / 62
    assert 500 - 2 * 60 * 55 / 61 < 400 and 500 - 2 * 60 * r < 400  # 391.8 and 393.5
    assert (got.requests_per_iteration, got.decodes, got.bound_by) == (
        pytest.approx(r, rel=1e-12), pytest.approx(60 * r, rel=1e-12), "slots")
    t_ms = r * _ms(53, 430.5, 400) + (1 - r) * _ms(54, 430.5)
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)


class _OneLonger:
    """One 2-token reply, then 1-token replies only (mean 1.001 over the 1,000 draws)."""

    mean = 1.001

    def __init__(self) -> None:
        self.drawn = 0

    def sample(self, rng: object) -> int:
        self.drawn += 1
        return 2 if self.drawn == 1 else 1


def test_a_single_decode_iteration_in_all_still_weighs_the_context() -> None:
    """The 1,000 draws hold one decode iteration in all (weight 1): the decodes' context is that
    reply's, 100 + 2 / 2 = 101 tokens, not the mean prompt. One slot, n = 0.001: r = 1 / 1.001; the
    share 1 - r of iterations with the slot decoding hold 1 decode at 101 tokens."""
    got = _steady(_Law(), Fixed(100), _OneLonger(), max_num_seqs=1)
    r = 1 / 1.001
    t_ms = r * _ms(0, 101, 100) + (1 - r) * _ms(1, 101)
    assert got.iteration_s == pytest.approx(t_ms / 1000, rel=1e-12)


def test_a_budget_the_decodes_leave_under_two_tokens_by_hand() -> None:
    """Budgets of 2 and 3 tokens, where what the decodes leave is between 1 and 2 tokens.
    (a) 1-token prompts, 2-token replies (n = 1), one slot, 2 tokens: r = 1 / (1 + 1) = 1/2, the
    decode takes 0.5 of the budget and the prompt's 1 new token fits the 1.5 left: q stays 1.
    (b) 2-token prompts with a tenth cached (1.8 new), 2-token replies, k = 2, two slots, 3 tokens:
    round 1 q = 1, r = min(2 / 2, 3 / (2 + 1.8) = 0.789) = 0.789; round 2 the decodes take 1.58,
    leaving 1.42 < 1.8: q = 2, r = 2 / 3; round 3 they leave 1.67, q = 2: the slots bind at 2/3."""
    a = _steady(_Law(), Fixed(1), Fixed(2), max_num_seqs=1, max_num_batched_tokens=2)
    assert a.requests_per_iteration == 0.5 and a.bound_by == "slots"
    b = _steady(_Law(k=2), Fixed(2), Fixed(2), prefix_hit_tokens=0.1, prefix_hit_requests=1.0,
                max_num_seqs=2, max_num_batched_tokens=3)
    assert 3 - 2 * 3 / 3.8 < 1.8 and 3 - 2 * 2 / 3 < 1.8  # 1.42 and 1.67 left: two iterations
    assert b.requests_per_iteration == pytest.approx(2 / 3, rel=1e-12) and b.bound_by == "slots"
