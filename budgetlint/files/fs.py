"""File-system questions that answer instead of raising.

``Path.exists()``, ``is_file()`` and ``is_dir()`` swallow only "no such
file" errors; a name longer than the file system allows (ENAMETOOLONG), a
permission error on a parent folder or a NUL byte raise instead. Paths come
from users (command-line arguments, ``bench:`` entries, config files), so
every question about one goes through here and such a path simply is not
there: the caller reports it as missing, with its own words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable


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
