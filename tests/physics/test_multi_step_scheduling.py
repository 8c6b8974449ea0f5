"""vLLM V0 multi-step scheduling (``Scheduler.scheduler_steps``, vLLM ``--num-scheduler-steps``; issue 25):
a decode-only batch, once scheduled, runs k iterations before the scheduler is called again
(vllm/engine/llm_engine.py ``LLMEngine.step``: "Skip the scheduler if there are any remaining steps in
the seq groups", ``_has_remaining_steps``), so a prompt that arrives inside the block waits for its end.

By hand, the law of tests/physics/test_unchunked_prefill.py (LinearStepCost): a decode iteration 10 ms
whatever its batch, a prefill 0.1 ms a token, plus 5 ms when no decode shares its iteration. A: prompt
100, reply 10, arrives at 0; B: prompt 100, reply 3, arrives at 20 ms. Without chunked prefill (the AMD
MLPerf configs: ``enable_chunked_prefill: False``):

k = 4: A arrives with nothing running and is scheduled at once: its prefill alone 5 + 10 = 15 ms, first
token at 15 ms. At 15 ms the batch is decode-only: a block of 4 iterations, boundaries 25, 35, 45, 55 ms.
B arrives at 20 ms, inside the block, and waits the rest of it: scheduled at 55 ms (queue 35 ms), its
prompt alone to 70 ms (TTFT 50 ms). From 70 ms both decode in a new block, 80, 90, 100, 110 ms: B's two
decodes end at 90 ms (E2E 70 ms; it leaves the block at once); A had 5 tokens at 55 ms, 9 at 110 ms, and its
tenth ends the next block's first iteration, 120 ms (E2E 120 ms).

k = 1 (every iteration scheduled): A's first decode 15 -> 25 ms; B waits for that boundary only: its
prompt 25 -> 40 ms (TTFT 20 ms, queue 5 ms); both decode 50, 60 ms: B done at 60 ms (E2E 40 ms); A's
tokens 2 at 25 ms, 3 at 50, 4 at 60, then one every 10 ms: 10 at 120 ms.

With chunked prefill, k = 4: A as before; B is admitted at the block's end, 55 ms, in an iteration with
A's decode (10 + 100 x 0.1 = 20 ms, to 75 ms: TTFT 55 ms); a new block from 75 ms: B's two decodes end at
95 ms (E2E 75 ms); A had 6 tokens at 75 ms, its tenth at 115 ms.

Blocks back to back: A with a reply of 30, B arriving at 120 ms, k = 4: A's blocks run 15-55, 55-95,
95-135 ms; B waits for 135 ms (queue 15 ms), its prompt alone to 150 ms (TTFT 30 ms); A had 1 + 12 = 13
tokens at 135 ms, and its 17 others one every 10 ms from 150 ms: done at 320 ms. (The event engine runs
A's decodes through the block ends, where nothing waits, in one run and cuts it at B's block end.)

A block ends with its batch: A' with a reply of 2 finishes its one decode at 25 ms, the only decode of the
block begun at 15 ms; nothing runs, so B (arrived at 20 ms) is scheduled at once, at 25 ms, as with k = 1:
TTFT 25 + 15 - 20 = 20 ms.
"""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import Deployment, Efficiency
from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost
from budgetlint.physics.traffic import Fixed, LogNormal, Uniform
from tests.physics.test_event_engine import H100, LLAMA8, assert_same_requests

COST = LinearStepCost(decode_fixed_s=0.010, prefill_fixed_s=0.005, prefill_per_token_s=1e-4)


class _Lengths:
    """Request i's prompt and reply from a list (a LengthDist read in request order)."""

    def __init__(self, values: list[int]) -> None:
        self.values, self.i = values, 0

    def sample(self, rng) -> float:  # noqa: ARG002 - the order is the draw
        v = self.values[self.i]
        self.i += 1
        return float(v)

    mean = 0.0


