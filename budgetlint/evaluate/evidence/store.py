"""The run's benchmark files, each read once, and the files a `bench:` entry or ``--bench`` glob names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from budgetlint.files import fs
from budgetlint.files.discovery import display_path, inside, outside_words

if TYPE_CHECKING:  # the readers load when a budget has evidence (a run without any skips ~5 ms of imports)
    from budgetlint.bench import Measurement, Problem


@dataclass
class BenchFile:
    """One benchmark file as read (once per run)."""

    path: str  # as reports show it
    measurements: list[Measurement]
    problems: list[Problem]


class BenchStore:
    """The run's benchmark files, each read once; ``bench_format`` forces the format."""

    def __init__(self, bench_format: str | None = None, *, max_bytes: int | None = None,
                 roots: list[str] | None = None) -> None:
        self.bench_format = bench_format
        self.max_bytes = max_bytes  # files larger are refused unread (None: bench.MAX_BENCH_BYTES)
        self.roots = roots  # `bench:` entries are read inside these folders only (None: anywhere)
        self._files: dict[str, BenchFile] = {}
        #: per-request lengths by (file, field): read once per file, shared by every budget naming
        #: it (20 budgets on one 54 MB file held 20 copies: 2.25 GB; issue 24), and the simulator's
        #: Empirical distribution of each, by the identity of its values
        self.lengths: dict[tuple[int, str], Any] = {}
        self.empirical: dict[int, Any] = {}

    def read(self, path: Path, display: str | None = None) -> BenchFile:
        key = str(path.resolve()) if fs.exists(path) else str(path)
        if key not in self._files:
            from budgetlint.bench import read_benchmark

            measurements, problems = read_benchmark(path, self.bench_format, max_bytes=self.max_bytes)
            self._files[key] = BenchFile(display or display_path(path), measurements, problems)
        return self._files[key]


#: at most this many files per `bench:` entry (a glob like "/**" must not walk a disk)
MAX_GLOB_FILES = 1000


@dataclass
class Globbed:
    """What one `bench:` entry (or ``--bench`` glob) names."""

    files: list[Path]
    capped: bool = False  # more than the file limit matched: the first ones in sorted order are kept
    refused: str | None = None  # why the entry was not walked at all (its folder is outside the roots)
    cut: str | None = None  # why the walk stopped early (entries looked at, time)


def glob_entry(base: Path, pattern: str, limit: int | None = None, roots: list[str] | None = None) -> Globbed:
    """The files ``pattern`` (relative to ``base``) matches.

    A plain path is itself (when it exists). A glob is walked by
    :func:`budgetlint.files.globwalk.walk`: depth first in sorted name order at
    every level (the first ``limit`` matches are the same files whatever order
    the file system lists them in), each real folder once (symbolic link
    loops end), and within an entry and a time limit. A glob whose fixed
    folder lies outside ``roots`` is refused before any walk (``/**`` never
    walks the disk).
    """
    from budgetlint.files import globwalk

    limit = MAX_GLOB_FILES if limit is None else limit
    full = pattern if Path(pattern).is_absolute() else str(base / pattern)
    if globwalk.has_magic(pattern):
        start = globwalk.split(full)[0]
        if roots is not None and not inside(start, roots):
            return Globbed([], refused=f"its folder {start!r} is " + outside_words(roots))
        found = globwalk.walk(full, max_files=limit)
        return Globbed(found.files, capped=found.capped, cut=found.limit)
    p = Path(full)
    return Globbed([p] if fs.exists(p) else [])


def expand_cli_bench(raw: list[str] | tuple[str, ...]) -> tuple[list[str], list[tuple[str, int, bool]]]:
    """``--bench`` values with their globs expanded (relative to the working directory), as
    ``bench:`` entries are: the paths to read, and each glob's (pattern, files kept, cut)."""
    if not raw:
        return [], []
    from budgetlint.files import globwalk

    out: list[str] = []
    globs: list[tuple[str, int, bool]] = []
    for value in raw:
        if not globwalk.has_magic(value):
            out.append(value)  # read as given: a missing file is reported by the reader, by its name
            continue
        globbed = glob_entry(Path("."), value)  # given by the user: no roots, but the walk's bounds
        globs.append((value, len(globbed.files), globbed.capped))
        out.extend(str(p) for p in globbed.files)
    return out, globs
