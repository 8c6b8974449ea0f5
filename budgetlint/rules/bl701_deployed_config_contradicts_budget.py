"""The budget's deployment and the deployed configuration it links disagree.

## What it checks
Every field both the budget's `deployment` (and `workload.prefix_cache_hit`)
and a deployed configuration named in `deployment.config` state: the model,
`devices` against the tensor-parallel size, `replicas` against the copies
(replicas x data-parallel), `max_num_seqs`, `max_num_batched_tokens`,
`memory_usable_fraction` against the memory utilisation, `kv_precision`
against the KV cache dtype, `weight_precision` against the quantization or
dtype, a prefix-cache hit rate against prefix caching switched off (by a
flag or by the engine's default at its release), and speculative decoding
on one side only (docs/deployed-config.md).

## Why
When the two drift, every verdict is about a system that does not exist:
TP 2 deployed where the budget says 4 halves the bandwidth the pace was
checked against; prefix caching off where the budget counts on a 50 % hit
rate doubles the prefill work.

## Example
```yaml
deployment: {model: llama-3.1-70b, hardware: h100-sxm, devices: 4, config: [deploy/values.yaml]}
# deploy/values.yaml:51:  - "--tensor-parallel-size=2"
# BL701: deployment.devices 4 (b.yaml:9) but deploy/values.yaml:51 says tensor-parallel 2;
#        the verdict used the budget's 4
```

## Fix
Make them agree: change the budget to what is deployed, or the deployment to
what the budget promises. A field the budget leaves out is taken from the
deployed configuration (explain shows where from), so deleting the budget's
copy of a deployed fact also works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL701"
NAME = "deployed-config-contradicts-budget"
SUMMARY = "The budget's deployment and the deployed configuration it links disagree."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    de = getattr(evaluation, "deployed", None)
    if de is None:
        return
    for c in de.contradictions:
        yield Finding(CODE, SEVERITY,
                      f"budget {budget.name!r}: {c.budget_text} ({c.budget_loc}) but the deployed configuration "
                      f"{c.config} says {c.deployed_text} ({c.deployed.text or c.deployed.value} at "
                      f"{c.deployed.where}); {c.used}",
                      c.budget_loc, budget=budget.name, fix=c.fix,
                      data={"field": c.field, "deployed_at": c.deployed.where})
