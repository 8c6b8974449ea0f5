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

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

FORMATS = ("text", "json", "sarif", "github", "junit", "markdown")


def _internal_error(exc: BaseException) -> None:
    if os.environ.get("BUDGETLINT_TRACEBACK"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__)
    click.echo(f"budgetlint: internal error: {type(exc).__name__}: {exc}\n"
               "This is a bug in budgetlint; set BUDGETLINT_TRACEBACK=1 to see the traceback "
               "and please report it.", err=True)
    sys.exit(EXIT_INTERNAL)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("budgetlint: interrupted", err=True)
            sys.exit(130)
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


def _color(stream_is_stdout: bool) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream_is_stdout and sys.stdout.isatty()


def _emit(report: Any, formats: tuple[str, ...], outputs: tuple[str, ...]) -> None:
    from budgetlint.reporters import get_reporter

    if len(outputs) > max(len(formats), 1):
        raise click.UsageError("more --output paths than --format options; pair each --output with a --format")
    formats = formats or ("text",)
    for i, fmt in enumerate(formats):
        target = outputs[i] if i < len(outputs) else None
        render = get_reporter(fmt)
        text = render(report, color=_color(target is None or target == "-"))
        if target is None or target == "-":
            click.echo(text, nl=not text.endswith("\n"))
        else:
            try:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise click.UsageError(f"cannot write --output {target}: {exc.strerror or exc}") from None


def _step_summary(report: Any) -> None:
    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return
    from budgetlint.reporters import get_reporter
    from budgetlint.reporters.step_summary import append_step_summary

    append_step_summary(get_reporter("markdown")(report, color=False))


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-f", "--format", "formats", multiple=True, type=click.Choice(FORMATS),
              help="Output format; repeat to write several (pair each with --output).")
@click.option("-o", "--output", "outputs", multiple=True, type=click.Path(dir_okay=False),
              help="Write the matching --format to this file ('-' for standard output).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error",
              show_default=True, help="Lowest severity that makes the exit code 1.")
@click.option("--bench", "bench", multiple=True, type=click.Path(),
              help="Benchmark result file to hold against the budgets (repeatable).")
@click.option("--bench-format", default=None, help="Force the benchmark format instead of detecting it.")
@click.option("--teams", "teams_files", multiple=True, type=click.Path(),
              help="Extra teams registry file (kind: teams).")
@click.option("--codeowners", type=click.Path(), default=None,
              help="CODEOWNERS file to read owner handles from (default: found in the repository).")
@click.option("--no-codeowners", is_flag=True, help="Do not read CODEOWNERS for owner handles.")
@click.option("--efficiency-bandwidth", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Realistic fraction of peak bandwidth for at-risk verdicts (default 0.7).")
@click.option("--efficiency-compute", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Realistic fraction of peak compute for at-risk verdicts (default 0.5).")
@click.option("--no-summary", is_flag=True, help="Do not append to $GITHUB_STEP_SUMMARY.")
def check(paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...], fail_on: str,
          bench: tuple[str, ...], bench_format: str | None, teams_files: tuple[str, ...],
          codeowners: str | None, no_codeowners: bool, efficiency_bandwidth: float | None,
          efficiency_compute: float | None, no_summary: bool) -> None:
    """Check budget files and directories (default: budgets/)."""
    from budgetlint.checker import InputError, Options, run_check
    from budgetlint.findings import Severity, exit_code

    options = Options(teams_files=list(teams_files), codeowners=codeowners,
                      use_codeowners=not no_codeowners, bench=list(bench), bench_format=bench_format)
    if efficiency_bandwidth is not None:
        options.efficiency_bandwidth = efficiency_bandwidth
    if efficiency_compute is not None:
        options.efficiency_compute = efficiency_compute
    targets = list(paths) or ["budgets/"]
    try:
        report = run_check(targets + list(teams_files), options)
    except InputError as exc:
        click.echo(f"budgetlint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    _emit(report, formats, outputs)
    if not no_summary:
        _step_summary(report)
    sys.exit(exit_code(report.findings, Severity.parse(fail_on)))


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
@click.option("--budget", "names", multiple=True, help="Only this budget (repeatable).")
@click.option("--efficiency-bandwidth", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Realistic fraction of peak bandwidth (default 0.7).")
@click.option("--efficiency-compute", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Realistic fraction of peak compute (default 0.5).")
def explain(paths: tuple[str, ...], names: tuple[str, ...], efficiency_bandwidth: float | None,
            efficiency_compute: float | None) -> None:
    """Show the roofline arithmetic behind each budget's verdicts, step by step."""
    from budgetlint.checker import InputError, Options, build_context
    from budgetlint.explain import explain_budget
    from budgetlint.roofline import evaluation_for

    options = Options()
    if efficiency_bandwidth is not None:
        options.efficiency_bandwidth = efficiency_bandwidth
    if efficiency_compute is not None:
        options.efficiency_compute = efficiency_compute
    try:
        report, ctx = build_context(list(paths) or ["budgets/"], options)
    except InputError as exc:
        click.echo(f"budgetlint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    budgets = [b for b in ctx.budgets if not names or b.name in names]
    missing = [n for n in names if n not in {b.name for b in ctx.budgets}]
    if missing:
        known = ", ".join(sorted(b.name for b in ctx.budgets)) or "none"
        click.echo(f"budgetlint: error: no budget named {', '.join(map(repr, missing))} (budgets: {known})", err=True)
        sys.exit(EXIT_USAGE)
    errors = [f for f in report.findings if f.severity.label == "error" and f.rule < "BL100"]
    for f in errors:
        click.echo(f"{f.location}: {f.rule} {f.message}", err=True)
    blocks = [explain_budget(evaluation_for(ctx, b), ctx) for b in budgets]
    click.echo("\n\n".join(blocks) if blocks else "no budgets found")
    sys.exit(EXIT_FINDINGS if errors else EXIT_OK)
