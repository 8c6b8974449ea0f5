"""The check pipeline: files -> documents -> model -> evaluation -> rules -> a Report.

No click, no printing: the CLI calls :func:`run_check` (or :func:`evaluate_run`
for ``explain``) and renders the returned :class:`~budgetlint.report.Report`.

One way through, in three passes:

1. **Definitions first.** Files whose text names ``kind: hardware|models|teams``
   are read before any budget, so every budget resolves against the whole
   catalog. (A definition the quick look missed is met in pass 2: the run
   starts again with every file read in pass 1, the same pipeline.)
2. **Budgets, file by file.** Each file's budgets are built, each budget is
   evaluated once (:func:`budgetlint.evaluate.evaluate_budget`), every
   budget rule runs on (budget, evaluation), the file's suppressions apply,
   and only findings and report rows are kept, so memory stays flat however
   many files a repository has (docs/performance.md).
3. **The run.** Run rules (``check_run``) see what is about the run as a
   whole: its budget count, the ``--bench`` measurements no budget took.

What needs several budgets at once is explicit: with ``--bench`` the budgets
are all built before any is evaluated (a ``--bench`` file speaks for the
run's only budget), and with ``--base`` the budgets are kept for the PR diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from budgetlint.files import fs
from budgetlint.files.discovery import discover, display_path
from budgetlint.files.loader import Document, load_file, read_text
from budgetlint.findings import Finding, Location, Severity
from budgetlint.model.build import Catalog, Sink, _as_list, add_entries, build_budget
from budgetlint.model.owners import CodeownersUnreadable, codeowners_handles, find_codeowners
from budgetlint.model.types import Budget
from budgetlint.report import BudgetResult, Report

KINDS = ("budgets", "hardware", "models", "teams")
DEFINITION_KINDS = ("hardware", "models", "teams")


from budgetlint.options import Options  # noqa: E402  (re-exported: the pipeline's input)


from budgetlint.files import InputError  # noqa: E402  (re-exported)


class _LateDefinition(Exception):
    """Pass 2 met a definition pass 1 had not read: start again, reading every file first."""


def _load_builtin_catalog(sink: Sink) -> Catalog:
    from budgetlint.model.catalog import builtin_document

    catalog = Catalog()
    for kind in ("hardware", "models"):
        doc = builtin_document(kind)
        if doc is not None:
            add_entries(catalog, doc, kind, sink, builtin=True)
    return catalog


@dataclass
class RunResult:
    """A run's report, and (when asked for) every budget's evaluation."""

    report: Report
    catalog: Catalog
    evaluations: list[Any] = field(default_factory=list)  # BudgetEvaluation, when keep=True


def run_check(paths: list[str], options: Options | None = None) -> Report:
    """Check ``paths`` (files or directories); raise InputError if one does not exist."""
    return evaluate_run(paths, options).report


def evaluate_run(paths: list[str], options: Options | None = None, *, keep: bool = False,
                 read_all_first: bool = False) -> RunResult:
    """The pipeline; with ``keep``, the evaluations are kept (``explain``)."""
    options = options or Options()
    if options.roots is None:
        from dataclasses import replace

        from budgetlint.files.discovery import read_roots

        options = replace(options, roots=read_roots(paths, options.allow_read))
    found = discover(paths, options.roots)
    if found.missing:
        raise InputError("no such file or directory: " + ", ".join(found.missing))
    if not read_all_first:
        try:
            return _run(paths, found, options, keep, read_all_first=False)
        except _LateDefinition:
            pass
    return _run(paths, found, options, keep, read_all_first=True)


#: called as ``PROGRESS(files_done, files_total)`` after each file's share of the report is in (the
#: CLI's progress line on a terminal, cli_check.Progress); None: nothing is called
PROGRESS: Any = None

# a document that may define hardware, models or teams; a miss is caught (_LateDefinition)
_DEFINES = re.compile(r"""kind['"]?\s*:\s*['"]?(?:hardware|models|teams)\b""")


@dataclass
class _FileBudgets:
    path: Path
    findings: list[Finding]
    budgets: list[Budget]


