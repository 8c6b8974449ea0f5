"""The browser tests need a Chromium (tests/browser/setup_browser.sh installs
Debian's). Without one they skip and say so, except under CI=true, where the
browser is part of what the suite is meant to exercise: there they fail."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cdp import Browser, find_chromium  # noqa: E402


@pytest.fixture(scope="session")
def browser():
    path = find_chromium()
    if path is None:
        reason = ("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or $BUDGETLINT_CHROMIUM): "
                  "install it with `bash tests/browser/setup_browser.sh` (apt-get install chromium)")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)
    with Browser(path) as b:
        yield b
