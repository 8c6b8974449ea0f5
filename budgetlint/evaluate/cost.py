"""What a budget's deployment costs at its judged operating point: USD per million output tokens,
USD per request, J per output token (docs/cost.md).

The operating point is the throughput the judgement stands on:

1. ``simulated``, the declared traffic when the simulation sustains it: an open loop's arrival
   rate (for the service) x the mean output length; a closed loop's simulated completions;
2. ``simulated``, the capacity where the declared traffic is not sustained (arrivals beyond what
   the replicas complete): the highest rate that holds every latency promise, or, without latency
   promises, the saturation throughput, x replicas;
3. ``estimate``, without a simulation, under a declared open loop: the declared traffic, assumed
   sustained (the arrival rate x the mean output length: the lowest cost the deployment can have at
   that traffic);
4. ``estimate``, without a simulation otherwise: the flat estimate's closed loop, ``concurrency``
   requests in flight each taking prefill + decode on an idle engine, x replicas.

The price per device comes from, first that gives one: ``deployment.price``, the config's
``prices`` (an organisation's price list, by hardware name or alias), the hardware entry's
``price``. The power per device: ``deployment.power`` (a measured figure), else the hardware
entry's ``tdp`` (its datasheet). The arithmetic is :func:`budgetlint.physics.cost.cost`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from budgetlint.model.types import Budget
from budgetlint.text import numbers


@dataclass(frozen=True)
class CostEvaluation:
    """One budget's cost and energy figures, and where each input came from."""

    basis: str  # "simulated" | "estimate": the throughput's basis, as the judgement names it
    throughput_words: str  # "the declared traffic: 4 request/s x 600 output tokens"
    output_tokens_per_s: float  # the service's (every replica)
    requests_per_s: Optional[float]
    devices: int
    replicas: int
    price_usd_per_s: Optional[float]
    price_from: str  # "deployment.price (budgets/chat.yaml:12:14)", "" when no price
    power_w: Optional[float]
    power_from: str  # "deployment.power (measured)", "h100-sxm TDP (datasheet ...)", ""
    result: Any  # physics.cost.Cost
    #: what sets the throughput: "traffic" (an open loop's declared arrivals, sustained: a faster
    #: step does not serve more tokens, fewer replicas do), "closed-loop", "capacity", "estimate"
    point: str = "estimate"
    replicas_needed: Optional[int] = None  # an open loop's: the fewest replicas that hold its promises
    #: under a sustained declared traffic (open or closed loop), the same fleet at its simulated capacity
    #: (what it would cost fully loaded): (words, output tokens/s, requests/s, physics.cost.Cost); None
    #: otherwise, or when the capacity is no more than the declared traffic's throughput
    at_capacity: Optional[tuple[str, float, float, Any]] = None

    @property
    def usd_per_token(self) -> Optional[float]:
        return self.result.usd_per_token

    @property
    def joules_per_token(self) -> Optional[float]:
        return self.result.joules_per_token

    def no_price_words(self, hardware: str) -> str:
        return (f"no price for {hardware}: give deployment.price (\"2.50 USD/hour\"), the config's "
                f"prices = {{{hardware} = \"2.50 USD/hour\"}}, or a price in the hardware entry")

    def as_dict(self) -> dict[str, Any]:
        """The report's ``analysis.cost`` (SI: USD/s, USD/token, W, J/token; docs/cost.md)."""
        r = self.result
        return {"basis": self.basis, "throughput": self.throughput_words,
                "output_token_per_s": self.output_tokens_per_s, "request_per_s": self.requests_per_s,
                "devices": self.devices, "replicas": self.replicas,
                "price_usd_per_s": self.price_usd_per_s, "price_from": self.price_from or None,
                "fleet_usd_per_s": r.fleet_usd_per_s,
                "usd_per_token": r.usd_per_token, "usd_per_mtok": r.usd_per_mtok,
                "usd_per_request": r.usd_per_request,
                "power_w": self.power_w, "power_from": self.power_from or None,
                "fleet_power_w": r.fleet_power_w, "joules_per_token": r.joules_per_token,
                **({"at_capacity": self.capacity_dict()} if self.at_capacity is not None else {})}

    def capacity_dict(self) -> Optional[dict[str, Any]]:
        """``analysis.cost.at_capacity``: the same fleet's figures at its capacity (a sustained traffic only)."""
        if self.at_capacity is None:
            return None
        words, tokens, requests, r = self.at_capacity
        return {"throughput": words, "output_token_per_s": tokens, "request_per_s": requests,
                "usd_per_token": r.usd_per_token, "usd_per_mtok": r.usd_per_mtok,
                "usd_per_request": r.usd_per_request, "joules_per_token": r.joules_per_token}

    def arithmetic(self) -> list[str]:
        """explain's lines: each figure with the numbers it came from."""
        q = numbers.quantity
        r = self.result
        fleet = f"{self.devices} device{'s' if self.devices != 1 else ''} x {numbers.count(self.replicas, 'replica')}"
        lines = [f"operating point ({self.basis}): {self.throughput_words} = {q(self.output_tokens_per_s, 'token/s')}"
                 f" of output" + (f", {q(self.requests_per_s, 'request/s')}" if self.requests_per_s else "")]
        if self.price_usd_per_s is None:
            lines.append("price: none given (deployment.price, the config's prices or the hardware's price)")
        else:
            lines.append(f"price: {q(self.price_usd_per_s, 'USD/s')} per device ({self.price_from})")
            per_s = numbers.number(r.fleet_usd_per_s)
            lines.append(f"fleet: {q(self.price_usd_per_s, 'USD/s')} x {fleet} = {q(r.fleet_usd_per_s, 'USD/s')}"
                         f" = {per_s} USD per second")
            lines.append(f"cost per output token: {per_s} USD/s / {q(self.output_tokens_per_s, 'token/s')} x 1e6 = "
                         f"{q(r.usd_per_token, 'USD/token')}")
            if r.usd_per_request is not None and self.requests_per_s:
                lines.append(f"cost per request: {per_s} USD/s / {q(self.requests_per_s, 'request/s')} = "
                             f"{q(r.usd_per_request, 'USD')}")
        if self.power_w is None:
            lines.append("power: none known (deployment.power, or the hardware's tdp)")
        else:
            lines.append(f"energy per output token: {q(self.power_w, 'W')} ({self.power_from}) x {fleet} / "
                         f"{q(self.output_tokens_per_s, 'token/s')} = {q(r.joules_per_token, 'J/token')}")
        if self.at_capacity is not None:
            words, tokens, _, cap = self.at_capacity
            figs = [f"{q(v, u)}" for v, u in ((cap.usd_per_token, "USD/token"), (cap.joules_per_token, "J/token"))
                    if v is not None]
            if figs:
                lines.append(f"at capacity (the same fleet fully loaded, not judged): {words} = "
                             f"{q(tokens, 'token/s')} of output -> {', '.join(figs)}")
        return lines


