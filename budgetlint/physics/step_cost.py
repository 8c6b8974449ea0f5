"""The serving simulator's view of the step: :class:`StepCost` and its roofline law.

The simulator needs two things from a cost model (:class:`StepCost`):
``iteration_s`` for any iteration (a mixed batch of decodes and prefill
chunks), and ``decode_terms`` for runs of decode-only iterations, where the
step is a sum of components ``max(fixed + per x X, floor + floor_per x X)``
(affine in the summed context X, which grows by B every iteration) up to a
breakpoint. That lets it skip through thousands of identical iterations in
closed form.

:class:`RooflineStepCost` is the roofline law: it computes nothing itself but
calls :func:`budgetlint.physics.step.iteration_step_s` (the float of
:func:`~budgetlint.physics.step.iteration`) and
:func:`~budgetlint.physics.step.decode_components` on the deployment's
:class:`~budgetlint.physics.step.StepInputs`, the very function the flat
analysis calls (one step-time implementation; see :mod:`.step` for the
terms). :class:`LinearStepCost` is the simplest law (``a + b x B`` per decode
step), used to drive the test server and to state laws by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from dataclasses import replace

from .memory import kv_bytes_per_token, weight_bytes
from .shapes import ROOFLINE, Deployment, Efficiency
from .step import Component, StepInputs, decode_components, iteration_step_s, sum_components

__all__ = ["Component", "LinearStepCost", "RooflineStepCost", "StepCost", "kv_capacity_tokens", "sum_components"]


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
        return ((self.decode_fixed_s + self.decode_per_seq_s * batch, 0.0, 0.0, 0.0),), math.inf


class RooflineStepCost:
    """The roofline iteration cost of a deployment at an efficiency (:mod:`.step`).

    ``iteration_overhead_s`` and ``collective_latency_s``, when given, replace the
    deployment's (a calibration's fitted values)."""

    def __init__(self, deployment: Deployment, efficiency: Efficiency = ROOFLINE, *,
                 iteration_overhead_s: float | None = None, collective_latency_s: float | None = None) -> None:
        dep = deployment
        if iteration_overhead_s is not None or collective_latency_s is not None:
            dep = replace(dep,
                          iteration_overhead_s=dep.iteration_overhead_s if iteration_overhead_s is None
                          else iteration_overhead_s,
                          collective_latency_s=dep.collective_latency_s if collective_latency_s is None
                          else collective_latency_s)
        self.deployment = dep
        self.efficiency = efficiency
        #: the one set of step inputs, built once (the simulator needs a compute peak)
        self.inputs = StepInputs.of(dep, efficiency, require_compute=True)
        self.tokens_per_pass = dep.spec_accepted_tokens_per_pass
        self.spec_tokens = self.inputs.spec_tokens
        self.kv_bytes_per_token = kv_bytes_per_token(dep.model, dep.kv_bytes_per_elem)
        # decode_terms depend on the context only through which side of each windowed pass's
        # ``B x window`` it lies (decode_components): kept per (batch, sides), bounded
        passes = [self.inputs.target] + ([self.inputs.draft] if self.inputs.draft is not None else [])
        self._windows = tuple(p.window for p in passes if p.kv_window_bytes or p.attention_window_flop)
        self._decode: dict = {}
        #: :meth:`decode_terms`' cache when it is keyed by the batch alone (no windowed pass), for a caller
        #: that reads it without the call (the simulator's decode runs, issue 28); None otherwise
        self.decode_by_batch: dict | None = self._decode if not self._windows else None
        #: the simulator's step.line_rises of these components by batch (serving_sim._Replica: kept with the
        #: cost, so every run on it, a capacity search's steps, reads them; each entry holds the components
        #: it was made from, and is used only for those)
        self.rises_by_batch: dict = {}

    def iteration_s(self, batch: int, context_tokens: float,
                    prefill: Sequence[tuple[int, int]]) -> float:
        return iteration_step_s(self.inputs, batch, context_tokens, prefill)

    def decode_terms(self, batch: int, context_tokens: float) -> tuple[tuple[Component, ...], float]:
        key = (batch, tuple(context_tokens < batch * w for w in self._windows)) if self._windows else batch
        hit = self._decode.get(key)
        if hit is None:
            hit = decode_components(self.inputs, batch, context_tokens)
            if len(self._decode) >= 4096:
                self._decode.clear()
            self._decode[key] = hit
        return hit


def kv_capacity_tokens(deployment: Deployment, *, usable_fraction: float | None = None,
                       reserve_bytes_per_device: float | None = None) -> int:
    """Tokens of KV cache a replica holds: per device ``memory x usable - W/N - reserve
    - draft weights/N``, times N, over the KV bytes of one token (target and draft);
    ``(memory - W/N - reserve - draft weights/N) x usable`` for an engine that sizes its
    cache from the memory left free (``Deployment.kv_of_free_memory``: TensorRT-LLM).

    ``usable_fraction`` and ``reserve_bytes_per_device`` default to the deployment's
    ``memory_usable_fraction`` and ``memory_overhead_bytes``. Windowed layers are
    counted at their full per-token size (a cache that holds fewer, longer
    sequences than this is possible; never more at full context). 0 when the
    weights alone do not fit.
    """
    dep = deployment
    usable = dep.memory_usable_fraction if usable_fraction is None else usable_fraction
    reserve = dep.memory_overhead_bytes if reserve_bytes_per_device is None else reserve_bytes_per_device
    n = dep.total_devices
    of_free = dep.kv_of_free_memory
    # TensorRT-LLM: the fraction applies to what is left once the weights and the reserve are taken
    free = dep.accelerator.memory_bytes * (1.0 if of_free else usable) - reserve
    if n == dep.devices:
        free -= weight_bytes(dep.model.total_params, dep.weight_bytes_per_param) / n
    else:  # data parallelism holds the attention and dense weights once per rank (physics/step.py)
        free -= StepInputs.of(dep).weight_bytes_per_device
    # MLA's latent is whole on every tensor rank: t copies of each token's cache (StepInputs.kv_copies)
    per_token = kv_bytes_per_token(dep.model, dep.kv_bytes_per_elem) * (dep.devices if dep.model.attention == "mla"
                                                                         else 1)
    if dep.draft is not None and dep.lookahead > 0:
        b_wd = dep.draft_weight_bytes_per_param or dep.weight_bytes_per_param
        free -= weight_bytes(dep.draft.total_params, b_wd) / n
        per_token += kv_bytes_per_token(dep.draft, dep.kv_bytes_per_elem)
    if of_free:
        free *= usable
    if free <= 0:
        return 0
    return int(free * n // per_token)
