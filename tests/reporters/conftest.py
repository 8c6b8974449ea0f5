"""Fixtures of the reporter tests."""

from __future__ import annotations

import pytest
from reporter_fixtures import canned_report

from budgetlint.report import Report


@pytest.fixture()
def report() -> Report:
    """The canned report: errors, warnings, an info, one finding without a
    location, messages with %, comma, colon, newlines, | and HTML."""
    return canned_report()
