"""physics/calibration.py by hand (issue 22: mutation testing against tests/physics; the fit's own
tests in tests/calibration/ run real sweeps and are not in tests/physics).

Every expected number is worked in the test: the soft-L1 loss's closed form, a 2 x 2 inverse, a
Nelder-Mead run traced step by step on a one-dimensional parabola, the TPOT definitions, the
closed-form prediction as the module doc defines it (one decode iteration at the mean context; one
prefill iteration beside the other sequences' decodes, plus the TTFT overhead), and fits that
recover the parameters their synthetic runs were made with.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from budgetlint.physics import calibration as cal
from budgetlint.physics.calibration import (
    BOUNDS,
    PARAM_NAMES,
    PRIOR,
    Fit,
    HeldOut,
    Observation,
    Params,
    Target,
)
from budgetlint.physics.shapes import Accelerator, Deployment, Efficiency, ModelShape
from budgetlint.physics.step_cost import RooflineStepCost

MODEL = ModelShape(total_params=1e9, layers=4, attention_heads=4, kv_heads=2, head_dim=64)
# compute so large that every step is bound by the memory reads: only the bandwidth fraction
# and the overheads matter
ACC = Accelerator(bandwidth_bytes_per_s=1e12, memory_bytes=80e9, compute_flop_per_s={"bf16": 1e20})
DEP = Deployment(model=MODEL, accelerator=ACC)
# for the fits: KV reads (2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B a token) comparable with the
# 2e8 B of weights, so the bandwidth fraction and the iteration overhead move the steps differently
KV_HEAVY = Deployment(model=ModelShape(total_params=1e8, layers=32, attention_heads=8, kv_heads=8, head_dim=128),
                      accelerator=ACC)


def test_constants() -> None:
    assert PARAM_NAMES == ("bandwidth", "compute", "iteration_overhead_s", "collective_latency_s", "ttft_overhead_s")
    assert BOUNDS == {"bandwidth": (0.01, 1.0), "compute": (0.01, 1.0), "iteration_overhead_s": (1e-6, 10.0),
                      "collective_latency_s": (1e-7, 1.0), "ttft_overhead_s": (1e-6, 10.0)}
    assert cal.LOSS_SCALE == 0.1 and cal.PRIOR_WEIGHT == 1e-4 and cal.SIM_REQUESTS == 1000
    assert cal.MEASUREMENT_SCATTER == 0.05 and cal.IDENTIFIED_WITHIN == 0.10
    assert PRIOR == Params(0.7, 0.5, 2e-3, 2e-5, 5e-3)
    assert PRIOR.as_dict() == {"bandwidth": 0.7, "compute": 0.5, "iteration_overhead_s": 2e-3,
                               "collective_latency_s": 2e-5, "ttft_overhead_s": 5e-3}


@pytest.mark.parametrize("kw", [dict(iteration_overhead_s=-1e-3), dict(ttft_overhead_s=math.inf),
                                dict(collective_latency_s=math.nan), dict(bandwidth=0.0), dict(compute=1.5),
                                dict(bandwidth="0.5")])
def test_params_refused(kw) -> None:
    with pytest.raises(ValueError, match=r"^\w+ must be (a non-negative finite number|a fraction in \(0, 1\]), got "):
        Params(**kw)


def test_params_at_the_edges() -> None:
    p = Params(bandwidth=1.0, compute=1, iteration_overhead_s=0.0, collective_latency_s=0, ttft_overhead_s=0.0)
    assert p.bandwidth == 1.0 and p.compute == 1


def test_step_cost_takes_the_calibration_and_drops_the_collective_factor() -> None:
    dep = replace(DEP, devices=2, collective_overhead=0.3, iteration_overhead_s=1.0, collective_latency_s=1.0)
    p = Params(bandwidth=0.5, compute=0.25, iteration_overhead_s=3e-3, collective_latency_s=4e-5)
    cost = cal.step_cost(dep, p)
    expected = RooflineStepCost(replace(dep, collective_overhead=0.0, iteration_overhead_s=3e-3,
                                        collective_latency_s=4e-5), Efficiency(0.5, 0.25))
    for batch, ctx, pre in ((1, 100.0, ()), (4, 1000.0, ((50, 0),)), (0, 0.0, ((200, 10),))):
        assert cost.iteration_s(batch, ctx, pre) == pytest.approx(expected.iteration_s(batch, ctx, pre), rel=1e-12)
    # one device, one decode, memory-bound: weights 2e9 B + KV of 100 tokens (2 x 4 layers x 2 heads
    # x 64 x 2 B = 2,048 B each) at half of 1e12 B/s, plus the 3 ms iteration overhead
    one = cal.step_cost(DEP, p)
    assert one.iteration_s(1, 100.0, ()) == pytest.approx((2e9 + 100 * 2048) / 0.5e12 + 3e-3, rel=1e-9)


def test_targets_and_observations_refused() -> None:
    with pytest.raises(ValueError, match=r"^metric must be ttft or tpot, got 'e2e'"):
        Target("e2e", "mean", 1.0)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^a measured tpot must be a positive number of seconds, got "):
            Target("tpot", "mean", bad)
    t = Target("ttft", "p50", 0.1)
    assert t.tpot_definition == cal.TPOT_BUDGETLINT == "budgetlint"
    assert (cal.TPOT_EXCLUDES_FIRST, cal.TPOT_INCLUDES_TTFT) == ("excludes_first_token", "includes_ttft")
    for prompt, out in ((0.5, 10), (10, 0.5)):
        with pytest.raises(ValueError, match=r"^a run needs prompt and output lengths of at least one token"):
            Observation(DEP, prompt, out, (t,))
    with pytest.raises(ValueError, match=r"^a run needs at least one measured TTFT or TPOT"):
        Observation(DEP, 10, 10, ())
    o = Observation(DEP, 1, 1, (t,))
    assert (o.concurrency, o.request_rate, o.requests, o.max_num_seqs, o.max_num_batched_tokens, o.replicas,
            o.label) == (None, None, None, 256, 2048, 1, "")


def test_mode() -> None:
    t = (Target("ttft", "mean", 0.1),)
    assert Observation(DEP, 10, 10, t, request_rate=2.0).mode == "open"
    assert Observation(DEP, 10, 10, t, request_rate=math.inf, requests=2).mode == "burst"
    assert Observation(DEP, 10, 10, t, request_rate=math.inf, requests=1).mode == "closed-form"
    assert Observation(DEP, 10, 10, t, request_rate=math.inf).mode == "closed-form"
    for rate in (None, 0.0, -1.0, math.nan):
        assert Observation(DEP, 10, 10, t, request_rate=rate, requests=5, concurrency=3).mode == "closed-form"


def test_stat_mean_and_percentile() -> None:
    assert cal._stat([1.0, 2.0, 6.0], "mean") == pytest.approx(3.0)
    # the nearest-rank percentile of load_stats: p50 of 1..5 is 3, p100 is 5
    assert cal._stat([5.0, 1.0, 4.0, 2.0, 3.0], "p50") == 3.0
    assert cal._stat([5.0, 1.0, 4.0, 2.0, 3.0], "p100") == 5.0
    assert cal._stat([5.0, 1.0, 4.0, 2.0, 3.0], "p0") == 1.0


def test_tpot_definitions() -> None:
    # 10 ms per token over 5 tokens; vLLM's "excludes first" spreads the 50 ms over 4 gaps: 12.5 ms;
    # "includes TTFT" adds a 100 ms TTFT spread over the 5 tokens: 30 ms
    assert cal._tpot(0.010, 0.1, 5, cal.TPOT_BUDGETLINT) == 0.010
    assert cal._tpot(0.010, 0.1, 5, cal.TPOT_EXCLUDES_FIRST) == pytest.approx(0.0125)
    assert cal._tpot(0.010, 0.1, 1, cal.TPOT_EXCLUDES_FIRST) == 0.010  # one token: no gap
    assert cal._tpot(0.010, 0.1, 2, cal.TPOT_EXCLUDES_FIRST) == pytest.approx(0.020)
    assert cal._tpot(0.010, 0.1, 5, cal.TPOT_INCLUDES_TTFT) == pytest.approx(0.030)


def test_predict_closed_form_is_one_iteration_at_the_mean_context() -> None:
    p = Params(bandwidth=0.5, compute=0.5, iteration_overhead_s=1e-3, ttft_overhead_s=7e-3)
    obs = Observation(DEP, 100, 50, (Target("ttft", "mean", 1.0), Target("tpot", "p50", 1.0),
                                     Target("tpot", "p90", 1.0, cal.TPOT_EXCLUDES_FIRST),
                                     Target("tpot", "mean", 1.0, cal.TPOT_INCLUDES_TTFT)), concurrency=2.6)
    pred = cal.predict(obs, p)
    # concurrency 2.6 rounds to 3 sequences at the mean context 100 + 50 / 2 = 125 tokens each;
    # weights 2e9 B and 2,048 B of KV per token read at 0.5e12 B/s, plus 1 ms per iteration
    decode = (2e9 + 3 * 125 * 2048) / 0.5e12 + 1e-3
    cost = cal.step_cost(DEP, p)
    assert cost.iteration_s(3, 375.0, ()) == pytest.approx(decode, rel=1e-9)
    # the first token: a prefill of the 100 prompt tokens beside the other 2 sequences' decodes
    ttft = cost.iteration_s(2, 250.0, ((100, 0),)) + 7e-3
    assert pred[("ttft", "mean")] == pytest.approx(ttft, rel=1e-12)
    assert pred[("tpot", "p50")] == pytest.approx(decode, rel=1e-9)
    assert pred[("tpot", "p90")] == pytest.approx(decode * 50 / 49, rel=1e-9)
    assert pred[("tpot", "mean")] == pytest.approx(decode + ttft / 50, rel=1e-9)
    assert len(pred) == 4
    # no concurrency: one sequence, whose first token has no other decodes beside it
    one = cal.predict(replace(obs, concurrency=None), p)
    assert one[("tpot", "p50")] == pytest.approx((2e9 + 125 * 2048) / 0.5e12 + 1e-3, rel=1e-9)
    assert one[("ttft", "mean")] == pytest.approx(cost.iteration_s(0, 0.0, ((100, 0),)) + 7e-3, rel=1e-12)
    assert cal.predict(replace(obs, concurrency=0.2), p) == one  # at least one sequence


def test_predict_simulated_runs_one_request_alone() -> None:
    # a burst of 2 requests with 1 user: they run one after the other, each alone, so each
    # request's TTFT is one prefill of its prompt and its TPOT the decode of 1 sequence
    p = Params(bandwidth=0.5, compute=0.5, iteration_overhead_s=1e-3, ttft_overhead_s=7e-3)
    t = (Target("ttft", "p50", 1.0), Target("tpot", "mean", 1.0))
    burst = Observation(DEP, 100, 50, t, concurrency=1, request_rate=math.inf, requests=2)
    pred = cal.predict(burst, p)
    cost = cal.step_cost(DEP, p)
    assert pred[("ttft", "p50")] == pytest.approx(cost.iteration_s(0, 0.0, ((100, 0),)) + 7e-3, rel=1e-6)
    # 49 decode steps after the first token, at contexts 101 .. 149: mean 125
    step = (2e9 + 125 * 2048) / 0.5e12 + 1e-3
    assert pred[("tpot", "mean")] == pytest.approx(step * 49 / 50, rel=2e-2)
    # an open loop at a slow rate: every request alone too
    slow = Observation(DEP, 100, 50, t, request_rate=0.01, requests=20)
    assert cal.predict(slow, p)[("ttft", "p50")] == pytest.approx(pred[("ttft", "p50")], rel=1e-6)


def test_rho_is_soft_l1() -> None:
    s = 0.1
    assert cal._rho(0.0) == 0.0
    # 2 s^2 (sqrt(1 + (r/s)^2) - 1): at r = s, 2 x 0.01 x (sqrt 2 - 1)
    assert cal._rho(0.1) == pytest.approx(0.02 * (math.sqrt(2) - 1), rel=1e-12)
    assert cal._rho(-0.3) == pytest.approx(2 * s * s * (math.sqrt(10) - 1), rel=1e-12)
    assert cal._rho(0.001) == pytest.approx(0.001 ** 2, rel=1e-4)  # quadratic when small
    assert cal._rho(10.0) == pytest.approx(2 * s * 10.0, rel=2e-2)  # linear (slope 2 s) when large


def test_log_space_and_its_bounds() -> None:
    names = ("bandwidth", "iteration_overhead_s")
    x = cal._to_x(PRIOR, names)
    assert x == pytest.approx([math.log(0.7), math.log(2e-3)], rel=1e-12)
    assert cal._from_x(x, names, PRIOR).as_dict() == pytest.approx(PRIOR.as_dict(), rel=1e-12)
    p = cal._from_x([math.log(5.0), math.log(1e-9)], names, replace(PRIOR, compute=0.25))
    assert (p.bandwidth, p.iteration_overhead_s, p.compute) == (1.0, 1e-6, 0.25)  # clipped to BOUNDS
    p = cal._from_x([math.log(0.001)], ("compute",), PRIOR)
    assert p.compute == 0.01 and p.bandwidth == 0.7
    p = cal._from_x([math.log(0.3)], ("compute",), PRIOR)
    assert p.compute == pytest.approx(0.3, rel=1e-12)


def _synthetic(params: Params, concurrencies=(1, 64, 256)) -> list[Observation]:
    """Runs 'measured' exactly where ``params`` predict (closed form)."""
    out = []
    for b in concurrencies:
        obs = Observation(KV_HEAVY, 200, 100, (Target("ttft", "mean", 1.0), Target("tpot", "mean", 1.0)),
                          concurrency=b, label=f"b{b}")
        pred = cal.predict(obs, params)
        out.append(replace(obs, targets=tuple(replace(t, value_s=pred[(t.metric, t.stat)]) for t in obs.targets)))
    return out


def test_residuals_and_loss() -> None:
    p = Params(bandwidth=0.5, iteration_overhead_s=1e-3, ttft_overhead_s=7e-3)
    (obs,) = _synthetic(p, (4,))
    assert cal.residuals([obs], p) == [[pytest.approx(0.0, abs=1e-12), pytest.approx(0.0, abs=1e-12)]]
    # measured twice as long: ln(1/2) each
    half = replace(obs, targets=tuple(replace(t, value_s=2 * t.value_s) for t in obs.targets))
    assert cal.residuals([half, obs], p) == [[pytest.approx(-math.log(2))] * 2, [pytest.approx(0.0, abs=1e-12)] * 2]
    # the loss: soft-L1 of each residual plus 1e-4 x ln(p / prior)^2 per parameter
    prior_term = 1e-4 * (math.log(0.5 / 0.7) ** 2 + math.log(1e-3 / 2e-3) ** 2 + math.log(7e-3 / 5e-3) ** 2)
    assert cal.loss([half], p) == pytest.approx(2 * cal._rho(-math.log(2)) + prior_term, rel=1e-9)
    assert cal.loss([obs], p, prior=p) == pytest.approx(0.0, abs=1e-20)
    assert cal.loss([obs], PRIOR, prior=PRIOR) > 0.0


def test_residual_of_an_unpredictable_run_is_ten() -> None:
    # a 1,000-token prompt cannot be scheduled in chunks of 8 tokens with a KV cache of 16: every
    # request is rejected and the prediction infinite; such a residual counts as ln ratio 10
    p = PRIOR
    tiny = Observation(DEP, 100, 10, (Target("ttft", "p50", 0.1),), request_rate=math.inf, requests=2,
                       max_num_seqs=1, max_num_batched_tokens=8)
    pred = cal.predict(tiny, p)
    if math.isinf(pred[("ttft", "p50")]):
        assert cal.residuals([tiny], p) == [[10.0]]
    else:  # the simulator chunks the prompt: a finite ratio
        assert cal.residuals([tiny], p) == [[pytest.approx(math.log(pred[("ttft", "p50")] / 0.1))]]


def test_nelder_mead_traced_by_hand() -> None:
    f = lambda x: (x[0] - 0.6) ** 2  # noqa: E731
    # from 0 with step 1: points 0 (0.36) and 1 (0.16); reflect 1 + (1 - 0) = 2 (1.96) is worse than
    # both: contract inside to 0.5 (0.01); reflect 0 (0.36): inside to 0.75 (0.0225); reflect 0.25
    # (0.1225): inside to 0.625 (0.000625); reflect 0.75 (0.0225): inside to 0.5625 (0.00140625)
    assert cal.nelder_mead(f, [0.0], step=1.0, max_evals=4) == ([0.5], pytest.approx(0.01), 4)
    x, v, n = cal.nelder_mead(f, [0.0], step=1.0, max_evals=8)
    assert (x, v, n) == ([0.625], pytest.approx(0.000625), 8)
    x, v, n = cal.nelder_mead(f, [0.0], step=1.0, max_evals=10)
    assert (x, v, n) == ([0.625], pytest.approx(0.000625), 10)
    # expansion: x^2 from 1 with step 0.5: points 1 (1) and 1.5 (2.25); reflect to 0.5 (0.25), better
    # than the best: expand to 1 + 2 (1 - 1.5) = 0 (0), better still, kept
    g = lambda x: x[0] ** 2  # noqa: E731
    assert cal.nelder_mead(g, [1.0], step=0.5, max_evals=4) == ([0.0], 0.0, 4)
    # a reflection better than the best but an expansion that is worse keeps the reflection:
    # |x - 0.5| from 1 (0.5), 1.5 (1): reflect 0.5 (0), expand 0 (0.5)
    h = lambda x: abs(x[0] - 0.5)  # noqa: E731
    assert cal.nelder_mead(h, [1.0], step=0.5, max_evals=4) == ([0.5], 0.0, 4)
    # outside contraction: f = -3x below 0, x above; from -1 (3) with step 1.2: 0.2 (0.2); reflect
    # 1.4 (1.4) is between the two: contract outside to 0.8 (0.8); then reflect -0.4 (1.2), worse
    # than 0.8: inside to 0.5 (0.5), the best still 0.2
    k = lambda x: -3 * x[0] if x[0] < 0 else x[0]  # noqa: E731
    assert cal.nelder_mead(k, [-1.0], step=1.2, max_evals=4) == ([pytest.approx(0.2)], pytest.approx(0.2), 4)
    # it converges: a 2-D bowl from far away, within the tolerance
    bowl = lambda x: (x[0] - 1.0) ** 2 + 3 * (x[1] + 2.0) ** 2  # noqa: E731
    x, v, n = cal.nelder_mead(bowl, [0.0, 0.0], max_evals=2000, tol=1e-14)
    assert x == pytest.approx([1.0, -2.0], abs=1e-5) and v < 1e-10 and n < 2000
    # a flat function stops at once: the n + 1 first evaluations
    assert cal.nelder_mead(lambda x: 1.0, [0.0, 0.0, 0.0])[2] == 4


def test_nelder_mead_shrinks_when_nothing_else_helps() -> None:
    # 1-D with a spike: 0 (0), 1 (1); reflect -1 (5: worse than the worst), contract inside to 0.5
    # (5: not better): shrink towards 0: 0.5 (evaluated again, 5); 2 + 1 + 1 + 1 evaluations
    f = lambda x: 0.0 if x[0] == 0 else (1.0 if x[0] == 1 else 5.0)  # noqa: E731
    calls = []

    def counted(x):
        calls.append(x[0])
        return f(x)

    x, v, n = cal.nelder_mead(counted, [0.0], step=1.0, max_evals=5)
    assert calls == [0.0, 1.0, -1.0, 0.5, 0.5] and (x, v, n) == ([0.0], 0.0, 5)


def test_solve_inverse_by_hand() -> None:
    # [[2, 1], [1, 3]]^-1 = [[3, -1], [-1, 2]] / 5
    inv = cal._solve_inverse([[2.0, 1.0], [1.0, 3.0]])
    assert inv == [[pytest.approx(0.6), pytest.approx(-0.2)], [pytest.approx(-0.2), pytest.approx(0.4)]]
    # a zero first pivot needs the row swap
    assert cal._solve_inverse([[0.0, 1.0], [1.0, 0.0]]) == [[0.0, 1.0], [1.0, 0.0]]
    assert cal._solve_inverse([[4.0]]) == [[0.25]]
    assert cal._solve_inverse([[1.0, 2.0], [2.0, 4.0]]) is None
    assert cal._solve_inverse([[0.0]]) is None
    inv = cal._solve_inverse([[1e-200, 0.0], [0.0, 1.0]])
    assert inv == [[pytest.approx(1e200), 0.0], [0.0, 1.0]]


def test_not_identified_words() -> None:
    assert cal.not_identified({"bandwidth": 0.05, "compute": 0.10}) == {}
    out = cal.not_identified({"bandwidth": 0.2, "compute": math.inf, "iteration_overhead_s": 12.0})
    assert out["bandwidth"] == ("not identified by these runs: at 5% scatter they pin it only to +/- 20% "
                                "(another parameter can do what it does); its value is assumed (prior 0.7)")
    assert "they pin it not at all (another" in out["compute"] and out["compute"].endswith("(prior 0.5)")
    assert "only to +/- 999% " in out["iteration_overhead_s"] and out["iteration_overhead_s"].endswith("(prior 0.002)")
    assert cal.not_identified({"bandwidth": 0.2}, Params(bandwidth=0.4))["bandwidth"].endswith("(prior 0.4)")


def test_sensitivity_standard_errors_and_the_fit_recover_the_generating_parameters() -> None:
    truth = Params(bandwidth=0.4, compute=0.5, iteration_overhead_s=4e-3, collective_latency_s=2e-5,
                   ttft_overhead_s=2e-2)
    runs = _synthetic(truth)
    held = cal.sensitive_parameters(runs, truth)
    # one device: no collective; compute never binds (1e20 FLOP/s)
    assert held == {"collective_latency_s": "every run is on one device: no tensor-parallel collective to measure",
                    "compute": "no run's prediction depends on it (a factor of 2 moves none by 0.5 %)"}
    errors = cal.standard_errors(runs, truth, ["bandwidth", "iteration_overhead_s", "ttft_overhead_s"])
    assert set(errors) == {"bandwidth", "iteration_overhead_s", "ttft_overhead_s"}
    assert all(0 < e < 0.1 for e in errors.values())
    assert cal.standard_errors(runs, truth, []) == {}
    # bandwidth and compute: compute does nothing, so the pair is singular: both infinite
    assert cal.standard_errors(runs, truth, ["bandwidth", "compute"]) == {"bandwidth": math.inf, "compute": math.inf}
    f = cal.fit(runs, max_evals=1500)
    assert isinstance(f, Fit)
    assert f.fitted == ("bandwidth", "iteration_overhead_s", "ttft_overhead_s")
    assert f.held == held and f.assumed == {}
    assert f.params.bandwidth == pytest.approx(0.4, rel=2e-2)
    assert f.params.iteration_overhead_s == pytest.approx(4e-3, rel=5e-2)
    assert f.params.ttft_overhead_s == pytest.approx(2e-2, rel=5e-2)
    assert (f.params.compute, f.params.collective_latency_s) == (PRIOR.compute, PRIOR.collective_latency_s)
    assert f.loss < 1e-3 and 0 < f.evaluations <= 1500
    assert all(abs(r) < 0.02 for row in f.residuals for r in row) and len(f.residuals) == 3
    assert f.loss == pytest.approx(cal.loss(runs, f.params), rel=1e-6)
    # every parameter held: the loss at the start, no evaluations of Nelder-Mead
    every = {n: "held" for n in PARAM_NAMES}
    f = cal.fit(runs, start=truth, held=every)
    assert f.fitted == () and f.evaluations == 0 and f.params == PRIOR
    assert f.loss == pytest.approx(cal.loss(runs, PRIOR), rel=1e-12)
    with pytest.raises(ValueError, match="^calibration needs at least one run"):
        cal.fit([])


def test_sensitivity_on_two_devices_and_the_identify_switch() -> None:
    dep = replace(KV_HEAVY, devices=2)
    truth = Params(bandwidth=0.4, iteration_overhead_s=4e-3, collective_latency_s=1e-3, ttft_overhead_s=2e-2)
    runs = [replace(o, deployment=dep) for o in _synthetic(truth)]
    runs = [replace(o, targets=tuple(replace(t, value_s=cal.predict(o, truth)[(t.metric, t.stat)]) for t in o.targets))
            for o in runs]
    held = cal.sensitive_parameters(runs, truth)
    assert "collective_latency_s" not in held  # 1 ms per layer per iteration moves every step
    f = cal.fit(runs, start=truth, held=held, identify=False, max_evals=200)
    assert f.errors == {} and f.assumed == {}


def test_leave_one_out_and_error_summary() -> None:
    truth = Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2)
    runs = _synthetic(truth)
    full = cal.fit(runs, max_evals=600, identify=False)
    assert cal.leave_one_out(runs[:2], full) == []
    seen = []

    def mapper(fn, indices):
        indices = list(indices)
        seen.append(indices)
        return map(fn, indices)

    out = cal.leave_one_out(runs, full, max_evals=100, mapper=mapper)
    assert seen == [[0, 1, 2]] and [h.label for h in out] == ["b1", "b64", "b256"]
    for h in out:  # exact synthetic runs: the others predict each well
        assert set(h.errors) == {("ttft", "mean"), ("tpot", "mean")}
        assert all(abs(e) < 0.05 for e in h.errors.values())
    one = cal.held_out(runs, full, 1, max_evals=100)
    assert one == out[1]
    # the summary by hand: |errors| per metric, median (mean of the middle two when even) and max
    held = [HeldOut("a", {("ttft", "p50"): 0.1, ("ttft", "p90"): -0.3, ("tpot", "mean"): 0.2}),
            HeldOut("b", {("ttft", "p50"): -0.2}),
            HeldOut("c", {("tpot", "mean"): -0.05, ("tpot", "p99"): 0.4})]
    s = cal.error_summary(held)
    assert s["ttft"] == {"median": pytest.approx(0.2), "max": pytest.approx(0.3), "count": 2.0}
    assert s["tpot"] == {"median": pytest.approx(0.2), "max": pytest.approx(0.4), "count": 2.0}
    s = cal.error_summary(held[:2])
    assert s["ttft"]["median"] == pytest.approx(0.2) and s["tpot"] == {"median": 0.2, "max": 0.2, "count": 1.0}
    s = cal.error_summary([HeldOut("a", {("ttft", "p50"): 0.1, ("ttft", "p90"): 0.3})])
    assert s["ttft"]["median"] == pytest.approx(0.2)
    assert cal.error_summary([]) == {}


def test_standard_error_of_a_bandwidth_only_run_set_by_hand() -> None:
    # no overheads, compute never binding: every step is bytes / (bandwidth fraction x peak), so
    # ln(prediction) moves by exactly -1 per unit of ln(bandwidth): J is a column of -1s, one per
    # target. Three TPOT targets: J^T J = 3, the standard error 0.05 x sqrt(1/3). The runs are
    # measured twice as long as predicted (every residual -ln 2), which changes nothing here.
    p = Params(bandwidth=0.5, compute=0.5, iteration_overhead_s=0.0, collective_latency_s=0.0, ttft_overhead_s=0.0)
    runs = []
    for b in (1, 4, 16):
        obs = Observation(KV_HEAVY, 200, 100, (Target("tpot", "mean", 1.0),), concurrency=b)
        runs.append(replace(obs, targets=(Target("tpot", "mean", 2 * cal.predict(obs, p)[("tpot", "mean")]),)))
    assert [r[0] for r in cal.residuals(runs, p)] == [pytest.approx(-math.log(2))] * 3
    (se,) = cal.standard_errors(runs, p, ["bandwidth"]).values()
    assert se == pytest.approx(0.05 / math.sqrt(3), rel=1e-6)
    # at the upper bound (1.0) the difference is taken downwards: the same slope
    top = replace(p, bandwidth=1.0)
    assert cal.standard_errors(runs, top, ["bandwidth"]) == {"bandwidth": pytest.approx(0.05 / math.sqrt(3), rel=1e-6)}
    assert cal.standard_errors(runs, p, ["bandwidth"], scatter=0.1)["bandwidth"] == pytest.approx(0.1 / math.sqrt(3),
                                                                                                  rel=1e-6)
    # a TTFT target on top: the prefill reads the weights once at the same fraction, slope -1 too
    with_ttft = [replace(o, targets=o.targets + (Target("ttft", "mean", 1.0),)) for o in runs]
    assert cal.standard_errors(with_ttft, p, ["bandwidth"])["bandwidth"] == pytest.approx(0.05 / math.sqrt(6), rel=1e-6)


def test_the_smallest_pivot_still_inverts() -> None:
    assert cal._solve_inverse([[1e-300]]) == [[pytest.approx(1e300)]]
    assert cal._solve_inverse([[1e-301]]) is None


def test_the_work_allowance_reaches_every_simulated_prediction() -> None:
    """A simulated run (a burst) is predicted through serving_sim.run with the caller's allowance:
    each entry point hands it on (it is how calibrate bounds its time)."""
    calls: list[int] = []

    def allowance(n: int) -> bool:
        calls.append(n)
        return True

    p = Params(bandwidth=0.5, iteration_overhead_s=1e-3, ttft_overhead_s=1e-3)
    bursts = [Observation(KV_HEAVY, 50, 10, (Target("ttft", "p50", 0.05), Target("tpot", "mean", 0.002)),
                          request_rate=math.inf, requests=2, concurrency=c, label=f"c{c}") for c in (1, 2, 1)]
    entries = {
        "predict": lambda: cal.predict(bursts[0], p, allowance),
        "residuals": lambda: cal.residuals(bursts, p, allowance),
        "loss": lambda: cal.loss(bursts, p, allowance=allowance),
        "sensitive_parameters": lambda: cal.sensitive_parameters(bursts, p, allowance),
        "standard_errors": lambda: cal.standard_errors(bursts, p, ["bandwidth"], allowance),
        "fit": lambda: cal.fit(bursts, start=p, held={n: "held" for n in PARAM_NAMES if n != "bandwidth"},
                               max_evals=10, allowance=allowance, identify=False),
        "fit (sensitivity)": lambda: cal.fit(bursts, start=p, max_evals=10, allowance=allowance, identify=False),
    }
    for name, call in entries.items():
        calls.clear()
        call()
        assert calls, f"{name} did not pass the allowance on"
    # every loss evaluation of the fit simulates the three runs with it, not only the final residuals
    calls.clear()
    cal.fit(bursts, start=p, held={n: "held" for n in PARAM_NAMES if n != "bandwidth"}, max_evals=10,
            allowance=allowance, identify=False)
    assert len(calls) > 3 * len(bursts)
    # the sensitivity pass too: 1 + 2 x 4 residual sets (the collective latency is skipped, one device)
    calls.clear()
    cal.fit(bursts, start=p, held=None, max_evals=10, allowance=allowance, identify=False)
    held_calls = len(calls)
    calls.clear()
    cal.fit(bursts, start=p, held=cal.sensitive_parameters(bursts, p), max_evals=10, allowance=allowance,
            identify=False)
    assert held_calls - len(calls) == 9 * len(bursts)
    full = cal.fit(bursts, start=p, held={n: "held" for n in PARAM_NAMES if n != "bandwidth"}, max_evals=10,
                   identify=False)
    for name, call in (("held_out", lambda: cal.held_out(bursts, full, 0, max_evals=10, allowance=allowance)),
                       ("leave_one_out", lambda: cal.leave_one_out(bursts, full, max_evals=10, allowance=allowance))):
        calls.clear()
        call()
        # the refit (several simulations) and the held-out prediction (one more) each count
        assert len(calls) > 2 * (1 if name == "held_out" else 3), name
    # a standard error's difference is taken with the allowance too: one base and one moved residual set
    calls.clear()
    cal.standard_errors(bursts[:1], p, ["bandwidth"], allowance)
    assert len(calls) == 2


def test_held_out_is_predicted_by_the_others() -> None:
    # three runs made at the truth and a fourth measured 25 % slower than the truth predicts:
    # the others fit the truth again and predict the fourth 20 % short (1 / 1.25 - 1)
    truth = Params(bandwidth=0.4, compute=0.5, iteration_overhead_s=4e-3, collective_latency_s=2e-5,
                   ttft_overhead_s=2e-2)
    runs = _synthetic(truth, (1, 64, 256))
    odd = _synthetic(truth, (16,))[0]
    odd = replace(odd, targets=tuple(replace(t, value_s=1.25 * t.value_s) for t in odd.targets))
    full = cal.fit(runs + [odd], start=truth, max_evals=300, identify=False)
    h = cal.held_out(runs + [odd], full, 3, max_evals=300)
    assert h.label == "b16"
    assert h.errors == {k: pytest.approx(1 / 1.25 - 1, abs=0.02) for k in (("ttft", "mean"), ("tpot", "mean"))}


def test_standard_error_is_a_five_percent_finite_difference() -> None:
    # one run, one TPOT target, the iteration overhead equal to the memory time D: the prediction is
    # D / b' + D at a bandwidth fraction moved to b' = b e^h, so the log-prediction moves by
    # ln((e^-h + 1) / 2) over h = 0.05: J = -0.49376, the standard error 0.05 / 0.49376 = 0.1013
    # (the exact slope is -1/2: a step of 1.05 or a step down would give 0.1335 or 0.0988)
    d = (2e8 + 250 * 131072) / 0.5e12  # weights + the KV of 250 tokens at half of 1e12 B/s
    p = Params(bandwidth=0.5, compute=0.5, iteration_overhead_s=d, collective_latency_s=0.0, ttft_overhead_s=0.0)
    obs = Observation(KV_HEAVY, 200, 100, (Target("tpot", "mean", 1.0),), concurrency=1)
    assert cal.predict(obs, p)[("tpot", "mean")] == pytest.approx(2 * d, rel=1e-9)
    slope = math.log((math.exp(-0.05) + 1) / 2) / 0.05
    assert cal.standard_errors([obs], p, ["bandwidth"])["bandwidth"] == pytest.approx(0.05 / -slope, rel=1e-6)


def test_sensitivity_edges() -> None:
    truth = Params(bandwidth=0.4, compute=0.5, iteration_overhead_s=4e-3, collective_latency_s=2e-5,
                   ttft_overhead_s=2e-2)
    # TPOT targets alone (budgetlint's definition) never see the TTFT overhead: held, after the
    # collective latency (one device) is
    tpot_only = [replace(o, targets=o.targets[1:]) for o in _synthetic(truth)]
    held = cal.sensitive_parameters(tpot_only, truth)
    assert set(held) == {"compute", "collective_latency_s", "ttft_overhead_s"}
    # at the bandwidth's upper bound a factor 2 up is clipped to 1.0 and moves nothing; the factor
    # 1/2 still does, so the bandwidth is not held
    assert "bandwidth" not in cal.sensitive_parameters(_synthetic(truth), replace(truth, bandwidth=1.0))


def test_fit_hands_its_budget_and_steps_to_nelder_mead(monkeypatch) -> None:
    truth = Params(bandwidth=0.4, compute=0.5, iteration_overhead_s=4e-3, collective_latency_s=2e-5,
                   ttft_overhead_s=2e-2)
    runs = _synthetic(truth)
    seen = []
    real = cal.nelder_mead

    def recording(f, x0, step=0.5, max_evals=600, tol=1e-7):
        out = real(f, x0, step=step, max_evals=max_evals, tol=tol)
        seen.append((step, max_evals, out[2]))
        return out

    monkeypatch.setattr(cal, "nelder_mead", recording)
    f = cal.fit(runs, start=PRIOR)
    assert seen and seen[0][:2] == (0.7, 900)  # the defaults: step 0.7, 900 evaluations
    spent = 0
    for i, (step, budget, ev) in enumerate(seen):
        assert step == (0.7 if i == 0 else 0.2)  # restarts with a smaller simplex
        assert budget == max(60, 900 - spent)
        spent += ev
    assert f.evaluations == spent and len(seen) <= 6
    assert set(f.errors) == set(f.fitted)  # identified by default


def test_held_out_refits_from_the_full_fit(monkeypatch) -> None:
    truth = Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2)
    runs = _synthetic(truth)
    full = cal.fit(runs, max_evals=300, identify=False)
    calls = []
    real = cal.fit

    def recording(observations, **kw):
        calls.append((list(observations), kw))
        return real(observations, **kw)

    monkeypatch.setattr(cal, "fit", recording)
    cal.held_out(runs, full, 1)
    cal.leave_one_out(runs, full)
    (rest, kw), *others = calls
    assert rest == [runs[0], runs[2]]
    assert kw["start"] == full.params and kw["held"] == full.held and kw["step"] == 0.15
    assert kw["max_evals"] == 400 and kw["identify"] is False and kw["allowance"] is None
    assert [kw["max_evals"] for _, kw in others] == [400, 400, 400]
    assert [o for o, _ in others] == [[runs[1], runs[2]], [runs[0], runs[2]], [runs[0], runs[1]]]


def test_error_summary_median_of_five() -> None:
    s = cal.error_summary([HeldOut("a", {("tpot", f"p{i}"): e for i, e in enumerate((0.5, -0.1, 0.3, 0.2, -0.4))})])
    assert s["tpot"] == {"median": pytest.approx(0.3), "max": pytest.approx(0.5), "count": 1.0}
    s = cal.error_summary([HeldOut("a", {("tpot", f"p{i}"): e for i, e in enumerate((0.1, 0.2, 0.3, 0.4))})])
    assert s["tpot"]["median"] == pytest.approx(0.25)


def _record(i, ttft, tpot, out, rejected=False):
    from budgetlint.physics.serving_sim import RequestRecord

    return RequestRecord(i, 0, 0.0, 0.0, ttft, ttft + tpot * out, tpot, 10, 0, out, 0, rejected)


def test_predict_hands_the_simulator_the_run_as_measured(monkeypatch) -> None:
    """The simulated path, with the simulator replaced by a recorder returning hand-made requests:
    what predict asks for (scheduler, traffic, request count, no warmup, seed 0, the allowance),
    and what it makes of the answer (the TTFT overhead on every first token, each TPOT definition,
    percentiles and means over the served requests only)."""
    from budgetlint.physics import serving_sim
    from budgetlint.physics.step_cost import kv_capacity_tokens

    asked = {}
    real_scheduler, real_traffic = serving_sim.Scheduler, serving_sim.Traffic

    def scheduler(**kw):
        asked["scheduler"] = kw
        return real_scheduler(**kw)

    def traffic(**kw):
        asked["traffic"] = kw
        return real_traffic(**kw)

    records = (_record(0, 0.10, 0.010, 5), _record(1, 0.30, 0.020, 5), _record(2, 0.20, 0.030, 5),
               _record(3, math.nan, math.nan, 5, rejected=True))

    def run(cost, traffic_, sched, **kw):
        asked["run"] = kw
        return serving_sim.RawRun(records, 0.0, 1.0, 1, 0.0, 0.0, (), 3, 3, 15)

    monkeypatch.setattr(serving_sim, "Scheduler", scheduler)
    monkeypatch.setattr(serving_sim, "Traffic", traffic)
    monkeypatch.setattr(serving_sim, "run", run)
    p = Params(bandwidth=0.5, ttft_overhead_s=0.05)
    allowance = lambda n: True  # noqa: E731
    targets = (Target("ttft", "p50", 1.0), Target("ttft", "mean", 1.0), Target("tpot", "mean", 1.0),
               Target("tpot", "p50", 1.0, cal.TPOT_EXCLUDES_FIRST))
    burst = Observation(KV_HEAVY, 10.4, 4.6, targets, concurrency=3, request_rate=math.inf, requests=7,
                        max_num_seqs=12, max_num_batched_tokens=512, replicas=2)
    pred = cal.predict(burst, p, allowance)
    assert asked["scheduler"] == {"max_num_seqs": 12, "max_num_batched_tokens": 512, "replicas": 2,
                                  "kv_capacity_tokens": kv_capacity_tokens(KV_HEAVY, usable_fraction=0.9)}
    assert asked["traffic"] == {"prompt": cal_fixed(10), "output": cal_fixed(5), "concurrency": 3}
    assert asked["run"] == {"requests": 7, "warmup": 0, "seed": 0, "allowance": allowance}
    # TTFTs with the 50 ms overhead: 0.15, 0.35, 0.25 (the rejected one left out)
    assert pred[("ttft", "p50")] == pytest.approx(0.25) and pred[("ttft", "mean")] == pytest.approx(0.25)
    assert pred[("tpot", "mean")] == pytest.approx(0.020)
    # over N - 1 = 4 gaps: 0.0125, 0.025, 0.0375, median 0.025
    assert pred[("tpot", "p50")] == pytest.approx(0.025)
    # plus the TTFT (with its overhead) over 5 tokens: 0.01 + 0.03, 0.02 + 0.07, 0.03 + 0.05
    incl = cal.predict(replace(burst, targets=(Target("tpot", "mean", 1.0, cal.TPOT_INCLUDES_TTFT),)), p)
    assert incl[("tpot", "mean")] == pytest.approx((0.04 + 0.09 + 0.08) / 3)
    # all at once with no cap: every request a user; one request's burst is closed form
    cal.predict(replace(burst, concurrency=None), p)
    assert asked["traffic"]["concurrency"] == 7 and asked["run"]["requests"] == 7
    cal.predict(replace(burst, concurrency=7), p)
    assert asked["traffic"]["concurrency"] == 7
    # an open loop: its own request count up to SIM_REQUESTS, at least 20
    for requests, n in ((None, 1000), (5, 20), (300, 300), (5000, 1000)):
        cal.predict(replace(burst, request_rate=2.5, requests=requests), p)
        assert asked["run"]["requests"] == n and asked["traffic"] == {
            "prompt": cal_fixed(10), "output": cal_fixed(5), "arrival_rate_per_s": 2.5}
    # a one-token reply is still one token
    cal.predict(replace(burst, output_tokens=1), p)
    assert asked["traffic"]["output"] == cal_fixed(1)


def cal_fixed(n):
    from budgetlint.physics.traffic import Fixed

    return Fixed(n)


def test_predict_when_every_request_is_rejected_and_its_residual(monkeypatch) -> None:
    from budgetlint.physics import serving_sim

    monkeypatch.setattr(serving_sim, "run", lambda *a, **kw: serving_sim.RawRun(
        (_record(0, math.nan, math.nan, 5, rejected=True),), 0.0, 1.0, 1, 0.0, 0.0, (), 1, 0, 0))
    burst = Observation(KV_HEAVY, 10, 5, (Target("ttft", "p50", 0.1),), request_rate=math.inf, requests=2)
    assert cal.predict(burst, PRIOR) == {("ttft", "p50"): math.inf}
    # an infinite prediction counts as a log ratio of 10
    assert cal.residuals([burst], PRIOR) == [[10.0]]


def test_closed_form_counts_the_other_sequences_and_the_tokens_per_pass() -> None:
    # a compute-bound accelerator (1e12 FLOP/s), so the batch beside the prefill matters
    slow = replace(DEP, accelerator=Accelerator(bandwidth_bytes_per_s=1e12, memory_bytes=80e9,
                                                compute_flop_per_s={"bf16": 1e12}))
    p = Params(bandwidth=0.5, compute=0.5, iteration_overhead_s=1e-3, ttft_overhead_s=7e-3)
    obs = Observation(slow, 100, 50, (Target("ttft", "mean", 1.0), Target("tpot", "mean", 1.0)), concurrency=3)
    cost = cal.step_cost(slow, p)
    pred = cal.predict(obs, p)
    assert pred[("ttft", "mean")] == pytest.approx(cost.iteration_s(2, 250.0, ((100, 0),)) + 7e-3, rel=1e-12)
    assert cost.iteration_s(2, 250.0, ((100, 0),)) != pytest.approx(cost.iteration_s(4, 250.0, ((100, 0),)))
    # speculative decoding: a pass emits 2 tokens, the TPOT is a pass over 2
    spec = replace(slow, spec_accepted_tokens_per_pass=2.0)
    cost = cal.step_cost(spec, p)
    assert cost.tokens_per_pass == 2.0
    assert cal.predict(replace(obs, deployment=spec), p)[("tpot", "mean")] == pytest.approx(
        cost.iteration_s(3, 375.0, ()) / 2, rel=1e-12)


def test_nelder_mead_defaults() -> None:
    # the default step is 0.5: x^2 from 1 expands to 0 in 4 evaluations (traced above)
    assert cal.nelder_mead(lambda x: x[0] ** 2, [1.0], max_evals=4) == ([0.0], 0.0, 4)
    # an unbounded function keeps expanding: 2 + 2 per step up to the default 600 evaluations
    assert cal.nelder_mead(lambda x: -x[0], [0.0])[2] == 600


def _counted(f, calls):
    def g(x):
        calls.append(x[0])
        return f(x)
    return g


def test_nelder_mead_evaluates_the_points_worked_by_hand() -> None:
    # shrink away from 0: f(1) = 0, f(3) = 1, 5 elsewhere; from 1 with step 2: reflect -1 (5), inside
    # contraction 1 + 0.5 (3 - 1) = 2 (5, no better): shrink towards 1: 1 + 0.5 (3 - 1) = 2 again
    calls: list[float] = []
    f = lambda x: 0.0 if x[0] == 1 else (1.0 if x[0] == 3 else 5.0)  # noqa: E731
    cal.nelder_mead(_counted(f, calls), [1.0], step=2.0, max_evals=5)
    assert calls == [1.0, 3.0, -1.0, 2.0, 2.0]
    # a reflection exactly as bad as the worst contracts inside: x^2 from 0, step 1: reflect -1 (1 = f(1)),
    # contract to 0.5 (not -0.5)
    calls = []
    cal.nelder_mead(_counted(lambda x: x[0] ** 2, calls), [0.0], step=1.0, max_evals=4)
    assert calls == [0.0, 1.0, -1.0, 0.5]
    # between best and worst contracts outside: -3x below 0, x above, from -1 with step 1.2: reflect 1.4,
    # contract to 0.2 + 0.5 (1.4 - 0.2) = 0.8
    calls = []
    k = lambda x: -3 * x[0] if x[0] < 0 else x[0]  # noqa: E731
    cal.nelder_mead(_counted(k, calls), [-1.0], step=1.2, max_evals=4)
    assert calls == [-1.0, pytest.approx(0.2), pytest.approx(1.4), pytest.approx(0.8)]


def test_step_cost_takes_the_compute_fraction() -> None:
    slow = replace(DEP, accelerator=Accelerator(bandwidth_bytes_per_s=1e12, memory_bytes=80e9,
                                                compute_flop_per_s={"bf16": 1e12}))
    p = Params(bandwidth=0.5, compute=0.25, iteration_overhead_s=0.0, collective_latency_s=0.0)
    # a prefill of 1,000 tokens: 2 x 1e9 x 1,000 FLOP at a quarter of 1e12 FLOP/s = 8 s at least
    t = cal.step_cost(slow, p).iteration_s(0, 0.0, ((1000, 0),))
    assert t >= 8.0 and t == pytest.approx(
        RooflineStepCost(slow, Efficiency(0.5, 0.25), iteration_overhead_s=0.0, collective_latency_s=0.0)
        .iteration_s(0, 0.0, ((1000, 0),)), rel=1e-12)
    assert cal.step_cost(slow, replace(p, compute=1.0)).iteration_s(0, 0.0, ((1000, 0),)) < 8.0 / 2


def test_nelder_mead_contracts_outside_when_the_reflection_beats_only_the_worst() -> None:
    """f(x, y) = (x - 0.4)^2 + y^2 from (0, 0), step 0.5: the simplex (0, 0) 0.16, (0.5, 0) 0.01,
    (0, 0.5) 0.41. The centroid of the two best is (0.25, 0); the worst reflected through it is
    (0.5, -0.5): 0.26, between the second worst (0.16) and the worst (0.41), so the contraction is
    the outside one, halfway from the centroid to the reflection: (0.375, -0.25) (0.063125, better
    than both: it replaces the worst). An inside contraction would have tried (0.125, 0.25)."""
    seen: list[tuple[float, ...]] = []

    def f(p: list[float]) -> float:
        seen.append(tuple(p))
        return (p[0] - 0.4) ** 2 + p[1] ** 2

    x, v, n = cal.nelder_mead(f, [0.0, 0.0], step=0.5, max_evals=5)
    assert seen == [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.5, -0.5), (0.375, -0.25)]
    assert (x, n) == ([0.5, 0.0], 5) and v == pytest.approx(0.01)


def test_the_fit_stops_at_the_first_restart_that_does_not_improve(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit restarts Nelder-Mead from its last point (up to 6 times) while a restart lowers the
    loss by more than 1e-9 and evaluations are left; a restart from the optimum of an exactly
    fittable set (runs made at the start's own parameters) finds nothing better: the first run
    ends at the optimum, the second does not improve on it, and the fit stops there: 2 runs."""
    truth = Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2)
    runs = _synthetic(truth)
    calls: list[float] = []
    real = cal.nelder_mead

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(*args, **kwargs)
        calls.append(out[1])
        return out

    monkeypatch.setattr(cal, "nelder_mead", counted)
    held = {"compute": "held", "collective_latency_s": "held"}
    f = cal.fit(runs, start=truth, held=held, max_evals=100_000, identify=False)
    assert len(calls) == 2 and calls[1] >= calls[0] - 1e-9
    assert f.loss == pytest.approx(min(calls), abs=1e-15)


