"""action.yml: structure, safety rules, and its shell scripts run for real
against a fake ``budgetlint`` and a fake Python (no network, no CLI needed)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from action_helpers import REPO_ROOT, load_yaml, workflow_files

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")

PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+(?P<ref>\S+)(?P<comment>\s+#.*)?$")
SHA_REF = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")


def _step(action: dict[str, Any], step_id: str) -> dict[str, Any]:
    return next(s for s in action["runs"]["steps"] if s.get("id") == step_id)


def _yaml_files() -> list[Path]:
    return [REPO_ROOT / "action.yml", *workflow_files()]


def _all_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


# --- structure and safety ---------------------------------------------------


def test_composite_with_the_documented_inputs(action: dict[str, Any]) -> None:
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    for name in ("paths", "format", "fail-on", "bench", "base-ref", "version", "sarif", "summary"):
        assert name in inputs and inputs[name]["description"], name
    assert inputs["paths"]["default"] == "budgets/"
    assert inputs["fail-on"]["default"] == "error"
    assert inputs["format"]["default"] == "github"
    assert inputs["summary"]["default"] == "true"
    assert inputs["version"]["default"] == ""
    assert {"exit-code", "sarif"} <= set(action["outputs"])


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_no_expression_inside_run_scripts(path: Path) -> None:
    """Inputs reach scripts through env:, never by ${{ }} interpolation."""
    for step in _all_steps(load_yaml(path)):
        if "run" in step:
            assert "${{" not in step["run"], f"{path.name}: step {step.get('name')!r} interpolates into run:"


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_every_run_step_says_its_shell(path: Path) -> None:
    for step in _all_steps(load_yaml(path)):
        if "run" in step:
            assert step.get("shell") == "bash", f"{path.name}: step {step.get('name')!r}"


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_actions_are_pinned_by_commit_with_a_version_comment(path: Path) -> None:
    seen = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        m = PINNED.match(line)
        if not m:
            continue
        seen += 1
        ref = m["ref"]
        if ref.startswith("./"):
            continue
        assert SHA_REF.match(ref), f"{path.name}: {ref} is not pinned by a full commit SHA"
        assert m["comment"] and re.search(r"#\s*v\d", m["comment"]), f"{path.name}: {ref} needs a # vX.Y.Z comment"
    assert seen


def test_workflows_have_least_permissions() -> None:
    for path in workflow_files():
        doc = load_yaml(path)
        assert doc.get("permissions") == {}, f"{path.name}: top-level permissions must be {{}}"
        for name, job in doc["jobs"].items():
            perms = job.get("permissions")
            assert isinstance(perms, dict) and perms.get("contents") == "read", f"{path.name}:{name}"
            extra = {k: v for k, v in perms.items() if k != "contents"}
            if path.name == "budgets.yml":
                assert extra == {"security-events": "write"}
            else:
                assert extra == {}
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False


def test_ci_runs_the_project_script() -> None:
    doc = load_yaml(REPO_ROOT / ".github" / "workflows" / "ci.yml")
    triggers = doc[True] if True in doc else doc["on"]  # YAML 1.1 reads `on` as True
    assert {"push", "pull_request"} <= set(triggers)
    runs = [s["run"] for s in doc["jobs"]["test"]["steps"] if "run" in s]
    assert runs == ["bash .ci/run"]


def test_budgets_workflow_dogfoods_the_action() -> None:
    doc = load_yaml(REPO_ROOT / ".github" / "workflows" / "budgets.yml")
    triggers = doc[True] if True in doc else doc["on"]
    assert set(triggers) == {"pull_request"}
    (step,) = [s for s in doc["jobs"]["budgetlint"]["steps"] if s.get("uses") == "./"]
    assert step["with"]["paths"] == "budgets/"
    assert "pull_request.base.sha" in step["with"]["base-ref"]
    assert step["with"]["sarif"]


def test_pre_commit_hook_manifest() -> None:
    hooks = load_yaml(REPO_ROOT / ".pre-commit-hooks.yaml")
    assert isinstance(hooks, list)
    (hook,) = [h for h in hooks if h["id"] == "budgetlint"]
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["entry"] == "budgetlint check"
    assert hook["language"] == "python"
    # the changed files are passed, and checked with the configured paths: budgets refer to other files
    assert hook["pass_filenames"] is True
    assert "--with-configured-paths" in hook["args"]
    files = re.compile(hook["files"])
    for path in ("budgets/chat.yaml", "svc/budgets/x.yml", "chat.budgets.yaml", "h100.hardware.yml", "teams.yaml"):
        assert files.search(path), path
    for path in (".github/workflows/ci.yml", "docker-compose.yaml", "action.yml", "budgets/README.md"):
        assert not files.search(path), path


# --- the scripts, run for real ------------------------------------------------


def _write_exe(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT read the way the runner reads it: `name=value` lines and
    `name<<DELIM` ... `DELIM` blocks; a name given twice keeps the last value."""
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delim:
                    break
                body.append(inner)
            else:
                raise AssertionError(f"GITHUB_OUTPUT: {name} has no closing delimiter")
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


