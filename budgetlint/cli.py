"""The command line: parses options, calls the core, renders, maps exit codes.

Exit codes: 0 no finding at or above the fail level; 1 findings at or above
it; 2 usage error or input that could not be read at all; 3 internal error
(a bug: the traceback is shown only with ``BUDGETLINT_TRACEBACK=1``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from budgetlint import __version__
from budgetlint.findings import printable
from budgetlint.text import numbers

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

from budgetlint.reporters import FORMATS  # the registry: one list of formats
from budgetlint import cli_check as _conventions  # check's -, --fix, --diff, --exit-zero, ... (issue 27)


def _internal_error(exc: BaseException) -> None:
    if os.environ.get("BUDGETLINT_TRACEBACK"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__)
    click.echo(f"budgetlint: internal error: {type(exc).__name__}: {exc}\n"
               "This is a bug in budgetlint; set BUDGETLINT_TRACEBACK=1 to see the traceback "
               "and please report it.", err=True)
    sys.exit(EXIT_INTERNAL)


#: the collector's thresholds when budgetlint runs as its own process (Python's defaults: 700, 10,
#: 10). A run keeps what it reports (rows, findings, shared analyses) and makes no reference cycles of
#: its own, yet each full pass traverses all of it: at 10,000 budgets 20 full passes (that found
#: nothing) were 1.1 s of 7 s CPU. A full pass every 100 middle-generation passes instead of 10, and
#: young passes every 50,000 net allocations (a check of budgets/, ~18,000 after its first imports,
#: needs none), took the run to 5.9 s, peak memory the same (benchmarks/bench_speed.py,
#: docs/performance.md). Young passes every 200,000 (issue 28): a simulating check of 20 budgets
#: with distinct traffic keeps its requests' records and iterations (~100,000 containers) and made a
#: young and a middle pass over them (33-53 ms of ~1 s CPU), now none; the 10,000-budget run's peak
#: memory the same (109.7 MB either way, --jobs 2). Cycles are still collected; only less often.
GC_THRESHOLDS = (200_000, 10, 100)


def _own_process_gc() -> None:
    """Tune the collector for a process budgetlint owns (the console script, ``python -m budgetlint``).

    The thresholds above (never lowered; a collector switched off stays off), and at exit every
    object frozen into the permanent generation (``gc.freeze``) before the interpreter's final full
    collection, which then has nothing to traverse: the process is ending and the operating system
    takes its memory back (that collection was ~10 ms of a ~130 ms check of budgets/). Nothing of
    the output or the exit code changes: atexit handlers run after the command has written
    everything. In-process callers (tests, a program calling ``main([...])``) are left as they are.
    """
    import atexit
    import gc

    before = gc.get_threshold()
    if before[0]:
        gc.set_threshold(*(max(mine, theirs) for mine, theirs in zip(GC_THRESHOLDS, before)))
    atexit.register(gc.freeze)


def _usage_error(exc: click.ClickException) -> None:
    """A usage error as every budgetlint error reads: ``budgetlint: error: ...`` (click's own says
    ``Error: ...``), after the usage line and the pointer to --help."""
    no_args = getattr(click.exceptions, "NoArgsIsHelpError", None)  # `budgetlint` alone: the help, as click shows it
    if no_args is not None and isinstance(exc, no_args):
        exc.show()
        return
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        click.echo(ctx.get_usage(), err=True)
        click.echo(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.\n", err=True)
    click.echo(f"budgetlint: error: {exc.format_message()}", err=True)


class _Group(click.Group):
    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        if args is None:  # the arguments are the process's own: budgetlint owns the process
            _own_process_gc()
        if not kwargs.pop("standalone_mode", True):
            return super().main(args, *rest, standalone_mode=False, **kwargs)
        try:  # click's standalone mode, with budgetlint's one error prefix
            code = super().main(args, *rest, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            _usage_error(exc)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("budgetlint: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # `budgetlint ... | head`: the reader left; say nothing
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_FINDINGS)
        except Exception as exc:  # the one place exceptions become exit codes
            _internal_error(exc)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="budgetlint")
def main() -> None:
    """budgetlint: latency budgets for LLM serving, checked like code.

    Declare each latency promise (TTFT, pace, end to end, at a percentile,
    with owners) in YAML; budgetlint validates the files, checks that every
    promise is owned and adds up, and uses roofline arithmetic to flag
    promises the hardware cannot keep.
    """


def _color(to_stdout: bool, choice: str = "auto") -> bool:
    """Whether to colour output: never into a file; ``--color always|never`` decide;
    with ``auto``: ``NO_COLOR`` (non-empty) turns it off, ``FORCE_COLOR`` (non-empty,
    not ``0``/``false``) on, ``TERM=dumb`` off, else colour only on a terminal."""
    if not to_stdout:
        return False  # an --output file never holds escape codes
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "").strip().lower() not in ("", "0", "false", "no"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


def _emit(report: Any, formats: tuple[str, ...], outputs: tuple[str, ...], sarif_info: bool = False,
          color: str = "auto") -> None:
    from budgetlint.reporters import get_chunks

    formats = formats or ("text",)
    if outputs and len(outputs) != len(formats):
        raise click.UsageError(
            f"{len(formats)} --format option(s) and {len(outputs)} --output path(s): give one --output per "
            "--format, in the same order ('-' for standard output), or none to write everything to "
            "standard output")
    for i, fmt in enumerate(formats):
        target = outputs[i] if i < len(outputs) else None
        extra = {"include_info": True} if fmt == "sarif" and sarif_info else {}
        to_stdout = target is None or target == "-"
        painted = _color(to_stdout, color)
        pieces = get_chunks(fmt)(report, color=painted, **extra)
        if to_stdout:
            last = ""
            batch: list[str] = []
            size = 0
            for piece in pieces:  # written as made, 64 KiB at a time: a large report is never held whole
                if piece:
                    batch.append(piece)
                    size += len(piece)
                    last = piece
                    if size >= 65536:
                        click.echo("".join(batch), nl=False, color=painted)  # click keeps what we decided
                        batch, size = [], 0
            if batch:
                click.echo("".join(batch), nl=False, color=painted)
            if not last.endswith("\n"):
                click.echo("")  # as before: an empty output is one newline
        else:
            try:
                write_atomically(target, pieces)
            except OSError as exc:
                raise click.UsageError(f"cannot write --output {target}: {exc.strerror or exc}") from None


def write_atomically(target: str, pieces: Any) -> None:
    """Write the text ``pieces`` to ``target`` so that a reader sees the old file or the whole new one.

    The text goes to a temporary file in the same folder, which then replaces
    ``target`` (``os.replace``: atomic on POSIX and Windows). Two runs writing
    one file leave one whole report; a run killed mid-write leaves the previous
    report and a stray temporary file at most. A target that exists and is not
    a regular file (``/dev/stdout``, a pipe) is written in place: renaming over
    it would replace the device.
    """
    import stat

    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "w", encoding="utf-8") as fh:
            for piece in pieces:
                fh.write(piece)
        return
    from budgetlint.files import fs

    fs.write_replacing(target, pieces, mode=None if mode is None else stat.S_IMODE(mode), sync=True)


def _say_notices(report: Any) -> None:
    """What the run could not do that is no finding (Report.notices: the simulation cache that keeps
    nothing), on standard error: check and explain say them alike."""
    for notice in report.notices:
        click.echo(f"budgetlint: warning: {printable(notice)}", err=True)


def _step_summary(report: Any) -> None:
    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return
    from budgetlint.reporters import get_reporter
    from budgetlint.reporters.step_summary import append_step_summary

    # a summary that cannot be appended fails nothing, but is said (never a quiet skip)
    append_step_summary(get_reporter("markdown")(report, color=False),
                        warn=lambda why: click.echo(f"budgetlint: warning: {printable(why)}", err=True))


def _options_of(*flags: Any) -> Any:
    """One decorator adding ``flags`` (click options) in the order given: the options several
    commands share are declared once here, with one help text."""
    def apply(f: Any) -> Any:
        for flag in reversed(flags):
            f = flag(f)
        return f
    return apply


#: check, explain: the realistic efficiencies a run assumes, for every deployment
_efficiency_options = _options_of(
    click.option("--efficiency-bandwidth", type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Realistic fraction of peak bandwidth for at-risk verdicts, for every deployment (default: the "
                      "median of public runs of the deployment's class, docs/calibration.md)."),
    click.option("--efficiency-compute", type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Realistic fraction of peak compute for at-risk verdicts, for every deployment (default 0.5)."),
    click.option("--collective-overhead", type=click.FloatRange(0, 1, max_open=True), default=None,
                 help="Fraction of a tensor-parallel decode step lost to the all-reduce, for every deployment "
                      "(default: the deployment class's, whether or not an efficiency is set; docs/calibration.md)."))
#: check, explain, slo
_config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), default=None,
    help="Config file (default: budgetlint.toml or pyproject.toml [tool.budgetlint], found from here up to the git root).")
#: check, explain
_no_simulate_option = click.option(
    "--no-simulate", is_flag=True, default=False,
    help="Do not simulate declared traffic (docs/load.md); the output says it was not simulated.")
#: check, explain: the simulation cache between runs (evaluate/load_disk.py)
_cache_options = _options_of(
    click.option("--no-cache", is_flag=True, default=False,
                 help="Simulate every budget afresh: neither read nor write the simulation cache "
                      "(also BUDGETLINT_NO_CACHE=1, or cache = false in the config)."),
    click.option("--cache-dir", "cache_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
                 help="Keep the simulation cache in DIR (default: $BUDGETLINT_CACHE_DIR, else the config's "
                      "cache-dir, else ~/.cache/budgetlint; docs/performance.md)."))
#: explain, slo
_budget_option = click.option("--budget", "names", multiple=True, help="Only this budget (repeatable).")


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-f", "--format", "formats", multiple=True, type=click.Choice(FORMATS),
              help="Output format; repeat to write several. With --output, give one per --format.")
@click.option("-o", "--output", "outputs", multiple=True, type=click.Path(dir_okay=False),
              help="Write the --format at the same position to this file ('-' for standard output).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Lowest severity that makes the exit code 1 (default: the config's fail-on, else error).")
@click.option("--bench", "bench", multiple=True, type=click.Path(),
              help="Benchmark result file to hold against the budgets (repeatable).")
@click.option("--bench-format", default=None, help="Force the benchmark format instead of detecting it.")
@click.option("--teams", "teams_files", multiple=True, type=click.Path(),
              help="Extra teams registry file (kind: teams).")
@click.option("--codeowners", type=click.Path(), default=None,
              help="CODEOWNERS file to read owner handles from (default: found in the repository).")
@click.option("--no-codeowners", is_flag=True, help="Do not read CODEOWNERS for owner handles.")
@_efficiency_options
@click.option("--no-summary", is_flag=True, help="Do not append to $GITHUB_STEP_SUMMARY.")
@click.option("-q", "--quiet", is_flag=True,
              help="Leave out information findings (met promises and their headroom); report warnings and errors.")
@_config_option
@click.option("--select", "select", multiple=True,
              help="Only these rule codes or prefixes (comma-separated or repeated); replaces the config's select.")
@click.option("--ignore", "ignore", multiple=True,
              help="Skip these rule codes or prefixes (comma-separated or repeated); replaces the config's ignore.")
@click.option("--base", "base_ref", default=None, metavar="REF",
              help="Compare with the budgets at this git ref (PR diff); regressions are BL505.")
@click.option("--fail-on-regression", is_flag=True, default=False,
              help="Make BL505 regressions errors (needs --base).")
@click.option("--regression-threshold", type=click.FloatRange(0, None), default=None,
              help="Share of a promise's still-met headroom that may shrink before it is a regression "
                   "(default 0.25; 0: any shrink). A worse verdict always is one.")
@click.option("-j", "--jobs", type=click.IntRange(0, None), default=0, show_default=False,
              help="Worker processes checking files in parallel (default 0: one per core; 1: one process; "
                   "at most 4 per core). Small runs stay in one process; the output is the same either way.")
@_no_simulate_option
@_cache_options
@click.option("--allow-read", "allow_read", multiple=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Also read files in DIR (repeatable); by default only the git top level of the working "
                   "directory and of the paths checked (outside git: those folders themselves) are read.")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True,
              help="Colour the text output: auto = on a terminal, unless NO_COLOR is set (FORCE_COLOR forces it; "
                   "TERM=dumb turns it off). Files written with --output never hold colour.")
@click.option("--history", "history_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Past JSON reports, one per line (oldest first): the HTML report adds each budget's "
                   "headroom over commits.")
@click.option("--sarif-info", is_flag=True, default=False,
              help="Put information findings (met promises and their headroom) into SARIF as level note. "
                   "By default SARIF holds only warnings and errors: code scanning makes every result an alert.")
@click.option("--prometheus", "prometheus", default=None, metavar="URL",
              help="Judge each budget's promises against a live Prometheus server's engine histograms "
                   "(production evidence, docs/slo.md).")
@click.option("--window", "prometheus_window", default=None, metavar="DURATION",
              help="The window --prometheus queries over (default 7d): 30m, 6h, 7d, 4w.")
@click.option("--with-configured-paths", is_flag=True, default=False,
              help="Check the configured paths (the config's paths, else budgets/ where it exists) as well as "
                   "PATHS: the pre-commit hook passes the changed files with this, so a changed file is checked "
                   "together with the budgets that use it.")
@_conventions.options
def check(paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...], fail_on: str | None,
          bench: tuple[str, ...], bench_format: str | None, teams_files: tuple[str, ...],
          codeowners: str | None, no_codeowners: bool, efficiency_bandwidth: float | None,
          efficiency_compute: float | None, collective_overhead: float | None, no_summary: bool,
          config_path: str | None,
          select: tuple[str, ...], ignore: tuple[str, ...], base_ref: str | None,
          fail_on_regression: bool, regression_threshold: float | None, quiet: bool, jobs: int,
          with_configured_paths: bool, sarif_info: bool, color: str,
          allow_read: tuple[str, ...], no_simulate: bool, no_cache: bool = False, cache_dir: str | None = None,
          history_path: str | None = None, prometheus: str | None = None, prometheus_window: str | None = None,
          **conventions: Any) -> None:
    """Check budget files and directories (default: the config's paths, else budgets/).

    '-' reads one file from standard input (name it with --stdin-filename)."""
    from budgetlint.findings import Severity
    from budgetlint.run.check import InputError, run_check

    conv = _conventions.Conventions.take(conventions)
    conv.check_usage(paths, formats, outputs)
    if conv.isolated and config_path:
        raise click.UsageError("--isolated reads no config file: leave out --config")
    config = _config(config_path, select, ignore, isolated=conv.isolated)
    paths = conv.read_stdin(paths)
    if "-" in paths or conv.fix or conv.diff or conv.stdin_filename:
        jobs = 1  # the texts read instead of files (loader OVERLAY) live in this process
    if fail_on_regression:  # the flag beats a severity override of BL505 in the file
        config.severity = {k: v for k, v in config.severity.items() if not "BL505".startswith(k)}
    if (fail_on_regression or regression_threshold is not None) and not base_ref:
        raise click.UsageError("--fail-on-regression and --regression-threshold need --base REF")
    options = _options(config, teams_files=teams_files, codeowners=codeowners, no_codeowners=no_codeowners,
                       bench=bench, bench_format=bench_format, base_ref=base_ref,
                       efficiency_bandwidth=efficiency_bandwidth, efficiency_compute=efficiency_compute,
                       collective_overhead=collective_overhead,
                       fail_on_regression=fail_on_regression or None,
                       regression_threshold=regression_threshold, allow_read=allow_read,
                       no_simulate=no_simulate, jobs=jobs, prometheus=prometheus,
                       prometheus_window=prometheus_window, cache=not no_cache, cache_dir=cache_dir)
    if prometheus_window is not None and not prometheus:
        raise click.UsageError("--window needs --prometheus URL")
    if prometheus is not None:
        from budgetlint.model.build import window_seconds

        if not prometheus.startswith(("http://", "https://")):
            raise click.UsageError(f"--prometheus: expected an http:// or https:// URL; found {prometheus!r}")
        if prometheus_window is not None and window_seconds(prometheus_window) is None:
            raise click.UsageError(f"--window: expected a duration such as 30m, 6h, 7d or 4w; "
                                   f"found {prometheus_window!r}")
    fail_on = fail_on or config.fail_on or "error"
    targets = _targets(paths, config, options, with_configured_paths)
    if conv.show_settings:
        click.echo(_conventions.show_settings(config, options, targets), nl=False)
        sys.exit(EXIT_OK)
    diffed = False
    from budgetlint.run import check as check_module

    progress = _conventions.start_progress(check_module)  # a terminal's stderr only (10,000 budgets)
    try:
        if conv.fix or conv.diff:
            report, diffed = _conventions.fix_and_report(conv, lambda: run_check(targets, options),
                                                          write_atomically)
        else:
            report = run_check(targets, options)
    except InputError as exc:
        click.echo(f"budgetlint: error: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        if progress is not None:
            progress.clear()
            check_module.PROGRESS = None
    _say_notices(report)
    if quiet:
        report.drop_findings_below(Severity.WARNING)
    if history_path:
        from budgetlint.run.history import read_history

        try:
            report.history = read_history(history_path)
        except InputError as exc:
            click.echo(f"budgetlint: error: {printable(exc)}", err=True)
            sys.exit(EXIT_USAGE)
    if conv.statistics:
        click.echo(_conventions.statistics(report), nl=False)
    elif not conv.diff:
        _emit(report, formats, outputs, sarif_info, color)
    if not no_summary:
        _step_summary(report)
    if conv.exit_zero:
        sys.exit(EXIT_OK)
    if conv.diff:
        sys.exit(EXIT_FINDINGS if diffed else EXIT_OK)
    sys.exit(report.exit_code(Severity.parse(fail_on)))


def _config(config_path: str | None, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (), *,
            isolated: bool = False) -> Any:
    """The config file (found, or named with --config), with --select/--ignore applied."""
    from budgetlint.options.config_file import Config, ConfigError, load_config
    from budgetlint.run.policy import today

    try:
        today()  # BUDGETLINT_TODAY, when set, must be a date: a usage error, said before any work
    except ValueError as exc:
        click.echo(f"budgetlint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    try:
        config = Config() if isolated else load_config(config_path)  # --isolated: no config file
    except ConfigError as exc:
        click.echo(f"budgetlint: error: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    if select:
        config.select = _selectors("--select", select)
    if ignore:
        config.ignore = _selectors("--ignore", ignore)
    return config


def _options(config: Any, **flags: Any) -> Any:
    from budgetlint.options import resolve

    return resolve(config, **flags)


def _targets(paths: tuple[str, ...], config: Any, options: Any, with_configured: bool = False) -> list[str]:
    """What a run reads: the paths (else the config's, else budgets/), the config's catalog and teams.

    ``with_configured`` (``--with-configured-paths``, the pre-commit hook): the
    paths and the configured ones together; the default budgets/ only where it
    exists, so a hook in a repository without one checks the files it got.
    """
    configured = list(config.paths) or ["budgets/"]
    if with_configured:
        from pathlib import Path

        configured = [p for p in configured if config.paths or Path(p).is_dir()]
        targets = list(paths) + [p for p in configured if p not in paths]
    else:
        targets = list(paths) or configured
    return targets + list(config.catalog) + list(options.teams_files)


def _selectors(flag: str, values: tuple[str, ...]) -> list[str]:
    """``--select BL3,BL101`` (repeatable) -> selectors; an unknown code is a usage error."""
    from budgetlint.options.config_file import resolve_selector

    out = []
    for value in values:
        for item in filter(None, (v.strip() for v in value.split(","))):
            sel, problem = resolve_selector(item)
            if sel is None:
                raise click.UsageError(f"{flag}: {problem}")
            out.append(sel)
    return out


@main.command("clean")
@_config_option
@click.option("--cache-dir", "cache_dir", type=click.Path(), default=None, metavar="DIR",
              help="The cache folder to empty (default: as check finds it: $BUDGETLINT_CACHE_DIR, else the "
                   "config's cache-dir, else ~/.cache/budgetlint).")
def clean_cmd(config_path: str | None, cache_dir: str | None) -> None:
    """Remove the simulation cache that check and explain read back (docs/performance.md)."""
    from budgetlint.evaluate import load_disk
    from budgetlint.files import fs

    options = _options(_config(config_path), cache=True, cache_dir=cache_dir)
    folder = options.cache_location()
    shown = printable(str(folder))
    if fs.exists(folder) and not fs.is_dir(folder):
        click.echo(f"budgetlint: error: the cache folder {shown} is not a folder", err=True)
        sys.exit(EXIT_USAGE)
    try:
        count, size = load_disk.clear(folder)
    except OSError as exc:
        click.echo(f"budgetlint: error: cannot empty the cache folder {shown}: {printable(exc.strerror or str(exc))}",
                   err=True)
        sys.exit(EXIT_USAGE)
    if count:
        click.echo(f"budgetlint: removed {numbers.number(count)} simulation cache entr{'y' if count == 1 else 'ies'} "
                   f"({numbers.quantity(size, 'B')}) from {shown}")
    else:
        click.echo(f"budgetlint: no simulation cache entries in {shown}")


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule: code, name, default severity and summary."""
    from budgetlint.rules import all_rules

    rules = all_rules()
    if fmt == "json":
        import json

        click.echo(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.label,
                                "summary": r.summary} for r in rules], indent=2))
        return
    for r in rules:
        click.echo(f"{r.code}  {r.name:<32} {r.severity.label:<8} {r.summary}")


