"""A deployed configuration named by the budget cannot be read.

## What it checks
Each entry of `deployment.config`: that it names a file, that the file is a
deployed configuration budgetlint reads (a `vllm serve` / `sglang.launch_server`
command line in a script, Dockerfile, compose file or Kubernetes manifest, a
vLLM `--config` YAML, llm-d modelservice values, a KServe
`LLMInferenceService`, a Dynamo `DynamoGraphDeployment`), and that every value
it reads is what the flag takes (an integer tensor-parallel size, a memory
fraction in (0, 1], JSON for `--speculative-config`). The finding is at the
line and column of the bad value.

## Why
A link that reads nothing checks nothing: the budget's deployment would be
compared with an empty configuration and pass.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: h100-sxm, config: [deploy/serve.sh]}
# deploy/serve.sh:3: vllm serve m --max-num-seqs lots
# BL702: deploy/serve.sh:3:25: --max-num-seqs: expected an integer, found 'lots'
```

## Fix
Fix the path or the value; a value left to a shell variable (`$TP`) is not
an error (explain lists it as unresolved), `${TP:-2}` reads its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Location, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL702"
NAME = "deployed-config-unreadable"
SUMMARY = "A deployed configuration named by the budget cannot be read."
SEVERITY = Severity.ERROR
OTHER_SEVERITIES = {Severity.WARNING: "a value the reader skipped while the rest of the file was read"}


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    de = getattr(evaluation, "deployed", None)
    if de is None:
        return
    for what, where in de.unmatched:
        yield Finding(CODE, SEVERITY, f"budget {budget.name!r}: deployment.config {what}", where, budget=budget.name,
                      fix="name a file that exists, relative to the budget's file")
    seen = set()
    for p, entry in de.problems:
        key = (p.file, p.line, p.column, p.message)
        if key in seen:
            continue
        seen.add(key)
        sev = SEVERITY if p.severity == "error" else Severity.WARNING
        yield Finding(CODE, sev, f"budget {budget.name!r}: deployed configuration {p.file}: {p.message}",
                      Location(p.file, p.line, p.column), budget=budget.name,
                      fix="fix the value in the deployed configuration, or the deployment.config entry "
                          f"({entry})" if entry is not None else "fix the deployed configuration")
