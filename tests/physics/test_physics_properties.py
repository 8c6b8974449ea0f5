"""Hypothesis properties of the physics core.

* more bandwidth, compute or devices never slows decode or prefill (nor
  raises TTFT / E2E, nor the per-device memory);
* more output tokens never shortens E2E;
* unit-free scaling: multiplying every rate (bandwidth, compute) by s divides
  every time by s, whatever the unit the numbers were written in;
* the closed-form reply sum equals the brute-force sum of steps;
* MoE weights touched lie between active and total and grow with tokens.

Collective overhead is drawn from [0, 0.5], the range the core accepts: with
``step(N) = step(1) / (N (1 - c))`` for N > 1, going from 1 to 2 devices
speeds a step iff c < 1/2 (equal at 1/2).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.physics import (
    Accelerator,
    Deployment,
    Edge,
    Efficiency,
    ModelShape,
    Workload,
    analyse,
    kv_bytes_for_context,
    moe_params_touched,
)

TIME_FIELDS = (
    "decode_memory_s", "decode_compute_s", "decode_step_s", "draft_step_s", "decode_pass_s", "decode_s",
    "tpot_s", "prefill_compute_s", "prefill_weight_read_s", "draft_prefill_s", "prefill_s", "proxy_delay_s",
)
EPS = 1e-9


@st.composite
def models(draw: st.DrawFn) -> ModelShape:
    heads = draw(st.sampled_from([8, 16, 32, 64, 128]))
    kv_heads = draw(st.sampled_from([h for h in (1, 2, 4, 8, 16, 32, 64, 128) if heads % h == 0]))
    head_dim = draw(st.sampled_from([64, 128, 256]))
    layers = draw(st.integers(1, 128))
    total = draw(st.floats(1e8, 1e12))
    kwargs: dict = {}
    if draw(st.booleans()):
        kwargs.update(sliding_window=draw(st.integers(16, 8192)), sliding_window_layers=draw(st.integers(0, layers)))
    if draw(st.booleans()):
        experts = draw(st.integers(2, 256))
        k = draw(st.integers(1, min(8, experts)))
        active = total * draw(st.floats(0.02, 1.0))
        kwargs.update(experts=experts, experts_per_token=k, active_params=active)
    if draw(st.booleans()):
        kwargs.update(attention="mla", kv_lora_rank=draw(st.sampled_from([256, 512])), qk_rope_head_dim=64)
    return ModelShape(total_params=total, layers=layers, hidden_size=heads * head_dim, attention_heads=heads,
                      kv_heads=kv_heads, head_dim=head_dim, **kwargs)


accelerators = st.builds(
    lambda mem, bw, f: Accelerator(memory_bytes=mem, bandwidth_bytes_per_s=bw, compute_flop_per_s={"bf16": f, "fp8": 2 * f}),
    st.floats(8e9, 300e9), st.floats(1e11, 1e13), st.floats(1e13, 5e15),
)


@st.composite
def deployments(draw: st.DrawFn) -> Deployment:
    model = draw(models())
    accepted = draw(st.one_of(st.just(1.0), st.floats(1.0, 4.0)))
    draft = None
    if accepted > 1 and draw(st.booleans()):
        draft = ModelShape(total_params=draw(st.floats(1e8, 3e9)), layers=16, hidden_size=2048, attention_heads=16,
                           kv_heads=8)
    return Deployment(
        model=model,
        accelerator=draw(accelerators),
        devices=draw(st.integers(1, 16)),
        weight_bytes_per_param=draw(st.sampled_from([0.5, 1.0, 2.0])),
        kv_bytes_per_elem=draw(st.sampled_from([1.0, 2.0])),
        compute_precision=draw(st.sampled_from(["bf16", "fp8"])),
        spec_accepted_tokens_per_pass=accepted,
        draft=draft,
        collective_overhead=draw(st.floats(0.0, 0.5)),
        memory_overhead_bytes=draw(st.floats(0, 4e9)),
    )


@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    prompt = draw(st.integers(0, 32000))
    return Workload(
        prompt_tokens=prompt,
        output_tokens=draw(st.integers(1, 4000)),
        concurrency=draw(st.integers(1, 256)),
        cached_prompt_tokens=draw(st.integers(0, prompt)),
    )


efficiencies = st.builds(Efficiency, st.floats(0.05, 1.0), st.floats(0.05, 1.0))
edges = st.one_of(st.none(), st.builds(Edge, st.floats(0, 0.2), st.integers(0, 16)))


def _not_slower(fast, slow) -> None:
    for name in ("decode_s", "prefill_s", "ttft_s", "e2e_s", "tpot_s"):
        assert getattr(fast, name) <= getattr(slow, name) * (1 + EPS), name
    assert fast.pace_token_per_s >= slow.pace_token_per_s * (1 - EPS)


@settings(max_examples=150, deadline=None)
@given(deployments(), workloads(), efficiencies, edges, st.floats(1.0, 10.0))
def test_more_bandwidth_never_slower(dep: Deployment, wl: Workload, eff: Efficiency, edge: Edge | None,
                                     factor: float) -> None:
    acc = dep.accelerator
    faster = replace(dep, accelerator=replace(acc, bandwidth_bytes_per_s=acc.bandwidth_bytes_per_s * factor))
    _not_slower(analyse(faster, wl, eff, 0.05, edge), analyse(dep, wl, eff, 0.05, edge))


@settings(max_examples=150, deadline=None)
@given(deployments(), workloads(), efficiencies, edges, st.floats(1.0, 10.0))
def test_more_compute_never_slower(dep: Deployment, wl: Workload, eff: Efficiency, edge: Edge | None,
                                   factor: float) -> None:
    acc = dep.accelerator
    peaks = {k: v * factor for k, v in acc.compute_flop_per_s.items()}
    faster = replace(dep, accelerator=replace(acc, compute_flop_per_s=peaks))
    _not_slower(analyse(faster, wl, eff, 0.0, edge), analyse(dep, wl, eff, 0.0, edge))


@settings(max_examples=150, deadline=None)
@given(deployments(), workloads(), efficiencies, edges, st.integers(1, 48))
def test_more_devices_never_slower(dep: Deployment, wl: Workload, eff: Efficiency, edge: Edge | None,
                                   extra: int) -> None:
    if dep.model.attention == "mla":
        # MLA's latent cache is whole on every tensor rank (shared/reference/specs.md, MLA (a)): tensor
        # parallelism does not shorten its read, and a collective overhead charged as a share of the
        # whole pass grows with it, so more tensor ranks can be slower (why DeepSeek is served with
        # attention data parallelism); without that overhead they never are
        dep = replace(dep, collective_overhead=0.0)
    base = analyse(dep, wl, eff, 0.0, edge)
    more = analyse(replace(dep, devices=dep.devices + extra), wl, eff, 0.0, edge)
    _not_slower(more, base)
    assert more.memory_required_bytes_per_device <= base.memory_required_bytes_per_device * (1 + EPS)


@settings(max_examples=100, deadline=None)
@given(deployments(), efficiencies, st.floats(0.0, 1.0))
def test_one_to_two_devices_never_slower(dep: Deployment, eff: Efficiency, c: float) -> None:
    wl = Workload(prompt_tokens=1000, output_tokens=100)
    # MLA: the latent is read whole on each tensor rank, so a pass-share overhead can outweigh the
    # halved weight read (test_more_devices_never_slower says why): no overhead for it here
    one = replace(dep, devices=1, collective_overhead=0.0 if dep.model.attention == "mla" else c * 0.5)
    two = replace(one, devices=2)
    _not_slower(analyse(two, wl, eff), analyse(one, wl, eff))


@settings(max_examples=150, deadline=None)
@given(deployments(), workloads(), efficiencies, edges, st.integers(1, 4000))
def test_more_output_tokens_never_shortens_e2e(dep: Deployment, wl: Workload, eff: Efficiency,
                                               edge: Edge | None, extra: int) -> None:
    longer = replace(wl, output_tokens=wl.output_tokens + extra)
    a, b = analyse(dep, wl, eff, 0.1, edge), analyse(dep, longer, eff, 0.1, edge)
    assert b.e2e_s >= a.e2e_s * (1 - EPS)
    assert b.decode_s >= a.decode_s * (1 - EPS)


@settings(max_examples=100, deadline=None)
@given(deployments(), workloads(), st.integers(1, 255))
def test_fewer_sequences_never_slows_a_user(dep: Deployment, wl: Workload, fewer: int) -> None:
    if fewer >= wl.concurrency:
        return
    a = analyse(dep, wl)
    b = analyse(dep, replace(wl, concurrency=fewer))
    assert b.pace_token_per_s >= a.pace_token_per_s * (1 - EPS)
    assert b.memory_required_bytes_per_device <= a.memory_required_bytes_per_device * (1 + EPS)


@settings(max_examples=150, deadline=None)
@given(deployments(), workloads(), efficiencies, edges, st.floats(1e-3, 1e3))
def test_scaling_all_rates_scales_all_times(dep: Deployment, wl: Workload, eff: Efficiency,
                                            edge: Edge | None, s: float) -> None:
    acc = dep.accelerator
    scaled = replace(dep, accelerator=replace(
        acc,
        bandwidth_bytes_per_s=acc.bandwidth_bytes_per_s * s,
        compute_flop_per_s={k: v * s for k, v in acc.compute_flop_per_s.items()},
    ))
    edge_scaled = None if edge is None else Edge(edge.connection_setup_s / s, edge.proxy_flush_tokens)
    a = analyse(dep, wl, eff, 0.02, edge)
    b = analyse(scaled, wl, eff, 0.02 / s, edge_scaled)
    for name in TIME_FIELDS + ("ttft_s", "e2e_s"):
        assert abs(getattr(b, name) * s - getattr(a, name)) <= 1e-9 * max(getattr(a, name), 1e-30), name
    assert abs(b.pace_token_per_s - a.pace_token_per_s * s) <= 1e-9 * a.pace_token_per_s * s
    assert a.decode_binding == b.decode_binding or abs(a.decode_memory_s - a.decode_compute_s) <= 1e-9 * a.decode_memory_s
    # bytes do not depend on rates
    assert a.memory_required_bytes_per_device == b.memory_required_bytes_per_device


@settings(max_examples=100, deadline=None)
@given(models(), accelerators, st.integers(0, 3000), st.integers(1, 120), st.integers(1, 128),
       st.integers(1, 8), st.floats(0, 0.5))
def test_reply_sum_equals_brute_force(model: ModelShape, acc: Accelerator, prompt: int, out: int, batch: int,
                                      devices: int, c: float) -> None:
    dep = Deployment(model=model, accelerator=acc, devices=devices, collective_overhead=c)
    a = analyse(dep, Workload(prompt_tokens=prompt, output_tokens=out, concurrency=batch))
    w = moe_params_touched(model, batch) * 2.0
    t_cmp = batch * 2 * model.active_params / (devices * acc.compute_flop_per_s["bf16"])
    factor = 1 / (1 - c) if devices > 1 else 1.0
    brute = 0.0
    copies = devices if model.attention == "mla" else 1  # MLA's latent: whole on every tensor rank (specs.md)
    for j in range(out):
        t_mem = (w / devices + batch * kv_bytes_for_context(model, 2.0, prompt + j) * copies / devices) \
            / acc.bandwidth_bytes_per_s
        brute += max(t_mem, t_cmp) * factor
    assert abs(a.decode_s - brute) <= 1e-9 * brute


@settings(max_examples=200, deadline=None)
@given(models(), st.integers(1, 10_000), st.integers(1, 10_000))
def test_moe_touched_bounds_and_monotone(model: ModelShape, t1: int, t2: int) -> None:
    lo, hi = sorted((t1, t2))
    a, b = moe_params_touched(model, lo), moe_params_touched(model, hi)
    assert model.active_params * (1 - EPS) <= a <= b * (1 + EPS)
    assert b <= model.total_params * (1 + EPS)
