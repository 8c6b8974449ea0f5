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


def exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def is_symlink(path: Path) -> bool:
    try:
        return path.is_symlink()
    except (OSError, ValueError):
        return False
