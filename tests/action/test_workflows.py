"""actionlint, zizmor and check-jsonschema on action.yml and the workflows.

The linters live in their own virtualenv, made by
``bash tests/action/setup_linters.sh``; without it these tests skip.
Everything runs offline.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from action_helpers import REPO_ROOT, workflow_files

WORKFLOWS = [str(p.relative_to(REPO_ROOT)) for p in workflow_files()]


def _run(bin_dir: Path, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"  # shellcheck for actionlint
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(bin_dir / tool), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def test_there_are_workflows() -> None:
    assert "ci.yml" in {Path(w).name for w in WORKFLOWS}
    assert "budgets.yml" in {Path(w).name for w in WORKFLOWS}


def test_actionlint_is_clean(linters_bin: Path) -> None:
    assert (linters_bin / "shellcheck").exists(), "shellcheck checks the run: scripts"
    proc = _run(linters_bin, "actionlint", "-no-color", *WORKFLOWS)
    assert proc.returncode == 0 and not proc.stdout.strip(), _explain(proc)


def test_actionlint_checks_the_local_action_inputs(linters_bin: Path, tmp_path: Path) -> None:
    """actionlint reads ./action.yml for `uses: ./`, so a misspelt input fails."""
    if shutil.which("git") is None:
        pytest.skip("git is needed: actionlint finds the repository root by its .git")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    wf_dir = tmp_path / ".github" / "workflows"
    wf_dir.mkdir(parents=True)
    (tmp_path / "action.yml").write_text((REPO_ROOT / "action.yml").read_text(encoding="utf-8"), encoding="utf-8")
    (wf_dir / "w.yml").write_text(
        "on: pull_request\n"
        "permissions: {}\n"
        "jobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: ./\n        with:\n          pathz: budgets/\n",
        encoding="utf-8",
    )
    env = dict(os.environ, PATH=f"{linters_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(
        [str(linters_bin / "actionlint"), "-no-color", ".github/workflows/w.yml"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 1 and "pathz" in proc.stdout, _explain(proc)


def test_zizmor_is_clean(linters_bin: Path) -> None:
    proc = _run(linters_bin, "zizmor", "--offline", "--persona", "pedantic", "--no-progress", *WORKFLOWS, "action.yml")
    assert proc.returncode == 0, _explain(proc)


def test_action_matches_the_github_actions_schema(linters_bin: Path) -> None:
    proc = _run(linters_bin, "check-jsonschema", "--builtin-schema", "vendor.github-actions", "action.yml")
    assert proc.returncode == 0, _explain(proc)


@pytest.mark.parametrize("schema", ["vendor.github-workflows", "custom.github-workflows-require-timeout"])
def test_workflows_match_the_github_workflows_schema(linters_bin: Path, schema: str) -> None:
    proc = _run(linters_bin, "check-jsonschema", "--builtin-schema", schema, *WORKFLOWS)
    assert proc.returncode == 0, _explain(proc)


def test_schema_checks_do_fail_on_a_broken_action(linters_bin: Path, tmp_path: Path) -> None:
    broken = tmp_path / "action.yml"
    broken.write_text("name: x\ndescription: y\nruns:\n  using: composite\n  steps:\n    - run: echo hi\n      shel: bash\n")
    proc = _run(linters_bin, "check-jsonschema", "--builtin-schema", "vendor.github-actions", str(broken))
    assert proc.returncode != 0, _explain(proc)
