"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


from process_caches import clear_process_caches  # noqa: E402 (tests/ is on sys.path: rootdir conftest)

# The command line keeps a simulation cache between runs (evaluate/load_disk.py, on by default).
# Tests run the CLI in-process and in children with monkeypatched physics and hand-made catalogs:
# each must simulate what it sets up, so the suite turns the cache off for itself and its
# children; tests/evaluate/test_load_disk.py turns it on where it is the subject.
os.environ["BUDGETLINT_NO_CACHE"] = "1"

# Under CI=true (.ci/run, the landing gate) every property test draws the same inputs on every
# run: a gate that fails must fail again on a rerun, and an input found by chance belongs in a
# developer's run, where it is then pinned as an @example. Elsewhere hypothesis explores (its
# default: a fresh seed each run), and the fuzz tests' `long` profile explores on demand.
if os.environ.get("CI") == "true":
    from hypothesis import settings as _settings

    _settings.register_profile("budgetlint-ci", derandomize=True, database=None)
    _settings.load_profile("budgetlint-ci")


@pytest.fixture(autouse=True)
def _fresh_process_caches() -> None:
    clear_process_caches()


@pytest.fixture()
def shared_dir() -> Path:
    """`../shared` beside the checkout; tests that need it skip without it."""
    if not SHARED_DIR.is_dir():
        pytest.skip(
            f"{SHARED_DIR} is absent: the shared reference files exist in the "
            "project's CI and dev machines, not in a user's fresh clone"
        )
    return SHARED_DIR


@pytest.fixture()
def repo_root() -> Path:
    return REPO_ROOT


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (minutes each: the queueing-theory checks near saturation,
    docs/load.md) run only with BUDGETLINT_SLOW=1, as .ci/run sets; otherwise they skip
    and say how to run them."""
    import os

    if os.environ.get("BUDGETLINT_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow (minutes): run with BUDGETLINT_SLOW=1 (CI does, via .ci/run)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
