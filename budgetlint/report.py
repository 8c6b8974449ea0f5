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
    #: promise -> the judgement step's {verdict, basis, value, unit, headroom, interval, considered}
    judgement: dict = field(default_factory=dict)
    status: str | None = None  # fail | warn | pass: set by Report (the worst finding after policy)

    def as_dict(self) -> dict:
        out = {
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "owner": self.owner,
            "percentile": self.percentile,
            "promises": dict(self.promises),
            "verdicts": dict(self.verdicts),
            "judgement": {k: dict(v) for k, v in self.judgement.items()},
            "status": self.status or "pass",
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


def _with_status(b: BudgetResult, statuses: dict[str, str]) -> BudgetResult:
    b.status = statuses.get(b.name, "pass")
    return b


def _row_key(b: BudgetResult) -> tuple:
    return (b.file, b.line, b.name)


def _row_out(b: BudgetResult) -> BudgetResult:  # a mapping proxy does not pickle (the row moves to disk)
    if type(b.analysis) is not dict:
        b.analysis = dict(b.analysis)
    return b


def _row_in(b: BudgetResult) -> BudgetResult:
    from types import MappingProxyType

    b.analysis = MappingProxyType(b.analysis)
    return b


@dataclass
class Report:
    """What a run found. ``findings`` and ``budgets`` are lists, or, in a run too
    big to hold (:meth:`spill`), :class:`~budgetlint.spill_to_disk.SpillList` on disk that
    read back sorted; read them through :meth:`sorted_findings`,
    :meth:`sorted_budgets` and :meth:`count`, which mean the same either way."""

    files: list[str] = field(default_factory=list)
    budgets: Any = field(default_factory=list)  # list[BudgetResult] | SpillList
    findings: Any = field(default_factory=list)  # list[Finding] | SpillList
    suppressed: list[SuppressedFinding] = field(default_factory=list)
    diff: dict | None = None  # the PR diff against --base REF (budgetlint.run.diff), when asked for
    #: past reports for the HTML report's headroom over commits (--history FILE, budgetlint.run.history)
    history: list | None = None
    #: what the run could not do that is no finding (the simulation cache could not be kept): said on
    #: standard error by the command line, in no output format
    notices: list[str] = field(default_factory=list)
    #: with a spill, the findings below this severity are left out as they are read (``--quiet``)
    _floor: Severity | None = None
    _counts: dict | None = None  # severity -> findings, kept while spilled (a count reads nothing back)

    @property
    def spilled(self) -> bool:
        return not isinstance(self.findings, list)

    def spill(self) -> None:
        """From now on keep findings and rows on disk (docs/performance.md); what
        is held so far moves there first, in order, so nothing is reordered."""
        if self.spilled:
            return
        from budgetlint.spill_to_disk import SpillList

        findings = SpillList(Finding.sort_key, on_add=self._counted)
        rows = SpillList(_row_key, prepare=_row_out, restore=_row_in)
        self._counts = {s: 0 for s in Severity}
        findings.extend(self.findings)
        rows.extend(self.budgets)
        self.findings, self.budgets = findings, rows

    def _counted(self, f: Finding) -> None:
        assert self._counts is not None
        self._counts[f.severity] += 1

    def drop_findings_below(self, severity: Severity) -> None:
        """Leave out the findings below ``severity`` (``--quiet`` drops information)."""
        if self.spilled:
            self._floor = severity
        else:
            self.findings = [f for f in self.findings if f.severity >= severity]

    def sorted_findings(self) -> Iterable[Finding]:
        """By file, line, column, rule, message (a list, or read back from disk in that order)."""
        if not self.spilled:
            return sort_findings(self.findings)
        floor = self._floor
        return (f for f in self.findings if floor is None or f.severity >= floor)

    def sorted_budgets(self) -> Iterable[BudgetResult]:
        """By file, line, name; each with its ``status`` (:meth:`statuses`)."""
        statuses = self.statuses()
        rows = sorted(self.budgets, key=_row_key) if not self.spilled else iter(self.budgets)
        return (_with_status(b, statuses) for b in rows)

    def statuses(self) -> dict[str, str]:
        """budget name -> ``fail`` (an error finding), ``warn`` (a warning), else ``pass``: the
        worst finding naming the budget, as shown (after suppressions and policy)."""
        out: dict[str, str] = {}
        for f in self.sorted_findings():
            if f.budget is None or f.severity < Severity.WARNING:
                continue
            word = "fail" if f.severity >= Severity.ERROR else "warn"
            if out.get(f.budget) != "fail":
                out[f.budget] = word
        return out

    def count(self, severity: Severity) -> int:
        if self._counts is not None:
            return 0 if self._floor is not None and severity < self._floor else self._counts[severity]
        return sum(1 for f in self.findings if f.severity == severity)

    def exit_code(self, fail_on: Severity) -> int:
        """0 when no finding reaches ``fail_on``, else 1 (2 and 3 are the CLI's: usage, internal)."""
        return 1 if any(self.count(s) for s in Severity if s >= fail_on) else 0

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
        budgets = (b.as_dict() for b in self.sorted_budgets())
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
