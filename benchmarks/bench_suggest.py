"""Did-you-mean at scale: N unknown owners against T teams (issue 15, point 11).

    .venv/bin/python benchmarks/bench_suggest.py [--owners 5000] [--teams 500]

Writes a teams registry of T handles and budgets whose owners are N handles
that are not in it (one budget owner and five segment owners per budget),
then times `budgetlint check` on them in a child process and reports the
wall time, the peak RSS and how many BL103 findings carry a suggestion.
Before the bounded suggester (budgetlint/model/suggest.py) 5,000 x 500 took
94 s and 20,000 x 2,000 over 600 s.
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write(root: Path, owners: int, teams: int) -> None:
    lines = ["version: 1", "kind: teams", "teams:"]
    lines += [f'  - handle: "@acme/team-{i:05d}-serving"' for i in range(teams)]
    (root / "teams.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    per_budget = 6
    lines = ["version: 1", "kind: budgets", "budgets:"]
    for b in range((owners + per_budget - 1) // per_budget):
        lines += [f"  - name: b{b}", f'    owner: "@acme/owner-{b:05d}-x"', "    percentile: p95",
                  "    workload: {prompt_tokens: 100, output_tokens: 10, concurrency: 1}",
                  "    promise: {e2e: 10 s}", "    segments:"]
        lines += [f'      - {{name: s{s}, kind: queue, allowance: 1 ms, owner: "@acme/seg-{b:05d}-{s}"}}'
                  for s in range(per_budget - 1)]
    (root / "budgets.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--owners", type=int, default=5000)
    ap.add_argument("--teams", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, args.owners, args.teams)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-summary", "--no-codeowners", "."],
                              cwd=root, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    found = proc.stdout.count("BL103")
    hinted = proc.stdout.count("did you mean")
    print(f"{args.owners} unknown owners x {args.teams} teams: {seconds:.2f} s, peak {peak:.0f} MiB, "
          f"exit {proc.returncode}, {found} BL103 findings, {hinted} with a suggestion")


if __name__ == "__main__":
    main()
