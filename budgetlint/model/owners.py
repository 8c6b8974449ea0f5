"""Valid owner handles: teams registry documents and CODEOWNERS files."""

from __future__ import annotations

import re
from pathlib import Path

from budgetlint.files import fs
from budgetlint.findings import Location
from budgetlint.text import numbers

CODEOWNERS_PLACES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
_HANDLE = re.compile(r"^(@[\w.-]+(/[\w.-]+)?|[^@\s]+@[^@\s]+)$")


def find_codeowners(start: Path) -> Path | None:
    """The CODEOWNERS of the repository holding ``start`` (walks up to the git root): the first of
    :data:`CODEOWNERS_PLACES` where anything is, as GitHub takes the first it finds. A pipe, a folder or a
    broken link there is returned too (:func:`codeowners_handles` says why it cannot be read: until stop 47
    it was passed over, and BL104 said no CODEOWNERS was found)."""
    here = start.resolve()
    if fs.is_file(here):
        here = here.parent
    for folder in (here, *here.parents):
        for place in CODEOWNERS_PLACES:
            candidate = folder / place
            if fs.exists(candidate) or fs.is_symlink(candidate):
                return candidate
        if fs.exists(folder / ".git"):
            break
    return None


#: CODEOWNERS files larger than this are not read: GitHub does not load one of 3 MB or more either
#: ("CODEOWNERS files must be under 3 MB in size", GitHub's "About code owners")
MAX_CODEOWNERS_BYTES = 3 * 1000 * 1000 - 1


class CodeownersUnreadable(Exception):
    """A CODEOWNERS that cannot be read: ``code`` (BL010, or BL011 over the size limit) and the words."""

    def __init__(self, code: str, words: str) -> None:
        super().__init__(words)
        self.code = code
        self.words = words


def codeowners_handles(path: Path) -> dict[str, Location]:
    """Every owner named in a CODEOWNERS file, with where it first appears. Raises
    :class:`CodeownersUnreadable` when it cannot be read (until stop 47 such a file gave no handles, and
    every owner it names was then "not a known team": BL103 false alarms)."""
    out: dict[str, Location] = {}
    try:
        text = fs.read_regular(path, MAX_CODEOWNERS_BYTES).decode("utf-8", errors="replace")
    except fs.TooLarge as exc:
        raise CodeownersUnreadable("BL011", f"expected a CODEOWNERS under 3 MB (GitHub does not load a larger one), "
                                            f"found {numbers.number(exc.size)} bytes") from None
    except fs.NotRegular as exc:
        raise CodeownersUnreadable("BL010", f"expected a CODEOWNERS file, found {exc.kind}") from None
    except OSError as exc:
        raise CodeownersUnreadable("BL010", f"cannot read the CODEOWNERS file: {exc.strerror or exc}") from None
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
