"""Words for roofline verdicts: which promise, which number, by how much, why."""

from __future__ import annotations

import math
from typing import Any

from budgetlint.model.units import format_headroom, format_percent as _pct, format_quantity
from budgetlint.text import numbers


def _time(x: float) -> str:
    return numbers.quantity(x, "s")


def _bytes(x: float) -> str:
    return numbers.quantity(x, "B")


def _devices(ev: Any) -> int:
    """Devices of one replica: tensor x data x pipeline (docs/topologies.md)."""
    d = getattr(ev, "deployment", None)
    return d.total_devices if d is not None else ev.budget.deployment.devices


def deployment_words(ev: Any) -> str:
    dep = ev.budget.deployment
    return (f"{dep.model.name} ({dep.weight_precision} weights) on {_devices(ev)} x {dep.hardware.name}")


def _decode_why(a: Any, ev: Any) -> str:
    n = _devices(ev)
    if a.decode_binding == "compute":
        return (f"compute-bound: {numbers.count(ev.workload.concurrency, 'sequence')} x 2 x active parameters per step "
                f"at {n} x {format_quantity(a.compute_peak_flop_per_s, 'compute_rate')} {a.compute_precision_key}")
    kv = a.kv_bytes_per_token * a.decode_context_mean_tokens * ev.workload.concurrency
    return (f"bandwidth-bound: each step reads {_bytes(a.weight_bytes_touched_per_step)} of weights + "
            f"{_bytes(kv)} of KV cache over {n} x {format_quantity(ev.budget.deployment.hardware.bandwidth_bytes_per_s, 'bandwidth')}")


def _prefill_why(a: Any, ev: Any) -> str:
    n = _devices(ev)
    if a.prefill_binding == "compute":
        return (f"compute-bound: {numbers.quantity(a.prefill_flop, 'FLOP')} for {numbers.stated(a.prefill_tokens)} uncached tokens "
                f"at {n} x {format_quantity(a.compute_peak_flop_per_s, 'compute_rate')} {a.compute_precision_key}")
    read = a.prefill_weight_read_s * a.bandwidth_effective_bytes_per_s * n
    return f"bandwidth-bound: one read of {_bytes(read)} of weights over {numbers.count(n, 'device')}"


def assumed_words(ev: Any) -> str:
    """The assumed efficiencies with their class and source (AssumedEfficiency.words), as every
    output format prints them."""
    a = getattr(ev, "assumed", None)
    if a is not None:
        return a.words()
    eff = ev.efficiency
    return f"{numbers.percent(eff.bandwidth)} of bandwidth, {numbers.percent(eff.compute)} of compute"


def assumed_figure(ev: Any, resource: str) -> str:
    """"86% of bandwidth plus 2.1 ms an iteration (dense, 1 device: median of 3 public runs,
    docs/calibration.md)": the fraction the realistic estimate is at and the default fixed part it
    charges every iteration (the prompt's pass included)."""
    eff = ev.efficiency
    value = eff.bandwidth if resource == "bandwidth" else eff.compute
    a = getattr(ev, "assumed", None)
    basis = f" ({a.basis(resource)})" if a is not None else ""
    fixed = a.fixed_words() if a is not None else ""
    return f"{numbers.percent(value)} of {resource}{' plus ' + fixed if fixed else ''}{basis}"


def headroom(v: Any) -> float:
    """The one headroom: ``promise / realistic estimate - 1`` (negative: a miss). For
    memory the promise is the usable memory and the estimate the memory required."""
    return v.budget_value / v.realistic_value - 1.0


def calibrated_words(ev: Any, promise: str) -> str | None:
    """"calibrated +/- 12 %, from 6 runs of vllm 0.11 (cal.yaml)", or None when the estimate is assumed."""
    cal = getattr(ev, "calibrated", None)
    if not cal:
        return None
    band = ev.calibration_bands.get(promise)
    return (f"calibrated {'+/- ' + numbers.percent(band) if band is not None else '(no band)'}, "
            f"{cal.removeprefix('calibrated ')}")


