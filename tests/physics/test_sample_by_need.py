"""Sample size by need (issue 28): one stream of arrivals read at checkpoints.

``serving_sim.stream`` yields, at each checkpoint m, the run of the first m requests of one
stream; the declared traffic's simulation (evaluate/load.py) stops at the first checkpoint where
every promise is settled (a capacity step is read whole). What is checked here, each against a source of its own:

* read to its end, a stream is the plain run, field for field (checkpoints change nothing);
* a checkpoint's requests are the longer stream's own, request by request, and its window
  counters are the stream's at the arrival of request m - 1: the time integral of requests in the
  system recomputed from the records' own arrival and end times (Little's law by hand);
* the work budget's hook counts every event exactly once however the stream is read, and a
  spent budget stops it at a checkpoint;
* the reading rules: the tail floor and the steady state, on results written by hand.
"""

from __future__ import annotations

import math

import pytest

from budgetlint.physics.capacity import TAIL_FLOOR, steady, tail_enough
from budgetlint.physics.load_stats import PercentilePromise, SimulationResult, glance, summarise
from budgetlint.physics.serving_sim import Scheduler, Traffic, WorkSpent, run, stream
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import LogNormal

COST = LinearStepCost(0.01, 1e-4, prefill_fixed_s=0.02, prefill_per_token_s=1e-5)
SCHED = Scheduler(max_num_seqs=8, max_num_batched_tokens=2048, kv_capacity_tokens=20_000, replicas=2)
CHAT = dict(prompt=LogNormal(300, 900), output=LogNormal(60, 180), prefix_hit_tokens=0.5, prefix_hit_requests=0.5)
BUSY = Traffic(arrival_rate_per_s=6.0, **CHAT)


def test_a_stream_read_to_its_end_is_the_plain_run() -> None:
    plain = run(COST, BUSY, SCHED, requests=600, warmup=50)
    got = list(stream(COST, BUSY, SCHED, requests=600, warmup=50, checkpoints=(100, 200, 400)))
    assert [m for m, _ in got] == [100, 200, 400, None]
    assert got[-1][1] == plain
    # run() with a rule that never stops: the same
    assert run(COST, BUSY, SCHED, requests=600, warmup=50, checkpoints=(100, 200, 400), stop=lambda raw: False) == plain


def test_a_checkpoint_is_the_first_m_requests_of_the_stream() -> None:
    full = run(COST, BUSY, SCHED, requests=600, warmup=0)  # every request measured: the reference
    by_index = {r.index: r for r in full.records}
    cuts = dict((m, raw) for m, raw in stream(COST, BUSY, SCHED, requests=600, warmup=50, checkpoints=(100, 200))
                if m is not None)
    for m, cut in cuts.items():
        assert [r.index for r in cut.records] == list(range(50, m))
        assert all(by_index[r.index] == r for r in cut.records)  # the longer stream's own requests
        w0, w1 = cut.window_start_s, cut.window_end_s
        assert w0 == by_index[50].arrival_s and w1 == by_index[m - 1].arrival_s
        # the time integral of requests in the system over [w0, w1], by hand from every request's
        # arrival and end (those after m - 1 included: they loaded the system too)
        area = sum(max(0.0, min(r.arrival_s + r.e2e_s, w1) - max(r.arrival_s, w0)) for r in full.records)
        assert cut.in_system_area == pytest.approx(area, rel=1e-12)
        assert cut.arrivals_in_window == m - 50
        ends = [r.arrival_s + r.e2e_s for r in full.records]
        assert cut.completions_in_window == sum(1 for e in ends if w0 <= e <= w1)
        assert cut.output_tokens_in_window == sum(r.output_tokens for r, e in zip(full.records, ends) if w0 <= e <= w1)
        # Little's law over the cut: arrivals x mean sojourn within a few % of the mean in the system
        res = summarise(cut)
        assert res.mean_in_system == pytest.approx(res.arrival_rate_per_s * res.mean_sojourn_s, rel=0.1)


