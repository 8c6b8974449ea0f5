"""The rule registry: every rule code, its name, summary and documentation.

Each rule lives in its own module ``budgetlint/rules/blNNN_<slug>.py`` with
``CODE``, ``NAME``, ``SUMMARY``, ``SEVERITY`` and a module docstring that is
its user documentation, in fixed sections: ``What it checks``, ``Why``,
``Example``, ``Fix``. Rules that inspect budgets also define
``check(ctx) -> Iterator[Finding]``. A check looks only at the budgets in
``ctx.budgets`` (in a streaming run, one file's), never at others; a rule
that is about the run as a whole sets ``SCOPE = "run"`` and runs once, on a
context that carries the run's ``total_budgets``. Input rules (BL0xx) are emitted by the
loader, schema validation and model building, and their modules carry only
the documentation.

Codes are forever: never reused, never renumbered.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Callable

from budgetlint.findings import Severity


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    severity: Severity
    doc: str
    check: Callable | None
    scope: str = "budget"  # "budget": findings about the budgets it is given; "run": once per run

    def section(self, title: str) -> str:
        """One section of the docs (text under ``## title``)."""
        lines = self.doc.splitlines()
        out: list[str] = []
        inside = False
        for line in lines:
            if line.startswith("## "):
                inside = line[3:].strip().lower() == title.lower()
                continue
            if inside:
                out.append(line)
        return "\n".join(out).strip()


def _info(module: ModuleType) -> RuleInfo:
    return RuleInfo(
        code=module.CODE,
        name=module.NAME,
        summary=module.SUMMARY,
        severity=module.SEVERITY,
        doc=(module.__doc__ or "").strip(),
        check=getattr(module, "check", None),
        scope=getattr(module, "SCOPE", "budget"),
    )


@lru_cache(maxsize=1)
def all_rules() -> tuple[RuleInfo, ...]:
    """Every rule, ordered by code."""
    rules = []
    for mod in pkgutil.iter_modules(__path__):
        if mod.name.startswith("bl"):
            rules.append(_info(importlib.import_module(f"{__name__}.{mod.name}")))
    return tuple(sorted(rules, key=lambda r: r.code))


def get_rule(code: str) -> RuleInfo | None:
    code = code.strip().upper()
    for rule in all_rules():
        if rule.code == code or rule.name == code.lower():
            return rule
    return None
