"""The pure roofline at a run's own load, and every measured statistic faster than it."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from budgetlint.model.types import Budget

from .readings import PROMISE_NAMES, tpot_in_our_definition
from .records import Faster

if TYPE_CHECKING:
    from .records import Link


#: a measurement this many times faster than the bound is a unit error, not a config one
UNIT_ERROR_RATIO = 50.0


#: the bound's concurrency when the file states neither the requests sent nor completed:
#: more sequences than any KV cache holds (a billion), so the cap changes no real bound
MAX_BOUND_CONCURRENCY = 1e9


def physics_refusals() -> tuple[type[Exception], ...]:
    """What the physics raises on inputs it refuses: ``physics_inputs.Skip`` (no deployment or
    model to compute with), ValueError (a value outside the physics's domain),
    ArithmeticError (an overflow: a count beyond float range). Anything else is a bug and
    is not swallowed. (A function: an ``except`` clause evaluates it only when something
    was raised, so the adapter is imported only then.)"""
    from budgetlint.evaluate.physics_inputs import Skip

    return (Skip, ValueError, ArithmeticError)


def _bound_at(b: Budget, concurrency: int, prompt: float, output: float) -> Any:
    from budgetlint.evaluate import physics_inputs
    from budgetlint.evaluate import analysis_cache
    from budgetlint.physics.shapes import Efficiency

    d, wl, _edge, _queue = physics_inputs.physics_inputs(b)
    cached_frac = wl.cached_prompt_tokens / wl.prompt_tokens if wl.prompt_tokens else 0.0
    prompt = max(0.0, round(prompt))
    w = replace(wl, concurrency=max(1, int(round(concurrency))), prompt_tokens=prompt,
                output_tokens=max(1.0, round(output)), cached_prompt_tokens=cached_frac * prompt)
    return analysis_cache.analyse(physics_inputs.bound_deployment(d, b), w, Efficiency(1.0, 1.0), 0.0, None)


def bound_at_run(link: Link, skipped: bool) -> None:
    """Bounds at the measurement's conditions (pure roofline, no queue or edge)."""
    b = link.budget
    if skipped or b.workload is None:
        return
    if any(k.startswith("deployment.") for k, _ in link.mismatches):
        return  # another model or machine: this deployment's bound says nothing about it
    cond = link.conditions
    conc = cond.get("concurrency", (b.workload.concurrency, "budget"))[0]
    if not isinstance(conc, (int, float)) or not math.isfinite(conc):
        conc = b.workload.concurrency
    # no more requests are in flight than the run sent: a cap of 1e308 (or a 300-digit
    # integer) is "no cap", and a bound at that concurrency underflows to a zero throughput
    sent = [n for n in (link.measurement.run.requested, link.measurement.run.completed)
            if isinstance(n, (int, float)) and math.isfinite(n) and n >= 1]
    conc = min(conc, max(sent)) if sent else min(conc, MAX_BOUND_CONCURRENCY)
    prompt = cond.get("prompt_tokens", (float(b.workload.prompt_tokens), "budget"))[0]
    output = cond.get("output_tokens", (float(b.workload.output_tokens), "budget"))[0]
    try:
        link.bound = _bound_at(b, conc, prompt, output)
        link.bound_concurrency_one = _bound_at(b, 1, prompt, output)
    except physics_refusals():  # no bound to compare with; the roofline rules say why
        link.bound = link.bound_concurrency_one = None
        return
    link.faster = _faster(link)


def _statistics(metric: Any) -> list[tuple[str, float]]:
    """Every statistic a metric has: the mean and each percentile, finite values only."""
    out = [("mean", metric.mean)] if metric.mean is not None and math.isfinite(metric.mean) else []
    out += [(lab, v) for lab, v in metric.percentiles.items() if v is not None and math.isfinite(v)]
    return out


def _at_run_concurrency(label: str) -> bool:
    """The mean and percentiles from the median up are held against the bound at the run's
    concurrency; the faster half (below p50, the minimum) against concurrency 1, since a
    request can run while fewer sequences are in flight (ramp-up, ramp-down)."""
    if label == "mean":
        return True
    from budgetlint.bench.measurement import label_percent

    pct = label_percent(label)
    return pct is not None and pct >= 50.0


def _faster(link: Link) -> list[Faster]:
    """Every statistic of every metric, and the aggregate throughput, against the pure roofline."""
    m = link.measurement
    out: list[Faster] = []
    prompt_origin = link.conditions.get("prompt_tokens", (None, "budget"))[1]
    conc = link.bound.concurrency if link.bound is not None else 1
    for name in PROMISE_NAMES:
        metric = m.metrics.get(name)
        if metric is None:
            continue
        hits: list[tuple[float, str, float, float, float]] = []  # (ratio, label, value, bound, concurrency)
        for lab, value in _statistics(metric):
            bound = link.bound if _at_run_concurrency(lab) else link.bound_concurrency_one
            if name == "tpot":
                n, origin = link.conditions.get("output_tokens", (None, ""))
                if metric.definition == "includes_ttft":
                    ours = value  # e2e / N >= our TPOT: an upper bound is enough to be faster
                else:
                    ours, _ = tpot_in_our_definition(value, metric.definition, n, origin)
                if ours is None:
                    continue
                value, bound_s = ours, bound.tpot_s
            elif name == "ttft":
                bound_s = bound.prefill_s
            else:  # prefill makes the first token: E2E >= prefill + (N - 1) decode steps
                bound_s = bound.prefill_s + bound.decode_after_first_s
            if value <= 0 or value >= bound_s * (1 - 1e-9):
                continue
            hits.append((bound_s / value, lab, value, bound_s, float(bound.concurrency)))
        if not hits:
            continue
        label = link.budget.percentile or "p50"
        hits.sort(key=lambda h: (-round(h[0], 9), h[1] != label))  # ties: the budget's own percentile
        _ratio, lab, value, bound_s, at = hits[0]
        others = [h[1] for h in hits[1:]]
        stat = lab + (f" (also {', '.join(others)})" if others else "")
        out.append(_causes(link, Faster(name, value, bound_s, stat, concurrency=at), prompt_origin))
    # aggregate output throughput <= B x the bound pace at the run's concurrency (aggregate grows
    # with B, so fewer in flight only lowers it); only when the file states its concurrency
    conc_origin = link.conditions.get("concurrency", (None, "budget"))[1]
    if (m.output_throughput and m.output_throughput > 0 and link.bound is not None
            and conc_origin != "budget" and "concurrency" in link.conditions):
        cap = link.bound.aggregate_token_per_s
        if cap > 0 and math.isfinite(cap) and m.output_throughput > cap * (1 + 1e-9):
            ratio = m.output_throughput / cap
            out.append(Faster("throughput", 1.0 / m.output_throughput, 1.0 / cap, "aggregate",
                              concurrency=float(conc), ratio=ratio, unit_error=ratio >= UNIT_ERROR_RATIO))
    return out


def _causes(link: Link, f: Faster, prompt_origin: str) -> Faster:
    """``f`` with what could make it possible: the facts BL403's words are made of."""
    b = link.budget
    ratio = f.bound_s / f.measured_s
    f = replace(f, ratio=ratio, unit_error=ratio >= UNIT_ERROR_RATIO)
    if f.unit_error:
        return f
    if f.promise == "ttft":
        need = 1.0 - f.measured_s / f.bound_s if f.bound_s > 0 else 0.0
        return replace(f, cache_share_needed=need, prompt_origin=prompt_origin)
    dep = b.deployment
    lower = None
    for precision in ("fp8", "int4"):
        if dep.weight_precision in (precision, "fp4", "int4") or precision == dep.weight_precision:
            continue
        alt = _alt_bound(link, weight_precision=precision)
        if alt is not None and alt <= f.measured_s:
            lower = (precision, alt)
            break
    return replace(f, lower_precision=lower, speculative_declared=dep.accepted_tokens_per_pass > 1)


def _alt_bound(link: Link, **changes: Any) -> float | None:
    """TPOT bound (concurrency 1) with the budget's deployment changed."""
    from budgetlint.evaluate import physics_inputs
    from budgetlint.evaluate import analysis_cache
    from budgetlint.physics import precision as phys_precision
    from budgetlint.physics.shapes import Efficiency

    b = link.budget
    bound = link.bound_concurrency_one
    try:
        d, wl, _e, _q = physics_inputs.physics_inputs(b)
        wp = changes.get("weight_precision")
        if wp:
            d = replace(d, weight_bytes_per_param=phys_precision.bytes_per_element(wp))
        w = replace(wl, concurrency=1, prompt_tokens=bound.prompt_tokens, output_tokens=bound.output_tokens,
                    cached_prompt_tokens=min(bound.cached_prompt_tokens, bound.prompt_tokens))
        return analysis_cache.analyse(physics_inputs.bound_deployment(d, b), w, Efficiency(1.0, 1.0), 0.0, None).tpot_s
    except physics_refusals():  # that alternative has no bound: it is not offered
        return None
