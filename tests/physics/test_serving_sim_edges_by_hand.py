"""serving_sim's edges that a sampled mutation run (issue 22) found unguarded: the smallest run it
accepts, and the words of a simulation stopped for its length."""

from __future__ import annotations

import pytest

from budgetlint.physics.serving_sim import Scheduler, SimulationTooLong, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed


def test_two_requests_are_the_smallest_run() -> None:
    """Two requests of 10 prompt and 3 output tokens, closed loop of one user: both are served, the
    second after the first (no warm-up). One request is refused."""
    law = LinearStepCost(0.01)
    raw = run(law, Traffic(prompt=Fixed(10), output=Fixed(3), concurrency=1), Scheduler(), requests=2, warmup=0)
    assert [r.index for r in raw.records] == [0, 1]
    with pytest.raises(ValueError):
        run(law, Traffic(prompt=Fixed(10), output=Fixed(3), concurrency=1), Scheduler(), requests=1, warmup=0)


def test_a_simulation_too_long_names_what_made_it_long() -> None:
    """Stopped after 5 scheduler events: the words give the events, the requests, the iteration
    budget, the replicas and the KV cache the user can change."""
    law = LinearStepCost(0.01)
    with pytest.raises(SimulationTooLong) as got:
        run(law, Traffic(prompt=Fixed(10), output=Fixed(3), arrival_rate_per_s=10.0),
            Scheduler(replicas=2, max_num_batched_tokens=512, kv_capacity_tokens=4096), requests=60, max_events=5)
    words = str(got.value)
    assert words.startswith("the simulation needed more than 5 scheduler events for 60 requests")
    assert "an iteration budget of 512 tokens, 2 replicas or a KV cache of 4096 tokens makes it too long" in words


def test_a_trace_at_another_rate_is_stretched_or_squeezed() -> None:
    """Four arrivals 1 s apart (3 gaps over 3 s: 1 request/s) replayed at 2 request/s come every
    0.5 s; at 0.5 request/s every 2 s."""
    trace = Traffic(arrival_times_s=(10.0, 11.0, 12.0, 13.0))
    assert trace.arrival_times_s == (0.0, 1.0, 2.0, 3.0) and trace.trace_rate_per_s == 1.0
    assert trace.at_rate(2.0).arrival_times_s == (0.0, 0.5, 1.0, 1.5)
    assert trace.at_rate(0.5).arrival_times_s == (0.0, 2.0, 4.0, 6.0)
    assert trace.at_rate(2.0).arrival_rate_per_s is None


@pytest.mark.parametrize("rate", [-1, 0, -0.5, float("inf"), float("nan"), "2"])
def test_an_arrival_rate_must_be_a_positive_finite_number(rate: object) -> None:
    with pytest.raises(ValueError) as got:
        Traffic(arrival_rate_per_s=rate)  # type: ignore[arg-type]
    assert str(got.value) == f"arrival_rate_per_s must be positive and finite, got {rate!r}"


def test_a_closed_loop_needs_one_user_or_more() -> None:
    with pytest.raises(ValueError) as got:
        Traffic(concurrency=0)
    assert str(got.value) == "concurrency must be an integer >= 1, got 0"


def test_least_loaded_sends_each_request_to_an_empty_replica_once_the_last_one_left() -> None:
    """One-token replies (the prefill gives the only token: the request ends as its decode would
    start) arriving 10 s apart on two replicas, least loaded: each request is gone long before the
    next (an iteration of 10 ms), so both replicas are empty at every arrival and the tie goes to
    replica 0 every time; round robin alternates 0, 1, 0, 1."""
    law = LinearStepCost(0.01, prefill_fixed_s=0.01)
    trace = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=(0.0, 10.0, 20.0, 30.0))
    least = run(law, trace, Scheduler(replicas=2, load_balancer="least_loaded"), requests=4, warmup=0)
    assert [r.replica for r in least.records] == [0, 0, 0, 0]
    robin = run(law, trace, Scheduler(replicas=2), requests=4, warmup=0)
    assert [r.replica for r in robin.records] == [0, 1, 0, 1]


