"""Levers: standard changes to a deployment or workload, and whether each
would make a promise hold.

:func:`evaluate_levers` re-runs :func:`~budgetlint.physics.analysis.analyse`
with one change at a time and asks the caller's predicate ``meets(analysis)``.
Levers, in the order they are tried:

``weights-8bit`` / ``weights-4bit``
    weights at 1 / 0.5 byte per parameter (only if narrower than now). The
    compute precision is left as declared (weight-only quantisation); a
    deployment that also computes in fp8 should say so.
``kv-8bit``
    KV cache at 1 byte per element (only if wider now).
``prefix-cache``
    ``shared_prefix_tokens`` of the prompt served from cache (only if given
    and more than is cached now).
``speculative``
    ``spec_acceptance`` accepted tokens per target pass (default
    :data:`DEFAULT_SPEC_ACCEPTANCE` = 2.5, a typical figure for a good draft
    or MTP/EAGLE heads on chat traffic; it is an *assumption* and reported as
    one). The draft given as ``draft`` is charged; without one the lever is
    the optimistic draft-free case (self-speculation / MTP heads).
``more-devices``
    the smallest tensor-parallel degree N > current, N <= ``max_devices``
    (64) and dividing the model's attention heads (what TP runtimes accept),
    that meets the promise.
``fewer-sequences``
    the largest concurrency below the current one that meets it (bisection:
    fewer sequences never slow a step).
``proxy-flush``
    at the client edge, a proxy that flushes every token, or the largest
    chunk (fewer tokens than now) that meets the promise: the cheapest fix
    when the proxy's buffer is what makes the first token late.
``faster-accelerator``
    from ``accelerators`` (name, Accelerator) other than the current one, the
    *least capable* that meets it, ranking by memory bandwidth (then memory,
    then name; unknown memory first) as the proxy for cost.

Each lever can carry its cost per output token relative to the current
deployment (:func:`with_cost_ratio`, docs/cost.md): the devices it runs on
times their price over the output tokens its flat closed loop serves
(:func:`flat_tokens_per_s`); the evaluation ranks levers by it for a budget
with a cost promise. Where the tokens served are fixed (a declared open-loop
traffic the deployment sustains: the arrivals set them, not the step time)
the ratio is the devices' price alone: ``price' x devices' / (price x
devices)`` (``tokens_fixed``).

The result lists every applicable lever, those that meet first, then by
``effect`` (a callable on Analysis, smaller is better; default ``e2e_s``),
so the caller can pass the quantity of the promise at stake.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Optional

from .analysis import Analysis, analyse
from .shapes import ROOFLINE, Accelerator, Deployment, Edge, Efficiency, ModelShape, Workload
from budgetlint.text import numbers

#: Default accepted tokens per target pass for the speculative-decoding lever.
DEFAULT_SPEC_ACCEPTANCE = 2.5
#: Largest tensor-parallel degree the more-devices lever tries.
DEFAULT_MAX_DEVICES = 64

Predicate = Callable[[Analysis], bool]


def _rank(name: str, acc: Accelerator) -> tuple[float, bool, float, str]:
    """The faster-accelerator lever's cost proxy: bandwidth, then memory, then name.

    ``memory_bytes`` may be ``None`` (a bandwidth-only entry): unknown memory
    ranks before any known amount at the same bandwidth (it never claims more).
    """
    memory = acc.memory_bytes
    return (acc.bandwidth_bytes_per_s, memory is not None, memory if memory is not None else 0.0, name)


@dataclass(frozen=True)
class Lever:
    """One lever's outcome: ``description`` says what changes (``"b200"``, ``"4 tensor-parallel
    devices"``); its numbers are worded by the evaluation (``evaluate.roofline.lever_words``)."""

    name: str
    description: str
    analysis: Analysis
    meets: bool
    deployment: Deployment
    workload: Workload
    #: its USD per output token over the current deployment's, both flat estimates (None: a price unknown)
    cost_ratio: Optional[float] = None
    #: what the ratio stands on: "flat estimate" (each one's flat closed loop), or "declared traffic"
    #: (the arrivals set the tokens: the ratio of the devices' price per replica)
    cost_basis: str = "flat estimate"


