"""evaluate/roofline.lever_words worked by hand: every clause of a lever's words, with numbers
chosen so that their rounding is plain (50 token/s, 250 ms, 4 s, 40 GB of 80 GB, 75 %)."""

from __future__ import annotations

from types import SimpleNamespace

from budgetlint.evaluate.roofline import lever_words


def _lever(**kw: object) -> SimpleNamespace:
    analysis = dict(memory_required_bytes_per_device=40e9, memory_available_bytes_per_device=80e9, memory_fits=True,
                    compute_known=True, pace_token_per_s=50.0, ttft_s=0.25, e2e_s=4.0)
    analysis.update(kw.pop("analysis", {}))  # type: ignore[arg-type]
    return SimpleNamespace(description="fp8 weights", analysis=SimpleNamespace(**analysis), **kw)


HEAD = "fp8 weights: pace 50 token/s, TTFT 250 ms, E2E 4 s, "


def test_a_lever_that_fits() -> None:
    assert lever_words(_lever()) == HEAD + "memory fits (40 GB of 80 GB per device)"


def test_a_lever_that_does_not_fit_and_one_not_checked() -> None:
    assert lever_words(_lever(analysis={"memory_fits": False})) == HEAD + "memory does not fit (40 GB of 80 GB per device)"
    assert lever_words(_lever(analysis={"memory_fits": None})) == HEAD + "memory not checked (40 GB per device needed)"


def test_a_lever_without_a_compute_peak() -> None:
    assert lever_words(_lever(analysis={"compute_known": False})) == (
        HEAD + "memory fits (40 GB of 80 GB per device) (compute unknown: bandwidth bounds only)")


def test_a_lever_s_cost_and_its_basis() -> None:
    """0.75 of the cost per output token, on the flat estimates by default, or on the devices'
    price when the declared traffic sets the tokens; another basis is quoted as given."""
    fits = HEAD + "memory fits (40 GB of 80 GB per device)"
    assert lever_words(_lever(cost_ratio=0.75)) == fits + ", at 75% of the cost per output token (flat estimate)"
    assert lever_words(_lever(cost_ratio=0.75, cost_basis="declared traffic")) == (
        fits + ", at 75% of the cost per output token (the declared traffic sets the tokens: only the devices' "
        "price counts)")
    assert lever_words(_lever(cost_ratio=0.75, cost_basis="simulated capacity")) == (
        fits + ", at 75% of the cost per output token (simulated capacity)")
    assert lever_words(_lever(cost_ratio=None)) == fits