def _run(steps: int, engine: str, replies: tuple[int, int] = (10, 3), chunked: bool = False,
         second: float = 0.020) -> dict:
    traffic = Traffic(prompt=Fixed(100), output=_Lengths(list(replies)), arrival_times_s=(0.0, second))
    sched = Scheduler(max_num_seqs=8, max_num_batched_tokens=2048, chunked_prefill=chunked, scheduler_steps=steps)
    raw = run(COST, traffic, sched, requests=2, warmup=0, engine=engine)
    return {r.index: (r.queue_s, r.ttft_s, r.e2e_s) for r in raw.records}


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_a_prompt_arriving_inside_a_block_waits_for_its_end(engine: str) -> None:
    got = _run(4, engine)
    assert got[0] == pytest.approx((0.0, 0.015, 0.120), abs=1e-9)
    assert got[1] == pytest.approx((0.035, 0.050, 0.070), abs=1e-9)


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_with_chunked_prefill_the_prompt_joins_at_the_block_end(engine: str) -> None:
    got = _run(4, engine, chunked=True)
    assert got[0] == pytest.approx((0.0, 0.015, 0.115), abs=1e-9)
    assert got[1] == pytest.approx((0.035, 0.055, 0.075), abs=1e-9)


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_one_step_is_every_iteration_scheduled(engine: str) -> None:
    got = _run(1, engine)
    assert got[0] == pytest.approx((0.0, 0.015, 0.120), abs=1e-9)
    assert got[1] == pytest.approx((0.005, 0.020, 0.040), abs=1e-9)
    traffic = Traffic(prompt=Fixed(100), output=_Lengths([10, 3]), arrival_times_s=(0.0, 0.020))
    default = run(COST, traffic, Scheduler(max_num_seqs=8, max_num_batched_tokens=2048, chunked_prefill=False),
                  requests=2, warmup=0, engine=engine)  # no scheduler_steps: the same
    for r in default.records:
        assert (r.queue_s, r.ttft_s, r.e2e_s) == pytest.approx(got[r.index], abs=1e-12)


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_blocks_back_to_back_admit_at_the_block_end_after_the_arrival(engine: str) -> None:
    got = _run(4, engine, replies=(30, 3), second=0.120)
    assert got[0] == pytest.approx((0.0, 0.015, 0.320), abs=1e-9)
    assert got[1][:2] == pytest.approx((0.015, 0.030), abs=1e-9)


def test_block_ends_with_nothing_waiting_cost_no_events() -> None:
    """At 0.5 request/s with replies of 700 tokens requests seldom meet: between arrivals nothing waits,
    so the block ends change nothing and the event engine runs through them. Its events with k = 9 are
    those of k = 1 within 5 % (cut at each block end they would be at least 2,000 x 699 / 9 = 155,000)."""
    cost = RooflineStepCost(Deployment(model=LLAMA8, accelerator=H100), Efficiency(0.7, 0.5))
    spent = {}
    for k in (1, 9):
        total = [0]

        def allow(e: int, total: list = total) -> bool:
            total[0] += e
            return True

        run(cost, Traffic(prompt=Fixed(200), output=Fixed(700), arrival_rate_per_s=0.5), Scheduler(scheduler_steps=k),
            requests=2000, allowance=allow)
        spent[k] = total[0]
    assert spent[9] <= 1.05 * spent[1]


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_a_block_ends_with_its_batch(engine: str) -> None:
    got = _run(4, engine, replies=(2, 3))
    assert got[1][:2] == pytest.approx((0.005, 0.020), abs=1e-9)


def test_the_step_count_must_be_a_positive_integer() -> None:
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="scheduler_steps"):
            Scheduler(scheduler_steps=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("steps", [2, 8, 9])
@pytest.mark.parametrize("chunked", [True, False])
def test_both_engines_agree_under_multi_step(steps: int, chunked: bool) -> None:
    """Request by request: Poisson and closed-loop traffic, a cache small enough to preempt, 2 replicas
    behind least-loaded routing."""
    cost = RooflineStepCost(Deployment(model=LLAMA8, accelerator=H100), Efficiency(0.7, 0.5))
    for traffic, cap in ((Traffic(prompt=LogNormal(200, 500, maximum=2000), output=Uniform(20, 200),
                                  arrival_rate_per_s=40.0), math.inf),
                         (Traffic(prompt=Fixed(1500), output=Fixed(1500), concurrency=16), 20_000.0)):
        sched = Scheduler(max_num_seqs=16, max_num_batched_tokens=2048, kv_capacity_tokens=cap, replicas=2,
                          load_balancer="least_loaded", chunked_prefill=chunked, scheduler_steps=steps)
        assert_same_requests(cost, traffic, sched, requests=200)
