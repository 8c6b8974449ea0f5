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


_PACKAGES = ("evaluate", "physics", "stats")


def _module_level_containers() -> set[tuple[str, str]]:
    """Every module-level name in evaluate/, physics/ and stats/ bound to a dict, list or set
    display (or a dict()/list()/set()/defaultdict()/OrderedDict() call), read from the source."""
    import ast
    from pathlib import Path

    import budgetlint

    root = Path(budgetlint.__file__).parent
    found = set()
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            module = "budgetlint." + ".".join(path.relative_to(root).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            for node in ast.parse(path.read_text()).body:
                targets, value = [], None
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets, value = [node.target], node.value
                mutable = isinstance(value, (ast.Dict, ast.DictComp, ast.List, ast.ListComp, ast.Set, ast.SetComp)) or (
                    isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))
                    and (value.func.id if isinstance(value.func, ast.Name) else value.func.attr)
                    in ("dict", "list", "set", "defaultdict", "OrderedDict"))
                for t in targets:
                    if mutable and isinstance(t, ast.Name) and t.id != "__all__":
                        found.add((module, t.id))
    return found


def test_every_module_level_container_is_a_known_cache_or_table() -> None:
    """A new module-level dict (a cache a mutant could hide behind in a forked worker) fails
    here until it is listed: in PROCESS_CACHES (cleared before every test) or in TABLES."""
    from process_caches import TABLES

    unknown = _module_level_containers() - set(PROCESS_CACHES) - TABLES
    assert not unknown, f"list each in tests/process_caches.py (PROCESS_CACHES or TABLES): {sorted(unknown)}"
    stale = (set(PROCESS_CACHES) | TABLES) - _module_level_containers()
    assert not stale, f"no longer module-level containers: {sorted(stale)}"


def test_every_lru_cache_is_cleared() -> None:
    """Every functools cache in evaluate/, physics/ and stats/ is in a module of LRU_MODULES."""
    import importlib
    import pkgutil

    import budgetlint

    missing = []
    for package in _PACKAGES:
        pkg = importlib.import_module(f"budgetlint.{package}")
        names = [pkg.__name__] + [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
        for name in names:
            mod = importlib.import_module(name)
            for attr, obj in vars(mod).items():
                if (callable(getattr(obj, "cache_clear", None)) and getattr(obj, "__module__", None) == name
                        and name not in LRU_MODULES):
                    missing.append(f"{name}.{attr}")
    assert not missing, f"add their modules to LRU_MODULES in tests/process_caches.py: {missing}"
    assert budgetlint  # imported for its path


def test_the_unpickled_analyses_are_cleared() -> None:
    from budgetlint.physics import analysis

    analysis._UNPICKLED[b"x"] = object()
    clear_process_caches()
    assert analysis._UNPICKLED == {}
