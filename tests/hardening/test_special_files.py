"""Issue 15 point 7: pipes and devices where a file is expected.

A FIFO named ``*.yaml`` blocked the run forever; ``/dev/zero``,
``/dev/urandom`` and ``/dev/stdin`` read until ~3 GB and exit 3. ``stat()``
says nothing about their size, so budgetlint now opens without blocking,
refuses what is not a regular file (BL010 / BL406 naming it) and never reads
past its limit.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hardening_bounds import assert_bounded, run_bounded

BUDGET = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    promise: {{ttft: 1 s}}
    bench: ["{bench}"]
"""


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("device", ["fifo", "/dev/zero", "/dev/urandom", "/dev/stdin"])
def test_yaml_path_that_is_not_a_file(tmp_path: Path, device: str) -> None:
    target = str(_fifo(tmp_path / "pipe.yaml")) if device == "fifo" else device
    stdin = subprocess.PIPE if device == "/dev/stdin" else subprocess.DEVNULL  # a pipe nobody writes to
    run = run_bounded("check", target, "--no-codeowners", "--no-summary", cwd=tmp_path, stdin=stdin)
    assert_bounded(run, names=target if device != "fifo" else "pipe.yaml", codes=(1,), rule="BL010")
    assert "not a regular file" in run.stdout, run.stdout
    assert run.peak_mib is not None and run.peak_mib < 100


def test_fifo_in_a_checked_folder(tmp_path: Path) -> None:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    (budgets / "ok.yaml").write_text(BUDGET.format(bench="none.json").replace('    bench: ["none.json"]\n', ""))
    _fifo(budgets / "zz-pipe.yaml")
    run = run_bounded("check", "budgets", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="budgets/zz-pipe.yaml", codes=(1,), rule="BL010")
    assert "a named pipe (FIFO), not a regular file" in run.stdout


@pytest.mark.parametrize("device", ["fifo", "/dev/zero", "/dev/urandom"])
def test_bench_entry_that_is_not_a_file(tmp_path: Path, device: str) -> None:
    target = "pipe.json" if device == "fifo" else device
    if device == "fifo":
        _fifo(tmp_path / "pipe.json")
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench=target))
    (tmp_path / "budgetlint.toml").write_text('allow-read = ["/dev"]\n')  # devices are outside the root
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names=target, codes=(1,), rule="BL406")
    assert "not a regular file" in run.stdout, run.stdout


def _flag_target(tmp_path: Path, device: str, pipe_name: str) -> tuple[str, object]:
    """A flag's file that is no regular file: (its name, the child's standard input), beside a budget b.yaml
    with no bench: a named pipe made as ``pipe_name``, or the device itself (/dev/stdin a pipe nobody writes)."""
    target = pipe_name if device == "fifo" else device
    if device == "fifo":
        _fifo(tmp_path / pipe_name)
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench="x").replace('    bench: ["x"]\n', ""))
    return target, subprocess.PIPE if device == "/dev/stdin" else subprocess.DEVNULL


@pytest.mark.parametrize("device", ["fifo", "/dev/zero", "/dev/urandom", "/dev/stdin"])
def test_bench_flag_that_is_not_a_file(tmp_path: Path, device: str) -> None:
    target, stdin = _flag_target(tmp_path, device, "pipe.json")
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", "--bench", target,
                      cwd=tmp_path, stdin=stdin)
    assert_bounded(run, names=target, codes=(1,), rule="BL406")
    assert "not a regular file" in run.stdout, run.stdout


def test_config_file_that_is_a_pipe(tmp_path: Path) -> None:
    """Refused before reading (is it a file?) and, should it become a pipe after that question,
    by the bounded reader. (A guard: this passed before too.)"""
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench="x").replace('    bench: ["x"]\n', ""))
    _fifo(tmp_path / "budgetlint.toml")  # config discovery passes it over (not a file); --config names it
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert run.returncode == 0, run.output
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", "--config", "budgetlint.toml",
                      cwd=tmp_path)
    assert_bounded(run, names="budgetlint.toml", codes=(2,))
    assert "the config file budgetlint.toml is a named pipe (FIFO), not a regular file" in run.output, run.output


def test_codeowners_that_is_a_pipe(tmp_path: Path) -> None:
    """A guard, as for the config file: never read as a stream."""
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench="x").replace('    bench: ["x"]\n', ""))
    (tmp_path / ".github").mkdir()
    _fifo(tmp_path / ".github" / "CODEOWNERS")
    run = run_bounded("check", "b.yaml", "--no-summary", cwd=tmp_path)  # found in .github/: not read, said
    assert_bounded(run, names="b.yaml", codes=(0, 1))
    # until stop 47 passed over in silence, and BL104 said no CODEOWNERS was found
    assert (".github/CODEOWNERS:1:1: BL010 warning: expected a CODEOWNERS file, found a named pipe (FIFO); "
            "owners are not verified against it") in run.output, run.output
    run = run_bounded("check", "b.yaml", "--no-summary", "--codeowners", ".github/CODEOWNERS", cwd=tmp_path)
    assert_bounded(run, names=".github/CODEOWNERS", codes=(2,))
    # said as what it is (until stop 46: "no such CODEOWNERS file", for a file that is there)
    assert "the CODEOWNERS file .github/CODEOWNERS is a named pipe (FIFO), not a regular file" in run.output


@pytest.mark.parametrize("device", ["fifo", "/dev/zero", "/dev/urandom", "/dev/stdin"])
def test_history_flag_that_is_not_a_file(tmp_path: Path, device: str) -> None:
    """check --history: a pipe waited for a writer for ever and /dev/zero was one line without end (until
    stop 46: its reader asked stat() for a size, which says nothing for either)."""
    target, stdin = _flag_target(tmp_path, device, "pipe.jsonl")
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", "--history", target,
                      cwd=tmp_path, stdin=stdin)
    assert_bounded(run, names=target, codes=(2,))
    assert "not a regular file" in run.output, run.output
    assert run.peak_mib is not None and run.peak_mib < 100


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_standard_input_without_end(tmp_path: Path, device: str) -> None:
    """``check -`` read standard input to its end (an editor's pipe, or a device that has none: until stop 46
    ``check - < /dev/zero`` never ended, its memory growing). Now read as a file is, up to 10 MiB."""
    with open(device, "rb") as source:
        run = run_bounded("check", "-", "--no-codeowners", "--no-summary", cwd=tmp_path, stdin=source)
    assert run.returncode == 2, run.output
    assert "standard input holds more than 10 MiB; budgetlint reads files up to 10 MiB" in run.output
    assert run.peak_mib is not None and run.peak_mib < 200


def test_standard_input_at_the_limit_is_read(tmp_path: Path) -> None:
    """10 MiB exactly is a file budgetlint reads (a YAML comment to the limit, after one budget)."""
    head = b'version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: "@acme/chat"\n    promise: {ttft: 1 s}\n'
    data = head + b"#" * (10 * 1024 * 1024 - len(head) - 1) + b"\n"
    assert len(data) == 10 * 1024 * 1024
    (tmp_path / "in.yaml").write_bytes(data)
    with open(tmp_path / "in.yaml", "rb") as source:
        run = run_bounded("check", "-", "--no-codeowners", "--no-summary", cwd=tmp_path, stdin=source)
    assert run.returncode == 0, run.output
    assert "1 budget" in run.output