def test_the_hook_counts_each_event_once_and_a_spent_budget_stops_at_a_checkpoint() -> None:
    plain: list[int] = []
    run(COST, BUSY, SCHED, requests=600, warmup=50, allowance=lambda n: plain.append(n) or True)
    read: list[int] = []
    for _ in stream(COST, BUSY, SCHED, requests=600, warmup=50, checkpoints=(100, 200, 400),
                    allowance=lambda n: read.append(n) or True):
        pass
    assert sum(read) == sum(plain) > 0
    calls = []

    def spent_at_first_checkpoint(n: int) -> bool:
        calls.append(n)
        return False

    with pytest.raises(WorkSpent):
        for _ in stream(COST, Traffic(arrival_rate_per_s=1.0, **CHAT), SCHED, requests=600, warmup=50,
                        checkpoints=(100,), allowance=spent_at_first_checkpoint):
            pass
    assert len(calls) == 1 and calls[0] < 1024  # told at the checkpoint, before the periodic call
    # the words: the events the hook was told (all of them: nothing was counted before), and the
    # checkpoint's 100 of the stream's 600 requests
    with pytest.raises(WorkSpent) as spent:
        for _ in stream(COST, Traffic(arrival_rate_per_s=1.0, **CHAT), SCHED, requests=600, warmup=50,
                        checkpoints=(100,), allowance=lambda n: False):
            pass
    assert str(spent.value) == (f"the run's work budget for the simulation ran out after {calls[0]} events of "
                                "this one (100 of 600 requests read)")


def test_the_stopping_rule_reads_each_checkpoints_run() -> None:
    """run(stop=...) hands the rule each checkpoint's run: at 100 and 200 requests with a warm-up of
    50, the measured records are requests 50..99 and 50..199 (50 and 150 of them); a rule that stops at
    the second returns that run."""
    seen: list[int] = []

    def rule(raw) -> bool:  # type: ignore[no-untyped-def]
        seen.append(len(raw.records))
        return len(raw.records) >= 150

    got = run(COST, BUSY, SCHED, requests=600, warmup=50, checkpoints=(100, 200, 400), stop=rule)
    assert seen == [50, 150]
    assert [r.index for r in got.records] == list(range(50, 200))


def test_checkpoints_need_an_open_loop() -> None:
    with pytest.raises(ValueError, match="open loop"):
        run(COST, Traffic(concurrency=4, **CHAT), SCHED, requests=300, checkpoints=(100,), stop=lambda raw: True)


def _result(requests: int, point: float, lo: float, hi: float, in_system: float, pct: float = 90.0,
            rejected: int = 0) -> SimulationResult:
    label = f"p{pct:g}"
    nan = math.nan
    return SimulationResult(predicted={"ttft_s": {label: point}}, interval={f"ttft_s.{label}": (lo, hi)},
                            busy_fraction=nan, batch_size_mean=nan, batch_size_p95=nan, preemptions_per_request=nan,
                            slo_attainment=nan, goodput_request_per_s=nan, throughput_request_per_s=nan,
                            output_token_per_s=nan, arrival_rate_per_s=nan, mean_in_system=in_system,
                            mean_sojourn_s=nan, requests=requests, rejected=rejected, replicas=1, window_s=1.0,
                            promises_met={f"ttft_s.{label}": point <= 1.0})


P90 = [PercentilePromise("ttft_s", 90, 1.0)]
P99 = [PercentilePromise("ttft_s", 99, 1.0)]


def test_the_tail_floor_is_the_400_request_runs_p99() -> None:
    # 350 measured (a 400-request run less its 50 warm-up) x 1 % = 3.5 requests beyond p99
    assert TAIL_FLOOR == 3.5
    assert tail_enough(_result(350, 0.5, 0.4, 0.6, 1.0, pct=99), P99)
    assert not tail_enough(_result(349, 0.5, 0.4, 0.6, 1.0, pct=99), P99)
    assert tail_enough(_result(35, 0.5, 0.4, 0.6, 1.0), P90)  # 35 x 10 % = 3.5
    assert not tail_enough(_result(34, 0.5, 0.4, 0.6, 1.0), P90)


def test_steady_means_ten_turnovers_of_the_system() -> None:
    assert steady(_result(150, 0.5, 0.4, 0.6, in_system=15.0), 10)
    assert not steady(_result(150, 0.5, 0.4, 0.6, in_system=15.1), 10)
    assert not steady(_result(150, 0.5, 0.4, 0.6, in_system=math.nan), 10)


def test_glance_reads_the_promises_as_summarise_does() -> None:
    raw = run(COST, BUSY, SCHED, requests=400)
    promises = [PercentilePromise("ttft_s", 95, 0.5), PercentilePromise("tpot_s", 90, 0.02)]
    full, quick = summarise(raw, promises), glance(raw, promises)
    for pr in promises:
        label = f"p{pr.percentile:g}"
        assert quick.predicted[pr.metric][label] == full.predicted[pr.metric][label]
        assert quick.interval[pr.key] == full.interval[pr.key]
    assert quick.promises_met == full.promises_met
    assert (quick.requests, quick.rejected, quick.mean_in_system) == (full.requests, full.rejected, full.mean_in_system)
