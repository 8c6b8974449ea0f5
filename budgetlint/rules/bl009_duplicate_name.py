"""Two budgets (or two hardware/model entries) share a name.

## What it checks
Names of budgets are unique across the whole run; names of user hardware
and model entries are unique among user entries.

## Why
Reports, PR diffs and suppressions refer to budgets by name; two budgets with
one name make every one of those ambiguous.

## Example
```yaml
budgets:
  - name: chat-reply
  - name: chat-reply       # BL009: budget 'chat-reply' is already defined at budgets/chat.yaml:4:11
```

## Fix
Rename one of them.
"""

from budgetlint.findings import Severity

CODE = "BL009"
NAME = "duplicate-name"
SUMMARY = "Two budgets (or two hardware/model entries) share a name."
SEVERITY = Severity.ERROR
