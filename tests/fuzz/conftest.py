"""Hypothesis profiles for the fuzz tests.

* ``ci`` (the default): a few dozen inputs per test, seconds in all.
* ``long``: at least 100,000 inputs over the fuzz tests, for a run on demand::

      .venv/bin/pytest tests/fuzz --hypothesis-profile=long -p no:cacheprovider
      BUDGETLINT_FUZZ=long .venv/bin/pytest tests/fuzz

  (``--hypothesis-profile`` is read before this file is imported unless
  ``tests/fuzz`` is on the command line, so name the directory; the
  environment variable works however pytest is started.)

``BUDGETLINT_FUZZ_COUNTS=FILE`` also writes the inputs run so far to FILE as
the run goes (every 100 inputs of a test), for a long run stopped before its end.

The profiles are registered here, not in ``tests/conftest.py``, and are not
loaded globally: only the fuzz tests read them (through
:func:`fuzz_support.fuzz_settings`), so other property tests keep their own
settings even with ``BUDGETLINT_FUZZ=long``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: tests in tests/fuzz that draw inputs; the long profile spreads its
#: 100,000 inputs over them (see fuzz_support.LONG_TOTAL).
_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.large_base_example],
    print_blob=True,
)
#: under CI=true (the landing gate) the `ci` profile draws the same inputs every run, like every
#: other property test there (tests/conftest.py); the `long` profile always explores
settings.register_profile("ci", max_examples=40, derandomize=os.environ.get("CI") == "true", **_COMMON)
settings.register_profile("long", max_examples=22_000, database=None, derandomize=False, **_COMMON)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    import fuzz_support

    if not fuzz_support.COUNTS:
        return
    total = sum(fuzz_support.COUNTS.values())
    terminalreporter.write_sep("-", f"fuzz inputs run (profile {fuzz_support.profile_name()}): {total:,}")
    for name, n in sorted(fuzz_support.COUNTS.items()):
        terminalreporter.write_line(f"  {name}: {n:,}")
