"""A big run keeps its findings and report rows on disk (budgetlint.spill_to_disk), and says the same.

Issue 16: 100,000 budgets held about 5 KiB each in the parent (660 MiB). From
``SPILL_AFTER_BUDGETS`` budgets on, the report's findings and rows go to a
temporary file, one pickled chunk per file, and are read back sorted. These
tests lower that threshold so small inputs spill, and hold every output
format, the exit code, ``--quiet`` and a config's policy against the run that
kept everything in memory; and the spill list itself against ``sorted()``.
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.findings import Severity
from budgetlint.options.config_file import load_config
from budgetlint.reporters import get_reporter
from budgetlint.run import check as checker
from budgetlint.run.check import Options
from budgetlint.spill_to_disk import SpillList

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ("json", "text", "sarif", "junit", "markdown", "github", "html")


def _key(item: tuple) -> tuple:
    return item[:3]  # (file, line, message): the added-order number is not part of the key


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["b.yaml", "a.yaml", "", "a/b.yaml", "a-b.yaml"]),
                                   st.integers(0, 4), st.sampled_from(["x", "y"])), max_size=8), max_size=12))
def test_reads_back_what_sorted_gives_ties_in_added_order(chunks: list[list[tuple]]) -> None:
    spill = SpillList(_key)
    everything: list[tuple] = []
    for chunk in chunks:
        numbered = [(*item, len(everything) + i) for i, item in enumerate(chunk)]
        everything += numbered
        spill.extend(numbered)
    # sorted() is stable: equal keys keep the order they were added in, as the spill must
    assert list(spill) == sorted(everything, key=_key)
    assert list(spill) == sorted(everything, key=_key)  # read twice: the same
    assert len(spill) == len(everything)
    spill.close()


def test_no_temporary_file_keeps_the_chunks_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    spill = SpillList(_key)
    spill.extend([("b", 2, "x", 0), ("a", 1, "y", 1)])
    spill.extend([("a", 1, "x", 2)])
    assert list(spill) == [("a", 1, "x", 2), ("a", 1, "y", 1), ("b", 2, "x", 0)]


def test_a_failed_write_keeps_that_chunk_in_memory() -> None:
    spill = SpillList(_key)
    spill.extend([("a", 1, "x", 0)])

    class Full:
        def seek(self, offset: int) -> None:
            pass

        def write(self, data: bytes) -> None:
            raise OSError(28, "No space left on device")

    real = spill._file
    spill._file = Full()
    spill.extend([("a", 0, "x", 1)])
    spill._file = real
    assert list(spill) == [("a", 0, "x", 1), ("a", 1, "x", 0)]


def _generated(tmp_path: Path, files: int) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_speed import generate
    finally:
        sys.path.pop(0)
    repo = tmp_path / "repo"
    generate(repo, files, per_file=3, configs=6, traffic=1)
    return repo


def _run(paths: list[str], options: Options, quiet: bool = False) -> tuple[dict[str, str], int, bool]:
    report = checker.run_check(paths, options)
    spilled = report.spilled
    if quiet:
        report.drop_findings_below(Severity.WARNING)
    outputs = {fmt: get_reporter(fmt)(report) for fmt in FORMATS}
    return outputs, report.exit_code(Severity.WARNING), spilled


@pytest.fixture
def spill_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker, "SPILL_AFTER_BUDGETS", 7)


def _both(monkeypatch: pytest.MonkeyPatch, paths: list[str], make_options, quiet: bool = False) -> tuple:
    monkeypatch.setattr(checker, "SPILL_AFTER_BUDGETS", 10**9)
    kept = _run(paths, make_options(), quiet)
    monkeypatch.setattr(checker, "SPILL_AFTER_BUDGETS", 7)
    spilled = _run(paths, make_options(), quiet)
    return kept, spilled


@pytest.mark.parametrize("quiet", [False, True])
def test_generated_repo_spilled_or_not_every_format(tmp_path, monkeypatch, quiet) -> None:
    repo = _generated(tmp_path, 12)
    monkeypatch.chdir(repo)
    kept, spilled = _both(monkeypatch, ["."], lambda: Options(use_codeowners=False, jobs=1), quiet)
    assert not kept[2] and spilled[2]
    assert spilled[0] == kept[0]
    assert spilled[1] == kept[1]
    assert '"rule": "BL304"' in kept[0]["json"] or quiet  # infos there unless --quiet drops them


def test_config_policy_applies_to_what_is_spilled(tmp_path, monkeypatch) -> None:
    """select/ignore, severity overrides and per-file ignores: applied file by file once spilled."""
    repo = _generated(tmp_path, 12)
    groups = sorted(p.name for p in (repo / "services").iterdir())
    (repo / ".budgetlint.toml").write_text(
        "ignore = [\"BL305\"]\n"
        "[per-file-ignores]\n"
        f"\"services/{groups[0]}/*.yaml\" = [\"BL3\"]\n"
        "[severity]\nBL304 = \"warning\"\nBL1 = \"error\"\n")
    monkeypatch.chdir(repo)
    config = load_config(repo / ".budgetlint.toml")
    assert not config.findings

    def options() -> Options:
        return Options(use_codeowners=False, jobs=1, config=config)

    kept, spilled = _both(monkeypatch, ["."], options)
    assert spilled[2] and spilled[0] == kept[0] and spilled[1] == kept[1]
    assert '"severity": "warning"' in kept[0]["json"] and '"rule": "BL305"' not in kept[0]["json"]
    assert f'"file": "services/{groups[0]}/' not in kept[0]["json"].split('"budgets"')[0]  # per-file ignore


def test_workers_and_spill_together(tmp_path, monkeypatch) -> None:
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("worker processes need fork; elsewhere --jobs runs in one process")
    repo = _generated(tmp_path, 12)
    monkeypatch.chdir(repo)
    monkeypatch.setattr(checker, "MIN_PARALLEL_CHARS", 0)
    kept, spilled = _both(monkeypatch, ["."], lambda: Options(use_codeowners=False, jobs=3))
    assert spilled[2] and spilled[0] == kept[0]


def test_files_in_any_order_spill_the_same(tmp_path, monkeypatch, spill_early) -> None:
    """The chunks are read back by file name, not in the order the files were checked."""
    repo = _generated(tmp_path, 10)
    monkeypatch.chdir(repo)
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.yaml"))
    first = _run(files, Options(use_codeowners=False, jobs=1))
    random.Random(5).shuffle(files)
    assert _run(files, Options(use_codeowners=False, jobs=1)) == first
    assert first[2]


def test_spilled_report_holds_no_finding_in_memory(tmp_path, monkeypatch, spill_early) -> None:
    repo = _generated(tmp_path, 10)
    monkeypatch.chdir(repo)
    report = checker.run_check(["."], Options(use_codeowners=False, jobs=1))
    assert report.spilled and len(report.budgets) == 30
    assert report.findings._file is not None and not report.findings._memory
    assert report.budgets._file is not None and not report.budgets._memory
    assert sum(report.count(s) for s in Severity) == len(report.findings) > 0


def test_the_diff_and_explain_never_spill(tmp_path, monkeypatch, spill_early) -> None:
    repo = _generated(tmp_path, 6)
    monkeypatch.chdir(repo)
    assert not checker.evaluate_run(["."], Options(use_codeowners=False, jobs=1), keep=True).report.spilled
