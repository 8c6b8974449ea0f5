"""One place where numbers become text: no other code rounds a number into a string.

budgetlint/text/numbers.py holds the rounding rule (three significant figures,
two for a percent, as written for a stated number). Any other f-string format
spec that rounds or groups (``:.3g``, ``:.1f``, ``:.0%``, ``:,``, ``:g``) or
call of ``format(x, spec)`` would be a second formatter, and the same number
would read two ways ("123 ms" in a finding, "123.4 ms" in the PR diff). The
exceptions are machine syntax, each named here with why: what a program reads
(PromQL, an SVG coordinate, a value written back to a file) keeps the digits
that program needs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "budgetlint"
FORMATTER = "text/numbers.py"

#: a format spec that rounds, groups or picks a notation: precision, grouping, or a float type
ROUNDS = re.compile(r"[.,_]|[eEfFgG%n]$")

#: (file, the formatted expression, its spec) -> why it is machine syntax, not text for people
MACHINE = {
    ("slo/prometheus_rules.py", "threshold", "g"): "a PromQL comparison (and the same digits in its annotation)",
    ("reporters/svg.py", "x", ".2f"): "an SVG coordinate",
    ("rules/_fixes.py", "float(x)", ".12g"): "a value a fix writes back into the user's YAML",
    ("run/calibrate.py", "v", ".6g"): "a fitted value rounded before it is written to the calibration file",
}
#: calls of format(value, spec) that are machine syntax, by file
MACHINE_CALLS = {
    "rules/_fixes.py": "a Decimal written back into the user's YAML",
    "slo/_common.py": "an SLO objective as Pyrra's target field parses it (objective_text: twelve figures)",
}


def _specs(path: Path) -> list[tuple[int, str, str]]:
    """Every (line, expression, spec) of an f-string field or format() call that rounds."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            parts = node.format_spec.values  # type: ignore[attr-defined]
            spec = "".join(p.value for p in parts if isinstance(p, ast.Constant))
            dynamic = any(not isinstance(p, ast.Constant) for p in parts)
            if ROUNDS.search(spec) or (dynamic and not re.fullmatch(r"[<>^]?", spec)):
                found.append((node.lineno, ast.unparse(node.value), spec))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "format"
              and len(node.args) == 2):
            found.append((node.lineno, ast.unparse(node.args[0]), "format()"))
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
              and isinstance(node.left.value, str) and re.search(r"%[-+ 0#]*\d*(\.\d+)?[eEfFgG]", node.left.value)):
            found.append((node.lineno, node.left.value[:40], "%-format"))
    return sorted(found)


def _offenders(package: Path) -> list[str]:
    bad = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel == FORMATTER:
            continue
        for line, expr, spec in _specs(path):
            if (rel, expr, spec) in MACHINE or (spec == "format()" and rel in MACHINE_CALLS):
                continue
            bad.append(f"budgetlint/{rel}:{line}: {{{expr}:{spec}}}")
    return bad


def test_no_formatter_but_the_one() -> None:
    assert _offenders(PACKAGE) == []


def test_every_machine_exception_still_exists() -> None:
    """An exception whose code is gone is removed from the list, so it cannot hide a new one."""
    for rel, expr, spec in MACHINE:
        assert (expr, spec) in {(e, s) for _, e, s in _specs(PACKAGE / rel)}, (rel, expr, spec)


def test_the_check_finds_a_second_formatter(tmp_path: Path) -> None:
    """The test of the test: each kind of rounding outside the formatter is caught, alignment is not."""
    (tmp_path / "text").mkdir()
    (tmp_path / "text/numbers.py").write_text('x = f"{1.5:.3g}"\n')
    (tmp_path / "stray.py").write_text(
        'a = f"{v:.2f} ms"\nb = f"{n:,} requests"\nc = f"{p:.0%}"\nd = f"{q:g}"\ne = format(v, ".1f")\n'
        'f = "%.2f" % v\ng = f"{name:<9}"\nh = f"{v!r}"\n')
    assert [o.split(": ", 1)[1] for o in _offenders(tmp_path)] == [
        "{v:.2f}", "{n:,}", "{p:.0%}", "{q:g}", "{v:format()}", "{%.2f:%-format}"]
