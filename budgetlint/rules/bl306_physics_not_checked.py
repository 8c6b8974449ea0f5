"""A budget whose promises could not be checked against the roofline.

## What it checks
Budgets without a deployment, or whose model or hardware lacks a figure the
arithmetic needs (e.g. an accelerator with no published compute peak), or
whose inputs had errors.

## Why
Silence must not read as a pass. The budget's arithmetic rules (BL2xx) still
apply; its physics verdicts do not.

## Example
```yaml
deployment: {model: llama-3.1-8b, hardware: a10g}
# BL306: physics not checked: no compute peak for precision 'bf16' ...
```

## Fix
Declare the deployment, or complete the hardware or model entry
(`extends:` a catalog entry and add the missing field).
"""

from __future__ import annotations

from typing import Iterator

from budgetlint.findings import Finding, Severity

CODE = "BL306"
NAME = "physics-not-checked"
SUMMARY = "A budget whose promises could not be checked against the roofline."
SEVERITY = Severity.INFO


def check(b, ev, ctx) -> Iterator[Finding]:
    where = b.loc("deployment") if b.has("deployment") else b.loc("name")
    if ev.roofline.skipped and b.complete:
        yield Finding(CODE, SEVERITY, f"budget {b.name!r}: physics not checked: {ev.roofline.skipped}",
                      where, budget=b.name)
    for note in ev.roofline.notes:
        yield Finding(CODE, SEVERITY, f"budget {b.name!r}: partly checked: {note}", where, budget=b.name)
