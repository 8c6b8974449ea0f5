"""The run's result as data: files, budgets with their analysis, findings.

``Report.as_dict()`` is the JSON report contract described by
``schemas/report.schema.json``; every reporter renders a ``Report``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from budgetlint import __version__
from budgetlint.findings import Finding, Location, Severity, sort_findings


@dataclass
class BudgetResult:
    """One budget as checked: where it is, who owns it, what was computed."""

    name: str
    file: str
    line: int
    owner: str | None
    percentile: str | None
    promises: dict[str, float] = field(default_factory=dict)
    analysis: dict = field(default_factory=dict)  # "bound"/"realistic": physics Analysis objects until as_dict()
    verdicts: dict[str, str] = field(default_factory=dict)
    load: dict | None = None  # the load simulation's result (docs/load.md), when the budget declares traffic

    def as_dict(self) -> dict:
        out = {
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "owner": self.owner,
            "percentile": self.percentile,
            "promises": dict(self.promises),
            "verdicts": dict(self.verdicts),
            "analysis": {k: v.as_dict() if hasattr(v, "as_dict") else v for k, v in self.analysis.items()},
        }
        if self.load is not None:
            out["load"] = self.load
        return out


@dataclass(frozen=True)
class SuppressedFinding:
    """A finding a budget's ``suppress:`` entry removed, with the reason given."""

    finding: Finding
    reason: str
    expires: str | None = None
    suppression: Location | None = None

    def as_dict(self) -> dict:
        out = self.finding.as_dict()
        out["reason"] = self.reason
        out["expires"] = self.expires
        out["suppressed_at"] = str(self.suppression) if self.suppression else None
        return out


class Lazy:
    """A JSON array whose elements are produced while it is written."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)


@dataclass
class Report:
    files: list[str] = field(default_factory=list)
    budgets: list[BudgetResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[SuppressedFinding] = field(default_factory=list)
    diff: dict | None = None  # the PR diff against --base REF (budgetlint.run.diff), when asked for

    def sorted_findings(self) -> list[Finding]:
        return sort_findings(self.findings)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def summary(self) -> dict:
        return {
            "files": len(self.files),
            "budgets": len(self.budgets),
            "errors": self.count(Severity.ERROR),
            "warnings": self.count(Severity.WARNING),
            "infos": self.count(Severity.INFO),
            "suppressed": len(self.suppressed),
        }

    def as_dict(self, *, lazy: bool = False) -> dict:
        """The JSON report contract; with ``lazy``, the three long arrays are
        :class:`Lazy` (built while written)."""
        findings = (f.as_dict() for f in self.sorted_findings())
        budgets = (b.as_dict() for b in sorted(self.budgets, key=lambda b: (b.file, b.line, b.name)))
        suppressed = (s.as_dict() for s in sorted(self.suppressed, key=lambda s: s.finding.sort_key()))
        if lazy:
            arrays: tuple = (Lazy(findings), Lazy(budgets), Lazy(suppressed))
        else:
            arrays = (list(findings), list(budgets), list(suppressed))
        out = {
            "version": 1,
            "tool": {"name": "budgetlint", "version": __version__},
            "summary": self.summary(),
            "findings": arrays[0],
            "budgets": arrays[1],
            "suppressed": arrays[2],
        }
        if self.diff is not None:
            out["diff"] = self.diff
        return out
