"""Budgets -> physics inputs -> verdicts per promise.

This module is the edge between the model (what the user wrote, with
positions) and the pure physics core (SI floats). For each budget it runs
the analysis twice:

* at the **pure roofline** (100 % of bandwidth and compute, no collective
  overhead, all of device memory): the physical bound. A promise this misses
  *cannot be met* at any percentile;
* at a **realistic efficiency** (default 70 % of bandwidth, 50 % of compute,
  10 % collective overhead for N > 1, 90 % of memory usable; overridable per
  deployment or per run): a promise this misses is *at risk*.

Verdicts: ``cannot-be-met``, ``at-risk``, ``met`` (or ``unknown`` when the
facts needed are missing), per promise: ``ttft``, ``tpot``, ``e2e``,
``memory``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import Any

from budgetlint.model.types import Budget, HardwareDef, ModelDef
from budgetlint.physics import analysis as phys_analysis
from budgetlint.physics import precision as phys_precision
from budgetlint.physics.shapes import Accelerator, Deployment, Edge, Efficiency, ModelShape, Workload



@dataclass
class PromiseVerdict:
    promise: str  # ttft | tpot | e2e | memory
    verdict: str  # cannot-be-met | at-risk | met | unknown
    budget_value: float | None  # seconds (ttft, e2e), seconds/token (tpot), bytes (memory)
    bound_value: float | None  # at the pure roofline
    realistic_value: float | None  # at the realistic efficiency
    binding: str = ""  # bandwidth | compute | memory capacity | ...
    required_efficiency: float | None = None
    optimistic: list[str] = field(default_factory=list)  # assumptions it passes only because of


@dataclass
class Evaluation:
    budget: Budget
    bound: Any = None  # physics Analysis at 100 %
    realistic: Any = None  # physics Analysis at the realistic efficiency
    efficiency: Efficiency | None = None
    verdicts: dict[str, PromiseVerdict] = field(default_factory=dict)
    skipped: str | None = None  # why no physics could be done
    notes: list[str] = field(default_factory=list)  # caveats on the verdicts
    deployment: Deployment | None = None
    workload: Workload | None = None
    edge: Edge | None = None
    queue_s: float = 0.0
    levers: list[Any] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The report's ``analysis`` for the budget.

        ``bound`` and ``realistic`` stay :class:`Analysis` objects (a report
        holds two per budget; as dicts they were a third of a 10,000-budget
        run's memory): :meth:`BudgetResult.as_dict` renders them. The keys
        are interned: every budget has the same few.
        """
        out: dict[str, Any] = {}
        if self.skipped:
            out["skipped"] = self.skipped
            return out
        out["bound"] = self.bound
        out["realistic"] = self.realistic
        out["efficiency_bandwidth"] = self.efficiency.bandwidth
        out["efficiency_compute"] = self.efficiency.compute
        for name, v in self.verdicts.items():
            if name.startswith("segment:"):
                decode = v.binding != "" and not v.binding.startswith("prefill")
                if decode:  # compared as a pace: token/s
                    out[_k(f"bound_{name}_token_per_s")] = 1.0 / v.bound_value
                    out[_k(f"realistic_{name}_token_per_s")] = 1.0 / v.realistic_value
                else:
                    out[_k(f"bound_{name}_s")] = v.bound_value
                    out[_k(f"realistic_{name}_s")] = v.realistic_value
                out[_k(f"headroom_{name}")] = v.budget_value / v.realistic_value - 1.0
                if v.required_efficiency is not None:
                    out[_k(f"required_efficiency_{name}")] = v.required_efficiency
                continue
            key = {"ttft": "ttft_s", "tpot": "tpot_s", "e2e": "e2e_s", "memory": "memory_bytes"}[name]
            if v.bound_value is not None:
                out[_k(f"bound_{key}")] = v.bound_value
            if v.realistic_value is not None:
                out[_k(f"realistic_{key}")] = v.realistic_value
            if v.budget_value and v.realistic_value:
                out[_k(f"headroom_{name}")] = v.budget_value / v.realistic_value - 1.0
            if v.required_efficiency is not None:
                out[_k(f"required_efficiency_{name}")] = v.required_efficiency
        if self.bound is not None:
            out["bound_pace_token_per_s"] = self.bound.pace_token_per_s
        if self.levers:
            out["levers"] = [{"name": lv.name, "description": lv.description, "meets": lv.meets}
                             for lv in self.levers]
        return out


