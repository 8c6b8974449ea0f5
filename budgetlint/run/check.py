"""The check pipeline: files -> documents -> model -> rules -> a Report.

No click, no printing: the CLI calls :func:`run_check` and renders the
returned :class:`~budgetlint.report.Report`.

Two ways through, with the same findings:

* **Streaming** (the default): hardware, model and teams definitions are
  read first, then the budgets files one at a time; each file's budgets are
  built, every budget-scoped rule runs on them and their suppressions are
  applied, and only the findings and report rows are kept. Memory stays flat
  however many files a repository has (docs/performance.md).
* **Whole run**: every document is held at once. Used when a rule must see
  all budgets together: ``--bench`` files (they apply to whichever budgets
  they match, or to the only budget of the run), ``--base`` (the PR diff
  points at budgets by name), ``budgetlint explain`` (:func:`build_context`),
  and as the fallback when a definition turns up in a file that did not look
  like one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from budgetlint.files import fs
from budgetlint.model.build import Catalog, Sink, _as_list, add_entries, build_budget
from budgetlint.files.discovery import discover, display_path
from budgetlint.findings import Finding, Location, Severity
from budgetlint.files.loader import Document, load_file, read_text
from budgetlint.model.types import Budget
from budgetlint.model.owners import codeowners_handles, find_codeowners
from budgetlint.report import BudgetResult, Report

KINDS = ("budgets", "hardware", "models", "teams")
DEFINITION_KINDS = ("hardware", "models", "teams")


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
    config: Any = None  # budgetlint.options.config_file.Config: select/ignore, per-file ignores, severity overrides
    base_ref: str | None = None  # compare with the budgets at this git ref (budgetlint.run.diff)
    fail_on_regression: bool = False
    regression_threshold: float = 0.0
    #: extra folders a run may read in (--allow-read, config allow-read); see discovery.read_roots
    allow_read: list[str] = field(default_factory=list)
    #: the folders this run reads in, set by run_check from its paths (None: no limit)
    roots: list[str] | None = None
    #: benchmark files larger than this are refused unread (None: bench.MAX_BENCH_BYTES)
    max_bench_bytes: int | None = None


@dataclass
class Context:
    """Everything a rule may look at.

    ``budgets`` are the budgets the rule is run on: all of them in a whole
    run, one file's in a streaming run. ``total_budgets`` counts the run's
    budgets either way; rules with ``SCOPE = "run"`` (run once, on a context
    with no budgets in a streaming run) look only at it.
    """

    budgets: list[Budget]
    catalog: Catalog
    teams: dict[str, Location]
    teams_source: str | None
    options: Options
    cache: dict[str, Any] = field(default_factory=dict)
    total_budgets: int = -1

    def __post_init__(self) -> None:
        if self.total_budgets < 0:
            self.total_budgets = len(self.budgets)


class InputError(Exception):
    """Input that could not be read at all (exit code 2)."""


class _Restart(Exception):
    """A streaming run met a definition it had not read first: do a whole run."""


def _load_builtin_catalog(sink: Sink) -> Catalog:
    from budgetlint.model.catalog import builtin_document

    catalog = Catalog()
    for kind in ("hardware", "models"):
        doc = builtin_document(kind)
        if doc is not None:
            add_entries(catalog, doc, kind, sink, builtin=True)
    return catalog


def run_check(paths: list[str], options: Options | None = None) -> Report:
    """Check ``paths`` (files or directories); raise InputError if one does not exist."""
    options = options or Options()
    if options.roots is None:
        from dataclasses import replace

        from budgetlint.files.discovery import read_roots

        options = replace(options, roots=read_roots(paths, options.allow_read))
    if not options.bench and not options.base_ref:
        try:
            return _run_streaming(paths, options)
        except _Restart:
            pass
    return _run_whole(paths, options)


def _run_whole(paths: list[str], options: Options) -> Report:
    report, ctx = build_context(paths, options)
    from budgetlint.rules import all_rules

    for rule in all_rules():
        if rule.check is not None:
            report.findings.extend(rule.check(ctx))
    report.budgets.extend(_results(ctx))
    if ctx.options.base_ref:
        from budgetlint.run.diff import attach_diff

        attach_diff(report, ctx, paths)
    from budgetlint.run.policy import apply_policy

    return apply_policy(report, ctx.options.config, ctx)


# a document that may define hardware, models or teams; a miss is caught (_Restart)
_DEFINES = re.compile(r"""kind['"]?\s*:\s*['"]?(?:hardware|models|teams)\b""")


