"""Findings: the data every rule produces and every reporter renders."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from budgetlint.text import numbers

#: characters that must not reach a terminal or a CI log raw: C0 and C1 controls
#: (a newline in a file name would start a line GitHub reads as "::error ..."),
#: DEL, Unicode line and paragraph separators and the bidirectional overrides
_UNPRINTABLE_CLASS = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_UNPRINTABLE: re.Pattern[str] | None = None  # compiled on the first text that needs it
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def printable(text: object) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``, ``\\u202e``).

    Every place that prints a path or a user's string in plain text (the text
    and JUnit reports, ``explain``, ``catalog``) goes through here: one line
    stays one line, and no escape sequence reaches the terminal.
    """
    global _UNPRINTABLE
    text = str(text)
    if text.isascii() and text.isprintable():  # ASCII without C0 controls or DEL: nothing to escape
        return text
    if _UNPRINTABLE is None:
        _UNPRINTABLE = re.compile(_UNPRINTABLE_CLASS)
    return _UNPRINTABLE.sub(_escape, text)


def shown_number(value: object) -> str:
    """A number as a message may quote it: a short one as written, an integer of more than
    20 digits as ``an integer of about N digits``, a long float in 6 significant digits (NaN
    and infinity named). Never raises, never prints thousands of digits (issue 24)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, int):
        if -10**20 < value < 10**20:
            return str(value)
        digits = value.bit_length() * 0.30103  # log10(2): no str() of a 5,000-digit integer
        return f"an integer of about {numbers.number(int(digits) + 1)} digits"
    if value != value:
        return "NaN (not a number)"
    if value in (float("inf"), float("-inf")):
        return "infinity" if value > 0 else "minus infinity"
    text = repr(value)
    return text if len(text) <= 12 else numbers.stated(value)


def printable_lines(text: str) -> list[str]:
    """The lines of a (multi-line) message, each :func:`printable`."""
    return [printable(line) for line in text.split("\n")]


class Severity(enum.IntEnum):
    """How bad a finding is; ordered so that ``max()`` gives the worst."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown severity {text!r}; expected one of: info, warning, error"
            ) from None


@dataclass(frozen=True, order=True)
class Location:
    """A place in a file; line and column count from 1, as editors do."""

    file: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{printable(self.file)}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Finding:
    """One problem (or verdict) found by a rule."""

    rule: str
    severity: Severity
    message: str
    location: Location | None = None
    budget: str | None = None
    promise: str | None = None
    fix: str | None = None
    data: dict = field(default_factory=dict, compare=False, hash=False)

    def sort_key(self) -> tuple:
        loc = self.location or Location("", 0, 0)
        return (loc.file, loc.line, loc.column, self.rule, self.message)

    def as_dict(self) -> dict:
        loc = self.location
        out = {
            "rule": self.rule,
            "severity": self.severity.label,
            "file": loc.file if loc else None,
            "line": loc.line if loc else None,
            "column": loc.column if loc else None,
            "budget": self.budget,
            "promise": self.promise,
            "message": self.message,
        }
        if self.fix:
            out["fix"] = self.fix
        return out


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Deterministic order: by file, line, column, rule, message."""
    return sorted(findings, key=Finding.sort_key)
