"""Words for roofline verdicts: which promise, which number, by how much, why."""

from __future__ import annotations

from typing import Any

from budgetlint.model.units import format_quantity


def _t(x: float) -> str:
    return format_quantity(x, "time")


def _b(x: float) -> str:
    return format_quantity(x, "information")


def deployment_words(ev: Any) -> str:
    dep = ev.budget.deployment
    return (f"{dep.model.name} ({dep.weight_precision} weights) on {dep.devices} x {dep.hardware.name}")


def _decode_why(a: Any, ev: Any) -> str:
    dep = ev.budget.deployment
    n = dep.devices
    if a.decode_binding == "compute":
        return (f"compute-bound: {ev.workload.concurrency} sequences x 2 x active parameters per step "
                f"at {n} x {format_quantity(a.compute_peak_flop_per_s, 'compute_rate')} {a.compute_precision_key}")
    kv = a.kv_bytes_per_token * a.decode_context_mean_tokens * ev.workload.concurrency
    return (f"bandwidth-bound: each step reads {_b(a.weight_bytes_touched_per_step)} of weights + "
            f"{_b(kv)} of KV cache over {n} x {format_quantity(ev.budget.deployment.hardware.bandwidth_bytes_per_s, 'bandwidth')}")


def _prefill_why(a: Any, ev: Any) -> str:
    n = ev.budget.deployment.devices
    if a.prefill_binding == "compute":
        return (f"compute-bound: {a.prefill_flop:.3g} FLOP for {a.prefill_tokens:g} uncached tokens "
                f"at {n} x {format_quantity(a.compute_peak_flop_per_s, 'compute_rate')} {a.compute_precision_key}")
    return f"bandwidth-bound: one read of {_b(a.weight_bytes)} of weights over {n} devices"


def describe_miss(ev: Any, v: Any, *, bound: bool) -> str:
    b, bd, rl = ev.budget, ev.bound, ev.realistic
    name = b.name
    eff = ev.efficiency
    if v.promise == "tpot":
        want, got_bound, got_real = 1 / v.budget_value, 1 / v.bound_value, 1 / v.realistic_value
        if bound:
            return (f"budget {name!r}: pace needs {want:.3g} token/s; the roofline bound is {got_bound:.3g} token/s "
                    f"for {deployment_words(ev)} ({_decode_why(bd, ev)}): {want / got_bound:.2g}x short")
        resource = "bandwidth" if bd.decode_binding == "bandwidth" else "compute"
        assumed = eff.bandwidth if resource == "bandwidth" else eff.compute
        return (f"budget {name!r}: pace {want:.3g} token/s needs {v.required_efficiency:.0%} of peak {resource} "
                f"(bound {got_bound:.3g} token/s; at the assumed {assumed:.0%}: {got_real:.3g} token/s)")
    if v.promise == "ttft":
        other = bd.ttft_s - bd.prefill_s
        parts = f" after {_t(other)} of queue/edge allowances" if other > 0 else ""
        if bound:
            room = v.budget_value - other
            return (f"budget {name!r}: ttft {_t(v.budget_value)} leaves {_t(max(room, 0))} for prefill{parts}; "
                    f"the roofline bound is {_t(bd.prefill_s)} of prefill ({_prefill_why(bd, ev)}): "
                    f"ttft at least {_t(bd.ttft_s)}, {bd.ttft_s / v.budget_value:.2g}x the promise")
        req = f"{v.required_efficiency:.0%}" if v.required_efficiency else "more than 100%"
        return (f"budget {name!r}: ttft {_t(v.budget_value)} needs {req} of peak compute for prefill "
                f"(bound {_t(bd.ttft_s)}; at the assumed {eff.compute:.0%}: {_t(rl.ttft_s)})")
    # e2e
    if bound:
        return (f"budget {name!r}: end-to-end {_t(v.budget_value)}; the roofline bound is {_t(bd.e2e_s)} "
                f"(ttft {_t(bd.ttft_s)} + {ev.workload.output_tokens:g} tokens at {bd.pace_token_per_s:.3g} token/s) "
                f"for {deployment_words(ev)}: {bd.e2e_s / v.budget_value:.2g}x the promise")
    req = f"{v.required_efficiency:.0%}" if v.required_efficiency else "more than 100%"
    return (f"budget {name!r}: end-to-end {_t(v.budget_value)} needs {req} of the roofline "
            f"(bound {_t(bd.e2e_s)}; at the assumed efficiency: {_t(rl.e2e_s)})")