def _run(paths: list[str], found: Any, options: Options, keep: bool, *, read_all_first: bool) -> RunResult:
    from budgetlint.evaluate import Environment
    from budgetlint.evaluate.evidence import linking, store as bench_store
    from budgetlint.rules import RuleContext, checks
    from budgetlint.run.policy import apply_policy, apply_suppressions, policy_findings, today

    report = Report()
    report.findings.extend(found.findings)

    # 1. definitions first
    early: dict[Path, tuple[list[Finding], dict[str, list[Document]], set[tuple[str, str]]]] = {}
    by_kind: dict[str, list[Document]] = {k: [] for k in DEFINITION_KINDS}
    sizes: dict[Path, int] = {}  # characters per file: is the run worth worker processes?
    for path in found.files:
        if not read_all_first:
            text, _ = read_text(path, "")
            if text is not None:
                sizes[path] = len(text)
                if not _DEFINES.search(text):
                    continue
        checked = _checked(path, display_path(path))
        early[path] = checked
        for kind in DEFINITION_KINDS:
            by_kind[kind].extend(checked[1][kind])
    sink = Sink()
    catalog, teams, teams_source, codeowners_unread = _definitions(by_kind, _sibling_definitions(paths, found.files),
                                                found.files, options, report, sink)
    report.findings.extend(sink.findings)

    # 2. budgets, file by file
    seen: dict[str, Location] = {}

    def files() -> Iterator[_FileBudgets]:
        for path in found.files:
            report.files.append(display_path(path))
            if path in early:
                findings, docs, invalid = early.pop(path)
            else:
                findings, docs, invalid = _checked(path, display_path(path))
                if any(docs[k] for k in DEFINITION_KINDS):
                    raise _LateDefinition
            bsink = Sink()
            budgets = _build_budgets(docs["budgets"], catalog, bsink, seen, invalid)
            yield _FileBudgets(path, findings + bsink.findings, budgets)

    # --bench speaks for the run's only budget: count them all before evaluating any
    run_wide = bool(options.bench or options.base_ref)
    batches: Any = list(files()) if run_wide else files()
    store = bench_store.BenchStore(options.bench_format, max_bytes=options.max_bench_bytes, roots=options.roots)
    bench_paths, bench_globs = bench_store.expand_cli_bench(options.bench)
    run_files = tuple(store.read(Path(raw), display_path(Path(raw))) for raw in bench_paths)
    on = today()
    env = Environment(catalog, options.assumptions(), store, run_files,
                      only_budget=run_wide and sum(len(fb.budgets) for fb in batches) == 1,
                      today=on, evidence_defaults=options.evidence_defaults(),
                      simulate=options.simulate,
                      calibration_max_age_days=options.calibration_max_age_days(),
                      deployed_discovery=options.deployed_discovery(), prices=options.prices())
    env.load_disk = options.cache_folder()
    if env.load_disk is not None:  # a cache that cannot be kept is said (stderr), as ruff says it
        from budgetlint.evaluate import load_disk

        why = load_disk.why_not_kept(env.load_disk)
        if why is not None:
            words, readable = why
            report.notices.append(f"the simulation cache {env.load_disk} keeps nothing ({words}): "
                                  + ("its entries are read, and what is simulated is not kept" if readable else
                                     "every budget with traffic is simulated afresh")
                                  + "; give --cache-dir a folder this run may write in, or --no-cache")
            if not readable:
                env.load_disk = None
    if options.simulate:
        from budgetlint.evaluate.workbudget import WorkBudget

        env.work = WorkBudget(shared=False)  # shared (WorkBudget.share) just before any worker forks
    env.slo_export = options.slo_export
    if options.prometheus:
        from budgetlint.evaluate.prometheus_live import LiveSource

        env.prometheus = LiveSource(options.prometheus, options.prometheus_window)

    rules = [r for r in checks() if r.check is not None]
    run_rules = [r for r in checks() if r.check_run is not None]
    from budgetlint.model.suggest import Suggester

    suggest_owner = Suggester(sorted(teams), cutoff=0.5)  # one per run: its work is bounded per run
    rctx = RuleContext(teams, teams_source, options, suggest_owner=suggest_owner)
    reported: set[Any] = set()  # findings about a file, not a budget (a shared benchmark file): once
    per_budget_evidence = []
    kept_budgets: list[Budget] = []
    result = RunResult(report, catalog)
    total = 0
    stage = _Stage(env, rules, rctx, options, on, keep)

    config = options.config
    if config is None:
        from budgetlint.options.config_file import Config

        config = Config()
    may_spill = not (options.base_ref or keep)  # the diff and explain need every budget at hand

    done = 0

    def merge(file_findings: list[Finding], budgets: int, checked: _FileChecked | None,
              kept: list[Budget]) -> None:
        nonlocal total, done
        if PROGRESS is not None:
            done += 1
            PROGRESS(done, len(found.files))
        if not budgets or checked is None:
            report.findings.extend(policy_findings(file_findings, config) if report.spilled else file_findings)
            return
        total += budgets
        findings = checked.findings
        for f in checked.unbudgeted:  # already said about an earlier file: once per run
            key = _once(f)
            if key in reported:
                findings = [g for g in findings if g is not f]
            else:
                reported.add(key)
        report.findings.extend(policy_findings(findings, config) if report.spilled else findings)
        report.budgets.extend(checked.rows)
        report.suppressed.extend(checked.suppressed)
        if run_files:  # only the --bench run rule reads them
            per_budget_evidence.extend(checked.evidence)
        result.evaluations.extend(checked.evaluations)
        if options.base_ref:
            kept_budgets.extend(kept)
        if may_spill and not report.spilled and len(report.budgets) >= SPILL_AFTER_BUDGETS:
            report.findings = policy_findings(report.findings, config)  # what is spilled is final
            report.spill()

    jobs = _jobs(options.jobs)
    pending = [p for p in found.files if p not in early]
    if run_wide or keep or jobs < 2 or run_files or not _worth_workers(pending, sizes, jobs):
        for fb in batches:
            merge(fb.findings, len(fb.budgets), stage.check(fb) if fb.budgets else None, fb.budgets)
    else:
        def serial(path: Path) -> None:  # the file as the one-process run checks it
            report.files.append(display_path(path))
            if path in early:
                findings, docs, invalid = early.pop(path)
            else:
                findings, docs, invalid = _checked(path, display_path(path))
            bsink = Sink()
            budgets = _build_budgets(docs["budgets"], catalog, bsink, seen, invalid)
            merge(findings + bsink.findings, len(budgets), stage.check(_FileBudgets(path, findings + bsink.findings,
                                                                                    budgets)) if budgets else None,
                  budgets)

        _parallel(found.files, early, pending, jobs, catalog, seen, stage, report, serial, merge)

    # 3. the run
    run_ctx = RuleContext(teams, teams_source, options, total_budgets=total, run_files=run_files,
                          unlinked=tuple(linking.unlinked(run_files, per_budget_evidence)),
                          paths=tuple(paths), bench_globs=tuple(bench_globs), suggest_owner=suggest_owner,
                          first_path_is_file=bool(paths) and fs.is_file(Path(paths[0])),
                          codeowners_unread=codeowners_unread)
    tail: list[Finding] = []
    for rule in run_rules:
        for f in rule.check_run(run_ctx):
            if f.budget is None:
                if _once(f) in reported:
                    continue
                reported.add(_once(f))
            tail.append(f)
    report.findings.extend(policy_findings(tail, config) if report.spilled else tail)
    if options.base_ref:
        from budgetlint.run.diff import attach_diff

        attach_diff(report, kept_budgets, options, paths, run_check)
        raised = apply_suppressions(report, kept_budgets, on)  # replaces report.findings
        report.findings.extend(raised)
    apply_policy(report, options.config, on=on)
    if env.load_disk is not None:  # the entries no run has read for a month go (at most once a day)
        from budgetlint.evaluate import load_disk

        load_disk.prune(env.load_disk)
    return result


