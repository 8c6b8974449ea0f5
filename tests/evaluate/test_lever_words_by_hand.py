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


# --- _optimism's "without it" figures: which configuration each one is computed on --------------

from dataclasses import dataclass  # noqa: E402

import pytest  # noqa: E402


@dataclass(frozen=True)
class _Dep:
    """The three fields _optimism turns off for "without speculative decoding", and a name."""

    spec_accepted_tokens_per_pass: float
    draft: object
    draft_lookahead: object
    name: str


@dataclass(frozen=True)
class _Pools:
    prefill: _Dep
    decode: _Dep


@dataclass(frozen=True)
class _Work:
    cached_prompt_tokens: float
    prompt_tokens: int = 1024


SPECULATIVE = "speculative decoding accepting 2.5 tokens per pass"
PREFIX = "a prefix cache hitting 512 of 1024 prompt tokens"


def _plain(dep: _Dep) -> _Dep:
    return _Dep(1.0, None, None, dep.name)


def _without(speculative: bool) -> SimpleNamespace:
    """What the configuration without each assumption takes, chosen by hand: without speculation
    TTFT at the edge of the 1e-9 tolerance over its 0.5 s promise (not over it), 25 token/s against a 50 token/s promise
    (0.04 s a token against 0.02), E2E 8 s against 4 s; without the prefix cache TTFT 750 ms,
    TPOT 10 ms (under), E2E exactly 4 s (not over)."""
    if speculative:
        return SimpleNamespace(ttft_s=0.5 * (1 + 1e-9), tpot_s=0.04, e2e_s=8.0)
    return SimpleNamespace(ttft_s=0.75, tpot_s=0.01, e2e_s=4.0)


def _evaluation(pools: object) -> tuple[SimpleNamespace, SimpleNamespace]:
    from budgetlint.evaluate.roofline import PromiseVerdict

    verdicts = {"ttft": PromiseVerdict("ttft", "met", 0.5, 0.1, 0.2),
                "tpot": PromiseVerdict("tpot", "met", 0.02, 0.005, 0.01),
                "e2e": PromiseVerdict("e2e", "met", 4.0, 1.0, 2.0),
                "memory": PromiseVerdict("memory", "met", 80e9, 1.0, 1.0)}
    ev = SimpleNamespace(pools=pools, verdicts=verdicts, deployment=_Dep(2.5, "draft model", 4, "flat"),
                         workload=_Work(512.0), efficiency="the efficiency", queue_s=0.125, edge="the edge")
    b = SimpleNamespace(deployment=SimpleNamespace(accepted_tokens_per_pass=2.5),
                        workload=SimpleNamespace(cached_prompt_tokens=512.0, prompt_tokens=1024))
    return ev, b


EXPECTED = {"ttft": [f"{PREFIX} (without it: 750 ms)"],
            "tpot": [f"{SPECULATIVE} (without it: 25 token/s)"],
            "e2e": [f"{SPECULATIVE} (without it: 8 s)"],
            "memory": []}


def test_the_flat_without_it_figures_are_the_configuration_without_each_assumption(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Speculative decoding off is 1 token a pass with no draft and no lookahead (a draft left in
    would still be charged); the prefix cache off is no cached prompt token, the deployment as
    declared; the efficiency, queue and edge are the evaluation's. A met promise the configuration
    without an assumption breaks (over its promise, not at it) names the assumption and the figure."""
    from budgetlint.evaluate import roofline

    calls: list[tuple] = []

    def analyse(d: _Dep, w: _Work, eff: object, queue_s: float, edge: object) -> SimpleNamespace:
        calls.append((d, w, eff, queue_s, edge))
        assert (eff, queue_s, edge) == ("the efficiency", 0.125, "the edge")
        if d == _Dep(1.0, None, None, "flat") and w == _Work(512.0):
            return _without(speculative=True)
        assert (d, w) == (_Dep(2.5, "draft model", 4, "flat"), _Work(0.0)), (d, w)
        return _without(speculative=False)

    monkeypatch.setattr(roofline.analysis_cache, "analyse", analyse)
    ev, b = _evaluation(None)
    roofline._optimism(ev, b)  # type: ignore[arg-type]
    assert {name: v.optimistic for name, v in ev.verdicts.items()} == EXPECTED
    assert len(calls) == 2
    # a promise not met is left alone; without any assumption nothing is recomputed
    ev, b = _evaluation(None)
    ev.verdicts["tpot"].verdict = "at-risk"
    roofline._optimism(ev, b)  # type: ignore[arg-type]
    assert ev.verdicts["tpot"].optimistic == [] and ev.verdicts["e2e"].optimistic == EXPECTED["e2e"]
    calls.clear()
    ev, b = _evaluation(None)
    b.deployment.accepted_tokens_per_pass, b.workload.cached_prompt_tokens = 1.0, 0.0
    roofline._optimism(ev, b)  # type: ignore[arg-type]
    assert calls == [] and all(v.optimistic == [] for v in ev.verdicts.values())


def test_the_disaggregated_without_it_figures_turn_the_assumption_off_in_both_pools(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Disaggregated, the figure is the pools' combined estimate: speculative decoding off in the
    prefill and the decode pool alike, the prefix cache off in the workload the pools serve."""
    from budgetlint.evaluate import roofline
    from budgetlint.physics import disaggregated

    declared = _Pools(prefill=_Dep(2.5, "draft model", 4, "prefill"), decode=_Dep(2.5, "draft model", 4, "decode"))
    calls: list[tuple] = []

    def analyse_pools(p: _Pools, w: _Work, eff: object, queue_s: float, edge: object) -> SimpleNamespace:
        calls.append((p, w))
        assert (eff, queue_s, edge) == ("the efficiency", 0.125, "the edge")
        if p == _Pools(_plain(declared.prefill), _plain(declared.decode)) and w == _Work(512.0):
            return SimpleNamespace(combined=_without(speculative=True))
        assert (p, w) == (declared, _Work(0.0)), (p, w)
        return SimpleNamespace(combined=_without(speculative=False))

    def flat(*args: object) -> None:
        raise AssertionError("a disaggregated deployment is estimated as pools")

    monkeypatch.setattr(disaggregated, "analyse_pools", analyse_pools)
    monkeypatch.setattr(roofline.analysis_cache, "analyse", flat)
    ev, b = _evaluation(SimpleNamespace(prefill_too_small=False, pools_realistic=declared))
    roofline._optimism(ev, b)  # type: ignore[arg-type]
    assert {name: v.optimistic for name, v in ev.verdicts.items()} == EXPECTED
    assert len(calls) == 2


def test_an_estimate_the_physics_refuses_marks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an assumption the configuration may not be estimable (ValueError): that assumption
    is skipped, the other still judged."""
    from budgetlint.evaluate import roofline

    def analyse(d: _Dep, w: _Work, *rest: object) -> SimpleNamespace:
        if d.spec_accepted_tokens_per_pass == 1.0:
            raise ValueError("no such configuration")
        return _without(speculative=False)

    monkeypatch.setattr(roofline.analysis_cache, "analyse", analyse)
    ev, b = _evaluation(None)
    roofline._optimism(ev, b)  # type: ignore[arg-type]
    assert {name: v.optimistic for name, v in ev.verdicts.items()} == {
        "ttft": EXPECTED["ttft"], "tpot": [], "e2e": [], "memory": []}
