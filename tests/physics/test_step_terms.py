"""One step-time implementation (physics/step.py): the flat analysis and the serving
simulator read one StepInputs and call one function, so they agree on the step cost of
any batch; and each term of the step, worked by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.physics import Accelerator, Deployment, Efficiency, ModelShape, Workload, analyse
from budgetlint.physics.step import StepInputs, iteration, steps_sum, sum_components
from budgetlint.physics.step_cost import RooflineStepCost

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
LLAMA70 = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
LLAMA8 = ModelShape(total_params=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128)
WINDOWED = ModelShape(total_params=9e9, layers=42, hidden_size=3584, attention_heads=16, kv_heads=8,
                      head_dim=256, sliding_window=4096, sliding_window_layers=21)
MOE = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                 kv_heads=8, head_dim=128, experts=8, experts_per_token=2, vocab_size=32000)
DRAFT = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)


# ------------------------------------------------------------ the two callers agree
deployments = st.builds(
    lambda model, devices, overhead, spec, engine, it, lat, overlap, per_op: Deployment(
        model=model, accelerator=H100, devices=devices, collective_overhead=overhead,
        spec_accepted_tokens_per_pass=spec, draft=DRAFT if spec > 1 else None,
        engine_terms=engine, iteration_overhead_s=it, collective_latency_s=lat, overlap=overlap,
        per_operator=per_op),
    st.sampled_from([LLAMA8, WINDOWED, MOE]), st.sampled_from([1, 2, 8]),
    st.sampled_from([0.0, 0.1, 0.3]), st.sampled_from([1.0, 2.0, 3.0]), st.booleans(),
    st.sampled_from([0.0, 2e-3]), st.sampled_from([0.0, 2e-5]), st.sampled_from([1.0, 0.5, 0.0]),
    st.booleans())


@settings(max_examples=200, deadline=None)
@given(dep=deployments, bw=st.floats(0.3, 1.0), cmp_=st.floats(0.1, 1.0),
       batch=st.integers(1, 512), context=st.integers(0, 20000))
def test_simulator_and_flat_analysis_agree_on_any_batch(dep: Deployment, bw: float, cmp_: float,
                                                        batch: int, context: int) -> None:
    """A one-token reply's decode pass in the flat analysis is charged at context = prompt;
    the simulator's iteration of the same batch at the same summed context (with the engine's
    terms: beside the prefill the flat estimate shares it, (B - 1) x a / 1 whole prompts, an
    integer for a whole acceptance a), and its closed-form run of one decode-only iteration,
    are the same number to 1e-12."""
    eff = Efficiency(bw, cmp_)
    flat = analyse(dep, Workload(prompt_tokens=context, output_tokens=1, concurrency=batch), eff)
    sim = RooflineStepCost(dep, eff)
    chunks = [(max(context, 1), 0)] * round((batch - 1) * dep.spec_accepted_tokens_per_pass) \
        if dep.engine_terms else []
    it = sim.iteration_s(batch, batch * context, chunks)
    assert flat.decode_pass_s == pytest.approx(it, rel=1e-12)
    alone = sim.iteration_s(batch, batch * context, [])
    comps, _ = sim.decode_terms(batch, batch * context)
    assert sum_components(comps, batch * context, batch, 1) == pytest.approx(alone, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(dep=deployments, batch=st.integers(1, 128), start=st.integers(0, 9000), count=st.integers(1, 400))
def test_the_reply_sum_is_the_sum_of_the_steps(dep: Deployment, batch: int, start: int, count: int) -> None:
    """steps_sum (the flat reply sum and the simulator's jumps) against a plain loop of iterations,
    across window breakpoints and binding changes."""
    inp = StepInputs.of(dep, Efficiency(0.7, 0.5))
    brute = sum(iteration(inp, batch, batch * (start + j)).step_s for j in range(count))
    assert steps_sum(inp, batch, start, count) == pytest.approx(brute, rel=1e-9)


def test_the_simulator_holds_the_flat_analysis_inputs() -> None:
    """The simulator's cost is built on StepInputs (one object), not a copy of the formulas."""
    cost = RooflineStepCost(Deployment(model=LLAMA8, accelerator=H100), Efficiency(0.7, 0.5))
    assert isinstance(cost.inputs, StepInputs)


# ------------------------------------------------------------ each term by hand
def test_decode_terms_by_hand_70b_bf16_one_h100() -> None:
    """Llama-70B (no vocabulary given: every weight read), bf16, one H100 at 100 %, B = 8 at
    L = 1,000 tokens, the engine's terms on:
    weights   140 GB / 3.35 TB/s                                   = 41.791 ms
    KV        8 x 1,000 x (2 x 80 x 8 x 128 x 2 B = 327,680 B) / 3.35 TB/s = 0.78252 ms
    linear    8 x 2 x 70e9 / 989e12                                = 1.13246 ms
    attention 8 x 1,000 x 4 x 64 x 128 x 80 FLOP / 989e12          = 0.021205 ms"""
    dep = Deployment(model=LLAMA70, accelerator=H100, engine_terms=True)
    t = iteration(StepInputs.of(dep), 8, 8 * 1000.0)
    assert t.weights_s == pytest.approx(140e9 / 3.35e12, rel=1e-12)
    assert t.kv_s == pytest.approx(8 * 1000 * 327680 / 3.35e12, rel=1e-12)
    assert t.linear_s == pytest.approx(8 * 2 * 70e9 / 989e12, rel=1e-12)
    assert t.attention_s == pytest.approx(8 * 1000 * 4 * 64 * 128 * 80 / 989e12, rel=1e-12)
    assert t.attention_s == pytest.approx(0.021205e-3, rel=1e-4)
    assert t.step_s == pytest.approx(41.791e-3 + 0.78252e-3, rel=1e-4)  # bandwidth-bound
    assert t.binding == "bandwidth"
    # the bound leaves decode attention out (physics.md's t_cmp = B x 2 x P / (N x F))
    assert iteration(StepInputs.of(Deployment(model=LLAMA70, accelerator=H100)), 8, 8000.0).attention_s == 0.0


def test_overheads_and_collective_by_hand() -> None:
    """TP 4, c = 0.1, 2 ms per iteration, 20 us per layer x 80 layers = 1.6 ms: a B = 1 step
    at L = 0 is 140 GB / 4 / 3.35 TB/s = 10.448 ms, x 1/0.9 = 11.609 ms, + 3.6 ms."""
    dep = Deployment(model=LLAMA70, accelerator=H100, devices=4, collective_overhead=0.1,
                     iteration_overhead_s=2e-3, collective_latency_s=20e-6)
    t = iteration(StepInputs.of(dep), 1, 0.0)
    base = 140e9 / 4 / 3.35e12
    assert t.collective_s == pytest.approx(base * (1 / 0.9 - 1), rel=1e-12)
    assert t.overhead_s == pytest.approx(2e-3 + 80 * 20e-6, rel=1e-12)
    assert t.step_s == pytest.approx(11.609e-3 + 3.6e-3, rel=1e-4)


def test_prefill_shares_the_decode_pass_in_the_flat_estimate() -> None:
    """Llama-8B bf16 on one H100 at 100 %, B = 64, prompt 2,000 (no cache), reply 250 tokens,
    the engine's terms on: each pass carries (64 - 1) x 2,000 / 250 = 504 prompt tokens of the
    other sequences' prefill. Linear: (64 + 504) x 2 x 8e9 / 989e12 = 9.189 ms. Attention: the
    prefill's 4 x 32 x 128 x 32 layers x (2,000 x 2,001 / 2) FLOP x 63/250, plus the decodes'
    64 x L x 4 x 32 x 128 x 32 at the mean context L = 2,000 + 249/2 = 2,124.5, over 989e12."""
    dep = Deployment(model=LLAMA8, accelerator=H100, engine_terms=True)
    a = analyse(dep, Workload(prompt_tokens=2000, output_tokens=250, concurrency=64))
    terms = {name: s for name, _, s in a.decode_terms}
    assert terms["linear_s"] == pytest.approx((64 + 504) * 2 * 8e9 / 989e12, rel=1e-12)
    per_pos = 4 * 32 * 128 * 32
    prefill_attn = per_pos * (2000 * 2001 / 2) * 63 / 250
    decode_attn = 64 * 2124.5 * per_pos
    assert terms["attention_s"] == pytest.approx((prefill_attn + decode_attn) / 989e12, rel=1e-12)
    # without the engine's terms (the bound), the decode pass carries no prefill and no attention
    bound = analyse(Deployment(model=LLAMA8, accelerator=H100),
                    Workload(prompt_tokens=2000, output_tokens=250, concurrency=64))
    assert {n: s for n, _, s in bound.decode_terms}["linear_s"] == pytest.approx(64 * 2 * 8e9 / 989e12, rel=1e-12)
    assert a.decode_compute_s > 5 * bound.decode_compute_s


def test_one_user_carries_no_other_prefill() -> None:
    dep = Deployment(model=LLAMA8, accelerator=H100, engine_terms=True)
    a = analyse(dep, Workload(prompt_tokens=2000, output_tokens=250, concurrency=1))
    assert {n: s for n, _, s in a.decode_terms}["linear_s"] == pytest.approx(2 * 8e9 / 989e12, rel=1e-12)


def test_every_term_has_a_label_and_explain_prints_them() -> None:
    from budgetlint.run.explain import decode_term_lines

    dep = Deployment(model=LLAMA70, accelerator=H100, devices=2, collective_overhead=0.1, engine_terms=True,
                     iteration_overhead_s=1e-3)
    a = analyse(dep, Workload(prompt_tokens=100, output_tokens=10, concurrency=4))
    printed = "\n".join(decode_term_lines(a))
    shown = {name for name, _, seconds in a.decode_terms if seconds > 0}
    assert {"weights_s", "kv_s", "linear_s", "attention_s", "collective_s", "overhead_s"} <= shown
    for name, label, seconds in a.decode_terms:
        assert (label in printed) == (seconds > 0)
    assert math.isclose(sum(s for _, _, s in a.decode_terms) - min(a.decode_memory_s, a.decode_compute_s),
                        a.decode_pass_s, rel_tol=1e-12)


def test_overlap_by_hand() -> None:
    """Llama-70B bf16 on one H100 at 100 %, B = 512 at L = 0 (no vocabulary: all weights read):
    memory 140 GB / 3.35 TB/s = 41.791 ms, compute 512 x 2 x 70e9 / 989e12 = 72.477 ms.
    overlap 1 (the roofline): 72.477 ms; 0 (they add): 114.268 ms; 0.5: 72.477 + 20.896 = 93.373 ms."""
    for overlap, want in ((1.0, 72.477e-3), (0.0, 114.268e-3), (0.5, 93.373e-3)):
        dep = Deployment(model=LLAMA70, accelerator=H100, overlap=overlap)
        assert iteration(StepInputs.of(dep), 512, 0.0).step_s == pytest.approx(want, rel=1e-4)
    with pytest.raises(ValueError, match="overlap"):
        Deployment(model=LLAMA70, accelerator=H100, overlap=1.5)


def test_per_operator_roofline_by_hand() -> None:
    """Llama-70B bf16 on one H100 at 100 %, B = 512 at 1,000 tokens each (X = 512,000), no
    engine terms (no attention FLOPs): weights 140 GB / 3.35 TB/s = 41.791 ms; KV 512,000 x
    (80 layers x 2 x 8 heads x 128 x 2 B = 327,680 B) = 167.772 GB / 3.35 TB/s = 50.081 ms;
    linear 512 x 2 x 70e9 / 989e12 = 72.477 ms. Per step (the bound): max(41.791 + 50.081,
    72.477) = 91.872 ms. Per operator: max(41.791, 72.477) + max(50.081, 0) = 122.558 ms."""
    for per_op, want in ((False, 91.872e-3), (True, 122.558e-3)):
        dep = Deployment(model=LLAMA70, accelerator=H100, per_operator=per_op)
        terms = iteration(StepInputs.of(dep), 512, 512_000.0)
        assert terms.step_s == pytest.approx(want, rel=1e-4)
        comps, _ = RooflineStepCost(dep, Efficiency(1.0, 1.0)).decode_terms(512, 512_000.0)
        assert sum_components(comps, 512_000.0, 512, 1) == pytest.approx(want, rel=1e-4)


def test_the_realistic_estimate_is_per_operator_and_the_bound_is_not(tmp_path) -> None:
    """The bound keeps physics.md's per-step max (a lower bound); the realistic estimate sums
    the operators (Deployment.per_operator), for a budget read by the pipeline."""
    from budgetlint.evaluate.physics_inputs import bound_deployment, physics_inputs, realistic_deployment
    from budgetlint.options import Options
    from budgetlint.run.check import evaluate_run

    (tmp_path / "b.yaml").write_text("""version: 1
kind: budgets
budgets:
  - name: b
    owner: "@x"
    workload: {prompt_tokens: 1000, output_tokens: 100}
    promise: {ttft: 1 s}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm}
""")
    options = Options(simulate=False)
    (ev,) = evaluate_run([str(tmp_path / "b.yaml")], options, keep=True).evaluations
    dep = physics_inputs(ev.budget)[0]
    assert realistic_deployment(dep, ev.budget, options).per_operator is True
    assert bound_deployment(dep, ev.budget).per_operator is False


# ------------------------------------------------ the simulator's fast paths (issue 28)
wide_deployments = st.builds(
    lambda dep, d, p, e, g: Deployment(**{**dep.__dict__, "data_parallel": d, "pipeline_parallel": p,
                                          "expert_parallel": e if dep.model is MOE and (dep.devices * d) % e == 0 else 1,
                                          "expert_imbalance": g if dep.model is MOE else 1.0}),
    deployments, st.sampled_from([1, 2]), st.sampled_from([1, 4]), st.sampled_from([1, 4]),
    st.sampled_from([1.0, 1.5]))


@settings(max_examples=200, deadline=None)
@given(dep=wide_deployments, batch=st.integers(0, 300), context=st.integers(0, 300_000),
       chunks=st.lists(st.tuples(st.integers(1, 8192), st.integers(0, 6000)), max_size=4))
def test_iteration_step_s_is_the_terms_own_total(dep: Deployment, batch: int, context: int,
                                                 chunks: list[tuple[int, int]]) -> None:
    """``iteration_step_s`` (the simulator's per-iteration float, built without the terms) is
    ``iteration(...).step_s`` exactly, not to a tolerance: the event engine's requests are the
    same to the last bit as they were when it built the terms (a changed float moves a tie)."""
    from budgetlint.physics.step import iteration_step_s, prefill_load

    inp = StepInputs.of(dep, Efficiency(0.7, 0.5))
    want = iteration(inp, batch, float(context), prefill_load(inp, chunks)).step_s
    assert iteration_step_s(inp, batch, float(context), chunks) == want


@settings(max_examples=100, deadline=None)
@given(dep=deployments, calls=st.lists(st.tuples(st.integers(1, 64), st.integers(0, 400_000)), min_size=1,
                                       max_size=30))
def test_kept_decode_terms_are_the_components_at_that_context(dep: Deployment,
                                                              calls: list[tuple[int, int]]) -> None:
    """RooflineStepCost keeps decode_terms per batch (and side of each window): every call,
    whatever came before it, returns decode_components at its own context (the 4,096-token
    window of WINDOWED is crossed both ways)."""
    from budgetlint.physics.step import decode_components

    sim = RooflineStepCost(dep, Efficiency(0.7, 0.5))
    for batch, context in calls:
        assert sim.decode_terms(batch, float(context)) == decode_components(sim.inputs, batch, float(context))
