"""A suppression without a reason: it does not apply.

## What it checks
Every entry of a budget's `suppress:` list must carry a non-empty `reason:`.
An entry without one suppresses nothing, and is reported.

## Why
A suppression is a decision someone made about a promise users depend on;
without the why, the next reviewer cannot tell an accepted risk from a
silenced alarm. (Peer linters' most requested suppression feature is a
mandatory justification.)

## Example
```yaml
suppress:
  - rule: BL303
# BL502 suppression of BL303 in budget 'chat-reply' has no reason; it does not apply
```

## Fix
Add `reason:` (and preferably `expires:`), e.g.
`{rule: BL303, reason: "measured 0.82 bandwidth efficiency, see bench/", expires: 2027-01-31}`.
"""

from __future__ import annotations

from budgetlint.findings import Severity

CODE = "BL502"
NAME = "suppression-without-reason"
SUMMARY = "A suppression without a reason: it does not apply."
SEVERITY = Severity.ERROR
