"""A cost promise the deployment misses at its judged operating point.

## What it checks
`promise.cost` (`0.50 USD/Mtok`: what a million output tokens may cost)
against the deployment's cost per output token at the operating point the
judgement stands on (docs/cost.md): the devices' price per hour x devices x
replicas over the output tokens they serve per hour. The throughput is the
declared traffic's when the simulation sustains it, else the capacity the
simulation finds; without a simulation, a declared open loop's arrivals
(assumed sustained: the lowest cost it can have), else the flat estimate's
closed loop; the finding says which.

## Why
Meeting the latency promises on too many devices, or on devices that sit
idle at the declared traffic, is a promise kept at a price nobody agreed
to. The cost is a promise like the others: with its owner, its basis and
its headroom.

## Example
```yaml
workload: {prompt_tokens: 1000, output_tokens: 250, arrival_rate: 2 request/s}
promise: {ttft: 1 s, cost: 1 USD/Mtok}
deployment: {model: llama-3.1-8b, hardware: h100-sxm, price: 2.50 USD/hour}
# BL360: cost 1 USD/Mtok promised; 1.39 USD/Mtok at the declared traffic,
#        2 request/s x 250 output tokens (500 token/s of output on 1 device
#        x 1 replica at 2.5 USD/hour each), 39% over; meeting it needs
#        694 token/s of output from these devices: the declared traffic sets
#        the tokens served, so a faster step alone does not lower the cost; ...
```

Where the throughput is the capacity (a closed loop, traffic beyond what the
replicas complete, or the flat estimate), the message names the cheapest
standard lever that meets the promise, ranked by its cost per output token
relative to the deployment's ("4-bit weights meets it at 43% of the cost").
Under a sustained declared traffic (open or closed loop) it also gives the
same fleet's cost at its simulated capacity, not judged: what the idle time
costs ("at its capacity (...) the same fleet would cost 0.274 USD/Mtok,
which meets the promise"). The owner named is `cost_owner`, else the
budget's.

## Fix
Serve more tokens per device-hour: a lever the message ranks by cost
(8-bit or 4-bit weights, speculative decoding), more traffic per replica or
fewer replicas; a cheaper device or price; or a cost promise the
deployment can keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL360"
NAME = "cost-promise-missed"
SUMMARY = "A cost promise the deployment misses at its judged operating point."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.evaluate.roofline import lever_words
    from budgetlint.rules._cost import figures, owner_words

    j = (getattr(evaluation, "judgement", None) or {}).get("cost")
    c = evaluation.cost
    if j is None or j.verdict != "at-risk" or c is None or c.usd_per_token is None or j.limit is None:
        return
    limit = j.limit
    value = j.value if j.value is not None else c.usd_per_token
    over = value / limit - 1.0
    need = c.result.fleet_usd_per_s / limit  # output tokens/s at which these devices cost the promise
    said = figures(c) if j.basis == c.basis else j.words  # a linked run's throughput: the judgement's words
    msg = (f"budget {budget.name!r}{owner_words(budget)}: cost {numbers.quantity(limit, 'USD/token')} promised; "
           f"{said}, {numbers.percent(over)} over; meeting it needs "
           f"{numbers.quantity(need, 'token/s')} of output from these devices")
    fix = None
    own = j.basis == c.basis  # else a linked run's throughput decided: the message says what would meet it
    if own and c.point == "traffic":  # the arrivals set the tokens served: only fewer devices make them cheaper
        msg += (": the declared traffic sets the tokens served, so a faster step alone does not lower the "
                "cost; more traffic per replica, fewer replicas or a cheaper device does")
        if c.replicas_needed is not None and c.replicas_needed < c.replicas:
            ratio = c.replicas_needed / c.replicas
            msg += (f"; {numbers.count(c.replicas_needed, 'replica')} hold the latency promises at "
                    f"{numbers.percent(ratio)} of the cost ({numbers.quantity(c.usd_per_token * ratio, 'USD/token')})")
            fix = f"deployment.replicas: {c.replicas_needed}"
    elif own:
        cheaper = [lv for lv in evaluation.levers
                   if lv.meets and lv.cost_ratio is not None and c.usd_per_token * lv.cost_ratio <= limit]
        priced = [lv for lv in evaluation.levers if lv.cost_ratio is not None]
        if cheaper:
            lv = cheaper[0]
            msg += (f"; {lv.description} meets it at {numbers.percent(lv.cost_ratio)} of the cost "
                    f"({numbers.quantity(c.usd_per_token * lv.cost_ratio, 'USD/token')}: the flat estimates' ratio)")
            fix = lever_words(lv)
        elif priced:
            best = min(priced, key=lambda lv: lv.cost_ratio)
            msg += (f"; no standard lever meets it (the cheapest, {best.description}, at "
                    f"{numbers.percent(best.cost_ratio)} of the cost)")
    full = c.at_capacity if own else None  # the same fleet fully loaded: what its idle time costs
    if full is not None and full[3].usd_per_token is not None:
        meets = "meets the promise" if full[3].usd_per_token <= limit else "still misses it"
        msg += (f"; at its capacity ({full[0]}, {numbers.quantity(full[1], 'token/s')}) the same fleet would "
                f"cost {numbers.quantity(full[3].usd_per_token, 'USD/token')}, which {meets}")
    yield Finding(CODE, SEVERITY, msg, budget.loc("promise", "cost"), budget=budget.name, promise="cost", fix=fix)
