"""files/fs.py's helpers on their own: the replacing writer, the streaming opener, the kind of a non-file
(each used by several callers since stop 46: --output, the simulation cache, --history, --config)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from budgetlint.files import fs


def test_write_replacing_writes_whole_and_replaces_a_link_without_writing_through(tmp_path: Path) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("the user's")
    link = tmp_path / "out.txt"
    link.symlink_to(mine)
    fs.write_replacing(link, ["a", "b\n"])
    assert not link.is_symlink() and link.read_text() == "ab\n"
    assert mine.read_text() == "the user's"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_write_replacing_modes(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        fs.write_replacing(tmp_path / "a", ["x"])
        fs.write_replacing(tmp_path / "b", ["x"], mode=0o640)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o644  # 0666 less the umask 022, as open() makes it
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o640


def test_write_replacing_that_fails_midway_leaves_the_old_file_and_no_stray(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")

    def pieces():  # type: ignore[no-untyped-def]
        yield "new, half"
        raise RuntimeError("the renderer failed")

    with pytest.raises(RuntimeError):
        fs.write_replacing(target, pieces())
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_open_regular_refuses_what_is_no_regular_file_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")  # nobody writes to it: a plain open() would wait for ever
    with pytest.raises(fs.NotRegular) as err:
        fs.open_regular(tmp_path / "pipe", 10)
    assert err.value.kind == "a named pipe (FIFO)"
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(fs.TooLarge) as big:
        fs.open_regular(tmp_path / "big", 10)
    assert (big.value.size, big.value.limit) == (11, 10)
    (tmp_path / "ok").write_bytes(b"x" * 10)
    with fs.open_regular(tmp_path / "ok", 10) as fh:
        assert fh.read() == b"x" * 10


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_kind_if_not_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_text("x")
    assert fs.kind_if_not_file(tmp_path / "pipe") == "a named pipe (FIFO)"
    assert fs.kind_if_not_file(tmp_path) == "a directory"
    assert fs.kind_if_not_file(tmp_path / "file") is None
    assert fs.kind_if_not_file(tmp_path / "absent") is None