def test_the_words_of_a_parameter_not_identified_name_the_fits_own_prior() -> None:
    """One run (concurrency 1, a TTFT and a TPOT) cannot pin three parameters: each is assumed, and
    the words give the prior the fit was given (0.45 for the bandwidth), not the default's (0.7)."""
    prior = Params(bandwidth=0.45, iteration_overhead_s=3e-3, ttft_overhead_s=1e-2)
    runs = _synthetic(Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2), (1,))
    f = cal.fit(runs, start=prior, prior=prior, held={"compute": "held", "collective_latency_s": "held"},
                max_evals=200)
    assert set(f.assumed) == {"bandwidth", "iteration_overhead_s", "ttft_overhead_s"}
    assert f.assumed["bandwidth"].endswith("its value is assumed (prior 0.45)")


def test_an_open_loop_prediction_is_simulated_at_seed_0_with_the_callers_allowance() -> None:
    """An open-loop run (a request rate) is simulated with Poisson arrivals at one seed, 0 (docs/
    calibration.md: one seed, so the loss is smooth in the parameters), and the caller's allowance:
    the prediction is the p50 TTFT of that simulation (the run's own 40 requests, none dropped) plus
    the TTFT overhead. At 200 request/s on one replica the requests queue, so the seed shows."""
    from budgetlint.physics.serving_sim import Scheduler, Traffic, run
    from budgetlint.physics.traffic import Fixed

    p = Params(bandwidth=0.5, iteration_overhead_s=1e-3, ttft_overhead_s=7e-3)
    obs = Observation(DEP, 100, 50, (Target("ttft", "p50", 1.0),), request_rate=200.0, requests=40)
    calls: list[int] = []
    pred = cal.predict(obs, p, lambda n: calls.append(n) is None)
    assert calls
    traffic = Traffic(prompt=Fixed(100), output=Fixed(50), arrival_rate_per_s=200.0)

    def p50(seed: int) -> float:
        ttfts = sorted(r.ttft_s for r in run(cal.step_cost(DEP, p), traffic, Scheduler(), requests=40, warmup=0,
                                             seed=seed).records)
        return (ttfts[19] + ttfts[20]) / 2 + 7e-3

    assert p50(0) != pytest.approx(p50(1), rel=1e-6)
    assert pred[("ttft", "p50")] == pytest.approx(p50(0), rel=1e-9)