def flat_tokens_per_s(a: Analysis) -> float:
    """One replica's output tokens per second in a flat estimate's closed loop (physics/cost.py)."""
    from .cost import flat_output_tokens_per_s

    return flat_output_tokens_per_s(a.concurrency, a.output_tokens, a.prefill_s + a.decode_s)


def with_cost_ratio(lever: Lever, base: Analysis, base_price: float, price: Optional[float],
                    tokens_fixed: bool = False) -> Lever:
    """``lever`` with its :attr:`Lever.cost_ratio` against ``base`` (the current deployment's flat
    analysis): the devices it needs at ``price`` each over the output tokens it serves, against the
    same for ``base`` at ``base_price``. ``price`` None: unknown (another accelerator with no price).
    ``tokens_fixed``: both serve the same tokens (a sustained open loop's arrivals), so only the
    devices' price counts: ``price x devices' / (base_price x devices)``."""
    from .cost import cost_ratio

    if price is None:
        return lever
    try:
        if tokens_fixed:
            ratio = cost_ratio(base.devices, 1.0, base_price, lever.analysis.devices, 1.0, price)
        else:
            ratio = cost_ratio(base.devices, flat_tokens_per_s(base), base_price,
                               lever.analysis.devices, flat_tokens_per_s(lever.analysis), price)
    except (ValueError, ZeroDivisionError):
        return lever
    return replace(lever, cost_ratio=ratio,
                   cost_basis="declared traffic" if tokens_fixed else "flat estimate")


