"""Paths on the command line -> the sorted list of YAML files to check.

Directories are walked recursively; symlinked directories are followed once
(a symlink loop is reported, not followed forever); hidden directories
(``.git``, ``.venv``) are skipped. The order is sorted, never the order the
file system happens to return.
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


def discover(paths: list[str]) -> Discovered:
    out = Discovered()
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if fs.is_dir(path):
            _walk(path, out, seen)
        elif fs.is_file(path):
            _add(path, out, seen)
        elif fs.is_symlink(path):
            out.findings.append(Finding("BL010", Severity.ERROR, "broken symbolic link",
                                        Location(display_path(path))))
        else:
            out.missing.append(raw)
    out.files.sort(key=lambda p: display_path(p))
    return out


def _add(path: Path, out: Discovered, seen: set[str]) -> None:
    key = os.path.realpath(path)
    if key not in seen:
        seen.add(key)
        out.files.append(path)


def _walk(root: Path, out: Discovered, seen: set[str]) -> None:
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
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(YAML_SUFFIXES):
                full = Path(dirpath) / name
                if fs.is_symlink(full) and not fs.exists(full):
                    out.findings.append(Finding("BL010", Severity.ERROR, "broken symbolic link",
                                                Location(display_path(full))))
                    continue
                _add(full, out, seen)
