"""What one load simulation costs, and a capacity search: a report, not a timed test.

    .venv/bin/python benchmarks/bench_simulate.py [--repeat 3]

Cases (8B model on one H100 at 70 % / 50 % efficiency, the roofline
iteration cost; and a one-slot M/D/1 queue with a stated law):

* an open-loop chat service at low, medium and high load (2,000 requests);
* a closed loop of 64 users; a KV cache small enough to preempt;
* the M/D/1 queue at rho 0.8 (the simplest path: 2 iterations per request);
* a capacity search (bisection, at most 10 simulations of 1,000 requests);
* `budgetlint check` on the shipped budgets (wall, cold process).

Prints the median wall time of each, per simulation and per request, for the event engine
(the default: decode-only stretches advanced to the next event in one closed-form step) and
the iteration engine (every iteration priced on its own: the reference of
tests/physics/test_event_engine.py); then a budget's whole load evaluation in process
(``budgetlint.evaluate.load``: the declared traffic by need, the saturation run, the
capacity search), per budget, from benchmarks/bench_check_cost.py's generated budgets.
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
from budgetlint.physics.load_stats import summarise  # noqa: E402
from budgetlint.physics.serving_sim import run  # noqa: E402
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


def _with_engine(fn, engine: str):  # type: ignore[no-untyped-def]
    """``fn`` with every simulation it runs on ``engine``."""
    import budgetlint.physics.capacity as capacity_mod
    import budgetlint.physics.serving_sim as sim_mod

    def wrapped() -> None:
        real = sim_mod.run
        patched = lambda *a, **kw: real(*a, **{**kw, "engine": engine})  # noqa: E731
        capacity_mod.run = sim_mod.run = patched
        try:
            fn()
        finally:
            capacity_mod.run = sim_mod.run = real
    return wrapped


def per_budget(n: int, engine: str) -> None:
    """The load evaluation of ``n`` generated budgets in this process: CPU per budget."""
    import tempfile

    from bench_check_cost import write_budgets  # type: ignore[import-not-found]
    from budgetlint.evaluate import analysis_cache
    from budgetlint.options import Options
    from budgetlint.run.check import run_check

    with tempfile.TemporaryDirectory() as tmp:
        write_budgets(Path(tmp), n)
        cost = {}
        for simulate_ in (False, True):
            analysis_cache._ANALYSES.clear()
            t0 = time.process_time()
            _with_engine(lambda: run_check([tmp], Options(jobs=1, simulate=simulate_)), engine)()
            cost[simulate_] = time.process_time() - t0
        print(f"{engine + ' engine':17} {n:4} budgets: check {cost[True]:6.2f} s CPU, --no-simulate "
              f"{cost[False]:5.2f} s; the simulation {(cost[True] - cost[False]) / n * 1e3:6.1f} ms per budget")


def replay(n: int, repeat: int) -> None:
    """The engine alone (issue 28): the streams a check of ``n`` generated budgets starts (the declared
    traffic's, read as far as the check read it, and every capacity step), captured in this process and
    replayed ``repeat`` times; the best replay's CPU, per stream and per request simulated. A set of
    simulations that stays the same from commit to commit while the engine changes (the check's own
    figure also moves with the search's path)."""
    import tempfile

    import budgetlint.physics.serving_sim as sim_mod
    from bench_check_cost import write_budgets  # type: ignore[import-not-found]
    from budgetlint.evaluate import analysis_cache
    from budgetlint.options import Options
    from budgetlint.run.check import run_check

    real = sim_mod._stream
    calls: list = []

    def capture(*a, **kw):  # type: ignore[no-untyped-def]
        entry = [a, {k: v for k, v in kw.items() if k != "allowance"}, 0]
        calls.append(entry)
        for x in real(*a, **kw):
            entry[2] += 1
            yield x

    with tempfile.TemporaryDirectory() as tmp:
        write_budgets(Path(tmp), n)
        analysis_cache._ANALYSES.clear()
        sim_mod._stream = sim_mod.stream = capture
        try:
            run_check([tmp], Options(jobs=1, simulate=True))
        finally:
            sim_mod._stream = sim_mod.stream = real
    best, requests = float("inf"), 0
    for _ in range(repeat):
        t0 = time.process_time()
        requests = 0
        for a, kw, reads in calls:
            stream = real(*a, **kw)
            for _ in range(reads):
                _, raw = next(stream)
            requests += len(raw.records)
        best = min(best, time.process_time() - t0)
    print(f"{'replay of the streams of ' + str(n) + ' budgets':40} {best:7.3f} s CPU ({len(calls)} streams, "
          f"{requests:,} measured requests: {best / len(calls) * 1e3:.1f} ms a stream, {best / requests * 1e6:.1f} us a "
          "measured request)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budgets", type=int, default=20, help="generated budgets for the per-budget figure")
    ap.add_argument("--replay", action="store_true", help="only the engine: replay the streams of --budgets budgets")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.replay:
        replay(args.budgets, args.repeat)
        return
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
    print(f"{'case':40} {'event engine':>12} {'per request':>12} {'iteration engine':>17} {'per request':>12}")
    for name, fn, n in cases:
        t = timed(fn, args.repeat)
        engine_fn = _with_engine(fn, "iteration")
        ti = timed(engine_fn, 1)
        print(f"{name:40} {t * 1e3:9.1f} ms {t / n * 1e6:9.1f} us {ti * 1e3:14.1f} ms {ti / n * 1e6:9.1f} us")
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
    if args.budgets:
        per_budget(args.budgets, "event")
        per_budget(max(1, args.budgets // 10), "iteration")


if __name__ == "__main__":
    main()