def describe_miss(ev: Any, v: Any, *, bound: bool) -> str:
    b, bd, rl = ev.budget, ev.bound, ev.realistic
    name = b.name
    cal = None if bound else calibrated_words(ev, v.promise)
    if cal is not None:
        label = {"tpot": "tpot", "ttft": "ttft", "e2e": "end-to-end"}[v.promise]
        if v.promise == "tpot":
            return (f"budget {name!r}: pace {numbers.quantity(1 / v.budget_value, 'token/s')} is at risk: the {cal} estimate is "
                    f"{numbers.quantity(1 / v.realistic_value, 'token/s')} (bound {numbers.quantity(1 / v.bound_value, 'token/s')})")
        return (f"budget {name!r}: {label} {_time(v.budget_value)} is at risk: the {cal} estimate is "
                f"{_time(v.realistic_value)} (bound {_time(v.bound_value)})")
    if v.promise == "tpot":
        want, got_bound, got_real = 1 / v.budget_value, 1 / v.bound_value, 1 / v.realistic_value
        if bound:
            return (f"budget {name!r}: pace needs {numbers.quantity(want, 'token/s')}; the roofline bound is {numbers.quantity(got_bound, 'token/s')} "
                    f"for {deployment_words(ev)} ({_decode_why(bd, ev)}): {_pct(want / got_bound - 1)} short")
        resource = "bandwidth" if bd.decode_binding == "bandwidth" else "compute"
        return (f"budget {name!r}: pace {numbers.quantity(want, 'token/s')} needs {_pct(v.required_efficiency)} of peak {resource} "
                f"(bound {numbers.quantity(got_bound, 'token/s')}; at the assumed {assumed_figure(ev, resource)}: "
                f"{numbers.quantity(got_real, 'token/s')})")
    if v.promise == "ttft":
        other = bd.ttft_s - bd.prefill_s
        parts = f" after {_time(other)} of queue/edge allowances" if other > 0 else ""
        if bound:
            room = v.budget_value - other
            return (f"budget {name!r}: ttft {_time(v.budget_value)} leaves {_time(max(room, 0))} for prefill{parts}; "
                    f"the roofline bound is {_time(bd.prefill_s)} of prefill ({_prefill_why(bd, ev)}): "
                    f"ttft at least {_time(bd.ttft_s)}, {_pct(bd.ttft_s / v.budget_value - 1)} over the promise")
        req = _pct(v.required_efficiency) if v.required_efficiency else "more than 100%"
        what = ("of the roofline for prefill and the proxy's flush" if bd.proxy_delay_s
                else f"of peak {'compute' if bd.prefill_binding == 'compute' else 'bandwidth'} for prefill")
        return (f"budget {name!r}: ttft {_time(v.budget_value)} needs {req} {what} "
                f"(bound {_time(bd.ttft_s)}; at the assumed efficiency: {_time(rl.ttft_s)}; assumed {assumed_words(ev)})")
    # e2e
    if bound:
        n = ev.workload.output_tokens
        return (f"budget {name!r}: end-to-end {_time(v.budget_value)}; the roofline bound is {_time(bd.e2e_s)} "
                f"({_time(bd.e2e_s - bd.decode_after_first_s)} to the first token + {numbers.stated(n - 1)} more decode steps "
                f"{_time(bd.decode_after_first_s)}: prefill makes the first of the {numbers.stated(n)} tokens) "
                f"for {deployment_words(ev)}: {_pct(bd.e2e_s / v.budget_value - 1)} over the promise")
    req = _pct(v.required_efficiency) if v.required_efficiency else "more than 100%"
    return (f"budget {name!r}: end-to-end {_time(v.budget_value)} needs {req} of the roofline "
            f"(bound {_time(bd.e2e_s)}; at the assumed efficiency: {_time(rl.e2e_s)}; assumed {assumed_words(ev)})")


def describe_met(ev: Any, v: Any) -> str:
    name = ev.budget.name
    cal = calibrated_words(ev, v.promise)
    if cal is not None:
        if v.promise == "tpot":
            return (f"budget {name!r}: pace {numbers.quantity(1 / v.budget_value, 'token/s')} is met: estimate "
                    f"{numbers.quantity(1 / v.realistic_value, 'token/s')} {cal} (bound {numbers.quantity(1 / v.bound_value, 'token/s')}), "
                    f"headroom {numbers.number(v.budget_value / v.realistic_value)}x")
        label = "ttft" if v.promise == "ttft" else "end-to-end"
        return (f"budget {name!r}: {label} {_time(v.budget_value)} is met: estimate {_time(v.realistic_value)} "
                f"{cal} (bound {_time(v.bound_value)}), headroom {numbers.number(v.budget_value / v.realistic_value)}x")
    if v.promise == "tpot":
        return (f"budget {name!r}: pace {numbers.quantity(1 / v.budget_value, 'token/s')} is met: estimate "
                f"{numbers.quantity(1 / v.realistic_value, 'token/s')} (bound {numbers.quantity(1 / v.bound_value, 'token/s')}), "
                f"headroom {format_headroom(headroom(v))}; assumed "
                f"{assumed_figure(ev, 'bandwidth' if ev.bound.decode_binding == 'bandwidth' else 'compute')}")
    label = "ttft" if v.promise == "ttft" else "end-to-end"
    return (f"budget {name!r}: {label} {_time(v.budget_value)} is met: estimate {_time(v.realistic_value)} "
            f"(bound {_time(v.bound_value)}), headroom {format_headroom(headroom(v))}; assumed {assumed_words(ev)}")


