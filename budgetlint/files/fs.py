"""File-system questions that answer instead of raising.

``Path.exists()``, ``is_file()`` and ``is_dir()`` swallow only "no such
file" errors; a name longer than the file system allows (ENAMETOOLONG), a
permission error on a parent folder or a NUL byte raise instead. Paths come
from users (command-line arguments, ``bench:`` entries, config files), so
every question about one goes through here and such a path simply is not
there: the caller reports it as missing, with its own words.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Callable, Iterable


def _answer(question: Callable[[], bool]) -> bool:
    try:
        return question()
    except (OSError, ValueError):
        return False


def exists(path: Path) -> bool:
    return _answer(path.exists)


def is_file(path: Path) -> bool:
    return _answer(path.is_file)


def is_dir(path: Path) -> bool:
    return _answer(path.is_dir)


def is_symlink(path: Path) -> bool:
    return _answer(path.is_symlink)


def kind_if_not_file(path: Path) -> str | None:
    """What ``path`` is when it is there but no regular file ("a named pipe (FIFO)", "a directory"), else
    None (a regular file, or nothing there): for the words of a caller that found no file to read."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) else file_kind(mode)


def no_file_words(path: Path, what: str) -> str:
    """Why there is no ``what`` file to read at ``path``, in words: what is there instead ("the config file
    x.toml is a named pipe (FIFO), not a regular file"), else "no such config file: x.toml"."""
    kind = kind_if_not_file(path)
    return f"the {what} file {path} is {kind}, not a regular file" if kind else f"no such {what} file: {path}"


# --------------------------------------------------------------------------- bounded reading

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class NotRegular(OSError):
    """The path is a pipe, device, socket or directory: nothing to read as a file."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"not a regular file: {kind}")
        self.kind = kind


class TooLarge(OSError):
    """The file is larger than the reader's limit (found before reading it)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes over the {limit}-byte limit")
        self.size = size
        self.limit = limit


def file_kind(mode: int) -> str:
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    ``stat().st_size`` says nothing for pipes and devices (a FIFO blocks
    forever, ``/dev/zero`` never ends), so the file is opened without
    blocking, the *open* file's type is checked (no race with a swapped
    path), its size is checked before reading, and at most ``limit + 1``
    bytes are read (a file that grows while read is still refused).
    Raises :class:`NotRegular`, :class:`TooLarge` or ``OSError``.
    """
    with open_regular(path, limit) as fh:
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = fh.read(min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise TooLarge(total, limit)
        return b"".join(chunks)


def open_regular(path: Path | str, limit: int) -> BinaryIO:
    """``path`` opened for reading (binary, unbuffered) once it is known to be a regular file of at most
    ``limit`` bytes: opened without blocking and the *open* file's type and size checked, as
    :func:`read_regular` does (which reads it whole); for a reader that streams. The caller still bounds
    what it reads (a file may grow). Raises :class:`NotRegular`, :class:`TooLarge` or ``OSError``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(file_kind(info.st_mode))
        if info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


# --------------------------------------------------------------------------- replacing writes

def write_replacing(target: Path | str, pieces: Iterable[str], *, mode: int | None = None, sync: bool = False) -> None:
    """Write the text ``pieces`` to a new file beside ``target`` and rename it onto ``target``
    (``os.replace``: atomic on POSIX and Windows): a reader sees the old file or the whole new one,
    a writer killed midway leaves a stray ``.<name>.<random>.tmp`` at most, and whatever was at the
    name (a symbolic link included) is replaced, never written through. The new file gets ``mode``
    (permission bits), else what ``open()`` would give it (0666 less the umask); ``sync``: on the
    disk before the rename."""
    import tempfile

    name = os.fspath(target)
    folder = os.path.dirname(os.path.abspath(name))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(name)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for piece in pieces:
                fh.write(piece)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, name)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
