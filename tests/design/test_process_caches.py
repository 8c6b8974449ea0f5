"""The autouse fixture in tests/conftest.py empties every process-wide cache before each test."""

from __future__ import annotations

import functools

from process_caches import LRU_MODULES, PROCESS_CACHES, clear_process_caches


def test_the_fixture_knows_every_process_wide_cache() -> None:
    import budgetlint.evaluate.physics_inputs
    import budgetlint.evaluate.analysis_cache
    import budgetlint.stats.order_stats

    for module, name in PROCESS_CACHES:
        assert isinstance(getattr(__import__(module, fromlist=[name]), name), dict)
    lru = [n for n, f in vars(budgetlint.stats.order_stats).items()
           if isinstance(f, functools._lru_cache_wrapper)]
    assert lru, "stats.order_stats has lru_caches to clear"
    assert "budgetlint.stats.order_stats" in LRU_MODULES


def test_clearing_empties_them() -> None:
    from budgetlint.evaluate import analysis_cache
    from budgetlint.stats import order_stats

    analysis_cache._ANALYSES["x"] = object()
    cached = [f for f in vars(order_stats).values() if isinstance(f, functools._lru_cache_wrapper)]
    assert clear_process_caches() >= 3
    assert analysis_cache._ANALYSES == {}
    assert all(c.cache_info().currsize == 0 for c in cached)
