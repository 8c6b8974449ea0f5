"""A throughput promise the deployment cannot sustain with its latency promises held.

## What it checks
`promise.throughput` (`20 request/s`, or `5000 token/s` of output) against
what the replicas sustain while every latency promise holds at its
percentile: the capacity per replica found by the serving simulator
(docs/load.md) times `deployment.replicas`. Without latency promises, the
replicas' saturation throughput (every slot busy) is used. A disaggregated
deployment sustains what its slower pool does: replicas x one replica's
saturation, per pool (docs/topologies.md).

## Why
Throughput and latency are one trade: a batch large enough for the
throughput can be too slow per user. A throughput promise is only kept when
it is kept together with the latency ones.

## Example
```yaml
promise: {ttft: 800 ms, tpot: 50 ms, throughput: 30 request/s}
deployment: {model: llama-3.1-8b, hardware: h100-sxm, replicas: 2}
# BL308: throughput 30 request/s promised; 2 replicas sustain 18.3 request/s
#        with the latency promises held (9.14 request/s each); 4 replicas would
```

## Fix
More replicas (the message says how many), looser latency promises, or a
lever that shortens each step.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL308"
NAME = "throughput-not-sustained"
SUMMARY = "A throughput promise the deployment cannot sustain with its latency promises held."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.model.units import format_quantity

    load = evaluation.load
    if load is None or load.skipped is not None or load.throughput_verdict != "at-risk":
        return
    p = budget.promise
    sustained = load.throughput_sustained_request_per_s or 0.0
    per = sustained / load.replicas if load.replicas else 0.0
    if p.throughput_request_per_s is not None:
        want, unit, got = p.throughput_request_per_s, "request_rate", sustained
    else:
        mean_out = max(load.result.output_token_per_s / load.result.throughput_request_per_s, 1.0) \
            if load.result is not None and load.result.throughput_request_per_s else 1.0
        want, unit, got = p.throughput_token_per_s, "pace", sustained * mean_out
    held = " with the latency promises held" if load.capacity is not None else " at saturation"
    pools = load.pools
    if pools is not None:  # a disaggregated deployment: the slower pool sets what the service sustains
        msg = (f"budget {budget.name!r}: throughput {format_quantity(want, unit)} promised; the pools sustain "
               f"{format_quantity(got, unit)} at saturation, the slower pool's: prefill "
               f"{pools.prefill_replicas} x {format_quantity(pools.prefill_saturation_per_replica, 'request_rate')}, "
               f"decode {pools.decode_replicas} x {format_quantity(pools.decode_saturation_per_replica, 'request_rate')}")
        yield Finding(CODE, SEVERITY, msg, budget.loc("promise", "throughput"), budget=budget.name)
        return
    msg = (f"budget {budget.name!r}: throughput {format_quantity(want, unit)} promised; "
           f"{numbers.count(load.replicas, 'replica')} {'sustains' if load.replicas == 1 else 'sustain'} {format_quantity(got, unit)}{held} "
           f"({format_quantity(per, 'request_rate')} each)")
    fix, data = None, {}
    if per > 0 and got > 0:
        from budgetlint.rules._fixes import edit

        from budgetlint.evaluate.load import REPLICAS_CAP, replicas_beyond_words

        ratio = load.replicas * want / got
        if not (ratio <= REPLICAS_CAP):  # a 300-digit `deployment.replicas` help was no help (issue 24)
            msg += f"; {replicas_beyond_words()}: lower the promise or raise each replica's throughput"
        else:
            need = math.ceil(ratio - 1e-9)
            msg += f"; {numbers.count(need, 'replica')} would"
            fix = f"deployment.replicas: {need}"
            data = edit(budget, [(("deployment", "replicas"), need)], safe=False, title=fix)
    yield Finding(CODE, SEVERITY, msg, budget.loc("promise", "throughput"), budget=budget.name, fix=fix, data=data)
