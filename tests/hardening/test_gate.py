"""Issue 15: a gate that cannot pass silently, and the hostile input that
still broke it. Each test names its point; hostile cases run the CLI in a
bounded child (gate_helpers.bounded: 10 s, 200 MiB peak, 2 GiB address space)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from gate_helpers import assert_gate, bounded

REPO = Path(__file__).resolve().parents[2]
BUDGETS = REPO / "budgets"


def _copy_budgets(dest: Path) -> Path:
    shutil.copytree(BUDGETS, dest / "budgets")
    return dest / "budgets"


# --- point 1: a --base that is an option to git -------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_point1_base_ref_that_looks_like_a_git_option_is_refused(tmp_path: Path) -> None:
    _copy_budgets(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    run = bounded("check", "--no-summary", "--base=--output=pwned", "budgets/", cwd=tmp_path)
    assert_gate(run, codes=(2,), names="--output=pwned")
    assert "is not a git ref" in run.stderr
    assert not (tmp_path / "pwned").exists()
