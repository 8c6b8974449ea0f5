"""The terminal conventions of ``budgetlint check`` (issue 27), kept apart from cli.py.

ruff's and other linters' flags, as their users expect them: ``-`` reads the
file from standard input (``--stdin-filename`` names it: the same findings as
the file), ``--fix`` / ``--unsafe-fixes`` / ``--diff`` (run/fix.py),
``--exit-zero``, ``--isolated`` (no config file), ``--show-settings``,
``--statistics``. :func:`options` adds the flags to the command;
:class:`Conventions` carries them through it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

import click
from budgetlint.text import numbers

_FLAGS = [
    click.option("--stdin-filename", default=None, metavar="PATH",
                 help="The path of the file read from standard input ('-' among the PATHS): findings, "
                      "relative references and per-file-ignores are as for that file."),
    click.option("--fix", "fix", is_flag=True, default=False,
                 help="Apply the safe fixes (the help's edit when it keeps every promise and the deployment) "
                      "to the files, keeping comments and layout; then report what is left."),
    click.option("--unsafe-fixes", is_flag=True, default=False,
                 help="With --fix or --diff, also the unsafe fixes: loosen a promise, change the deployment."),
    click.option("--diff", "diff", is_flag=True, default=False,
                 help="Print the fixes as a unified diff instead of writing them (exit 1 if there are any)."),
    click.option("--exit-zero", is_flag=True, default=False,
                 help="Exit 0 even when findings are at or above --fail-on (errors reading input still exit 2)."),
    click.option("--isolated", is_flag=True, default=False,
                 help="Read no config file (pyproject.toml, budgetlint.toml): the defaults and the flags only."),
    click.option("--show-settings", is_flag=True, default=False,
                 help="Print the settings the check would use (config file, paths, efficiencies, overheads) "
                      "and exit."),
    click.option("--statistics", is_flag=True, default=False,
                 help="Print the number of findings per rule instead of the findings."),
]


def options(f: Callable) -> Callable:
    """Add the conventions' flags to a command."""
    for flag in reversed(_FLAGS):
        f = flag(f)
    return f