def describe_met(ev: Any, v: Any) -> str:
    name = ev.budget.name
    if v.promise == "tpot":
        return (f"budget {name!r}: pace {1 / v.budget_value:.3g} token/s is met: estimate "
                f"{1 / v.realistic_value:.3g} token/s at the assumed efficiency (bound {1 / v.bound_value:.3g} token/s), "
                f"headroom {v.realistic_value and v.budget_value / v.realistic_value:.2g}x")
    label = "ttft" if v.promise == "ttft" else "end-to-end"
    return (f"budget {name!r}: {label} {_t(v.budget_value)} is met: estimate {_t(v.realistic_value)} "
            f"at the assumed efficiency (bound {_t(v.bound_value)}), headroom {v.budget_value / v.realistic_value:.2g}x")


def describe_memory(ev: Any) -> str:
    b = ev.budget
    a = ev.bound if ev.verdicts["memory"].verdict == "cannot-be-met" else ev.realistic
    parts = [f"weights {_b(a.memory_weight_bytes_per_device)}", f"KV cache {_b(a.memory_kv_bytes_per_device)}"]
    if a.memory_draft_bytes_per_device:
        parts.append(f"draft {_b(a.memory_draft_bytes_per_device)}")
    if a.memory_overhead_bytes_per_device:
        parts.append(f"overhead {_b(a.memory_overhead_bytes_per_device)}")
    wl = ev.workload
    ctx = f"{wl.concurrency} sequences x {wl.prompt_tokens + wl.output_tokens:g} tokens"
    hw = b.deployment.hardware
    if ev.verdicts["memory"].verdict == "cannot-be-met":
        return (f"budget {b.name!r}: does not fit: needs {_b(a.memory_required_bytes_per_device)} per device "
                f"({' + '.join(parts)}; {ctx}); the {hw.name} has {_b(hw.memory_bytes)}")
    return (f"budget {b.name!r}: fits only above the usable fraction: needs {_b(a.memory_required_bytes_per_device)} "
            f"per device ({' + '.join(parts)}; {ctx}) of {_b(a.memory_available_bytes_per_device)} usable "
            f"on the {hw.name}")


def describe_segment(ev: Any, seg: Any, v: Any, *, bound: bool) -> str:
    """A prefill allowance or decode pace a segment's owner was given, against the physics."""
    b, eff = ev.budget, ev.efficiency
    owner = f" (owner {seg.owner})" if seg.owner else ""
    if seg.kind == "prefill":
        if bound:
            return (f"budget {b.name!r}: prefill segment {seg.name!r}{owner} allows {_t(v.budget_value)}; "
                    f"the roofline bound is {_t(v.bound_value)} ({_prefill_why(ev.bound, ev)}): "
                    f"{v.bound_value / v.budget_value:.2g}x the allowance")
        return (f"budget {b.name!r}: prefill segment {seg.name!r}{owner} allows {_t(v.budget_value)}, which needs "
                f"{v.required_efficiency:.0%} of peak compute (bound {_t(v.bound_value)}; at the assumed "
                f"{eff.compute:.0%}: {_t(v.realistic_value)})")
    want, got_bound, got_real = 1 / v.budget_value, 1 / v.bound_value, 1 / v.realistic_value
    if bound:
        return (f"budget {b.name!r}: decode segment {seg.name!r}{owner} must deliver {want:.3g} token/s; the "
                f"roofline bound is {got_bound:.3g} token/s ({_decode_why(ev.bound, ev)}): {want / got_bound:.2g}x short")
    resource = "bandwidth" if ev.bound.decode_binding == "bandwidth" else "compute"
    assumed = eff.bandwidth if resource == "bandwidth" else eff.compute
    return (f"budget {b.name!r}: decode segment {seg.name!r}{owner} at {want:.3g} token/s needs "
            f"{v.required_efficiency:.0%} of peak {resource} (bound {got_bound:.3g} token/s; at the assumed "
            f"{assumed:.0%}: {got_real:.3g} token/s)")