@dataclass
class _FileChecked:
    """One budgets file's share of the report, as pass 2 leaves it (picklable, for worker processes)."""

    findings: list[Finding]  # the file's findings, rule findings and suppression findings, suppressions applied
    unbudgeted: list[Finding]  # the rule findings naming no budget (said once per run: the merge drops repeats)
    rows: list[BudgetResult]
    suppressed: list[Any]
    evidence: list[Any]  # each budget's BudgetEvidence (the run rules' --bench pass)
    evaluations: list[Any] = field(default_factory=list)  # with keep (``explain``)


@dataclass
class _Stage:
    """Pass 2 for one file: evaluate each budget once, run the budget rules, apply suppressions."""

    env: Any
    rules: list[Any]
    rctx: Any
    options: Options
    on: Any
    keep: bool

    def check(self, fb: _FileBudgets) -> _FileChecked:
        from budgetlint.evaluate import evaluate_budget
        from budgetlint.judge import judged
        from budgetlint.run.policy import apply_suppressions

        batch = Report(findings=list(fb.findings))
        unbudgeted: list[Finding] = []
        said: set[Finding] = set()
        out = _FileChecked([], unbudgeted, [], [], [])
        for b in fb.budgets:
            ev = judged(evaluate_budget(b, self.env))  # evaluate/, then judge/: one verdict per promise
            b = ev.budget  # with its `from_bench` lengths read
            out.evidence.append(ev.evidence)
            for rule in self.rules:
                for f in rule.check(b, ev, self.rctx):
                    if f.budget is None:
                        if f in said:
                            continue
                        said.add(f)
                        unbudgeted.append(f)
                    batch.findings.append(f)
            batch.budgets.append(_result(b, ev))
            if self.keep:
                out.evaluations.append(ev)
        if not self.options.base_ref:  # with --base, after the diff: a budget may suppress its BL505
            raised = apply_suppressions(batch, fb.budgets, self.on)  # replaces batch.findings
            batch.findings.extend(raised)
        out.findings, out.rows, out.suppressed = batch.findings, batch.budgets, batch.suppressed
        return out


