"""The process-wide caches the autouse fixture in tests/conftest.py clears before every test.

A module of its own (not conftest.py): tests import it by name, and ``from conftest import``
would find whichever conftest.py pytest put on sys.path first (tests/browser/ has one).
"""

from __future__ import annotations


#: process-wide caches, cleared before every test so that no test sees another's results (a
#: mutant or a changed input hidden behind an answer cached by an earlier test): module, name
PROCESS_CACHES = (("budgetlint.evaluate.analysis_cache", "_ANALYSES"), ("budgetlint.evaluate.physics_inputs", "_VIEWS"),
                  ("budgetlint.evaluate.physics_inputs", "_AS_DICT"), ("budgetlint.physics.analysis", "_UNPICKLED"),
                  ("budgetlint.physics.serving_sim", "_DRAWS"),  # the seeds' lengths and gaps (issue 28)
                  ("budgetlint.evaluate.load_disk", "_DIGEST"))  # the package's digest (the simulation cache's key)
#: module-level dicts, lists and sets in evaluate/, physics/ and stats/ that are read-only tables,
#: not caches (tests/design/test_process_caches.py fails on one in neither list)
TABLES = frozenset({
    ("budgetlint.evaluate.calibration", "TPOT_DEFINITIONS"), ("budgetlint.evaluate.physics_inputs", "_SOURCE_WORDS"),
    ("budgetlint.evaluate.deployed", "_KV_DTYPES"), ("budgetlint.evaluate.deployed", "_DTYPES"),
    ("budgetlint.evaluate.deployed", "_QUANT"), ("budgetlint.evaluate.load", "_LABEL"),
    ("budgetlint.evaluate.lengths", "_FIELDS"), ("budgetlint.physics.calibration", "BOUNDS"),
    ("budgetlint.physics.load_stats", "_T975"), ("budgetlint.physics.precision", "_BYTES"),
    ("budgetlint.physics.precision", "_KEY"), ("budgetlint.physics.precision", "FALLBACK"),
    ("budgetlint.physics.default_efficiency", "DEFAULTS"), ("budgetlint.physics.default_efficiency", "GENERATION"),
    ("budgetlint.physics.default_efficiency", "COMPUTE_BY_GENERATION"),
    ("budgetlint.physics.default_efficiency", "CURRENT_RELEASE_FROM"),
    ("budgetlint.stats.order_stats", "KNOWN_NEEDED_N"),
})
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