def price_of(budget: Budget, prices: dict[str, float]) -> tuple[Optional[float], str]:
    """(USD/s per device, where it came from): deployment, then the config's list, then the hardware entry."""
    dep = budget.deployment
    if dep is None:
        return None, ""
    if dep.price_usd_per_s is not None:
        return dep.price_usd_per_s, f"deployment.price at {budget.loc('deployment', 'price')}"
    hw = dep.hardware
    if hw is None:
        return None, ""
    return price_of_hardware(hw, prices)


def price_of_hardware(hw: Any, prices: dict[str, float]) -> tuple[Optional[float], str]:
    """(USD/s per device, where from) of a hardware entry: the config's prices, then its own price."""
    if prices:
        from budgetlint.model.build import normal_name

        wanted = {hw.name.lower(), normal_name(hw.name)} | {a.lower() for a in hw.aliases} | \
            {normal_name(a) for a in hw.aliases}
        for key in sorted(prices):
            if key in wanted or normal_name(key) in wanted:
                return prices[key], f"the config's prices.{key}"
    if hw.price_usd_per_s is not None:
        return hw.price_usd_per_s, f"hardware {hw.name!r} price ({hw.origin()})"
    return None, ""


def power_of(budget: Budget) -> tuple[Optional[float], str]:
    """(W per device, where it came from): a measured ``deployment.power``, else the hardware's TDP."""
    dep = budget.deployment
    if dep is None:
        return None, ""
    if dep.power_w is not None:
        return dep.power_w, f"measured, deployment.power at {budget.loc('deployment', 'power')}"
    hw = dep.hardware
    if hw is not None and hw.tdp_w is not None:
        return hw.tdp_w, f"{hw.name} TDP, {hw.origin()}"
    return None, ""


