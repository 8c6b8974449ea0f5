"""The html format's cost on a synthetic monorepo (benchmarks/bench_speed.py's
generator): wall time and peak RSS of `budgetlint check --format html` against
`--format json`, and the page's size.

    .venv/bin/python benchmarks/bench_html.py [--files 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_speed import BUDGETLINT_PY, PEAK_WRAPPER, generate  # noqa: E402


def run(fmt: str, root: Path, out: Path) -> tuple[float, float]:
    peak = out.with_suffix(".peak")
    cmd = [str(BUDGETLINT_PY), "-c", PEAK_WRAPPER, str(peak), "budgetlint.cli:main", "check", str(root),
           "--format", fmt, "--output", str(out), "--no-summary", "--no-codeowners"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    kib = float(peak.read_text().split()[1])
    return wall, kib / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000, help="budget files of 10 budgets each")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        budgets = generate(root, args.files)
        print(f"{budgets} budgets in {args.files} files")
        for fmt in ("json", "html"):
            out = Path(tmp) / f"report.{fmt}"
            wall, mib = run(fmt, root, out)
            print(f"{fmt:5} {wall:6.2f} s  peak {mib:6.0f} MiB  output {out.stat().st_size / 1e6:6.1f} MB")


if __name__ == "__main__":
    main()
