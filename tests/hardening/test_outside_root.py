"""Issue 18 point 4: files outside the repository are not read by default.

``bench: ../../..``, absolute paths and symbolic links used to read (and
name in the report) any file on the machine. A run now reads inside its
roots only: the git top level of the paths checked, or the paths themselves
outside git; ``--allow-read DIR`` and the config key ``allow-read`` allow
more. Each refusal is a finding that says what was refused.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hardening_bounds import BUDGET_WITH_BENCH as BUDGET, VLLM_RUN as VLLM, assert_bounded, run_bounded


@pytest.fixture()
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """repo/ (a git repository) with budgets/, and secret/ beside it holding a benchmark file."""
    repo, secret = tmp_path / "repo", tmp_path / "secret"
    (repo / "budgets").mkdir(parents=True)
    secret.mkdir()
    (secret / "run.json").write_text(json.dumps(VLLM))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, secret


@pytest.mark.parametrize("entry", ["../../secret/run.json", "ABS", "../../secret/*.json", "/**/run.json",
                                   "link.json", "linkdir/*.json"])
def test_bench_entry_outside_the_repository_is_refused(layout: tuple[Path, Path], entry: str) -> None:
    repo, secret = layout
    (repo / "budgets" / "link.json").symlink_to(secret / "run.json")
    (repo / "budgets" / "linkdir").symlink_to(secret, target_is_directory=True)
    entry = str(secret / "run.json") if entry == "ABS" else entry
    (repo / "budgets" / "b.yaml").write_text(BUDGET.format(bench=json.dumps(entry)))
    run = run_bounded("check", "budgets", "--no-codeowners", "--no-summary", cwd=repo)
    assert_bounded(run, names="budgets/b.yaml", codes=(1,), rule="BL406", line=7)
    assert "outside the folders this run reads" in run.stdout and "--allow-read" in run.stdout, run.stdout
    assert repr(entry) in run.stdout  # what was refused
    assert "secret/run.json:" not in run.stdout  # never read, so never reported as read
    assert "BL4" not in run.stdout.replace("BL406", "")  # no evidence from it

    if entry.startswith("/**"):
        return  # its folder is '/', which --allow-read SECRET does not allow
    allowed = run_bounded("check", "budgets", "--no-codeowners", "--no-summary", "--allow-read", str(secret),
                          cwd=repo)
    assert allowed.returncode in (0, 1) and "outside the folders" not in allowed.stdout, allowed.stdout


def test_allow_read_in_the_config(layout: tuple[Path, Path]) -> None:
    repo, secret = layout
    (repo / "budgets" / "b.yaml").write_text(BUDGET.format(bench=json.dumps("../../secret/run.json")))
    (repo / "budgetlint.toml").write_text('allow-read = ["../secret"]\n')
    run = run_bounded("check", "budgets", "--no-codeowners", "--no-summary", cwd=repo)
    assert run.returncode in (0, 1) and "outside the folders" not in run.stdout, run.stdout


def test_symlinked_budget_file_and_folder_outside_the_repository(layout: tuple[Path, Path]) -> None:
    repo, secret = layout
    (secret / "passwd.yaml").write_text("version: 1\nkind: teams\nteams: [{handle: '@x/y'}]\n")
    (repo / "budgets" / "ok.yaml").write_text(BUDGET.format(bench="").replace("    bench: []\n", ""))
    (repo / "budgets" / "evil.yaml").symlink_to(secret / "passwd.yaml")
    (repo / "budgets" / "elsewhere").symlink_to(secret, target_is_directory=True)
    run = run_bounded("check", "budgets", "--no-codeowners", "--no-summary", cwd=repo)
    assert_bounded(run, names="budgets/evil.yaml", codes=(1,), rule="BL010")
    assert "budgets/elsewhere" in run.stdout and "symbolic link to a folder outside" in run.stdout
    assert "passwd" not in run.stdout  # the target is neither read nor named
