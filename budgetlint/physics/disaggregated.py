"""Disaggregated serving: a prefill pool, a decode pool and the KV transfer between them.

Formulas (SI floats; docs/topologies.md)::

    kv_transfer  = KV(prompt) / link bandwidth + link latency     (KV(L): the prompt's cache, physics/memory.py)
    TTFT         = queue + prefill on the prefill pool + kv_transfer (+ the edge, as colocated)
    decode       = the decode pool's steps, no prefill sharing them (prefill_interference False)
    E2E          = TTFT + the decode pool's steps after the first token
    utilisation  = arrival rate x prefill time / prefill replicas  (>= 1: the prefill queue grows without bound)

The flat estimate (:func:`analyse_pools`) is one :class:`~.analysis.Analysis` per pool and
their combination: the decode pool's analysis with its TTFT and E2E carrying the prefill pool's
prefill and the transfer. The serving simulation (:func:`simulate_pools`) runs the two pools one
after the other with :func:`~.serving_sim.run` as it is: the prefill pool on the arrivals (one
output token each: a request leaves when its prefill is done), then the decode pool on the
arrivals of the prefill completions plus each prompt's KV transfer, its prompt already cached
(the engine recomputes one token, as vLLM does on a full prefix hit), so that the decode pool's
own queue (admission waiting for KV room) is in the TTFT.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Optional

from .analysis import Analysis, analyse
from .shapes import ROOFLINE, Deployment, Edge, Efficiency, Workload
from .serving_sim import RawRun, RequestRecord
from .step import StepInputs


@dataclass(frozen=True)
class Pools:
    """The two pools (each a :class:`Deployment` of one model, with its replicas) and the link."""

    prefill: Deployment
    decode: Deployment
    prefill_replicas: int = 1
    decode_replicas: int = 1
    link_bandwidth_bytes_per_s: float = 50e9
    link_latency_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("prefill_replicas", "decode_replicas"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        bw = self.link_bandwidth_bytes_per_s
        if not (isinstance(bw, (int, float)) and math.isfinite(bw) and bw > 0):
            raise ValueError(f"the KV link's bandwidth must be positive and finite, got {bw!r}")
        lat = self.link_latency_s
        if not (isinstance(lat, (int, float)) and math.isfinite(lat) and lat >= 0):
            raise ValueError(f"the KV link's latency must be non-negative and finite, got {lat!r}")
        if self.prefill.model != self.decode.model:
            raise ValueError("the prefill and decode pools must serve one model")


def kv_transfer_s(kv_bytes: float, bandwidth_bytes_per_s: float, latency_s: float = 0.0) -> float:
    """``KV bytes / bandwidth + latency``: the prompt's cache from the prefill to the decode pool."""
    return kv_bytes / bandwidth_bytes_per_s + latency_s


def prompt_kv_bytes(pools: Pools, prompt_tokens: float) -> float:
    """The cache a prompt of ``prompt_tokens`` leaves (the target's and a draft's)."""
    inp = StepInputs.of(pools.decode)
    # one copy of the cache (an MLA latent is counted once per tensor rank in the step's KV terms)
    draft = inp.draft.kv_bytes_at(prompt_tokens) if inp.draft is not None else 0.0
    return inp.target.kv_bytes_at(prompt_tokens) / inp.kv_copies + draft


@dataclass(frozen=True)
class PoolsAnalysis:
    """The flat estimate of each pool and their combination (``combined``: what the verdicts read)."""

    prefill: Analysis  # the prefill pool serving the workload (its prefill_s is the TTFT's)
    decode: Analysis  # the decode pool, no prefill interference (its pace and memory)
    kv_transfer_s: float
    kv_bytes: float
    combined: Analysis


def analyse_pools(pools: Pools, workload: Workload, efficiency: Efficiency = ROOFLINE,
                  queue_s: float = 0.0, edge: Optional[Edge] = None) -> PoolsAnalysis:
    """The flat estimate of a disaggregated deployment (module doc)."""
    pf = analyse(pools.prefill, replace(workload, concurrency=1), efficiency, queue_s, edge)
    dec = analyse(replace(pools.decode, prefill_interference=False), workload, efficiency, queue_s, edge)
    kv = prompt_kv_bytes(pools, workload.prompt_tokens)
    move = kv_transfer_s(kv, pools.link_bandwidth_bytes_per_s, pools.link_latency_s)
    first = pf.prefill_s + move  # what stands where a colocated prefill stood
    combined = replace(
        dec,
        prefill_linear_flop=pf.prefill_linear_flop, prefill_attention_flop=pf.prefill_attention_flop,
        prefill_flop=pf.prefill_flop, prefill_compute_s=pf.prefill_compute_s,
        prefill_weight_read_s=pf.prefill_weight_read_s, draft_prefill_s=pf.draft_prefill_s,
        prefill_alltoall_s=pf.prefill_alltoall_s, prefill_binding=pf.prefill_binding,
        prefill_s=first,
        # what needs compute is known only if both pools list a peak (a bandwidth-only prefill pool
        # makes the TTFT a bandwidth bound, never "met")
        compute_known=pf.compute_known and dec.compute_known,
        ttft_s=dec.ttft_s - dec.prefill_s + first,
        e2e_s=dec.e2e_s - dec.prefill_s + first,
    )
    return PoolsAnalysis(pf, dec, move, kv, combined)


