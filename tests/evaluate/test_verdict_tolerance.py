"""evaluate/roofline._verdict at its edges: a bound or an estimate over the promise by more than
the 1e-9 relative tolerance (float noise in the physics' sums) breaks it; one at the edge of the
tolerance, or under it, does not."""

from __future__ import annotations

from budgetlint.evaluate.roofline import _verdict


def test_a_bound_over_the_promise_cannot_be_met_and_one_at_the_tolerance_can() -> None:
    edge = 2.0 * (1 + 1e-9)  # the promise of 2 s with its tolerance
    assert _verdict(2.0, edge * (1 + 1e-12), 1.0) == "cannot-be-met"
    assert _verdict(2.0, edge, 1.0) == "met"
    assert _verdict(2.0, 2.0, 2.0) == "met"


def test_an_estimate_over_the_promise_is_at_risk_and_one_at_the_tolerance_is_met() -> None:
    edge = 2.0 * (1 + 1e-9)
    assert _verdict(2.0, 1.0, edge * (1 + 1e-12)) == "at-risk"
    assert _verdict(2.0, 1.0, edge) == "met"
    assert _verdict(2.0, 1.0, 1.0) == "met"
    # the bound decides first: over the promise it cannot be met whatever the estimate
    assert _verdict(2.0, 3.0, 1.0) == "cannot-be-met"
