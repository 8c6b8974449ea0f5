"""Prefill: FLOPs of the uncached prompt and the time they take.

* Linear layers: ``2 x P_a`` FLOP per uncached prompt token (one multiply and
  one add per active parameter).
* Attention scores and mixing (causal, only new tokens attend): the i-th new
  token (i = 0..U-1, after C cached tokens) attends to ``C + i + 1``
  positions; per layer and per position ``QK^T`` and ``AV`` each cost
  ``2 x heads x head_dim`` FLOP, so::

      attention = 4 x heads x head_dim x sum_layers sum_i ctx_i
      sum_i ctx_i = U x C + U (U + 1) / 2                       (full layers)
      sum_i min(ctx_i, window)                                  (windowed layers)

  MLA models use the same expression with ``head_dim`` as the per-head width
  (the latent up-projection is counted in the parameters).
* ``time = max(FLOPs / (N x F), W/N / BW)``: compute, but never below one
  read of the weights the prompt touches.

Only uncached tokens cost; a prefix-cache hit moves tokens from U to C.
Collective overhead is not applied to prefill (the reference formulas charge
it on decode steps only).
"""

from __future__ import annotations

from dataclasses import dataclass

from .memory import _sum_min
from .shapes import ModelShape

BANDWIDTH = "bandwidth"
COMPUTE = "compute"


def linear_flop(active_params: float, uncached_tokens: float) -> float:
    """``2 x P_a x U`` FLOP."""
    return 2.0 * active_params * uncached_tokens


def attention_context_sum(uncached_tokens: float, cached_tokens: float) -> float:
    """``sum_{i=0}^{U-1} (C + i + 1) = U x C + U (U + 1) / 2`` positions."""
    u = uncached_tokens
    return u * cached_tokens + u * (u + 1.0) / 2.0


def attention_flop(model: ModelShape, uncached_tokens: float, cached_tokens: float = 0.0) -> float:
    """Causal attention FLOPs for U new tokens after C cached ones (see module doc)."""
    if uncached_tokens <= 0:
        return 0.0
    per_position = 4.0 * model.attention_heads * model.head_dim  # type: ignore[operator]
    positions = model.full_attention_layers * attention_context_sum(uncached_tokens, cached_tokens)
    windowed = model.sliding_window_layers or 0
    if windowed:
        count = int(round(uncached_tokens))
        positions += windowed * _sum_min(cached_tokens + 1.0, count, float(model.sliding_window))  # type: ignore[arg-type]
    return per_position * positions


def prefill_flop(active_params: float, uncached_tokens: float, attention: float = 0.0) -> float:
    """``2 x P_a x U + attention`` FLOP."""
    return linear_flop(active_params, uncached_tokens) + attention


@dataclass(frozen=True)
class PrefillTime:
    """Prefill terms (seconds) and the binding resource."""

    compute_s: float
    weight_read_s: float
    time_s: float
    binding: str  # "compute" | "bandwidth"


def prefill_time(
    *,
    flop: float,
    weight_bytes: float,
    devices: int,
    compute_flop_per_s: float,
    bandwidth_bytes_per_s: float,
) -> PrefillTime:
    """``max(FLOP / (N x F), W/N / BW)``."""
    t_cmp = flop / (devices * compute_flop_per_s)
    t_w = weight_bytes / devices / bandwidth_bytes_per_s
    return PrefillTime(t_cmp, t_w, max(t_cmp, t_w), COMPUTE if t_cmp >= t_w else BANDWIDTH)
