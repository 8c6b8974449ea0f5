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


def test_an_idle_prefill_pool_marks_the_met_time_promises_optimistic() -> None:
    """A disaggregated deployment whose prefill pool the declared arrivals overload (150 % utilised
    at 4 request/s): the flat estimate's idle pool is an assumption that TTFT and E2E, where met,
    pass only thanks to; an at-risk promise and TPOT are left alone; the words are kept for BL305.
    No speculative or prefix assumption here (1 token a pass, no cached prompt)."""
    from budgetlint.evaluate.roofline import PromiseVerdict, _optimism

    pools = SimpleNamespace(prefill_too_small=True, prefill_utilisation=1.5, arrival_rate_per_s=4.0, idle_words=None)
    verdicts = {name: PromiseVerdict(name, verdict, 1.0, 0.5, 0.8) for name, verdict in
                (("ttft", "met"), ("e2e", "at-risk"), ("tpot", "met"))}
    ev = SimpleNamespace(pools=pools, verdicts=verdicts)
    b = SimpleNamespace(deployment=SimpleNamespace(accepted_tokens_per_pass=1.0),
                        workload=SimpleNamespace(cached_prompt_tokens=0))
    _optimism(ev, b)  # type: ignore[arg-type]
    words = "an idle prefill pool (the flat estimate's one prompt: the pool is 150% utilised at 4 request/s, BL350)"
    assert pools.idle_words == words
    assert verdicts["ttft"].optimistic == [words]
    assert verdicts["e2e"].optimistic == [] and verdicts["tpot"].optimistic == []
    verdicts["e2e"].verdict = "met"
    verdicts["ttft"].optimistic = []
    _optimism(ev, b)  # type: ignore[arg-type]
    assert verdicts["ttft"].optimistic == [words] and verdicts["e2e"].optimistic == [words]
    pools.prefill_too_small = False
    verdicts["ttft"].optimistic = []
    _optimism(ev, b)  # type: ignore[arg-type]
    assert verdicts["ttft"].optimistic == []
