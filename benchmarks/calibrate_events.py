"""Count the scheduler events one `calibrate` simulates (issue 24, defect 11: CALIBRATE_EVENTS).

    python benchmarks/calibrate_events.py vllm|sglang [jobs]

Runs the slow sweep of tests/calibration/test_calibrate_command.py with an unlimited work budget
and prints the events the fit and the leave-one-out refits drew from it, with the CPU seconds
(this process and its workers) of each stage."""

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


def main() -> None:
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
