"""Issue 15 point 10 (the walk): a `bench:` glob over `/`, or through symbolic
link loops, ran past 120 s. The walk now follows each real folder once, is
bounded in entries and time, and says when a limit cut it (BL406 warning);
a glob over a folder outside the run's roots is refused before any walk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


from budgetlint.files import globwalk

from hardening_bounds import BUDGET_WITH_BENCH as BUDGET, assert_bounded, run_bounded


def test_glob_over_the_whole_disk_allowed_is_bounded(tmp_path: Path) -> None:
    """With `/` allowed, `/**/*.json` is walked, but only so far (entries, time)."""
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench='"/**/*.nomatch-json"'))
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", "--allow-read", "/", cwd=tmp_path)
    assert_bounded(run, names="b.yaml", codes=(0, 1), rule="BL406", line=7)
    # a small disk is walked whole within the bounds; a big one stops at a limit and says so
    assert "the walk stopped after" in run.stdout or "matches no file" in run.stdout, run.stdout


def test_a_glob_past_the_file_limit_says_so(tmp_path: Path) -> None:
    """More matches than MAX_FILES: the first ones in sorted order are read, and a warning says so.
    (The entry and time limits are the same code path: test_walker_limits_say_so.)"""
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(globwalk.MAX_FILES + 5):
        (runs / f"{i:05}.json").write_text("{}")
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench='"runs/*.json"'))
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="b.yaml:7", codes=(1,), rule="BL406")
    assert f"matches more than {globwalk.MAX_FILES} files; only the first {globwalk.MAX_FILES}" in run.stdout, \
        run.stdout[-3000:]
    assert "runs/00999.json" in run.stdout and "runs/01000.json" not in run.stdout


def test_glob_over_the_whole_disk_is_refused_by_default(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench='"/**/*.json"'))
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="b.yaml", codes=(1,), rule="BL406", line=7)
    assert "its folder '/' is outside" in run.stdout, run.stdout


def test_symlink_loops_end(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "a" / "b").mkdir(parents=True)
    (runs / "a" / "b" / "up").symlink_to("../..", target_is_directory=True)
    (runs / "a" / "self").symlink_to(".", target_is_directory=True)
    (runs / "x").symlink_to("y", target_is_directory=True)  # x -> y -> x
    (runs / "y").symlink_to("x", target_is_directory=True)
    for i in range(4):  # four links to the folder itself: 4**40 paths before the kernel's ELOOP
        (runs / f"l{i}").symlink_to(".", target_is_directory=True)
    (runs / "a" / "b" / "run.json").write_text(json.dumps({"kind": "nothing"}))
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench='"runs/**/*.json"'))
    run = run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="runs/a/b/run.json", codes=(1,), rule="BL406")
    assert run.stdout.count("run.json:1:1: BL406") == 1, run.stdout  # read once, not once per loop


def test_walker_matches_glob_semantics(tmp_path: Path) -> None:
    """The same files as glob.glob for the patterns people write (sorted, no hidden names)."""
    import glob

    for rel in ("a.json", "b.txt", ".hidden.json", "d/c.json", "d/e/f.json", ".h/g.json", "d/[x].json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    for pattern in ("*.json", "**/*.json", "d/*.json", "d/**/*.json", "*/*.json", "?.json", "d/[[]x].json",
                    ".*.json", "d/**"):
        full = str(tmp_path / pattern)
        want = sorted(Path(p) for p in glob.glob(full, recursive=True) if not os.path.isdir(p))
        assert sorted(globwalk.walk(full).files) == want, pattern


def test_walker_limits_say_so(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"{i:02}.json").write_text("{}")
    cut = globwalk.walk(str(tmp_path / "*.json"), max_entries=10)
    assert cut.limit == "the walk stopped after 10 directory entries" and len(cut.files) == 10
    capped = globwalk.walk(str(tmp_path / "*.json"), max_files=10)
    assert capped.capped and capped.limit is None
    assert [p.name for p in capped.files] == [f"{i:02}.json" for i in range(10)]  # the first ten, sorted
    exact = globwalk.walk(str(tmp_path / "*.json"), max_files=30)
    assert not exact.capped and len(exact.files) == 30
