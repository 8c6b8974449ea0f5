"""What one load simulation costs, and a capacity search: a report, not a timed test.

    .venv/bin/python benchmarks/bench_simulate.py [--repeat 3]

Cases (8B model on one H100 at 70 % / 50 % efficiency, the roofline
iteration cost; and a one-slot M/D/1 queue with a stated law):

* an open-loop chat service at low, medium and high load (2,000 requests);
* a closed loop of 64 users; a KV cache small enough to preempt;
* the M/D/1 queue at rho 0.8 (the simplest path: 2 iterations per request);
* a capacity search (bisection, at most 10 simulations of 1,000 requests);
* `budgetlint check` on the shipped budgets (wall, cold process).

Prints the median wall time of each, per simulation and per request.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from budgetlint.physics import REALISTIC_EFFICIENCY, Accelerator, Deployment, ModelShape  # noqa: E402
from budgetlint.physics.capacity import capacity, simulate  # noqa: E402
from budgetlint.physics.load_stats import PercentilePromise  # noqa: E402
from budgetlint.physics.serving_sim import Scheduler, Traffic  # noqa: E402
from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost, kv_capacity_tokens  # noqa: E402
from budgetlint.physics.traffic import Fixed, LogNormal  # noqa: E402

MODEL = ModelShape(total_params=8.03e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128)
H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
DEP = Deployment(model=MODEL, accelerator=H100, memory_usable_fraction=0.9)
COST = RooflineStepCost(DEP, REALISTIC_EFFICIENCY)
CAP = kv_capacity_tokens(DEP)
CHAT = dict(prompt=LogNormal(1500, 4000), output=LogNormal(300, 800))
PROMISES = [PercentilePromise("ttft_s", 95, 0.8), PercentilePromise("tpot_s", 95, 0.05)]


def timed(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sched = Scheduler(kv_capacity_tokens=CAP, max_num_seqs=1024, max_num_batched_tokens=8192)
    cases = [
        ("open loop 2 request/s", lambda: simulate(COST, Traffic(arrival_rate_per_s=2.0, **CHAT), sched, PROMISES), 2000),
        ("open loop 6 request/s", lambda: simulate(COST, Traffic(arrival_rate_per_s=6.0, **CHAT), sched, PROMISES), 2000),
        ("open loop 9 request/s", lambda: simulate(COST, Traffic(arrival_rate_per_s=9.0, **CHAT), sched, PROMISES), 2000),
        ("closed loop 64 users", lambda: simulate(COST, Traffic(concurrency=64, **CHAT), sched, PROMISES), 2000),
        ("KV cache 80k tokens, 32 users x 4k", lambda: simulate(
            COST, Traffic(prompt=Fixed(2000), output=Fixed(2000), concurrency=32),
            Scheduler(kv_capacity_tokens=80_000), PROMISES, requests=1000), 1000),
        ("M/D/1 rho 0.8 (one slot)", lambda: simulate(
            LinearStepCost(0.01, prefill_fixed_s=0.05, prefill_per_token_s=0.001),
            Traffic(prompt=Fixed(100), output=Fixed(1), arrival_rate_per_s=0.8 / 0.15),
            Scheduler(max_num_seqs=1)), 2000),
    ]
    print(f"{'case':40} {'wall':>9} {'per request':>12}")
    for name, fn, n in cases:
        t = timed(fn, args.repeat)
        print(f"{name:40} {t * 1e3:7.1f} ms {t / n * 1e6:9.1f} us")
    holder: list = []

    def search() -> None:
        holder.append(capacity(COST, Traffic(arrival_rate_per_s=1.0, **CHAT), sched, PROMISES, requests=1000))

    t = timed(search, args.repeat)
    cap = holder[-1]
    print(f"{'capacity search':40} {t * 1e3:7.1f} ms  ({cap.simulations} simulations, "
          f"{cap.request_per_s:.2f} request/s per replica, saturation {cap.saturation_request_per_s:.2f})")
    exe = ROOT / ".venv" / "bin" / "budgetlint"
    if exe.exists():
        def shipped() -> None:
            subprocess.run([str(exe), "check", str(ROOT / "budgets"), "--no-summary"], capture_output=True,
                           cwd=ROOT, check=False)
        print(f"{'budgetlint check budgets/ (cold process)':40} {timed(shipped, args.repeat) * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