def prefill_utilisation(arrival_rate_per_s: float, prefill_s: float, replicas: int) -> float:
    """``rate x prefill time / replicas``: the prefill pool's busy share (one prompt at a time)."""
    return arrival_rate_per_s * prefill_s / replicas


def prefill_replicas_needed(arrival_rate_per_s: float, prefill_s: float, utilisation: float = 1.0) -> int:
    """Fewest prefill replicas whose utilisation is below ``utilisation``."""
    return max(1, math.floor(arrival_rate_per_s * prefill_s / utilisation) + 1)


# ------------------------------------------------------------------ the simulation
@dataclass(frozen=True)
class _Replay:
    """A length "distribution" that replays given lengths in order (the decode pool sees each
    request's own prompt and reply)."""

    values: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_it", iter(self.values))

    def sample(self, rng: random.Random) -> int:
        return next(self._it)  # type: ignore[attr-defined]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values) if self.values else 0.0


@dataclass(frozen=True)
class PoolsRun:
    """Per request (measured ones): TTFT, E2E and TPOT across the pools, and each pool's busy share."""

    ttft_s: tuple[float, ...]
    e2e_s: tuple[float, ...]
    tpot_s: tuple[float, ...]
    prefill_queue_s: tuple[float, ...]
    decode_queue_s: tuple[float, ...]
    prefill_busy: float  # busy seconds / (window x replicas)
    decode_busy: float
    rejected: int
    #: the requests end to end as one :class:`~.serving_sim.RawRun` (what
    #: :func:`~.load_stats.summarise` reads: percentiles, intervals, attainment): each measured
    #: request's times from its arrival at the prefill pool to its last token on the decode pool,
    #: queue = the wait in both pools; window, throughput, busy time and batch sizes are the
    #: decode pool's (where requests complete and batch), the requests in the system both pools'
    combined: Optional[RawRun] = None
    prefill_raw: Optional[RawRun] = None
    decode_raw: Optional[RawRun] = None

    def percentile(self, metric: str, p: float) -> float:
        """The ``p`` (0..100) percentile of ``metric``, interpolated between the closest ranks as
        :func:`~.load_stats.percentile` does (the judged figure is the same number)."""
        from .load_stats import percentile

        return percentile(sorted(getattr(self, metric)), p)


