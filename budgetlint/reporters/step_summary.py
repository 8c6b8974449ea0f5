"""Append markdown to the GitHub Actions job summary (``$GITHUB_STEP_SUMMARY``).

GitHub accepts at most 1 MiB per step's summary file and shows nothing of a
larger one, so what is appended is cut (at a line boundary) to what still
fits beside the file's current content, with a note saying so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Callable, Optional

from budgetlint.text import numbers

#: GitHub's limit for one step's summary file
STEP_SUMMARY_LIMIT = 1024 * 1024

TRUNCATION_NOTE = (
    "\n> [!NOTE]\n> budgetlint's summary was cut here: GitHub's job summary takes at most "
    "1 MiB per step. The SARIF or JSON output has everything.\n"
)


def fit(markdown: str, room: int) -> str:
    """``markdown`` if it fits in ``room`` bytes (UTF-8), else its head, cut at a
    line boundary, plus a note; ``""`` when not even the note fits."""
    data = markdown.encode("utf-8")
    if len(data) <= room:
        return markdown
    note = TRUNCATION_NOTE.encode("utf-8")
    if room < len(note):
        return ""
    head = data[: room - len(note)].decode("utf-8", errors="ignore")
    cut = head.rfind("\n")
    head = head[: cut + 1] if cut >= 0 else ""
    return head + TRUNCATION_NOTE


def append_step_summary(markdown: str, env: Mapping[str, str] = os.environ,
                        warn: Optional[Callable[[str], None]] = None) -> bool:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when it is set, keeping the
    file within 1 MiB. True when something was written. A summary that is set but
    cannot be appended (no room left, a folder that is not there, a full disk) fails
    nothing: ``warn`` is told why (the command line prints it), never a silent skip."""
    target = env.get("GITHUB_STEP_SUMMARY", "")
    if not target:
        return False
    say = warn or (lambda _: None)
    path = Path(target)
    try:
        existing = path.stat().st_size
    except FileNotFoundError:
        existing = 0
    except OSError as exc:
        say(f"cannot read the job summary file {target} ({exc.strerror or exc}): the summary was not appended")
        return False
    separator = "\n" if existing else ""
    text = fit(markdown if markdown.endswith("\n") else markdown + "\n", STEP_SUMMARY_LIMIT - existing - len(separator))
    if not text:
        say(f"the job summary file {target} already holds {numbers.number(existing)} bytes of GitHub's "
            f"{numbers.number(STEP_SUMMARY_LIMIT)}: there is no room for the summary, which was not appended")
        return False
    try:
        with path.open("a", encoding="utf-8", newline="\n") as handle:
            handle.write(separator + text)
    except OSError as exc:
        say(f"cannot append the job summary to {target}: {exc.strerror or exc}")
        return False
    return True
