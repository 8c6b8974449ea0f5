"""Determinism: identical input gives byte-identical output in every format,
whatever the order files were created on disk or the hash seed.

The same budget files (shipped examples, a user hardware and models file in
a subdirectory, a file with findings of every input kind) are copied into two
directories in opposite creation orders, under the same relative names; the
CLI runs once in each, with different ``PYTHONHASHSEED``, writing every
format it offers; the outputs must match byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from budgetlint.reporters import FORMATS

USER_HARDWARE = """version: 1
kind: hardware
hardware:
  - name: lab-gpu
    vendor: Example
    memory: 48 GB
    bandwidth: 960 GB/s
    compute: {bf16: 181 TFLOP/s, fp8: 362 TFLOP/s}
    source: a test fixture
  - name: h100-tuned
    extends: h100-sxm
    bandwidth: 3.0 TB/s
    source: a test fixture
"""

FINDINGS = """version: 1
kind: budgets
budgets:
  - name: zz-broken
    owner: "@nobody/here"
    percentile: p99
    workload: {prompt_tokens: 8000, output_tokens: 2000, concurrency: 256}
    promise: {ttft: 50 ms, pace: 400 token/s, e2e: 2 s}
    deployment: {model: llama-3.1-405b, hardware: lab-gpu, devices: 1}
  - name: aa-units
    promise: {ttft: 5 GB, e2e: "nan s", tpot: 7}
    deployment: {model: no-such-model, hardware: h100-tuned}
  - name: mm-dup
    promise: {ttft: 1 s}
    promise: {ttft: 2 s}
  - name: aa-units
    promise: {ttft: 1 s}
"""


def _files(repo_root: Path) -> dict[str, bytes]:
    files = {f"budgets/{p.name}": p.read_bytes() for p in sorted((repo_root / "budgets").glob("*.yaml"))}
    files["budgets/lab/hardware.yaml"] = USER_HARDWARE.encode()
    files["budgets/lab/findings.yaml"] = FINDINGS.encode()
    files["budgets/lab/deeper/copy-of-chat.yaml"] = files["budgets/chat.yaml"].replace(b"chat-reply", b"chat-copy")
    return files


def _lay_out(root: Path, files: dict[str, bytes], order: list[str]) -> None:
    for name in order:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[name])


def _run(root: Path, seed: str, out_dir: Path) -> dict[str, bytes]:
    out_dir.mkdir()
    args: list[str] = []
    for fmt in FORMATS:
        args += ["--format", fmt, "--output", str(out_dir / f"report.{fmt}")]
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "FORCE_COLOR")}
    env.update(PYTHONHASHSEED=seed, NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-summary", *args, "budgets"],
                          cwd=root, env=env, capture_output=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    text = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-summary", "budgets"],
                          cwd=root, env=env, capture_output=True, timeout=120)
    outputs = {fmt: (out_dir / f"report.{fmt}").read_bytes() for fmt in FORMATS}
    outputs["stdout"] = text.stdout
    outputs["stderr"] = proc.stderr + text.stderr
    return outputs


def test_output_is_byte_identical_across_file_order_and_hash_seed(tmp_path: Path, repo_root: Path) -> None:
    files = _files(repo_root)
    names = sorted(files)
    a, b = tmp_path / "a", tmp_path / "b"
    _lay_out(a, files, names)
    _lay_out(b, files, list(reversed(names)))
    first = _run(a, "1", tmp_path / "out-a")
    second = _run(b, "4242", tmp_path / "out-b")
    assert first["json"].count(b'"rule"') > 5, "the fixture should produce findings"
    for fmt in [*FORMATS, "stdout", "stderr"]:
        assert first[fmt] == second[fmt], f"{fmt} output differs between runs"


def test_formats_offered() -> None:
    """Every format the CLI offers is covered above (they come from the registry)."""
    from budgetlint.cli import FORMATS as CLI_FORMATS

    missing = set(CLI_FORMATS) - set(FORMATS)
    if missing:
        pytest.fail(f"the CLI offers formats the reporter registry lacks: {missing}")


def test_in_process_order_of_paths_does_not_matter(tmp_path: Path, repo_root: Path) -> None:
    """Naming the files on the command line in another order gives the same report."""
    from budgetlint.run.check import Options, run_check
    from budgetlint.reporters import render

    files = _files(repo_root)
    _lay_out(tmp_path, files, sorted(files))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        paths = sorted(files)
        one = run_check(paths, Options(use_codeowners=False))
        two = run_check(list(reversed(paths)), Options(use_codeowners=False))
    finally:
        os.chdir(cwd)
    for fmt in FORMATS:
        assert render(fmt, one) == render(fmt, two), fmt
    shutil.rmtree(tmp_path / "budgets")