#: Stand-in peak for hardware that lists no compute figure (e.g. Apple M-series):
#: compute is treated as unlimited, which keeps every bound a true lower bound
#: (never a false "cannot be met"); TTFT is then judged only against the
#: weight-read floor and its met/at-risk verdicts are "unknown".
UNLIMITED_COMPUTE = 1e30


_k = sys.intern  # the analysis keys: every budget has the same few


class Skip(Exception):
    """The facts needed for physics are missing; the reason says which."""


def model_shape(m: ModelDef) -> ModelShape:
    missing = [k for k in ("parameters", "layers", "hidden_size", "attention_heads")
               if getattr(m, k) is None]
    if missing:
        raise Skip(f"model {m.name!r} lacks {', '.join(missing)}")
    try:
        return ModelShape(
            total_params=m.parameters, active_params=m.active_parameters, layers=m.layers,
            hidden_size=m.hidden_size, attention_heads=m.attention_heads, kv_heads=m.kv_heads,
            head_dim=m.head_dim, attention="gqa" if m.attention == "mqa" else m.attention,
            kv_lora_rank=m.kv_lora_rank, qk_rope_head_dim=m.qk_rope_head_dim,
            sliding_window=m.sliding_window, sliding_window_layers=m.sliding_window_layers,
            experts=m.experts, experts_per_token=m.experts_per_token,
        )
    except ValueError as exc:
        raise Skip(f"model {m.name!r}: {exc}") from None


def accelerator(hw: HardwareDef) -> Accelerator:
    missing = [k for k, v in (("memory", hw.memory_bytes), ("bandwidth", hw.bandwidth_bytes_per_s))
               if v is None]
    if missing:
        raise Skip(f"hardware {hw.name!r} lacks {', '.join(missing)}")
    compute = hw.compute_flop_per_s or {k: UNLIMITED_COMPUTE for k in ("fp32", "tf32", "bf16", "fp8", "int8", "fp4")}
    try:
        return Accelerator(memory_bytes=hw.memory_bytes, bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s,
                           compute_flop_per_s=compute,
                           interconnect_bytes_per_s=hw.interconnect_bytes_per_s)
    except ValueError as exc:
        raise Skip(f"hardware {hw.name!r}: {exc}") from None


def default_compute_precision(weight_precision: str, hw: HardwareDef) -> str:
    """Weight-only quantisation computes at bf16 unless the hardware has the narrow units.

    fp8 weights compute in fp8 where the accelerator lists an fp8 peak;
    4-bit weights are dequantised and computed at fp8 (if listed) or bf16.
    """
    key = phys_precision.compute_key(weight_precision)
    if key in hw.compute_flop_per_s:
        return weight_precision
    return "bf16"


def queue_allowance(b: Budget) -> float:
    if b.queue_s is not None:
        return b.queue_s
    return sum(s.allowance_s for s in b.segments if s.kind == "queue" and s.allowance_s is not None)


def network_allowance(b: Budget) -> float:
    return sum(s.allowance_s for s in b.segments if s.kind == "network" and s.allowance_s is not None)


