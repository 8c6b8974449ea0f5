"""Fixtures of the GitHub Action and workflow tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from action_helpers import REPO_ROOT, find_linters_bin, load_yaml


@pytest.fixture(scope="session")
def action() -> dict[str, Any]:
    return load_yaml(REPO_ROOT / "action.yml")


@pytest.fixture(scope="session")
def linters_bin() -> Path:
    """bin/ of the linters virtualenv (tests/action/setup_linters.sh); skips without it."""
    return find_linters_bin()
