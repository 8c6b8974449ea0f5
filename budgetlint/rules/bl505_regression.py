"""A change against the base ref weakens a budget (check --base REF).

## What it checks
With `--base REF`, each budget in the working tree is compared with the
budget of the same name at REF. A regression is:
- a budget removed;
- a promise loosened (ttft, tpot/pace or e2e made slower) or removed;
- headroom (`analysis.headroom_<promise>`: budget / realistic estimate - 1)
  that shrank by more than `--regression-threshold` (a share of the old
  headroom; default 0.25, so +232 % -> +208 %, a shrink of 0.10, is no
  finding; 0: any shrink), or that was positive and is now negative;
- a verdict that got worse (met -> at-risk -> cannot-be-met), always, whatever
  the threshold;
- an owner removed.
Each regression is one finding, at the promise (or budget) it concerns.
A warning by default; an error with `--fail-on-regression`, except a headroom
shrink that leaves the promise met while no `--regression-threshold` is set
(it stays a warning that says "still met").

## Why
A pull request that loosens a promise or eats the headroom may pass every
absolute check while quietly making the product slower. Reviewers need to
see that change, and teams that want to may gate on it.

## Example
```text
budgets/chat.yaml:19:13: BL505 warning: budget 'chat-reply': ttft promise loosened: 400 ms -> 600 ms
budgets/chat.yaml:19:13: BL505 warning: budget 'chat-reply': ttft headroom shrank: +51% -> +12% (-76% of it); still met
```

## Fix
Keep the promise, or make the change explicit: if the loosening is intended,
merge with the regression reviewed (the check warns, it does not block unless
`--fail-on-regression`), or suppress BL505 for the budget with a reason.
"""

from __future__ import annotations

from budgetlint.findings import Severity

CODE = "BL505"
NAME = "regression"
SUMMARY = "A change against the base ref weakens a budget (check --base REF)."
SEVERITY = Severity.WARNING
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.ERROR: "with --fail-on-regression, unless it is a headroom shrink that is still "
                                    "met while no --regression-threshold is set (that stays a warning)"}
