"""A suppression that suppresses nothing.

## What it checks
A valid, unexpired `suppress:` entry of a budget that removed no finding:
the rule did not report anything for that budget in this run (or the rule
is one of BL501-BL504, which cannot be suppressed).

## Why
Stale suppressions hide the next real problem: once the promise is fixed,
the suppression would silently swallow a future regression of the same
rule. Removing it keeps the gate honest.

## Example
```yaml
suppress:
  - {rule: BL301, reason: "waiting for H200s"}
# BL504 suppression of BL301 in budget 'chat-reply' suppresses nothing: no BL301 finding for this budget
```

## Fix
Remove the suppression.
"""

from __future__ import annotations

from budgetlint.findings import Severity

CODE = "BL504"
NAME = "unused-suppression"
SUMMARY = "A suppression that suppresses nothing."
SEVERITY = Severity.WARNING
