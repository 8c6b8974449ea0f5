"""Bytes: weights, MoE weights touched, KV cache, and the memory fit.

Formulas (SI: bytes, tokens):

* weights: ``W = P x b_w``
* MoE weights touched by a forward pass over T tokens (see
  :func:`moe_params_touched`)
* KV per token: ``2 x layers x kv_heads x head_dim x b_kv`` (K and V);
  MLA: ``layers x (kv_lora_rank + qk_rope_head_dim) x b_kv``
* KV of one sequence at context L: full-attention layers hold L tokens,
  sliding-window layers hold ``min(L, window)``
* weights read per forward pass: the input embedding (``vocab x hidden``
  parameters) is a table from which one row per token is gathered, so it is
  not read; the LM head is. With tied embeddings the one matrix is the head
  and is read once (see :func:`embedding_params_not_read`)
* fit per device: ``W/N + B x KV(L)/N + overhead <= memory x usable``;
  under continuous batching sequences are at every stage of their reply, so
  the steady state holds B sequences at the mean in-flight context
  ``prompt + output / 2`` and the worst case all B at ``prompt + output``
  (see :func:`max_sequences_that_fit`)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .shapes import ModelShape


def weight_bytes(params: float, bytes_per_param: float) -> float:
    """``W = P x b_w`` (bytes)."""
    return params * bytes_per_param


def expected_experts_touched(experts: int, experts_per_token: int, tokens: float) -> float:
    """Expected distinct experts a layer routes ``tokens`` tokens to.

    With ``k`` of ``E`` experts chosen per token, uniformly and independently
    across tokens, an expert is missed by one token with probability
    ``1 - k/E``, so ``E x (1 - (1 - k/E)^T)`` experts are touched. This is
    ``k`` at ``T = 1`` and tends to ``E`` as T grows. Real routers are skewed,
    which touches *fewer* experts, so this never understates bytes by much
    and is exact at the two ends.
    """
    if tokens <= 0:
        return 0.0
    e, k = float(experts), float(experts_per_token)
    if k >= e:
        return e
    return e * (1.0 - (1.0 - k / e) ** tokens)


def moe_params_touched(model: ModelShape, tokens: float) -> float:
    """Parameters read by one forward pass over ``tokens`` tokens.

    Given only total P_t, active P_a, E routed experts and top-k, write
    ``P_t = S + E x e`` and ``P_a = S + k x e`` where ``e`` is the parameter
    count of one expert summed over layers and ``S`` the parameters every
    token uses (attention, embeddings, router, shared experts). Then::

        e = (P_t - P_a) / (E - k)
        S = P_a - k x e
        touched(T) = S + e x E x (1 - (1 - k/E)^T)

    which gives ``P_a`` at T = 1 and ``P_t`` for large T. Dense models (no
    ``experts``, or ``E == k``) touch all ``P_t`` parameters. A model that
    declares ``active_params < total_params`` without ``experts`` gets
    ``P_a``: the only figure that is a lower bound whatever the routing.
    """
    total = float(model.total_params)
    active = float(model.active_params)  # type: ignore[arg-type]
    if tokens <= 0:
        return 0.0
    if active >= total:
        return total
    if model.experts is None or model.experts_per_token is None:
        return active
    e_count, k = model.experts, model.experts_per_token
    if e_count <= k:
        return total
    per_expert = (total - active) / (e_count - k)
    shared = active - k * per_expert
    return shared + per_expert * expected_experts_touched(e_count, k, tokens)


def embedding_params_not_read(model: ModelShape, tokens: float = 1.0) -> float:
    """Parameters of the input embedding that a forward pass over ``tokens``
    tokens does not read: ``vocab x hidden - min(tokens, vocab) x hidden``
    (one row is gathered per token), or 0 when the embedding is tied to the
    LM head (``tie_word_embeddings``: the matrix is read whole, as the head)
    or its size is unknown (no ``vocab_size`` or ``hidden_size``).

    An unknown tie is taken as untied: fewer bytes read, so the bound stays
    a true (never too slow) bound.
    """
    if model.tie_word_embeddings or model.vocab_size is None or model.hidden_size is None:
        return 0.0
    rows = max(0.0, float(model.vocab_size) - min(max(tokens, 0.0), float(model.vocab_size)))
    return rows * float(model.hidden_size)


def params_read(model: ModelShape, tokens: float) -> float:
    """Parameters one forward pass over ``tokens`` tokens reads: those touched
    (MoE routing) less the embedding rows not gathered. The flat analysis and
    the serving simulator's step cost both read weights through this."""
    return moe_params_touched(model, tokens) - embedding_params_not_read(model, tokens)


def kv_bytes_per_token(model: ModelShape, kv_bytes_per_elem: float) -> float:
    """KV cache bytes per token of context, all layers.

    GQA/MHA: ``2 x layers x kv_heads x head_dim x b_kv``.
    MLA: ``layers x (kv_lora_rank + qk_rope_head_dim) x b_kv``.
    """
    if model.attention == "mla":
        return model.layers * (model.kv_lora_rank + model.qk_rope_head_dim) * kv_bytes_per_elem  # type: ignore[operator]
    return 2.0 * model.layers * model.kv_heads * model.head_dim * kv_bytes_per_elem  # type: ignore[operator]


def kv_bytes_per_token_per_layer(model: ModelShape, kv_bytes_per_elem: float) -> float:
    """``kv_bytes_per_token / layers``."""
    return kv_bytes_per_token(model, kv_bytes_per_elem) / model.layers


