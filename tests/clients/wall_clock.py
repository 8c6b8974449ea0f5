"""How late this machine wakes a sleeping thread, measured while a wall-clock experiment runs.

The tests that hold a real client's clock against a server's law (tests/clients/
test_batching_client.py, test_fake_server.py's wall-clock check) assume the server wakes on
time. On a busy machine (more runnable processes than cores) every wake-up is late by up to a
scheduler slice, and the client sees a slower server than its law: the comparison then tests the
machine, not the simulator. :class:`WakeProbe` sleeps ``period_s`` over and over on a thread of
its own and records how late each wake-up was; :func:`judge_on_this_machine` runs the test's
assertions and, only when one fails *and* the probe saw the machine busy, skips with what it
measured (a check that could not run says why). On an idle machine a failure stays a failure.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import pytest

#: a wake-up this late at the probe's p90 means the machine was busy: an idle machine wakes a
#: 5 ms sleep well under 1 ms late; the tests' tolerances are 15 ms and 15-20 %
BUSY_LATE_S = 0.002


class WakeProbe:
    """``with WakeProbe() as probe: ...``; then ``probe.late_s(0.9)``."""

    def __init__(self, period_s: float = 0.005) -> None:
        self.period_s = period_s
        self.late: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="wake-probe")

    def _run(self) -> None:
        while not self._stop.is_set():
            before = time.monotonic()
            time.sleep(self.period_s)
            self.late.append(max(0.0, time.monotonic() - before - self.period_s))

    def __enter__(self) -> "WakeProbe":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def late_s(self, q: float) -> float:
        """The ``q`` quantile of the wake-ups' lateness (nearest rank); 0 before any."""
        if not self.late:
            return 0.0
        ordered = sorted(self.late)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def judge_on_this_machine(probe: WakeProbe, what: str, assertions: Callable[[], None]) -> None:
    """Run ``assertions``; a failure while the machine was busy is a skip that says so."""
    try:
        assertions()
    except AssertionError as failure:
        late = probe.late_s(0.9)
        if late > BUSY_LATE_S:
            pytest.skip(f"{what} cannot be checked on this machine now: it was busy during the run (a "
                        f"{probe.period_s * 1e3:g} ms sleep woke {late * 1e3:.1f} ms late at p90 over "
                        f"{len(probe.late)} wake-ups, against under {BUSY_LATE_S * 1e3:g} ms idle); the "
                        f"failed comparison was: {str(failure).splitlines()[0]}")
        raise
