"""Benchmark evidence older than the budget allows, or from another engine or version.

## What it checks
A budget's `evidence:` (or the config's `evidence-max-age`,
`evidence-engine`, `evidence-engine-version`) asks for evidence no older
than a duration and from an engine and version. For each linked
measurement, its file's date, engine and engine version (as the file
records them) are held against that; the message names both sides. A file
that records no date or version while the policy asks about it is reported
too: the check could not run. Version `0.11` accepts `0.11.x`.

## Why
A run on last quarter's engine version says little about today's: kernels,
schedulers and defaults change between releases.

## Example
```yaml
evidence: {max_age: 90 days, engine: vllm, engine_version: "0.11"}
bench: [runs/chat.json]     # date 20250530-194738, --metadata vllm_version=0.8.5
# BL410: runs/chat.json measured on 2025-05-30 (date): 184 days old, older
#        than 90 days (the budget's evidence.max_age)
# BL410: runs/chat.json: engine version 0.8.5 (--metadata vllm_version),
#        the budget's evidence.engine_version asks for 0.11
```

## Fix
Re-run the benchmark on the deployed engine version and link the new file
(record the version: vLLM `--metadata vllm_version=...`, or `provenance`
in a native file), or relax the policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.rules import _evidence

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL410"
NAME = "evidence-stale"
SUMMARY = "Benchmark evidence older than the budget allows, or from another engine or version."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for link in _evidence.links(evaluation):
        for st in link.stale:
            key = {"age": "max_age", "engine": "engine", "engine-version": "engine_version"}[st.check]
            where = budget.loc("evidence", key) if st.asked_by == "budget" and budget.has("evidence", key) else link.where
            yield Finding(CODE, SEVERITY, f"{link.name}: {st.message}", where, budget=budget.name,
                          fix="re-run the benchmark on the deployed engine version and link the new file, "
                              "or relax the evidence policy")
