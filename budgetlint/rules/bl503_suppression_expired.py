"""A suppression past its expiry date: it no longer applies.

## What it checks
A `suppress:` entry whose `expires:` date (YYYY-MM-DD, the last day it
applies) is before today. The message says when it expired; the finding it
used to hide is reported again. Today is the system date, or
`BUDGETLINT_TODAY=YYYY-MM-DD` for reproducible runs.

## Why
Temporary exceptions become permanent unless something reminds their owner.
An expiry date is that reminder, and it only works if expiry is loud.

## Example
```yaml
suppress:
  - {rule: BL303, reason: "new kernels land in Q4", expires: 2025-12-31}
# BL503 suppression of BL303 in budget 'chat-reply' expired on 2025-12-31 (31 days ago)
```

## Fix
Fix what the suppressed rule reports, or renew the suppression with a new
date and an updated reason.
"""

from __future__ import annotations

from budgetlint.findings import Severity

CODE = "BL503"
NAME = "suppression-expired"
SUMMARY = "A suppression past its expiry date: it no longer applies."
SEVERITY = Severity.WARNING