def evaluate_levers(
    deployment: Deployment,
    workload: Workload,
    meets: Predicate,
    *,
    efficiency: Efficiency = ROOFLINE,
    queue_s: float = 0.0,
    edge: Optional[Edge] = None,
    shared_prefix_tokens: Optional[float] = None,
    spec_acceptance: float = DEFAULT_SPEC_ACCEPTANCE,
    draft: Optional[ModelShape] = None,
    max_devices: int = DEFAULT_MAX_DEVICES,
    accelerators: Sequence[tuple[str, Accelerator]] = (),
    effect: Callable[[Analysis], float] = lambda a: a.e2e_s,
    analyse_with: Callable[..., Analysis] = analyse,
    at_devices: Optional[Callable[[int], tuple[Efficiency, float]]] = None,
) -> list[Lever]:
    """Evaluate the standard levers (module doc) and order them by effect.

    ``analyse_with`` is :func:`analyse` or a function that returns what it
    would (the evaluation stage passes one that shares equal inputs' results).
    ``at_devices(n)``, when given, is the (efficiency, collective overhead) a
    deployment on ``n`` devices is assumed at (the default efficiencies
    differ between one device and tensor parallelism): the more-devices lever
    is then judged as that deployment, declared, would be.
    """

    def run(name: str, what: str, dep: Deployment, wl: Workload, eff: Efficiency = efficiency) -> Lever:
        a = analyse_with(dep, wl, eff, queue_s, edge)
        return Lever(name, what, a, bool(meets(a)), dep, wl)

    def on(n: int) -> tuple[Deployment, Efficiency]:
        if at_devices is None:
            return replace(dep, devices=n), efficiency
        eff_n, overhead = at_devices(n)
        return replace(dep, devices=n, collective_overhead=overhead), eff_n

    levers: list[Lever] = []
    dep, wl = deployment, workload

    for name, bytes_, label in (("weights-8bit", 1.0, "8-bit weights"), ("weights-4bit", 0.5, "4-bit weights")):
        if dep.weight_bytes_per_param > bytes_:
            levers.append(run(name, label, replace(dep, weight_bytes_per_param=bytes_), wl))

    if dep.kv_bytes_per_elem > 1.0:
        levers.append(run("kv-8bit", "8-bit KV cache", replace(dep, kv_bytes_per_elem=1.0), wl))

    if shared_prefix_tokens is not None:
        cached = min(float(shared_prefix_tokens), wl.prompt_tokens)
        if cached > wl.cached_prompt_tokens:
            levers.append(run(
                "prefix-cache",
                f"prefix cache hitting {numbers.stated(cached)} of {numbers.stated(wl.prompt_tokens)} prompt tokens",
                dep, replace(wl, cached_prompt_tokens=cached),
            ))

    if spec_acceptance > dep.spec_accepted_tokens_per_pass:
        use_draft = draft if draft is not None else dep.draft
        lookahead = dep.draft_lookahead
        if lookahead is not None and lookahead + 1 < spec_acceptance:
            lookahead = None
        sd = replace(dep, spec_accepted_tokens_per_pass=spec_acceptance, draft=use_draft, draft_lookahead=lookahead)
        note = "" if use_draft is not None else " (draft not charged)"
        levers.append(run("speculative", f"speculative decoding accepting {numbers.stated(spec_acceptance)} tokens per pass{note}", sd, wl))

    heads = dep.model.attention_heads
    others = dep.data_parallel * dep.pipeline_parallel

    def fits(n: int) -> bool:  # heads split evenly; the experts still split over tensor x data
        return heads % n == 0 and (n * dep.data_parallel) % dep.expert_parallel == 0

    def words(n: int) -> str:
        if others == 1:
            return f"{n} tensor-parallel devices"
        return (f"tensor {n} x data {dep.data_parallel} x pipeline {dep.pipeline_parallel} = "
                f"{n * others} devices")

    for n in range(dep.devices + 1, max_devices + 1):
        if not fits(n):
            continue
        dep_n, eff_n = on(n)
        lever = run("more-devices", words(n), dep_n, wl, eff_n)
        if lever.meets:
            levers.append(lever)
            break
    else:
        candidates = [n for n in range(dep.devices + 1, max_devices + 1) if fits(n)]
        if candidates:
            n = candidates[-1]
            dep_n, eff_n = on(n)
            levers.append(run("more-devices", f"{words(n)} (the most tried)", dep_n, wl, eff_n))

    if wl.concurrency > 1:
        lo, hi, best = 1, wl.concurrency - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            lever = run("fewer-sequences", numbers.count(mid, "concurrent sequence"), dep, replace(wl, concurrency=mid))
            if lever.meets:
                best, lo = lever, mid + 1
            else:
                hi = mid - 1
        if best is None:
            best = run("fewer-sequences", "1 concurrent sequence", dep, replace(wl, concurrency=1))
        levers.append(best)

    if edge is not None and edge.proxy_flush_tokens > 1:
        # the cheapest fix at the client edge: flush every token, or the largest chunk that meets
        lo, hi, best = 1, int(edge.proxy_flush_tokens) - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            words = "a proxy flushing every token" if mid == 1 else f"a proxy flushing every {mid} tokens"
            a = analyse(dep, wl, efficiency, queue_s, replace(edge, proxy_flush_tokens=float(mid)))
            lever = Lever("proxy-flush", words, a, bool(meets(a)), dep, wl)
            if lever.meets:
                best, lo = lever, mid + 1
            else:
                hi = mid - 1
        if best is None:
            a = analyse(dep, wl, efficiency, queue_s, replace(edge, proxy_flush_tokens=1.0))
            best = Lever("proxy-flush", "a proxy flushing every token", a, bool(meets(a)), dep, wl)
        levers.append(best)

    ranked = sorted(
        ((n, acc) for n, acc in accelerators if acc != dep.accelerator),
        key=lambda item: _rank(*item),
    )
    chosen: Optional[Lever] = None
    for acc_name, acc in ranked:
        try:
            lever = run("faster-accelerator", f"{acc_name}", replace(dep, accelerator=acc), wl)
        except ValueError:  # no usable compute peak for this precision
            continue
        if lever.meets:
            chosen = lever
            break
    if chosen is not None:
        levers.append(chosen)

    return sorted(levers, key=lambda lv: (not lv.meets, effect(lv.analysis)))
