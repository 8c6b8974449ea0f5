"""JSON text in pieces: what ``json.dumps(value, indent=2)`` writes, without the whole string.

A report of 10,000 budgets is about 70 MB of indented JSON; built as one
string (and the dict before it) it took 565 MB of memory. Reporters wrap
their long arrays in :class:`Lazy` (an iterable, consumed once) and write
:func:`chunks` piece by piece: each array element is built, encoded and
dropped before the next. The text is byte-for-byte ``json.dumps(value,
indent=2)`` of the same value with the arrays materialised
(``tests/reporters/test_json_stream.py``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

from budgetlint.report import Lazy  # noqa: F401  (re-exported: what chunks() streams)

_INDENT = "  "


def _has_lazy(value: Any) -> bool:
    if isinstance(value, Lazy):
        return True
    if isinstance(value, dict):
        return any(_has_lazy(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_lazy(v) for v in value)
    return False


def _dumps(value: Any, level: int, each: Callable[[Any], Any]) -> str:
    text = json.dumps(each(value), indent=2, allow_nan=False)
    return text.replace("\n", "\n" + _INDENT * level) if level else text


def chunks(value: Any, *, each: Callable[[Any], Any] = lambda v: v, level: int = 0) -> Iterator[str]:
    """The pieces of ``json.dumps(value, indent=2)``; ``each`` maps every element before encoding."""
    if not _has_lazy(value):
        yield _dumps(value, level, each)
        return
    inner = _INDENT * (level + 1)
    if isinstance(value, dict):
        opened = False
        for key, item in value.items():
            yield ("{\n" if not opened else ",\n") + inner + json.dumps(key) + ": "
            opened = True
            yield from chunks(item, each=each, level=level + 1)
        yield ("\n" + _INDENT * level + "}") if opened else "{}"
        return
    opened = False
    for item in value:  # a Lazy, or a list holding one
        yield ("[\n" if not opened else ",\n") + inner
        opened = True
        yield from chunks(item, each=each, level=level + 1)
    yield ("\n" + _INDENT * level + "]") if opened else "[]"