def _run_streaming(paths: list[str], options: Options) -> Report:
    from budgetlint.run.policy import apply_policy, apply_suppressions, today
    from budgetlint.rules import all_rules

    found = discover(paths, options.roots)
    if found.missing:
        raise InputError("no such file or directory: " + ", ".join(found.missing))
    report = Report()
    report.findings.extend(found.findings)

    # 1. definitions first: files that look like they hold some are read now
    early: dict[Path, tuple[list[Finding], dict[str, list[Document]], set[tuple[str, str]]]] = {}
    by_kind: dict[str, list[Document]] = {k: [] for k in DEFINITION_KINDS}
    for path in found.files:
        text, _ = read_text(path, "")
        if text is None or _DEFINES.search(text):
            checked = _checked(path, display_path(path))
            early[path] = checked
            for kind in DEFINITION_KINDS:
                by_kind[kind].extend(checked[1][kind])
    sink = Sink()
    catalog, teams, teams_source = _definitions(by_kind, _sibling_definitions(paths, found.files),
                                                found.files, options, report, sink)
    report.findings.extend(sink.findings)

    # 2. budgets, one file at a time
    rules = [r for r in all_rules() if r.check is not None]
    per_budget = [r for r in rules if r.scope == "budget"]
    on = today()
    seen: dict[str, Location] = {}
    reported: set[Finding] = set()  # file-level findings (a shared benchmark file) once per run
    carried: dict[Any, Any] = {}  # benchmark files read once per run
    total = 0
    for path in found.files:
        report.files.append(display_path(path))
        if path in early:
            findings, docs, invalid = early.pop(path)
        else:
            findings, docs, invalid = _checked(path, display_path(path))
            if any(docs[k] for k in DEFINITION_KINDS):
                raise _Restart
        batch = Report(findings=findings)
        bsink = Sink()
        budgets = _build_budgets(docs["budgets"], catalog, bsink, seen, invalid)
        batch.findings.extend(bsink.findings)
        if not budgets:
            report.findings.extend(batch.findings)
            continue
        total += len(budgets)
        ctx = Context(budgets, catalog, teams, teams_source, options, cache=carried)
        for rule in per_budget:
            for f in rule.check(ctx):
                if f.budget is None:
                    if f in reported:
                        continue
                    reported.add(f)
                batch.findings.append(f)
        batch.budgets.extend(_results(ctx))
        raised = apply_suppressions(batch, budgets, on)  # replaces batch.findings
        batch.findings.extend(raised)
        report.findings.extend(batch.findings)
        report.budgets.extend(batch.budgets)
        report.suppressed.extend(batch.suppressed)
        carried = {k: v for k, v in ctx.cache.items() if isinstance(k, tuple) and k[0] == "bench-file"}

    run_ctx = Context([], catalog, teams, teams_source, options, total_budgets=total)
    for rule in rules:
        if rule.scope == "run":
            report.findings.extend(rule.check(run_ctx))
    return apply_policy(report, options.config, None, on=on)


def _checked(path: Path, display: str) -> tuple[list[Finding], dict[str, list[Document]], set[tuple[str, str]]]:
    """Load one file and validate its documents.

    Returns the findings, the valid-kind documents by kind (schema errors or
    not) and the budgets with schema errors, as (file, name): no physics on
    them. (By name alone, a schema error in one file's 'chat' would have
    switched off the checks of another file's 'chat'.)
    """
    from budgetlint.files import schema as schema_mod
    findings: list[Finding] = []
    by_kind: dict[str, list[Document]] = {k: [] for k in KINDS}
    invalid: set[str] = set()
    loaded = load_file(path, display)
    findings.extend(loaded.findings)
    for doc in loaded.documents:
        kind = doc.data.get("kind") if isinstance(doc.data, dict) else None
        if kind not in KINDS:
            if doc.data is None:
                continue
            got = f"kind {kind!r}" if kind is not None else "no 'kind'"
            findings.append(Finding(
                "BL013", Severity.WARNING,
                f"not a budgetlint document ({got}); expected kind: budgets, hardware, models or teams; skipped",
                doc.loc(("kind",)) if kind is not None else doc.loc(())))
            continue
        schema_findings = schema_mod.validate(doc, kind)
        findings.extend(schema_findings)
        invalid.update((doc.file, f.budget) for f in schema_findings if f.budget)
        by_kind[kind].append(doc)
    return findings, by_kind, invalid


