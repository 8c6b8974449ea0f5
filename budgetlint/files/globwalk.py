"""A `bench:` glob, walked within bounds.

``glob.iglob("/**", recursive=True)`` walks a whole disk, follows symbolic
link loops until path names overflow, and yields nothing for minutes when
nothing matches. This walker matches the same patterns (``*``, ``?``,
``[...]`` within one path component, ``**`` across components, hidden names
only when the pattern names them) but counts every directory entry it looks
at, follows each real folder once (a link loop ends), visits folders in
sorted order (the same result on every machine, whatever order the file
system lists them in) and stops at a file, entry or time limit, saying which.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from budgetlint.text import numbers

#: at most this many files per `bench:` entry
MAX_FILES = 1000
#: at most this many directory entries looked at per `bench:` entry
MAX_ENTRIES = 20_000
#: and at most this long walking (seconds; a slow network file system)
MAX_SECONDS = 5.0

_MAGIC = re.compile(r"[*?[]")


@dataclass
class Walk:
    """The files a pattern matched (sorted) and, if a limit cut the walk, which."""

    files: list[Path] = field(default_factory=list)  # in walk order: names sorted, folder by folder
    limit: str | None = None  # the entry or time limit that cut the walk, in words
    capped: bool = False  # more than max_files matched: the first max_files are kept
    base: str = ""


def has_magic(pattern: str) -> bool:
    return _MAGIC.search(pattern) is not None


def _component(part: str) -> str:
    out = [] if part.startswith(".") else [r"(?!\.)"]
    i = 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = part.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = part[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _regex(parts: list[str]) -> re.Pattern[str]:
    pieces = []
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            pieces.append(r"(?:(?!\.)[^/]+/)*(?!\.)[^/]+" if last else r"(?:(?!\.)[^/]+/)*")
        else:
            pieces.append(_component(part) + ("" if last else "/"))
    return re.compile("^" + "".join(pieces) + "$")


def split(pattern: str) -> tuple[str, list[str]]:
    """The fixed folder a pattern starts in, and the rest as path components."""
    parts = pattern.split("/")
    fixed: list[str] = []
    while len(parts) > 1 and not has_magic(parts[0]):
        fixed.append(parts.pop(0))
    base = "/".join(fixed) if fixed else "."
    if pattern.startswith("/") and base == "":
        base = "/"
    return base or "/", [p for p in parts if p != ""] or [""]


def walk(pattern: str, *, max_files: int = MAX_FILES, max_entries: int = MAX_ENTRIES,
         max_seconds: float = MAX_SECONDS) -> Walk:
    """The non-folder entries ``pattern`` (an absolute or working-directory path) matches."""
    base, parts = split(pattern)
    out = Walk(base=base)
    regex = _regex(parts)
    deep = "**" in parts
    depth_limit = len(parts)
    hidden = any(p.startswith(".") for p in parts)  # the pattern names hidden folders
    start = time.monotonic()
    entries = 0
    seen: set[str] = set()
    stack: list[tuple[str, str, int]] = [(base, "", 0)]
    while stack:
        folder, rel, depth = stack.pop()
        real = os.path.realpath(folder)
        if real in seen:
            continue  # a symbolic link loop, or a folder reached twice
        seen.add(real)
        try:
            with os.scandir(folder) as it:
                listing = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in listing:
            entries += 1
            if entries > max_entries:
                out.limit = f"the walk stopped after {numbers.number(max_entries)} directory entries"
                return _done(out)
            if entries % 1024 == 0 and time.monotonic() - start > max_seconds:
                out.limit = f"the walk stopped after {numbers.stated(max_seconds)} s"
                return _done(out)
            name = rel + entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if (deep or depth + 1 < depth_limit) and (hidden or not entry.name.startswith(".")):
                    subfolders.append((entry.path, name + "/", depth + 1))
                continue
            if regex.match(name):
                if len(out.files) >= max_files:
                    out.capped = True
                    return _done(out)
                out.files.append(Path(entry.path))
        stack.extend(reversed(subfolders))
    return _done(out)


def _done(out: Walk) -> Walk:
    return out  # walk order is already deterministic: names sorted, a folder's files before its subfolders
