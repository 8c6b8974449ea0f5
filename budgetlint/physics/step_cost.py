"""The time of one engine iteration: a mixed batch of decodes and prefill chunks.

Continuous-batching engines (vLLM, SGLang) run one forward pass per
iteration over every running decode (one token each, ``k + 1`` when a draft
proposes ``k``) and the prefill chunks scheduled beside them. Its roofline
cost, with ``T`` the tokens of the pass, ``B`` the decodes and ``ctx_i``
their contexts, ``(U_j, C_j)`` each prefill chunk's new and earlier tokens::

    t_mem = (W(T)/N + KV(sum_i ctx_i)/N + sum_j KV(C_j)/N) / BW
    t_cmp = (2 P_a T + sum_j attention(U_j, C_j)) / (N F)
    step  = max(t_mem, t_cmp) x 1/(1 - c)   (c only when N > 1 and B > 0)
          + k x draft step                  (speculative decoding, B > 0)
          + o + L x a                       (calibration: o per iteration, a per
                                             layer under tensor parallelism, N > 1)

``o`` and ``a`` are a calibration's fixed per-iteration overhead (scheduling,
kernel launches) and per-layer collective latency; both default to 0, which
leaves every uncalibrated result unchanged (:mod:`.calibration`).

``W(T)`` is the weight bytes a pass over T tokens reads
(:func:`~budgetlint.physics.memory.params_read`, as the flat analysis: all of
a dense model but the input-embedding rows not gathered, more experts as T
grows for MoE). A decode-only iteration is exactly
:func:`~budgetlint.physics.decode.decode_step` with ``tokens_per_sequence =
k + 1``; a prefill-only iteration of one chunk is exactly
:func:`~budgetlint.physics.prefill.prefill_time` (no collective factor, as
there). Sliding-window layers read ``min(ctx, window)`` tokens; the batch
charges them ``min(sum ctx, B x window)``, exact when all contexts are on the
same side of the window. Decode attention FLOPs are left out, as in
:mod:`~budgetlint.physics.decode`.

The simulator needs two things from a cost model (:class:`StepCost`):
``iteration_s`` for any iteration, and ``decode_terms`` for runs of
decode-only iterations, where the step is a sum of components
``max(fixed + per_token x contexts, floor)`` (affine in the summed context,
which grows by B every iteration) up to a breakpoint. That lets it skip
through thousands of identical iterations in closed form.
:class:`LinearStepCost` is the simplest such law (``a + b x B`` per decode
step), used to drive the test server and to state laws by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from .decode import collective_factor
from .memory import kv_bytes_per_token, kv_bytes_per_token_per_layer, params_read, weight_bytes
from .precision import compute_peak
from .prefill import attention_flop, linear_flop
from .shapes import ROOFLINE, Deployment, Efficiency, ModelShape

#: One component of a decode step: ``max(fixed_s + per_token_s x contexts, floor_s)``.
Component = tuple[float, float, float]


class StepCost(Protocol):
    """What the simulator asks of a cost model (seconds)."""

    #: Output tokens one decode iteration gives each sequence (accepted tokens per pass).
    tokens_per_pass: float
    #: Tokens of the iteration's budget one decode takes (``k + 1`` with ``k`` draft tokens).
    spec_tokens: int

    def iteration_s(self, batch: int, context_tokens: float,
                    prefill: Sequence[tuple[int, int]]) -> float:
        """An iteration of ``batch`` decodes holding ``context_tokens`` in all
        and prefill chunks ``(new_tokens, earlier_tokens)``."""
        ...

    def decode_terms(self, batch: int, context_tokens: float) -> tuple[tuple[Component, ...], float]:
        """Components of a decode-only step at this batch, valid while the summed
        context stays below the returned breakpoint (``inf`` if none)."""
        ...


def sum_components(components: Sequence[Component], start_context: float, growth: float,
                   count: int) -> float:
    """``sum_{j<count} sum_c max(fixed_c + per_c x (start + growth x j), floor_c)`` in
    closed form (each component rises with j: below its crossover it costs its floor)."""
    if count <= 0:
        return 0.0
    total = 0.0
    for fixed, per, floor in components:
        a = fixed + per * start_context  # term at j = 0
        b = per * growth  # rise per iteration
        if b <= 0.0:
            total += count * (a if a >= floor else floor)
            continue
        # first j with a + b j >= floor
        cross = 0 if a >= floor else min(count, math.ceil((floor - a) / b))
        n = count - cross
        total += floor * cross + n * a + b * (cross * n + n * (n - 1) / 2.0)
    return total


class LinearStepCost:
    """A stated law: a decode iteration of B sequences takes ``decode_fixed_s +
    decode_per_seq_s x B``; prefill costs ``prefill_fixed_s + prefill_per_token_s x
    tokens`` on top (0 fixed when decodes share the iteration). No context term."""

    def __init__(self, decode_fixed_s: float, decode_per_seq_s: float = 0.0,
                 prefill_fixed_s: float = 0.0, prefill_per_token_s: float = 0.0,
                 tokens_per_pass: float = 1.0) -> None:
        for name, v in (("decode_fixed_s", decode_fixed_s), ("decode_per_seq_s", decode_per_seq_s),
                        ("prefill_fixed_s", prefill_fixed_s), ("prefill_per_token_s", prefill_per_token_s)):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a non-negative finite number, got {v!r}")
        self.decode_fixed_s = decode_fixed_s
        self.decode_per_seq_s = decode_per_seq_s
        self.prefill_fixed_s = prefill_fixed_s
        self.prefill_per_token_s = prefill_per_token_s
        self.tokens_per_pass = tokens_per_pass
        self.spec_tokens = 1

    def iteration_s(self, batch: int, context_tokens: float,
                    prefill: Sequence[tuple[int, int]]) -> float:
        t = 0.0
        if batch > 0:
            t += self.decode_fixed_s + self.decode_per_seq_s * batch
        if prefill:
            new = sum(u for u, _ in prefill)
            t += (self.prefill_fixed_s if batch == 0 else 0.0) + self.prefill_per_token_s * new
        return t

    def decode_terms(self, batch: int, context_tokens: float) -> tuple[tuple[Component, ...], float]:
        return ((self.decode_fixed_s + self.decode_per_seq_s * batch, 0.0, 0.0),), math.inf


class RooflineStepCost:
    """The module doc's roofline iteration cost for a deployment at an efficiency."""

    def __init__(self, deployment: Deployment, efficiency: Efficiency = ROOFLINE, *,
                 iteration_overhead_s: float = 0.0, collective_latency_s: float = 0.0) -> None:
        dep = deployment
        for name, v in (("iteration_overhead_s", iteration_overhead_s),
                        ("collective_latency_s", collective_latency_s)):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a non-negative finite number, got {v!r}")
        #: seconds every iteration costs on top of the roofline (0: uncalibrated)
        self._fixed = iteration_overhead_s + (collective_latency_s * dep.model.layers if dep.devices > 1 else 0.0)
        model = dep.model
        self.deployment = dep
        self.efficiency = efficiency
        n = dep.devices
        self._n = n
        self._bw = dep.accelerator.bandwidth_bytes_per_s * efficiency.bandwidth
        _, peak = compute_peak(dep.accelerator.compute_flop_per_s, dep.compute_precision)
        self._flops = peak * efficiency.compute
        self._factor = collective_factor(n, dep.collective_overhead)
        self._k = dep.lookahead
        self.tokens_per_pass = dep.spec_accepted_tokens_per_pass
        self.spec_tokens = self._k + 1
        self._model = model
        self._draft = dep.draft if self._k > 0 else None
        self._b_w = dep.weight_bytes_per_param
        self._b_wd = dep.draft_weight_bytes_per_param or dep.weight_bytes_per_param
        b_kv = dep.kv_bytes_per_elem
        self.kv_bytes_per_token = kv_bytes_per_token(model, b_kv)
        self._kv_s = self._kv_read_coefficients(model, b_kv)
        self._kv_s_draft = self._kv_read_coefficients(self._draft, b_kv) if self._draft else None
        self._w_cache: dict[tuple[int, int], float] = {}

    # ---- pieces --------------------------------------------------------
    def _kv_read_coefficients(self, model: ModelShape, b_kv: float) -> tuple[float, float, float]:
        """(seconds per context token in full layers, per token in windowed layers, window)."""
        per_layer = kv_bytes_per_token_per_layer(model, b_kv) / self._n / self._bw
        windowed = model.sliding_window_layers or 0
        return (per_layer * model.full_attention_layers, per_layer * windowed,
                float(model.sliding_window or 0))

    def _weights_s(self, which: int, tokens: int) -> float:
        """Seconds to read the weights a pass over ``tokens`` tokens touches (0 target, 1 draft)."""
        key = (which, tokens)
        hit = self._w_cache.get(key)
        if hit is None:
            model = self._model if which == 0 else self._draft
            b = self._b_w if which == 0 else self._b_wd
            hit = weight_bytes(params_read(model, tokens), b) / self._n / self._bw  # type: ignore[arg-type]
            self._w_cache[key] = hit
        return hit

    @staticmethod
    def _kv_s_at(coeffs: tuple[float, float, float], batch: int, context_tokens: float) -> float:
        full, win, window = coeffs
        t = full * context_tokens
        if win:
            t += win * min(context_tokens, batch * window)
        return t

    def _draft_step_s(self, batch: int, context_tokens: float) -> float:
        draft = self._draft
        assert draft is not None and self._kv_s_draft is not None
        mem = self._weights_s(1, batch) + self._kv_s_at(self._kv_s_draft, batch, context_tokens)
        cmp_ = linear_flop(float(draft.active_params), batch) / (self._n * self._flops)  # type: ignore[arg-type]
        return max(mem, cmp_) * self._factor

    # ---- StepCost ------------------------------------------------------
    def iteration_s(self, batch: int, context_tokens: float,
                    prefill: Sequence[tuple[int, int]]) -> float:
        model = self._model
        tokens = batch * (self._k + 1)
        mem = self._kv_s_at(self._kv_s, batch, context_tokens)
        attn = 0.0
        draft_pf = 0.0
        for new, earlier in prefill:
            tokens += new
            if earlier:
                mem += self._kv_s_at(self._kv_s, 1, earlier)
            attn += attention_flop(model, new, earlier)
            if self._draft is not None:
                draft_pf += linear_flop(float(self._draft.active_params), new)  # type: ignore[arg-type]
        if tokens == 0:
            return 0.0
        mem += self._weights_s(0, tokens)
        cmp_ = (linear_flop(float(model.active_params), tokens) + attn + draft_pf) / (self._n * self._flops)  # type: ignore[arg-type]
        step = max(mem, cmp_)
        if batch > 0:
            step *= self._factor
            if self._draft is not None:
                step += self._k * self._draft_step_s(batch, context_tokens)
        return step + self._fixed

    def decode_terms(self, batch: int, context_tokens: float) -> tuple[tuple[Component, ...], float]:
        f = self._factor
        comps: list[Component] = []
        breakpoint_ = math.inf
        for which, coeffs, active, per_seq, mult in (
            (0, self._kv_s, self._model.active_params, self._k + 1, 1.0),
            (1, self._kv_s_draft, self._draft.active_params if self._draft else 0.0, 1, float(self._k)),
        ):
            if which == 1 and self._draft is None:
                break
            assert coeffs is not None
            full, win, window = coeffs
            fixed = self._weights_s(which, batch * per_seq)
            per = full
            if win:
                cap = batch * window
                if context_tokens < cap:
                    per += win
                    breakpoint_ = min(breakpoint_, cap)
                else:
                    fixed += win * cap
            floor = linear_flop(float(active), batch * per_seq) / (self._n * self._flops)  # type: ignore[arg-type]
            m = f * mult
            comps.append((fixed * m, per * m, floor * m))
        if self._fixed:
            comps.append((self._fixed, 0.0, 0.0))
        return tuple(comps), breakpoint_