@main.command("rule")
@click.argument("code")
def rule_cmd(code: str) -> None:
    """Print one rule's documentation, by code (BL202) or name."""
    from budgetlint.rules import all_rules, get_rule

    rule = get_rule(code)
    if rule is None:
        import difflib

        names = [r.code for r in all_rules()] + [r.name for r in all_rules()]
        close = difflib.get_close_matches(code, names, n=1)
        hint = f"; did you mean {close[0]}?" if close else "; see `budgetlint rules`"
        click.echo(f"budgetlint: error: unknown rule {code!r}{hint}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"{rule.code} ({rule.name}) [{rule.severity.label}]\n")
    click.echo(rule.doc)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@_budget_option
@_efficiency_options
@_config_option
@_no_simulate_option
@_cache_options
def explain(paths: tuple[str, ...], names: tuple[str, ...], efficiency_bandwidth: float | None,
            efficiency_compute: float | None, collective_overhead: float | None, config_path: str | None,
            no_simulate: bool, no_cache: bool = False, cache_dir: str | None = None) -> None:
    """Show the roofline arithmetic behind each budget's verdicts, step by step."""
    from budgetlint.run.check import InputError, evaluate_run
    from budgetlint.run.explain import explain_budget

    config = _config(config_path)
    options = _options(config, efficiency_bandwidth=efficiency_bandwidth, efficiency_compute=efficiency_compute,
                       collective_overhead=collective_overhead, no_simulate=no_simulate,
                       cache=not no_cache, cache_dir=cache_dir)
    try:
        result = evaluate_run(_targets(paths, config, options), options, keep=True)
    except InputError as exc:
        click.echo(f"budgetlint: error: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    evaluations = result.evaluations
    known = {ev.budget.name for ev in evaluations}
    missing = [n for n in names if n not in known]
    if missing:
        listed = ", ".join(sorted(printable(k) for k in known)) or "none"
        click.echo(f"budgetlint: error: no budget named {', '.join(map(repr, missing))} (budgets: {listed})", err=True)
        sys.exit(EXIT_USAGE)
    _say_notices(result.report)
    errors = [f for f in result.report.sorted_findings() if f.severity.label == "error" and f.rule < "BL100"]
    for f in errors:
        click.echo(f"{f.location}: {f.rule} {printable(f.message)}", err=True)
    blocks = [explain_budget(ev) for ev in evaluations if not names or ev.budget.name in names]
    click.echo("\n\n".join(blocks) if blocks else "no budgets found")
    sys.exit(EXIT_FINDINGS if errors else EXIT_OK)


@main.group()
def catalog() -> None:
    """The built-in hardware and model catalog (each entry cites its source)."""


def _catalog_entries(kind: str, paths: tuple[str, ...]) -> list[Any]:
    from budgetlint.run.check import InputError, Options, evaluate_run

    try:
        ctx = evaluate_run(list(paths), Options(use_codeowners=False))
    except InputError as exc:
        click.echo(f"budgetlint: error: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    return ctx.catalog.all_hardware() if kind == "hardware" else ctx.catalog.all_models()


def _hardware_row(hw: Any) -> dict:
    return {"name": hw.name, "aliases": list(hw.aliases), "vendor": hw.vendor, "memory_bytes": hw.memory_bytes,
            "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s, "compute_flop_per_s": dict(hw.compute_flop_per_s),
            "interconnect_bytes_per_s": hw.interconnect_bytes_per_s, "source": hw.source, "notes": hw.notes,
            "builtin": hw.builtin}


def _model_row(m: Any) -> dict:
    keys = ("parameters", "active_parameters", "layers", "hidden_size", "attention_heads", "kv_heads",
            "head_dim", "attention", "kv_lora_rank", "qk_rope_head_dim", "sliding_window",
            "sliding_window_layers", "experts", "experts_per_token", "max_context", "vocab_size",
            "tie_word_embeddings", "source")
    row = {"name": m.name, "aliases": list(m.aliases)}
    row.update({k: getattr(m, k) for k in keys})
    row["builtin"] = m.builtin
    return row


@catalog.command("hardware")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def catalog_hardware(paths: tuple[str, ...], fmt: str) -> None:
    """List accelerators (built-in, plus those defined under PATHS)."""
    from budgetlint.model.units import format_quantity as fq

    entries = _catalog_entries("hardware", paths)
    if fmt == "json":
        import json

        click.echo(json.dumps([_hardware_row(h) for h in entries], indent=2))
        return
    click.echo(f"{'name':<16} {'memory':>9} {'bandwidth':>11} {'bf16 dense':>14} {'fp8 dense':>14}")
    for h in entries:
        bf16 = h.compute_flop_per_s.get("bf16")
        fp8 = h.compute_flop_per_s.get("fp8")
        click.echo(f"{printable(h.name):<16} {fq(h.memory_bytes, 'information') if h.memory_bytes else '-':>9} "
                   f"{fq(h.bandwidth_bytes_per_s, 'bandwidth') if h.bandwidth_bytes_per_s else '-':>11} "
                   f"{fq(bf16, 'compute_rate') if bf16 else '-':>14} {fq(fp8, 'compute_rate') if fp8 else '-':>14}")


@catalog.command("models")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def catalog_models(paths: tuple[str, ...], fmt: str) -> None:
    """List models (built-in, plus those defined under PATHS)."""
    entries = _catalog_entries("models", paths)
    if fmt == "json":
        import json

        click.echo(json.dumps([_model_row(m) for m in entries], indent=2))
        return
    click.echo(f"{'name':<18} {'params':>9} {'active':>9} {'layers':>6} {'kv heads':>8} {'attention':>9}")
    for m in entries:
        p = f"{numbers.number(m.parameters / 1e9, figures=4)}B" if m.parameters else "-"
        a = f"{numbers.number(m.active / 1e9, figures=4)}B" if m.active else "-"
        click.echo(f"{printable(m.name):<18} {p:>9} {a:>9} {m.layers or '-':>6} {m.kv_heads or '-':>8} "
                   f"{printable(m.attention):>9}")


@catalog.command("show")
@click.argument("name")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def catalog_show(name: str, paths: tuple[str, ...], fmt: str) -> None:
    """Show one hardware or model entry, with its source."""
    import json

    hw = {h.name.lower(): h for h in _catalog_entries("hardware", paths)}
    models = {m.name.lower(): m for m in _catalog_entries("models", paths)}
    from budgetlint.model.build import normal_name

    found = None
    for exact in (True, False):  # as written (case aside), else punctuation aside ("h100-sxm5")
        for table, row in ((hw, _hardware_row), (models, _model_row)):
            for entry in table.values():
                names = (entry.name, *entry.aliases)
                if (name.lower() in (n.lower() for n in names) if exact
                        else normal_name(name) in (normal_name(n) for n in names)):
                    found = found or row(entry)
    if found is None:
        import difflib

        close = difflib.get_close_matches(name.lower(), list(hw) + list(models), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        click.echo(f"budgetlint: error: no catalog entry {name!r}{hint}", err=True)
        sys.exit(EXIT_USAGE)
    if fmt == "json":
        click.echo(json.dumps(found, indent=2))
        return
    for key, value in _catalog_lines(found):
        click.echo(f"{key:<24} {printable(value)}")  # names and sources from the user's files


#: catalog show's text: each SI field by the name and unit people read (the JSON keeps the raw floats)
_CATALOG_UNITS = {"memory_bytes": ("memory", "B"), "bandwidth_bytes_per_s": ("bandwidth", "B/s"),
                  "interconnect_bytes_per_s": ("interconnect", "B/s")}
_CATALOG_COUNTS = ("parameters", "active_parameters")


def _catalog_lines(row: dict) -> list[tuple[str, str]]:
    """``catalog show``'s rows in units: "memory 80 GB", "compute bf16 989 TFLOP/s", "parameters 70.55B"."""
    from budgetlint.text.numbers import quantity

    out = []
    for key, value in row.items():
        if value in (None, [], {}):
            continue
        if key in _CATALOG_UNITS:
            name, unit = _CATALOG_UNITS[key]
            out.append((name, quantity(value, unit)))
        elif key == "compute_flop_per_s":
            out.extend((f"compute {prec}", quantity(rate, "FLOP/s")) for prec, rate in value.items())
        elif key in _CATALOG_COUNTS:
            out.append((key.replace("_", " "), f"{numbers.number(value / 1e9, figures=4)}B" if value >= 1e9 else f"{numbers.number(value / 1e6, figures=4)}M"))
        elif isinstance(value, bool):
            out.append((key.replace("_", " "), "yes" if value else "no"))
        elif isinstance(value, (list, tuple)):
            out.append((key, ", ".join(str(v) for v in value)))
        elif isinstance(value, float) and value.is_integer():
            out.append((key.replace("_", " "), str(int(value))))
        else:
            out.append((key.replace("_", " "), str(value)))
    return out


@main.command("slo")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["prometheus", "sloth", "pyrra", "openslo"]), default="prometheus",
              show_default=True, help="Prometheus rules, Sloth prometheus/v1, Pyrra ServiceLevelObjective or OpenSLO v1.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the export here (default: standard output).")
@_budget_option
@_config_option
def slo_cmd(paths: tuple[str, ...], fmt: str, output: str | None, names: tuple[str, ...],
            config_path: str | None) -> None:
    """Export each budget's promises as production SLOs with burn-rate alerts (docs/slo.md)."""
    from budgetlint.run.check import InputError, evaluate_run
    from budgetlint.slo import render

    config = _config(config_path)
    options = _options(config, no_simulate=True, slo_export=True)
    try:
        result = evaluate_run(_targets(paths, config, options), options, keep=True)
    except InputError as exc:
        click.echo(f"budgetlint: error: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    known = {ev.budget.name for ev in result.evaluations}
    missing = [n for n in names if n not in known]
    if missing:
        click.echo(f"budgetlint: error: no budget named {', '.join(map(repr, missing))}", err=True)
        sys.exit(EXIT_USAGE)
    findings = result.report.sorted_findings()
    errors = [f for f in findings if f.severity.label == "error" and f.rule < "BL100"]
    for f in errors + [f for f in findings if f.rule in ("BL601", "BL602", "BL603")]:
        click.echo(f"{f.location}: {f.rule} {f.severity.label}: {printable(f.message)}", err=True)
    plans = [ev.slo.plan for ev in result.evaluations
             if ev.slo is not None and ev.budget.complete and (not names or ev.budget.name in names)]
    text = render(plans, fmt)
    if output:
        try:
            write_atomically(output, (text,))
        except OSError as exc:
            raise click.UsageError(f"cannot write --output {output}: {exc.strerror or exc}") from None
        n = sum(len(p.indicators) for p in plans)
        click.echo(f"{n} SLO{'' if n == 1 else 's'} from {len(plans)} budget{'' if len(plans) == 1 else 's'} "
                   f"-> {output}", err=True)
    else:
        click.echo(text, nl=False)
    sys.exit(EXIT_FINDINGS if errors else EXIT_OK)


@main.command()
@click.argument("bench", nargs=-1, required=True, type=click.Path())
@click.option("--model", "model", default=None, help="The model served (a catalog name; or from --budget).")
@click.option("--hardware", "hardware", default=None, help="The accelerator (a catalog name; or from --budget).")
@click.option("--budget", "budget_name", default=None,
              help="Take the model, hardware, devices, replicas, precisions and engine from this budget "
                   "(found under --budgets); a flag or a run that says otherwise is refused.")
@click.option("--budgets", "budgets_path", default=".", show_default=True, type=click.Path(),
              help="Where --budget is looked for.")
@click.option("--devices", type=click.IntRange(min=1), default=1, show_default=True,
              help="Tensor-parallel devices per replica (a run that records its own wins).")
@click.option("--replicas", type=click.IntRange(min=1), default=1, show_default=True,
              help="Replicas behind a round-robin balancer (a run's request rate is for all of them).")
@click.option("--weight-precision", default="bf16", show_default=True)
@click.option("--kv-precision", default=None, help="Default: bf16.")
@click.option("--engine", default=None, help="Use only runs of this engine (vllm, sglang, ...).")
@click.option("--no-loo", is_flag=True, help="Skip the leave-one-out refits (faster; no error band).")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, show_default=True,
              help="Processes for the leave-one-out refits (0: every core; 1: one process; at most 4 per core).")
@click.option("--include-saturated", is_flag=True,
              help="Also fit runs that sent every request at once (slow: each is simulated in full).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the calibration here (default: standard output).")
def calibrate(bench: tuple[str, ...], model: str | None, hardware: str | None, budget_name: str | None,
              budgets_path: str, devices: int, replicas: int,
              weight_precision: str, kv_precision: str | None, engine: str | None, no_loo: bool,
              include_saturated: bool, output: str | None, jobs: int) -> None:
    """Fit a deployment's efficiency to benchmark runs (docs/calibration.md)."""
    from budgetlint.run.calibrate import CalibrateError, dump, from_budget
    from budgetlint.run.calibrate import calibrate as run_calibrate

    from budgetlint.run import calibrate as calibrate_module

    strict = False
    if budget_name is not None:
        ctx = click.get_current_context()
        given = {k: v for k, v in (("model", model), ("hardware", hardware), ("devices", devices),
                                   ("replicas", replicas), ("weight_precision", weight_precision),
                                   ("kv_precision", kv_precision), ("engine", engine))
                 if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE}
        try:
            taken = from_budget(budget_name, budgets_path, given)
        except CalibrateError as exc:
            click.echo(f"budgetlint: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        model, hardware, devices, replicas = taken["model"], taken["hardware"], taken["devices"], taken["replicas"]
        weight_precision, kv_precision = taken["weight_precision"], taken["kv_precision"]
        engine = taken["engine"] or engine
        strict = True
    if model is None or hardware is None:
        raise click.UsageError("give --model and --hardware, or --budget NAME")

    progress = _conventions.start_progress(calibrate_module, kind="stage")  # a terminal's stderr only
    try:
        result = run_calibrate(list(bench), model=model, hardware=hardware, devices=devices,
                               replicas=replicas, weight_precision=weight_precision,
                               kv_precision=kv_precision, engine=engine, loo=not no_loo,
                               include_saturated=include_saturated, jobs=jobs, strict_devices=strict)
    except CalibrateError as exc:
        click.echo(f"budgetlint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        if progress is not None:
            progress.clear()
            calibrate_module.PROGRESS = None
    for p in result.problems:
        click.echo(p, err=True)
    for s in result.document.get("skipped", []):
        click.echo(f"{s['file']} {s['run']}: not used: {s['reason']}", err=True)
    text = dump(result.document)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise click.UsageError(f"cannot write --output {output}: {exc.strerror or exc}") from None
        err = result.document.get("error", {})
        summary = ", ".join(f"{m} median {numbers.percent(v['median'])} max {numbers.percent(v['max'])}" for m, v in err.items())
        click.echo(f"calibrated from {numbers.count(len(result.document['runs']), 'run')} -> {output}"
                   + (f" (leave-one-out error: {summary})" if summary else ""), err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the native JSON here (default: standard output).")
@click.option("--bench-format", default=None, help="Force the benchmark format instead of detecting it.")
def ingest(files: tuple[str, ...], output: str | None, bench_format: str | None) -> None:
    """Normalise benchmark result files to budgetlint's native format (JSON)."""
    import json

    from budgetlint.run.ingest import exit_code
    from budgetlint.run.ingest import ingest as run_ingest

    document, findings = run_ingest(list(files), bench_format)
    for f in findings:
        where = f"{f.location}: " if f.location else ""
        click.echo(f"{where}{f.rule} {printable(f.message)}", err=True)
    text = json.dumps(document, indent=2) + "\n"
    if output:
        try:
            write_atomically(output, (text,))
        except OSError as exc:
            raise click.UsageError(f"cannot write --output {output}: {exc.strerror or exc}") from None
    else:
        click.echo(text, nl=False)
    sys.exit(exit_code(document, findings))


@main.command("schema")
@click.argument("kind", required=False, default="budgets",
                type=click.Choice(["budgets", "teams", "hardware", "models", "calibration", "benchmark", "config",
                                   "report"]))
@click.option("--bundle", is_flag=True,
              help="One self-contained schema of every file kind (dispatched on kind:), for SchemaStore or an "
                   "editor that takes one file; otherwise the KIND's schema file as shipped.")
@click.option("--id", "schema_id", default=None, metavar="URI",
              help="The $id to give the bundle (SchemaStore's: https://json.schemastore.org/budgetlint.json).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the schema here (default: standard output).")
def schema_cmd(kind: str, bundle: bool, schema_id: str | None, output: str | None) -> None:
    """Print a JSON schema of budgetlint's files (docs/editors.md)."""
    import json

    from budgetlint.files.schema import schema_dir

    if bundle:
        if kind != "budgets":
            raise click.UsageError("--bundle bundles every file kind into one schema; give no KIND")
        from budgetlint.files.bundle import bundle as make_bundle

        text = json.dumps(make_bundle(schema_id), indent=2, ensure_ascii=False) + "\n"
    else:
        if schema_id:
            raise click.UsageError("--id is for --bundle")
        text = (schema_dir() / f"{kind}.schema.json").read_text(encoding="utf-8")
    if output:
        try:
            write_atomically(output, (text,))
        except OSError as exc:
            raise click.UsageError(f"cannot write --output {output}: {exc.strerror or exc}") from None
    else:
        click.echo(text, nl=False)
