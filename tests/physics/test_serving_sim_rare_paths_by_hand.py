"""serving_sim's rare paths, worked by hand (issue 22: the sampled mutation runs' survivors lived
here): the tie window of event times, a decode preempted and recomputed, a request rejected inside
the scheduler's plan (not at its arrival), a checkpoint's completion tied with its last arrival, and
an arrival tied with a boundary inside a run of decode iterations.

Every law here is :class:`LinearStepCost` (a decode iteration of any batch takes ``decode_fixed_s``;
prefill adds ``prefill_per_token_s`` a token, no fixed part), so each event time is a sum written out
in the docstring. Where a test needs exact ties the costs are powers of two (sums of them are exact
floats)."""

from __future__ import annotations

import math
import random

import pytest

from budgetlint.physics.serving_sim import TIE_RELATIVE, Scheduler, SimulationTooLong, Traffic, run, stream, tie_s
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed


class _InTurn:
    """A test-local length distribution: the given lengths, one a request, in request order (the
    simulator draws lengths in request order from their own generator; this one ignores it)."""

    def __init__(self, *lengths: int) -> None:
        self.lengths = lengths
        self.next = 0
        self.mean = sum(lengths) / len(lengths)

    def sample(self, rng: random.Random) -> int:
        n = self.lengths[self.next % len(self.lengths)]
        self.next += 1
        return n


def test_the_tie_window_is_relative_with_a_floor_at_a_tenth_of_a_second() -> None:
    """1e-11 of the time, and never less than 1e-11 x 0.1 s = 1e-12 s; an event at infinity ties
    with nothing."""
    assert TIE_RELATIVE == 1e-11
    assert tie_s(1.0) == pytest.approx(1e-11, rel=1e-12)
    assert tie_s(250.0) == pytest.approx(2.5e-9, rel=1e-12)
    assert tie_s(-2.0) == pytest.approx(2e-11, rel=1e-12)
    assert tie_s(0.2) == pytest.approx(2e-12, rel=1e-12)
    for small in (0.0, 0.05, 0.1, -0.05):
        assert tie_s(small) == pytest.approx(1e-12, rel=1e-12)
    assert tie_s(math.inf) == 0.0


@pytest.mark.parametrize("prompt", [10, 200])  # its prefill ends at 0.01 s (window 1e-12 s) or 0.2 s (2e-12 s)
@pytest.mark.parametrize("within", [True, False])
def test_an_arrival_inside_the_tie_window_of_a_boundary_is_taken_before_it(prompt: int, within: bool) -> None:
    """Request 0 (``prompt`` tokens, 5 out) prefills alone from 0 s: 1 ms a token, so its first token
    comes at T = prompt x 1 ms (0.01 s or 0.2 s); decodes take 10 ms an iteration. Request 1 (the
    same lengths) arrives just after T: three quarters of the window later (``within``: a tie, taken before the
    boundary) or twice the window later (not a tie).

    - Tied: request 1 is waiting when request 0's prefill ends, so the next iteration (from T) holds
      request 0's decode and request 1's whole prefill: 10 ms + prompt x 1 ms; request 1's first token
      at T + 0.01 + T = 2 T + 0.01 s.
    - Not tied: request 0's decodes start at T as a run alone; request 1's arrival cuts that run at its
      first boundary, T + 0.01, and is prefilled in the iteration after it: first token at
      T + 0.01 + 0.01 + T = 2 T + 0.02 s."""
    T = prompt * 0.001
    window = 1e-11 * max(T, 0.1)
    arrive = T + (0.75 * window if within else 2.0 * window)
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    raw = run(law, Traffic(prompt=Fixed(prompt), output=Fixed(5), arrival_times_s=(0.0, arrive)),
              Scheduler(), requests=2, warmup=0)
    first0, first1 = (r.arrival_s + r.ttft_s for r in raw.records)
    assert first0 == pytest.approx(T, rel=1e-9)
    assert first1 == pytest.approx(2 * T + (0.01 if within else 0.02), rel=1e-9)
    # request 0: 4 decodes after its first token, one of them shared with request 1's prefill (10 ms
    # + prompt x 1 ms) when tied; when not, one alone, one shared, then 2 alone
    done0 = raw.records[0].arrival_s + raw.records[0].e2e_s
    assert done0 == pytest.approx(T + (0.01 + T) + 3 * 0.01 if within else T + 0.01 + (0.01 + T) + 2 * 0.01, rel=1e-9)


