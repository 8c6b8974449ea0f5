"""Decode: one step in formula form, and the pace it gives.

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

:func:`decode_step` is physics.md's formula on raw numbers; it computes
nothing itself but builds :class:`~budgetlint.physics.step.StepInputs` from
them and calls :func:`budgetlint.physics.step.iteration`, the one step-time
implementation (which the flat analysis and the serving simulator call on a
deployment's inputs, with the terms this form leaves out: attention FLOPs,
MoE routing, sliding windows, a draft model, per-iteration overheads).

Collective overhead and monotonicity: with the overhead applied only for
N > 1, ``step(N) = step(1) / (N (1 - c))`` for N >= 2, which always falls
with N, and is below ``step(1)`` iff ``c < 1/2``. The core accepts
``0 <= c <= 0.5`` (see ``shapes.MAX_COLLECTIVE_OVERHEAD``), so adding devices
never slows a step.

Over a reply the KV read grows: the j-th output token (j = 0..n-1) is
charged a step at context ``L0 + j``; :func:`budgetlint.physics.step.steps_sum`
sums them exactly in closed form, even when the binding resource changes
inside the reply and with windowed layers.
"""

from __future__ import annotations

from dataclasses import dataclass

from .step import BANDWIDTH, COMPUTE, PassInputs, StepInputs, iteration

__all__ = ["BANDWIDTH", "COMPUTE", "DecodeStep", "aggregate_throughput", "collective_factor", "decode_step",
           "per_user_pace"]


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


def decode_step(
    *,
    weight_bytes: float,
    kv_bytes_per_sequence: float,
    concurrency: int,
    active_params: float,
    devices: int,
    bandwidth_bytes_per_s: float,
    compute_flop_per_s: float,
    collective_overhead: float = 0.0,
    tokens_per_sequence: float = 1.0,
) -> DecodeStep:
    """``step = max(t_mem, t_cmp) / (1 - c if N > 1 else 1)``; binding is the
    larger term (bandwidth on a tie). ``tokens_per_sequence`` T = k + 1."""
    raw = PassInputs(model=None, weight_bytes_per_param=1.0, active_params=active_params,
                     kv_full_bytes=kv_bytes_per_sequence, kv_window_bytes=0.0, window=0.0,
                     attention_full_flop=0.0, attention_window_flop=0.0, fixed_weight_bytes=weight_bytes)
    k = tokens_per_sequence - 1.0
    inputs = StepInputs(
        devices=devices, bandwidth_bytes_per_s=bandwidth_bytes_per_s, compute_flop_per_s=compute_flop_per_s,
        compute_known=True, compute_precision_key="", compute_peak_flop_per_s=compute_flop_per_s,
        collective_factor=collective_factor(devices, collective_overhead),
        lookahead=k, tokens_per_pass=1.0,  # type: ignore[arg-type]
        target=raw, draft=None, overhead_s=0.0)
    t = iteration(inputs, concurrency, float(concurrency), )  # context: one "token" per sequence of KV(L) bytes
    return DecodeStep(t.memory_s, t.compute_s, t.target_s, t.binding)


def per_user_pace(accepted_tokens_per_step: float, step_s: float) -> float:
    """Pace (token/s per user) = accepted tokens per step / step time."""
    return accepted_tokens_per_step / step_s


def aggregate_throughput(concurrency: float, pace_token_per_s: float) -> float:
    """Aggregate output throughput (token/s) = B x per-user pace."""
    return concurrency * pace_token_per_s