def physics_inputs(b: Budget, *, draft: bool = True) -> tuple[Deployment, Workload, Edge | None, float]:
    dep, wl = b.deployment, b.workload
    if dep is None:
        raise Skip("no deployment declared")
    if wl is None:
        raise Skip("no workload declared")
    if dep.model is None or dep.hardware is None:
        raise Skip("the deployment's model or hardware is not defined")
    shape = model_shape(dep.model)
    acc = accelerator(dep.hardware)
    weight_p = dep.weight_precision or "bf16"
    kv_p = dep.kv_precision or "bf16"
    compute_p = dep.compute_precision or default_compute_precision(weight_p, dep.hardware)
    draft_shape = model_shape(dep.draft_model) if (draft and dep.draft_model is not None) else None
    try:
        deployment = Deployment(
            model=shape, accelerator=acc, devices=dep.devices,
            weight_bytes_per_param=phys_precision.bytes_per_element(weight_p),
            kv_bytes_per_elem=phys_precision.bytes_per_element(kv_p),
            compute_precision=compute_p,
            spec_accepted_tokens_per_pass=dep.accepted_tokens_per_pass,
            draft=draft_shape, draft_lookahead=dep.lookahead,
        )
        workload = Workload(prompt_tokens=wl.prompt_tokens, output_tokens=wl.output_tokens,
                            concurrency=wl.concurrency, cached_prompt_tokens=wl.cached_prompt_tokens)
        edge = None
        if wl.measured_at == "client":
            edge = Edge(connection_setup_s=b.connection_setup_s or 0.0,
                        proxy_flush_tokens=b.proxy_flush_tokens or 0)
    except ValueError as exc:
        raise Skip(str(exc)) from None
    queue = queue_allowance(b) + (network_allowance(b) if wl.measured_at == "client" else 0.0)
    return deployment, workload, edge, queue


def realistic_efficiency(b: Budget, options: Any) -> Efficiency:
    dep = b.deployment
    bw = dep.efficiency_bandwidth if dep and dep.efficiency_bandwidth else options.efficiency_bandwidth
    cp = dep.efficiency_compute if dep and dep.efficiency_compute else options.efficiency_compute
    return Efficiency(bw, cp)


def realistic_deployment(d: Deployment, b: Budget, options: Any) -> Deployment:
    dep = b.deployment
    overhead = dep.collective_overhead if dep.collective_overhead is not None else options.collective_overhead
    usable = dep.memory_usable_fraction if dep.memory_usable_fraction is not None else options.memory_usable_fraction
    return replace(d, collective_overhead=overhead if d.devices > 1 else 0.0,
                   memory_usable_fraction=usable, memory_overhead_bytes=dep.memory_overhead_bytes)


def bound_deployment(d: Deployment, b: Budget) -> Deployment:
    return replace(d, collective_overhead=0.0, memory_usable_fraction=1.0,
                   memory_overhead_bytes=b.deployment.memory_overhead_bytes)


def evaluate(b: Budget, options: Any) -> Evaluation:
    ev = Evaluation(b)
    if not b.complete:
        ev.skipped = "the budget has input errors; fix them first"
        return ev
    try:
        d, wl, edge, queue = physics_inputs(b)
        ev.efficiency = realistic_efficiency(b, options)
        bound_d, real_d = bound_deployment(d, b), realistic_deployment(d, b, options)
        ev.bound = phys_analysis.analyse(bound_d, wl, Efficiency(1.0, 1.0), queue, edge)
        ev.realistic = phys_analysis.analyse(real_d, wl, ev.efficiency, queue, edge)
    except Skip as exc:
        ev.skipped = str(exc)
        return ev
    except ValueError as exc:  # the physics refused an input combination
        ev.skipped = str(exc)
        return ev
    except OverflowError:  # an integer count beyond float range (fuzzing found 10**400 tokens)
        ev.skipped = "a count in the budget is too large to compute with (beyond floating-point range)"
        return ev
    ev.deployment, ev.workload, ev.edge, ev.queue_s = real_d, wl, edge, queue
    _judge(ev, b)
    if not b.deployment.hardware.compute_flop_per_s:
        ev.notes.append(f"hardware {b.deployment.hardware.name!r} lists no compute peak: compute is taken as "
                        "unlimited, so only bandwidth and memory bounds are checked and TTFT is judged only "
                        "against one read of the weights")
        for name in ("ttft",):
            v = ev.verdicts.get(name)
            if v is not None and v.verdict != "cannot-be-met":
                v.verdict = "unknown"
    return ev