@pytest.mark.parametrize("engine", ["event", "iteration"])
@pytest.mark.parametrize("out1", [10, 5])
def test_a_preempted_decode_recomputes_its_prompt_and_the_tokens_it_had(engine: str, out1: int) -> None:
    """Requests 0 and 1 arrive at 0 s (a trace; request 2 comes at 1 s, after them, to close the
    window), 10 prompt tokens each, 10 and ``out1`` output tokens, a KV cache of 30 tokens;
    decodes 10 ms an iteration, prefill 1 ms a token.

    - 0 -> 0.010: request 0's prefill (10 tokens); its first token (context 11).
    - 0.010 -> 0.030: request 0's decode (10 ms) and request 1's prefill (10 ms): request 1's first
      token; contexts 12 + 11 = 23.
    - 0.030 -> 0.060: three decodes of both (the cache has room for 7 tokens more: 3 iterations of
      2): contexts 15 + 14 = 29, and the next iteration needs 31 > 30.
    - 0.060: request 1, the last admitted, is preempted having 4 tokens (1 + 3 decodes; with
      ``out1`` = 5 that is its last but one, out - 1); its recompute is its prompt and those 4
      tokens: 14 tokens. Nothing is admitted until a request finishes.
    - 0.060 -> 0.110: request 0's 5 last decodes (tokens 6..10); it finishes.
    - 0.110 -> 0.124: request 1's recompute, 14 tokens at 1 ms; the pass over its last position
      samples its 5th token (vLLM's recompute is an ordinary prefill: it yields a token as a first
      prefill does). With ``out1`` = 5 that is its last: it finishes at 0.124 s.
    - 0.124 -> 0.124 + (out1 - 5) x 0.010: its last decodes: 0.174 s or 0.124 s.

    Over the window [0, 1 s]: busy 0.124 s + the last decodes; sequences x seconds 0.010 + 2 x 0.020
    + 2 x 0.030 + 0.050 + 0.014 + the last decodes; in system 0.110 + request 1's time."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=_InTurn(10, out1, 10), arrival_times_s=(0.0, 0.0, 1.0))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=30), requests=3, warmup=0, engine=engine)
    r0, r1, r2 = raw.records
    last = (out1 - 5) * 0.010
    assert (r0.preemptions, r1.preemptions, r2.preemptions) == (0, 1, 0)
    assert r0.ttft_s == pytest.approx(0.010, rel=1e-9)
    assert r0.e2e_s == pytest.approx(0.110, rel=1e-9)
    assert r1.ttft_s == pytest.approx(0.030, rel=1e-9)  # its first token came before the preemption
    assert r1.e2e_s == pytest.approx(0.110 + 0.014 + last, rel=1e-9)
    assert r2.e2e_s == pytest.approx(0.010 + 9 * 0.010, rel=1e-9)  # alone
    assert not (r0.rejected or r1.rejected or r2.rejected)
    assert raw.busy_s == pytest.approx(0.124 + last, rel=1e-9)
    assert sum(d * b for d, b in raw.batch_time) == pytest.approx(
        0.010 + 2 * 0.020 + 2 * 0.030 + 0.050 + 0.014 + last, rel=1e-9)
    assert raw.in_system_area == pytest.approx(0.110 + 0.124 + last, rel=1e-9)
    assert (raw.completions_in_window, raw.output_tokens_in_window) == (2, 10 + out1)


def test_a_prefill_in_chunks_is_preempted_and_recomputed() -> None:
    """An iteration budget of 8 tokens, a KV cache of 15; request 0 (12 prompt, 2 output) and
    request 1 (4 prompt, 2 output) arrive at 0 s (request 2 at 1 s closes the window); prefill 1 ms
    a token, decodes 10 ms an iteration.

    - 0 -> 0.008: request 0's first chunk, 8 tokens (the budget); request 1 waits.
    - 0.008 -> 0.015: request 0's last 4 tokens, then request 1 admitted with what is left: the
      budget would allow 4 but the cache has 15 - 12 = 3 tokens free: a chunk of 3. Request 0's
      first token at 0.015 s (context 13).
    - 0.015: its decode needs 13 + 3 (request 1's chunk) + 1 = 17 > 15: request 1, the last
      admitted, is preempted mid-prefill; its 3 tokens are freed, and its recompute is its prompt
      (no token yet): 4.
    - 0.015 -> 0.025: request 0's decode; it finishes.
    - 0.025 -> 0.029: request 1's 4 tokens, its first token; 0.029 -> 0.039: its decode."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(12, 4, 4), output=Fixed(2), arrival_times_s=(0.0, 0.0, 1.0))  # type: ignore[arg-type]
    for engine in ("event", "iteration"):
        traffic.prompt.next = 0  # type: ignore[attr-defined]
        raw = run(law, traffic, Scheduler(max_num_batched_tokens=8, kv_capacity_tokens=15), requests=3, warmup=0,
                  engine=engine)
        r0, r1, _ = raw.records
        assert (r0.preemptions, r1.preemptions) == (0, 1)
        assert r0.ttft_s == pytest.approx(0.015, rel=1e-9)
        assert r0.e2e_s == pytest.approx(0.025, rel=1e-9)
        assert r1.queue_s == pytest.approx(0.008, rel=1e-9)  # first scheduled in the second iteration
        assert r1.ttft_s == pytest.approx(0.029, rel=1e-9)
        assert r1.e2e_s == pytest.approx(0.039, rel=1e-9)


def test_a_request_rejected_inside_the_plan_leaves_the_replica_free_for_the_next() -> None:
    """Speculative decoding at 2.5 tokens a pass, a KV cache of 20 tokens. Request 0 (10 prompt,
    10 output: 20 tokens, fits at arrival) prefills in 10 ms (1 ms a token): context 11, 9 tokens to
    go, 4 passes (ceil(9 / 2.5)). The cache has room for 9 more tokens: 3 passes (10 ms each) to
    context 18.5 at 0.040 s, and the 4th needs 21 > 20. It is preempted (the only request), and
    alone it can never be given room: rejected inside the plan at 0.040 s.

    Request 1 (4 prompt, 4 output) arrives at 10 s to the idle replica: prefill 4 ms, first token at
    10.004 s, then 3 tokens in 2 passes (ceil(3 / 2.5)) of 10 ms: done at 10.024 s. (Before this
    test, the preemption's hold on admissions outlived the rejected request and request 1 was
    rejected too, as was every later request on that replica.)"""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001, tokens_per_pass=2.5)
    traffic = Traffic(prompt=_InTurn(10, 4), output=_InTurn(10, 4), arrival_times_s=(0.0, 10.0))  # type: ignore[arg-type]
    for engine in ("event", "iteration"):
        traffic.prompt.next = traffic.output.next = 0  # type: ignore[attr-defined]
        raw = run(law, traffic, Scheduler(kv_capacity_tokens=20), requests=2, warmup=0, engine=engine)
        r0, r1 = raw.records
        assert (r0.prompt_tokens, r0.output_tokens, r1.prompt_tokens, r1.output_tokens) == (10, 10, 4, 4)
        assert r0.rejected and r0.preemptions == 1 and math.isnan(r0.ttft_s)
        assert not r1.rejected and r1.preemptions == 0
        assert r1.ttft_s == pytest.approx(0.004, rel=1e-9)
        assert r1.e2e_s == pytest.approx(0.024, rel=1e-9)
        # the window ends at the last arrival (10 s): request 1 finishes after it, and the rejected
        # request is no completion
        assert (raw.completions_in_window, raw.output_tokens_in_window) == (0, 0)


def test_a_checkpoints_completion_tied_with_its_last_arrival_is_counted_in_it() -> None:
    """Exact floats: prefill 1/8 s a token, decodes 1/4 s an iteration; every prompt 2 tokens, a KV
    cache of 10 tokens. Request 0 (1 output token) arrives at 0: prefill 0 -> 0.25, done. Request 1
    (3 output) at 0.5: prefill 0.5 -> 0.75, 2 decodes 0.75 -> 1.25, done at 1.25. Request 2 (3
    output) arrives at exactly 1.25, and so does request 3 (30 output: 32 tokens, more than the
    cache: rejected as it arrives); request 4 at 5 s. The checkpoint of 3 requests ends its window
    at request 2's arrival, 1.25 s; request 1's completion at that very instant (taken after the
    arrivals: arrivals first on ties) is in it, request 3's rejection at that instant is no
    completion: 2 completions (0.25 s and 1.25 s), 1 + 3 = 4 tokens, 3 arrivals; busy 0.25 + 0.25 +
    0.5 s (two prefills, then the decode run up to 1.25), in system 0.25 + 0.75 s."""
    law = LinearStepCost(0.25, prefill_per_token_s=0.125)
    output = _InTurn(1, 3, 3, 30, 3)
    traffic = Traffic(prompt=Fixed(2), output=output, arrival_times_s=(0.0, 0.5, 1.25, 1.25, 5.0))  # type: ignore[arg-type]
    sched = Scheduler(kv_capacity_tokens=10)
    cut = run(law, traffic, sched, requests=5, warmup=0, checkpoints=[3], stop=lambda raw: True)
    assert [r.index for r in cut.records] == [0, 1, 2]
    assert cut.window_start_s == 0.0 and cut.window_end_s == 1.25
    assert (cut.arrivals_in_window, cut.completions_in_window, cut.output_tokens_in_window) == (3, 2, 4)
    assert cut.busy_s == 1.0 and cut.in_system_area == 1.0
    assert cut.batch_time == ((0.25, 1), (0.25, 1), (0.5, 1))
    # the full run: request 2 is admitted at 1.25 (prefill to 1.5, done at 2.0), request 4 at 5 s
    # (done at 5.75, after the window's end at the last arrival, 5 s): 3 completions, 7 tokens
    # read on past it, to the checkpoint of 4 (request 3's arrival, the same instant): the rejected
    # request counts as gone, so that checkpoint is due at once, with the same counters (the
    # rejection is no completion) and one arrival more
    output.next = 0
    cuts = [raw for m, raw in stream(law, traffic, sched, requests=5, warmup=0, checkpoints=[3, 4]) if m is not None]
    assert [len(c.records) for c in cuts] == [3, 4] and cuts[1].records[3].rejected
    assert (cuts[1].window_end_s, cuts[1].arrivals_in_window, cuts[1].completions_in_window,
            cuts[1].output_tokens_in_window) == (1.25, 4, 2, 4)
    output.next = 0
    full = run(law, traffic, sched, requests=5, warmup=0)
    assert (full.completions_in_window, full.output_tokens_in_window) == (3, 7)
    assert [r.rejected for r in full.records] == [False, False, False, True, False]
    assert [r.e2e_s for r in full.records if not r.rejected] == [0.25, 0.75, 0.75, 0.75]


@pytest.mark.parametrize("boundary", [0.5, 0.75])
@pytest.mark.parametrize("late", [0.5, 2.0])  # in tie windows (of 0.5 s: 5e-12 s) after the boundary
def test_an_arrival_tied_with_a_boundary_inside_a_decode_run_joins_at_that_boundary(late: float, boundary: float) -> None:
    """Exact floats: request 0 (2 prompt, 9 output) prefills 0 -> 0.25 s and then decodes as one run
    of 8 iterations of 0.25 s (boundaries at 0.5, 0.75, ...). Request 1 (the same) arrives just after
    the ``boundary``: half a tie window later (tied: the run is cut there and request 1's prefill
    shares the next iteration, 0.25 s of decode + 0.25 s of prefill: first token 0.5 s after the
    boundary) or two windows later (not tied: the cut is at the next boundary, 0.25 s later)."""
    arrive = boundary + late * 1e-11 * boundary
    law = LinearStepCost(0.25, prefill_per_token_s=0.125)
    raw = run(law, Traffic(prompt=Fixed(2), output=Fixed(9), arrival_times_s=(0.0, arrive)),
              Scheduler(), requests=2, warmup=0)
    r1 = raw.records[1]
    assert r1.arrival_s + r1.ttft_s == boundary + (0.5 if late < 1 else 0.75)