def _overhead_words(ev: Any, a: Any) -> str:
    declared = ev.budget.deployment.memory_overhead_bytes is not None
    return "memory_overhead" if declared else "runtime reserve"


def _seqs(n: Any) -> str:
    return numbers.count(n, "sequence")


def _fit(n: Any) -> str:
    """``0`` -> "no sequence fits"; ``1`` -> "1 sequence fits"; ``7`` -> "7 sequences fit"."""
    if n == 0:
        return "no sequence fits"
    return f"{numbers.count(n, 'sequence')} {'fits' if n == 1 else 'fit'}"


def describe_memory(ev: Any) -> str:
    """The memory verdict in the steady state of continuous batching (all B
    sequences at the mean in-flight context), naming how many sequences fit."""
    b = ev.budget
    a = ev.bound if ev.verdicts["memory"].verdict == "cannot-be-met" else ev.realistic
    parts = [f"weights {_bytes(a.memory_weight_bytes_per_device)}", f"KV cache {_bytes(a.memory_kv_bytes_per_device)}"]
    if a.memory_draft_bytes_per_device:
        parts.append(f"draft {_bytes(a.memory_draft_bytes_per_device)}")
    if a.memory_overhead_bytes_per_device:
        parts.append(f"{_overhead_words(ev, a)} {_bytes(a.memory_overhead_bytes_per_device)}")
    wl = ev.workload
    ctx = (f"{_seqs(wl.concurrency)} at the mean in-flight context {numbers.stated(a.memory_context_steady_tokens)} tokens "
           f"= prompt + output / 2")
    hw = b.deployment.hardware
    fit = (f"{_fit(a.memory_max_sequences)} at that context, "
           f"{_fit(a.memory_max_sequences_worst)} at the final {numbers.stated(wl.prompt_tokens + wl.output_tokens)} tokens")
    if ev.verdicts["memory"].verdict == "cannot-be-met":
        return (f"budget {b.name!r}: does not fit: needs {_bytes(a.memory_required_bytes_per_device)} per device "
                f"({' + '.join(parts)}; {ctx}); the {hw.name} has {_bytes(hw.memory_bytes)}: {fit}")
    return (f"budget {b.name!r}: fits only above the usable fraction: needs {_bytes(a.memory_required_bytes_per_device)} "
            f"per device ({' + '.join(parts)}; {ctx}) of {_bytes(a.memory_available_bytes_per_device)} usable "
            f"on the {hw.name}: {fit}")


def describe_memory_tail(ev: Any) -> str:
    """The steady state fits but the worst case (every sequence at its final length) does not."""
    b, a, wl = ev.budget, ev.realistic, ev.workload
    final = wl.prompt_tokens + wl.output_tokens
    return (f"budget {b.name!r}: {_seqs(wl.concurrency)} fit in the steady state "
            f"({_bytes(a.memory_required_bytes_per_device)} per device at the mean in-flight context "
            f"{numbers.stated(a.memory_context_steady_tokens)} tokens; {_fit(a.memory_max_sequences)} there) but not "
            f"when all reach their final {numbers.stated(final)} tokens ({_bytes(a.memory_required_worst_bytes_per_device)} of "
            f"{_bytes(a.memory_available_bytes_per_device)} usable on the {b.deployment.hardware.name}; "
            f"{_fit(a.memory_max_sequences_worst)} then): the runtime will preempt or queue sequences, "
            f"which shows in the tail latency")


def describe_segment(ev: Any, seg: Any, v: Any, *, bound: bool) -> str:
    """A prefill allowance or decode pace a segment's owner was given, against the physics."""
    b = ev.budget
    owner = f" (owner {seg.owner})" if seg.owner else ""
    if seg.kind == "prefill":
        if bound:
            return (f"budget {b.name!r}: prefill segment {seg.name!r}{owner} allows {_time(v.budget_value)}; "
                    f"the roofline bound is {_time(v.bound_value)} ({_prefill_why(ev.bound, ev)}): "
                    f"{_pct(v.bound_value / v.budget_value - 1)} over the allowance")
        # the resource that binds the prefill: one read of the weights (bandwidth) or the FLOPs
        resource = "bandwidth" if ev.bound.prefill_binding == "bandwidth" else "compute"
        return (f"budget {b.name!r}: prefill segment {seg.name!r}{owner} allows {_time(v.budget_value)}, which needs "
                f"{_pct(v.required_efficiency)} of peak {resource} (bound {_time(v.bound_value)}; at the assumed "
                f"{assumed_figure(ev, resource)}: {_time(v.realistic_value)})")
    want, got_bound, got_real = 1 / v.budget_value, 1 / v.bound_value, 1 / v.realistic_value
    if bound:
        return (f"budget {b.name!r}: decode segment {seg.name!r}{owner} must deliver {numbers.quantity(want, 'token/s')}; the "
                f"roofline bound is {numbers.quantity(got_bound, 'token/s')} ({_decode_why(ev.bound, ev)}): {_pct(want / got_bound - 1)} short")
    resource = "bandwidth" if ev.bound.decode_binding == "bandwidth" else "compute"
    return (f"budget {b.name!r}: decode segment {seg.name!r}{owner} at {numbers.quantity(want, 'token/s')} needs "
            f"{_pct(v.required_efficiency)} of peak {resource} (bound {numbers.quantity(got_bound, 'token/s')}; at the assumed "
            f"{assumed_figure(ev, resource)}: {numbers.quantity(got_real, 'token/s')})")


