"""Valid owner handles: teams registry documents and CODEOWNERS files."""

from __future__ import annotations

import re
from pathlib import Path

from budgetlint.files import fs
from budgetlint.findings import Location

CODEOWNERS_PLACES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
_HANDLE = re.compile(r"^(@[\w.-]+(/[\w.-]+)?|[^@\s]+@[^@\s]+)$")


def find_codeowners(start: Path) -> Path | None:
    """The CODEOWNERS of the repository holding ``start`` (walks up to the git root)."""
    here = start.resolve()
    if fs.is_file(here):
        here = here.parent
    for folder in (here, *here.parents):
        for place in CODEOWNERS_PLACES:
            candidate = folder / place
            if fs.is_file(candidate):
                return candidate
        if fs.exists(folder / ".git"):
            break
    return None


#: CODEOWNERS files larger than this are not read (GitHub itself stops at 3 MB)
_MAX_BYTES = 3 * 1000 * 1000


def codeowners_handles(path: Path) -> dict[str, Location]:
    """Every owner named in a CODEOWNERS file, with where it first appears."""
    out: dict[str, Location] = {}
    try:
        text = fs.read_regular(path, _MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:  # also a pipe or a device (fs.NotRegular) or a huge file (fs.TooLarge)
        return out
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if not stripped:
            continue
        parts = stripped.split()
        col = line.find(parts[0]) + 1
        for owner in parts[1:]:
            if _HANDLE.match(owner):
                out.setdefault(owner.lower(), Location(path.as_posix(), lineno, col))
    return out
