"""The one step-time implementation: the cost of one engine iteration.

Every time a decode step takes (the flat analysis's step at the mean
context, its exact sum over a reply, the serving simulator's iterations and
its closed-form runs of decode-only iterations) is computed here, from one
frozen :class:`StepInputs` built once per deployment and efficiency.

Symbols: ``B`` decodes in the iteration, ``k`` draft tokens each verifies
(``T = B (k + 1) + U`` tokens in the pass, with ``U`` prefill tokens sharing
it), ``X`` the context tokens the decodes hold together, ``N`` devices, ``BW``
and ``F`` the effective bandwidth and compute per device (peak x efficiency)::

    weights    = W(T) / N / BW                          (params_read: MoE, embedding rows)
    kv         = KV(X) / N / BW  (+ the prefill chunks' earlier tokens)
    linear     = 2 P_a T / (N F)  (+ 2 P_draft U for a draft model's prefill)
    attention  = (k + 1) x 4 h d x X' / (N F) + prefill attention / (N F)
    target     = max(weights + kv, linear + attention) (+ (1 - overlap) x the smaller)
    collective = target x (1/(1 - c) - 1)               (N > 1 and B > 0)
    draft      = k x the draft model's own step          (B > 0)
    overhead   = o + L x a                               (o per iteration; a per layer, N > 1)
    step       = target + collective + draft + overhead

Beyond tensor parallelism (docs/topologies.md; all 1 by default, the terms above):
``t`` tensor, ``d`` attention data-parallel ranks, ``p`` pipeline stages,
``N = t d p`` devices (the divisor above); the routed experts' parameters
``P_x(T)`` touched by the pass, the rest ``S(T)`` (attention, dense layers,
shared expert), ``g`` the expert load imbalance (busiest rank over the mean)::

    weights    = (d x S(T/m) + min(g x P_x(T/m), P_x,all)) x b_w / N / BW x p
    linear     = 2 (S_a + g x P_a,x) T / (N F) x p/m         (kv, attention: x p/m too)
    alltoall   = L_moe x 2 x (T/m)/(t d) x h x b_a x r / BW_link   (dispatch + combine)
                 + L_moe x 2 x latency
    r          = (e - 1) x (1 - (1 - 1/e)^k)                  (remote ranks a token goes to)

with ``m = min(B, p)`` micro-batches in flight (``B < p`` leaves the pipeline's
bubble: ``p - m`` stages idle; a prefill-only pass is one micro-batch), ``e`` the
expert-parallel ranks, ``k`` experts per token, ``h`` the hidden size and ``b_a = 2``
bytes per activation element (bf16). ``r`` is ``(e - 1)/e`` for ``k = 1``. The
all-to-all is charged after the pass (dispatch precedes the experts, combine
follows them: no overlap is assumed).

``X'`` counts full-attention layers at the whole context and windowed layers
at ``min(X, B x window)`` (as the KV read does). Decode attention FLOPs are
charged when the deployment asks for the engine's terms (``engine_terms``: the
realistic estimate; physics.md's bound leaves them out and stays a lower
bound); they use the
prefill's expression (:func:`~budgetlint.physics.prefill.attention_flop`:
``QK^T`` and ``AV``, ``2 h d`` FLOP each per position and layer). ``o`` and
``a`` are the deployment's ``iteration_overhead_s`` and
``collective_latency_s`` (0 in the bound; a calibration fits them).

:class:`StepTerms` names each term; :data:`TERM_LABELS` says what each is in
words. :class:`~budgetlint.physics.analysis.Analysis` carries the terms of its
decode step with their labels, and ``budgetlint explain`` prints them: a term
added here reaches every output without another edit.

Runs of decode-only iterations: the step is a sum of components
``max(fixed + per x X, floor + floor_per x X)`` (affine in ``X``, which grows
by B every iteration) up to a breakpoint (:func:`decode_components`), summed
in closed form by :func:`sum_components`; :func:`steps_sum` walks the
breakpoints (the flat reply sum and the simulator's jumps both use it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Optional

from .memory import expected_experts_touched, kv_bytes_per_token_per_layer, params_read, weight_bytes
from .precision import compute_peak
from .prefill import attention_flop
from .shapes import ROOFLINE, Deployment, Efficiency, ModelShape

BANDWIDTH = "bandwidth"
COMPUTE = "compute"

#: One component of a decode step: ``max(fixed + per x X, floor + floor_per x X)`` seconds.
Component = tuple[float, float, float, float]


@dataclass(frozen=True)
class PassInputs:
    """One model's forward pass (the target, or the draft): bytes and FLOP per token.

    ``model`` None: raw inputs (a fixed weight read ``fixed_weight_bytes`` whatever the
    token count, the KV bytes of a sequence given per context token), for the formula
    form :func:`~budgetlint.physics.decode.decode_step`."""

    model: Optional[ModelShape]
    weight_bytes_per_param: float
    active_params: float
    kv_full_bytes: float  # KV bytes per context token in full-attention layers
    kv_window_bytes: float  # KV bytes per context token in windowed layers
    window: float  # tokens (0: no windowed layers)
    attention_full_flop: float  # decode attention FLOP per context token, full layers
    attention_window_flop: float  # the same, windowed layers
    fixed_weight_bytes: Optional[float] = None
    _weights: dict = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def of(model: ModelShape, weight_bytes_per_param: float, kv_bytes_per_elem: float,
           attention: bool = True) -> "PassInputs":
        """``attention`` False: decode attention FLOPs left out (physics.md's bound)."""
        per_layer = kv_bytes_per_token_per_layer(model, kv_bytes_per_elem)
        windowed = model.sliding_window_layers or 0
        per_position = 4.0 * model.attention_heads * model.head_dim if attention else 0.0  # type: ignore[operator]
        return PassInputs(
            model=model, weight_bytes_per_param=weight_bytes_per_param,
            active_params=float(model.active_params),  # type: ignore[arg-type]
            kv_full_bytes=per_layer * model.full_attention_layers, kv_window_bytes=per_layer * windowed,
            window=float(model.sliding_window or 0),
            attention_full_flop=per_position * model.full_attention_layers,
            attention_window_flop=per_position * windowed,
        )

    def weights_read_bytes(self, tokens: float) -> float:
        """Bytes of weights a pass over ``tokens`` tokens reads (kept per token count)."""
        if self.fixed_weight_bytes is not None:
            return self.fixed_weight_bytes
        hit = self._weights.get(tokens)
        if hit is None:
            hit = weight_bytes(params_read(self.model, tokens), self.weight_bytes_per_param)  # type: ignore[arg-type]
            if len(self._weights) >= 4096:
                self._weights.clear()
            self._weights[tokens] = hit
        return hit

    def kv_bytes_at(self, context_tokens: float) -> float:
        """KV bytes of one sequence holding ``context_tokens`` tokens."""
        kv = self.kv_full_bytes * context_tokens
        if self.kv_window_bytes:
            kv += self.kv_window_bytes * min(context_tokens, self.window)
        return kv

    def _read(self, full: float, window: float, batch: int, context_tokens: float) -> float:
        """``full x X + window x min(X, B x window)``: per-token coefficients over a batch."""
        t = full * context_tokens
        if window:
            t += window * min(context_tokens, batch * self.window)
        return t


@dataclass(frozen=True)
class PrefillLoad:
    """The prefill that shares an iteration: new tokens, their attention FLOP and the KV
    bytes of the tokens before them that the chunks read."""

    tokens: float = 0.0
    attention_flop: float = 0.0
    kv_bytes: float = 0.0


NO_PREFILL = PrefillLoad()


@dataclass(frozen=True, slots=True)
class StepTerms:
    """One iteration's terms (seconds); ``step_s`` is their total, ``binding`` the larger
    of the target's memory (weights + kv) and compute (linear + attention) sides."""

    weights_s: float
    kv_s: float
    linear_s: float
    attention_s: float
    collective_s: float
    draft_s: float
    overhead_s: float
    binding: str
    overlap: float = 1.0  # the deployment's: step = max + (1 - overlap) x min of memory and compute
    alltoall_s: float = 0.0  # expert-parallel dispatch + combine (bytes and latency)
    per_operator: bool = False  # the deployment's: max(weights, linear) + max(kv, attention)

    @property
    def memory_s(self) -> float:
        return self.weights_s + self.kv_s

    @property
    def compute_s(self) -> float:
        return self.linear_s + self.attention_s

    @property
    def target_s(self) -> float:
        """The target model's pass, the collective share in it: the decode step of physics.md
        (``max(t_mem, t_cmp)``, plus ``(1 - overlap) x min(t_mem, t_cmp)`` where they do not overlap)."""
        return self.roofline_s + self.collective_s

    @property
    def roofline_s(self) -> float:
        """``max(t_mem, t_cmp) + (1 - overlap) x min(t_mem, t_cmp)``; per operator
        (``per_operator``): ``max(weights, linear) + max(kv, attention)``."""
        if self.per_operator:
            return max(self.weights_s, self.linear_s) + max(self.kv_s, self.attention_s)
        m, c = self.memory_s, self.compute_s
        if self.overlap >= 1.0:
            return max(m, c)
        return max(m, c) + (1.0 - self.overlap) * min(m, c)

    @property
    def step_s(self) -> float:
        return self.target_s + self.draft_s + self.overhead_s + self.alltoall_s

    def named(self) -> tuple[tuple[str, str, float], ...]:
        """``(name, label, seconds)`` of every term, in :data:`TERM_LABELS` order."""
        return tuple((name, label, getattr(self, name)) for name, label in TERM_LABELS)


#: Each term of :class:`StepTerms` and what it is, in words (what ``explain`` prints).
TERM_LABELS: tuple[tuple[str, str], ...] = (
    ("weights_s", "weights read, W/N / BW"),
    ("kv_s", "KV cache read, B x KV(L)/N / BW"),
    ("linear_s", "linear layers, 2 x P_active x tokens / (N x F)"),
    ("attention_s", "attention, 4 x heads x head_dim x layers x L x tokens / (N x F)"),
    ("collective_s", "tensor-parallel all-reduce share, the pass x c/(1 - c)"),
    ("draft_s", "draft model, k x its own step"),
    ("overhead_s", "per-iteration overhead + per-layer all-reduce latency"),
    ("alltoall_s", "expert-parallel all-to-all, L_moe x 2 x (tokens/(t x d) x h x b x r / BW_link + latency)"),
)

_ZERO = StepTerms(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, BANDWIDTH)


@dataclass(frozen=True)
class StepInputs:
    """Everything a step costs, built once per deployment and efficiency (:meth:`of`).

    Read by the flat analysis (its decode step, the reply sum and the memory fit) and by
    the serving simulator's step cost: the one source of the numbers both use."""

    devices: int
    bandwidth_bytes_per_s: float  # effective, per device
    compute_flop_per_s: float  # effective, per device; inf when unknown (compute left out)
    compute_known: bool
    compute_precision_key: str
    compute_peak_flop_per_s: Optional[float]
    collective_factor: float  # 1/(1 - c) for N > 1, else 1
    lookahead: int  # k draft tokens per pass
    tokens_per_pass: float  # accepted tokens per pass
    target: PassInputs
    draft: Optional[PassInputs]
    overhead_s: float  # o + L x a (a only for N > 1)
    overlap: float = 1.0  # step = max + (1 - overlap) x min of memory and compute
    per_operator: bool = False  # step = max(weights, linear) + max(kv, attention) (Deployment.per_operator)
    weight_bytes_total: float = 0.0  # the target's, whole model
    draft_weight_bytes_total: float = 0.0
    # parallelism beyond tensor (module doc); the defaults give the tensor-parallel step
    data: int = 1  # d, attention data-parallel ranks
    pipeline: int = 1  # p, pipeline stages
    expert_imbalance: float = 1.0  # g
    per_expert_params: float = 0.0  # one routed expert's parameters, all layers (0: dense)
    alltoall_s_per_token: float = 0.0  # L_moe x 2 x h x b_a x r / (t d BW_link)
    alltoall_fixed_s: float = 0.0  # L_moe x 2 x latency
    weight_bytes_per_device: float = 0.0  # what a device holds of the target's weights
    #: copies of the target's KV cache over the tensor ranks: MLA's latent is shared by all heads,
    #: so every tensor rank holds (and reads) all of it (shared/reference/specs.md, MLA (a)): t;
    #: per-head K and V are split over the ranks: 1. ``target``'s KV bytes per token already count
    #: the copies (``/ devices`` is then what each device holds and reads), so every KV term (the
    #: decode read, a prefill chunk's earlier context, the memory fit) has them; a sequence's cache
    #: as one copy (what a KV transfer moves) is ``kv_bytes_per_sequence / kv_copies``
    kv_copies: int = 1

    @staticmethod
    def of(deployment: Deployment, efficiency: Efficiency = ROOFLINE, *,
           require_compute: bool = False) -> "StepInputs":
        """The inputs of ``deployment`` at ``efficiency``. Without a compute peak for the
        precision the compute terms are left out (``compute_known`` False), unless
        ``require_compute`` (the simulator needs one): then ``ValueError``."""
        dep = deployment
        model = dep.model
        try:
            key, peak = compute_peak(dep.accelerator.compute_flop_per_s, dep.compute_precision)
            flops: float = peak * efficiency.compute
            known = True
        except ValueError:
            if require_compute:
                raise
            key, peak, flops, known = "", None, math.inf, False  # type: ignore[assignment]
        n = dep.devices
        k = dep.lookahead
        draft_model = dep.draft if k > 0 else None
        b_w = dep.weight_bytes_per_param
        b_wd = dep.draft_weight_bytes_per_param or b_w
        overhead = dep.iteration_overhead_s + (dep.collective_latency_s * model.layers if n > 1 else 0.0)
        d, p = dep.data_parallel, dep.pipeline_parallel
        per_expert = _per_expert_params(model)
        a2a_tok = a2a_fixed = 0.0
        e = dep.expert_parallel
        if e > 1 and per_expert > 0:
            moe_layers = model.layers if dep.moe_layers is None else dep.moe_layers
            link = dep.alltoall_bandwidth_bytes_per_s or dep.accelerator.interconnect_bytes_per_s
            if link:
                a2a_tok = (moe_layers * 2.0 * float(model.hidden_size or 0) * ACTIVATION_BYTES
                           * alltoall_remote_ranks(e, model.experts_per_token or 1) / (n * d * link))
            a2a_fixed = moe_layers * 2.0 * dep.alltoall_latency_s
        copies = n if model.attention == "mla" else 1  # MLA's latent is whole on every tensor rank
        w_total = weight_bytes(model.total_params, b_w)
        expert_all = per_expert * (model.experts or 0)
        w_dev = (weight_bytes(model.total_params - expert_all, b_w) * d + weight_bytes(expert_all, b_w)) / (n * d * p)
        return StepInputs(
            devices=n * d * p, bandwidth_bytes_per_s=dep.accelerator.bandwidth_bytes_per_s * efficiency.bandwidth,
            compute_flop_per_s=flops, compute_known=known, compute_precision_key=key,
            compute_peak_flop_per_s=peak,
            collective_factor=1.0 / (1.0 - dep.collective_overhead) if n > 1 and dep.collective_overhead > 0 else 1.0,
            lookahead=k, tokens_per_pass=dep.spec_accepted_tokens_per_pass,
            target=_with_copies(PassInputs.of(model, b_w, dep.kv_bytes_per_elem, dep.engine_terms), copies),
            draft=PassInputs.of(draft_model, b_wd, dep.kv_bytes_per_elem, dep.engine_terms)
            if draft_model is not None else None,
            overhead_s=overhead, overlap=dep.overlap, per_operator=dep.per_operator,
            weight_bytes_total=w_total,
            draft_weight_bytes_total=weight_bytes(draft_model.total_params, b_wd) if draft_model is not None else 0.0,
            data=d, pipeline=p, expert_imbalance=dep.expert_imbalance,
            per_expert_params=per_expert, alltoall_s_per_token=a2a_tok, alltoall_fixed_s=a2a_fixed,
            weight_bytes_per_device=w_dev,
            kv_copies=copies,
        )

    @cached_property
    def _constants(self) -> tuple:
        """What every iteration reads (:func:`_values`; read once per iteration, not field by field:
        issue 28): ``(devices x BW, devices x F, linear_params, the draft's active parameters or
        None, whether an all-to-all is charged, k + 1, p, the target's weights-read cache when
        :meth:`target_weight_bytes` is that cache's lookup (else None), c_f - 1, overlap,
        per_operator, the target's pass)``."""
        t = self.target
        plain_weights = self.data == 1 and self.expert_imbalance == 1.0 and t.fixed_weight_bytes is None
        return (self.devices * self.bandwidth_bytes_per_s, self.devices * self.compute_flop_per_s,
                self.linear_params, self.draft.active_params if self.draft is not None else None,
                bool(self.alltoall_s_per_token or self.alltoall_fixed_s), self.spec_tokens, self.pipeline,
                t._weights if plain_weights else None, self.collective_factor - 1.0, self.overlap,
                self.per_operator, t)

    @cached_property
    def _prefill_attention(self) -> tuple[float, Optional[int]]:
        """``(4 h d, full-attention layers)`` of the target's prefill attention, the layers None
        when some are windowed (then :func:`~.prefill.attention_flop` itself)."""
        model = self.target.model
        if model is None:
            return 0.0, None
        per_position = 4.0 * model.attention_heads * model.head_dim  # type: ignore[operator]
        return per_position, None if model.sliding_window_layers else model.full_attention_layers

    @property
    def plain(self) -> bool:
        """Tensor parallelism only (the terms of the module doc's first table)."""
        return self.data == 1 and self.pipeline == 1 and self.expert_imbalance == 1.0 \
            and not self.alltoall_s_per_token and not self.alltoall_fixed_s

    def micro_batches(self, batch: int) -> int:
        """``m = min(B, p)`` micro-batches in flight (1 for a prefill-only pass)."""
        return max(1, min(batch, self.pipeline))

    def target_weight_bytes(self, tokens: float) -> float:
        """Bytes of the target's weights a pass over ``tokens`` tokens reads, scaled so that
        ``/ devices`` is what the busiest device reads: ``d x S(T) + min(g x P_x(T), P_x,all)``
        (the attention and dense part replicated per data-parallel rank, the experts split)."""
        t = self.target
        if self.data == 1 and self.expert_imbalance == 1.0:
            return t.weights_read_bytes(tokens)
        model = t.model
        if model is None:
            return t.weights_read_bytes(tokens) * self.data
        expert = 0.0
        if self.per_expert_params > 0 and tokens > 0:
            expert = self.per_expert_params * expected_experts_touched(
                model.experts, model.experts_per_token, tokens)  # type: ignore[arg-type]
        shared = params_read(model, tokens) - expert
        expert_all = self.per_expert_params * (model.experts or 0)
        return weight_bytes(shared * self.data + min(self.expert_imbalance * expert, expert_all),
                            t.weight_bytes_per_param)

    @property
    def linear_params(self) -> float:
        """``S_a + g x P_a,x``: the active parameters a token costs on the busiest device."""
        t = self.target
        if self.expert_imbalance == 1.0 or self.per_expert_params <= 0 or t.model is None:
            return t.active_params
        routed = self.per_expert_params * (t.model.experts_per_token or 0)
        return t.active_params + (self.expert_imbalance - 1.0) * routed

    def alltoall_s(self, tokens: float, micro_batches: int = 1) -> float:
        """Dispatch + combine of a pass over ``tokens`` tokens in ``micro_batches``."""
        if tokens <= 0 or (not self.alltoall_s_per_token and not self.alltoall_fixed_s):
            return 0.0
        return self.alltoall_s_per_token * tokens / micro_batches + self.alltoall_fixed_s

    def prefill_alone(self, uncached: float, attention_flop_: float) -> tuple[float, float, float]:
        """One prompt's prefill alone: ``(flop, weight_bytes, alltoall_s)`` such that
        ``flop / (devices x F)`` and ``weight_bytes / devices / BW`` are its compute and
        weight-read times. The prompt runs on one data-parallel rank (its attention and
        dense layers on ``t`` devices, the experts on all ``t x d``) through the ``p``
        stages one after another."""
        t = self.target
        if self.plain:
            return (2.0 * t.active_params * uncached + attention_flop_, t.weights_read_bytes(uncached), 0.0)
        if t.model is None or self.per_expert_params <= 0:
            # a dense model, or a MoE without a shared/routed split (no active count, or every
            # expert active): every layer replicated on each data-parallel rank, as
            # target_weight_bytes counts its weights
            routed = 0.0
        else:
            routed = self.per_expert_params * (t.model.experts_per_token or 0)
        shared_a = t.active_params - routed
        flop = (2.0 * uncached * (shared_a * self.data + self.expert_imbalance * routed)
                + attention_flop_ * self.data) * self.pipeline
        return flop, self.target_weight_bytes(uncached) * self.pipeline, self.alltoall_s(uncached)

    @property
    def spec_tokens(self) -> int:
        """Tokens one decode pushes through the target per pass, ``k + 1``."""
        return self.lookahead + 1

    def kv_bytes_per_sequence(self, context_tokens: float) -> float:
        """KV bytes one sequence holds at ``context_tokens`` (its draft's cache included)."""
        kv = self.target.kv_bytes_at(context_tokens)
        if self.draft is not None:
            kv += self.draft.kv_bytes_at(context_tokens)
        return kv

    # ------------------------------------------------------------------ the step
    def _draft_step_s(self, batch: int, context_tokens: float) -> float:
        d = self.draft
        assert d is not None
        per = self.devices * self.bandwidth_bytes_per_s
        per_f = self.devices * self.compute_flop_per_s
        w = d.weights_read_bytes(batch) / per
        kv = d._read(d.kv_full_bytes, d.kv_window_bytes, batch, context_tokens) / per
        lin = 2.0 * d.active_params * batch / per_f
        attn = d._read(d.attention_full_flop, d.attention_window_flop, batch, context_tokens) / per_f
        if self.per_operator:
            return (max(w, lin) + max(kv, attn)) * self.collective_factor
        return _roofline(w + kv, lin + attn, self.overlap) * self.collective_factor


def _with_copies(p: PassInputs, copies: int) -> PassInputs:
    """``p`` with its KV bytes per token x ``copies`` (StepInputs.kv_copies)."""
    if copies == 1:
        return p
    return replace(p, kv_full_bytes=p.kv_full_bytes * copies, kv_window_bytes=p.kv_window_bytes * copies)


#: Bytes per activation element an all-to-all moves (bf16). DeepSeek's DeepEP dispatches in
#: FP8 and combines in BF16 (its README); 2 bytes both ways charges the dispatch at most twice.
ACTIVATION_BYTES = 2.0


def alltoall_remote_ranks(expert_ranks: int, experts_per_token: int) -> float:
    """Expected ranks other than its own a token is dispatched to: ``(e - 1)(1 - (1 - 1/e)^k)``
    (each of its ``k`` experts on a rank drawn uniformly, a rank sent one copy however many
    of its experts the token chose; ``(e - 1)/e`` for ``k = 1``)."""
    e = float(expert_ranks)
    if e <= 1:
        return 0.0
    return (e - 1.0) * (1.0 - (1.0 - 1.0 / e) ** experts_per_token)


def _per_expert_params(model: ModelShape) -> float:
    """One routed expert's parameters over all layers, ``(P_t - P_a) / (E - k)`` (memory.py's
    split), 0 for a dense model."""
    if model.experts is None or model.experts_per_token is None or model.experts <= model.experts_per_token:
        return 0.0
    total, active = float(model.total_params), float(model.active_params)  # type: ignore[arg-type]
    if active >= total:
        return 0.0
    return (total - active) / (model.experts - model.experts_per_token)


def _roofline(memory_s: float, compute_s: float, overlap: float) -> float:
    """``max + (1 - overlap) x min``."""
    if overlap >= 1.0:
        return max(memory_s, compute_s)
    return max(memory_s, compute_s) + (1.0 - overlap) * min(memory_s, compute_s)


def prefill_load(inputs: StepInputs, chunks: Sequence[tuple[float, float]]) -> PrefillLoad:
    """The :class:`PrefillLoad` of prefill chunks ``(new_tokens, earlier_tokens)``."""
    if not chunks:
        return NO_PREFILL
    t = inputs.target
    model = t.model
    tokens = attn = kv = 0.0
    for new, earlier in chunks:
        tokens += new
        if earlier:
            kv += t._read(t.kv_full_bytes, t.kv_window_bytes, 1, earlier)
        if model is not None:
            attn += attention_flop(model, new, earlier)
    return PrefillLoad(tokens, attn, kv)


def _values(s: StepInputs, batch: int, context_tokens: float, pf_tokens: float, pf_attention_flop: float,
            pf_kv_bytes: float) -> Optional[tuple[float, float, float, float, float, float, float, float]]:
    """``(weights, kv, linear, attention, collective, draft, alltoall, roofline)`` seconds of an
    iteration (module doc), None for an empty one: :func:`iteration` and :func:`iteration_step_s`
    both read them (one computation of the terms)."""
    per_bw, per_f, linear_params, draft_params, a2a, spec, pipeline, weights_kept, collective_less_1, overlap, \
        per_operator, t = s._constants
    tokens = batch * spec + pf_tokens
    if tokens <= 0:
        return None
    m = pipeline if pipeline < batch else batch  # s.micro_batches(batch): max(1, min(batch, p))
    if m < 1:
        m = 1
    rest = pipeline / m  # kv, compute: each micro-batch passes p stages, m of them in a round
    per_pass = tokens / m
    w = weights_kept.get(per_pass) if weights_kept is not None else None  # the cache target_weight_bytes reads
    weights = (s.target_weight_bytes(per_pass) if w is None else w) / per_bw * pipeline
    kv_read = t.kv_full_bytes * context_tokens  # t._read(...), inline
    if t.kv_window_bytes:
        kv_read += t.kv_window_bytes * min(context_tokens, batch * t.window)
    attn_read = t.attention_full_flop * context_tokens
    if t.attention_window_flop:
        attn_read += t.attention_window_flop * min(context_tokens, batch * t.window)
    kv = (kv_read + pf_kv_bytes) / per_bw * rest
    linear_flop = 2.0 * linear_params * tokens
    if draft_params is not None:
        linear_flop += 2.0 * draft_params * pf_tokens
    linear = linear_flop / per_f * rest
    attention = (spec * attn_read + pf_attention_flop) / per_f * rest
    if per_operator:
        # max(weights, linear) + max(kv, attention), spelled out (max returns its first argument unless
        # the second is larger: the same float, NaN and signed zeros included)
        roofline = (linear if linear > weights else weights) + (attention if attention > kv else kv)
    else:
        mem, cmp_ = weights + kv, linear + attention
        top = cmp_ if cmp_ > mem else mem  # max(mem, cmp_)
        roofline = top if overlap >= 1.0 else top + (1.0 - overlap) * min(mem, cmp_)
    a2a_s = s.alltoall_s(tokens, m) if a2a else 0.0
    if batch <= 0:
        return weights, kv, linear, attention, 0.0, 0.0, a2a_s, roofline
    collective = roofline * collective_less_1
    draft = s.lookahead * s._draft_step_s(batch, context_tokens) if draft_params is not None else 0.0
    return weights, kv, linear, attention, collective, draft, a2a_s, roofline


def iteration(inputs: StepInputs, batch: int, context_tokens: float,
              prefill: PrefillLoad = NO_PREFILL) -> StepTerms:
    """The terms of one iteration of ``batch`` decodes holding ``context_tokens`` tokens
    in all, with ``prefill`` sharing it (see the module doc)."""
    v = _values(inputs, batch, context_tokens, prefill.tokens, prefill.attention_flop, prefill.kv_bytes)
    if v is None:
        return _ZERO
    weights, kv, linear, attention, collective, draft, a2a, _ = v
    return StepTerms(weights, kv, linear, attention, collective, draft, inputs.overhead_s,
                     BANDWIDTH if weights + kv >= linear + attention else COMPUTE, inputs.overlap, a2a,
                     inputs.per_operator)


def step_s(inputs: StepInputs, batch: int, context_tokens: float, prefill: PrefillLoad = NO_PREFILL) -> float:
    """``iteration(...).step_s``."""
    return iteration(inputs, batch, context_tokens, prefill).step_s


def iteration_step_s(inputs: StepInputs, batch: int, context_tokens: float,
                     chunks: Sequence[tuple[float, float]] = ()) -> float:
    """``iteration(inputs, batch, context_tokens, prefill_load(inputs, chunks)).step_s``, the same
    float, without building the terms (the serving simulator's per-iteration cost: issue 28)."""
    tokens = attn = kv = 0.0
    if chunks:
        t = inputs.target
        model = t.model
        per_position, full = inputs._prefill_attention
        for new, earlier in chunks:
            tokens += new
            if earlier:  # t._read(t.kv_full_bytes, t.kv_window_bytes, 1, earlier), inline
                read = t.kv_full_bytes * earlier
                if t.kv_window_bytes:
                    read += t.kv_window_bytes * min(earlier, 1 * t.window)
                kv += read
            if model is None:
                continue
            if full is None:  # windowed layers
                attn += attention_flop(model, new, earlier)
            elif new > 0:  # attention_flop(model, new, earlier), inline: per position x positions
                attn += per_position * (full * (new * earlier + new * (new + 1.0) / 2.0))
    v = _values(inputs, batch, context_tokens, tokens, attn, kv)
    if v is None:
        return 0.0
    # StepTerms.step_s's order: target (roofline + collective) + draft + overhead + alltoall
    return v[7] + v[4] + v[5] + inputs.overhead_s + v[6]


def decode_components(inputs: StepInputs, batch: int, context_tokens: float,
                      prefill: PrefillLoad = NO_PREFILL) -> tuple[tuple[Component, ...], float]:
    """The components of an iteration of ``batch`` decodes (``batch > 0``) at summed context
    ``context_tokens`` with a fixed ``prefill`` beside them, valid while the summed context
    stays below the returned breakpoint (``inf`` if none): the sum of the components at a
    context is :func:`iteration`'s ``step_s`` there."""
    s = inputs
    comps: list[Component] = []
    breakpoint_ = math.inf
    per_bw = s.devices * s.bandwidth_bytes_per_s
    per_f = s.devices * s.compute_flop_per_s
    passes = [(s.target, s.lookahead + 1, 1.0, prefill)]
    if s.draft is not None:
        passes.append((s.draft, 1, float(s.lookahead), NO_PREFILL))
    micro = s.micro_batches(batch)
    for p, per_seq, mult, pf in passes:
        tokens = batch * per_seq + pf.tokens
        target = p is s.target
        rest = s.pipeline / micro if target else 1.0
        if target:
            w_fixed = s.target_weight_bytes(tokens / micro) / per_bw * s.pipeline
        else:
            w_fixed = p.weights_read_bytes(tokens) / per_bw
        fixed = pf.kv_bytes / per_bw * rest  # the KV side (the weights are w_fixed)
        per = p.kv_full_bytes / per_bw * rest
        lin = 2.0 * (s.linear_params if target else p.active_params) * tokens
        if target and s.draft is not None:
            lin += 2.0 * s.draft.active_params * pf.tokens
        lin = lin / per_f * rest
        floor = pf.attention_flop / per_f * rest  # the attention side (the linear layers are lin)
        floor_per = per_seq * p.attention_full_flop / per_f * rest
        if p.kv_window_bytes or p.attention_window_flop:
            cap = batch * p.window
            if context_tokens < cap:
                per += p.kv_window_bytes / per_bw * rest
                floor_per += per_seq * p.attention_window_flop / per_f * rest
                breakpoint_ = min(breakpoint_, cap)
            else:
                fixed += p.kv_window_bytes * cap / per_bw * rest
                floor += per_seq * p.attention_window_flop * cap / per_f * rest
        m = s.collective_factor * mult
        if s.per_operator:  # max(weights, linear) + max(kv, attention): two components
            comps.append((w_fixed * m, 0.0, lin * m, 0.0))
            comps.append((fixed * m, per * m, floor * m, floor_per * m))
            continue
        fixed, floor = fixed + w_fixed, floor + lin
        if s.overlap < 1.0:  # max(a, b) + (1 - o) min(a, b) = max(a + (1 - o) b, b + (1 - o) a): still two lines
            u = 1.0 - s.overlap
            fixed, per, floor, floor_per = fixed + u * floor, per + u * floor_per, floor + u * fixed, floor_per + u * per
        comps.append((fixed * m, per * m, floor * m, floor_per * m))
    if s.overhead_s:
        comps.append((s.overhead_s, 0.0, 0.0, 0.0))
    a2a = s.alltoall_s(batch * (s.lookahead + 1) + prefill.tokens, micro)
    if a2a:
        comps.append((a2a, 0.0, 0.0, 0.0))
    return tuple(comps), breakpoint_


def sum_components(components: Sequence[Sequence[float]], start_context: float, growth: float,
                   count: int) -> float:
    """``sum_{j<count} sum_c max(fixed_c + per_c x X_j, floor_c + floor_per_c x X_j)`` with
    ``X_j = start + growth x j``, in closed form (two lines cross at most once). A
    three-number component ``(fixed, per, floor)`` has a flat floor. The same float as
    :func:`sum_lines` of :func:`component_lines` (the simulator's runs keep the lines)."""
    if count <= 0:
        return 0.0
    return sum_lines(component_lines(components, start_context, growth), count)


#: One component of a run of decode iterations as two lines in the iteration index ``j``:
#: ``(crossed, first_value, first_rise, second_value, second_rise, cross)``: the first line
#: for ``j < cross``, the second from there (``crossed`` False: one line, ``first``, throughout)
Lines = tuple[bool, float, float, float, float, int]


def component_lines(components: Sequence[Sequence[float]], start_context: float,
                    growth: float) -> tuple[Lines, ...]:
    """What of :func:`sum_components` does not depend on the count: each component's memory
    and compute lines from ``start_context`` and where the larger one changes (a run cut at
    several counts, as :meth:`~.serving_sim._Replica.truncate` does, computes them once)."""
    return lines_from(line_rises(components, growth), start_context)


def line_rises(components: Sequence[Sequence[float]], growth: float) -> tuple:
    """What of :func:`component_lines` depends on neither the start nor the count (the simulator keeps
    it per batch: a decode run of B sequences always grows by the same ``a x B``): per component
    ``(fixed, per, floor, floor_per, b, d, slope)``, or its lines outright when neither side rises
    (``per`` and ``floor_per`` zero: ``fixed + 0.0 x start`` is ``fixed`` at every finite start)."""
    out: list = []
    for comp in components:
        fixed, per, floor = comp[0], comp[1], comp[2]
        floor_per = comp[3] if len(comp) > 3 else 0.0
        b, d = per * growth, floor_per * growth  # the memory line's rise, the compute line's
        slope = b - d
        if per == 0.0 and floor_per == 0.0:
            out.append(_lines(fixed + per * 0.0, b, floor + floor_per * 0.0, d, slope))
        else:
            out.append((fixed, per, floor, floor_per, b, d, slope))
    return tuple(out)


def lines_from(rises: Sequence[tuple], start_context: float) -> tuple[Lines, ...]:
    """:func:`component_lines` from the components' :func:`line_rises`, at ``start_context``."""
    out = []
    for rise in rises:
        if len(rise) == 6:  # the lines themselves (no rise on either side)
            out.append(rise)
            continue
        fixed, per, floor, floor_per, b, d, slope = rise
        out.append(_lines(fixed + per * start_context, b, floor + floor_per * start_context, d, slope))
    return tuple(out)


def _lines(a: float, b: float, c: float, d: float, slope: float) -> Lines:
    """One component's :data:`Lines`: the memory line ``a + b j`` and the compute line ``c + d j``
    (``slope = b - d``)."""
    gap = a - c  # memory minus compute: gap + slope x j
    if slope == 0.0:
        return (False, a, b, 0.0, 0.0, 0) if gap >= 0 else (False, c, d, 0.0, 0.0, 0)
    if slope > 0:  # memory overtakes compute at the first j with gap + slope j >= 0
        return (True, c, d, a, b, 0 if gap >= 0 else math.ceil(-gap / slope))
    # compute overtakes memory at the first j with gap + slope j < 0
    return (True, a, b, c, d, 0 if gap < 0 else math.floor(gap / -slope) + 1)


def sum_lines(lines: Sequence[Lines], count: int) -> float:
    """:func:`sum_components` over ``count`` iterations (``count >= 1``) from its
    :func:`component_lines`; a line over ``j0 <= j < j1`` sums to ``n v + r (n j0 + n (n - 1) / 2)``,
    ``n = j1 - j0``."""
    total = 0.0
    for crossed, v0, r0, v1, r1, cross in lines:
        if not crossed:  # a flat line adds count x v0 (the rise's 0.0 term changes no sum of these)
            total += count * v0 if r0 == 0.0 else count * v0 + r0 * count * (count - 1) / 2.0
            continue
        # the first line over j < cross, the second over cross <= j < count (cross = min(count, cross)); one
        # line throughout when it crosses before the run or after it (the other sum's 0.0 left out)
        if cross == 0:
            total += count * v1 + r1 * (count * (count - 1) / 2.0)
        elif cross >= count:
            total += count * v0 + r0 * (count * (count - 1) / 2.0)
        else:
            n = count - cross
            total += (cross * v0 + r0 * (cross * (cross - 1) / 2.0)) + (n * v1 + r1 * (n * cross + n * (n - 1) / 2.0))
    return total


def steps_sum(inputs: StepInputs, batch: int, start_context: float, count: int,
              prefill: PrefillLoad = NO_PREFILL) -> float:
    """Exact ``sum_{j<count} step_s(batch, batch x (start_context + j))``: ``count``
    consecutive decode iterations of ``batch`` sequences each starting at context
    ``start_context`` (the flat analysis's reply sum), breakpoint by breakpoint."""
    total = 0.0
    x = batch * start_context
    left = count
    while left > 0:
        comps, bp = decode_components(inputs, batch, x, prefill)
        n = left if bp == math.inf else max(1, min(left, math.ceil((bp - x) / batch)))
        total += sum_components(comps, x, batch, n)
        x += batch * n
        left -= n
    return total
