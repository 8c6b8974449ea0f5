"""Budgets -> physics inputs -> verdicts per promise.

This module is the edge between the model (what the user wrote, with
positions) and the pure physics core (SI floats). For each budget it runs
the analysis twice:

* at the **pure roofline** (100 % of bandwidth and compute, all of device
  memory, and only what the deployment *declares*: a declared
  ``collective_overhead`` or ``memory_overhead`` is a fact of that
  deployment and is in the bound): the physical bound. A promise this misses
  *cannot be met* at any percentile;
* at a **realistic efficiency** (by default the median of public runs of the
  deployment's class, dense or MoE, one device or tensor-parallel:
  ``physics.default_efficiency``, docs/calibration.md; 90 % of memory usable
  and a runtime reserve of ``physics_inputs.DEFAULT_RUNTIME_RESERVE_BYTES`` per
  device; each unless declared; overridable per deployment or per run): a
  promise this misses is *at risk*.

Facts that are missing narrow what is checked, never silently: hardware
without a compute peak gets the bandwidth bounds only (a promise can be
found impossible, never *met*: its verdict is ``unknown`` and a note says
why); hardware without a memory size gets no memory verdict.

Verdicts: ``cannot-be-met``, ``at-risk``, ``met`` (or ``unknown`` when the
facts needed are missing), per promise: ``ttft``, ``tpot``, ``e2e``,
``memory``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from budgetlint.text import numbers

from budgetlint.evaluate.physics_inputs import (AssumedEfficiency, Skip, assumed_efficiency, bound_deployment,
                                         physics_inputs, realistic_deployment)
from budgetlint.model.types import Budget
from budgetlint.evaluate import analysis_cache
from budgetlint.physics import precision as phys_precision
from budgetlint.physics.shapes import Deployment, Edge, Efficiency, Workload
from budgetlint.text import numbers



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
    estimate_value: float | None = None  # the flat estimate, kept when a calibration replaces realistic_value


@dataclass
class RooflineEvaluation:
    budget: Budget
    bound: Any = None  # physics Analysis at 100 %
    realistic: Any = None  # physics Analysis at the realistic efficiency
    efficiency: Efficiency | None = None
    assumed: AssumedEfficiency | None = None  # the efficiencies above, their class and where each came from
    verdicts: dict[str, PromiseVerdict] = field(default_factory=dict)
    skipped: str | None = None  # why no physics could be done
    notes: list[str] = field(default_factory=list)  # caveats on the verdicts
    deployment: Deployment | None = None
    workload: Workload | None = None
    edge: Edge | None = None
    queue_s: float = 0.0
    levers: list[Any] = field(default_factory=list)
    calibrated: str | None = None  # "calibrated from 6 runs of vllm 0.11 (cal.yaml)": realistic values are the calibration's
    calibration_bands: dict[str, float | None] = field(default_factory=dict)
    pools: Any = None  # evaluate.disaggregated.PoolsEvaluation for a disaggregated deployment

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
        dep = self.budget.deployment
        if dep is not None and dep.hardware is not None and dep.model is not None:
            out["hardware"] = dep.hardware.name  # whose roofline this is (the report's charts name it)
            out["model"] = dep.model.name
        out["efficiency_bandwidth"] = self.efficiency.bandwidth
        out["efficiency_compute"] = self.efficiency.compute
        if self.assumed is not None:
            out["efficiency_assumed"] = self.assumed.as_dict()
        for name, v in self.verdicts.items():
            if name.startswith("segment:"):
                decode = v.binding != "" and not v.binding.startswith("prefill")
                if decode:  # compared as a pace: token/s
                    out[_intern(f"bound_{name}_token_per_s")] = 1.0 / v.bound_value
                    out[_intern(f"realistic_{name}_token_per_s")] = 1.0 / v.realistic_value
                else:
                    out[_intern(f"bound_{name}_s")] = v.bound_value
                    out[_intern(f"realistic_{name}_s")] = v.realistic_value
                out[_intern(f"headroom_{name}")] = v.budget_value / v.realistic_value - 1.0
                if v.required_efficiency is not None:
                    out[_intern(f"required_efficiency_{name}")] = v.required_efficiency
                continue
            key = {"ttft": "ttft_s", "tpot": "tpot_s", "e2e": "e2e_s", "memory": "memory_bytes"}[name]
            if v.bound_value is not None:
                out[_intern(f"bound_{key}")] = v.bound_value
            if v.realistic_value is not None:
                out[_intern(f"realistic_{key}")] = v.realistic_value
            if v.budget_value and v.realistic_value:
                out[_intern(f"headroom_{name}")] = v.budget_value / v.realistic_value - 1.0
            if v.required_efficiency is not None:
                out[_intern(f"required_efficiency_{name}")] = v.required_efficiency
        if self.bound is not None:
            out["bound_pace_token_per_s"] = self.bound.pace_token_per_s
            # the most sequences that fit: steady state (mean in-flight context) and worst case
            # (every sequence at its final length); at 100 % of memory and at the usable fraction
            # with the runtime reserve
            for prefix, a in (("bound", self.bound), ("realistic", self.realistic)):
                if a.memory_max_sequences is not None:
                    out[_intern(f"{prefix}_max_concurrency")] = a.memory_max_sequences
                    out[_intern(f"{prefix}_max_concurrency_worst_case")] = a.memory_max_sequences_worst
        if self.pools is not None:
            out["disaggregated"] = self.pools.as_dict()
        if self.levers:
            out["levers"] = [{"name": lv.name, "description": lever_words(lv), "meets": lv.meets,
                              **({"cost_ratio": lv.cost_ratio, "cost_basis": lv.cost_basis}
                                 if getattr(lv, "cost_ratio", None) is not None else {})}
                             for lv in self.levers]
        return out


_intern = sys.intern  # the analysis keys: every budget has the same few


def _overflowed(*analyses: Any) -> str | None:
    """The first time an analysis holds that is not a finite positive number, in words."""
    for a in analyses:
        for key, words in (("prefill_s", "prefill time"), ("tpot_s", "time per output token"),
                           ("e2e_s", "end-to-end time")):
            value = getattr(a, key, None)
            if isinstance(value, float) and not math.isfinite(value):
                return words
            if key == "tpot_s" and isinstance(value, float) and value <= 0:
                return words
    return None


def evaluate(b: Budget, options: Any) -> RooflineEvaluation:
    ev = RooflineEvaluation(b)
    if not b.complete:
        ev.skipped = "the budget has input errors; fix them first"
        return ev
    try:
        d, wl, edge, queue = physics_inputs(b)
        ev.assumed = assumed_efficiency(b, options)
        ev.efficiency = Efficiency(ev.assumed.bandwidth, ev.assumed.compute)
        bound_d = bound_deployment(d, b)
        real_d = realistic_deployment(d, b, options, ev.assumed.collective_overhead)
        ev.bound = analysis_cache.analyse(bound_d, wl, Efficiency(1.0, 1.0), queue, edge)
        ev.realistic = analysis_cache.analyse(real_d, wl, ev.efficiency, queue, edge)
        if b.deployment is not None and b.deployment.disaggregated is not None:
            from budgetlint.evaluate.disaggregated import evaluate_pools

            ev.pools = evaluate_pools(b, bound_d, real_d, wl, ev.efficiency, queue, edge)
            ev.bound, ev.realistic = ev.pools.bound.combined, ev.pools.realistic.combined
    except Skip as exc:
        ev.skipped = str(exc)
        return ev
    except ValueError as exc:  # the physics refused an input combination
        ev.skipped = str(exc)
        return ev
    except OverflowError:  # an integer count beyond float range (fuzzing found 10**400 tokens)
        ev.skipped = "a count in the budget is too large to compute with (beyond floating-point range)"
        return ev
    overflow = _overflowed(ev.bound, ev.realistic)
    if overflow:  # finite inputs whose times leave float range (a compute peak of 1e-300 FLOP/s)
        ev.bound = ev.realistic = None
        ev.skipped = (f"the {overflow} of this deployment is beyond floating-point range (a peak or a "
                      f"count at an extreme?): nothing can be judged against it")
        return ev
    ev.deployment, ev.workload, ev.edge, ev.queue_s = real_d, wl, edge, queue
    _judge(ev, b)
    hw = b.deployment.hardware
    if ev.pools is not None and not ev.pools.bound.prefill.compute_known:  # the pool whose peak is missing
        hw = b.deployment.disaggregated.prefill.hardware or hw
    elif ev.pools is not None and not ev.pools.bound.decode.compute_known:
        hw = b.deployment.disaggregated.decode.hardware or hw
    if not ev.bound.compute_known:
        why = _compute_unknown_reason(hw, real_d.compute_precision)
        # a bandwidth-only bound can show a time impossible (or at risk: the realistic
        # time without compute is already too long), never met
        for name, v in ev.verdicts.items():
            if name != "memory" and v.verdict == "met":
                v.verdict = "unknown"
        ev.notes.append(f"hardware {hw.name!r} {why}: what needs compute is not checked (prefill, and whether "
                        "compute binds a decode step); time promises are checked against the bandwidth "
                        "bounds only, which can show a promise impossible but never met")
    if ev.bound.memory_fits is None:
        ev.notes.append(f"hardware {hw.name!r} lists no memory size: whether the weights and KV cache fit "
                        "is not checked")
    return ev


def _compute_unknown_reason(hw: Any, precision: str) -> str:
    if not hw.compute_flop_per_s:
        return "lists no compute peak"
    try:
        phys_precision.compute_peak(hw.compute_flop_per_s, precision)
    except ValueError as exc:
        return f"has {exc}"
    return "has no usable compute peak"


def _verdict(budget: float, bound: float, realistic: float) -> str:
    if bound > budget * (1 + 1e-9):
        return "cannot-be-met"
    if realistic > budget * (1 + 1e-9):
        return "at-risk"
    return "met"


def _judge(ev: RooflineEvaluation, b: Budget) -> None:
    p, bd, rl = b.promise, ev.bound, ev.realistic
    # not physics: declared allowances. No proxy delay: the last chunk is
    # flushed when generation ends, so a proxy buffer delays E2E by nothing.
    # The efficiency a promise needs is (bound - fixed) / (promise - fixed): the
    # physics part of the bound over the time the promise leaves it, at most
    # 100 % exactly when the verdict is not cannot-be-met.
    fixed = ev.queue_s + bd.connection_setup_s
    if p.ttft_s is not None:
        v = PromiseVerdict("ttft", _verdict(p.ttft_s, bd.ttft_s, rl.ttft_s), p.ttft_s, bd.ttft_s, rl.ttft_s,
                           binding=f"prefill {bd.prefill_binding}")
        room = p.ttft_s - fixed  # prefill and the proxy's flush (both physics) must fit in it
        v.required_efficiency = ((bd.ttft_s - fixed) / room) if room > 0 else None
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
    # memory, in the steady state of continuous batching: physical capacity at
    # 100 % (declared overhead only) for cannot-be-met; usable fraction and
    # runtime reserve for at-risk. The worst case (every sequence at its final
    # length) is reported by BL302 as a tail warning, not judged here.
    if bd.memory_fits is None:
        mem_verdict = "unknown"
    else:
        mem_verdict = "cannot-be-met" if not bd.memory_fits else ("at-risk" if not rl.memory_fits else "met")
    # the memory "promise" is the usable memory (realistic), so that its headroom,
    # usable / required - 1, is negative exactly when the verdict is at risk or worse
    ev.verdicts["memory"] = PromiseVerdict(
        "memory", mem_verdict, rl.memory_available_bytes_per_device, bd.memory_required_bytes_per_device,
        rl.memory_required_bytes_per_device, binding="memory capacity")
    _optimism(ev, b)


def _optimism(ev: RooflineEvaluation, b: Budget) -> None:
    """Mark promises that are met only thanks to declared speculative or prefix-cache assumptions
    (or, disaggregated, an idle prefill pool the declared arrivals overload: BL350)."""
    if ev.pools is not None and ev.pools.prefill_too_small:
        words = (f"an idle prefill pool (the flat estimate's one prompt: the pool is "
                 f"{numbers.percent(ev.pools.prefill_utilisation)} utilised at "
                 f"{numbers.quantity(ev.pools.arrival_rate_per_s, 'request/s')}, BL350)")
        for name in ("ttft", "e2e"):
            v = ev.verdicts.get(name)
            if v and v.verdict == "met":
                v.optimistic.append(words)
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
            if ev.pools is not None:  # a disaggregated deployment: both pools without the assumption
                from budgetlint.physics.disaggregated import analyse_pools

                p = ev.pools.pools_realistic
                if kind == "speculative":
                    p = replace(p, prefill=replace(p.prefill, spec_accepted_tokens_per_pass=1.0, draft=None,
                                                   draft_lookahead=None),
                                decode=replace(p.decode, spec_accepted_tokens_per_pass=1.0, draft=None,
                                               draft_lookahead=None))
                without = analyse_pools(p, w, ev.efficiency, ev.queue_s, ev.edge).combined
            else:
                without = analysis_cache.analyse(d, w, ev.efficiency, ev.queue_s, ev.edge)
        except ValueError:
            continue
        for name, attr in (("ttft", "ttft_s"), ("tpot", "tpot_s"), ("e2e", "e2e_s")):
            v = ev.verdicts.get(name)
            if v and v.verdict == "met" and getattr(without, attr) > v.budget_value * (1 + 1e-9):
                v.optimistic.append(f"{words} (without it: {_fmt(name, getattr(without, attr))})")


def _fmt(promise: str, value: float) -> str:
    if promise == "tpot":
        return numbers.quantity(1 / value, "token/s")
    return numbers.quantity(value, "s")


def lever_words(lever: Any) -> str:
    """``b200: pace 61.6 token/s, TTFT 393 ms, E2E 13.4 s, memory fits (78.2 GB of 162 GB per device)``."""
    a = lever.analysis
    needed = numbers.quantity(a.memory_required_bytes_per_device, "B")
    if a.memory_fits is None:
        memory = f"memory not checked ({needed} per device needed)"
    else:
        fit = "fits" if a.memory_fits else "does not fit"
        memory = f"memory {fit} ({needed} of {numbers.quantity(a.memory_available_bytes_per_device, 'B')} per device)"
    compute = "" if a.compute_known else " (compute unknown: bandwidth bounds only)"
    ratio = getattr(lever, "cost_ratio", None)
    basis = getattr(lever, "cost_basis", "flat estimate")
    basis = ("the declared traffic sets the tokens: only the devices' price counts" if basis == "declared traffic"
             else basis)
    cost = f", at {numbers.percent(ratio)} of the cost per output token ({basis})" if ratio is not None else ""
    return (f"{lever.description}: pace {numbers.quantity(a.pace_token_per_s, 'token/s')}, "
            f"TTFT {numbers.quantity(a.ttft_s, 's')}, E2E {numbers.quantity(a.e2e_s, 's')}, {memory}{compute}{cost}")