def operating_point(budget: Budget, roof: Any, load: Any) -> Optional[tuple[str, str, float, Optional[float], str]]:
    """(basis, words, output tokens/s, requests/s, point) for the service, or None when nothing gives one."""
    dep = budget.deployment
    replicas = dep.replicas if dep is not None else 1
    if load is not None and load.skipped is None and load.result is not None:
        from budgetlint.model.units import format_quantity

        mean_out = _mean_output(budget, load)
        share = load.replicas / max(load.simulated_replicas, 1)
        if load.arrival_rate_per_s is not None and not load.overloaded:
            rate = load.arrival_rate_per_s
            return ("simulated", f"the declared traffic, {format_quantity(rate, 'request_rate')} x "
                    f"{numbers.number(mean_out)} output tokens", rate * mean_out, rate, "traffic")
        if load.arrival_rate_per_s is None:
            r = load.result
            rate = r.throughput_request_per_s * share
            tokens = r.output_token_per_s * share
            if math.isfinite(tokens) and tokens > 0:
                return ("simulated", f"the simulated closed loop, {load.concurrency} users per replica x "
                        f"{numbers.count(load.replicas, 'replica')}", tokens, rate if rate > 0 else None, "closed-loop")
        cap = _capacity(budget, load)
        if cap is not None:
            what, _, rest = cap[0].partition(", ")
            return ("simulated", f"{what} (the declared traffic is not sustained), {rest}", cap[1], cap[2],
                    "capacity")
    wl = budget.workload
    rate = getattr(wl, "arrival_rate_per_s", None) if wl is not None else None
    if rate is not None and math.isfinite(rate) and rate > 0 and wl.output_tokens and wl.output_tokens > 0:
        # a declared open loop with no simulation (--no-simulate, a skipped one, a disaggregated deployment
        # not simulated): the arrivals set the tokens served if the deployment sustains them, a lower bound
        # of the cost (a deployment that does not sustain them serves fewer tokens at the same price)
        from budgetlint.model.units import format_quantity

        if getattr(wl, "arrival_rate_per", "service") == "replica":
            if getattr(dep, "disaggregated", None) is not None:
                rate = None  # a replica of which pool: not guessed (the flat estimate below)
            else:
                rate *= replicas
        if rate is not None:
            mean_out = float(wl.output_tokens)
            return ("estimate", f"the declared traffic assumed sustained (not simulated: the lowest cost it can "
                    f"have), {format_quantity(rate, 'request_rate')} x {numbers.number(mean_out)} output tokens",
                    rate * mean_out, rate, "traffic")
    a = getattr(roof, "realistic", None) if roof is not None and not roof.skipped else None
    if a is None:
        return None
    busy = a.prefill_s + a.decode_s
    if not (busy > 0 and math.isfinite(busy)):
        return None
    rate = a.concurrency / busy * replicas
    return ("estimate", f"the flat estimate, {numbers.count(a.concurrency, 'request')} in flight per replica, "
            f"each {numbers.quantity(busy, 's')} of prefill and decode on an idle engine, x "
            f"{numbers.count(replicas, 'replica')}", rate * a.output_tokens, rate, "estimate")