def test_each_nelder_mead_run_of_the_fit_has_at_least_60_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit gives each Nelder-Mead run what is left of its evaluations, but never fewer than 60
    (a run needs a few dozen to move at all): with 10 in all, the first run still gets 60."""
    given: list[int] = []
    real = cal.nelder_mead

    def recorded(f, x, step, max_evals):  # type: ignore[no-untyped-def]
        given.append(max_evals)
        return real(f, x, step=step, max_evals=max_evals)

    monkeypatch.setattr(cal, "nelder_mead", recorded)
    runs = _synthetic(Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2))
    cal.fit(runs, held={"compute": "held", "collective_latency_s": "held"}, max_evals=10, identify=False)
    assert given == [60]
    given.clear()
    cal.fit(runs, held={"compute": "held", "collective_latency_s": "held"}, max_evals=1000, identify=False)
    assert given[0] == 1000


def test_a_held_out_prediction_passes_the_callers_allowance_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """held_out refits without run i and predicts it: every prediction it makes (the refit's and the
    held-out run's own, the last) is given the caller's allowance."""
    runs = _synthetic(Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2))
    full = cal.fit(runs, held={"compute": "held", "collective_latency_s": "held"}, max_evals=60, identify=False)
    seen: list[object] = []
    real = cal.predict

    def recorded(obs, params, allowance=None):  # type: ignore[no-untyped-def]
        seen.append((obs.label, allowance))
        return real(obs, params, allowance)

    def allowance(n: int) -> bool:
        return True

    monkeypatch.setattr(cal, "predict", recorded)
    cal.held_out(runs, full, 1, max_evals=60, allowance=allowance)
    assert seen[-1] == (runs[1].label, allowance)
    assert all(a is allowance for _, a in seen)


def test_the_fits_standard_errors_are_computed_with_the_callers_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    """identify=True: the standard errors simulate the runs again (a Jacobian), so they too are
    given the caller's allowance (calibrate's time bound covers every simulation)."""
    seen: list[object] = []
    real = cal.standard_errors

    def recorded(observations, params, names, allowance=None):  # type: ignore[no-untyped-def]
        seen.append(allowance)
        return real(observations, params, names, allowance)

    def allowance(n: int) -> bool:
        return True

    monkeypatch.setattr(cal, "standard_errors", recorded)
    runs = _synthetic(Params(bandwidth=0.4, iteration_overhead_s=4e-3, ttft_overhead_s=2e-2))
    cal.fit(runs, held={"compute": "held", "collective_latency_s": "held"}, max_evals=60, allowance=allowance)
    assert seen == [allowance]


def test_a_parameter_a_factor_2_moves_by_less_than_half_a_percent_is_held() -> None:
    """The sensitivity probe is a factor of 2 either way (0.5 and 2), and 0.5 % its line. One run
    on KV_HEAVY at batch 1, mean TPOT only, 40 % of 1e12 B/s: the step reads 2e8 B of weights and
    131,072 B a token of a ~250-token context, (2e8 + 131,072 x 250) / 4e11 = 5.82e-4 s, so an
    iteration overhead of 0.35 % of that (2.04e-6 s) is moved by ln(1 + 0.0035) = 0.35 % at 2x
    (0.5x: 0.18 %): held. A probe at 3x would move it by ln(1 + 0.007) = 0.70 % and not hold it
    (mutant sensitive_parameters 23)."""
    t_mem = (2e8 + 131_072 * 250) / (0.4 * 1e12)
    assert t_mem == pytest.approx(5.82e-4, rel=1e-3)
    truth = Params(bandwidth=0.4, compute=0.5, iteration_overhead_s=0.0035 * t_mem, collective_latency_s=2e-5,
                   ttft_overhead_s=2e-2)
    runs = [replace(o, targets=o.targets[1:]) for o in _synthetic(truth, concurrencies=(1,))]
    held = cal.sensitive_parameters(runs, truth)
    assert "iteration_overhead_s" in held and "0.5 %" in held["iteration_overhead_s"]
    assert "bandwidth" not in held


def _improving_nelder_mead(calls: list[int], evals_each: int):  # type: ignore[no-untyped-def]
    """A stand-in for nelder_mead whose every run improves the loss by 1 and spends ``evals_each``."""
    def fake(f, x, step=0.7, max_evals=600):  # type: ignore[no-untyped-def]
        calls.append(max_evals)
        return list(x), 100.0 - len(calls), evals_each
    return fake


def test_the_fit_restarts_at_most_six_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Restarts while each lowers the loss and evaluations are left, 6 runs of Nelder-Mead at most
    (fit's `range(6)`): a stand-in that always improves, 1 evaluation a run of 900, is run 6 times."""
    calls: list[int] = []
    monkeypatch.setattr(cal, "nelder_mead", _improving_nelder_mead(calls, 1))
    held = {"compute": "held", "collective_latency_s": "held"}
    f = cal.fit(_synthetic(PRIOR), start=PRIOR, held=held, max_evals=900, identify=False)
    assert len(calls) == 6 and f.evaluations == 6 and f.loss == 94.0