# --------------------------------------------------------------------------- pass 2 in worker processes

#: A run holding this many budgets keeps its findings and report rows on disk from then on
#: (budgetlint.spill_to_disk): at about 5 KiB a budget, 100,000 budgets held 660 MiB (docs/performance.md).
SPILL_AFTER_BUDGETS = 5_000

#: Below this many characters of budget files, worker processes cost more than they save
#: (a fork and a pickled result per file against ~1.5 ms per budget; docs/performance.md).
MIN_PARALLEL_CHARS = 200_000


#: ``--jobs`` asks for at most this many worker processes a core: more only queue for the same cores, each
#: a forked process (``--jobs 400`` on 1,000 files forked 400 until stop 47)
MAX_JOBS_PER_CORE = 4


def _cores() -> int:
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _jobs(jobs: int | None) -> int:
    """``--jobs``: 0 or None is the cores this process may run on; more than :data:`MAX_JOBS_PER_CORE` a core
    is that many (the output is the same whatever the workers)."""
    cores = _cores()
    if jobs:
        return max(1, min(int(jobs), MAX_JOBS_PER_CORE * cores))
    return cores


def _worth_workers(pending: list[Path], sizes: dict[Path, int], jobs: int) -> bool:
    if len(pending) < 2 * jobs or sum(sizes.get(p, 0) for p in pending) < MIN_PARALLEL_CHARS:
        return False  # a small run: no multiprocessing import (~5 ms of every cold start)
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()  # workers inherit the definitions by fork


#: what a forked worker inherits from the parent: (catalog, stage), set just before the fork
_WORKER: Any = None


@dataclass
class _WorkerFile:
    path: Path
    late: bool  # the file defines hardware, models or teams: pass 1 missed it
    findings: list[Finding] = field(default_factory=list)  # load, schema and build findings
    names: list[tuple[str, Location]] = field(default_factory=list)  # budget names first seen in the file
    budgets: int = 0
    checked: _FileChecked | None = None


