"""What the load simulation adds to `check`: CPU with and without it, side by side (issue 28).

    .venv/bin/python benchmarks/bench_check_cost.py            # 20 budgets, CPU both ways
    .venv/bin/python benchmarks/bench_check_cost.py --budgets 1000 --wall
    .venv/bin/python benchmarks/bench_check_cost.py --shipped  # budgets/ (the shipped ones)
    .venv/bin/python benchmarks/bench_check_cost.py --cache    # also a warm run: the simulation cache

Every run is cold (``--no-cache``: each simulates what it checks) unless ``--cache``: then each
simulated check first fills a fresh cache folder of its own and the warm check after it, reading
that folder (evaluate/load_disk.py), is timed and printed beside the cold one.

Writes N budgets (one file each) into a temporary directory, each declaring
its own traffic: arrival rate, prompt and output lengths (fixed or
lognormal) and the model vary, drawn from a seeded generator over models of
the shipped catalog that fit one or a few devices. Then runs, in child
processes and alternating, ``python -m budgetlint check DIR`` and
``check --no-simulate DIR`` ``--repeat`` times and prints the child's CPU
seconds (user + sys, from ``os.wait4``) and wall seconds, the medians and the
ratio of the medians. A report, not a timed test (the machine is shared:
the load average is printed alongside).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (model, hardware, devices, weight precision): deployments of the shipped catalog
DEPLOYMENTS = [
    ("llama-3.1-8b", "h100-sxm", 1, "bf16"),
    ("llama-3.1-8b", "l40s", 1, "fp8"),
    ("qwen2.5-7b", "h100-sxm", 1, "fp8"),
    ("mistral-7b-v0.3", "a100-80gb", 1, "bf16"),
    ("qwen3-8b", "h200-sxm", 1, "bf16"),
    ("llama-3.1-70b", "h100-sxm", 4, "fp8"),
    ("qwen2.5-32b", "h100-sxm", 2, "bf16"),
    ("mixtral-8x7b", "h100-sxm", 2, "bf16"),
    ("gemma-2-9b", "h100-sxm", 1, "bf16"),
    ("llama-3.2-3b", "l4", 1, "bf16"),
]


def budget_yaml(i: int, rng: random.Random) -> str:
    model, hw, devices, wp = rng.choice(DEPLOYMENTS)
    prompt = rng.choice([200, 500, 1000, 1500, 3000])
    output = rng.choice([64, 150, 300, 600])
    if rng.random() < 0.5:
        p = f"{{lognormal: {{mean: {prompt}, p95: {prompt * 3}}}}}"
        o = f"{{lognormal: {{mean: {output}, p95: {output * 3}}}}}"
    else:
        p, o = str(prompt), str(output)
    rate = round(rng.uniform(0.2, 6.0), 3)
    pct = rng.choice(["p50", "p90", "p95", "p99"])
    ttft = rng.choice(["300 ms", "800 ms", "2 s"])
    tpot = rng.choice(["30 ms", "50 ms", "80 ms"])
    return f"""version: 1
kind: budgets
budgets:
  - name: svc-{i}
    owner: "@acme/team{i % 7}"
    percentile: {pct}
    workload:
      prompt_tokens: {p}
      output_tokens: {o}
      arrival_rate: {rate} request/s
    promise:
      ttft: {ttft}
      tpot: {tpot}
    deployment: {{model: {model}, hardware: {hw}, devices: {devices}, weight_precision: {wp}}}
"""


def write_budgets(directory: Path, n: int, seed: int = 28) -> None:
    rng = random.Random(seed)
    for i in range(n):
        (directory / f"svc-{i:04d}.yaml").write_text(budget_yaml(i, rng))


BL309 = 0  # budgets the last simulated check did not simulate (BL309: the work budget, ...)


def child(args: list[str]) -> tuple[float, float, int]:
    """(CPU seconds user+sys, wall seconds, exit status) of one child process."""
    global BL309
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen([sys.executable, "-m", "budgetlint", *args], cwd=ROOT, stdout=out, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        errf.seek(0)
        text, err = out.read().decode(), errf.read().decode()
    if "--no-simulate" not in args:
        BL309 = text.count("BL309")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.exit(f"check ended {proc.returncode}: {err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode


def compile_sources() -> None:
    """Write the package's bytecode first, as an installed package has it: without it (a fresh
    checkout run with PYTHONDONTWRITEBYTECODE=1, as this machine's sessions are) every child
    compiles every module it imports, ~0.3 s of CPU per process that is neither the check nor
    the simulation (issue 28: the 145 ``builtins.compile`` calls of a profiled check)."""
    import compileall

    compileall.compile_dir(str(ROOT / "budgetlint"), quiet=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budgets", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shipped", action="store_true", help="check budgets/ instead of generated budgets")
    ap.add_argument("--wall", action="store_true", help="the simulated check only (for the 1,000-budget run)")
    ap.add_argument("--jobs", type=int, default=0, help="pass --jobs N to check")
    ap.add_argument("--cache", action="store_true",
                    help="also time a warm check (the simulation cache filled by the cold one)")
    args = ap.parse_args()
    compile_sources()
    with tempfile.TemporaryDirectory() as tmp:
        if args.shipped:
            target = str(ROOT / "budgets")
            label = "budgets/ (shipped)"
        else:
            write_budgets(Path(tmp), args.budgets)
            target = tmp
            label = f"{args.budgets} budgets, distinct traffic"
        extra = ["--jobs", str(args.jobs)] if args.jobs else []
        sim: list[tuple[float, float, int]] = []
        flat: list[tuple[float, float, int]] = []
        warm: list[tuple[float, float, int]] = []
        for i in range(args.repeat):
            sim.append(child(["check", *extra, "--no-cache", target]))
            if args.cache:
                folder = str(Path(tmp) / f"cache-{i}")
                child(["check", *extra, "--cache-dir", folder, target])  # fills it (a cold run, not timed)
                warm.append(child(["check", *extra, "--cache-dir", folder, target]))
            if not args.wall:
                flat.append(child(["check", *extra, "--no-simulate", target]))
        print(f"{label}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; python {sys.version.split()[0]}")
        cs, ws = statistics.median(c for c, _, _ in sim), statistics.median(w for _, w, _ in sim)
        print(f"  check              CPU {cs:7.2f} s  wall {ws:7.2f} s  (CPU runs: "
              f"{', '.join(f'{c:.2f}' for c, _, _ in sim)}; exit {sim[0][2]}; BL309 findings {BL309})")
        if flat:
            cf, wf = statistics.median(c for c, _, _ in flat), statistics.median(w for _, w, _ in flat)
            print(f"  check --no-simulate CPU {cf:6.2f} s  wall {wf:7.2f} s  (CPU runs: "
                  f"{', '.join(f'{c:.2f}' for c, _, _ in flat)}; exit {flat[0][2]})")
            print(f"  ratio (CPU, medians) {cs / cf:.2f}x; simulation's share {cs - cf:.2f} s "
                  f"= {(cs - cf) / max(args.budgets, 1) * 1e3:.0f} ms per budget")
        if warm:
            cw, ww = statistics.median(c for c, _, _ in warm), statistics.median(w for _, w, _ in warm)
            print(f"  check, warm cache  CPU {cw:7.2f} s  wall {ww:7.2f} s  (CPU runs: "
                  f"{', '.join(f'{c:.2f}' for c, _, _ in warm)}; exit {warm[0][2]})"
                  + (f"; {cw / cf:.2f}x --no-simulate" if flat else ""))


if __name__ == "__main__":
    main()