def test_without_chunked_prefill_a_prompt_waits_for_the_cache_room_it_needs_whole() -> None:
    """No chunked prefill, a KV cache of 25 tokens; prefill 1 ms a token, decodes 10 ms. Request 0
    (10 prompt, 10 output) arrives at 0: prefill to 0.010 s, then 9 decodes. Request 1 (the same)
    arrives at 0.045 s and cuts request 0's run at the next boundary, 0.050 s (4 decodes: context
    15). Its whole prompt needs 10 tokens of cache and 25 - 15 - 1 (request 0's next token) = 9 are
    free: it waits. Request 0's last 5 decodes end at 0.100 s; request 1's prompt, alone, 0.100 ->
    0.110 (its first token), its 9 decodes to 0.200 s."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(10), arrival_times_s=(0.0, 0.045))
    for engine in ("event", "iteration"):
        raw = run(law, traffic, Scheduler(kv_capacity_tokens=25, chunked_prefill=False), requests=2, warmup=0,
                  engine=engine)
        r0, r1 = raw.records
        assert r0.ttft_s == pytest.approx(0.010, rel=1e-9) and r0.e2e_s == pytest.approx(0.100, rel=1e-9)
        assert r1.queue_s == pytest.approx(0.100 - 0.045, rel=1e-9)
        assert r1.ttft_s == pytest.approx(0.110 - 0.045, rel=1e-9)
        assert r1.e2e_s == pytest.approx(0.200 - 0.045, rel=1e-9)


def test_without_chunked_prefill_a_preemption_holds_the_queue_until_a_request_finishes() -> None:
    """No chunked prefill, a KV cache of 31 tokens; requests 0 and 1 (10 prompt, 10 output) arrive
    at 0 (request 2 at 1 s, after them). Request 0's prompt 0 -> 0.010; request 1's, in an iteration of prompts only (decodes wait),
    0.010 -> 0.020; both decode from 0.020 (contexts 11 + 11, room for 9 more: 4 iterations of 2) to
    0.060 s: contexts 15 + 15, and the next needs 32 > 31. Request 1 is preempted with 5 tokens
    (recompute 15); the cache would now hold its recompute (31 - 15 - 1 = 15 free), but nothing is
    admitted until a request finishes: request 0's 5 last decodes to 0.110 s, then request 1's
    recompute 0.110 -> 0.125, which samples its 6th token, and its 4 last decodes to 0.165 s."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(10), arrival_times_s=(0.0, 0.0, 1.0))  # a third, alone
    for engine in ("event", "iteration"):
        raw = run(law, traffic, Scheduler(kv_capacity_tokens=31, chunked_prefill=False), requests=3, warmup=0,
                  engine=engine)
        r0, r1, _ = raw.records
        assert (r0.preemptions, r1.preemptions) == (0, 1)
        assert r0.ttft_s == pytest.approx(0.010, rel=1e-9) and r0.e2e_s == pytest.approx(0.110, rel=1e-9)
        assert r1.ttft_s == pytest.approx(0.020, rel=1e-9) and r1.e2e_s == pytest.approx(0.165, rel=1e-9)


class _ContextLaw:
    """A test-local step cost whose decode step grows with the context: 10 ms + 1 us a context token
    (summed over the batch), prefill 1 ms a token on top (no fixed part)."""

    tokens_per_pass = 1.0
    spec_tokens = 1

    def iteration_s(self, batch: int, context_tokens: float, prefill) -> float:  # type: ignore[no-untyped-def]
        decode = 0.01 + 0.001 * context_tokens if batch else 0.0
        return decode + 0.001 * sum(new for new, _ in prefill)

    def decode_terms(self, batch: int, context_tokens: float):  # type: ignore[no-untyped-def]
        return ((0.01, 0.001, 0.0, 0.0),), math.inf


@pytest.mark.parametrize("arrive", [1.0, 0.5, 3.0])
def test_an_arrival_cuts_a_run_of_growing_steps_at_its_first_boundary_after_it(arrive: float) -> None:
    """Request 0 (10 prompt, 200 output) prefills 0 -> 0.010 s and then decodes as one run of 199
    steps, step j (from 0) taking 0.010 + 0.001 x (11 + j) s: they grow, so the run's average step
    is ~10 x its first and a proportional guess of where ``arrive`` falls is far short (the cut
    walks out and bisects). Request 1 (10 prompt, 2 output) arrives at ``arrive``: the run is cut at
    the first boundary B_k >= arrive, worked here by summing the steps one by one; request 1's
    prefill shares the next iteration (10 ms + 0.001 x (11 + k) + 10 ms): its first token at
    B_k + 0.020 + 0.001 x (11 + k)."""
    b, k = 0.010, 0
    while b < arrive:
        b += 0.010 + 0.001 * (11 + k)
        k += 1
    traffic = Traffic(prompt=Fixed(10), output=_InTurn(200, 2), arrival_times_s=(0.0, arrive))  # type: ignore[arg-type]
    for engine in ("event", "iteration"):
        traffic.output.next = 0  # type: ignore[attr-defined]
        raw = run(_ContextLaw(), traffic, Scheduler(), requests=2, warmup=0, engine=engine)  # type: ignore[arg-type]
        r1 = raw.records[1]
        assert r1.arrival_s + r1.ttft_s == pytest.approx(b + 0.020 + 0.001 * (11 + k), rel=1e-9), (engine, k)


def test_a_trace_must_span_some_time_but_may_start_or_end_with_a_tie() -> None:
    for ts in ((0.0, 0.0, 1.0), (0.0, 1.0, 1.0)):
        assert Traffic(arrival_times_s=ts).arrival_times_s == ts
    for ts in ((2.0, 2.0), (3.0, 3.0, 3.0)):
        with pytest.raises(ValueError) as got:
            Traffic(arrival_times_s=ts)
        assert str(got.value) == "arrival_times_s must span some time"


def test_the_gamma_cv_bounds_are_inclusive() -> None:
    for cv in (1e-3, 1e3):
        assert Traffic(arrival_rate_per_s=1.0, arrival="gamma", cv=cv).cv == cv
    for cv in (0.9e-3, 1.1e3):
        with pytest.raises(ValueError) as got:
            Traffic(arrival_rate_per_s=1.0, arrival="gamma", cv=cv)
        assert str(got.value).startswith("cv must be between") and str(got.value).endswith(f"got {cv!r}")


def test_traffic_at_another_rate_keeps_its_arrival_kind_and_prefix_hits() -> None:
    t = Traffic(arrival_rate_per_s=1.0, arrival="gamma", cv=2.0, prefix_hit_requests=0.5, prefix_hit_tokens=0.25)
    u = t.at_rate(3.0)
    assert (u.arrival_rate_per_s, u.arrival, u.cv, u.prefix_hit_requests, u.prefix_hit_tokens) == \
        (3.0, "gamma", 2.0, 0.5, 0.25)


def test_a_kv_cache_of_no_tokens_is_refused() -> None:
    with pytest.raises(ValueError) as got:
        Scheduler(kv_capacity_tokens=0)
    assert str(got.value) == "kv_capacity_tokens must be positive, got 0"