@dataclass
class Conventions:
    stdin_filename: str | None = None
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    exit_zero: bool = False
    isolated: bool = False
    show_settings: bool = False
    statistics: bool = False

    @classmethod
    def take(cls, kwargs: dict) -> "Conventions":
        return cls(**{k: kwargs.pop(k) for k in list(kwargs) if k in cls.__dataclass_fields__})

    def check_usage(self, paths: tuple[str, ...], formats: tuple[str, ...], outputs: tuple[str, ...]) -> None:
        """The combinations that are usage errors (exit 2), before any work."""
        if len(formats) > 1 and not outputs:
            raise click.UsageError(
                f"{len(formats)} formats and no --output: standard output takes one format (several would "
                "be one document after another, which no reader parses); give one --output per --format "
                "('-' for the one that goes to standard output)")
        if outputs and sum(1 for o in outputs if o == "-") > 1:
            raise click.UsageError("more than one --output is '-': standard output takes one format")
        if "-" in paths and paths.count("-") > 1:
            raise click.UsageError("'-' (standard input) given twice")
        if self.stdin_filename and "-" not in paths:
            raise click.UsageError("--stdin-filename names the file read from standard input: give '-' too")
        if self.unsafe_fixes and not (self.fix or self.diff):
            raise click.UsageError("--unsafe-fixes goes with --fix or --diff")
        if self.fix and self.diff:
            raise click.UsageError("--fix writes the fixes, --diff prints them: give one")
        if "-" in paths and self.fix:
            raise click.UsageError("--fix cannot write standard input back; use --diff")

    def read_stdin(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """``-`` replaced by the --stdin-filename (default ``stdin.yaml``), its text put in the loader's overlay."""
        if "-" not in paths:
            return paths
        from budgetlint.files.loader import MAX_FILE_BYTES, OVERLAY

        name = self.stdin_filename or "stdin.yaml"
        # bounded as a file is (until stop 46 read to its end: `check - < /dev/zero` never ended)
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise click.UsageError(f"standard input holds more than {MAX_FILE_BYTES // 1024 // 1024} MiB; budgetlint "
                                   f"reads files up to {MAX_FILE_BYTES // 1024 // 1024} MiB")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise click.UsageError(f"standard input is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                                   f"offset {exc.start})") from None
        OVERLAY[os.path.abspath(name)] = text
        return tuple(name if p == "-" else p for p in paths)


#: what a setting left unset means (``--show-settings``)
_UNSET = {
    "efficiency-bandwidth": "per deployment: its class's default below, or its calibration",
    "efficiency-compute": "per deployment: its class's default below (0.5)",
    "collective-overhead": "per deployment: its class's default below; 10% on top of a declared or "
                           "configured bandwidth fraction for N > 1 devices",
    "memory-reserve-bytes": "3 GiB per device, in the realistic judgement only",
    "codeowners": "found in the repository (.github/CODEOWNERS, CODEOWNERS, docs/CODEOWNERS)",
    "bench-format": "detected per file",
    "base-ref": "no PR diff",
    "roots": "the git top level of the working directory and of the paths checked",
    "max-bench-bytes": "64 MiB",
    "select": "every rule",
}


def _setting(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if value else "(none)"
    return str(value)


def show_settings(config: Any, options: Any, targets: list[str]) -> str:
    """The settings as ``--show-settings`` prints them: ``key = value`` a line (unset: what that means),
    then the default efficiencies by deployment class, the assumptions a check makes unless told."""
    import dataclasses

    from budgetlint.physics.default_efficiency import (COLLECTIVE_LATENCY_S, DEFAULTS, GIVEN_BANDWIDTH_COLLECTIVE_OVERHEAD,
                                                       ITERATION_OVERHEAD_S)

    rows = [("config-file", str(config.path) if config.path else "(none)"), ("paths", _setting(targets))]
    for f in dataclasses.fields(options):
        if f.name == "config":
            continue
        rows.append((f.name.replace("_", "-"), getattr(options, f.name)))
    rows += [("select", config.select), ("ignore", config.ignore), ("fail-on", config.fail_on or "error")]
    lines = []
    for key, value in rows:
        if value is None:
            lines.append(f"{key} = (unset: {_UNSET.get(key, 'the default')})")
        else:
            lines.append(f"{key} = {value if isinstance(value, str) else _setting(value)}")
    lines.append("")
    lines.append("default efficiencies by deployment class (docs/calibration.md), used where a budget, its "
                 "calibration and the flags say nothing:")
    for d in DEFAULTS.values():
        lines.append(f"  {d.key:<9} {d.label:<24} bandwidth {numbers.percent(d.bandwidth)} ({d.basis()}), compute "
                     f"{numbers.percent(d.compute)}, collective overhead {numbers.percent(d.collective_overhead)} for N > 1 devices"
                     + (" (the runs were measured with the all-reduce: its cost is inside the bandwidth)"
                        if d.collective_overhead == 0 else ""))
    lines.append(f"  a declared or configured bandwidth fraction: collective overhead "
                 f"{numbers.percent(GIVEN_BANDWIDTH_COLLECTIVE_OVERHEAD)} for N > 1 devices unless one is given too")
    lines.append(f"  every class, beside its bandwidth: {numbers.quantity(ITERATION_OVERHEAD_S, 's')} an iteration, and "
                 f"{numbers.quantity(COLLECTIVE_LATENCY_S, 's')} a layer of all-reduce latency for N > 1 devices, "
                 "unless the deployment declares iteration_overhead / collective_latency")
    return "\n".join(lines) + "\n"


def statistics(report: Any) -> str:
    """Findings per rule, most first, as ``ruff --statistics``: count, code, name, severity."""
    from collections import Counter

    from budgetlint.rules import get_rule

    counts = Counter((f.rule, f.severity.label) for f in report.findings)
    if not counts:
        return "no findings\n"
    rows = []
    for (code, severity), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = get_rule(code)
        rows.append(f"{n:>5}  {code}  {severity:<8} {rule.name if rule else ''}")
    return "\n".join(rows) + "\n"


def fix_and_report(conv: Conventions, check: Callable[[], Any], write_atomically: Callable) -> tuple[Any, bool]:
    """Run the check with --fix or --diff; returns (report, diff printed and non-empty)."""
    from budgetlint.files.loader import OVERLAY
    from budgetlint.run.fix import run_fixes, unified_diff, write_fixed

    def read(file: str) -> str:
        with open(file, encoding="utf-8-sig", newline="") as fh:  # line ends as they are (run/fix.py keeps them)
            return fh.read()

    report, run = run_fixes(check, unsafe=conv.unsafe_fixes, overlay=OVERLAY, read=read)
    for problem in run.problems:
        click.echo(f"budgetlint: warning: {problem}", err=True)
    n = len(run.applied)
    files = len(run.changed)
    hint = (f"; {run.unsafe_left} more with --unsafe-fixes" if run.unsafe_left and not conv.unsafe_fixes else "")
    if conv.diff:
        text = unified_diff(run)
        if text:
            click.echo(text, nl=False)
        verb = "would fix"
    else:
        write_fixed(run, lambda path, text: write_atomically(path, (text,)))
        verb = "fixed"
    from budgetlint.text.numbers import count

    click.echo(f"budgetlint: {verb} {count(n, 'finding')} in {count(files, 'file')}{hint}", err=True)
    return report, bool(conv.diff and run.changed)


class Progress:
    """A progress line on standard error, for long work, only when standard error is a terminal.

    Redirected to a file or a CI log, nothing is written: the log keeps only what the command
    reports. The line is rewritten in place (``\\r``) at most every :data:`EVERY_S` seconds,
    only for runs of at least :data:`MIN_FILES` files, and erased when the work is done, so the
    report that follows starts on a clean line.
    """

    EVERY_S = 0.2
    MIN_FILES = 200

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.shown = False
        self.last = 0.0

    @classmethod
    def wanted(cls, stream: Any = None) -> bool:
        stream = stream if stream is not None else sys.stderr
        try:
            return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
        except (AttributeError, ValueError):
            return False

    def _write(self, text: str) -> None:
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def files(self, done: int, total: int) -> None:
        import time

        if total < self.MIN_FILES:
            return
        now = time.monotonic()
        if done < total and now - self.last < self.EVERY_S:
            return
        self.last = now
        self._write(f"budgetlint: checked {numbers.number(done)} of {numbers.number(total)} files")
        if done >= total:
            self.clear()

    def stage(self, words: str | None) -> None:
        if words is None:
            self.clear()
        else:
            self._write(f"budgetlint: {words}...")

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def start_progress(module: Any, attribute: str = "PROGRESS", kind: str = "files") -> Progress | None:
    """Hook a :class:`Progress` into ``module.PROGRESS`` when standard error is a terminal."""
    if not Progress.wanted():
        return None
    progress = Progress()
    setattr(module, attribute, progress.files if kind == "files" else progress.stage)
    return progress
