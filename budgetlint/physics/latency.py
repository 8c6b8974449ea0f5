"""User-visible latencies: TTFT, end to end, TPOT conventions.

budgetlint's TPOT is the time per output token over *all* N output tokens:
``E2E = TTFT + N x TPOT = TTFT + N / pace``. vLLM-style tools divide the
decode time by ``N - 1`` instead (``TPOT_vllm = (E2E - TTFT) / (N - 1)``),
so for the same run ``TPOT_vllm = TPOT x N / (N - 1)``.
"""

from __future__ import annotations


def ttft_s(
    *,
    queue_s: float,
    prefill_s: float,
    connection_setup_s: float = 0.0,
    proxy_flush_tokens: float = 0.0,
    pace_token_per_s: float = float("inf"),
) -> float:
    """``TTFT = queue + prefill (+ connection setup + proxy delay)``.

    A proxy that flushes every k tokens shows the first token when the k-th
    exists, ``(k - 1) / pace`` after it was produced (no delay for k <= 1).
    """
    return queue_s + prefill_s + connection_setup_s + proxy_delay_s(proxy_flush_tokens, pace_token_per_s)


def proxy_delay_s(proxy_flush_tokens: float, pace_token_per_s: float) -> float:
    """``max(k - 1, 0) / pace``: how late a k-token proxy buffer shows the first token."""
    if proxy_flush_tokens <= 1:
        return 0.0
    return (proxy_flush_tokens - 1.0) / pace_token_per_s


def e2e_s(ttft: float, output_tokens: float, pace_token_per_s: float) -> float:
    """``E2E = TTFT + N / pace``."""
    return ttft + output_tokens / pace_token_per_s


def decode_budget_s(e2e_budget_s: float, ttft_allowance_s: float) -> float:
    """Time left for decode: ``E2E budget - first-token allowance``."""
    return e2e_budget_s - ttft_allowance_s


def required_pace(e2e_budget_s: float, ttft_allowance_s: float, output_tokens: float) -> float:
    """Pace an E2E promise needs: ``N / (E2E - TTFT)``; ``inf`` if no time is left."""
    left = decode_budget_s(e2e_budget_s, ttft_allowance_s)
    if left <= 0:
        return float("inf")
    return output_tokens / left




def tpot_from_vllm(tpot_vllm_s: float, output_tokens: float) -> float:
    """vLLM TPOT (over N - 1) -> budgetlint TPOT (over N): ``x (N - 1) / N``."""
    if output_tokens <= 0:
        raise ValueError("output_tokens must be positive")
    return tpot_vllm_s * (output_tokens - 1.0) / output_tokens