def test_a_checkpoints_busy_time_counts_an_iteration_begun_before_the_window_from_the_windows_start() -> None:
    """Warm-up 1: the window opens at request 1's arrival. Request 0 (8 prompt tokens, 1 output)
    prefills 0 -> 1.0 s (1/8 s a token); request 1 arrives at 0.25 s (the window's start), request 2
    at 0.5 s (the checkpoint of 3's last arrival), request 3 at 5 s. At 0.5 s request 0's prefill is
    in flight since 0 s: the window holds 0.25 s of it (not 0.5), with 1 sequence; 2 requests in the
    system over the 0.25 s; no completion; 2 arrivals measured."""
    law = LinearStepCost(0.25, prefill_per_token_s=0.125)
    traffic = Traffic(prompt=Fixed(8), output=Fixed(1), arrival_times_s=(0.0, 0.25, 0.5, 5.0))
    cut = run(law, traffic, Scheduler(), requests=4, warmup=1, checkpoints=[3], stop=lambda raw: True)
    assert (cut.window_start_s, cut.window_end_s) == (0.25, 0.5)
    assert cut.busy_s == 0.25 and cut.batch_time == ((0.25, 1),)
    assert cut.in_system_area == 0.5
    assert (cut.arrivals_in_window, cut.completions_in_window) == (2, 0)


def test_a_closed_loop_starts_at_0_and_counts_one_event_an_arrival_and_one_a_boundary() -> None:
    """One user, 10 prompt tokens (10 ms of prefill) and 2 output tokens (one decode of 10 ms): each
    request arrives as the one before ends, at 0, 0.02, 0.04 s, ... Each costs 3 events (its
    arrival, its prefill's end, its decode's end), so 700 requests are 2,100 events, which the
    caller's allowance is told of every 1,024 (ALLOWANCE_STEP) and at the end: 1,024, 1,024, 52;
    a limit of 2,099 events is too few."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(2), concurrency=1)
    calls: list[int] = []
    raw = run(law, traffic, Scheduler(), requests=700, warmup=0, allowance=lambda n: calls.append(n) is None)
    assert [r.arrival_s for r in raw.records[:3]] == [0.0, pytest.approx(0.02, rel=1e-9), pytest.approx(0.04, rel=1e-9)]
    assert raw.window_start_s == 0.0
    assert calls == [1024, 1024, 52]
    run(law, traffic, Scheduler(), requests=700, warmup=0, max_events=2100)
    with pytest.raises(SimulationTooLong):
        run(law, traffic, Scheduler(), requests=700, warmup=0, max_events=2099)


def test_a_request_rejected_inside_the_plan_leaves_its_replica_for_least_loaded_routing() -> None:
    """Two replicas, least loaded, one sequence each at a time, a KV cache of 20 tokens, speculative
    decoding at 2.5 tokens a pass (prefill 1 ms a token, passes 10 ms). Request 0 (10 + 10 tokens) on
    replica 0 is rejected inside the plan at 0.040 s, as in the test above. Request 1 (1 prompt, 3
    output) arrives at 0.001 s on replica 1 (replica 0 holds 1) and is done at 0.012 s (prefill 1
    ms, one pass). Request 2 (4 + 4) arrives at 0.005 s with one request on each: replica 0, where it
    waits for the sequence slot; at 0.040 s it takes it (prefill 4 ms, two passes: done at 0.064 s).
    Request 3 (1 + 1) arrives at 0.050 s: replica 0 holds request 2, replica 1 nothing: replica 1."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001, tokens_per_pass=2.5)
    traffic = Traffic(prompt=_InTurn(10, 1, 4, 1), output=_InTurn(10, 3, 4, 1),  # type: ignore[arg-type]
                      arrival_times_s=(0.0, 0.001, 0.005, 0.05))
    raw = run(law, traffic, Scheduler(replicas=2, load_balancer="least_loaded", max_num_seqs=1, kv_capacity_tokens=20),
              requests=4, warmup=0)
    assert [r.replica for r in raw.records] == [0, 1, 0, 1]
    assert [r.rejected for r in raw.records] == [True, False, False, False]
    r2 = raw.records[2]
    assert r2.arrival_s + r2.e2e_s == pytest.approx(0.064, rel=1e-9)


def test_traffic_says_what_it_needs() -> None:
    with pytest.raises(ValueError) as got:
        Traffic(arrival_rate_per_s=1.0, concurrency=2)
    assert str(got.value) == ("traffic needs arrival_rate_per_s (open loop), concurrency (closed loop) or "
                              "arrival_times_s (a trace), exactly one")