def kv_bytes_for_context(model: ModelShape, kv_bytes_per_elem: float, context_tokens: float) -> float:
    """KV bytes of one sequence holding ``context_tokens`` tokens.

    ``per_layer x (full_layers x L + window_layers x min(L, window))``.
    """
    per_layer = kv_bytes_per_token_per_layer(model, kv_bytes_per_elem)
    full = model.full_attention_layers
    windowed = model.sliding_window_layers or 0
    held = full * context_tokens
    if windowed:
        held += windowed * min(context_tokens, float(model.sliding_window))  # type: ignore[arg-type]
    return per_layer * held


def _sum_min(start: float, count: int, cap: float) -> float:
    """``sum_{j=0}^{count-1} min(start + j, cap)`` in closed form."""
    if count <= 0:
        return 0.0
    if start >= cap:
        return cap * count
    # terms below the cap: j < cap - start
    below = min(count, max(0, math.ceil(cap - start)))
    total = below * start + below * (below - 1) / 2.0
    total += (count - below) * cap
    return total


def kv_bytes_summed_over_contexts(
    model: ModelShape, kv_bytes_per_elem: float, start_context: float, count: int
) -> float:
    """``sum_{j=0}^{count-1} KV(start_context + j)``: the KV bytes read by
    ``count`` consecutive decode steps of one sequence, in closed form
    (full layers: ``count x start + count(count-1)/2``; windowed layers:
    the same capped at the window)."""
    per_layer = kv_bytes_per_token_per_layer(model, kv_bytes_per_elem)
    full = model.full_attention_layers
    windowed = model.sliding_window_layers or 0
    tokens = full * (count * start_context + count * (count - 1) / 2.0)
    if windowed:
        tokens += windowed * _sum_min(start_context, count, float(model.sliding_window))  # type: ignore[arg-type]
    return per_layer * tokens


@dataclass(frozen=True)
class MemoryFit:
    """Per-device memory terms (bytes) and the verdict."""

    weight_bytes_per_device: float
    kv_bytes_per_device: float
    draft_bytes_per_device: float
    overhead_bytes_per_device: float
    required_bytes_per_device: float
    available_bytes_per_device: Optional[float]  # None: device memory unknown
    headroom_bytes_per_device: Optional[float]
    fits: Optional[bool]  # None: not judged (memory unknown)


def memory_fit(
    *,
    weight_bytes_total: float,
    kv_bytes_per_sequence: float,
    concurrency: int,
    devices: int,
    memory_bytes: Optional[float],
    usable_fraction: float = 1.0,
    overhead_bytes: float = 0.0,
    draft_bytes_total: float = 0.0,
    of_free: bool = False,
    draft_weight_bytes_total: float = 0.0,
) -> MemoryFit:
    """Does the deployment fit in each device?

    ``required = W/N + B x KV(L)/N + draft/N + overhead`` against
    ``available = memory x usable_fraction``; ``overhead`` is per device.
    ``KV(L)`` is a sequence's cache at its longest context (prompt + reply).
    ``of_free`` (an engine that gives its cache the fraction of the memory left free,
    TensorRT-LLM; ``Deployment.kv_of_free_memory``): with ``H = W/N + draft weights/N +
    overhead`` (``draft_weight_bytes_total``: the part of ``draft_bytes_total`` that is
    weights, not cache), ``available = H + (memory - H) x usable_fraction``: the caches may
    take ``usable_fraction`` of what the rest leaves.
    """
    w = weight_bytes_total / devices
    kv = concurrency * kv_bytes_per_sequence / devices
    d = draft_bytes_total / devices
    required = w + kv + d + overhead_bytes
    if memory_bytes is None:
        return MemoryFit(w, kv, d, overhead_bytes, required, None, None, None)
    available = memory_bytes * usable_fraction
    if of_free:
        held = w + draft_weight_bytes_total / devices + overhead_bytes
        available = held + (memory_bytes - held) * usable_fraction
    return MemoryFit(
        weight_bytes_per_device=w,
        kv_bytes_per_device=kv,
        draft_bytes_per_device=d,
        overhead_bytes_per_device=overhead_bytes,
        required_bytes_per_device=required,
        available_bytes_per_device=available,
        headroom_bytes_per_device=available - required,
        fits=required <= available,
    )


def max_sequences_that_fit(
    *,
    weight_bytes_total: float,
    kv_bytes_per_sequence: float,
    devices: int,
    memory_bytes: Optional[float],
    usable_fraction: float = 1.0,
    overhead_bytes: float = 0.0,
    fixed_bytes_total: float = 0.0,
    of_free: bool = False,
) -> Optional[int]:
    """Largest B with ``W/N + fixed/N + B x KV/N + overhead <= memory x usable``:
    ``floor((memory x usable - W/N - fixed/N - overhead) / (KV/N))``, at least 0
    (``fixed``: bytes that do not grow with B, e.g. a draft model's weights;
    ``KV``: everything one sequence adds, its draft cache included).
    ``None`` when the memory is unknown or a sequence costs nothing."""
    if memory_bytes is None or kv_bytes_per_sequence <= 0:
        return None
    room = memory_bytes * usable_fraction - (weight_bytes_total + fixed_bytes_total) / devices - overhead_bytes
    if of_free:  # the fraction of what the weights and the reserve leave (memory_fit)
        room = (memory_bytes - (weight_bytes_total + fixed_bytes_total) / devices - overhead_bytes) * usable_fraction
    if room < 0:
        return 0
    # a relative nudge keeps an exact fit (B x KV == room) from flooring one below
    return int(math.floor(room / (kv_bytes_per_sequence / devices) * (1 + 1e-12)))
