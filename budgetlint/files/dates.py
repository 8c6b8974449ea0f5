"""The one date parser: what the schema accepts as a date is what applies.

A suppression's ``expires: "20991231"`` used to be refused by the schema
(``format: date``, RFC 3339's ``YYYY-MM-DD``) and still applied, because
Python 3.11's ``date.fromisoformat`` also reads ISO 8601's basic form. The
schema's format checker and every reader of a date call :func:`parse_date`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_date(value: Any) -> dt.date | None:
    """``YYYY-MM-DD`` (a real day, nothing around it) as a date, else None."""
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:  # 2026-02-30
        return None


def is_date(value: Any) -> bool:
    """The schema's ``format: date`` check (non-strings are the type check's business)."""
    return not isinstance(value, str) or parse_date(value) is not None
