"""Mechanical fixes: the edit a finding's help describes, for ``check --fix`` and ``--diff``.

A rule that can say exactly what to write puts one edit in its finding's
``data["edit"]`` (:func:`edit`): the keys to set and their values, and
whether the fix is safe. As ruff does, a *safe* fix keeps every promise the
file makes to its users and the deployment as they are: it writes down what
the file already promises (the pace an end-to-end promise implies) and
``--fix`` applies it. A fix that weakens a promise or changes the deployment
(loosen promise.e2e, more replicas, another precision) is *unsafe*: applied
only with ``--unsafe-fixes``, since someone must agree to it in review.

The numbers are the figures that make the fix true, rounded towards it
(:func:`at_least`, :func:`at_most`): the pace an end-to-end promise needs is
41.03 token/s, so the fix promises 41.1 token/s, not 41 (which still fails).
"""

from __future__ import annotations

from typing import Any


def _directed(x: float, up: bool, digits: int = 3) -> str:
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    if x == 0:
        return "0"
    d = Decimal(f"{float(x):.12g}")  # float noise (20.500000000000004) is not a figure to round up
    step = Decimal(1).scaleb(d.adjusted() - digits + 1)
    q = d.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    text = format(q.normalize(), "f")
    return text


def at_least(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, rounded up: a figure a minimum must reach (41.03 -> "41.1")."""
    return _directed(x, True, digits)


def at_most(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, rounded down: a figure a maximum must not pass."""
    return _directed(x, False, digits)


def time_text(seconds: float, up: bool) -> str:
    """A time for a YAML value, rounded towards the fix: "20.5 s", "412 ms"."""
    if seconds < 1:
        return f"{_directed(seconds * 1e3, up)} ms"
    return f"{_directed(seconds, up)} s"


def edit(owner: Any, changes: list[tuple[tuple, Any]], *, safe: bool, title: str) -> dict:
    """The ``data`` of a finding whose help is mechanical: set each ``(sub-path, value)`` of ``owner``
    (a budget or a segment: anything with ``doc`` and ``path``)."""
    doc = owner.doc
    return {"edit": {"file": doc.file, "document": doc.index, "safe": safe, "title": title,
                     "changes": [(tuple(owner.path) + tuple(sub), value) for sub, value in changes]}}