def build_context(paths: list[str], options: Options | None = None) -> tuple[Report, Context]:
    """Load, validate and build everything at once; the rules have not run yet."""
    options = options or Options()
    found = discover(paths, options.roots)
    if found.missing:
        raise InputError("no such file or directory: " + ", ".join(found.missing))
    report = Report()
    report.findings.extend(found.findings)
    by_kind: dict[str, list[Document]] = {k: [] for k in KINDS}
    invalid_budgets: set[tuple[str, str]] = set()  # (file, budget) with schema errors: no physics on guesses
    for path in found.files:
        display = display_path(path)
        report.files.append(display)
        findings, docs, invalid = _checked(path, display)
        report.findings.extend(findings)
        invalid_budgets |= invalid
        for kind in KINDS:
            by_kind[kind].extend(docs[kind])

    sink = Sink()
    catalog, teams, teams_source = _definitions(by_kind, _sibling_definitions(paths, found.files),
                                                found.files, options, report, sink)
    budgets = _build_budgets(by_kind["budgets"], catalog, sink, {}, invalid_budgets)
    report.findings.extend(sink.findings)
    return report, Context(budgets, catalog, teams, teams_source, options)


def _definitions(by_kind: dict[str, list[Document]], context_docs: list[Document], files: list[Path],
                 options: Options, report: Report, sink: Sink) -> tuple[Catalog, dict[str, Location], str | None]:
    """The catalog (built-in, then the checked files', then context files') and the teams."""
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
        by_kind["teams"] + [d for d in context_docs if d.data["kind"] == "teams"], files, options, report)
    return catalog, teams, teams_source


def _build_budgets(docs: list[Document], catalog: Catalog, sink: Sink, seen: dict[str, Location],
                   invalid: set[tuple[str, str]]) -> list[Budget]:
    """Model objects for the budgets in ``docs``; ``seen`` (name -> where) spans the run (BL009)."""
    budgets: list[Budget] = []
    for doc in docs:
        for i, entry in enumerate(_as_list(doc.get(("budgets",)))):
            if not isinstance(entry, dict):
                continue
            budget = build_budget(doc, i, catalog, sink)
            if (doc.file, budget.name) in invalid:
                budget.complete = False
            if isinstance(entry.get("name"), str):
                if budget.name in seen:
                    sink.add("BL009", f"budget {budget.name!r} is already defined at {seen[budget.name]}",
                             budget.loc("name"), budget=budget.name, fix="rename one of them")
                    continue
                seen[budget.name] = budget.loc("name")
            budgets.append(budget)
    return budgets


def _results(ctx: Context) -> list[BudgetResult]:
    return [BudgetResult(
        name=b.name, file=b.doc.file, line=b.loc().line, owner=b.owner, percentile=b.percentile,
        promises=_promises(b), analysis=ctx.cache.get(("analysis-dict", b.name), {}),
        verdicts=ctx.cache.get(("verdicts", b.name), {}),
    ) for b in ctx.budgets]


def _sibling_definitions(paths: list[str], checked: list[Path]) -> list[Document]:
    """Hardware, model and teams documents beside a file named on the command line.

    `budgetlint check budgets/chat.yaml` must resolve the hardware, models and
    owners that chat.yaml's folder defines, or it would report them as
    undefined (a false alarm). These documents are context only: they are
    neither counted nor reported on; check them by naming them or their folder.
    """
    import os

    from budgetlint.files import schema as schema_mod
    seen = {os.path.realpath(p) for p in checked}
    out: list[Document] = []
    folders = sorted({Path(p).parent for p in paths if fs.is_file(Path(p))})
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = folder / name
            if not name.endswith((".yaml", ".yml")) or os.path.realpath(path) in seen or not fs.is_file(path):
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
        if options.codeowners and not fs.is_file(Path(options.codeowners)):
            raise InputError(f"no such CODEOWNERS file: {options.codeowners}")
        codeowners = Path(options.codeowners) if options.codeowners else (
            find_codeowners(files[0]) if files else find_codeowners(Path.cwd()))
        if codeowners is not None and fs.is_file(codeowners):
            for handle, where in codeowners_handles(codeowners).items():
                teams.setdefault(handle, Location(display_path(Path(where.file)), where.line, where.column))
            sources.append(display_path(codeowners))
    return teams, (", ".join(sources) if sources else None)
