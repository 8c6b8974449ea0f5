"""Issue 18 point 7: one file's memory is bounded, not only memory across files.

A 10 MiB file of tiny budgets (180,000 of them in 3,600 documents) took
30-60 s and 830 MB: every document of a file was composed, converted, built
and checked before the next file. The loader now counts the keys and values
a file holds while the parser builds them (MAX_FILE_NODES) and the values
its documents expand to (MAX_FILE_VALUES), and stops the file with BL011 at
the line that crossed the limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from budgetlint.files import loader

from hardening_bounds import assert_bounded, run_bounded


def _tiny_budgets(target_bytes: int) -> str:
    parts, size, i = [], 0, 0
    while size < target_bytes:
        doc = "version: 1\nkind: budgets\nbudgets:\n" + "".join(
            f"  - {{name: b{i}_{j}, owner: '@a/b', promise: {{ttft: 1 s}}}}\n" for j in range(50))
        parts.append(doc)
        size += len(doc) + 4
        i += 1
    return "---\n".join(parts)


def test_10_mib_of_tiny_budgets(tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(_tiny_budgets(10 * 1024 * 1024 - 4096))
    run = run_bounded("check", "tiny.yaml", "--no-codeowners", "--no-summary", "-q", cwd=tmp_path)
    assert_bounded(run, names="tiny.yaml:", codes=(1,), rule="BL011")
    assert f"more than {loader.MAX_FILE_NODES:,} keys and values" in run.stdout, run.stdout[-2000:]
    assert run.peak_mib is not None and run.peak_mib < 150, run.peak_mib


def test_one_huge_mapping_stops_while_it_is_built(tmp_path: Path) -> None:
    """One document of 300,000 keys: stopped at the limit, not composed whole first."""
    text = "version: 1\nkind: teams\nextra:\n" + "".join(f"  k{i}: {i}\n" for i in range(150_000))
    (tmp_path / "big.yaml").write_text(text)
    run = run_bounded("check", "big.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    # by hand: 7 nodes up to line 3 (root map, version/1, kind/teams, extra, its map), then a key and a
    # value per line; node MAX_FILE_NODES + 1 is line L's value where 7 + 2 (L - 3) = MAX_FILE_NODES + 1
    line = 3 + (loader.MAX_FILE_NODES + 1 - 7) // 2
    column = len(f"  k{line - 4}: ") + 1
    assert_bounded(run, names=f"big.yaml:{line}:{column}", codes=(1,), rule="BL011")


def test_many_documents_of_aliases_stop_at_the_file_value_limit(tmp_path: Path) -> None:
    """Each document under the per-document limit, the file far over it."""
    doc = ("version: 1\nkind: teams\nx: &x [" + ", ".join(["1"] * 100) + "]\n"
           "y: [" + ", ".join(["*x"] * 900) + "]\n")  # 90,000 values each, from ~2 KB of text
    (tmp_path / "aliases.yaml").write_text("---\n".join([doc] * 50))
    run = run_bounded("check", "aliases.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="aliases.yaml", codes=(1,), rule="BL011")
    assert f"more than {loader.MAX_FILE_VALUES:,} values over its documents" in run.stdout, run.stdout[-2000:]


@pytest.mark.parametrize("pure_python", [False, True])
def test_small_files_read_the_same_with_either_composer(tmp_path: Path, pure_python: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The counting composer gives the same documents, positions and findings as libyaml's."""
    import yaml

    if pure_python:
        monkeypatch.setattr(loader, "_yaml_loader_class", lambda: yaml.SafeLoader)
    text = _tiny_budgets(4000) + "---\nversion: 1\nkind: teams\nteams: [{handle: '@a/b', handle: '@c/d'}]\n"
    plain = loader.load_text(text, "x.yaml")
    monkeypatch.setattr(loader, "_COUNT_FROM_BYTES", 0)
    counted = loader.load_text(text, "x.yaml")
    assert [d.data for d in counted.documents] == [d.data for d in plain.documents]
    assert [d.positions for d in counted.documents] == [d.positions for d in plain.documents]
    assert counted.findings == plain.findings and plain.findings
