"""The run's work budget for the load simulation (issue 24).

One budget may run eight simulations of up to 500,000 events each
(:data:`~budgetlint.physics.serving_sim.MAX_EVENTS`), and a repository may
hold hundreds of budgets with distinct traffic: without a bound on the run,
ten crafted budgets took 219 s and 200 ordinary ones 126 s. A
:class:`WorkBudget` caps the scheduler events of a whole run, shared by every
budget and every ``--jobs`` worker: the counter lives in shared memory made
before the workers fork, so they draw on one total. The simulator calls it
every 1,024 events (:func:`~budgetlint.physics.serving_sim.run`'s
``allowance``); once the total is spent, the simulation in progress stops
and every budget still to be simulated is skipped with BL309, which names it
and says why. The flat estimate still judges those budgets.

Under ``--jobs`` the budgets that are simulated before the cap is reached
depend on the workers' pace, so a run that reaches the cap may differ from
the one-process run in which budgets it names; below the cap the reports are
identical (the cap only counts).
"""

from __future__ import annotations

from typing import Any

from budgetlint.physics.serving_sim import WorkSpent  # noqa: F401 (what run/ catches when the budget is spent)
from budgetlint.text import numbers

#: scheduler events one run may simulate, over every budget and worker: issue 24 set 2,500,000 at
#: 8-19 us of CPU an event (19-48 s of CPU at most); issue 28's cheaper event (about 7.4 us,
#: docs/performance.md) kept the same ~48 s bound at 6,500,000; at about 6 us an event (the
#: 1,000-budget corpus of benchmarks/bench_check_cost.py: 41.2 s of CPU for 6.5-7.0 M events, once
#: issue 25's read of the batch to its steady state near saturation made its 29 last budgets BL309 at
#: 6,500,000) the same bound is 8,000,000 (docs/limits.md)
RUN_EVENTS = 8_000_000

#: scheduler events one ``calibrate`` may simulate (the fit, its sensitivity probe and the
#: leave-one-out refits, over every worker); past it calibrate stops with exit 2 naming what was
#: not fitted (issue 24: six rate runs of 1,000 requests ran unbounded). Sized on the shipped slow
#: sweeps of tests/calibration: the vLLM one (6 open-loop runs of 300-900 requests) drew 38.5
#: million events counted whole (benchmarks/calibrate_events.py vllm; 15 us of CPU an event on a
#: loaded machine), the SGLang one (7 runs of 300-3,200 requests) is bounded at 68.8 million
#: (benchmarks/calibrate_events.py estimate: one simulation per run times the fit's and refits'
#: evaluation limits; 41.2 million for the vLLM sweep). 200 million: 2.9x the larger, a margin for
#: the events a simulation moves with the parameters; ~50 min of CPU at 15 us an event
#: (tests/hardening/test_issue24_gate.py holds it between 2x and 10x the larger bound)
CALIBRATE_EVENTS = 200_000_000


class WorkBudget:
    """A shared count of the events a run may still simulate."""

    def __init__(self, events: int | None = None, *, shared: bool = True) -> None:
        """``shared`` False: a count of this process alone until :meth:`share` (a run that may not
        fork makes no shared memory: the multiprocessing import and the semaphore were ~12 ms of a
        simulating check, issue 28)."""
        self.events = int(RUN_EVENTS if events is None else events)
        self._left: Any = None
        self._local = self.events
        if shared:
            self.share()

    def share(self) -> None:
        """From now on the count lives in shared memory (call it before the workers fork: they
        inherit it), starting from what this process has left; a no-op once shared."""
        if self._left is not None:
            return
        try:
            import multiprocessing

            self._left = multiprocessing.get_context("fork").Value("q", self._local)
        except (ImportError, OSError, ValueError):  # no shared memory: this process alone
            self._left = None

    def take(self, n: int) -> bool:
        """Spend ``n`` events; False once the run's total is spent (and from then on)."""
        if self._left is None:
            self._local -= n
            return self._local >= 0
        with self._left.get_lock():
            self._left.value -= n
            return self._left.value >= 0

    @property
    def spent(self) -> bool:
        left = self._local if self._left is None else self._left.value
        return left <= 0

    def why(self) -> str:
        return (f"the run's simulation work budget ({numbers.number(self.events)} scheduler events over every budget, "
                f"docs/limits.md) was spent before this budget's simulation finished; it was not simulated "
                f"(fewer budgets with distinct traffic, or `--no-simulate`, or check it alone)")
