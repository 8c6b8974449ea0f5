"""Count the scheduler events one `calibrate` simulates (issue 24, defect 11: CALIBRATE_EVENTS).

    python benchmarks/calibrate_events.py vllm|sglang [jobs]     # the whole calibrate, counted
    python benchmarks/calibrate_events.py estimate vllm sglang    # a bound from one simulation per run

The first runs the slow sweep of tests/calibration/test_calibrate_command.py with an unlimited
work budget and prints the events the fit and the leave-one-out refits drew from it, with the
CPU seconds (this process and its workers) of each stage (minutes to an hour of CPU).

The second simulates each run once at the prior and bounds the whole count by the fit's and the
refits' evaluation limits (seconds): see :func:`estimate`. On the vLLM sweep it gave 41.2 million
where the counted calibrate drew 38 million (docs/limits.md)."""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from budgetlint.evaluate import workbudget
from budgetlint.physics import calibration as core
from budgetlint.run import calibrate as cal

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "bench"
SWEEPS = {
    "vllm": ([str(SHARED / "vllm" / "vllm-bench-automation_llmd_l40s_llama3b_jsonl.json")],
             dict(model="llama-3.2-3b", hardware="l40s", replicas=4)),
    "sglang": ([str(SHARED / "sglang" / "datacrunch_h200_llama33-70b_online.jsonl")],
               dict(model="llama-3.3-70b", hardware="h200-sxm", devices=4)),
}
BIG = 10 ** 15
made: list = []


class Counting(workbudget.WorkBudget):
    def __init__(self, events=None):
        super().__init__(BIG)
        made.append(self)

    def used(self) -> int:
        left = self._local if self._left is None else self._left.value
        return BIG - left


def cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def observations(name: str) -> list:
    """The runs calibrate fits for a sweep (it is stopped at the fit's start)."""
    paths, kw = SWEEPS[name]
    got: dict = {}

    class Stop(Exception):
        pass

    def grab(obs, **k):
        got["obs"] = list(obs)
        raise Stop

    real = core.fit
    core.fit = grab
    try:
        cal.calibrate(paths, jobs=1, loo=False, **kw)
    except Stop:
        pass
    finally:
        core.fit = real
    return got["obs"]


def estimate(obs: list) -> tuple[list[int], int]:
    """(events of one simulation of each run at the prior, a bound on calibrate's whole count).

    The bound: every loss evaluation simulates every run once, so the fit costs at most its
    evaluation limit (900, the restarts' overshoot of 30, the sensitivity probe's 11, the final
    residuals' 1, the standard errors' 6) times the runs' events, and each leave-one-out refit at most 400 + 30
    evaluations of the other runs plus one prediction of its own. Events per simulation move
    with the parameters (by some tens of per cent over a fit), so this is a guide, not a proof."""
    per = []
    for o in obs:
        n = [0]

        def take(k: int) -> bool:
            n[0] += k
            return True

        core.predict(o, core.PRIOR, take)
        per.append(n[0])
    tot = sum(per)
    fit = tot * (900 + 30 + 11 + 1 + 6)
    loo = sum((tot - e) * (400 + 30) + e for e in per) if len(obs) >= 3 else 0
    return per, fit + loo


def main() -> None:
    if sys.argv[1] == "estimate":
        for name in sys.argv[2:]:
            per, bound = estimate(observations(name))
            print(f"{name}: {len(per)} runs, {sum(per):,} events per loss evaluation at the prior "
                  f"({', '.join(f'{e:,}' for e in per)}); calibrate's whole count at most ~{bound:,}; "
                  f"CALIBRATE_EVENTS {workbudget.CALIBRATE_EVENTS:,} is {workbudget.CALIBRATE_EVENTS / bound:.1f}x it")
        return
    name = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    paths, kw = SWEEPS[name]
    workbudget.WorkBudget = Counting  # calibrate makes its budget through the module
    t0, c0 = time.time(), cpu()
    real_fit, real_loo = core.fit, cal._leave_one_out

    def fit(*a, **k):
        r = real_fit(*a, **k)
        print(f"{name}: fit done: {made[-1].used():,} events, {cpu() - c0:.0f} s CPU, {time.time() - t0:.0f} s wall",
              flush=True)
        return r

    core.fit = fit
    res = cal.calibrate(paths, jobs=jobs, **kw)
    core.fit = real_fit
    print(f"{name}: calibrate done: {made[-1].used():,} events in all, {cpu() - c0:.0f} s CPU, "
          f"{time.time() - t0:.0f} s wall, runs {len(res.document['runs'])}, error {res.document['error']}",
          flush=True)


if __name__ == "__main__":
    main()
