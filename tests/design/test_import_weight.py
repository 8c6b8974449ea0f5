"""The commands people run most import nothing heavy.

``--version`` and ``rules`` (the pre-commit hook's and a newcomer's first
calls) must not pay for the physics, pint, jsonschema or YAML. Measured with
``python -X importtime`` in a child process, which lists every module
imported.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("budgetlint.physics", "budgetlint.evaluate", "pint", "jsonschema", "yaml")


def _imported(*args: str, exit_codes: tuple[int, ...] = (0,)) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "budgetlint", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode in exit_codes, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize("args", [("--version",), ("rules",), ("rules", "--format", "json")])
def test_light_commands_import_no_physics_pint_or_jsonschema(args: tuple[str, ...]) -> None:
    imported = _imported(*args)
    assert "budgetlint" in imported  # the measurement works
    heavy = sorted(n for n in imported if any(n == h or n.startswith(h + ".") for h in HEAVY))
    assert heavy == []


def test_the_check_does_import_them() -> None:
    """The probe is not vacuous: a real check imports the physics, and jsonschema once a document
    is invalid (valid ones are vouched for by the compiled checks, files/_schema_compiled.py)."""
    imported = _imported("check", "budgets/", "--no-summary", "--no-codeowners")
    assert "budgetlint.physics" in imported and "jsonschema" not in imported
    imported = _imported("check", "budgets/", "tests/cases/bl003_schema_violation.yaml", "--no-summary",
                         "--no-codeowners", exit_codes=(1,))
    assert "budgetlint.physics" in imported and "jsonschema" in imported
