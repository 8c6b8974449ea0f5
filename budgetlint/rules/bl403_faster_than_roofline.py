"""A measurement is faster than the pure roofline bound of the budget's deployment.

## What it checks
Every measurement linked to a budget whose model, hardware and device
count do not contradict the budget's deployment is held against the pure
roofline of that deployment (100 % of peak bandwidth and compute), at the
measurement's own prompt and output lengths and concurrency (the budget's
where the file does not say):
- TTFT below the prefill bound (no queue, no network);
- TPOT (in budgetlint's definition) below the decode bound, i.e. a pace
  above the bound pace (Llama-3.1-8B in 16 bit on one 3.35 TB/s device,
  concurrency 1: at most 3.35e12 / ((8.03e9 - 128,256 x 4,096) x 2) =
  223 token/s: the input embedding is not read);
- end-to-end below prefill + (N - 1) decode steps;
- the aggregate output throughput above B x the bound pace at the run's
  concurrency B (when the file states B).

Every statistic the file has is checked, not only the budget's percentile:
the mean and the percentiles from the median up against the bound at the
run's concurrency; the faster half (p25, p10, ...) against concurrency 1,
since a request may run while fewer sequences are in flight (ramp-up and
ramp-down). The finding names the statistic furthest beyond the bound and
lists the others.

## Why
No machine beats its roofline. A measurement that does means the file or
the budget is wrong: wrong units (seconds written as milliseconds), the
wrong key or TPOT definition, or a configuration the budget does not
declare: a prefix cache, speculative decoding, lower-precision weights,
more devices or a smaller model. Either way, the budget's physics and the
evidence are not about the same thing; neither can be trusted until they
are.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: h100-sxm, weight_precision: bf16}
bench: [runs/decode.json]          # p50 TPOT 2.5 ms: 400 token/s
# BL403: p50 pace measured 400 token/s, faster than the pure roofline decode
#        bound of 223 token/s at concurrency 1 for llama-3.1-8b (bf16 weights)
#        on 1 x h100-sxm
```

## Fix
Find which of the two is wrong. Check the units and the metric definition
in the file; then declare what the run used: `workload.prefix_cache_hit`,
`deployment.speculative`, `weight_precision`, `devices`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.rules import _evidence
from budgetlint.rules._messages import deployment_words, evidence_value, faster_words, inferred_words, promise_words
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL403"
NAME = "faster-than-roofline"
SUMMARY = "A measurement is faster than the pure roofline bound of the budget's deployment."
SEVERITY = Severity.ERROR


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for link in _evidence.links(evaluation, counting=None):  # faster than physics allows, whatever the conditions
        for f in link.faster:
            if f.promise == "throughput":
                yield Finding(
                    CODE, SEVERITY,
                    f"aggregate output throughput measured {numbers.quantity(1 / f.measured_s, 'token/s')}, above the pure "
                    f"roofline bound of {numbers.quantity(1 / f.bound_s, 'token/s')} ({numbers.stated(f.concurrency)} sequences x the bound "
                    f"pace at that concurrency) for {deployment_words(evaluation.roofline)}: {faster_words(link, f)}; "
                    f"measured in {link.name}{inferred_words(link)}",
                    link.where, budget=budget.name, promise="throughput",
                    fix="check the file's units and metric definitions, then declare what the run used "
                        "(devices, weight_precision, speculative, workload.concurrency)")
                continue
            pace = f.promise == "tpot"
            what = "pace" if pace else promise_words(budget, f.promise)
            kind = {"ttft": "prefill", "tpot": "decode", "e2e": "prefill + (N - 1) decode steps"}[f.promise]
            yield Finding(
                CODE, SEVERITY,
                f"{f.statistic} {what} measured {evidence_value(f.promise, f.measured_s, pace)}, "
                f"faster than the pure roofline {kind} bound of "
                f"{evidence_value(f.promise, f.bound_s, pace)} at concurrency {numbers.stated(f.concurrency)} for "
                f"{deployment_words(evaluation.roofline)}: {faster_words(link, f)}; "
                f"measured in {link.name}{inferred_words(link)}",
                link.where,
                budget=budget.name, promise=f.promise,
                fix="check the file's units and metric definitions, then declare what the run used "
                    "(prefix_cache_hit, speculative, weight_precision, devices)")
