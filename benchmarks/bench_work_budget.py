"""The run-wide work budget of the load simulation (issue 24), measured.

    python benchmarks/bench_work_budget.py            # this checkout
    PYTHONPATH=/tmp/before python benchmarks/bench_work_budget.py   # another tree

Two repositories, each checked by the CLI in a child process (wall seconds,
peak RSS from wait4, exit code, BL309 findings):

* ``ordinary``: 200 budgets with distinct traffic (llama-3.1-8b on an H100,
  1,000-token prompts, 200-token replies, rates 1.00, 1.01, ... request/s);
* ``crafted``: ten budgets with ``max_num_batched_tokens: 8`` and 2,000-token
  prompts at rates 5.000, 5.001, ... request/s (the issue's stall: 219 s).

Targets (issue 24): ordinary under 60 s, crafted under 30 s, with BL309
naming what was not simulated. CPU seconds are printed beside the wall time:
on a shared machine (load 8 on 2 cores) the wall time is several times the
CPU time, which is what the run's work budget bounds. Not a test: it takes minutes on the old code.
Run from outside the checkout (cd /tmp) so PYTHONPATH decides which tree runs.
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = "version: 1\nkind: budgets\nbudgets:\n"
ONE = """  - name: {name}
    owner: "@acme/chat"
    percentile: p95
    workload: {{prompt_tokens: {prompt}, output_tokens: 200, arrival_rate: {rate} request/s}}
    promise: {{ttft: 1 s, tpot: 60 ms}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm{extra}}}
"""
TIME_S = float(os.environ.get("WORK_TIME_S", "600"))


def ordinary(d: Path) -> None:
    (d / "b.yaml").write_text(HEAD + "".join(
        ONE.format(name=f"b{i}", prompt=1000, rate=f"{1 + 0.01 * i:.2f}", extra="") for i in range(200)))


def crafted(d: Path) -> None:
    (d / "b.yaml").write_text(HEAD + "".join(
        ONE.format(name=f"c{i}", prompt=2000, rate=f"{5 + 0.001 * i:.3f}", extra=", max_num_batched_tokens: 8")
        for i in range(10)))


def measure(make, jobs: str) -> str:
    d = Path(tempfile.mkdtemp())
    make(d)
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([sys.executable, "-m", "budgetlint", "check", "b.yaml", "--jobs", jobs],
                            cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=TIME_S)
        code = str(proc.returncode)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        code = f"killed at {TIME_S:.0f} s"
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    bl309 = out.count("BL309")
    spent = out.count("work budget")
    if "internal error" in err:
        code += " (" + err.strip().splitlines()[0][:60] + ")"
    return (f"| {make.__name__} | --jobs {jobs} | exit {code} | {seconds:.1f} s | {cpu:.1f} s | {peak:.0f} MiB | "
            f"BL309 x{bl309} ({spent} work budget) |")


if __name__ == "__main__":
    print("| repository | jobs | exit | wall | CPU (all processes) | peak RSS (max so far) | BL309 |")
    print("|---|---|---|---|---|---|---|")
    for make in (crafted, ordinary):
        for jobs in sys.argv[1:] or ["1"]:
            print(measure(make, jobs), flush=True)