def evaluate_cost(budget: Budget, roof: Any, load: Any, prices: dict[str, float]) -> Optional[CostEvaluation]:
    """The budget's :class:`CostEvaluation`, or None when it has no deployment or no throughput."""
    from budgetlint.physics.cost import cost

    dep = budget.deployment
    if dep is None:
        return None
    point = operating_point(budget, roof, load)
    if point is None:
        return None
    basis, words, tokens, requests, kind = point
    price, price_from = price_of(budget, prices)
    power, power_from = power_of(budget)
    # a replica's devices: the tensor degree x pipeline stages x attention data-parallel ranks
    # (expert parallelism spreads the experts over those same devices: docs/topologies.md)
    devices = dep.devices * max(1, getattr(dep, "pipeline_parallel", 1)) * max(1, getattr(dep, "data_parallel", 1))
    replicas = dep.replicas
    pools = _pools(budget, prices)
    if pools is not None:  # disaggregated: every device of both pools, each at its own price and power
        devices, replicas = sum(n for n, _, _, _ in pools), 1
        priced = [(n, pr) for n, pr, _, _ in pools]
        price = sum(n * pr for n, pr in priced) / devices if all(pr is not None for _, pr in priced) else None
        price_from = "; ".join(w for _, _, w, _ in pools) if price is not None else ""
        watts = [(n, w) for n, _, _, w in pools]
        power = sum(n * w for n, w in watts) / devices if all(w is not None for _, w in watts) else None
        power_from = ("mean of the pools' " + ("measured power" if dep.power_w is not None else "TDPs")) \
            if power is not None else ""
    try:
        result = cost(tokens, requests, devices=devices, replicas=replicas, price_usd_per_s=price,
                      power_w=power)
    except ValueError:
        return None
    need = getattr(load, "replicas_needed", None) if kind == "traffic" and basis == "simulated" else None
    full = None
    if basis == "simulated" and kind in ("traffic", "closed-loop") and pools is None and load is not None:
        # the same fleet at its simulated capacity: what its idle time costs
        cap = _capacity(budget, load)
        if cap is not None and cap[1] > tokens:
            try:
                full = (cap[0], cap[1], cap[2], cost(cap[1], cap[2], devices=devices, replicas=replicas,
                                                     price_usd_per_s=price, power_w=power))
            except ValueError:
                full = None
    return CostEvaluation(basis, words, tokens, requests, devices, replicas, price, price_from, power,
                          power_from, result, kind, need, full)


def _mean_output(budget: Budget, load: Any) -> float:
    return getattr(load.output_lengths, "mean", None) or float(budget.workload.output_tokens if budget.workload
                                                              else 1)


def _capacity(budget: Budget, load: Any) -> Optional[tuple[str, float, float]]:
    """(words, output tokens/s, requests/s) of the service at its simulated capacity: the highest rate per
    replica that holds every latency promise, else the saturation throughput, x replicas x the mean
    output length; None when the simulation found neither."""
    from budgetlint.model.units import format_quantity

    cap = load.capacity
    per = cap.request_per_s if cap is not None and cap.request_per_s > 0 else load.saturation_request_per_s
    if not (per and per > 0 and math.isfinite(per)):
        return None
    what = "the capacity with the latency promises held" if cap is not None and cap.request_per_s > 0 \
        else "the saturation throughput"
    mean_out = _mean_output(budget, load)
    rate = per * load.replicas
    return (f"{what}, {format_quantity(per, 'request_rate')} x {numbers.count(load.replicas, 'replica')} x "
            f"{numbers.number(mean_out)} output tokens", rate * mean_out, rate)


def _pools(budget: Budget, prices: dict[str, float]) -> Optional[list[tuple[int, Optional[float], str, Optional[float]]]]:
    """A disaggregated deployment's pools as (devices in the pool, USD/s per device, where from, W per
    device): devices = tensor x pipeline x data-parallel (each the pool's, else the deployment's) x the
    pool's replicas (docs/topologies.md); None for a colocated deployment."""
    dep = budget.deployment
    dis = getattr(dep, "disaggregated", None) if dep is not None else None
    if dis is None:
        return None
    out = []
    for pool in (dis.prefill, dis.decode):
        hw = pool.hardware or dep.hardware
        n = (pool.devices or dep.devices) * max(1, pool.pipeline_parallel or dep.pipeline_parallel) * \
            max(1, pool.data_parallel or dep.data_parallel) * max(1, pool.replicas)
        if dep.price_usd_per_s is not None:
            price, where = dep.price_usd_per_s, "deployment.price"
        elif hw is not None:
            price, where = price_of_hardware(hw, prices)
        else:
            price, where = None, ""
        watts = dep.power_w if dep.power_w is not None else (hw.tdp_w if hw is not None else None)
        name = hw.name if hw is not None else "?"
        out.append((n, price, f"{pool.role} pool {n} x {name}: {where}", watts))
    return out
