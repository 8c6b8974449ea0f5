"""Every case under tests/cases/ is checked against the expectations it states.

See tests/cases/README.md: `# expect: CODE line:col` and `# exit: N` comments.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main

CASES = Path(__file__).parent / "cases"
EXPECT = re.compile(rb"#\s*expect:\s*(BL\d{3})\s+(\d+):(\d+)")
EXIT = re.compile(rb"#\s*exit:\s*(\d+)")


def _case_files(case: Path) -> list[Path]:
    return sorted(case.rglob("*.y*ml")) if case.is_dir() else [case]


def _expectations(case: Path) -> tuple[Counter, int | None]:
    expected: Counter = Counter()
    exit_code = None
    for f in _case_files(case):
        raw = f.read_bytes()
        for code, line, col in EXPECT.findall(raw):
            name = f.relative_to(CASES.parent.parent).as_posix()
            expected[(code.decode(), name, int(line), int(col))] += 1
        m = EXIT.search(raw)
        if m:
            exit_code = int(m.group(1))
    return expected, exit_code


CASE_PATHS = sorted(p for p in CASES.iterdir() if p.suffix in (".yaml", ".yml") or p.is_dir())


@pytest.mark.parametrize("case", CASE_PATHS, ids=lambda p: p.stem)
def test_case(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES.parent.parent)
    expected, exit_code = _expectations(case)
    assert expected, f"{case} states no expectation"
    rel = case.relative_to(CASES.parent.parent).as_posix()
    result = CliRunner().invoke(main, ["check", rel, "--no-codeowners", "--format", "json"])
    assert "Traceback" not in result.output
    report = json.loads(result.output)
    got = Counter(
        (f["rule"], f["file"], f["line"], f["column"])
        for f in report["findings"]
        if f["severity"] in ("error", "warning") or (f["rule"], f["file"], f["line"], f["column"]) in expected
    )
    assert got == expected, json.dumps(report["findings"], indent=1)
    has_error = any(f["severity"] == "error" for f in report["findings"])
    assert result.exit_code == (exit_code if exit_code is not None else (1 if has_error else 0))


def test_every_rule_code_has_a_case_or_a_test() -> None:
    """Each input, ownership and arithmetic rule has a case file named after it."""
    from budgetlint.rules import all_rules

    names = {p.name[:5].upper() for p in CASE_PATHS}
    for rule in all_rules():
        if rule.code < "BL300" and rule.code != "BL104":
            assert rule.code in names, f"no case file for {rule.code}"
