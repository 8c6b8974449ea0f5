"""A promise met only above a realistic efficiency: at risk.

## What it checks
Promises the pure roofline meets but the same arithmetic at a realistic
efficiency misses. Defaults, per deployment class: the median fraction of
peak bandwidth that public runs of the class reached (dense on one device
72 %, dense tensor-parallel 57 % with the all-reduce in it, MoE on one device
42 %, MoE tensor-parallel 3 %; docs/calibration.md), 50 % of peak compute.
Override per deployment (`efficiency: {bandwidth: 0.8, compute: 0.6}`,
`collective_overhead`) or per run (`--efficiency-bandwidth`,
`--efficiency-compute`, the config file's `efficiency`), or calibrate. The
message states the efficiency the budget requires (bound / budget) and the
one assumed, with its class and source.

## Why
Real kernels reach a fraction of peak: a promise that needs 95 % of the
memory bandwidth is a promise that p95 will miss. Saying how much slack the
budget assumes is what makes it reviewable.

## Example
```yaml
promise: {pace: 20 token/s}
deployment: {model: llama-3.1-70b, hardware: h100-sxm, weight_precision: bf16}
# BL303: pace 20 token/s needs 83% of peak bandwidth (bound 24.1 token/s;
#        at the assumed 72% of bandwidth (dense, 1 device: median of 3 public
#        runs, docs/calibration.md): 17.4 token/s)
```

## Fix
One of the levers the message lists, or a measured efficiency for this
deployment (benchmark evidence) that shows the kernels are faster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL303"
NAME = "promise-at-risk"
SUMMARY = "A promise met only above a realistic efficiency: at risk."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    from budgetlint.rules._verdicts import verdict_findings

    judged = getattr(evaluation, "judgement", None) or {}
    for f in verdict_findings(budget, evaluation, CODE, SEVERITY, "at-risk", bound=False, no_lever=None):
        j = judged.get(f.promise)
        if j is not None and j.verdict == "met":  # a basis above the estimate (a run, the simulation) meets it
            continue
        yield f
