"""Decode: one step, the pace it gives, and the time for a whole reply.

Symbols: W bytes of weights read per step, KV(L) bytes of one sequence's KV
cache at context L, B sequences decoding together, P_a active parameters,
N tensor-parallel devices, BW and F the *effective* bandwidth and compute per
device (peak x efficiency), c the collective overhead fraction, T tokens each
sequence pushes through the target per step (1, or k+1 when verifying k
draft tokens).

* ``t_mem = (W/N + B x KV(L)/N) / BW``
* ``t_cmp = B x T x 2 x P_a / (N x F)``
* ``step = max(t_mem, t_cmp)``, divided by ``(1 - c)`` when ``N > 1``
* pace (token/s per user) = accepted tokens per step / step; aggregate = B x pace

Collective overhead and monotonicity: with the overhead applied only for
N > 1, ``step(N) = step(1) / (N (1 - c))`` for N >= 2, which always falls
with N, and is below ``step(1)`` iff ``c < 1/2``. The core accepts
``0 <= c <= 0.5`` (see ``shapes.MAX_COLLECTIVE_OVERHEAD``), so adding devices
never slows a step.

Over a reply the KV read grows: the j-th output token (j = 0..n-1) is
charged a step at context ``L0 + j``. Without sliding windows and with one
resource binding throughout, the step is affine in L, so the exact sum equals
``n x step(L0 + (n-1)/2)`` (mean context). :func:`reply_steps_sum` computes
the exact sum in closed form even when the binding resource changes inside
the reply (``max`` of a rising memory term and a constant compute term:
find the crossover by bisection, sum each side in closed form) and with
windowed layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

BANDWIDTH = "bandwidth"
COMPUTE = "compute"


@dataclass(frozen=True)
class DecodeStep:
    """One decode step's terms (seconds)."""

    memory_s: float
    compute_s: float
    step_s: float
    binding: str  # "bandwidth" | "compute"


def collective_factor(devices: int, collective_overhead: float) -> float:
    """``1 / (1 - c)`` for N > 1, else 1."""
    if devices > 1 and collective_overhead > 0:
        return 1.0 / (1.0 - collective_overhead)
    return 1.0


def decode_memory_s(
    *,
    weight_bytes: float,
    kv_bytes_per_sequence: float,
    concurrency: float,
    devices: int,
    bandwidth_bytes_per_s: float,
) -> float:
    """``t_mem = (W/N + B x KV(L)/N) / BW``."""
    return (weight_bytes / devices + concurrency * kv_bytes_per_sequence / devices) / bandwidth_bytes_per_s


def decode_compute_s(
    *,
    active_params: float,
    concurrency: float,
    devices: int,
    compute_flop_per_s: float,
    tokens_per_sequence: float = 1.0,
) -> float:
    """``t_cmp = B x T x 2 x P_a / (N x F)``."""
    return concurrency * tokens_per_sequence * 2.0 * active_params / (devices * compute_flop_per_s)


def decode_step(
    *,
    weight_bytes: float,
    kv_bytes_per_sequence: float,
    concurrency: float,
    active_params: float,
    devices: int,
    bandwidth_bytes_per_s: float,
    compute_flop_per_s: float,
    collective_overhead: float = 0.0,
    tokens_per_sequence: float = 1.0,
) -> DecodeStep:
    """``step = max(t_mem, t_cmp) / (1 - c if N > 1 else 1)``; binding is the
    larger term (bandwidth on a tie)."""
    t_mem = decode_memory_s(
        weight_bytes=weight_bytes,
        kv_bytes_per_sequence=kv_bytes_per_sequence,
        concurrency=concurrency,
        devices=devices,
        bandwidth_bytes_per_s=bandwidth_bytes_per_s,
    )
    t_cmp = decode_compute_s(
        active_params=active_params,
        concurrency=concurrency,
        devices=devices,
        compute_flop_per_s=compute_flop_per_s,
        tokens_per_sequence=tokens_per_sequence,
    )
    step = max(t_mem, t_cmp) * collective_factor(devices, collective_overhead)
    return DecodeStep(t_mem, t_cmp, step, BANDWIDTH if t_mem >= t_cmp else COMPUTE)


def per_user_pace(accepted_tokens_per_step: float, step_s: float) -> float:
    """Pace (token/s per user) = accepted tokens per step / step time."""
    return accepted_tokens_per_step / step_s


def aggregate_throughput(concurrency: float, pace_token_per_s: float) -> float:
    """Aggregate output throughput (token/s) = B x per-user pace."""
    return concurrency * pace_token_per_s


def sum_of_max(count: int, memory_at: Callable[[int], float], memory_prefix_sum: Callable[[int], float],
               compute_s: float) -> float:
    """``sum_{j=0}^{count-1} max(m(j), c)`` for a nondecreasing ``m``.

    ``memory_prefix_sum(x)`` must return ``sum_{j<x} m(j)``. The first j
    with ``m(j) >= c`` is found by bisection; below it each step costs c.
    """
    if count <= 0:
        return 0.0
    lo, hi = 0, count  # first index with m(j) >= c lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if memory_at(mid) >= compute_s:
            hi = mid
        else:
            lo = mid + 1
    return compute_s * lo + memory_prefix_sum(count) - memory_prefix_sum(lo)


def reply_steps_sum(
    *,
    count: int,
    weight_bytes: float,
    kv_at: Callable[[float], float],
    kv_prefix_sum: Callable[[int], float],
    start_context: float,
    concurrency: float,
    active_params: float,
    devices: int,
    bandwidth_bytes_per_s: float,
    compute_flop_per_s: float,
    collective_overhead: float = 0.0,
    tokens_per_sequence: float = 1.0,
) -> float:
    """Exact ``sum_{j=0}^{count-1} step(start_context + j)`` (seconds).

    ``kv_at(L)`` is one sequence's KV bytes at context L and
    ``kv_prefix_sum(x)`` is ``sum_{j<x} kv_at(start_context + j)`` (closed
    form from :func:`budgetlint.physics.memory.kv_bytes_summed_over_contexts`).
    """
    w_term = weight_bytes / devices / bandwidth_bytes_per_s
    kv_scale = concurrency / devices / bandwidth_bytes_per_s

    def memory_at(j: int) -> float:
        return w_term + kv_scale * kv_at(start_context + j)

    def prefix(x: int) -> float:
        return x * w_term + kv_scale * kv_prefix_sum(x)

    t_cmp = decode_compute_s(
        active_params=active_params,
        concurrency=concurrency,
        devices=devices,
        compute_flop_per_s=compute_flop_per_s,
        tokens_per_sequence=tokens_per_sequence,
    )
    return sum_of_max(count, memory_at, prefix, t_cmp) * collective_factor(devices, collective_overhead)