def test_the_fit_stops_when_its_evaluations_are_spent_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first run that spends exactly max_evals (100 of 100) leaves none for a restart, though it
    improved: one run (a `>` for `>=` would start a second)."""
    calls: list[int] = []
    monkeypatch.setattr(cal, "nelder_mead", _improving_nelder_mead(calls, 100))
    held = {"compute": "held", "collective_latency_s": "held"}
    f = cal.fit(_synthetic(PRIOR), start=PRIOR, held=held, max_evals=100, identify=False)
    assert calls == [100] and f.evaluations == 100 and f.loss == 99.0


def test_a_non_positive_diagonal_of_the_inverse_is_no_standard_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inverse of a positive-definite J^T J has a positive diagonal; one computed from a nearly
    singular J^T J (pivots above _solve_inverse's 1e-300, rounding below) may not. A diagonal of 0
    or below says nothing about the parameter: an infinite standard error (not identified), never
    0 (sqrt(0): "identified exactly") nor a math domain error (sqrt(-1e-18)). The third, 1/3, is
    the bandwidth-only run set's above: 0.05 x sqrt(1/3)."""
    monkeypatch.setattr(cal, "_solve_inverse", lambda m: [[0.0, 0.0, 0.0], [0.0, -1e-18, 0.0], [0.0, 0.0, 1 / 3]])
    p = Params(bandwidth=0.5, compute=0.5, iteration_overhead_s=1e-3, collective_latency_s=0.0, ttft_overhead_s=1e-3)
    runs = [Observation(KV_HEAVY, 200, 100, (Target("tpot", "mean", 1.0),), concurrency=b) for b in (1, 4, 16)]
    se = cal.standard_errors(runs, p, ["bandwidth", "iteration_overhead_s", "ttft_overhead_s"])
    assert se == {"bandwidth": math.inf, "iteration_overhead_s": math.inf,
                  "ttft_overhead_s": pytest.approx(0.05 / math.sqrt(3), rel=1e-12)}
