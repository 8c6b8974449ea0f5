"""Whether a change left the simulation's results alone (issue 28): ``check -f json`` byte for byte.

    .venv/bin/python benchmarks/same_outputs.py save DIR   # before the change: the reports into DIR
    .venv/bin/python benchmarks/same_outputs.py cmp DIR    # after it: each report against DIR's

Checks the 20 budgets of benchmarks/bench_check_cost.py (seed 28), 40 more (seed 7) and the shipped
``budgets/``, each with ``--jobs 1`` and with two workers. The generated budgets are below the size at
which a check forks (``run.check.MIN_PARALLEL_CHARS``), so a plain ``--jobs 2`` would run them in one
process too: the two-worker runs lower that threshold in their child process, so the workers really
run (and share through ``evaluate.load_share``). Exit 1 when a report differs. A tool, not a test.
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: a check with two workers forced (the child's own threshold lowered)
FORKED = ("import sys; import budgetlint.run.check as c; c.MIN_PARALLEL_CHARS = 0; from budgetlint.cli import main; "
          "sys.argv = ['budgetlint', 'check', '-f', 'json', '--jobs', '2', sys.argv[1]]; main()")


def reports(into: Path) -> list[str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_check_cost import write_budgets  # type: ignore[import-not-found]

    into.mkdir(parents=True, exist_ok=True)
    names = []
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {"b20": Path(tmp) / "b20", "b40": Path(tmp) / "b40", "shipped": ROOT / "budgets"}
        dirs["b20"].mkdir()
        dirs["b40"].mkdir()
        write_budgets(dirs["b20"], 20)
        write_budgets(dirs["b40"], 40, seed=7)
        for name, d in dirs.items():
            for jobs, cmd in (("1", ["-m", "budgetlint", "check", "-f", "json", "--jobs", "1", str(d)]),
                              ("2", ["-c", FORKED, str(d)])):
                out = subprocess.run([sys.executable, *cmd], cwd=ROOT, capture_output=True, check=False)
                if out.returncode not in (0, 1):
                    sys.exit(f"check of {name} (--jobs {jobs}) ended {out.returncode}: {out.stderr.decode()[-2000:]}")
                # the generated budgets sit in a temporary folder: its name left out of the report
                (into / f"{name}-j{jobs}.json").write_bytes(out.stdout.replace(tmp.encode(), b"TMP"))
                names.append(f"{name}-j{jobs}.json")
    return names


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "cmp"):
        sys.exit(__doc__)
    mode, where = sys.argv[1], Path(sys.argv[2])
    if mode == "save":
        for name in reports(where):
            print(f"saved {where / name}")
        return
    with tempfile.TemporaryDirectory() as now:
        differ = [n for n in reports(Path(now)) if (Path(now) / n).read_bytes() != (where / n).read_bytes()]
        for n in sorted(p.name for p in Path(now).iterdir()):
            print(f"{n}: {'DIFFERENT' if n in differ else 'same'}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
