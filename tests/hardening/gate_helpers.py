"""A bounded child run of the CLI for the gate tests (issue 15).

``bounded(args, cwd)`` runs ``python -m budgetlint ARGS`` in a child with a
wall-clock limit and an address-space limit (RLIMIT_AS), and reports its
exit code, output, wall time and peak resident memory (VmHWM, read at exit).
A hang is a failed test, never a stuck suite.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

#: each hostile case finishes within this (seconds of the child's CPU, user + system: a busy
#: machine cannot fail a case that does its work in time; the wall time only catches a hang) ...
TIME_LIMIT_S = 10.0
#: ... and under this peak resident memory (MiB; a normal run is ~40)
MEMORY_LIMIT_MIB = 200.0
#: the child's address space is capped too, so a blow-up fails fast (bytes)
ADDRESS_SPACE = 2 * 1024**3

_WRAPPER = (
    "import atexit, sys\n"
    "def _peak(path=sys.argv[1]):\n"
    "    try:\n"
    "        line = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
    "        open(path, 'w').write(line)\n"
    "    except (OSError, StopIteration):\n"
    "        pass\n"
    "atexit.register(_peak)\n"
    "sys.argv = ['budgetlint'] + sys.argv[2:]\n"
    "from budgetlint.cli import main\n"
    "main()\n"
)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float  # the child's CPU time (user + system)
    peak_mib: float


def _limit() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def bounded(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = TIME_LIMIT_S * 30) -> Run:
    hwm = Path(tempfile.mkdtemp()) / "hwm"
    full_env = {**os.environ, "BUDGETLINT_TRACEBACK": "", "NO_COLOR": "1", "GITHUB_STEP_SUMMARY": ""}
    full_env.pop("FORCE_COLOR", None)
    full_env.update(env or {})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run([sys.executable, "-c", _WRAPPER, str(hwm), *args], cwd=cwd, env=full_env,
                              capture_output=True, text=True, timeout=timeout, preexec_fn=_limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"budgetlint {' '.join(args)} hung (killed after {timeout:.0f} s)")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = float(hwm.read_text().split()[1]) / 1024 if hwm.exists() else 0.0
    return Run(proc.returncode, proc.stdout, proc.stderr, seconds, peak)


def assert_gate(run: Run, *, codes: tuple[int, ...] = (1,), names: str | None = None, rule: str | None = None) -> None:
    """Exit 0, 1 or 2 as expected, no internal error, in time and memory, and
    (``names``) a finding or message that names the file."""
    assert run.returncode in codes, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert run.seconds < TIME_LIMIT_S, f"took {run.seconds:.1f} s of CPU"
    assert run.peak_mib < MEMORY_LIMIT_MIB, f"peak RSS {run.peak_mib:.0f} MiB"
    if names is not None:
        assert names in run.stdout + run.stderr, (run.stdout, run.stderr)
    if rule is not None:
        assert rule in run.stdout, run.stdout