# --------------------------------------------------------------------------- evidence (BL4xx)
# How a measurement and its promise read in a finding; moved here from evaluate/evidence/
# (the evaluation computes, the rules word).

_PROMISE_TITLES = {"ttft": "TTFT", "tpot": "TPOT", "e2e": "E2E"}


def _shown_as(promise: str, seconds: float | None, pace: bool) -> tuple[float | None, str]:
    if promise == "tpot" and pace:
        return (None if not seconds else 1.0 / seconds), "token/s"
    return seconds, "s"  # a TPOT reads as a time ("50 ms"), as in every report


def evidence_value(promise: str, seconds: float, pace: bool = False, figures: int = numbers.FIGURES) -> str:
    """A promise's value as its promise reads: ``20 token/s`` (a pace), ``50 ms`` (a TPOT), ``400 ms``."""
    value, unit = _shown_as(promise, seconds, pace)
    return numbers.quantity(value, unit, figures=figures)


def evidence_figures(promise: str, pace: bool, *seconds: float | None) -> int:
    """The significant figures that print a sentence's different values (a measurement, its
    promise, an interval's ends) differently (:func:`budgetlint.text.numbers.figures_apart`)."""
    shown = [_shown_as(promise, s, pace) for s in seconds]
    unit = _shown_as(promise, 1.0, pace)[1]
    return numbers.figures_apart((v for v, _ in shown), unit)


def promise_words(b: Any, promise: str) -> str:
    """``pace`` for a TPOT promised as a pace, else ``TTFT``/``TPOT``/``E2E``."""
    if promise == "tpot" and b.promise.pace_given:
        return "pace"
    return _PROMISE_TITLES.get(promise, promise)


def condition_words(value: Any) -> str:
    if isinstance(value, float):
        return "unbounded" if math.isinf(value) else f"{numbers.stated(value)}"
    return str(value)


def inferred_words(link: Any) -> str:
    """``; not in the file, taken from the budget: concurrency 8`` (empty when the file said all)."""
    names = link.inferred
    if not names:
        return ""
    return "; not in the file, taken from the budget: " + ", ".join(
        f"{k} {condition_words(link.conditions[k][0])}" for k in names)


def faster_words(link: Any, f: Any) -> str:
    """What makes a measurement faster than the pure roofline possible (BL403), from the facts
    :mod:`budgetlint.evaluate.evidence.bound` found (``Faster``): never a fast machine."""
    if f.promise == "throughput":
        if f.unit_error:
            return f"{numbers.number(f.ratio)}x more than physics allows: wrong units or a wrong key, not a fast machine"
        return ("more devices, a smaller model, lower-precision weights or speculative decoding than the "
                "budget declares, or a concurrency higher than the file states: not a fast machine")
    if f.unit_error:
        return (f"{numbers.number(f.ratio)}x faster than physics allows: wrong units (a time in seconds read as "
                f"milliseconds?) or a wrong key, not a fast machine")
    if f.promise == "ttft":
        words = (f"the prompts must have been served from a prefix cache the budget does not declare "
                 f"(about {numbers.percent(f.cache_share_needed)} of each prompt cached; declare "
                 f"workload.prefix_cache_hit)")
        if f.prompt_origin == "budget":
            words += (f", or the prompts were shorter than the budget's {link.budget.workload.prompt_tokens} "
                      "tokens (the file does not say)")
        else:
            words += ", or the TTFT was taken from a server cache warm-up"
        return words + ": not a fast machine"
    options = []
    if f.lower_precision is not None:
        precision, bound_s = f.lower_precision
        options.append(f"{precision} weights (bound {numbers.quantity(1 / bound_s, 'token/s')})")
    if not f.speculative_declared:
        options.append("speculative decoding the budget does not declare (deployment.speculative)")
    if not options:
        options.append("more devices or a smaller model than the budget declares")
    what = "TPOT" if f.promise == "tpot" else "E2E"
    return ("the run's configuration is not the budget's: " + " or ".join(options)
            + f"; or the {what} definition or units are wrong: not a fast machine")
