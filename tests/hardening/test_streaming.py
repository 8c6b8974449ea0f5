"""Streaming: the same report whichever files pass 1 reads, with one file's documents in memory.

The pipeline reads definitions first (files whose text names a definition
kind), then one budgets file at a time. These tests hold a run against the
same pipeline with *every* file read in pass 1 (what happens after a
definition the quick look missed) on inputs that stress what streaming must
get right: definitions in files that sort after the budgets using them, a
definition the quick look misses, duplicate budget names across files, a
benchmark file shared by budgets in two files, suppressions, and the
run-level BL104.
"""

from __future__ import annotations

import gc
import shutil
import sys
import weakref
from pathlib import Path

import pytest

from budgetlint.run import check as checker
from budgetlint.run.check import Options
from budgetlint.reporters import get_reporter

ROOT = Path(__file__).resolve().parents[2]


def _json(report) -> str:
    return get_reporter("json")(report)


def _both(paths: list[str], options: Options | None = None) -> tuple[str, str]:
    options = options or Options(use_codeowners=False)
    streamed = checker.evaluate_run(paths, options).report
    read_first = checker.evaluate_run(paths, options, read_all_first=True).report
    return _json(streamed), _json(read_first)


def test_shipped_budgets_and_every_case_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    streamed, whole = _both(["budgets/", "tests/cases/"])
    assert streamed == whole
    assert '"rule": "BL009"' in streamed  # duplicate names across files are in there


def _generated(tmp_path: Path, files: int) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_speed import generate
    finally:
        sys.path.pop(0)
    repo = tmp_path / "repo"
    generate(repo, files, per_file=3)
    # definitions that sort after the budgets that use them
    (repo / "zz-platform").mkdir()
    shutil.move(str(repo / "platform" / "hardware.yaml"), repo / "zz-platform" / "hardware.yaml")
    shutil.move(str(repo / "platform" / "models.yaml"), repo / "zz-platform" / "models.yaml")
    shutil.move(str(repo / "teams.yaml"), repo / "zz-platform" / "teams.yaml")
    return repo


def test_definitions_after_the_budgets_that_use_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _generated(tmp_path, 12)
    monkeypatch.chdir(repo)
    streamed, whole = _both(["."])
    assert streamed == whole
    assert '"rule": "BL008"' not in streamed  # every user hardware and model resolved
    assert '"rule": "BL103"' not in streamed  # every owner found in the teams file


def test_a_definition_the_quick_look_misses_restarts_reading_every_file_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _generated(tmp_path, 3)
    hw = repo / "zz-platform" / "hardware.yaml"
    hw.write_text(hw.read_text().replace("kind: hardware", "kind: !!str hardware"))
    monkeypatch.chdir(repo)
    assert not checker._DEFINES.search(hw.read_text())
    found = checker.discover(["."])
    with pytest.raises(checker._LateDefinition):
        checker._run(["."], found, Options(use_codeowners=False), False, read_all_first=False)
    report = checker.run_check(["."], Options(use_codeowners=False))
    assert _json(report) == _json(checker.evaluate_run(["."], Options(use_codeowners=False),
                                                       read_all_first=True).report)
    assert not [f for f in report.findings if f.rule == "BL008"]


BUDGET = """version: 1
kind: budgets
budgets:
  - name: {name}
    owner: "@acme/chat"
    workload: {{prompt_tokens: 1000, output_tokens: 200}}
    promise: {{pace: 35 token/s}}
    deployment: {{model: llama-3.1-70b, hardware: h100-sxm, weight_precision: bf16, devices: 2}}
    bench: [../shared.json]
{suppress}"""


def test_shared_benchmark_file_suppressions_and_run_level_rules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shared.json").write_text("{not json")
    for i, suppress in enumerate(["", "    suppress:\n      - rule: BL303\n        reason: tuned kernels\n",
                                  "    suppress:\n      - rule: BL101\n        reason: nothing to suppress\n"]):
        d = tmp_path / f"team{i}"
        d.mkdir()
        (d / "b.yaml").write_text(BUDGET.format(name=f"chat{i}", suppress=suppress))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BUDGETLINT_TODAY", "2026-06-01")
    streamed, whole = _both(["."])
    assert streamed == whole
    report = checker.run_check(["."], Options(use_codeowners=False))
    rules = sorted(f.rule for f in report.findings if f.rule != "BL304")
    assert rules.count("BL406") == 1  # the unreadable shared file: once, not once per budgets file
    assert rules.count("BL104") == 1  # no teams registry: once per run
    assert rules.count("BL303") == 2 and [s.finding.budget for s in report.suppressed] == ["chat1"]
    assert rules.count("BL504") == 1  # chat2's suppression of BL101 suppresses nothing


def test_only_the_current_files_documents_are_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each budgets file's documents are dropped once its rules have run."""
    repo = _generated(tmp_path, 8)
    monkeypatch.chdir(repo)
    alive: list[list[weakref.ref]] = []
    most = 0
    real = checker._checked

    def spy(path, display):
        nonlocal most
        gc.collect()
        # documents of files before the previous one (which the loop still names) must be gone
        most = max(most, sum(r() is not None for refs in alive[:-1] for r in refs))
        out = real(path, display)
        alive.append([weakref.ref(d) for d in out[1]["budgets"]])
        return out

    monkeypatch.setattr(checker, "_checked", spy)
    report = checker.run_check(["."], Options(use_codeowners=False))
    assert len(report.budgets) == 24 and len(alive) >= 8
    assert most == 0