@pytest.fixture()
def fake_budgetlint(tmp_path: Path) -> Path:
    """Records its arguments, one per line; writes a SARIF file to --output when
    asked for sarif; exits with $FAKE_RC."""
    return _write_exe(
        tmp_path / "budgetlint",
        "#!/usr/bin/env bash\n"
        'printf "%s\\n" "$@" > "$ARGS_LOG"\n'
        'printf "%s" "${BUDGETLINT_CACHE_DIR-unset}" > "$ARGS_LOG.cache-dir"\n'
        "prev=''; fmt=''\n"
        'for a in "$@"; do\n'
        '  if [[ "$prev" == --format ]]; then fmt="$a"; fi\n'
        '  if [[ "$prev" == --output && "$fmt" == sarif ]]; then echo "{}" > "$a"; fi\n'
        '  if [[ "$a" == --output=* && "$fmt" == sarif ]]; then echo "{}" > "${a#--output=}"; fi\n'
        '  if [[ "$a" == --output=* && "$fmt" == html ]]; then echo "<html></html>" > "${a#--output=}"; fi\n'
        '  if [[ "$a" == -- ]]; then break; fi\n'
        '  if [[ "$prev" == --output && "$fmt" == html ]]; then echo "<html></html>" > "$a"; fi\n'
        '  prev="$a"\n'
        "done\n"
        'exit "${FAKE_RC:-0}"\n',
    )


