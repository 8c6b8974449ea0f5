"""A seeded discrete-event simulation of iteration-level continuous batching.

What it models (vLLM V1 / SGLang scheduling, per replica):

* Each **iteration** is one forward pass. The scheduler first keeps every
  running decode (``k + 1`` tokens each under speculative decoding), then
  continues running prefills, then admits waiting requests first come first
  served, while the iteration's token budget (``max_num_batched_tokens``,
  chunked prefill), the sequence cap (``max_num_seqs``) and the KV cache
  (``kv_capacity_tokens``) allow; nothing is admitted in an iteration that
  had to preempt. A prompt longer than what is left of the
  budget is split into chunks over several iterations. The iteration's
  duration comes from a :class:`~budgetlint.physics.step_cost.StepCost`.
* **Queue wait** ends when a request is first scheduled; its **first token**
  appears at the end of the iteration that finishes its prefill; every later
  iteration gives each decode ``tokens_per_pass`` tokens.
* **KV cache**: a sequence holds its context (prompt + tokens so far); a
  decode needs room for the token it writes. When the cache cannot hold the
  next iteration, the most recently admitted running request is **preempted
  by recompute** (vLLM's default): its cache is freed, it goes back to the
  head of the queue and later prefills its prompt and the tokens it had
  produced again; the end of that recompute samples its next token (as the
  end of a first prefill samples the first). No request is admitted in the iteration that preempted
  (vLLM V1) nor after it until a running request finishes: the room a
  completion frees is what lets the queue in again (vLLM re-admits as soon as
  a prefill chunk fits, and thrashes when the cache is short; modelled so,
  the thrash would cost an event per iteration). A request that could not fit even alone (prompt + reply
  above the cache) is rejected, as an engine rejects a prompt over its
  ``max_model_len``.
* **Prefix cache**: a hit moves that share of the prompt from computed to
  cached (it still occupies cache, costs no prefill compute).
* **Replicas** are independent engines behind a load balancer that sends each
  arrival to the next replica (``round_robin``), to the one with the fewest
  requests in it (``least_loaded``, lowest index on ties) or to one drawn at
  random, each equally likely (``random``: a router whose scores tie, as the
  llm-d inference scheduler's picker breaks them; a Poisson stream split so is
  a Poisson stream at each replica's share).
* **Multi-step scheduling** (vLLM V0 ``--num-scheduler-steps``, ``Scheduler.scheduler_steps`` k > 1):
  a decode-only iteration starts a block of k, inside which nothing is admitted; a prompt arriving
  in it waits for its end. A replica with no decode running schedules at once.
* **Traffic**: open loop (arrivals at ``arrival_rate_per_s`` for the whole
  service, poisson / constant / gamma with ``cv``, or the arrival times of a
  benchmark run replayed) or closed loop (``concurrency`` users who send
  their next request when one ends).

Runs of decode-only iterations with nothing to change them (no arrival that
could be admitted, no finish, no cache exhaustion) are taken in one step
with :func:`~budgetlint.physics.step_cost.sum_components`, so the cost of a
simulation grows with the number of requests, not of tokens.

Times are seconds from the first arrival; the first ``warmup`` requests are
simulated but not measured. Statistics are in :mod:`.load_stats`.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple, Optional, Sequence

from .step import line_rises, lines_from, sum_lines
from .step_cost import StepCost
from .traffic import ARRIVAL_KINDS, Empirical, Fixed, LengthDist, LogNormal, Uniform, unit_gap_sampler
from budgetlint.text import numbers

LOAD_BALANCERS = ("round_robin", "least_loaded", "random")
#: gamma arrivals: a cv below this is constant arrivals, above that one burst
MIN_CV, MAX_CV = 1e-3, 1e3


@dataclass(frozen=True, kw_only=True)
class Traffic:
    """What arrives. Give one of ``arrival_rate_per_s`` (open loop, for the whole
    service), ``concurrency`` (closed loop) or ``arrival_times_s`` (open loop,
    replaying the arrival times of a benchmark run, seconds, any origin)."""

    prompt: LengthDist = field(default_factory=lambda: Fixed(0))
    output: LengthDist = field(default_factory=lambda: Fixed(1))
    arrival_rate_per_s: Optional[float] = None
    arrival: str = "poisson"
    cv: float = 1.0
    concurrency: Optional[int] = None
    prefix_hit_requests: float = 1.0
    prefix_hit_tokens: float = 0.0
    arrival_times_s: Optional[tuple[float, ...]] = None

    def __post_init__(self) -> None:
        given = [x is not None for x in (self.arrival_rate_per_s, self.concurrency, self.arrival_times_s)]
        if sum(given) != 1:
            raise ValueError("traffic needs arrival_rate_per_s (open loop), concurrency (closed loop) or "
                             "arrival_times_s (a trace), exactly one")
        if self.arrival_times_s is not None:
            ts = tuple(float(t) for t in self.arrival_times_s)
            if len(ts) < 2 or any(not math.isfinite(t) for t in ts) or any(b < a for a, b in zip(ts, ts[1:])):
                raise ValueError("arrival_times_s must be at least 2 finite times in order")
            if ts[-1] == ts[0]:
                raise ValueError("arrival_times_s must span some time")
            object.__setattr__(self, "arrival_times_s", tuple(t - ts[0] for t in ts))
        if self.arrival_rate_per_s is not None:
            r = self.arrival_rate_per_s
            if not (isinstance(r, (int, float)) and math.isfinite(r) and r > 0):
                raise ValueError(f"arrival_rate_per_s must be positive and finite, got {r!r}")
        if self.concurrency is not None and (not isinstance(self.concurrency, int) or self.concurrency < 1):
            raise ValueError(f"concurrency must be an integer >= 1, got {self.concurrency!r}")
        if self.arrival not in ARRIVAL_KINDS:
            raise ValueError(f"arrival must be one of {', '.join(ARRIVAL_KINDS)}, got {self.arrival!r}")
        if not (isinstance(self.cv, (int, float)) and MIN_CV <= self.cv <= MAX_CV):
            raise ValueError(f"cv must be between {numbers.stated(MIN_CV)} and {numbers.stated(MAX_CV)}, got {self.cv!r}")
        for name in ("prefix_hit_requests", "prefix_hit_tokens"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v <= 1):
                raise ValueError(f"{name} must be a share in [0, 1], got {v!r}")

    @property
    def trace_rate_per_s(self) -> float:
        """Mean rate of a trace: (n - 1) arrivals over its span."""
        ts = self.arrival_times_s or (0.0, 0.0)
        return (len(ts) - 1) / (ts[-1] - ts[0]) if ts[-1] > ts[0] else math.nan

    def at_rate(self, rate_per_s: float) -> "Traffic":
        """The same traffic, open loop at another service-wide rate (a trace is
        stretched or squeezed to that mean rate)."""
        times = None
        rate: Optional[float] = rate_per_s
        if self.arrival_times_s is not None:
            k = self.trace_rate_per_s / rate_per_s
            times, rate = tuple(t * k for t in self.arrival_times_s), None
        return Traffic(prompt=self.prompt, output=self.output, arrival_rate_per_s=rate,
                       arrival=self.arrival, cv=self.cv, prefix_hit_requests=self.prefix_hit_requests,
                       prefix_hit_tokens=self.prefix_hit_tokens, arrival_times_s=times)


@dataclass(frozen=True, kw_only=True)
class Scheduler:
    """The engine's scheduling limits, per replica."""

    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    kv_capacity_tokens: float = math.inf
    replicas: int = 1
    load_balancer: str = "round_robin"
    #: False: an engine without chunked prefill (vLLM's V0 default below 32k context, vllm 0.6.0
    #: vllm/engine/arg_utils.py:843-869): a waiting prompt is prefilled whole, in an iteration of
    #: prompts only, and the decodes wait for it (:meth:`_Replica._plan_whole_prefills`)
    chunked_prefill: bool = True
    #: vLLM V0 multi-step scheduling (``--num-scheduler-steps``): a decode-only batch, once scheduled,
    #: runs this many iterations before the scheduler is called again (vllm/engine/llm_engine.py
    #: ``LLMEngine.step``: "Skip the scheduler if there are any remaining steps in the seq groups",
    #: ``_has_remaining_steps``), so a prompt that arrives inside the block waits for its end. A block
    #: starts at a decode-only iteration; requests that finish inside it leave at once; a replica with no
    #: decode running schedules at once. 1: every iteration is scheduled (:meth:`_Replica.plan`)
    scheduler_steps: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.chunked_prefill, bool):
            raise ValueError(f"chunked_prefill must be True or False, got {self.chunked_prefill!r}")
        for name in ("max_num_seqs", "max_num_batched_tokens", "replicas", "scheduler_steps"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        k = self.kv_capacity_tokens
        if not (isinstance(k, (int, float)) and k > 0):
            raise ValueError(f"kv_capacity_tokens must be positive, got {k!r}")
        if self.load_balancer not in LOAD_BALANCERS:
            raise ValueError(f"load_balancer must be one of {', '.join(LOAD_BALANCERS)}, "
                             f"got {self.load_balancer!r}")


class RequestRecord(NamedTuple):
    """One measured request (seconds; ``rejected`` ones have NaN times). A named tuple: a run
    makes one per request, and a frozen dataclass's ``__init__`` (a ``object.__setattr__`` per
    field) cost a fifth of a simulation's CPU (issue 28)."""

    index: int
    replica: int
    arrival_s: float
    queue_s: float
    ttft_s: float
    e2e_s: float
    tpot_s: float  # (e2e - ttft) / output tokens: budgetlint's TPOT, over all N tokens
    prompt_tokens: int
    cached_tokens: int
    output_tokens: int
    preemptions: int
    rejected: bool


@dataclass(frozen=True)
class RawRun:
    """What :func:`run` observed; :func:`~budgetlint.physics.load_stats.summarise` reads it."""

    records: tuple[RequestRecord, ...]
    window_start_s: float  # arrival of the first measured request
    window_end_s: float  # arrival of the last request
    replicas: int
    #: time integral of requests in the system over the window (its own counter)
    in_system_area: float
    #: per replica, busy intervals clipped to the window: total seconds
    busy_s: float
    #: (duration_s, sequences in the iteration) of every busy stretch inside the window
    batch_time: tuple[tuple[float, int], ...]
    arrivals_in_window: int
    completions_in_window: int
    output_tokens_in_window: int


class _Req:
    __slots__ = ("i", "arr", "prompt", "cached", "out", "sched", "first", "done", "gen",
                 "preempt", "replica", "pf_total", "pf_earlier", "pf_done", "g_join",
                 "ctx_join", "finish_g", "version", "rejected")

    def __init__(self, i: int, arr: float, prompt: int, cached: int, out: int) -> None:
        self.i = i
        self.arr = arr
        self.prompt = prompt
        self.cached = cached
        self.out = out
        self.sched = math.nan
        self.first = math.nan
        self.done = math.nan
        self.gen = 0.0  # output tokens produced so far
        self.preempt = 0
        self.replica = -1
        self.pf_total = 0  # tokens this prefill computes
        self.pf_earlier = 0  # tokens already in cache before it (prefix hit)
        self.pf_done = 0
        self.g_join = 0
        self.ctx_join = 0.0
        self.finish_g = 0
        self.version = 0
        self.rejected = False

    def size_prefill(self) -> None:
        """At its first admission (not after a preemption: :meth:`_Replica._preempt_last` sizes the
        recompute), a request's prefill is its prompt less the cached prefix, at least one token."""
        if self.pf_done == 0 and self.preempt == 0 and self.pf_total == 0:
            self.pf_total = self.prompt - self.cached if self.prompt - self.cached > 1 else 1  # max(.., 1)
            self.pf_earlier = self.prompt - self.pf_total


class _Replica:
    """One engine's state; see the module doc for the policy."""

    # slots: every event reads and writes a dozen of these (issue 28)
    __slots__ = ("index", "stepwise", "cost", "max_seqs", "budget", "cap", "a", "spec_tokens", "waiting", "running",
                 "prefilling", "n_decoding", "heap", "g", "ctx_off", "prefill_held", "in_system", "busy_until", "t0",
                 "kind", "jump_k", "jump_lines", "decode_kept", "rises_kept", "chunks", "plan_batch", "finished", "hold",
                 "chunked", "steps", "block_left")

    def __init__(self, index: int, cost: StepCost, sched: Scheduler, engine: str = "event") -> None:
        self.index = index
        self.stepwise = engine == "iteration"
        self.cost = cost
        self.max_seqs = sched.max_num_seqs
        self.budget = sched.max_num_batched_tokens
        self.chunked = sched.chunked_prefill
        self.steps = sched.scheduler_steps
        self.block_left = 0  # decode iterations left in the multi-step block in flight (0: none)
        self.cap = float(sched.kv_capacity_tokens)
        self.a = float(cost.tokens_per_pass)
        # the cost's decode_terms by batch, where it keeps them so (RooflineStepCost.decode_by_batch)
        self.decode_kept = getattr(cost, "decode_by_batch", None)
        #: batch -> (its components, their step.line_rises at the growth a x batch): the cost's where it keeps
        #: them (RooflineStepCost.rises_by_batch: shared by the runs on it), else this replica's
        kept_rises = getattr(cost, "rises_by_batch", None)
        self.rises_kept: dict = kept_rises if isinstance(kept_rises, dict) else {}
        self.spec_tokens = 1  # budget tokens a decode takes
        self.waiting: deque[_Req] = deque()
        self.running: list[_Req] = []  # admission order (preempt from the end)
        self.prefilling: list[_Req] = []
        self.n_decoding = 0
        self.heap: list[tuple[int, int, int, _Req]] = []  # (finish_g, version, i, req)
        self.g = 0
        self.ctx_off = 0.0  # sum over decodes of ctx_join - a g_join
        self.prefill_held = 0.0
        self.in_system = 0
        # the plan in flight
        self.busy_until = math.inf
        self.t0 = 0.0
        self.kind = ""  # "" idle, "iter", "jump", "prefill" (whole prompts only: no chunked prefill)
        self.jump_k = 0
        self.jump_lines: tuple = ()  # the run's step.component_lines
        self.chunks: list[tuple[_Req, int]] = []
        self.plan_batch = 0
        self.finished: list[_Req] = []
        self.hold = False  # a preemption holds admissions until a request finishes

    # ---- bookkeeping ----------------------------------------------------
    # the decodes' summed context is ctx_off + a x n_decoding x g; the cache in use is that plus
    # prefill_held (spelled out where read: the hot path of every event)
    def _start_decode(self, r: _Req, now: float) -> None:
        remaining = r.out - r.gen
        if remaining <= 0:
            self._finish(r, now)
            return
        r.g_join = self.g
        r.ctx_join = r.prompt + r.gen
        steps = math.ceil(remaining / self.a - 1e-9)
        r.finish_g = self.g + (steps if steps > 1 else 1)  # max(1, steps)
        r.version += 1
        self.ctx_off += r.ctx_join - self.a * self.g
        self.n_decoding += 1
        heapq.heappush(self.heap, (r.finish_g, r.version, r.i, r))

    def _stop_decode(self, r: _Req) -> None:
        self.ctx_off -= r.ctx_join - self.a * r.g_join
        self.n_decoding -= 1
        r.version += 1  # the heap entry goes stale

    def _finish(self, r: _Req, now: float) -> None:
        self.hold = False
        r.done = now
        r.gen = r.out
        self.running.remove(r)
        self.in_system -= 1
        self.finished.append(r)

    def _preempt_last(self) -> None:
        r = self.running.pop()
        if r in self.prefilling:
            self.prefilling.remove(r)
            self.prefill_held -= r.pf_earlier + r.pf_done
        else:
            r.gen = min(r.out - 1.0, r.gen + math.floor(self.a * (self.g - r.g_join) + 1e-9))
            self._stop_decode(r)
        r.preempt += 1
        # recompute: prompt and tokens so far, prefix cache not trusted to survive
        r.pf_total = r.prompt + int(r.gen)
        r.pf_earlier = 0
        r.pf_done = 0
        self.waiting.appendleft(r)

    # ---- planning ---------------------------------------------------------
    def plan(self, now: float) -> None:
        """Choose the next iteration (or run of decode iterations) starting at ``now``;
        requests rejected on the way are appended to ``finished``."""
        running, waiting = self.running, self.waiting
        if not running and not waiting:
            self.kind = ""
            self.busy_until = math.inf
            return
        a = self.a
        cap = self.cap
        # decodes need room for the token they write; preempt from the end
        # (the cache in use + a x n_decoding)
        preempted = False
        if cap != math.inf:
            while self.n_decoding and \
                    self.ctx_off + a * self.n_decoding * self.g + self.prefill_held + a * self.n_decoding > cap + 1e-9:
                self._preempt_last()
                preempted = True
        # as vLLM V1: no request is admitted in an iteration that had to preempt; and (a modelling
        # choice, module doc) none after it until a running request finishes. Set before the
        # whole-prompt plan too: without chunked prefill it would re-admit the preempted request
        # at once, in an iteration of prompts only that does not advance the decodes, whenever its
        # recompute fits what the preemption freed, and preempt it again, without end
        if preempted:
            self.hold = True
        if self.n_decoding == 0:  # no decode running: nothing holds the scheduler (a block ends with its batch)
            self.block_left = 0
        if not self.chunked and self._plan_whole_prefills(now):
            return
        n_dec = self.n_decoding
        budget = self.budget - n_dec * self.spec_tokens
        chunks: list[tuple[_Req, int]] = []
        ctx = self.ctx_off + a * n_dec * self.g  # the decodes' summed context
        # within 1e-9 of a token, as the preemption check: with a fractional tokens_per_pass the context's
        # float sums (a x g) land a hair off a whole token, and int() would take a token from a chunk
        free = cap - (ctx + self.prefill_held) - a * n_dec + 1e-9
        for r in self.prefilling:
            if budget <= 0 or free < 1:
                break
            c = r.pf_total - r.pf_done  # int(min(left, budget, free)), spelled out
            if budget < c:
                c = budget
            if free < c:
                c = free
            c = int(c)
            if c <= 0:
                break
            chunks.append((r, c))
            budget -= c
            free -= c
        if waiting and budget > 0 and not self.hold and self.chunked and not self.block_left:
            max_seqs = self.max_seqs
            while waiting and budget > 0:
                if len(running) >= max_seqs:
                    break
                r = waiting[0]
                r.size_prefill()
                if free < r.pf_earlier + 1:
                    break
                c = r.pf_total  # int(min(pf_total, budget, free - pf_earlier)), spelled out
                if budget < c:
                    c = budget
                if free - r.pf_earlier < c:
                    c = free - r.pf_earlier
                c = int(c)
                waiting.popleft()
                if r.sched != r.sched:  # NaN: first scheduled now
                    r.sched = now
                running.append(r)
                self.prefilling.append(r)
                self.prefill_held += r.pf_earlier
                free -= r.pf_earlier + c
                budget -= c
                chunks.append((r, c))
        self.t0 = now
        self.plan_batch = n_dec + len(chunks)
        if chunks:
            pf = []
            for r, c in chunks:
                self.prefill_held += c
                pf.append((c, r.pf_earlier + r.pf_done))
            self.chunks = chunks
            self.kind = "iter"
            self.busy_until = now + self.cost.iteration_s(n_dec, ctx, pf)
            return
        if n_dec == 0:
            if running:  # prefills stuck for cache room: free the newest, retry
                self._preempt_last()
            else:  # alone and still no room: a request that fits at arrival (prompt + reply) but whose
                # speculative passes overshoot the cache (up to tokens_per_pass - 1 tokens), preempted
                # with nothing else running. Rejected; the hold of its preemption goes with it (a
                # request leaving, as a finish does), or every later arrival here would be rejected too
                r = waiting.popleft()
                r.rejected = True
                self.hold = False
                r.done = now
                self.in_system -= 1
                self.finished.append(r)
            self.plan(now)
            return
        self.chunks = []
        if self.steps > 1 and not self.block_left:  # a decode-only batch scheduled: its block of iterations
            self.block_left = self.steps
        if self.stepwise:  # the iteration engine: one decode iteration at a time, the reference
            self.kind = "iter"
            self.busy_until = now + self.cost.iteration_s(n_dec, ctx, ())
            return
        # decode-only: how many identical iterations can run before something changes
        growth = a * n_dec
        kept = self.decode_kept  # the cost's decode_terms by batch, read without the call
        hit = kept.get(n_dec) if kept is not None else None
        comps, bp = hit if hit is not None else self.cost.decode_terms(n_dec, ctx)
        heap = self.heap
        while heap and heap[0][1] != heap[0][3].version:
            heapq.heappop(heap)
        k = heap[0][0] - self.g
        # k = min(k, max(1, (room + 1e-9) // growth), max(1, ceil((bp - ctx) / growth))), then max(1, k): spelled out
        if cap != math.inf:
            room = cap - (ctx + self.prefill_held)  # less the cache in use
            by_room = int((room + 1e-9) // growth)  # the passes that fit, within 1e-9 of a token as above
            if by_room < 1:
                by_room = 1
            if by_room < k:
                k = by_room
        if bp != math.inf:
            by_bp = math.ceil((bp - ctx) / growth)
            if by_bp < 1:
                by_bp = 1
            if by_bp < k:
                k = by_bp
        if k < 1:
            k = 1
        # a multi-step block's end admits the waiting: the run stops there when any wait (else it runs
        # on through block ends, which change nothing, and an arrival cuts it at one: :meth:`truncate_to_block`)
        if self.block_left and self.waiting and self.block_left < k:
            k = self.block_left
        self.kind = "jump"
        self.jump_k = k
        rises = self.rises_kept.get(n_dec)
        if rises is None or rises[0] is not comps:  # the components held by the entry: their identity is theirs
            rises = self.rises_kept[n_dec] = (comps, line_rises(comps, growth))
        # step.component_lines(comps, ctx, growth), its growth-only part kept: sum_components(comps, ctx, growth, .)
        self.jump_lines = lines = lines_from(rises[1], ctx)
        self.busy_until = now + sum_lines(lines, k)

    def _plan_whole_prefills(self, now: float) -> bool:
        """Without chunked prefill (vLLM V0's scheduler): the waiting prompts at the head of the
        queue, each whole, while the slots, the token budget (the first prompt always: V0 sizes the
        budget to the longest prompt) and the KV cache hold them, in an iteration of prompts only;
        the decodes wait for it (the step counter ``g`` does not advance). False when none can
        start now: the caller plans the decodes."""
        waiting = self.waiting
        if not waiting or self.hold or self.block_left:
            return False
        a, n_dec = self.a, self.n_decoding
        free = self.cap - (self.ctx_off + a * n_dec * self.g + self.prefill_held) - a * n_dec + 1e-9  # as in plan
        budget = self.budget
        chunks: list[tuple[_Req, int]] = []
        while waiting and len(self.running) < self.max_seqs:
            r = waiting[0]
            r.size_prefill()
            c = r.pf_total
            if (chunks and c > budget) or free < r.pf_earlier + c:
                break
            waiting.popleft()
            if r.sched != r.sched:  # NaN: first scheduled now
                r.sched = now
            self.running.append(r)
            self.prefilling.append(r)
            self.prefill_held += r.pf_earlier + c
            free -= r.pf_earlier + c
            budget -= c
            chunks.append((r, c))
        if not chunks:
            return False
        self.t0 = now
        self.plan_batch = len(chunks)
        self.chunks = chunks
        self.kind = "prefill"
        self.busy_until = now + self.cost.iteration_s(0, 0.0, [(c, r.pf_earlier) for r, c in chunks])
        return True

    def truncate(self, t: float, passed: bool = False) -> None:
        """Cut a run of decode iterations at the first iteration boundary at or after ``t``.

        ``passed``: a boundary tied with ``t`` is already behind (strictly after ``t``): an
        arrival born at ``t`` of a completion on a replica with a higher index, which the
        iteration engine commits after this one's boundary at the same instant (ties go to the
        lowest index), so this replica's next iteration has already begun without it.

        The smallest such ``k`` is searched from a guess: the run's steps only grow (its context
        does), so ``(t - t0) x k_run / (busy_until - t0)`` iterations end at or before ``t``; the
        search walks out from there (doubling) until it brackets the boundary, then bisects: the
        same ``k`` as a bisection over the whole run, in a few sums instead of ``log2 k_run``."""
        if self.kind != "jump" or self.jump_k <= 1 or t >= self.busy_until:
            return
        lines, t0 = self.jump_lines, self.t0
        tie = tie_s(t)
        k_run = self.jump_k

        ends: dict[int, float] = {}  # k -> the k-th boundary, as reached() found it (the cut reads it)

        def reached(k: int) -> bool:  # the k-th boundary is at or after t (within TIE_S of t is at t)
            end = ends[k] = t0 + sum_lines(lines, k)
            return (end > t + tie) if passed else (end >= t - tie)

        span = self.busy_until - t0
        guess = int((t - t0) * k_run / span) + 1 if span > 0 else 1
        if guess < 1:  # min(max(guess, 1), k_run), spelled out
            guess = 1
        if guess > k_run:
            guess = k_run
        lo, hi = 1, k_run  # the answer is in [lo, hi]
        if reached(guess):
            hi, step = guess, 1
            while hi - step >= lo:  # walk down until a boundary before t
                if not reached(hi - step):
                    lo = hi - step + 1
                    break
                hi -= step
                step *= 2
        else:
            lo, step = guess + 1, 1
            while lo + step - 1 < hi:  # walk up until a boundary at or after t
                if reached(lo + step - 1):
                    hi = lo + step - 1
                    break
                lo += step
                step *= 2
        while lo < hi:
            mid = (lo + hi) // 2
            if reached(mid):
                hi = mid
            else:
                lo = mid + 1
        if lo < k_run:  # then lo == hi, and every hi below k_run is a k that reached() returned True for: in ends
            self.jump_k = lo
            self.busy_until = ends[lo]

    def truncate_to_block(self, t: float, passed: bool = False) -> None:
        """:meth:`truncate` for a replica inside a multi-step block: cut the run at the first block end
        (``block_left``, then every ``steps`` iterations) at or after the first iteration boundary at or
        after ``t``, where a request arriving at ``t`` can be admitted."""
        if self.kind != "jump" or self.jump_k <= self.block_left or t >= self.busy_until:
            return
        k_run, end_run = self.jump_k, self.busy_until
        self.truncate(t, passed)
        k = self.jump_k
        first = self.block_left
        if k > first:
            k = first + self.steps * -((first - k) // self.steps)  # first + steps x ceil((k - first) / steps)
        else:
            k = first
        if k >= k_run:
            self.jump_k, self.busy_until = k_run, end_run
        else:
            self.jump_k, self.busy_until = k, self.t0 + sum_lines(self.jump_lines, k)

    # ---- commit -----------------------------------------------------------
    def commit(self) -> list[_Req]:
        """Apply the plan's effects at its end; return requests that finished (``finished``, empty
        when called: the loop empties it after reading it, and allocates no list when none finished)."""
        now = self.busy_until
        kind = self.kind
        if kind == "jump":
            self.g += self.jump_k
            if self.block_left:  # the iterations left in the block the run ended in (0: at a block's end)
                self.block_left = (self.block_left - self.jump_k) % self.steps
        elif kind == "iter":
            if self.n_decoding:
                self.g += 1
            if self.block_left:
                self.block_left -= 1
        heap = self.heap
        if heap and heap[0][0] <= self.g:
            self._pop_finished(now)
        if kind == "iter" or kind == "prefill":  # a prompts-only iteration leaves g where it was
            for r, c in self.chunks:
                r.pf_done += c
                if r.pf_done >= r.pf_total:
                    self.prefilling.remove(r)
                    self.prefill_held -= r.pf_earlier + r.pf_done
                    if r.first != r.first:  # NaN: the first token now
                        r.first = now
                    # the pass over a prefill's last position samples a token: the first token, or, for
                    # the recompute of a preempted request (prompt + the tokens it had), its next one.
                    # vLLM V1: _preempt_request sets num_computed_tokens = 0 and the resumed request
                    # schedules num_tokens - num_computed_tokens, its outputs included
                    # (vllm/v1/core/sched/scheduler.py at b4622cf924bc); the model runner discards the
                    # sampled token only while num_computed_tokens + scheduled < num_tokens (a partial
                    # prefill; vllm/v1/worker/gpu_model_runner.py at 4e1790651fc7). gen <= out - 1 here
                    # (_preempt_last), so gen + 1 <= out; a recompute that reaches out finishes now
                    r.gen = r.gen + 1.0 if r.gen >= 1.0 else 1.0
                    self._start_decode(r, now)
            self.chunks = []
        return self.finished

    def _pop_finished(self, now: float) -> None:
        heap, g, a = self.heap, self.g, self.a
        running, finished = self.running, self.finished
        while heap and heap[0][0] <= g:
            _, version, _, r = heapq.heappop(heap)
            if version != r.version:
                continue
            # self._stop_decode(r); self._finish(r, now), spelled out
            self.ctx_off -= r.ctx_join - a * r.g_join
            self.n_decoding -= 1
            r.version += 1
            self.hold = False
            r.done = now
            r.gen = r.out
            running.remove(r)
            self.in_system -= 1
            finished.append(r)


#: the seeds' draws kept for other runs (:func:`_lengths`, :func:`_gaps`): a run's traffics, most recent,
#: each of at most DRAWS_KEPT_REQUESTS requests (a longer run draws its own and keeps nothing: a
#: 3,000,000-request queueing check would otherwise hold ~300 MB after it returned); at most
#: ~10 MB in all at the 2,000 requests a budget's simulation takes
DRAWS_KEPT = 32
DRAWS_KEPT_REQUESTS = 20_000
_DRAWS: dict = {}


def _kept(key: object, make: Callable[[], list], n: int, pure: bool = True) -> list:
    if n > DRAWS_KEPT_REQUESTS or not pure:
        return make()
    hit = _DRAWS.pop(key, None)
    if hit is None:
        hit = make()
        if len(_DRAWS) >= DRAWS_KEPT:
            del _DRAWS[next(iter(_DRAWS))]
    _DRAWS[key] = hit  # most recent last
    return hit


#: length distributions whose draws depend on the generator alone (shared between runs)
PURE_LENGTHS = (Fixed, Uniform, LogNormal, Empirical)


def _dist_key(d: LengthDist) -> object:
    # an Empirical by identity (its values can be millions; the entry keeps it alive, so the id stays its own)
    return ("empirical", id(d)) if isinstance(d, Empirical) else d


def kept_for_lengths(traffic: Traffic, key: tuple, make: Callable[[], list], n: int) -> list:
    """The draws ``make`` returns for ``key`` and the traffic's length distributions, kept for other runs of
    the same lengths (:func:`_kept`); drawn afresh where a distribution is not a pure function of the
    generator it is given (only the traffic module's own are: physics/disaggregated's replay of given
    lengths keeps an iterator). The entry should hold the distributions (an Empirical is keyed by id)."""
    pure = type(traffic.prompt) in PURE_LENGTHS and type(traffic.output) in PURE_LENGTHS
    return _kept(key + (_dist_key(traffic.prompt), _dist_key(traffic.output)), make, n, pure)


def _lengths(traffic: Traffic, seed: int, n: int) -> tuple[list[int], list[int], list[int]]:
    """Prompt, cached and output tokens of requests ``0 .. n - 1``: the seed's length stream
    (its own ``random.Random``, drawn in request order and for nothing else), so the same
    whatever the rate, the loop or the scheduler; drawn once for every run of the same lengths
    (a capacity search's steps, the saturation run, the cap run after the first: issue 28)."""
    hit_p, hit_share = traffic.prefix_hit_requests, traffic.prefix_hit_tokens

    def start() -> list:
        return [random.Random(f"budgetlint:{seed}:lengths"), [], [], [], traffic.prompt, traffic.output]

    entry = kept_for_lengths(traffic, ("lengths", seed, hit_p, hit_share), start, n)
    rng, ps, cs, os_ = entry[0], entry[1], entry[2], entry[3]
    if len(ps) < n:
        prompt, output = entry[4], entry[5]  # the entry's own (equal) distributions
        for _ in range(n - len(ps)):
            p = int(prompt.sample(rng))
            o = max(1, int(output.sample(rng)))
            cached = 0
            if hit_share > 0 and (hit_p >= 1 or rng.random() < hit_p):
                cached = min(p, int(round(p * hit_share)))
            ps.append(p)
            cs.append(cached)
            os_.append(o)
    return ps, cs, os_


def _gaps(kind: str, cv: float, seed: int, n: int) -> list[float]:
    """The first ``n`` unit gaps (mean 1) of the seed's arrival stream: gap ``j`` is the one
    before arrival ``j + 1``, the same at every rate (common random numbers); kept like
    :func:`_lengths`."""
    entry = _kept(("gaps", seed, kind, cv), lambda: [random.Random(f"budgetlint:{seed}:arrivals"), []], n)
    rng, gaps = entry
    if len(gaps) < n:
        gap = unit_gap_sampler(kind, cv)
        gaps.extend(gap(rng) for _ in range(n - len(gaps)))
    return gaps


#: events (arrivals and iterations or runs of iterations) one simulation may take
#: before it gives up: bounded time whatever the input (~5 s of pure Python)
MAX_EVENTS = 500_000


class SimulationTooLong(ValueError):
    """The inputs need more events than :data:`MAX_EVENTS` (tiny iteration budgets,
    preemption thrash, very many replicas)."""


class WorkSpent(SimulationTooLong):
    """The caller's event allowance (a run-wide work budget) ran out during this simulation."""


#: Events this close (relative, with a 1e-12 s floor) are simultaneous: the event engine's closed-form
#: sums and the iteration engine's running sums put one boundary a few ulps apart, and a strict
#: comparison would then order a tie differently in the two (replicas in lockstep behind a round-robin
#: balancer in a closed loop tie at every completion). Ties go to arrivals first, then the lowest
#: replica index, in both engines.
TIE_RELATIVE = 1e-11


def tie_s(t: float) -> float:
    """The tolerance within which an event at ``t`` ties with another."""
    return TIE_RELATIVE * (abs(t) if abs(t) > 0.1 else 0.1) if t != math.inf else 0.0


def _records(reqs: list[_Req], warmup: int, end: int) -> list[RequestRecord]:
    """The measured records: requests ``warmup <= i < end`` (all finished), in arrival order."""
    records = []
    nan = math.nan
    new = tuple.__new__  # RequestRecord(...) without its generated __new__'s frame (issue 28)
    for r in reqs:
        if r.i < warmup or r.i >= end:
            continue
        if r.rejected:
            records.append(new(RequestRecord, (r.i, r.replica, r.arr, nan, nan, nan, nan, r.prompt,
                                               r.cached, r.out, r.preempt, True)))
            continue
        arr = r.arr
        ttft = r.first - arr
        e2e = r.done - arr
        records.append(new(RequestRecord, (r.i, r.replica, arr, r.sched - arr, ttft, e2e,
                                           (e2e - ttft) / r.out, r.prompt, r.cached, r.out,
                                           r.preempt, False)))
    return records


def default_warmup(requests: int) -> int:
    """The requests a run of ``requests`` leaves unmeasured unless told: a tenth, at least 50, at most half."""
    return min(max(requests // 10, 50), requests // 2)


def requests_measuring(measured: int) -> int:
    """The fewest requests whose run measures at least ``measured`` after :func:`default_warmup`."""
    n = measured + 1
    while n - default_warmup(n) < measured:
        n += 1
    return n


#: the two ways of advancing time (:func:`run`'s ``engine``)
ENGINES = ("event", "iteration")

#: events between two calls of an ``allowance`` (the hook costs nothing per event)
ALLOWANCE_STEP = 1024


def run(cost: StepCost, traffic: Traffic, scheduler: Scheduler, *, requests: int = 2000,
        warmup: Optional[int] = None, seed: int = 0, max_events: int = MAX_EVENTS,
        allowance: Optional[Callable[[int], bool]] = None, engine: str = "event",
        checkpoints: Sequence[int] = (), stop: Optional[Callable[[RawRun], bool]] = None) -> RawRun:
    """:func:`stream`'s full run, or its first checkpoint's run that ``stop`` accepts (see there)."""
    for m, raw in _stream(cost, traffic, scheduler, requests=requests, warmup=warmup, seed=seed,
                          max_events=max_events, allowance=allowance, engine=engine,
                          checkpoints=checkpoints if stop is not None else ()):
        if m is None or stop(raw):  # type: ignore[misc]
            return raw
    raise AssertionError("a stream ends with its full run")  # pragma: no cover


def _stream(cost: StepCost, traffic: Traffic, scheduler: Scheduler, *, requests: int = 2000,
            warmup: Optional[int] = None, seed: int = 0, max_events: int = MAX_EVENTS,
            allowance: Optional[Callable[[int], bool]] = None, engine: str = "event",
            checkpoints: Sequence[int] = ()) -> Iterator[tuple[Optional[int], RawRun]]:
    """Simulate ``requests`` requests (the first ``warmup`` not measured; default
    a tenth, at least 50 when there are enough) and return what was observed.
    Raises :class:`SimulationTooLong` beyond ``max_events`` events.

    ``allowance`` (the hook for a caller's work budget across many simulations):
    called with the events spent, every :data:`ALLOWANCE_STEP` events and at the
    end; when it returns False the simulation stops with :class:`WorkSpent`.

    ``engine``: ``"event"`` (default) advances a decode-only batch to its next
    event in one closed-form step (:func:`~.step.sum_components`);
    ``"iteration"`` takes every iteration on its own (:meth:`StepCost.iteration_s`),
    the reference the event engine is held to (tests/physics/test_event_engine.py).

    A generator (:func:`run` reads it): ``(m, RawRun)`` at each of ``checkpoints`` (sample size by
    need, open loop only; issue 28), then ``(None, RawRun)``, the full run, the same as without
    checkpoints. The arrivals go on to ``requests``; at checkpoint ``m`` (those with
    ``warmup + 2 <= m < requests``, in increasing order), once requests ``0 .. m - 1`` have all
    finished, the run of the first ``m`` requests *of this stream*: measured ``warmup .. m - 1``,
    the window from the warm-up's arrival to request ``m - 1``'s, the counters as they stood at that
    arrival; the requests after ``m - 1`` that were in the system by then loaded it, as they do in
    the longer run. The caller may stop reading at any checkpoint, or go on later."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if not isinstance(requests, int) or requests < 2:
        raise ValueError(f"requests must be an integer >= 2, got {requests!r}")
    if warmup is None:
        warmup = default_warmup(requests)
    if not (0 <= warmup < requests - 1):
        raise ValueError(f"warmup must be in [0, requests - 1), got {warmup!r}")
    reps = [_Replica(i, cost, scheduler, engine) for i in range(scheduler.replicas)]
    for rep in reps:
        rep.spec_tokens = int(cost.spec_tokens)
    cap = float(scheduler.kv_capacity_tokens)
    least = scheduler.load_balancer == "least_loaded"
    # random: the seed's own route stream, one draw an arrival in arrival order (the same whatever the
    # rate; a stream read at checkpoints, or started again, draws the same routes)
    route = random.Random(f"budgetlint:{seed}:routes") if scheduler.load_balancer == "random" else None

    trace = traffic.arrival_times_s
    if trace is not None:
        requests = min(requests, len(trace))
        warmup = min(warmup, requests - 2)
    open_loop = traffic.arrival_rate_per_s is not None or trace is not None
    cps = sorted({int(m) for m in checkpoints if warmup + 2 <= int(m) < requests})
    if cps and not open_loop:
        raise ValueError("checkpoints need an open loop (arrivals in request order)")
    # request i's lengths and the unit gap before arrival i + 1: the seed's draws (_draws)
    # with checkpoints, drawn as far as the run goes (twice the next checkpoint, then doubling): a
    # stream of 2,000 read at 100 draws 200 (the same draws: the stream is the seed's, in order)
    drawn = min(requests, 2 * cps[0]) if cps else requests
    len_prompt, len_cached, len_output = _lengths(traffic, seed, drawn)
    gaps = _gaps(traffic.arrival, traffic.cv, seed, drawn - 1) if traffic.arrival_rate_per_s is not None else []
    rate = traffic.arrival_rate_per_s or 0.0
    # pending arrivals: (time, seq) heap; open loop keeps exactly one ahead
    pending: list[tuple[float, int]] = []
    born_on: dict[int, int] = {}  # a closed-loop arrival -> the replica whose completion issued it
    issued = 0
    if open_loop:
        pending.append((0.0, 0))
        issued = 1
    else:
        for _ in range(min(traffic.concurrency or 1, requests)):
            pending.append((0.0, issued))
            issued += 1
    reqs: list[_Req] = []
    rr = 0
    done_count = 0
    clock = 0.0
    w0 = math.inf  # window start
    w1 = math.inf  # window end
    area = 0.0
    in_sys = 0
    busy = 0.0
    batch_time: list[tuple[float, int]] = []
    arrivals_in_window = 0
    completions_in_window = 0
    tokens_in_window = 0

    cp_next = cps[0] if cps else -1  # the next checkpoint
    cp_done = 0  # requests below it finished
    cp_last = {m - 1: m for m in cps}  # the last request of each checkpoint
    snaps: dict = {}  # checkpoint -> the counters at the arrival of its last request
    made: list[RequestRecord] = []  # the records of requests warmup .. made_to - 1, made at checkpoints
    made_to = warmup

    def after_finish(finished: list[_Req], now: float) -> None:
        nonlocal done_count, issued, in_sys, completions_in_window, tokens_in_window, cp_done
        inside = w0 <= now <= w1
        for r in finished:
            done_count += 1
            in_sys -= 1
            if inside and not r.rejected:
                completions_in_window += 1
                tokens_in_window += r.out
            if cp_next >= 0:
                if r.i < cp_next:
                    cp_done += 1
                for snap in snaps.values():  # a completion tied with a checkpoint's last arrival
                    if w0 <= now <= snap[0] and not r.rejected:
                        snap[4] += 1
                        snap[5] += r.out
            if not open_loop and issued < requests:
                heapq.heappush(pending, (now, issued))
                born_on[issued] = r.replica
                issued += 1

    # the loop is the simulation's whole cost: helpers spelled out inline (tie_s, the window
    # accounting, the one replica's pick), each as the named function computes it
    heappop, heappush = heapq.heappop, heapq.heappush
    inf = math.inf
    single = len(reps) == 1
    rep0 = reps[0]
    events = 0
    counted = 0  # events given to the allowance
    check_at = 0  # the next event at which the allowance or max_events may be due
    while done_count < requests:
        if cp_done == cp_next:  # every request below the checkpoint has finished
            m = cp_next
            snap = snaps.pop(m)
            # the records of requests below m are final (each has finished): made once, kept for the
            # later checkpoints and the full run (an open loop's reqs[j] is request j)
            made.extend(_records(reqs[made_to:m], warmup, m))
            made_to = m
            cut = RawRun(tuple(made), w0, snap[0], scheduler.replicas, snap[1], snap[2],
                         tuple(snap[3]), snap[6], snap[4], snap[5])
            if allowance is not None:  # the events so far, counted (the caller may read no further)
                if not allowance(events - counted):
                    raise WorkSpent(f"the run's work budget for the simulation ran out after {numbers.number(events)} "
                                    f"events of this one ({numbers.number(m)} of {numbers.number(requests)} requests "
                                    "read)")
                counted = events
            yield m, cut
            cps.pop(0)
            cp_next = cps[0] if cps else -1
            cp_done = sum(1 for x in reqs[:cp_next] if not math.isnan(x.done)) if cp_next >= 0 else 0
        events += 1
        if events >= check_at:  # the allowance's step or max_events may be due (check_at never passes either)
            if allowance is not None and events - counted >= ALLOWANCE_STEP:
                if not allowance(events - counted):
                    raise WorkSpent(f"the run's work budget for the simulation ran out after {numbers.number(events)} events "
                                    f"of this one ({numbers.number(done_count)} of {numbers.number(requests)} requests done)")
                counted = events
            if events > max_events:
                raise SimulationTooLong(
                    f"the simulation needed more than {numbers.number(max_events)} scheduler events for {numbers.number(requests)} requests "
                    f"({numbers.number(done_count)} done): an iteration budget of {numbers.count(scheduler.max_num_batched_tokens, 'token')}, "
                    f"{numbers.count(scheduler.replicas, 'replica')} or a KV cache of {numbers.count(scheduler.kv_capacity_tokens, 'token')} "
                    "makes it too long to simulate")
            check_at = min(counted + ALLOWANCE_STEP if allowance is not None else inf, max_events + 1)
        t_arr = pending[0][0] if pending else inf
        if single:
            rep = rep0
        else:  # the earliest; among replicas tied with it (within TIE_S), the lowest index
            first = min(x.busy_until for x in reps)
            rep = next(x for x in reps if x.busy_until <= first + tie_s(first))
        t_rep = rep.busy_until
        # an arrival tied with a boundary comes first (t_rep + tie_s(t_rep); clock times are >= 0)
        if t_arr < inf and t_arr <= t_rep + TIE_RELATIVE * (t_rep if t_rep > 0.1 else 0.1):
            t_new, i = heappop(pending)
            born = born_on.pop(i, None) if born_on else None
            lo = clock if clock > w0 else w0  # area += in_sys x account(clock, t_new)
            hi = t_new if t_new < w1 else w1
            if hi > lo:
                area += in_sys * (hi - lo)
            clock = t_new
            if i == warmup:
                w0 = t_new
            if i == requests - 1:
                w1 = t_new
            if i >= warmup:
                arrivals_in_window += 1
            if i in cp_last:  # a checkpoint's window ends here: its counters as they stand
                part = [(t_new - (x.t0 if x.t0 > w0 else w0), x.plan_batch) for x in reps
                        if x.kind != "" and t_new > (x.t0 if x.t0 > w0 else w0)]
                snaps[cp_last[i]] = [t_new, area, busy + sum(d for d, _ in part), batch_time + part,
                                     completions_in_window, tokens_in_window, arrivals_in_window]
            if issued >= drawn and drawn < requests:  # draw on (checkpoints only: the rest drew all)
                drawn = min(requests, 2 * drawn)
                len_prompt, len_cached, len_output = _lengths(traffic, seed, drawn)
                if traffic.arrival_rate_per_s is not None:
                    gaps = _gaps(traffic.arrival, traffic.cv, seed, drawn - 1)
            r = _Req(i, t_new, len_prompt[i], len_cached[i], len_output[i])
            reqs.append(r)
            if open_loop and issued < requests:
                nxt = trace[issued] if trace is not None else t_new + gaps[issued - 1] / rate  # type: ignore[index]
                heappush(pending, (nxt, issued))
                issued += 1
            if single:
                target = rep0
            elif least:
                target = min(reps, key=lambda x: (x.in_system, x.index))
            elif route is not None:
                target = reps[route.randrange(len(reps))]
            else:
                target = reps[rr % len(reps)]
                rr += 1
            r.replica = target.index
            in_sys += 1
            if r.prompt + r.out > cap:
                r.rejected = True
                r.done = t_new
                after_finish([r], t_new)
                continue
            target.in_system += 1
            target.waiting.append(r)
            if target.kind == "":
                target.plan(t_new)
                if target.finished:
                    after_finish(target.finished, t_new)
                    target.finished = []
            elif target.kind == "jump" and len(target.running) < target.max_seqs and len(target.waiting) == 1:
                if target.block_left:  # inside a multi-step block the arrival waits for a block's end
                    target.truncate_to_block(t_new, passed=born is not None and target.index < born)
                else:
                    target.truncate(t_new, passed=born is not None and target.index < born)  # a slot free, it alone waiting
            continue
        if t_rep == inf:
            raise RuntimeError("simulation stalled with requests outstanding")  # pragma: no cover
        lo = clock if clock > w0 else w0  # area += in_sys x account(clock, t_rep)
        hi = t_rep if t_rep < w1 else w1
        if hi > lo:
            area += in_sys * (hi - lo)
        clock = t_rep
        lo = rep.t0 if rep.t0 > w0 else w0  # span = account(rep.t0, t_rep)
        if hi > lo:
            busy += hi - lo
            batch_time.append((hi - lo, rep.plan_batch))
        finished = rep.commit()
        if finished:
            after_finish(finished, t_rep)
            rep.finished = []
        rep.plan(t_rep)
        if rep.finished:
            after_finish(rep.finished, t_rep)
            rep.finished = []

    records = made + _records(reqs[made_to:], warmup, len(reqs)) if made_to > warmup else \
        _records(reqs, warmup, len(reqs))
    if w1 == math.inf:
        w1 = clock
    if allowance is not None:
        allowance(events - counted)  # the rest, counted (the next simulation sees it)
    yield None, RawRun(tuple(records), w0, w1, scheduler.replicas, area, busy, tuple(batch_time),
                  arrivals_in_window, completions_in_window, tokens_in_window)


#: :func:`run` read at checkpoints (the generator :func:`_stream`, which :func:`run` reads too: a
#: name of its own, so that a test counting the streams a check starts sees only the callers' own)
stream = _stream
