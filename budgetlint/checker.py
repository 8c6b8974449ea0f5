"""The check pipeline: files -> documents -> model -> rules -> a Report.

No click, no printing: the CLI calls :func:`run_check` and renders the
returned :class:`~budgetlint.report.Report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from budgetlint.build import Catalog, Sink, _as_list, add_entries, build_budget
from budgetlint.discovery import discover, display_path
from budgetlint.findings import Finding, Location, Severity
from budgetlint.loader import Document, load_file
from budgetlint.model import Budget
from budgetlint.owners import codeowners_handles, find_codeowners
from budgetlint.report import BudgetResult, Report

KINDS = ("budgets", "hardware", "models", "teams")


@dataclass
class Options:
    """What a run assumes; the CLI and config file fill it in."""

    efficiency_bandwidth: float = 0.7
    efficiency_compute: float = 0.5
    collective_overhead: float = 0.10
    memory_usable_fraction: float = 0.9
    teams_files: list[str] = field(default_factory=list)
    codeowners: str | None = None
    use_codeowners: bool = True
    bench: list[str] = field(default_factory=list)
    bench_format: str | None = None
    margin_warning: float = 0.10
    config: Any = None  # budgetlint.config.Config: select/ignore, per-file ignores, severity overrides
    base_ref: str | None = None  # compare with the budgets at this git ref (budgetlint.diff)
    fail_on_regression: bool = False
    regression_threshold: float = 0.0


@dataclass
class Context:
    """Everything a rule may look at."""

    budgets: list[Budget]
    catalog: Catalog
    teams: dict[str, Location]
    teams_source: str | None
    options: Options
    cache: dict[str, Any] = field(default_factory=dict)


class InputError(Exception):
    """Input that could not be read at all (exit code 2)."""


def _load_builtin_catalog(sink: Sink) -> Catalog:
    from budgetlint.catalog import builtin_document

    catalog = Catalog()
    for kind in ("hardware", "models"):
        doc = builtin_document(kind)
        if doc is not None:
            add_entries(catalog, doc, kind, sink, builtin=True)
    return catalog


def run_check(paths: list[str], options: Options | None = None) -> Report:
    """Check ``paths`` (files or directories); raise InputError if one does not exist."""
    report, ctx = build_context(paths, options)
    from budgetlint.rules import all_rules

    for rule in all_rules():
        if rule.check is not None:
            report.findings.extend(rule.check(ctx))
    for b in ctx.budgets:
        report.budgets.append(BudgetResult(
            name=b.name, file=b.doc.file, line=b.loc().line, owner=b.owner, percentile=b.percentile,
            promises=_promises(b), analysis=ctx.cache.get(("analysis-dict", b.name), {}),
            verdicts=ctx.cache.get(("verdicts", b.name), {}),
        ))
    if ctx.options.base_ref:
        from budgetlint.diff import attach_diff

        attach_diff(report, ctx, paths)
    from budgetlint.policy import apply_policy

    return apply_policy(report, ctx.options.config, ctx)


def build_context(paths: list[str], options: Options | None = None) -> tuple[Report, Context]:
    """Load, validate and build everything; the rules have not run yet."""
    from budgetlint import schema as schema_mod

    options = options or Options()
    found = discover(paths)
    if found.missing:
        raise InputError("no such file or directory: " + ", ".join(found.missing))
    report = Report()
    report.findings.extend(found.findings)
    by_kind: dict[str, list[Document]] = {k: [] for k in KINDS}
    invalid_budgets: set[str] = set()  # budgets with schema errors: no physics on guessed defaults
    for path in found.files:
        display = display_path(path)
        report.files.append(display)
        loaded = load_file(path, display)
        report.findings.extend(loaded.findings)
        for doc in loaded.documents:
            kind = doc.data.get("kind") if isinstance(doc.data, dict) else None
            if kind not in KINDS:
                if doc.data is None:
                    continue
                got = f"kind {kind!r}" if kind is not None else "no 'kind'"
                report.findings.append(Finding(
                    "BL013", Severity.WARNING,
                    f"not a budgetlint document ({got}); expected kind: budgets, hardware, models or teams; skipped",
                    doc.loc(("kind",)) if kind is not None else doc.loc(())))
                continue
            schema_findings = schema_mod.validate(doc, kind)
            report.findings.extend(schema_findings)
            invalid_budgets.update(f.budget for f in schema_findings if f.budget)
            by_kind[kind].append(doc)
    context_docs = _sibling_definitions(paths, found.files)

    sink = Sink()
    catalog = _load_builtin_catalog(Sink())  # built-in data is tested, not re-reported
    user_names: dict[str, Location] = {}
    for kind in ("hardware", "models"):
        for doc in by_kind[kind]:
            add_entries(catalog, doc, kind, sink, builtin=False, user_names=user_names)
    for kind in ("hardware", "models"):  # context: never reported, never overriding a checked entry
        for doc in context_docs:
            if doc.data["kind"] == kind:
                add_entries(catalog, doc, kind, Sink(), builtin=False, user_names=user_names)

    teams, teams_source = _collect_teams(
        by_kind["teams"] + [d for d in context_docs if d.data["kind"] == "teams"], found.files, options, report)

    budgets: list[Budget] = []
    seen: dict[str, Location] = {}
    for doc in by_kind["budgets"]:
        for i, entry in enumerate(_as_list(doc.get(("budgets",)))):
            if not isinstance(entry, dict):
                continue
            budget = build_budget(doc, i, catalog, sink)
            if budget.name in invalid_budgets:
                budget.complete = False
            if isinstance(entry.get("name"), str):
                if budget.name in seen:
                    sink.add("BL009", f"budget {budget.name!r} is already defined at {seen[budget.name]}",
                             budget.loc("name"), budget=budget.name, fix="rename one of them")
                    continue
                seen[budget.name] = budget.loc("name")
            budgets.append(budget)
    report.findings.extend(sink.findings)

    return report, Context(budgets, catalog, teams, teams_source, options)


def _sibling_definitions(paths: list[str], checked: list[Path]) -> list[Document]:
    """Hardware, model and teams documents beside a file named on the command line.

    `budgetlint check budgets/chat.yaml` must resolve the hardware, models and
    owners that chat.yaml's folder defines, or it would report them as
    undefined (a false alarm). These documents are context only: they are
    neither counted nor reported on; check them by naming them or their folder.
    """
    import os

    from budgetlint import schema as schema_mod

    seen = {os.path.realpath(p) for p in checked}
    out: list[Document] = []
    folders = sorted({Path(p).parent for p in paths if Path(p).is_file()})
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = folder / name
            if not name.endswith((".yaml", ".yml")) or os.path.realpath(path) in seen or not path.is_file():
                continue
            seen.add(os.path.realpath(path))
            loaded = load_file(path, display_path(path))
            for doc in loaded.documents:
                kind = doc.data.get("kind") if isinstance(doc.data, dict) else None
                if kind in ("hardware", "models", "teams") and not schema_mod.validate(doc, kind):
                    out.append(doc)
    return out


def _promises(b: Budget) -> dict[str, float]:
    out: dict[str, float] = {}
    p = b.promise
    if p.ttft_s is not None:
        out["ttft_s"] = p.ttft_s
    if p.tpot_s is not None:
        out["tpot_s"] = p.tpot_s
        out["pace_token_per_s"] = 1.0 / p.tpot_s
    if p.e2e_s is not None:
        out["e2e_s"] = p.e2e_s
    for seg in b.segments:  # the segments the physics judges
        if seg.kind == "prefill" and seg.allowance_s:
            out[f"segment:{seg.name}_s"] = seg.allowance_s
        elif seg.kind == "decode" and seg.pace_token_per_s:
            out[f"segment:{seg.name}_token_per_s"] = seg.pace_token_per_s
    return out


def _collect_teams(docs: list[Document], files: list[Path], options: Options,
                   report: Report) -> tuple[dict[str, Location], str | None]:
    teams: dict[str, Location] = {}
    sources: list[str] = []
    for doc in docs:
        for i, entry in enumerate(_as_list(doc.get(("teams",)))):
            if isinstance(entry, dict) and isinstance(entry.get("handle"), str):
                teams.setdefault(entry["handle"].lower(), doc.loc(("teams", i, "handle")))
        sources.append(doc.file)
    if options.use_codeowners:
        codeowners = Path(options.codeowners) if options.codeowners else (
            find_codeowners(files[0]) if files else find_codeowners(Path.cwd()))
        if codeowners is not None and codeowners.is_file():
            for handle, where in codeowners_handles(codeowners).items():
                teams.setdefault(handle, Location(display_path(Path(where.file)), where.line, where.column))
            sources.append(display_path(codeowners))
    return teams, (", ".join(sources) if sources else None)
