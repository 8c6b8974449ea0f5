"""Paths on the command line -> the sorted list of YAML files to check.

Directories are walked recursively; symlinked directories are followed once
(a symlink loop is reported, not followed forever); hidden directories
(``.git``, ``.venv``) are skipped. The order is sorted, never the order the
file system happens to return.

A run reads only inside its *roots* (:func:`read_roots`): the git top level
of the working directory and of each path given, or, outside git, the
working directory and the paths themselves (a file's folder), plus the
folders ``--allow-read`` / the config's ``allow-read`` name. A symlink
found in a walk that leads out of them is refused with a finding, not read
(so a committed link to ``/etc`` or ``~/.ssh`` is never read or named).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from budgetlint.files import fs
from budgetlint.findings import Finding, Location, Severity

YAML_SUFFIXES = (".yaml", ".yml")
SKIP_DIRS = {"node_modules", "__pycache__"}


@dataclass
class Discovered:
    files: list[Path] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def display_path(path: Path, cwd: Path | None = None) -> str:
    """The path as reports show it: relative to the working directory when inside it."""
    cwd = cwd or Path.cwd()
    try:
        return path.absolute().relative_to(cwd.absolute()).as_posix()
    except ValueError:
        return path.as_posix()


def git_top(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` holding ``.git``, or None."""
    for folder in (path, *path.parents):
        if fs.exists(folder / ".git"):
            return folder
    return None


def read_roots(paths: list[str], allow: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The folders a run may read in (real paths): see the module docstring."""
    roots: list[str] = []
    for raw in [os.curdir, *paths]:  # the folder the run starts in, and each path checked
        path = Path(os.path.realpath(raw))
        top = git_top(path)
        roots.append(str(top if top is not None else path if fs.is_dir(path) else path.parent))
    roots.extend(os.path.realpath(a) for a in allow)
    return sorted(set(roots))


def inside(path: Path | str, roots: list[str] | None) -> bool:
    """Whether ``path`` (resolved, symlinks followed) lies in one of ``roots`` (None: no limit)."""
    if roots is None:
        return True
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):  # a NUL byte, a name the OS refuses: no such file, judged by its text
        real = os.path.abspath(str(path).replace("\0", ""))
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def outside_words(roots: list[str]) -> str:
    shown = ", ".join(display_path(Path(r)) or "." for r in roots)
    return (f"outside the folders this run reads ({shown}); not read "
            "(allow it with --allow-read DIR or the config key allow-read)")


def discover(paths: list[str], roots: list[str] | None = None) -> Discovered:
    """The files under ``paths``; with ``roots``, files a walk reaches outside them are refused."""
    out = Discovered()
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if fs.is_dir(path):
            _walk(path, out, seen, roots)
        elif fs.is_file(path):
            _add(path, out, seen)
        elif fs.exists(path):  # a pipe, device or socket: the loader refuses it with a finding
            _add(path, out, seen)
        elif _overlaid(raw):  # `check - --stdin-filename NEW.yaml`: a file not (yet) on disk
            _add(path, out, seen)
        elif fs.is_symlink(path):
            out.findings.append(Finding("BL010", Severity.ERROR, "broken symbolic link",
                                        Location(display_path(path))))
        else:
            out.missing.append(raw)
    out.files.sort(key=lambda p: display_path(p))
    return out


def _overlaid(raw: str) -> bool:
    from budgetlint.files.loader import OVERLAY

    return bool(OVERLAY) and os.path.abspath(raw) in OVERLAY


def _add(path: Path, out: Discovered, seen: set[str]) -> None:
    key = os.path.realpath(path)
    if key not in seen:
        seen.add(key)
        out.files.append(path)


def _walk(root: Path, out: Discovered, seen: set[str], roots: list[str] | None) -> None:
    visited_dirs: set[str] = set()

    def onerror(err: OSError) -> None:
        out.findings.append(Finding("BL010", Severity.ERROR,
                                    f"cannot read directory: {err.strerror or err}",
                                    Location(display_path(Path(err.filename or root)))))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=onerror):
        real = os.path.realpath(dirpath)
        if real in visited_dirs:
            out.findings.append(Finding(
                "BL010", Severity.WARNING,
                "directory reached twice through symbolic links (a loop?); not read again",
                Location(display_path(Path(dirpath)))))
            dirnames[:] = []
            continue
        visited_dirs.add(real)
        if not inside(dirpath, roots):
            out.findings.append(Finding("BL010", Severity.ERROR, "symbolic link to a folder "
                                        + outside_words(roots or []), Location(display_path(Path(dirpath)))))
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(YAML_SUFFIXES):
                full = Path(dirpath) / name
                if fs.is_symlink(full) and not fs.exists(full):
                    out.findings.append(Finding("BL010", Severity.ERROR, "broken symbolic link",
                                                Location(display_path(full))))
                    continue
                if not inside(full, roots):
                    out.findings.append(Finding("BL010", Severity.ERROR, "symbolic link to a file "
                                                + outside_words(roots or []), Location(display_path(full))))
                    continue
                _add(full, out, seen)