def test_least_loaded_is_nvidias_harness_load_balancing() -> None:
    """NVIDIA's MLPerf harness in the Server scenario (closed/NVIDIA/code/llmlib/factory.py
    ``load_balancing``, ntuhpc/inference_results_v5.1 @ 387c3dd): each query goes to
    ``min(queue_sizes, key=queue_sizes.get)`` over the cores' pending samples, a sample pending from
    its enqueue until its final token (cores/base.py ``enqueue`` / ``_poll_responses``), the first
    core on ties. That rule, written here over the simulated requests' own arrival and finish times,
    picks the replica the simulator picked for every one of 400 Poisson arrivals on 4 replicas
    (issue 25, ttft25)."""
    law = LinearStepCost(0.01, 0.001, 0.01, 0.0001)
    traffic = Traffic(prompt=Fixed(100), output=Fixed(20), arrival_rate_per_s=200.0)
    raw = run(law, traffic, Scheduler(replicas=4, load_balancer="least_loaded"), requests=400, warmup=0)
    done: list[tuple[float, int]] = []  # (finish, replica) of the requests already sent
    for r in sorted(raw.records, key=lambda r: r.arrival_s):
        pending = [sum(1 for f, k in done if k == j and f > r.arrival_s) for j in range(4)]
        assert r.replica == min(range(4), key=lambda j: pending[j]), r.index
        done.append((r.arrival_s + r.e2e_s, r.replica))
    assert len({r.replica for r in raw.records}) == 4


def test_random_balancer_draws_each_replica_equally_and_independently() -> None:
    """``random`` sends each arrival to a replica drawn uniformly (issue 25, ttft25: a router whose
    scores tie, the llm-d inference scheduler's picker). By hand: over 4,000 arrivals on 4 replicas
    each replica's count is binomial(4,000, 1/4), mean 1,000 and sd sqrt(4,000 x 1/4 x 3/4) = 27.4,
    so within 1,000 +- 110 (4 sd); two consecutive arrivals share a replica with probability 1/4
    (binomial(3,999, 1/4): 1,000 +- 110), where round robin never sends two running to one. Requests
    of one token each on an idle system (10 s apart, done in 10 ms) leave the balancer nothing to
    weigh. The same seed draws the same routes; a checkpointed stream draws them too."""
    law = LinearStepCost(0.01, prefill_fixed_s=0.01)
    trace = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=tuple(10.0 * i for i in range(4000)))
    sched = Scheduler(replicas=4, load_balancer="random")
    raw = run(law, trace, sched, requests=4000, warmup=0)
    routes = [r.replica for r in sorted(raw.records, key=lambda r: r.index)]
    for j in range(4):
        assert abs(routes.count(j) - 1000) <= 110, (j, routes.count(j))
    same = sum(1 for a, b in zip(routes, routes[1:]) if a == b)
    assert abs(same - 1000) <= 110, same
    assert routes == [r.replica for r in sorted(run(law, trace, sched, requests=4000, warmup=0).records,
                                                key=lambda r: r.index)]
    robin = run(law, trace, Scheduler(replicas=4), requests=4000, warmup=0)
    assert all(r.replica == r.index % 4 for r in robin.records)
    with pytest.raises(ValueError, match="round_robin, least_loaded, random"):
        Scheduler(replicas=2, load_balancer="nearest")


def test_a_simulation_too_long_counts_in_words() -> None:
    """One token, one replica: "an iteration budget of 1 token, 1 replica" (until stop 47 "1 tokens, 1 replicas")."""
    law = LinearStepCost(0.01)
    with pytest.raises(SimulationTooLong) as got:
        run(law, Traffic(prompt=Fixed(10), output=Fixed(3), arrival_rate_per_s=10.0),
            Scheduler(replicas=1, max_num_batched_tokens=1, kv_capacity_tokens=4096), requests=60, max_events=5)
    assert "an iteration budget of 1 token, 1 replica or a KV cache of 4096 tokens makes it too long" in str(got.value)
