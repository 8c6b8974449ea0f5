"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


#: process-wide caches, cleared before every test so that no test sees another's results (a
#: mutant or a changed input hidden behind an answer cached by an earlier test): module, name
PROCESS_CACHES = (("budgetlint.evaluate.share", "_ANALYSES"), ("budgetlint.evaluate.adapter", "_VIEWS"),
                  ("budgetlint.evaluate.adapter", "_AS_DICT"))
#: modules whose every functools.lru_cache is cleared too
LRU_MODULES = ("budgetlint.stats.order_stats",)


def clear_process_caches() -> int:
    """Empty the caches above in the modules already imported (importing none); how many were."""
    import sys

    cleared = 0
    for module, name in PROCESS_CACHES:
        mod = sys.modules.get(module)
        if mod is not None:
            getattr(mod, name).clear()
            cleared += 1
    for module in LRU_MODULES:
        mod = sys.modules.get(module)
        for obj in vars(mod).values() if mod is not None else ():
            if callable(getattr(obj, "cache_clear", None)) and getattr(obj, "__module__", None) == module:
                obj.cache_clear()
                cleared += 1
    return cleared


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
