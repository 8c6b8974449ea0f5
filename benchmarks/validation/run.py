"""Predicted / measured on the public validation set (issue 25), uncalibrated.

Runs ``budgetlint check`` on this folder's budgets (each an MLPerf Inference run written
as a budget with its traffic: README.md gives the mapping, once) with the interpreter
that runs this script, reads the measured p50/p90/p99 TTFT and TPOT from each run's
LoadGen summary (``../shared/fixtures/bench/mlperf``, or ``$BUDGETLINT_MLPERF``), and
prints predicted / measured for each. Exits 1 when issue 25's targets are missed:

* p99 TTFT and p99 TPOT ratios: median within [0.67, 1.5], every run within [0.33, 3];
* no VALID run's own constraint at its own QPS judged at risk or cannot be met.

    python benchmarks/validation/run.py                        # this checkout
    /work/main/.venv/bin/python benchmarks/validation/run.py   # another checkout's code

MLPerf's TPOT excludes the first token (N - 1); budgetlint's is over all N tokens: the
measured TPOT is converted with the run's mean reply (physics.latency.tpot_from_vllm's rule).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MLPERF = Path(os.environ.get("BUDGETLINT_MLPERF", REPO.parent / "shared" / "fixtures" / "bench" / "mlperf"))
MEDIAN_BAND = (0.67, 1.5)
RUN_BAND = (0.33, 3.0)


def summary(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$", line)
        if m:
            out.setdefault(m.group(1), m.group(2))
    return out


def measured(path: Path) -> dict[str, dict[str, float]]:
    s = summary(path)
    n = float(s["Completed tokens per second"]) / float(s["Completed samples per second"])
    out: dict[str, dict[str, float]] = {"ttft_s": {}, "tpot_s": {}}
    for p in ("50", "90", "99"):
        out["ttft_s"][f"p{p}"] = float(s[f"{p}.00 percentile first token latency (ns)"]) * 1e-9
        out["tpot_s"][f"p{p}"] = float(s[f"{p}.00 percentile time to output token (ns)"]) * 1e-9 * (n - 1) / n
    return out


def main() -> int:
    budgets = sorted(HERE.glob("mlperf-*.yaml"))
    if not MLPERF.is_dir():
        print(f"{MLPERF} absent: set BUDGETLINT_MLPERF to the folder of the LoadGen summaries", file=sys.stderr)
        return 2
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(HERE), "--format", "json", "--quiet"],
                          capture_output=True, text=True, cwd=HERE)  # not REPO: -m puts the cwd first on sys.path
    report = json.loads(proc.stdout)
    by_name = {b["name"]: b for b in report["budgets"]}
    ratios: dict[str, list[float]] = {"ttft_s": [], "tpot_s": []}
    failures: list[str] = []
    print(f"{'run':<44} {'metric':<5} {'p50':>16} {'p90':>16} {'p99':>16}  load verdicts")
    for path in budgets:
        text = path.read_text()
        src = re.search(r"^# measured: \.\./shared/fixtures/bench/mlperf/(\S+)", text, re.M)
        assert src, f"{path.name}: no '# measured:' line"
        meas = measured(MLPERF / src.group(1))
        b = by_name[path.stem]
        load = b.get("load", {})
        pred = load.get("predicted", {})
        verdicts = load.get("verdicts", {})
        for metric in ("ttft_s", "tpot_s"):
            cells = []
            for p in ("p50", "p90", "p99"):
                got = pred.get(metric, {}).get(p)
                want = meas[metric][p]
                r = got / want if got else float("nan")
                cells.append(f"{got * 1e3 if got else float('nan'):6.0f}/{want * 1e3:<5.0f} {r:4.2f}")
                if p == "p99":
                    ratios[metric].append(r)
            tail = ", ".join(f"{k} {v}" for k, v in verdicts.items()) if metric == "ttft_s" else ""
            print(f"{path.stem:<44} {metric[:4]:<5} {' '.join(f'{c:>16}' for c in cells)}  {tail}")
        for name, v in verdicts.items():
            if v in ("at-risk", "cannot-be-met"):
                failures.append(f"{path.stem}: its own {name} constraint judged {v} at its own QPS (a VALID run)")
        for name, v in b.get("verdicts", {}).items():
            if v == "cannot-be-met":
                failures.append(f"{path.stem}: {name} judged cannot-be-met by the flat bound")
    print("(ms predicted/measured and their ratio; TPOT over all N tokens)")
    for metric, rs in ratios.items():
        med = statistics.median(rs)
        print(f"p99 {metric[:4]}: median ratio {med:.2f} (target {MEDIAN_BAND[0]}-{MEDIAN_BAND[1]}), "
              f"range {min(rs):.2f}-{max(rs):.2f} (target {RUN_BAND[0]}-{RUN_BAND[1]})")
        if not MEDIAN_BAND[0] <= med <= MEDIAN_BAND[1]:
            failures.append(f"p99 {metric}: median ratio {med:.2f} outside {MEDIAN_BAND}")
        bad = [r for r in rs if not RUN_BAND[0] <= r <= RUN_BAND[1]]
        if bad:
            failures.append(f"p99 {metric}: {len(bad)} run(s) outside {RUN_BAND}: {', '.join(f'{r:.2f}' for r in bad)}")
    for f in failures:
        print("MISSED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
