"""Levers: the standard changes that would make every promise of a budget hold.

Computed once per budget by the evaluation stage, for budgets with a promise
that is not met (pure physics in :mod:`budgetlint.physics.levers`; this
module picks the alternatives from the catalog and orders the answers).
"""

from __future__ import annotations

from typing import Any

from budgetlint.evaluate.physics_inputs import Skip, accelerator_of, shape_of
from budgetlint.evaluate.roofline import RooflineEvaluation
from budgetlint.model.types import Budget


def _meets_all(b: Budget):
    p = b.promise

    def meets(a: Any) -> bool:
        # unknown compute cannot show a time promise met: never propose such hardware for one
        if not a.compute_known and (p.ttft_s is not None or p.tpot_s is not None or p.e2e_s is not None):
            return False
        if p.ttft_s is not None and a.ttft_s > p.ttft_s * (1 + 1e-9):
            return False
        if p.tpot_s is not None and a.tpot_s > p.tpot_s * (1 + 1e-9):
            return False
        if p.e2e_s is not None and a.e2e_s > p.e2e_s * (1 + 1e-9):
            return False
        return a.memory_fits is True

    return meets


#: Levers are listed least disruptive first, as a serving team would try them.
LEVER_ORDER = ("proxy-flush", "weights-8bit", "weights-4bit", "kv-8bit", "prefix-cache", "speculative",
               "more-devices", "fewer-sequences", "faster-accelerator")


def levers_for(catalog: Any, ev: RooflineEvaluation, cache: dict | None = None) -> tuple[Any, ...]:
    """The standard levers that would make every promise hold at the realistic efficiency.

    With ``cache`` (one per run: the catalog's), a budget whose physics
    inputs and promises equal an earlier budget's gets that budget's levers
    (budgetlint.evaluate.analysis_cache).
    """
    from budgetlint.evaluate import analysis_cache

    b = ev.budget
    hardware = catalog.all_hardware()
    # the alternatives: every catalog accelerator but the budget's own (by identity: a user
    # entry that extends a built-in one is another accelerator)
    own = next((i for i, hw in enumerate(hardware) if hw is b.deployment.hardware), -1)
    draft = None
    if b.deployment.draft_model is not None:
        try:
            draft = shape_of(b.deployment.draft_model)
        except Skip:
            draft = None
    if cache is None:
        return _levers(hardware, own, draft, b, ev)
    p = b.promise
    k = analysis_cache.key("levers", own, draft, ev.deployment, ev.workload, ev.efficiency, ev.assumed, ev.queue_s, ev.edge,
                  b.workload.shared_prefix_tokens, p.ttft_s, p.tpot_s, p.e2e_s)
    return analysis_cache.shared(cache, k, lambda: _levers(hardware, own, draft, b, ev))


def _levers(hardware: list, own: int, draft: Any, b: Budget, ev: RooflineEvaluation) -> tuple[Any, ...]:
    from budgetlint.evaluate import analysis_cache
    from budgetlint.physics.levers import evaluate_levers

    accelerators = []
    for i, hw in enumerate(hardware):
        if i == own:
            continue
        try:
            accelerators.append((hw.name, accelerator_of(hw)))
        except Skip:
            continue
    try:
        found = evaluate_levers(
            ev.deployment, ev.workload, _meets_all(b), efficiency=ev.efficiency, queue_s=ev.queue_s,
            edge=ev.edge, shared_prefix_tokens=b.workload.shared_prefix_tokens, draft=draft,
            accelerators=accelerators, analyse_with=analysis_cache.analyse,
            at_devices=ev.assumed.at_devices if ev.assumed is not None else None,
        )
    except ValueError:
        found = []
    order = {name: i for i, name in enumerate(LEVER_ORDER)}
    return tuple(sorted((lv for lv in found if lv.meets), key=lambda lv: order.get(lv.name, len(order))))


def with_costs(levers: tuple[Any, ...], ev: RooflineEvaluation, catalog: Any, prices: dict[str, float],
               base_price: float | None, cost_promise: float | None, point: str = "estimate") -> tuple[Any, ...]:
    """Each lever with its cost per output token relative to the current deployment (docs/cost.md),
    both flat estimates: on the same hardware the price cancels; on another accelerator its price
    comes from the config's prices or its hardware entry (unknown: no ratio). Under a sustained
    declared open loop (``point`` "traffic", evaluate/cost.py) the arrivals set the tokens served, so a
    lever's ratio is its devices' price over the current devices' (a faster step on the same devices
    costs the same). With a cost promise the levers are ranked by that ratio, cheapest first (unknown
    last; ties keep the least disruptive first), else kept least disruptive first."""
    from budgetlint.physics.levers import with_cost_ratio

    base = ev.realistic
    if base is None or not levers:
        return levers
    by_name = {hw.name: hw for hw in catalog.all_hardware()}
    fixed = point == "traffic"
    out = []
    for lv in levers:
        if lv.name == "faster-accelerator":
            hw = by_name.get(lv.description)
            price = None
            if hw is not None and base_price is not None:
                from budgetlint.evaluate.cost import price_of_hardware

                price = price_of_hardware(hw, prices)[0]
            out.append(with_cost_ratio(lv, base, base_price or 1.0, price, fixed))
        else:
            out.append(with_cost_ratio(lv, base, base_price or 1.0, base_price or 1.0, fixed))
    if cost_promise is not None:
        out.sort(key=lambda lv: (lv.cost_ratio is None, lv.cost_ratio if lv.cost_ratio is not None else 0.0))
    return tuple(out)