def test_a_wholly_cached_prompt_still_prefills_one_token() -> None:
    """A prefix hit on every request of all its 10 tokens: the prefill computes 1 token (the last
    one's logits are needed), 1 ms, with 9 before it in cache; the first token at 0.001 s."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=(0.0, 1.0), prefix_hit_tokens=1.0)
    raw = run(law, traffic, Scheduler(), requests=2, warmup=0)
    assert [r.cached_tokens for r in raw.records] == [10, 10]
    assert [r.ttft_s for r in raw.records] == [pytest.approx(0.001, rel=1e-9)] * 2


@pytest.mark.parametrize("prompt1", [8, 7])
def test_a_waiting_request_is_admitted_only_with_budget_left(prompt1: int) -> None:
    """An iteration budget of 8 tokens; prefill 1 ms a token; one output token each (the prefill's).
    Request 0 (2 prompt tokens) runs 0 -> 0.002 s; requests 1 (``prompt1`` tokens) and 2 (4) arrive
    at 0.001 s and wait. At 0.002 s request 1 takes ``prompt1`` of the budget: with 8 nothing is left
    and request 2 waits for the next iteration (scheduled at 0.010 s, its 4 tokens to 0.014 s); with
    7, request 2 is scheduled at once with a chunk of 1 (to 0.010 s) and its last 3 to 0.013 s."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(2, prompt1, 4), output=Fixed(1), arrival_times_s=(0.0, 0.001, 0.001))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(max_num_batched_tokens=8), requests=3, warmup=0)
    r2 = raw.records[2]
    sched, first = (0.010, 0.014) if prompt1 == 8 else (0.002, 0.013)
    assert r2.queue_s == pytest.approx(sched - 0.001, rel=1e-9)
    assert r2.ttft_s == pytest.approx(first - 0.001, rel=1e-9)


def test_without_chunked_prefill_the_prompts_of_one_iteration_share_the_cache() -> None:
    """No chunked prefill, a KV cache of 40 tokens; five requests of 10 prompt and 2 output tokens,
    four at 0 s and one at 1 s; prefill 1 ms a token, decodes 10 ms. Request 0's prompt runs alone
    0 -> 0.010 (it came first, to an idle engine). At 0.010 its decode needs a token: 40 - 11 - 1 = 28
    free, so requests 1 and 2 (10 each) go in one prompts-only iteration, 0.010 -> 0.030, and request
    3 does not (8 left). At 0.030 three decodes (contexts 11 each, 33 + 3 = 36 <= 40) to 0.040, all
    three done; request 3 needed 10 of the 40 - 33 - 3 = 4 free at 0.030, so it runs at 0.040
    (prompt to 0.050, decode to 0.060)."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(2), arrival_times_s=(0.0, 0.0, 0.0, 0.0, 1.0))
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=40, chunked_prefill=False), requests=5, warmup=0)
    firsts = [r.arrival_s + r.ttft_s for r in raw.records]
    dones = [r.arrival_s + r.e2e_s for r in raw.records]
    assert firsts == [pytest.approx(x, rel=1e-9) for x in (0.010, 0.030, 0.030, 0.050, 1.010)]
    assert dones == [pytest.approx(x, rel=1e-9) for x in (0.040, 0.040, 0.040, 0.060, 1.020)]


@pytest.mark.parametrize(("requests", "warmup"), [(40, 20), (100, 50), (700, 70)])
def test_the_default_warm_up_is_a_tenth_at_least_50_at_most_half(requests: int, warmup: int) -> None:
    """A tenth of the requests, at least 50, at most half: 40 -> 20, 100 -> 50, 700 -> 70. A trace,
    one request every 0.1 s (each alone: 10 ms of prefill, 1 token), read at a checkpoint of 10
    requests past the warm-up too."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=tuple(0.1 * i for i in range(requests)))
    raw = run(law, traffic, Scheduler(), requests=requests)
    assert [r.index for r in raw.records] == list(range(warmup, requests))
    cut = run(law, traffic, Scheduler(), requests=requests, checkpoints=[warmup + 10], stop=lambda raw: True)
    assert [r.index for r in cut.records] == list(range(warmup, warmup + 10))


def test_too_few_requests_are_refused_with_the_count() -> None:
    law = LinearStepCost(0.01)
    with pytest.raises(ValueError) as got:
        run(law, Traffic(concurrency=1), Scheduler(), requests=1)
    assert str(got.value) == "requests must be an integer >= 2, got 1"


def test_a_stale_finish_entry_of_a_preempted_decode_does_not_hide_a_live_one_behind_it() -> None:
    """A KV cache of 23 tokens, an iteration budget of 16; prefill 1 ms a token, a decode iteration
    10 ms (an iteration with decodes: 10 ms + its prefill tokens). Requests 0 (6 prompt, 7 output),
    1 (10, 5) and 2 (3, 7) at 0 s; request 3 at 1 s (after them, alone). (Request 1's output was 4
    before a recompute sampled a token; 5 keeps its finish at step 7.)

    - 0 -> 0.006: request 0's prompt. 0.006 -> 0.029: its decode with requests 1 and 2's prompts (13).
    - 0.029 (step 1): contexts 8 + 11 + 4 and 3 tokens to write: 26 > 23: request 2 is preempted
      with 1 token (recompute 4); its decode would have ended at step 1 + 6 = 7. Two decodes to
      0.049 (the room, 23 - 19 = 4, holds 2 iterations of 2).
    - 0.049 (step 3): 10 + 13 + 2 = 25 > 23: request 1 is preempted with 3 tokens (recompute 13).
      Request 0 alone, 3 decodes to 0.079 (step 6): its 7 tokens, done.
    - 0.079 -> 0.095: request 1's recompute (13) and 3 of request 2's 4; the recompute's last
      position samples request 1's 4th token (decode from step 6, one step left: finish at step 7).
    - 0.095 -> 0.106: request 1's decode (its last token, ending at step 7) and request 2's last
      prompt token, whose pass samples request 2's 2nd token.
    - 0.106 (step 7): request 1 is done, in the same step as request 2's old, preempted, finish: that
      stale entry comes first and must be passed over. Request 2's 5 decodes: 0.106 -> 0.156."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(6, 10, 3, 11), output=_InTurn(7, 5, 7, 6),  # type: ignore[arg-type]
                      arrival_times_s=(0.0, 0.0, 0.0, 1.0))
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=23, max_num_batched_tokens=16), requests=4, warmup=0)
    r0, r1, r2, _ = raw.records
    assert [r.preemptions for r in raw.records] == [0, 1, 1, 0]
    assert (r0.ttft_s, r1.ttft_s, r2.ttft_s) == (pytest.approx(0.006), pytest.approx(0.029), pytest.approx(0.029))
    assert r0.e2e_s == pytest.approx(0.079, rel=1e-9)
    assert r1.e2e_s == pytest.approx(0.106, rel=1e-9)
    assert r2.e2e_s == pytest.approx(0.156, rel=1e-9)


def test_a_trace_must_be_two_finite_times_in_order() -> None:
    for ts in ((1.0,), (0.0, 2.0, 1.0), (0.0, math.inf)):
        with pytest.raises(ValueError) as got:
            Traffic(arrival_times_s=ts)
        assert str(got.value) == "arrival_times_s must be at least 2 finite times in order"


def test_checkpoints_need_an_open_loop_and_two_measured_requests() -> None:
    """A checkpoint counts only with at least 2 measured requests below it (warm-up + 2 <= m) and
    fewer than the run's: with warm-up 20 of 40, checkpoints 21 and 40 are no checkpoints (the full
    run comes back, 20 records); 22 is one (2 records)."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=tuple(0.1 * i for i in range(40)))
    for m, n in ((21, 20), (40, 20), (22, 2)):
        assert len(run(law, traffic, Scheduler(), requests=40, checkpoints=[m], stop=lambda raw: True).records) == n
    with pytest.raises(ValueError) as got:
        run(law, Traffic(concurrency=2), Scheduler(), requests=40, checkpoints=[30], stop=lambda raw: True)
    assert str(got.value) == "checkpoints need an open loop (arrivals in request order)"


def test_a_run_is_2000_requests_unless_told() -> None:
    """One user, 1-token replies: 2,000 requests, the first 200 (a tenth) the warm-up."""
    raw = run(LinearStepCost(0.01, prefill_per_token_s=0.001), Traffic(prompt=Fixed(1), concurrency=1), Scheduler())
    assert len(raw.records) == 1800 and raw.records[0].index == 200


def test_runs_of_other_reply_lengths_do_not_share_drawn_lengths() -> None:
    """The seed's lengths are kept for other runs of the same distributions only: a run with 5-token
    replies after one with 3-token replies (the same prompts, the same seed) has 5-token replies."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    for out in (3, 5):
        raw = run(law, Traffic(prompt=Fixed(10), output=Fixed(out), concurrency=1), Scheduler(), requests=4, warmup=0)
        assert [r.output_tokens for r in raw.records] == [out] * 4


def test_a_decodes_next_token_is_reserved_before_a_prompt_takes_the_cache() -> None:
    """A KV cache of 20; request 0 (5 prompt, 10 output) and request 1 (14, 2) at 0 s. At 0.005 s
    request 0 (context 6) decodes and reserves its next token: 20 - 6 - 1 = 13 free, so request 1
    gets a chunk of 13 (0.005 -> 0.028: 10 ms + 13 ms). Then 7 + 13 + 1 = 21 > 20: request 1, mid
    prefill, is preempted (recompute 14); request 0's 8 last decodes to 0.108; request 1's 14 tokens
    to 0.122 (its first token), its decode to 0.132."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(5, 14, 1), output=_InTurn(10, 2, 1), arrival_times_s=(0.0, 0.0, 1.0))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=20), requests=3, warmup=0)
    r0, r1, _ = raw.records
    assert (r0.ttft_s, r0.e2e_s) == (pytest.approx(0.005), pytest.approx(0.108))
    assert (r1.preemptions, r1.ttft_s, r1.e2e_s) == (1, pytest.approx(0.122), pytest.approx(0.132))


def test_a_prefix_hit_holds_its_cached_tokens_when_the_cache_limits_the_chunk() -> None:
    """Every prompt half cached; a KV cache of 20. Request 0 (4 prompt: 2 cached, 10 output)
    prefills its 2 tokens, 0 -> 0.002 s (context 5). Request 1 (16 prompt: 8 cached, 2 output) then
    needs its 8 cached tokens held first: 20 - 5 - 1 = 14 free, 14 - 8 = 6 computed (0.002 -> 0.018).
    Then 6 + (8 + 6) + 1 = 21 > 20: request 1 is preempted (its recompute, 16 tokens, trusts no
    prefix); request 0's 8 last decodes to 0.098; request 1's 16 tokens to 0.114, its decode to
    0.124."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(4, 16, 1), output=_InTurn(10, 2, 1), arrival_times_s=(0.0, 0.0, 1.0),  # type: ignore[arg-type]
                      prefix_hit_tokens=0.5)
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=20), requests=3, warmup=0)
    r0, r1, _ = raw.records
    assert (r0.cached_tokens, r1.cached_tokens) == (2, 8)
    assert (r0.ttft_s, r0.e2e_s) == (pytest.approx(0.002), pytest.approx(0.098))
    assert (r1.preemptions, r1.ttft_s, r1.e2e_s) == (1, pytest.approx(0.114), pytest.approx(0.124))


def test_without_chunked_prefill_the_budget_bounds_the_prompts_after_the_first() -> None:
    """As the 40-token cache test above, with an iteration budget of 16: at 0.010 request 1's prompt
    (10) goes, and request 2's (10 > 16 - 10) waits: 0.010 -> 0.020; at 0.020 request 2's prompt
    goes alone (the decodes wait), 0.020 -> 0.030; request 3's 10 do not fit (40 - 33 - 3 = 4), so
    the three decode 0.030 -> 0.040, and request 3 runs 0.040 -> 0.060."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(2), arrival_times_s=(0.0, 0.0, 0.0, 0.0, 1.0))
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=40, max_num_batched_tokens=16, chunked_prefill=False),
              requests=5, warmup=0)
    firsts = [r.arrival_s + r.ttft_s for r in raw.records]
    dones = [r.arrival_s + r.e2e_s for r in raw.records]
    assert firsts == [pytest.approx(x, rel=1e-9) for x in (0.010, 0.020, 0.030, 0.050, 1.010)]
    assert dones == [pytest.approx(x, rel=1e-9) for x in (0.040, 0.040, 0.040, 0.060, 1.020)]