def _work(path: Path) -> _WorkerFile:
    """In a worker: pass 2 for one file, with the definitions inherited from the parent."""
    catalog, stage = _WORKER
    findings, docs, invalid = _checked(path, display_path(path))
    if any(docs[k] for k in DEFINITION_KINDS):
        return _WorkerFile(path, True)
    bsink = Sink()
    seen: dict[str, Location] = {}  # this file's names; the parent holds the run's (BL009)
    budgets = _build_budgets(docs["budgets"], catalog, bsink, seen, invalid)
    file_findings = findings + bsink.findings
    checked = stage.check(_FileBudgets(path, file_findings, budgets)) if budgets else None
    if checked is not None:
        for row in checked.rows:  # a mapping proxy does not pickle; the parent wraps it again
            row.analysis = dict(row.analysis)
    return _WorkerFile(path, False, file_findings, list(seen.items()), len(budgets), checked)


def _parallel(files: list[Path], early: dict, pending: list[Path], jobs: int, catalog: Any,
              seen: dict[str, Location], stage: _Stage, report: Report, serial: Any, merge: Any) -> None:
    """Pass 2 over ``pending`` in ``jobs`` forked workers, merged in file order.

    The output is the one-process run's, byte for byte: results are taken in
    file order; a file whose budget name an earlier file already took (BL009
    spans the run) is checked again here with the run's names, as one process
    would; a rule finding about no budget is kept once per run.
    """
    import multiprocessing
    from types import MappingProxyType

    from budgetlint.evaluate import load_share

    global _WORKER
    _WORKER = (catalog, stage)
    chunk = max(1, min(16, len(pending) // (jobs * 8)))
    load_share.open_run()  # the workers share their load simulations through it
    if stage.env.work is not None:
        stage.env.work.share()  # the workers draw on one count of the run's simulated events
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.imap(_work, pending, chunk)
            for path in files:
                if path in early:
                    serial(path)
                    continue
                got: _WorkerFile = next(results)
                if got.late:
                    raise _LateDefinition
                if any(name in seen for name, _ in got.names):
                    early[path] = _checked(path, display_path(path))
                    serial(path)
                    continue
                report.files.append(display_path(path))
                seen.update(got.names)
                if got.checked is not None:
                    for row in got.checked.rows:
                        row.analysis = MappingProxyType(row.analysis)
                merge(got.findings, got.budgets, got.checked, [])
    finally:
        _WORKER = None
        load_share.close_run()


def _once(f: Finding) -> Any:
    """What makes a finding about no budget the same one again: a worker names a shared benchmark
    file by the path of the first budget *it* met (team2/../shared.json), one process by the run's first."""
    if f.location is None:
        return f
    import os

    return (f.rule, f.severity, f.message, os.path.realpath(f.location.file), f.location.line,
            f.location.column, f.promise, f.fix)


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
            if doc.data is None or kind == "calibration":  # read where a deployment names it (docs/calibration.md)
                continue
            got = f"kind {kind!r}" if kind is not None else "no 'kind'"
            meant = _meant_kind(doc.data, kind)
            if meant is not None:  # a budgetlint document with its kind mistyped: an error, never a silent skip
                findings.append(Finding(
                    "BL013", Severity.ERROR,
                    f"{got}: did you mean {meant!r}? The document has `version:` and a `{meant}:` key but is "
                    f"not read; expected kind: budgets, hardware, models or teams",
                    doc.loc(("kind",)) if kind is not None else doc.loc(()), fix=f"kind: {meant}"))
                continue
            findings.append(Finding(
                "BL013", _declared("BL013"),
                f"not a budgetlint document ({got}); expected kind: budgets, hardware, models or teams; skipped",
                doc.loc(("kind",)) if kind is not None else doc.loc(())))
            continue
        schema_findings = schema_mod.validate(doc, kind)
        findings.extend(schema_findings)
        invalid.update((doc.file, f.budget) for f in schema_findings if f.budget)
        by_kind[kind].append(doc)
    return findings, by_kind, invalid


def _meant_kind(data: Any, kind: Any) -> str | None:
    """The kind a document with ``version:``, a ``kind:`` budgetlint does not know, and a
    ``budgets:``/``teams:``/``hardware:``/``models:`` key meant (``kind: budget`` -> ``budgets``: the closest kind to what is written, else the key's);
    None for YAML that is no budgetlint document."""
    if not isinstance(data, dict) or "version" not in data or kind is None:
        return None  # no kind at all stays the BL013 warning (other YAML can share a folder)
    keys = [k for k in KINDS if k in data]
    if not keys:
        return None
    if isinstance(kind, str):
        import difflib

        close = difflib.get_close_matches(kind.strip().lower(), list(KINDS), n=1, cutoff=0.6)
        if close:
            return close[0]
    return keys[0]


def _definitions(by_kind: dict[str, list[Document]], context_docs: list[Document], files: list[Path],
                 options: Options, report: Report, sink: Sink) -> tuple[Catalog, dict[str, Location], str | None, str | None]:
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
    teams, teams_source, codeowners_unread = _collect_teams(
        by_kind["teams"] + [d for d in context_docs if d.data["kind"] == "teams"], files, options, report)
    return catalog, teams, teams_source, codeowners_unread


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


def _declared(code: str) -> Severity:
    """The severity rule ``code`` declares."""
    from budgetlint.rules import get_rule

    return get_rule(code).severity


def _result(b: Budget, ev: Any) -> BudgetResult:
    return BudgetResult(
        name=b.name, file=b.doc.file, line=b.loc().line, owner=b.owner, percentile=b.percentile,
        promises=_promises(b), analysis=ev.analysis, verdicts=ev.verdict_words(),
        load=ev.load.as_dict() if ev.load is not None else None,
        judgement={k: j.as_dict() for k, j in ev.judgement.items()},
    )


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
    if p.throughput_request_per_s is not None:
        out["throughput_request_per_s"] = p.throughput_request_per_s
    if p.throughput_token_per_s is not None:
        out["throughput_token_per_s"] = p.throughput_token_per_s
    if p.cost_usd_per_token is not None:
        out["cost_usd_per_token"] = p.cost_usd_per_token
    for seg in b.segments:  # the segments the physics judges
        if seg.kind == "prefill" and seg.allowance_s:
            out[f"segment:{seg.name}_s"] = seg.allowance_s
        elif seg.kind == "decode" and seg.pace_token_per_s:
            out[f"segment:{seg.name}_token_per_s"] = seg.pace_token_per_s
    return out


def _collect_teams(docs: list[Document], files: list[Path], options: Options,
                   report: Report) -> tuple[dict[str, Location], str | None, str | None]:
    """The valid owner handles, the files they came from (in words), and the CODEOWNERS found in the
    repository that could not be read (its path; a warning is in ``report``), if one was."""
    teams: dict[str, Location] = {}
    unread: str | None = None
    sources: list[str] = []
    for doc in docs:
        for i, entry in enumerate(_as_list(doc.get(("teams",)))):
            if isinstance(entry, dict) and isinstance(entry.get("handle"), str):
                teams.setdefault(entry["handle"].lower(), doc.loc(("teams", i, "handle")))
        sources.append(doc.file)
    if options.use_codeowners:
        if options.codeowners and not fs.is_file(Path(options.codeowners)):
            raise InputError(fs.no_file_words(Path(options.codeowners), "CODEOWNERS"))
        codeowners = Path(options.codeowners) if options.codeowners else (
            find_codeowners(files[0]) if files else find_codeowners(Path.cwd()))
        if codeowners is not None:
            try:
                handles = codeowners_handles(codeowners)
            except CodeownersUnreadable as exc:
                if options.codeowners:  # named on the command line: a bad flag, as a pipe or a missing file is
                    raise InputError(f"{display_path(codeowners)}: {exc.words}") from None
                # found in the repository: the owner checks could not use it, said, never a quiet pass
                unread = display_path(codeowners)
                report.findings.append(Finding(
                    exc.code, Severity.WARNING, f"{exc.words}; owners are not verified against it", Location(unread),
                    fix="make it a regular UTF-8 file under 3 MB, or pass --no-codeowners"))
            else:
                for handle, where in handles.items():
                    teams.setdefault(handle, Location(display_path(Path(where.file)), where.line, where.column))
                sources.append(display_path(codeowners))
    return teams, (", ".join(sources) if sources else None), unread