def _verdict(budget: float, bound: float, realistic: float) -> str:
    if bound > budget * (1 + 1e-9):
        return "cannot-be-met"
    if realistic > budget * (1 + 1e-9):
        return "at-risk"
    return "met"


def _judge(ev: Evaluation, b: Budget) -> None:
    p, bd, rl = b.promise, ev.bound, ev.realistic
    fixed = ev.queue_s + bd.connection_setup_s + bd.proxy_delay_s  # not physics: declared allowances
    if p.ttft_s is not None:
        v = PromiseVerdict("ttft", _verdict(p.ttft_s, bd.ttft_s, rl.ttft_s), p.ttft_s, bd.ttft_s, rl.ttft_s,
                           binding=f"prefill {bd.prefill_binding}")
        room = p.ttft_s - (rl.ttft_s - rl.prefill_s)
        v.required_efficiency = (bd.prefill_s / room) if room > 0 else None
        ev.verdicts["ttft"] = v
    if p.tpot_s is not None:
        v = PromiseVerdict("tpot", _verdict(p.tpot_s, bd.tpot_s, rl.tpot_s), p.tpot_s, bd.tpot_s, rl.tpot_s,
                           binding=bd.decode_binding)
        v.required_efficiency = bd.tpot_s / p.tpot_s
        ev.verdicts["tpot"] = v
    if p.e2e_s is not None:
        v = PromiseVerdict("e2e", _verdict(p.e2e_s, bd.e2e_s, rl.e2e_s), p.e2e_s, bd.e2e_s, rl.e2e_s,
                           binding=bd.decode_binding)
        room = p.e2e_s - fixed
        v.required_efficiency = ((bd.e2e_s - fixed) / room) if room > 0 else None
        ev.verdicts["e2e"] = v
    # segments the physics speaks for: the prefill allowance and the decode pace
    for seg in b.segments:
        if seg.kind == "prefill" and seg.allowance_s is not None and seg.allowance_s > 0:
            v = PromiseVerdict(f"segment:{seg.name}", _verdict(seg.allowance_s, bd.prefill_s, rl.prefill_s),
                               seg.allowance_s, bd.prefill_s, rl.prefill_s, binding=f"prefill {bd.prefill_binding}")
            v.required_efficiency = bd.prefill_s / seg.allowance_s
            ev.verdicts[v.promise] = v
        elif seg.kind == "decode" and seg.pace_token_per_s:
            want = 1.0 / seg.pace_token_per_s
            v = PromiseVerdict(f"segment:{seg.name}", _verdict(want, bd.tpot_s, rl.tpot_s), want, bd.tpot_s,
                               rl.tpot_s, binding=bd.decode_binding)
            v.required_efficiency = bd.tpot_s / want
            ev.verdicts[v.promise] = v
    # memory: physical capacity at 100 %; realistic usable fraction for at-risk
    mem_verdict = "cannot-be-met" if not bd.memory_fits else ("at-risk" if not rl.memory_fits else "met")
    ev.verdicts["memory"] = PromiseVerdict(
        "memory", mem_verdict, bd.memory_available_bytes_per_device, bd.memory_required_bytes_per_device,
        rl.memory_required_bytes_per_device, binding="memory capacity")
    _optimism(ev, b)


def _optimism(ev: Evaluation, b: Budget) -> None:
    """Mark promises that are met only thanks to declared speculative or prefix-cache assumptions."""
    assumptions = []
    dep, wl = b.deployment, b.workload
    if dep.accepted_tokens_per_pass > 1:
        assumptions.append(("speculative", f"speculative decoding accepting {dep.accepted_tokens_per_pass:g} tokens per pass"))
    if wl.cached_prompt_tokens > 0:
        assumptions.append(("prefix", f"a prefix cache hitting {wl.cached_prompt_tokens:g} of {wl.prompt_tokens} prompt tokens"))
    for kind, words in assumptions:
        d = ev.deployment
        w = ev.workload
        if kind == "speculative":
            d = replace(d, spec_accepted_tokens_per_pass=1.0, draft=None, draft_lookahead=None)
        else:
            w = replace(w, cached_prompt_tokens=0.0)
        try:
            without = phys_analysis.analyse(d, w, ev.efficiency, ev.queue_s, ev.edge)
        except ValueError:
            continue
        for name, attr in (("ttft", "ttft_s"), ("tpot", "tpot_s"), ("e2e", "e2e_s")):
            v = ev.verdicts.get(name)
            if v and v.verdict == "met" and getattr(without, attr) > v.budget_value * (1 + 1e-9):
                v.optimistic.append(f"{words} (without it: {_fmt(name, getattr(without, attr))})")


