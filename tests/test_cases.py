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
MESSAGE = re.compile(rb"#\s*message:\s*(BL\d{3})\s+(\d+):(\d+)\s+(.+?)\s*$", re.M)


def _case_files(case: Path) -> list[Path]:
    return sorted(case.rglob("*.y*ml")) if case.is_dir() else [case]


def _messages(case: Path) -> list[tuple[tuple[str, str, int, int], str]]:
    """``# message: CODE line:col TEXT``: the finding there says TEXT (a number worked by hand)."""
    out = []
    for f in _case_files(case):
        name = f.relative_to(CASES.parent.parent).as_posix()
        for code, line, col, text in MESSAGE.findall(f.read_bytes()):
            out.append(((code.decode(), name, int(line), int(col)), text.decode("utf-8")))
    return out


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
    for where, text in _messages(case):
        said = [f["message"] for f in report["findings"] if (f["rule"], f["file"], f["line"], f["column"]) == where]
        assert said, f"# message: no {where[0]} at {where[2]}:{where[3]}"
        assert any(text in m for m in said), f"{text!r} is not in {said}"
    has_error = any(f["severity"] == "error" for f in report["findings"])
    assert result.exit_code == (exit_code if exit_code is not None else (1 if has_error else 0))


def test_every_rule_code_has_a_case_or_a_test() -> None:
    """Each input, ownership and arithmetic rule has a case file named after it."""
    from budgetlint.rules import all_rules

    names = {p.name[:5].upper() for p in CASE_PATHS}
    for rule in all_rules():
        if rule.code < "BL300" and rule.code != "BL104":
            assert rule.code in names, f"no case file for {rule.code}"


def test_a_wrong_message_expectation_fails(tmp_path: Path) -> None:
    """The test of the test: the ``# message:`` parser reads code, place and text."""
    f = tmp_path / "c.yaml"
    f.write_text("# message: BL301 15:13 the roofline bound is 48.2 token/s\n", encoding="utf-8")
    [(where, text)] = [(w, t) for w, t in _messages_of(f)]
    assert where[0] == "BL301" and where[2:] == (15, 13) and text == "the roofline bound is 48.2 token/s"


def _messages_of(f: Path) -> list:
    return [((c.decode(), f.name, int(line), int(col)), t.decode()) for c, line, col, t in MESSAGE.findall(f.read_bytes())]
