"""What the flat estimate is, in the words printed beside a simulated figure (issue 22).

At concurrency 1 it is one request on an idle system, and nothing shares its iterations. At a
declared concurrency B > 1 it is a steady batch of B sequences whose decode passes each carry
their average share of the others' prefill (physics/analysis.py ``_prefill_share``: (B - 1) x a / N
prompts per pass): the old words, "no prefill sharing the iteration", said the opposite.
"""

from __future__ import annotations

from types import SimpleNamespace

from budgetlint.judge import FLAT_IGNORES, flat_concurrency, flat_words


def _ev(concurrency: int | None) -> SimpleNamespace:
    realistic = None if concurrency is None else SimpleNamespace(concurrency=concurrency)
    return SimpleNamespace(roofline=SimpleNamespace(realistic=realistic))


def test_one_request_is_an_idle_system() -> None:
    assert flat_words(_ev(1)) == f"one request on an idle system: {FLAT_IGNORES}"
    assert "no prefill sharing" in FLAT_IGNORES
    assert flat_concurrency(_ev(None)) == 1  # no realistic analysis: nothing to say but one request


def test_a_steady_batch_says_it_charges_the_others_prefill() -> None:
    words = flat_words(_ev(8))
    assert words.startswith("a steady batch of 8 sequences: no queueing, no bursts")
    assert "average share of the others' prefill" in words
    assert "idle" not in words and "no prefill sharing" not in words
