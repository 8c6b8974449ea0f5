"""Tolerant JSON reading: one value, JSON lines or concatenated objects, each with its line."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .problems import DUPLICATE_KEY, LIMIT, MALFORMED, TRUNCATED, Ctx
from budgetlint.text import numbers


@dataclass
class Doc:
    """One top-level JSON value and the (1-based) line it starts on."""

    value: Any
    line: int


_NEXT_VALUE = re.compile(r"\n(?=[{\[])")

#: at most this many top-level JSON values are read from one file (JSONL)
MAX_JSON_VALUES = 10_000
#: malformed values reported one by one; after this many, the file is not read further
MAX_MALFORMED = 20


class _Lines:
    """Line numbers of increasing offsets in ``text``, counted once (linear overall)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, pos: int) -> int:
        if pos < self.pos:  # never happens in a forward scan; stay correct anyway
            return self.text.count("\n", 0, pos) + 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def parse_json_stream(text: str, ctx: Ctx) -> list[Doc]:
    """Parse one JSON value, or several (JSONL / concatenated objects).

    ``NaN``/``Infinity``/``-Infinity`` are accepted by the parser but counted
    (``parse_constant``) so readers can refuse NaN where they read values.
    A value that cannot be parsed is reported (truncated or malformed) and the
    reader resumes at the next line. Line numbers are counted in one forward
    pass (linear in the file), at most :data:`MAX_JSON_VALUES` values are
    read and at most :data:`MAX_MALFORMED` malformed ones reported; a limit
    reached is a ``bench-limit`` problem.
    """

    def constant(token: str) -> float:
        if token == "NaN":
            ctx.nan_tokens += 1
            return math.nan
        return math.inf if token == "Infinity" else -math.inf

    def integer(token: str) -> float | int:
        # an integer beyond float range (or Python's int-parsing digit limit)
        # reads as +-inf, so readers report "is infinite" instead of raising
        # OverflowError in float() later (found by fuzzing)
        if len(token.lstrip("-")) > 308:
            return -math.inf if token.startswith("-") else math.inf
        return int(token)

    duplicated: list[str] = []

    def pairs(items: list) -> dict:
        # JSON readers keep the last of two equal keys, silently: which one the tool meant is
        # not knowable, so say so (issue 24); the value read stays the last, as before
        value = dict(items)
        if len(value) != len(items):
            seen: set = set()
            duplicated.extend(k for k, _ in items if k in seen or seen.add(k))
        return value

    decoder = json.JSONDecoder(parse_constant=constant, parse_int=integer, object_pairs_hook=pairs)
    docs: list[Doc] = []
    lines = _Lines(text)
    malformed = 0
    pos = 0
    n = len(text)
    end_of_content = len(text.rstrip())
    while True:
        while pos < n and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= n:
            break
        if len(docs) >= MAX_JSON_VALUES:
            ctx.problem(f"more than {numbers.number(MAX_JSON_VALUES)} JSON values in one file; the first "
                        f"{numbers.number(MAX_JSON_VALUES)} are read, the rest from line {lines.at(pos)} is not",
                        LIMIT, lines.at(pos))
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            line = lines.at(pos)
            malformed += 1
            if malformed > MAX_MALFORMED:
                ctx.problem(f"more than {MAX_MALFORMED} values that are not valid JSON; the file is not "
                            f"read past line {line}", LIMIT, line)
                break
            if exc.pos >= end_of_content - 1 or exc.msg.startswith("Unterminated string"):
                ctx.problem(
                    f"JSON ends in the middle of the value that starts at line {line} "
                    f"(truncated file?): {exc.msg}",
                    TRUNCATED,
                    line,
                )
            else:
                bad_line = lines.at(exc.pos) if exc.pos >= pos else line
                column = exc.pos - text.rfind("\n", 0, exc.pos)
                ctx.problem(
                    f"not valid JSON at line {bad_line} column {column}: {exc.msg}",
                    MALFORMED,
                    bad_line,
                )
            # resume at the next line that starts a new top-level value (JSONL)
            nxt = _NEXT_VALUE.search(text, max(exc.pos, pos + 1))
            if nxt is None:
                break
            pos = nxt.start() + 1
            continue
        docs.append(Doc(value, lines.at(pos)))
        if duplicated:
            names = ", ".join(repr(k) for k in dict.fromkeys(duplicated[:5]))
            ctx.problem(f"the value at line {lines.at(pos)} repeats the key {names}: JSON keeps the last, and "
                        f"which one the tool wrote last is not a measurement of anything", DUPLICATE_KEY,
                        lines.at(pos))
            duplicated.clear()
        pos = end
    return docs