def kv_capacity_tokens(deployment: Deployment, *, usable_fraction: float | None = None,
                       reserve_bytes_per_device: float | None = None) -> int:
    """Tokens of KV cache a replica holds: per device ``memory x usable - W/N - reserve
    - draft weights/N``, times N, over the KV bytes of one token (target and draft).

    ``usable_fraction`` and ``reserve_bytes_per_device`` default to the deployment's
    ``memory_usable_fraction`` and ``memory_overhead_bytes``. Windowed layers are
    counted at their full per-token size (a cache that holds fewer, longer
    sequences than this is possible; never more at full context). 0 when the
    weights alone do not fit.
    """
    dep = deployment
    usable = dep.memory_usable_fraction if usable_fraction is None else usable_fraction
    reserve = dep.memory_overhead_bytes if reserve_bytes_per_device is None else reserve_bytes_per_device
    n = dep.devices
    free = dep.accelerator.memory_bytes * usable - reserve
    free -= weight_bytes(dep.model.total_params, dep.weight_bytes_per_param) / n
    per_token = kv_bytes_per_token(dep.model, dep.kv_bytes_per_elem)
    if dep.draft is not None and dep.lookahead > 0:
        b_wd = dep.draft_weight_bytes_per_param or dep.weight_bytes_per_param
        free -= weight_bytes(dep.draft.total_params, b_wd) / n
        per_token += kv_bytes_per_token(dep.draft, dep.kv_bytes_per_elem)
    if free <= 0:
        return 0
    return int(free * n // per_token)