def test_a_completion_at_the_windows_start_tied_with_the_checkpoints_last_arrival_counts() -> None:
    """Warm-up 1. Request 0 (2 prompt tokens at 1/8 s, 1 output) is done at 0.25 s, the instant
    requests 1 and 2 arrive: the window of the checkpoint of 3 is [0.25, 0.25], and the completion
    at 0.25 (after the arrivals: ties go to arrivals) is in it: 1 completion, 1 token."""
    law = LinearStepCost(0.25, prefill_per_token_s=0.125)
    traffic = Traffic(prompt=Fixed(2), output=Fixed(1), arrival_times_s=(0.0, 0.25, 0.25, 5.0))
    cut = run(law, traffic, Scheduler(), requests=4, warmup=1, checkpoints=[3], stop=lambda raw: True)
    assert (cut.window_start_s, cut.window_end_s) == (0.25, 0.25)
    assert (cut.completions_in_window, cut.output_tokens_in_window) == (1, 1)


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_a_recompute_prefill_samples_the_next_token_as_vllm_does(engine: str) -> None:
    """vLLM V1's recompute preemption resets the request's computed tokens to 0 and later prefills
    its prompt and the tokens it had generated as one ordinary prefill; the pass over its last
    position samples the next token (only a partial prefill's sampled token is discarded). So a
    recompute yields a token, and no decode iteration more is spent per preemption.

    Prefill 1 ms a token, a decode iteration 10 ms, a KV cache of 20 tokens. Requests 0 (4 prompt,
    8 output) and 1 (4 prompt, 6 output) at 0 s; request 2 at 1 s closes the window.

    - 0 -> 0.004: request 0's prompt (4 tokens); its first token (context 5).
    - 0.004 -> 0.018: request 0's decode (10 ms) and request 1's prompt (4 ms): contexts 6 + 5 = 11.
    - 0.018 -> 0.058: four decodes of both (room 20 - 11 = 9 holds 4 iterations of 2 tokens):
      request 0 has 6 tokens (context 10), request 1 has 5 (context 9); the next iteration needs
      19 + 2 = 21 > 20: request 1, the last admitted, is preempted with 5 tokens (its out - 1);
      its recompute is 4 + 5 = 9 tokens. Nothing is admitted until a request finishes.
    - 0.058 -> 0.078: request 0's two last decodes (tokens 7, 8): done at 0.078 s.
    - 0.078 -> 0.087: request 1's recompute, 9 tokens at 1 ms; its last position samples its 6th
      token, its last: done at 0.087 s (the old model spent a decode more: 0.097 s).

    Tokens: 8 + 6 = 14 completed in the window [0, 1 s]; busy 0.087 s of it."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(4), output=_InTurn(8, 6, 2), arrival_times_s=(0.0, 0.0, 1.0))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=20), requests=3, warmup=0, engine=engine)
    r0, r1, r2 = raw.records
    assert (r0.preemptions, r1.preemptions, r2.preemptions) == (0, 1, 0)
    assert r0.e2e_s == pytest.approx(0.078, rel=1e-9)
    assert r1.ttft_s == pytest.approx(0.018, rel=1e-9)
    assert r1.e2e_s == pytest.approx(0.087, rel=1e-9)
    assert r2.e2e_s == pytest.approx(0.004 + 0.010, rel=1e-9)  # alone: its prompt, one decode
    assert (raw.completions_in_window, raw.output_tokens_in_window) == (2, 14)
    assert raw.busy_s == pytest.approx(0.087, rel=1e-9)


# ---- issue 22, the seed-10 sample of 300 (benchmarks/mutation.sh simulator:serving_sim sample 300 10) ----


def test_traffic_names_the_arrival_kinds_and_the_cv_bounds_it_takes() -> None:
    """The words of two refusals, the values written out: arrivals poisson, constant or gamma; a
    gamma cv from 1e-3 to 1e3 (MIN_CV, MAX_CV), stated as 0.001 and 1000."""
    with pytest.raises(ValueError) as got:
        Traffic(arrival_rate_per_s=1.0, arrival="weibull")
    assert str(got.value) == "arrival must be one of poisson, constant, gamma, got 'weibull'"
    with pytest.raises(ValueError) as got:
        Traffic(arrival_rate_per_s=1.0, arrival="gamma", cv=0.0)
    assert str(got.value) == "cv must be between 0.001 and 1000, got 0.0"


def test_a_running_prefill_takes_a_chunk_of_the_one_token_the_cache_has_left() -> None:
    """An iteration budget of 4 tokens, a KV cache of 9; prefill 1 ms a token, a decode iteration 10 ms.
    Request 0 (2 prompt, 4 output) and request 1 (6 prompt, 1 output) at 0 s; request 2 (2, 1) at 1 s.

    - 0 -> 0.002: request 0 arrives to an idle engine and prefills alone (2 tokens); first token,
      context 3. Request 1, arrived at the same instant, waits for the next iteration.
    - 0.002 -> 0.015: request 0's decode (1 of the budget) and a first chunk of request 1: the budget
      leaves 3, the cache 9 - 3 - 1 = 5: 3 tokens (10 ms + 3 ms). Context 4; 3 of request 1 held.
    - 0.015 -> 0.026: request 0's decode, and request 1 goes on with what the cache has left,
      9 - 4 - 3 - 1 = 1 token (exactly one: the chunk of 1 is taken): 10 ms + 1 ms. Context 5, 4 held.
    - 0.026: the decode needs 5 + 4 + 1 = 10 > 9: request 1, the last admitted, is preempted mid
      prefill (its recompute is its 6 prompt tokens); request 0's last decode, 0.026 -> 0.036, done.
    - 0.036 -> 0.040 -> 0.042: request 1's 6 tokens in chunks of 4 and 2 (no decode: 1 ms a token);
      its first token, its only one: done at 0.042 s.
    (Were the one free token refused, request 0 would run its two last decodes as one run, done at
    0.035, and request 1 its last 3 tokens after it, done at 0.038, never preempted.)"""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(2, 6, 2), output=_InTurn(4, 1, 1), arrival_times_s=(0.0, 0.0, 1.0))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(max_num_batched_tokens=4, kv_capacity_tokens=9), requests=3, warmup=0)
    r0, r1, r2 = raw.records
    assert (r0.ttft_s, r0.e2e_s, r0.preemptions) == (pytest.approx(0.002), pytest.approx(0.036), 0)
    assert (r1.queue_s, r1.ttft_s, r1.e2e_s, r1.preemptions) == \
        (pytest.approx(0.002), pytest.approx(0.042), pytest.approx(0.042), 1)
    assert (r2.ttft_s, r2.e2e_s) == (pytest.approx(0.002), pytest.approx(0.002))


def test_two_prompts_admitted_in_one_iteration_share_the_cache_between_them() -> None:
    """A KV cache of 20; prefill 1 ms a token, a decode iteration 10 ms. Request 0 (2 prompt, 3
    output) at 0 s; requests 1 (6, 2) and 2 (14, 2) at 0.001 s, while request 0 prefills.

    - 0 -> 0.002: request 0's prompt; first token, context 3.
    - 0.002: request 0's decode reserves its token: 20 - 3 - 1 = 16 free. Request 1 takes 6 (10 left),
      request 2 the 10 left of its 14. 0.002 -> 0.028 (10 ms + 16 ms): request 1's first token
      (context 7), request 0's second token (context 4), request 2 holds 10.
    - 0.028: the two decodes need 4 + 7 + 10 + 2 = 23 > 20: request 2 is preempted mid prefill
      (recompute 14). 0.028 -> 0.038: the last decode of requests 0 and 1: both done.
    - 0.038 -> 0.052: request 2's 14 tokens alone (its first token); 0.052 -> 0.062 its decode.
    (Had request 1's 6 tokens not been taken from what request 2 could have, request 2 would have
    been given all 14 at 0.002 and the cache overcommitted.)"""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(2, 6, 14), output=_InTurn(3, 2, 2), arrival_times_s=(0.0, 0.001, 0.001))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=20), requests=3, warmup=0)
    r0, r1, r2 = raw.records
    assert (r0.e2e_s, r0.preemptions) == (pytest.approx(0.038), 0)
    assert (r1.queue_s, r1.ttft_s, r1.e2e_s, r1.preemptions) == \
        (pytest.approx(0.001), pytest.approx(0.027), pytest.approx(0.037), 0)
    assert (r2.queue_s, r2.ttft_s, r2.e2e_s, r2.preemptions) == \
        (pytest.approx(0.001), pytest.approx(0.051), pytest.approx(0.061), 1)


def test_a_request_rejected_inside_the_plan_leaves_its_replica_empty_for_least_loaded_routing() -> None:
    """Two replicas, least loaded; speculative decoding at 2.5 tokens a pass, a KV cache of 20 tokens
    (prefill 1 ms a token, passes 10 ms). Request 0 (10 + 10 tokens) on replica 0 is rejected inside
    the plan at 0.040 s (as in the tests above). Request 1 (1 prompt, 10 output) arrives at 0.001 s on
    replica 1 (replica 0 holds 1): prefill to 0.002, 9 tokens in 4 passes (ceil(9 / 2.5)), done at
    0.042 s. Request 2 (1 + 1) arrives at 0.041 s: replica 0 holds nothing (the rejected request has
    left it), replica 1 holds request 1: replica 0, its 1-token prefill done at 0.042 s."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001, tokens_per_pass=2.5)
    traffic = Traffic(prompt=_InTurn(10, 1, 1), output=_InTurn(10, 10, 1),  # type: ignore[arg-type]
                      arrival_times_s=(0.0, 0.001, 0.041))
    raw = run(law, traffic, Scheduler(replicas=2, load_balancer="least_loaded", kv_capacity_tokens=20),
              requests=3, warmup=0)
    assert [r.replica for r in raw.records] == [0, 1, 0]
    assert [r.rejected for r in raw.records] == [True, False, False]
    assert raw.records[1].e2e_s == pytest.approx(0.041, rel=1e-9)
    assert (raw.records[2].queue_s, raw.records[2].e2e_s) == (0.0, pytest.approx(0.001, rel=1e-9))


