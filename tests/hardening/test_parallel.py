"""--jobs: worker processes give the one-process report, byte for byte.

Pass 2 (budgets, file by file) runs in forked workers when a run is large
enough (run/check.py); the results are merged in file order. These tests
lower the size threshold so small inputs take the worker path, scramble the
order in which workers finish, and hold every output format against
``--jobs 1`` on inputs that stress the merge: budget names repeated across
files (BL009 spans the run), a benchmark file shared by budgets in several
files (its finding once per run), suppressions, a definition the quick look
misses (the run restarts), and the generated monorepo.
"""

from __future__ import annotations

import multiprocessing
import random
import shutil
import sys
import time
from pathlib import Path

import pytest

from budgetlint.reporters import get_reporter
from budgetlint.run import check as checker
from budgetlint.run.check import Options

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="worker processes need fork; elsewhere --jobs runs in one process")

FORMATS = ("json", "text", "sarif", "junit", "markdown", "github")


@pytest.fixture
def workers_always(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every run with jobs > 1 takes the worker path; returns a list counting those runs."""
    monkeypatch.setattr(checker, "MIN_PARALLEL_CHARS", 0)
    used: list[int] = []
    real = checker._parallel

    def spy(*args, **kwargs):
        used.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(checker, "_parallel", spy)
    return used


def _outputs(paths: list[str], jobs: int) -> dict[str, str]:
    report = checker.run_check(paths, Options(use_codeowners=False, jobs=jobs))
    return {fmt: get_reporter(fmt)(report) for fmt in FORMATS}


def _generated(tmp_path: Path, files: int, per_file: int = 3, **kwargs) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_speed import generate
    finally:
        sys.path.pop(0)
    repo = tmp_path / "repo"
    generate(repo, files, per_file=per_file, **kwargs)
    return repo


def test_generated_repo_every_format_any_worker_count(tmp_path, monkeypatch, workers_always) -> None:
    repo = _generated(tmp_path, 24)
    monkeypatch.chdir(repo)
    one = _outputs(["."], 1)
    assert not workers_always
    for jobs in (2, 3, 5):
        assert _outputs(["."], jobs) == one
    assert len(workers_always) == 3
    assert '"rule": "BL301"' in one["json"] or '"rule": "BL303"' in one["json"]  # not an all-green run


def test_budgets_with_traffic_any_worker_count(tmp_path, monkeypatch, workers_always) -> None:
    """The load simulation's cache is per process: what a budget reports must not depend on
    which process met its configuration first (``load.simulations`` did: 7 in a worker, 0 in
    one process)."""
    repo = _generated(tmp_path, 16, configs=3, traffic=2)
    monkeypatch.chdir(repo)
    one = _outputs(["."], 1)
    assert '"simulated": true' in one["json"]
    assert _outputs(["."], 2) == one
    assert workers_always


_REAL_WORK = checker._work


def _slow_work(path):
    """Runs in a worker (pickled by name): a random delay scrambles the order results are ready."""
    time.sleep(random.Random(str(path)).random() * 0.05)
    return _REAL_WORK(path)


def test_workers_finishing_in_any_order(tmp_path, monkeypatch, workers_always) -> None:
    repo = _generated(tmp_path, 16)
    monkeypatch.chdir(repo)
    one = _outputs(["."], 1)
    monkeypatch.setattr(checker, "_work", _slow_work)
    assert _outputs(["."], 4) == one
    assert workers_always


def test_shipped_budgets_and_every_case_file(monkeypatch, workers_always) -> None:
    """Duplicate names across files, schema errors, suppressions: the merge re-checks a file
    whose budget name an earlier file took, as one process would."""
    monkeypatch.chdir(ROOT)
    one = _outputs(["budgets/", "tests/cases/"], 1)
    assert _outputs(["budgets/", "tests/cases/"], 2) == one
    assert workers_always
    assert '"rule": "BL009"' in one["json"]


from test_streaming import BUDGET  # noqa: E402  (the same budget file as the streaming tests)


def test_shared_benchmark_file_duplicates_and_suppressions(tmp_path, monkeypatch, workers_always) -> None:
    (tmp_path / "shared.json").write_text("{not json")
    suppressions = ["", "    suppress:\n      - rule: BL303\n        reason: tuned kernels\n",
                    "    suppress:\n      - rule: BL101\n        reason: nothing to suppress\n"]
    for i in range(9):
        d = tmp_path / f"team{i}"
        d.mkdir()
        name = "chat1" if i == 7 else f"chat{i}"  # team7 repeats team1's name: BL009
        (d / "b.yaml").write_text(BUDGET.format(name=name, suppress=suppressions[i % 3]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BUDGETLINT_TODAY", "2026-06-01")
    one = _outputs(["."], 1)
    for jobs in (2, 4):
        assert _outputs(["."], jobs) == one
    assert workers_always
    report = checker.run_check(["."], Options(use_codeowners=False, jobs=3))
    rules = [f.rule for f in report.findings]
    assert rules.count("BL406") == 1  # the unreadable shared file: once per run, not once per worker
    assert rules.count("BL104") == 1
    assert rules.count("BL009") == 1 and len(report.budgets) == 8


def test_a_definition_the_quick_look_misses(tmp_path, monkeypatch, workers_always) -> None:
    repo = _generated(tmp_path, 8)
    (repo / "zz").mkdir()
    hw = repo / "zz" / "hardware.yaml"
    shutil.move(str(repo / "platform" / "hardware.yaml"), hw)
    hw.write_text(hw.read_text().replace("kind: hardware", "kind: !!str hardware"))
    monkeypatch.chdir(repo)
    one = _outputs(["."], 1)
    assert _outputs(["."], 2) == one
    assert '"rule": "BL008"' not in one["json"]


def test_small_runs_stay_in_one_process(monkeypatch) -> None:
    used: list[int] = []
    monkeypatch.setattr(checker, "_parallel", lambda *a, **k: used.append(1))
    monkeypatch.chdir(ROOT)
    checker.run_check(["budgets/"], Options(use_codeowners=False, jobs=8))
    assert not used


def test_jobs_zero_means_the_cores_this_process_may_use() -> None:
    import os

    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert checker._jobs(0) == expected and checker._jobs(None) == expected
    assert checker._jobs(3) == min(3, 4 * expected)


def test_jobs_beyond_four_a_core_are_four_a_core(monkeypatch) -> None:
    """--jobs 400 on 1,000 files forked 400 workers on two cores (until stop 47): at most 4 a core now."""
    monkeypatch.setattr(checker, "_cores", lambda: 2)
    assert [checker._jobs(n) for n in (1, 8, 9, 400, 10**30)] == [1, 8, 8, 8, 8]
    assert checker._jobs(0) == 2