def _run_check(action: dict[str, Any], tmp_path: Path, fake: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], list[str], dict[str, str]]:
    step = _step(action, "check")
    defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values = {**defaults, **{k.replace("_", "-"): v for k, v in inputs.items() if k != "FAKE_RC"}}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "BUDGETLINT": str(fake),
        "ARGS_LOG": str(tmp_path / "args"),
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
        "FAKE_RC": inputs.get("FAKE_RC", "0"),
    }
    for key, expr in step["env"].items():
        m = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", expr)
        if m:
            env[key] = values[m[1]]
    proc = subprocess.run([BASH, "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    args_file = tmp_path / "args"
    args = args_file.read_text(encoding="utf-8").splitlines() if args_file.exists() else []
    return proc, args, _outputs(tmp_path / "github_output")


@needs_bash
def test_check_with_the_defaults(action: dict[str, Any], tmp_path: Path, fake_budgetlint: Path) -> None:
    proc, args, outputs = _run_check(action, tmp_path, fake_budgetlint)
    assert proc.returncode == 0, proc.stderr
    html = "./budgetlint-report/report.html"  # under $RUNNER_TEMP on a runner
    assert args == ["check", "--fail-on", "error", "--format", "github", "--output", "-",
                    "--format", "html", f"--output={html}", "--quiet", "--", "budgets/"]
    assert outputs == {"exit-code": "0", "html": html}
    assert (tmp_path / html).is_file()


@needs_bash
def test_html_report_goes_under_runner_temp_and_can_be_turned_off(action: dict[str, Any], tmp_path: Path,
                                                                  fake_budgetlint: Path) -> None:
    proc, args, outputs = _run_check(action, tmp_path, fake_budgetlint, html_report="false")
    assert proc.returncode == 0, proc.stderr
    assert "html" not in args and "html" not in outputs


@needs_bash
def test_check_with_every_input(action: dict[str, Any], tmp_path: Path, fake_budgetlint: Path) -> None:
    proc, args, outputs = _run_check(
        action,
        tmp_path,
        fake_budgetlint,
        paths="budgets/  more/a.yaml\nthird.yml",
        format="text",
        fail_on="warning",
        bench="bench/a.json\n bench/b.json",
        base_ref="origin/main",
        sarif="out/budgetlint.sarif",
        summary="false",
        html_report="false",
        quiet="false",
        comment="true",
        FAKE_RC="1",
    )
    assert proc.returncode == 0, proc.stderr  # the failing comes after the SARIF upload
    assert args == [
        "check",
        "--fail-on", "warning", "--format", "text", "--output", "-",
        "--bench=bench/a.json", "--bench=bench/b.json",
        "--base=origin/main",
        "--format", "sarif", "--output=out/budgetlint.sarif",
        "--format", "json", "--output=./budgetlint-report/report.json",
        "--no-summary",
        "--", "budgets/", "more/a.yaml", "third.yml",
    ]
    assert outputs == {"exit-code": "1", "sarif": "out/budgetlint.sarif"}
    assert (tmp_path / "out" / "budgetlint.sarif").is_file()


@needs_bash
def test_inputs_are_data_not_code(action: dict[str, Any], tmp_path: Path, fake_budgetlint: Path) -> None:
    nasty = "$(touch pwned1) `touch pwned2` ;touch${IFS}pwned3 *"
    proc, args, _ = _run_check(action, tmp_path, fake_budgetlint, paths=nasty, base_ref="x; touch pwned4")
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("pwned*"))
    paths = args[args.index("--") + 1:]
    assert paths == ["$(touch", "pwned1)", "`touch", "pwned2`", ";touch${IFS}pwned3", "*"]  # "*" not globbed
    assert "--base=x; touch pwned4" in args


@needs_bash
@pytest.mark.parametrize(("name", "value"), [("fail_on", "info"), ("summary", "yes"), ("html_report", "yes"),
                                             ("quiet", "1"), ("comment", "yes"),
                                             ("cache", "yes")])
def test_bad_choices_fail_before_running(action: dict[str, Any], tmp_path: Path, fake_budgetlint: Path, name: str, value: str) -> None:
    proc, args, outputs = _run_check(action, tmp_path, fake_budgetlint, **{name: value})
    assert proc.returncode == 2
    assert proc.stdout.startswith("::error title=budgetlint::")
    assert args == [] and "exit-code" not in outputs


@pytest.fixture()
def fake_python(tmp_path: Path) -> Path:
    """`python -m venv DIR` makes DIR/bin/python that logs its arguments."""
    return _write_exe(
        tmp_path / "python",
        "#!/usr/bin/env bash\n"
        'if [[ "$1 $2" == "-m venv" ]]; then\n'
        '  mkdir -p "$3/bin"\n'
        "  printf '#!/usr/bin/env bash\\nprintf \"%%s\\\\n\" \"$@\" > \"$PIP_LOG\"\\n' > \"$3/bin/python\"\n"
        "  printf '#!/usr/bin/env bash\\necho budgetlint 0.0.0\\n' > \"$3/bin/budgetlint\"\n"
        '  chmod +x "$3/bin/python" "$3/bin/budgetlint"\n'
        "fi\n",
    )


def _run_install(action: dict[str, Any], tmp_path: Path, python: Path, version: str) -> tuple[subprocess.CompletedProcess[str], list[str], dict[str, str]]:
    step = _step(action, "install")
    assert set(step["env"]) == {"PYTHON", "BUDGETLINT_VERSION", "ACTION_PATH"}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHON": str(python),
        "BUDGETLINT_VERSION": version,
        "ACTION_PATH": "/actions/budgetlint",
        "RUNNER_TEMP": str(tmp_path),
        "PIP_LOG": str(tmp_path / "pip"),
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
    }
    proc = subprocess.run([BASH, "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    log = tmp_path / "pip"
    pip_args = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return proc, pip_args, _outputs(tmp_path / "github_output")


@needs_bash
@pytest.mark.parametrize(
    ("version", "spec"),
    [
        ("", "/actions/budgetlint"),
        ("0.2.0", "budgetlint==0.2.0"),
        ("1.0.0rc1", "budgetlint==1.0.0rc1"),
        ("budgetlint>=0.2,<0.3", "budgetlint>=0.2,<0.3"),
    ],
)
def test_install_spec(action: dict[str, Any], tmp_path: Path, fake_python: Path, version: str, spec: str) -> None:
    proc, pip_args, outputs = _run_install(action, tmp_path, fake_python, version)
    assert proc.returncode == 0, proc.stderr
    assert pip_args[:2] == ["-m", "pip"] and pip_args[-1] == spec
    assert outputs == {"bin": f"{tmp_path}/budgetlint-venv/bin/budgetlint",
                       "python": f"{tmp_path}/budgetlint-venv/bin/python"}


@needs_bash
def test_install_refuses_options_as_version(action: dict[str, Any], tmp_path: Path, fake_python: Path) -> None:
    proc, pip_args, _ = _run_install(action, tmp_path, fake_python, "--index-url=https://evil.example/simple")
    assert proc.returncode == 2 and pip_args == []


@needs_bash
@pytest.mark.parametrize("rc", ["1", "2"])
def test_fail_step_exits_with_budgetlints_code(action: dict[str, Any], rc: str) -> None:
    step = next(s for s in action["runs"]["steps"] if s.get("name") == "Fail on findings")
    assert step["if"] == "${{ steps.check.outputs.exit-code != '0' }}"
    proc = subprocess.run([BASH, "-c", step["run"]], env={"RC": rc, "PATH": os.environ.get("PATH", "")}, capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    assert proc.returncode == int(rc)


def test_sarif_upload_only_when_written(action: dict[str, Any]) -> None:
    step = next(s for s in action["runs"]["steps"] if "upload-sarif" in str(s.get("uses", "")))
    assert step["if"] == "${{ steps.check.outputs.sarif != '' }}"
    assert step["with"]["sarif_file"] == "${{ steps.check.outputs.sarif }}"


# --- issue 15, point 1: inputs steer nothing ------------------------------------


@needs_bash
@pytest.mark.parametrize("paths", ["--help", "--ignore BL3 budgets/", "--fail-on=warning budgets/", "-q"])
def test_paths_that_look_like_options_are_file_names(action: dict[str, Any], tmp_path: Path,
                                                      fake_budgetlint: Path, paths: str) -> None:
    proc, args, _ = _run_check(action, tmp_path, fake_budgetlint, paths=paths)
    assert proc.returncode == 0, proc.stderr
    end = args.index("--")
    assert args[end + 1:] == paths.split()  # after the end of options: data
    assert not any(a.startswith("-") and a in paths.split() for a in args[:end])


@needs_bash
@pytest.mark.parametrize("name", ["sarif", "base_ref", "format"])
def test_a_newline_in_a_one_value_input_is_refused(action: dict[str, Any], tmp_path: Path,
                                                   fake_budgetlint: Path, name: str) -> None:
    value = "out/x.sarif\nexit-code=0\n::set-output name=exit-code::0"
    proc, args, outputs = _run_check(action, tmp_path, fake_budgetlint, FAKE_RC="1", **{name: value})
    assert proc.returncode == 2, proc.stdout
    assert args == [] and outputs == {}
    (line,) = proc.stdout.splitlines()  # one line: the value cannot start a workflow command
    assert line.startswith("::error title=budgetlint::") and "may not contain a newline" in line
    assert "%0Aexit-code=0%0A" in line


@needs_bash
@pytest.mark.parametrize(("name", "value"), [("sarif", "-"), ("sarif", "--help"), ("base_ref", "--output=x")])
def test_a_leading_dash_in_a_one_value_input_is_refused(action: dict[str, Any], tmp_path: Path,
                                                        fake_budgetlint: Path, name: str, value: str) -> None:
    proc, args, outputs = _run_check(action, tmp_path, fake_budgetlint, **{name: value})
    assert proc.returncode == 2 and args == [] and outputs == {}
    assert "may not start with '-'" in proc.stdout


@needs_bash
def test_outputs_cannot_be_forged_by_a_value(action: dict[str, Any], tmp_path: Path, fake_budgetlint: Path) -> None:
    # a sarif path may hold '=' and '<<': the delimiter syntax keeps it one value
    sarif = "out/a=b<<EOF.sarif"
    proc, _, outputs = _run_check(action, tmp_path, fake_budgetlint, sarif=sarif, FAKE_RC="1")
    assert proc.returncode == 0, proc.stderr
    assert outputs["exit-code"] == "1" and outputs["sarif"] == sarif
    text = (tmp_path / "github_output").read_text(encoding="utf-8")
    delims = {line.split("<<", 1)[1] for line in text.splitlines() if line.startswith(("exit-code<<", "sarif<<"))}
    (delim,) = delims
    assert len(delim) > 30 and delim not in sarif


@needs_bash
def test_real_cli_behind_the_action_checks_a_path_named_like_an_option(action: dict[str, Any], tmp_path: Path) -> None:
    """End to end with the real CLI: a `paths` of `--help` fails (no such file),
    where it used to print the help and pass."""
    import sys

    real = _write_exe(tmp_path / "real-budgetlint",
                      f'#!/usr/bin/env bash\nexec {sys.executable} -m budgetlint "$@"\n')
    proc, _, outputs = _run_check(action, tmp_path, real, paths="--help", summary="false")
    assert proc.returncode == 0, proc.stderr
    assert outputs["exit-code"] == "2"
    assert "no such file or directory: --help" in proc.stderr


def test_html_report_upload_only_when_written(action: dict[str, Any]) -> None:
    step = _step(action, "html")
    assert step["uses"].startswith("actions/upload-artifact@")
    assert step["if"] == "${{ steps.check.outputs.html != '' }}"
    assert step["with"]["path"] == "${{ steps.check.outputs.html }}"
    assert step["with"]["name"] == "${{ inputs.html-report-name }}"
    assert action["inputs"]["html-report"]["default"] == "true"


@needs_bash
@pytest.mark.parametrize("summary", ["true", "false"])
def test_the_summary_says_where_the_html_report_is(action: dict[str, Any], tmp_path: Path, summary: str) -> None:
    step = next(s for s in action["runs"]["steps"] if s.get("name") == "Say where the HTML report is")
    assert step["if"] == "${{ steps.html.outputs.artifact-url != '' }}"
    target = tmp_path / "summary.md"
    target.write_text("## budgetlint\n", encoding="utf-8")
    url = "https://github.com/o/r/actions/runs/1/artifacts/2"
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_STEP_SUMMARY": str(target), "URL": url,
           "NAME": "budgetlint-report", "INPUT_SUMMARY": summary}
    proc = subprocess.run([BASH, "-c", step["run"]], env=env, capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    assert proc.returncode == 0, proc.stderr
    assert url in proc.stdout and proc.stdout.startswith("::notice")
    text = target.read_text(encoding="utf-8")
    if summary == "true":
        assert f"[budgetlint-report]({url})" in text and "report.html" in text
    else:
        assert text == "## budgetlint\n"


def test_the_pr_comment_is_opt_in_and_only_its_step_sees_the_token(action: dict[str, Any]) -> None:
    """Issue 27: a sticky comment, opt-in (it needs pull-requests: write), posted by
    budgetlint.github_comment from the JSON report the check step wrote."""
    assert action["inputs"]["comment"]["default"] == "false"
    assert action["inputs"]["quiet"]["default"] == "true"  # no ::notice for met promises unless asked
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    steps = action["runs"]["steps"]
    with_token = [s.get("name") for s in steps if "inputs.github-token" in str(s.get("env", {}))]
    assert with_token == ["Post the pull request comment"]
    (step,) = [s for s in steps if s.get("name") == "Post the pull request comment"]
    assert step["if"] == "${{ inputs.comment == 'true' && steps.check.outputs.json != '' }}"
    assert "-m budgetlint.github_comment --report \"$REPORT\"" in step["run"]
    names = [s.get("name") for s in steps]
    assert names.index("Post the pull request comment") < names.index("Fail on findings")  # a failing check comments too


def test_docs_ask_for_pull_requests_write_only_with_the_comment() -> None:
    text = (REPO_ROOT / "docs" / "github-action.md").read_text(encoding="utf-8")
    assert "pull-requests: write # only for comment: true" in text
    assert "pull-requests: write" not in (REPO_ROOT / ".github" / "workflows" / "budgets.yml").read_text(encoding="utf-8")


def _yaml_blocks(path: Path) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_readme_and_docs_give_the_same_workflow_permissions_and_hook_rev() -> None:
    """Issue 27: the README's workflow lacked `actions: read`, the hook manifest said
    `rev: v0.1.0` where the README said a commit SHA."""
    import yaml

    def job_permissions(path: Path) -> dict:
        for block in _yaml_blocks(path):
            doc = yaml.safe_load(block)
            if isinstance(doc, dict) and "jobs" in doc:
                return doc["jobs"]["budgetlint"]["permissions"]
        raise AssertionError(f"{path.name}: no workflow")

    readme, docs = REPO_ROOT / "README.md", REPO_ROOT / "docs" / "github-action.md"
    assert job_permissions(readme) == job_permissions(docs)
    revs = set()
    for path in (readme, docs, REPO_ROOT / ".pre-commit-hooks.yaml"):
        revs |= set(re.findall(r"^[#\s]*rev: (.*)$", path.read_text(encoding="utf-8"), re.M))
    assert revs == {"<commit-sha> # vX.Y.Z"}


# --- the simulation cache between runs (issue 28) ---------------------------------


def test_the_simulation_cache_is_opt_in_restored_before_the_check_and_saved_after(action: dict[str, Any]) -> None:
    steps = action["runs"]["steps"]
    assert action["inputs"]["cache"]["default"] == "false"
    names = [str(s.get("uses", s.get("id", ""))) for s in steps]
    restore = next(i for i, n in enumerate(names) if n.startswith("actions/cache/restore@"))
    save = next(i for i, n in enumerate(names) if n.startswith("actions/cache/save@"))
    check = next(i for i, s in enumerate(steps) if s.get("id") == "check")
    assert restore < check < save
    r, w = steps[restore], steps[save]
    assert r["if"] == "${{ inputs.cache == 'true' }}"
    assert w["if"] == "${{ always() && inputs.cache == 'true' && steps.check.outputs.exit-code != '' }}", \
        "saved whatever the findings, once the check ran"
    assert r["with"]["path"] == w["with"]["path"] == "${{ runner.temp }}/budgetlint-cache"
    assert r["with"]["key"] == w["with"]["key"] == "${{ steps.cache-name.outputs.key }}"
    assert r["with"]["restore-keys"].strip().splitlines() == ["${{ steps.cache-name.outputs.prefix }}",
                                                               "budgetlint-sim-${{ runner.os }}-"]
    name = next(i for i, s in enumerate(steps) if s.get("id") == "cache-name")
    assert name < restore and steps[name]["if"] == r["if"]


def _name_the_cache(action: dict[str, Any], tmp_path: Path, cache_key: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The step that names the cache, run in bash as the runner would (its env from a runner's contexts)."""
    step = _step(action, "cache-name")
    assert step["env"] == {"CACHE_KEY": "${{ inputs.cache-key }}", "JOB": "${{ github.job }}",
                           "RUN": "${{ github.run_id }}-${{ github.run_attempt }}"}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GITHUB_OUTPUT": str(tmp_path / "github_output"),
           "RUNNER_OS": "Linux", "CACHE_KEY": cache_key, "JOB": "budgets", "RUN": "123-2"}
    proc = subprocess.run([BASH, "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    return proc, _outputs(tmp_path / "github_output")


@needs_bash
@pytest.mark.parametrize("cache_key,prefix", [
    ("", "budgetlint-sim-Linux-budgets-"),
    ("ubuntu-3.12", "budgetlint-sim-Linux-budgets-ubuntu-3.12-"),
])
def test_each_use_of_the_cache_in_a_job_saves_under_its_own_key(action: dict[str, Any], tmp_path: Path,
                                                               cache_key: str, prefix: str) -> None:
    """Until stop 47 the key named the job, not the matrix leg: two legs of one run saved under one key
    and the second's save warned (GitHub saves a key once). The key is the prefix, then run and attempt."""
    proc, outputs = _name_the_cache(action, tmp_path, cache_key)
    assert proc.returncode == 0, proc.stderr
    assert outputs == {"prefix": prefix, "key": prefix + "123-2"}


@needs_bash
@pytest.mark.parametrize("cache_key", ["a,b", "a b", "x" * 65, "$(id)", "a\nb"])
def test_a_cache_key_actions_cache_would_refuse_is_refused_first(action: dict[str, Any], tmp_path: Path,
                                                                cache_key: str) -> None:
    proc, outputs = _name_the_cache(action, tmp_path, cache_key)
    assert proc.returncode == 2 and outputs == {}
    assert "cache-key must be letters, digits, '.', '_' and '-', at most 64" in proc.stdout


@needs_bash
def test_the_check_reads_the_cache_folder_only_when_asked(action: dict[str, Any], tmp_path: Path,
                                                          fake_budgetlint: Path) -> None:
    proc, _, _ = _run_check(action, tmp_path, fake_budgetlint)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args.cache-dir").read_text() == "unset"
    assert not (tmp_path / "budgetlint-cache").exists()
    proc, _, _ = _run_check(action, tmp_path, fake_budgetlint, cache="true")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args.cache-dir").read_text() == "./budgetlint-cache", "under $RUNNER_TEMP on a runner"
    # there even when nothing was simulated (the fake writes nothing): actions/cache/save warns on a missing path
    assert (tmp_path / "budgetlint-cache").is_dir()


@needs_bash
def test_real_cli_behind_the_action_keeps_and_reads_the_cache(action: dict[str, Any], tmp_path: Path) -> None:
    """End to end: with cache true the real check writes its entries in the folder the save step saves, and
    a second run (as after the restore step) reports the same."""
    import sys

    (tmp_path / "budgets").mkdir()
    (tmp_path / "budgets" / "chat.yaml").write_text("""version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 800, output_tokens: 200, arrival_rate: 2 request/s}
    promise: {ttft: 800 ms, tpot: 50 ms}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, devices: 1, weight_precision: bf16}
""")
    real = _write_exe(tmp_path / "real-budgetlint",
                      f'#!/usr/bin/env bash\nexec {sys.executable} -m budgetlint "$@"\n')
    runs = [_run_check(action, tmp_path, real, summary="false", html_report="false", quiet="false", cache="true")
            for _ in range(2)]
    assert [p.returncode for p, _, _ in runs] == [0, 0], runs[0][0].stderr
    assert runs[0][2]["exit-code"] == runs[1][2]["exit-code"] == "0"
    assert runs[0][0].stdout == runs[1][0].stdout and "BL304" in runs[0][0].stdout
    assert len(list((tmp_path / "budgetlint-cache").rglob("*.json"))) == 1