def _fmt(promise: str, value: float) -> str:
    from budgetlint.model.units import format_quantity

    if promise == "tpot":
        return f"{1 / value:.3g} token/s"
    return format_quantity(value, "time")


def evaluation_for(ctx: Any, b: Budget) -> Evaluation:
    key = ("evaluation", b.name, id(b))
    if key not in ctx.cache:
        ev = evaluate(b, ctx.options)
        ctx.cache[key] = ev
        ctx.cache.setdefault(("analysis-dict", b.name), {}).update(ev.as_dict())
        ctx.cache[("verdicts", b.name)] = {k: v.verdict for k, v in ev.verdicts.items()}
    return ctx.cache[key]


def _meets_all(b: Budget):
    p = b.promise

    def meets(a: Any) -> bool:
        if p.ttft_s is not None and a.ttft_s > p.ttft_s * (1 + 1e-9):
            return False
        if p.tpot_s is not None and a.tpot_s > p.tpot_s * (1 + 1e-9):
            return False
        if p.e2e_s is not None and a.e2e_s > p.e2e_s * (1 + 1e-9):
            return False
        return bool(a.memory_fits)

    return meets


#: Levers are listed least disruptive first, as a serving team would try them.
LEVER_ORDER = ("weights-8bit", "weights-4bit", "kv-8bit", "prefix-cache", "speculative",
               "more-devices", "fewer-sequences", "faster-accelerator")


def levers_for(ctx: Any, ev: Evaluation) -> list[Any]:
    """The standard levers that would make every promise hold at the realistic efficiency."""
    key = ("levers", ev.budget.name, id(ev.budget))
    if key in ctx.cache:
        return ctx.cache[key]
    from budgetlint.physics.levers import evaluate_levers

    b = ev.budget
    accelerators = []
    for hw in ctx.catalog.all_hardware():
        if hw is b.deployment.hardware:
            continue
        try:
            accelerators.append((hw.name, accelerator(hw)))
        except Skip:
            continue
    draft = None
    if b.deployment.draft_model is not None:
        try:
            draft = model_shape(b.deployment.draft_model)
        except Skip:
            draft = None
    try:
        found = evaluate_levers(
            ev.deployment, ev.workload, _meets_all(b), efficiency=ev.efficiency, queue_s=ev.queue_s,
            edge=ev.edge, shared_prefix_tokens=b.workload.shared_prefix_tokens, draft=draft,
            accelerators=accelerators,
        )
    except ValueError:
        found = []
    order = {name: i for i, name in enumerate(LEVER_ORDER)}
    good = sorted((lv for lv in found if lv.meets), key=lambda lv: order.get(lv.name, len(order)))
    ev.levers = good
    ctx.cache.setdefault(("analysis-dict", b.name), {}).update(ev.as_dict())
    ctx.cache[key] = good
    return good


def lever_text(levers: list[Any], limit: int = 3, ctx: Any = None, budget: str | None = None) -> str | None:
    """The levers, in full on the first finding of a budget, then a pointer to them."""
    if not levers:
        return None
    if ctx is not None and budget is not None:
        key = ("levers-shown", budget)
        if ctx.cache.get(key):
            return (f"the levers that would meet it are listed once per budget (on another of its findings) "
                    f"and by `budgetlint explain --budget {budget}`")
        ctx.cache[key] = True
    parts = [lv.description for lv in levers[:limit]]
    more = f" (+{len(levers) - limit} more: see `budgetlint explain`)" if len(levers) > limit else ""
    return "would meet it: " + "; ".join(parts) + more
