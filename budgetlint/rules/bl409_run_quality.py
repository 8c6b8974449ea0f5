"""The benchmark run did not run as declared.

## What it checks
What a linked result file says of its own run (each check names the file's
field):

- failed or errored requests (count and share): latency percentiles count
  only the requests that succeeded;
- fewer requests completed than requested, without failures to account
  for it;
- the declared concurrency never reached: the mean number in flight (the
  tool's figure, or Little's law: request throughput x mean latency) below
  half the declared `max_concurrency`, in a run that concurrency drives;
- a measured span shorter than its warm-up; a rate-driven run shorter than
  4 mean request latencies (ramp-up and drain are most of it); the
  declared request rate not held (sent at under 90 % of it);
- outputs well short of the requested length (mean below 75 % of it): EOS
  was not ignored, so TPOT and E2E are biased;
- prompts whose measured mean differs from the budget's by more than the
  matching tolerance (±25 %) where the file's declared length hid it;
- the tool's own verdict that the run is invalid (MLPerf `Result is :
  INVALID`).

## Why
A run with 20 % failed requests, or whose outputs stopped at an EOS after
half the tokens, reports flattering latencies. The numbers must describe
the load the budget promises under.

## Example
```yaml
bench: [runs/chat.json]   # input_len 1000, output_len 500, total_output_tokens 80945, completed 300
# BL409 run quality of runs/chat.json: outputs 46% shorter than requested:
#       mean 269.8 tokens (total_output_tokens / completed) for 500 asked
#       (--metadata output_len): EOS was not ignored, so TPOT and E2E are biased
```

## Fix
Re-run as declared: fix the failures, raise the client's concurrency,
run longer, pass `--ignore-eos`, use the budget's prompt lengths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.rules import _evidence

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL409"
NAME = "run-quality"
SUMMARY = "The benchmark run did not run as declared."
SEVERITY = Severity.WARNING


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for link in _evidence.links(evaluation):
        for q in link.quality:
            yield Finding(CODE, SEVERITY, f"run quality of {link.name} ({q.check}): {q.message}",
                          link.where, budget=budget.name,
                          fix="re-run the benchmark as declared (see docs/benchmarks.md, run quality)")