def test_without_chunked_prefill_a_full_engine_admits_no_prompt() -> None:
    """No chunked prefill, one sequence at a time; prefill 1 ms a token, decodes 10 ms. Requests 0
    and 1 (10 prompt, 2 output) at 0 s, request 2 at 1 s. Request 0: prompt 0 -> 0.010, decode to
    0.020. Request 1 waits for its slot: prompt 0.020 -> 0.030, decode to 0.040 (queue 0.020 s)."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(2), arrival_times_s=(0.0, 0.0, 1.0))
    raw = run(law, traffic, Scheduler(max_num_seqs=1, chunked_prefill=False), requests=3, warmup=0)
    r0, r1, _ = raw.records
    assert (r0.ttft_s, r0.e2e_s) == (pytest.approx(0.010), pytest.approx(0.020))
    assert (r1.queue_s, r1.ttft_s, r1.e2e_s) == (pytest.approx(0.020), pytest.approx(0.030), pytest.approx(0.040))


@pytest.mark.parametrize(("engine", "events"), [("event", 6), ("iteration", 12)])
def test_the_iteration_engine_takes_every_decode_iteration_as_an_event(engine: str, events: int) -> None:
    """Two requests (10 prompt, 5 output), alone each (at 0 and 1 s): an arrival, the prefill's end
    (the first token), then 4 decode iterations. The event engine takes the 4 as one run (3 events a
    request: 6); the iteration engine each on its own (6 a request: 12), as the caller's allowance
    is told at the end and max_events bounds. The times are the same: first token 10 ms, done 50 ms."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(5), arrival_times_s=(0.0, 1.0))
    calls: list[int] = []
    raw = run(law, traffic, Scheduler(), requests=2, warmup=0, engine=engine, allowance=lambda n: calls.append(n) is None)
    assert calls == [events]
    assert [(r.ttft_s, r.e2e_s) for r in raw.records] == [(pytest.approx(0.010), pytest.approx(0.050))] * 2
    run(law, traffic, Scheduler(), requests=2, warmup=0, engine=engine, max_events=events)
    with pytest.raises(SimulationTooLong):
        run(law, traffic, Scheduler(), requests=2, warmup=0, engine=engine, max_events=events - 1)


