"""``check --fix`` / ``--diff``: apply the mechanical fixes that findings carry (rules/_fixes.py).

The YAML is edited with ruamel.yaml's round-trip mode, which keeps comments,
key order, quoting and flow or block style: only the values the fix sets
change. A file that ruamel.yaml would not write back byte for byte unedited
(an indentation it cannot reproduce) is left alone and said so: a fix never
reformats a file. CRLF line ends are kept.

A fix can reveal the next one (a promised pace raised, the decode segment's
pace must follow): as ruff does, the check runs again on the fixed text until
nothing more is fixed, at most :data:`MAX_PASSES` times.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: checks run at most this many times (the first and each one after a round of fixes)
MAX_PASSES = 10

#: indentations tried for a file (mapping, sequence, offset): the first that writes the file back
#: unchanged is the file's
_INDENTS = ((2, 4, 2), (2, 2, 0), (4, 6, 4), (4, 4, 0), (4, 4, 2), (2, 4, 0))


@dataclass
class FixRun:
    """What the fixes did: the texts before and after, by file, and what was not applied."""

    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)
    applied: list[tuple[str, str, str]] = field(default_factory=list)  # (file, rule, title)
    unsafe_left: int = 0
    problems: list[str] = field(default_factory=list)
    passes: int = 0

    @property
    def changed(self) -> list[str]:
        return [f for f in self.after if self.after[f] != self.before[f]]


def _round_trip(text: str) -> Any:
    """A ruamel.yaml instance that writes ``text``'s documents back byte for byte, with them; or None."""
    from ruamel.yaml import YAML  # lazily: only --fix and --diff edit YAML

    for mapping, sequence, offset in _INDENTS:
        yaml = YAML()
        yaml.preserve_quotes = True
        yaml.width = 1 << 16
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        try:
            docs = list(yaml.load_all(text))
            out = io.StringIO()
            yaml.dump_all(docs, out)
        except Exception:  # noqa: BLE001  (ruamel.yaml raises many types; the check reported the file)
            return None
        if out.getvalue() == text:
            return yaml, docs
    return None


def apply_edits(text: str, edits: list[dict]) -> tuple[str | None, str | None]:
    """``text`` with each edit's changes set; (None, why) where the file cannot be edited in place."""
    if "\r\n" in text:  # CRLF line ends: edited as LF, written back as they were
        edited, why = apply_edits(text.replace("\r\n", "\n"), edits)
        return (edited.replace("\n", "\r\n") if edited is not None else None), why
    found = _round_trip(text)
    if found is None:
        return None, "ruamel.yaml cannot write this file back unchanged (its layout would change); not edited"
    yaml, docs = found
    for e in edits:
        if e["document"] >= len(docs):
            return None, "the file changed since it was checked"
        for path, value in e["changes"]:
            node = docs[e["document"]]
            for part in path[:-1]:
                try:
                    node = node[part]
                except (KeyError, IndexError, TypeError):
                    return None, f"no {'.'.join(map(str, path[:-1]))} to edit"
            if not hasattr(node, "__setitem__"):
                return None, f"{'.'.join(map(str, path[:-1]))} is not a mapping"
            node[path[-1]] = value
    out = io.StringIO()
    yaml.dump_all(docs, out)
    return out.getvalue(), None


def _edits(report: Any, unsafe: bool) -> tuple[dict[str, list[tuple[str, dict]]], int]:
    """The edits of the report's findings by file (one per path: the first finding's), and the number
    of unsafe ones left out."""
    by_file: dict[str, list[tuple[str, dict]]] = {}
    taken: set[tuple] = set()
    left = 0
    found = [(f, f.data["edit"]) for f in report.sorted_findings() if f.data and f.data.get("edit")]
    # safe fixes first, until none is left: one may make an unsafe one needless (a segment's pace
    # raised to the promise's, the segments fit the end-to-end promise without loosening it)
    safe_now = any(e["safe"] for _, e in found)
    for f, e in found:
        if not e["safe"] and (not unsafe or safe_now):
            left += not unsafe
            continue
        keys = {(e["file"], e["document"], path) for path, _ in e["changes"]}
        if keys & taken:
            continue
        taken |= keys
        by_file.setdefault(e["file"], []).append((f.rule, e))
    return by_file, left


def run_fixes(check: Callable[[], Any], *, unsafe: bool, overlay: dict[str, str],
              read: Callable[[str], str]) -> tuple[Any, FixRun]:
    """Check, fix, check again until nothing changes; the fixed texts go into ``overlay``
    (by absolute path: the loader reads them instead of the files). Returns the last report."""
    import os

    run = FixRun()
    report = check()
    run.passes = 1
    while run.passes < MAX_PASSES:
        by_file, run.unsafe_left = _edits(report, unsafe)
        progressed = False
        for file, items in by_file.items():
            key = os.path.abspath(file)
            if key not in overlay:
                try:
                    overlay[key] = read(file)
                except OSError as exc:
                    run.problems.append(f"{file}: cannot read it to fix: {exc.strerror or exc}")
                    continue
            run.before.setdefault(file, overlay[key])
            text, why = apply_edits(overlay[key], [e for _, e in items])
            if text is None:
                if why not in " ".join(run.problems):
                    run.problems.append(f"{file}: {why}")
                continue
            if text != overlay[key]:
                overlay[key] = text
                run.after[file] = text
                run.applied.extend((file, rule, e["title"]) for rule, e in items)
                progressed = True
        if not progressed:
            break
        report = check()
        run.passes += 1
    for file in run.before:
        run.after.setdefault(file, run.before[file])
    return report, run


def unified_diff(run: FixRun) -> str:
    import difflib
    import os

    out = []
    for file in sorted(run.changed):
        out.extend(difflib.unified_diff(run.before[file].splitlines(keepends=True),
                                        run.after[file].splitlines(keepends=True),
                                        fromfile=file if os.path.isabs(file) else f"a/{file}",
                                        tofile=file if os.path.isabs(file) else f"b/{file}"))
    return "".join(out)


def write_fixed(run: FixRun, write: Callable[[str, str], None]) -> None:
    for file in run.changed:
        write(str(Path(file)), run.after[file])