def simulate_pools(pools: Pools, prefill_cost, decode_cost, traffic, prefill_sched, decode_sched, *,  # type: ignore[no-untyped-def]
                   requests: int = 600, seed: int = 0, allowance=None) -> PoolsRun:  # type: ignore[no-untyped-def]
    """Run the prefill pool, then the decode pool on its completions (module doc). ``traffic``:
    a :class:`~.serving_sim.Traffic` (open or closed loop); the schedulers' ``replicas`` are the
    pools'. The decode pool's records are matched to the prefill pool's by arrival order."""
    from .serving_sim import Traffic, run
    from .traffic import Fixed

    rng = random.Random(f"budgetlint:{seed}:lengths")  # the lengths both pools see
    prompts, outputs = [], []
    for _ in range(requests):
        prompts.append(int(traffic.prompt.sample(rng)))
        outputs.append(max(1, int(traffic.output.sample(rng))))
    first = replace(traffic, prompt=_Replay(tuple(prompts)), output=Fixed(1))
    pre = run(prefill_cost, first, prefill_sched, requests=requests, warmup=0, seed=seed, allowance=allowance)
    done = []  # (arrival at the decode pool, prefill record)
    for rec in pre.records:
        if rec.rejected:
            continue
        kv = prompt_kv_bytes(pools, rec.prompt_tokens)
        done.append((rec.arrival_s + rec.ttft_s
                     + kv_transfer_s(kv, pools.link_bandwidth_bytes_per_s, pools.link_latency_s), rec))
    done.sort(key=lambda x: x[0])
    if len(done) < 3:
        raise ValueError("too few requests left the prefill pool to simulate the decode pool")
    # reply tokens after the first (the prefill pool made it): the decode pool emits them
    second = Traffic(prompt=_Replay(tuple(r.prompt_tokens for _, r in done)),
                     output=_Replay(tuple(max(1, outputs[r.index] - 1) for _, r in done)),
                     arrival_times_s=tuple(t for t, _ in done), prefix_hit_requests=1.0, prefix_hit_tokens=1.0)
    dec = run(decode_cost, second, decode_sched, requests=len(done), seed=seed, allowance=allowance)
    ttft, e2e, tpot, qp, qd = [], [], [], [], []
    rejected = requests - len(done)
    nan = math.nan
    # the prefill pool's rejections (a prompt its KV cache cannot hold) count against the service
    recs = [RequestRecord(r.index, r.replica, r.arrival_s, nan, nan, nan, nan, r.prompt_tokens, r.cached_tokens,
                          outputs[r.index], r.preemptions, True) for r in pre.records if r.rejected]
    for d in dec.records:
        _, p = done[d.index]
        if d.rejected:
            rejected += 1
            recs.append(RequestRecord(p.index, d.replica, p.arrival_s, nan, nan, nan, nan, p.prompt_tokens,
                                      p.cached_tokens, outputs[p.index], p.preemptions + d.preemptions, True))
            continue
        move = (done[d.index][0] - p.arrival_s) - p.ttft_s
        t = p.ttft_s + move + d.queue_s
        total = p.ttft_s + move + d.e2e_s
        ttft.append(t)
        e2e.append(total)
        tpot.append((total - t) / outputs[p.index])
        qp.append(p.queue_s)
        qd.append(d.queue_s)
        recs.append(RequestRecord(p.index, d.replica, p.arrival_s, p.queue_s + d.queue_s, t, total,
                                  (total - t) / outputs[p.index], p.prompt_tokens, p.cached_tokens,
                                  outputs[p.index], p.preemptions + d.preemptions, False))
    recs.sort(key=lambda r: r.index)  # arrival order (the sectioning intervals cut it in sections)
    span_d = dec.window_end_s - dec.window_start_s
    span_p = pre.window_end_s - pre.window_start_s
    # the prefill pool's mean occupancy over its window, carried over the decode pool's window
    # (both pools see the same arrivals, so in a steady state their occupancies add)
    area = dec.in_system_area + (pre.in_system_area / span_p * span_d if span_p > 0 else 0.0)
    combined = RawRun(tuple(recs), dec.window_start_s, dec.window_end_s, dec.replicas, area, dec.busy_s,
                      dec.batch_time, dec.arrivals_in_window, dec.completions_in_window,
                      dec.output_tokens_in_window)

    def busy(raw) -> float:  # type: ignore[no-untyped-def]
        span = raw.window_end_s - raw.window_start_s
        return raw.busy_s / (span * raw.replicas) if span > 0 else math.nan

    return PoolsRun(tuple(ttft), tuple(e2e), tuple(tpot), tuple(qp), tuple(qd), busy(pre), busy(dec), rejected,
                    combined, pre, dec)


@dataclass(frozen=True)
class Split:
    """One way to divide replicas between the pools, and whether it meets the promises."""

    prefill_replicas: int
    decode_replicas: int
    meets: bool
    values: tuple[tuple[str, float], ...]  # (metric, simulated percentile)


def splits(pools: Pools, make_costs, traffic, make_scheds, promises: Sequence[tuple[str, float]],  # type: ignore[no-untyped-def]
           percentile: float, *, total: Optional[int] = None, requests: int = 400, seed: int = 0,
           allowance=None, prefill_counts: Optional[Sequence[int]] = None) -> tuple[Split, ...]:  # type: ignore[no-untyped-def]
    """The splits ``P + D = total`` (default the pools' replicas; ``prefill_counts`` the P to try,
    default every one), simulated: whether each meets ``promises`` (``(metric, limit)``:
    ``ttft_s``, ``tpot_s``, ``e2e_s``) at ``percentile``. ``make_costs()`` gives (prefill cost,
    decode cost), ``make_scheds(P, D)`` the schedulers."""
    n = total or (pools.prefill_replicas + pools.decode_replicas)
    pc, dc = make_costs()
    out = []
    counts = range(1, n) if prefill_counts is None else sorted({p for p in prefill_counts if 1 <= p < n})
    for p in counts:
        ps, ds = make_scheds(p, n - p)
        try:
            res = simulate_pools(replace(pools, prefill_replicas=p, decode_replicas=n - p), pc, dc, traffic, ps, ds,
                                 requests=requests, seed=seed, allowance=allowance)
        except ValueError:
            continue
        vals = tuple((m, res.percentile(m, percentile)) for m, _ in promises)
        ok = res.rejected == 0 and all(v <= lim for (_, v), (_, lim) in zip(vals, promises))
        out.append(Split(p, n - p, ok, vals))
    return tuple(out)