def test_an_arrival_that_cannot_be_admitted_does_not_cut_a_decode_run() -> None:
    """One sequence at a time. Request 0 (10 prompt, 5 output) arrives at 0: its prefill to 0.010 s,
    then its 4 decodes as one run to 0.050 s. Request 1 (the same) arrives at 0.025 s, with no slot
    free: the run goes on uncut (an event for its arrival, none for a cut), and request 1 runs
    0.050 -> 0.060 -> 0.100 s. Events: arrival, prefill's end, run's end for each: 6."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=Fixed(10), output=Fixed(5), arrival_times_s=(0.0, 0.025))
    calls: list[int] = []
    raw = run(law, traffic, Scheduler(max_num_seqs=1), requests=2, warmup=0, allowance=lambda n: calls.append(n) is None)
    assert calls == [6]
    r0, r1 = raw.records
    assert r0.e2e_s == pytest.approx(0.050)
    assert (r1.queue_s, r1.ttft_s, r1.e2e_s) == (pytest.approx(0.025), pytest.approx(0.035), pytest.approx(0.075))
    with pytest.raises(SimulationTooLong):
        run(law, traffic, Scheduler(max_num_seqs=1), requests=2, warmup=0, max_events=5)


def test_a_closed_loop_whose_first_request_is_rejected_goes_on_with_the_other_users() -> None:
    """Two users, a KV cache of 20 tokens, 1-token replies; prefill 1 ms a token. Request 0 (30 prompt
    tokens: more than the cache) is rejected as it arrives at 0 s; its user sends request 2 at once
    (0 s), after request 1 (the other user's, also at 0 s). Request 1 (10 prompt) prefills 0 -> 0.010,
    done; request 2 waits for it and runs 0.010 -> 0.020; request 1's user sends request 3 at 0.010 s,
    run 0.020 -> 0.030."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(30, 10, 10, 10), output=Fixed(1), concurrency=2)  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=20), requests=4, warmup=0)
    assert [r.rejected for r in raw.records] == [True, False, False, False]
    assert [r.arrival_s for r in raw.records] == [0.0, 0.0, 0.0, pytest.approx(0.010)]
    assert [r.e2e_s for r in raw.records[1:]] == [pytest.approx(x) for x in (0.010, 0.020, 0.020)]
    assert [r.queue_s for r in raw.records[1:]] == [0.0, pytest.approx(0.010), pytest.approx(0.010)]


def test_an_arrival_one_ulp_before_a_decode_runs_end_waits_for_that_end() -> None:
    """Request 0 (1 prompt, 12 output) prefills 0 -> 0.001 s, then decodes as one run of 11 iterations
    of 10 ms, to 0.001 + 11 x 0.01 = 0.111 s (the float 0.111). Request 1 (1 + 1) arrives one ulp
    before that end. The cut's first guess, (t - t0) x 11 / (0.111 - 0.001), rounds to 11.0 there (the
    ulp is lost in the product): 12 iterations, one past the run, which the guess's clamp brings back
    to 11; the 11th boundary is the run's end, so no cut: request 1 waits for it (a queue of the ulp,
    ~1.4e-17 s) and prefills 0.111 -> 0.112 s, done: 1 ms."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    end = 0.001 + 11 * 0.01
    arrive = math.nextafter(end, 0.0)
    assert (arrive - 0.001) * 11 / (end - 0.001) == 11.0  # the premise: the product loses the ulp
    traffic = Traffic(prompt=Fixed(1), output=_InTurn(12, 1), arrival_times_s=(0.0, arrive))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(), requests=2, warmup=0)
    r0, r1 = raw.records
    assert (r0.ttft_s, r0.e2e_s) == (pytest.approx(0.001), pytest.approx(0.111))
    assert r1.queue_s == pytest.approx(0.0, abs=1e-15)
    assert (r1.ttft_s, r1.e2e_s) == (pytest.approx(0.001), pytest.approx(0.001))


def test_a_fractional_pass_s_context_rounding_takes_no_token_from_a_chunk() -> None:
    """Speculative decoding at 1.3 tokens a pass, a KV cache of 25 tokens; prefill 1 ms a token, a
    pass 10 ms. Request 0 (1 prompt, 20 output) prefills 0 -> 0.001 s (context 2), then 19 tokens in
    ceil(19 / 1.3) = 15 passes: one run to 0.151 s (the cache holds them: 2 + 1.3 x 15 < 25).
    Request 1 (12 prompt, 1 output) arrives at 0.085 s and cuts the run at its 9th boundary, 0.091 s
    (context 2 + 1.3 x 9 = 13.7). The cache left, less the pass's 1.3: 25 - 13.7 - 1.3 = 10 tokens,
    exactly; in floats 9.999999999999998 (1.3 is not a binary fraction), which int() made 9 before.

    - 0.091 -> 0.111: request 0's pass and request 1's chunk of 10 (10 ms + 10 ms).
    - 0.111: the pass needs 15 + 10 + 1.3 = 26.3 > 25: request 1 is preempted mid prefill (recompute
      12); request 0's last 5 passes to 0.161 s, done.
    - 0.161 -> 0.173: request 1's 12 tokens alone; its first token, its only one.
    So request 0 is done at 0.161 s (0.160 with the 9-token chunk), request 1's TTFT 0.173 - 0.085 =
    0.088 s (0.087)."""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001, tokens_per_pass=1.3)
    assert 25 - (2 + 1.3 * 9) - 1.3 < 10  # the premise: the float sum is a hair below the 10 tokens
    traffic = Traffic(prompt=_InTurn(1, 12), output=_InTurn(20, 1), arrival_times_s=(0.0, 0.085))  # type: ignore[arg-type]
    for engine in ("event", "iteration"):
        traffic.prompt.next = traffic.output.next = 0  # type: ignore[attr-defined]
        raw = run(law, traffic, Scheduler(kv_capacity_tokens=25), requests=2, warmup=0, engine=engine)
        r0, r1 = raw.records
        assert (r0.ttft_s, r0.e2e_s, r0.preemptions) == (pytest.approx(0.001), pytest.approx(0.161), 0), engine
        assert (r1.ttft_s, r1.e2e_s, r1.preemptions) == (pytest.approx(0.088), pytest.approx(0.088), 1), engine


def test_recomputes_admitted_together_hold_no_cached_prefix() -> None:
    """A KV cache of 12; prefill 1 ms a token, a decode iteration 10 ms. Requests 0 (2 prompt, 4 output),
    1 (4, 3) and 2 (4, 3) at 0 s; request 3 (1, 1) at 1 s.

    - 0 -> 0.002: request 0 alone (it found the engine idle); context 3.
    - 0.002 -> 0.020: request 0's decode and both prompts (12 - 3 - 1 = 8 free: 4 + 4): 10 + 8 ms.
      First tokens of requests 1 and 2; contexts 4 + 5 + 5.
    - 0.020: three decodes need 14 + 3 = 17 > 12: request 2 is preempted (1 token: recompute 5);
      9 + 2 = 11 fits. One pass (room 3 for growth 2): 0.020 -> 0.030; contexts 5 + 6.
    - 0.030: 11 + 2 = 13 > 12: request 1 is preempted (2 tokens: recompute 6). Request 0's last
      pass, 0.030 -> 0.040: done.
    - 0.040: the queue is request 1, then request 2. A recompute trusts no prefix cache (its prefill
      holds nothing before it): request 1's 6 tokens, then request 2's 5 in the 12 - 6 = 6 left, one
      iteration of 11 ms to 0.051 s. Request 1's recompute samples its 3rd token, its last: done at
      0.051 s; request 2 (2 tokens) decodes once more: done at 0.061 s.
    (Had each recompute held a token before it, request 2 would get 4 of its 5 at 0.040 and request 1
    be done at 0.050.)"""
    law = LinearStepCost(0.01, prefill_per_token_s=0.001)
    traffic = Traffic(prompt=_InTurn(2, 4, 4, 1), output=_InTurn(4, 3, 3, 1), arrival_times_s=(0.0, 0.0, 0.0, 1.0))  # type: ignore[arg-type]
    raw = run(law, traffic, Scheduler(kv_capacity_tokens=12), requests=4, warmup=0)
    r0, r1, r2, _ = raw.records
    assert (r0.ttft_s, r0.e2e_s, r0.preemptions) == (pytest.approx(0.002), pytest.approx(0.040), 0)
    assert (r1.ttft_s, r1.e2e_s, r1.preemptions) == (pytest.approx(0.020), pytest.approx(0.051), 1)
    assert (r2.ttft_s, r2.e2e_s, r2.preemptions) == (pytest.approx(0.020), pytest.approx(0.061), 1)


class _ContextCharged:
    """A test-local step cost that charges the decode context it is told of even without decodes
    (1 ms a context token, 1 ms a prompt token; 10 ms a decode iteration), and records each call: what
    the simulator says an iteration holds."""

    tokens_per_pass = 1.0
    spec_tokens = 1

    def __init__(self) -> None:
        self.calls: list = []

    def iteration_s(self, batch: int, context_tokens: float, prefill) -> float:  # type: ignore[no-untyped-def]
        self.calls.append((batch, context_tokens, tuple(prefill)))
        return (0.01 if batch else 0.0) + 0.001 * context_tokens + 0.001 * sum(new for new, _ in prefill)

    def decode_terms(self, batch: int, context_tokens: float):  # type: ignore[no-untyped-def]
        return ((0.01, 0.001, 0.0, 0.0),), math.inf


def test_without_chunked_prefill_an_iteration_of_prompts_carries_no_decode_context() -> None:
    """No chunked prefill: request 0 (10 prompt, 1 output) at 0 s is prefilled whole in an iteration of
    prompts only, told as no decodes, no decode context, one chunk of 10 new tokens with none before
    it: 10 ms, its first and only token at 0.010 s. Request 1 at 1 s alike."""
    law = _ContextCharged()
    traffic = Traffic(prompt=Fixed(10), output=Fixed(1), arrival_times_s=(0.0, 1.0))
    raw = run(law, traffic, Scheduler(chunked_prefill=False), requests=2, warmup=0)  # type: ignore[arg-type]
    assert law.calls == [(0, 0.0, ((10, 0),))] * 2
    assert [(r.ttft_s, r.e2e_s) for r in raw.records] == [(pytest.approx(0.010), pytest.approx(0.010))] * 2
