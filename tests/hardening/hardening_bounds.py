"""Run ``budgetlint`` in a child process bounded in time and memory.

The hostile-input tests of issues 15 and 18 hold every case to the same
contract: the CLI ends on its own within ``TIME_LIMIT_S`` seconds of CPU, with an
address space capped at ``MEMORY_LIMIT_MIB`` (``RLIMIT_AS`` set in the child
before exec, so a blow-up is a MemoryError there, never the test machine's
problem), with exit code 0, 1 or 2, no traceback, and output naming the file.

The time bound is CPU time (``RLIMIT_CPU``: the kernel stops the child at the
limit), not wall time, so a busy machine (a CI runner, a parallel test run, a
laptop compiling) cannot fail a case that does its work in time: a 10 s wall
limit killed a 3 s case at load average 8. ``HANG_LIMIT_S`` of wall time only
catches a child that waits without computing.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TIME_LIMIT_S = 10.0
MEMORY_LIMIT_MIB = 200
#: wall seconds after which a child that is not using its CPU time (blocked, sleeping) is killed
HANG_LIMIT_S = 300.0

#: runs the CLI (argv[2:]) and, at exit, writes its peak RSS line (VmHWM) to argv[1]
_WRAPPER = (
    "import atexit, sys\n"
    "def _peak(path=sys.argv[1]):\n"
    "    try:\n"
    "        line = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
    "    except OSError:\n"
    "        return\n"
    "    open(path, 'w').write(line)\n"
    "atexit.register(_peak)\n"
    "sys.argv = ['budgetlint'] + sys.argv[2:]\n"
    "from budgetlint.cli import main\n"
    "main()\n"
)


def _limit_memory() -> None:  # runs in the child between fork and exec
    limit = MEMORY_LIMIT_MIB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    cpu = int(TIME_LIMIT_S)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU at the soft limit, SIGKILL at the hard


@dataclass
class Bounded:
    returncode: int | None  # None: stopped at the CPU time limit (or hung past HANG_LIMIT_S)
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float | None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_bounded(*args: str, cwd: Path, stdin: object = subprocess.DEVNULL,
                env: dict[str, str] | None = None) -> Bounded:
    """``budgetlint ARGS`` (the whole command line, e.g. ``check x.yaml``) under the bounds."""
    hwm = Path(tempfile.mkdtemp()) / "hwm"
    environ = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    environ.update({"BUDGETLINT_TRACEBACK": "", "NO_COLOR": "1", **(env or {})})
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", _WRAPPER, str(hwm), *args], cwd=cwd,
                              capture_output=True, text=True, errors="replace", stdin=stdin,
                              env=environ, timeout=HANG_LIMIT_S, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        err = exc.stderr or b""
        return _logged(Bounded(None, out.decode(errors="replace") if isinstance(out, bytes) else out,
                       err.decode(errors="replace") if isinstance(err, bytes) else err,
                       time.perf_counter() - start, None))
    seconds = time.perf_counter() - start
    peak = float(hwm.read_text().split()[1]) / 1024 if hwm.exists() else None
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):  # the CPU limit stopped it
        return _logged(Bounded(None, proc.stdout, proc.stderr, seconds, peak))
    return _logged(Bounded(proc.returncode, proc.stdout, proc.stderr, seconds, peak))


def _logged(run: Bounded) -> Bounded:
    """With HOSTILE_CASES=FILE, append the running test's id (to count the bounded hostile cases)."""
    target = os.environ.get("HOSTILE_CASES")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0] + "\n")
    return run


def assert_bounded(run: Bounded, *, names: str, codes: tuple[int, ...] = (0, 1, 2),
                   rule: str | None = None, line: int | None = None) -> None:
    """The contract: ended in time, allowed exit code, no traceback, a finding naming the file."""
    assert run.returncode is not None, (f"stopped at {TIME_LIMIT_S:.0f} s of CPU (or hung {HANG_LIMIT_S:.0f} s):\n"
                                        f"{run.output[-2000:]}")
    assert run.returncode in codes, (run.returncode, run.output[-3000:])
    assert "Traceback" not in run.stderr and "internal error" not in run.output, run.stderr[-3000:]
    assert "MemoryError" not in run.output, run.output[-2000:]
    assert names in run.output, run.output[-3000:]
    if rule is not None:
        assert rule in run.output, run.output[-3000:]
    if line is not None:
        assert f"{names}:{line}" in run.output, run.output[-3000:]


#: a vLLM benchmark_serving result, small and valid (the hardening tests bend it)
VLLM_RUN = {"date": "20250101-000000", "backend": "vllm", "model_id": "m", "num_prompts": 3, "request_rate": 4.0,
            "duration": 2.0, "completed": 3, "total_input_tokens": 30, "total_output_tokens": 12,
            "output_throughput": 6.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "p99_ttft_ms": 150.0}

#: one budget whose ``bench:`` list is ``{bench}`` (``.format(bench=...)``)
BUDGET_WITH_BENCH = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    promise: {{ttft: 1 s}}
    bench: [{bench}]
"""
