"""No unused import, unused local or undefined name in budgetlint/ or tests/ (issue 22: "dead code
removed"), checked by pyflakes.

A name imported only to be re-exported says so with ``# noqa: F401`` on its line (pyflakes
itself reads no ``noqa``, so the test does). The generated validator
(budgetlint/files/_schema_compiled.py, fastjsonschema's output) is left out: its unused locals
are the generator's."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATED = {ROOT / "budgetlint" / "files" / "_schema_compiled.py"}


def _problems(paths: list[Path]) -> list[str]:
    from pyflakes import api, messages
    from pyflakes.reporter import Reporter

    wanted = (messages.UnusedImport, messages.UnusedVariable, messages.UndefinedName,
              messages.FStringMissingPlaceholders, messages.RedefinedWhileUnused, messages.ImportStarUsed)
    found: list[str] = []

    class Collect(Reporter):
        def __init__(self) -> None:
            pass

        def unexpectedError(self, filename, msg) -> None:  # noqa: N802 (pyflakes' names)
            found.append(f"{filename}: {msg}")

        def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # noqa: N802
            found.append(f"{filename}:{lineno}: {msg}")

        def flake(self, message) -> None:
            if not isinstance(message, wanted):
                return
            lines = Path(message.filename).read_text(encoding="utf-8").splitlines()
            line = lines[message.lineno - 1] if 0 < message.lineno <= len(lines) else ""
            if "noqa" in line:
                return
            found.append(str(message))

    reporter = Collect()
    for path in paths:
        api.checkPath(str(path), reporter)
    return found


def _sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py")
                  if p not in GENERATED and ".venv" not in p.parts)


def test_no_dead_or_undefined_names() -> None:
    pytest.importorskip("pyflakes")
    problems = _problems(_sources("budgetlint", "tests"))
    assert not problems, "\n".join(problems)


def test_the_check_finds_what_it_is_for(tmp_path: Path) -> None:
    """The test of the test: each kind it is meant to catch is caught, and a ``noqa`` re-export
    is not."""
    pytest.importorskip("pyflakes")
    src = tmp_path / "m.py"
    src.write_text("import os\nimport sys  # noqa: F401 (re-exported)\n\n\ndef f():\n    unused = 1\n"
                   "    return missing\n\n\nx = f\"no placeholder\"\n", encoding="utf-8")
    problems = _problems([src])
    assert len(problems) == 4, problems
    text = "\n".join(problems)
    assert "'os' imported but unused" in text
    assert "'sys'" not in text
    assert "local variable 'unused'" in text
    assert "undefined name 'missing'" in text
    assert "f-string is missing placeholders" in text
