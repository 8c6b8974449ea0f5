"""The engine's release is unknown, so its defaults come from the newest (or oldest) release read.

## What it checks
A deployment whose engine is known (`deployment.engine`, or the deployed
configuration's launcher) but whose version is not given, is not a release
number, or lies outside the releases in the defaults table
(docs/deployed-config.md): the defaults used (memory utilisation, batch
limits by GPU memory, prefix caching, chunked prefill, block size) are
those of the nearest release read, and this finding says which.

## Why
Engine defaults move between releases: vLLM took 90 % of GPU memory up to
0.19 and 92 % from 0.20.0; its batch limits depend on the GPU's memory and
changed in 0.8.5, 0.9.0 and 0.28.0. A verdict on the wrong release's
defaults is about a different deployment.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: h100-sxm, engine: vllm}
# BL703: no vLLM version given: the defaults of vLLM 0.33.0 (the newest release read) are used
```

## Fix
Set `deployment.engine_version` (quoted: `"0.11.0"`), or pin the image tag
in the deployed configuration (`vllm/vllm-openai:v0.11.0`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL703"
NAME = "engine-defaults-not-pinned"
SUMMARY = "The engine's release is unknown, so its defaults come from the newest (or oldest) release read."
SEVERITY = Severity.INFO


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    de = getattr(evaluation, "deployed", None)
    if de is None or not de.release_unknown:
        return
    loc = budget.loc("deployment", "engine_version") if budget.doc.get(budget.path + ("deployment", "engine_version")) is not None \
        else budget.loc("deployment")
    yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: {de.release_note}", loc, budget=budget.name,
                  fix='set deployment.engine_version (quoted, e.g. "0.11.0"), or pin the image tag')
