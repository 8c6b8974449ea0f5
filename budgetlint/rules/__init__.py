"""The rule registry: every rule code, its name, summary and documentation.

Each rule lives in its own module ``budgetlint/rules/blNNN_<slug>.py`` with
``CODE``, ``NAME``, ``SUMMARY``, ``SEVERITY`` and a module docstring that is
its user documentation, in fixed sections: ``What it checks``, ``Why``,
``Example``, ``Fix``. Rules are pure functions of what the evaluation stage
computed:

* ``check(budget, evaluation, ctx) -> Iterator[Finding]`` for one budget and
  its :class:`~budgetlint.evaluate.BudgetEvaluation`;
* ``check_run(ctx) -> Iterator[Finding]`` once per run, for what is about
  the run as a whole (the teams registry, ``--bench`` files no budget took).

``ctx`` is a :class:`RuleContext`: the teams, the options, and the run-level
facts. A rule reads no file and keeps no state, so the findings do not
depend on which rules run or in what order. Input rules (BL0xx) are emitted
by the loader, schema validation and model building; their modules carry
the documentation and the declared severity, which findings take by default.

Codes are forever: never reused, never renumbered.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any, Callable

from budgetlint.findings import Severity


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    severity: Severity
    doc: str
    check: Callable | None  # check(budget, evaluation, ctx): one budget
    check_run: Callable | None = None  # check_run(ctx): once per run
    other_severities: Any = None  # {Severity: when} a finding may take instead of ``severity``

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
        check_run=getattr(module, "check_run", None),
        other_severities=dict(getattr(module, "OTHER_SEVERITIES", {})),
    )


@dataclass(frozen=True)
class RuleContext:
    """What a rule may look at besides a budget and its evaluation."""

    teams: Any  # handle (lower case) -> Location
    teams_source: str | None
    options: Any
    total_budgets: int = 0  # the run's budgets (check_run)
    run_files: tuple = ()  # the run's --bench files, as read (check_run)
    unlinked: tuple = ()  # --bench measurements no budget took: (file, measurement, reasons)
    paths: tuple = ()  # the paths the run was given, as written (check_run: BL014 names them)
    first_path_is_file: bool = False  # whether paths[0] is a file (BL014 points at it; the run looks)
    bench_globs: tuple = ()  # --bench globs: (pattern, files kept, cut by the limit) (check_run)
    suggest_owner: Any = None  # did-you-mean for owners, bounded per run (model.suggest.Suggester)
    codeowners_unread: str | None = None  # the CODEOWNERS found that could not be read (BL104 says so)


@lru_cache(maxsize=1)
def all_rules() -> tuple[RuleInfo, ...]:
    """Every rule, ordered by code."""
    rules = []
    for mod in pkgutil.iter_modules(__path__):
        if mod.name.startswith("bl"):
            rules.append(_info(importlib.import_module(f"{__name__}.{mod.name}")))
    return tuple(sorted(rules, key=lambda r: r.code))


def checks() -> tuple[RuleInfo, ...]:
    """The rules the pipeline runs: those with ``check`` or ``check_run``."""
    return tuple(r for r in all_rules() if r.check is not None or r.check_run is not None)


def get_rule(code: str) -> RuleInfo | None:
    code = code.strip().upper()
    for rule in all_rules():
        if rule.code == code or rule.name == code.lower():
            return rule
    return None
