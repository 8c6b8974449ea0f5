"""Where the simulated TTFT of each MLPerf run of the validation set goes (issue 25, ttft25).

For every MLPerf budget this simulates the declared traffic with exactly the step cost, traffic and
scheduler the load simulation receives (read from ``budgetlint check`` on this folder, as
step_at_real_batch.py reads them), long enough for a steady state (``--n``, 40,000 requests after a
warm-up of a quarter), and splits each request's TTFT into its **queue** wait (arrival to first
scheduled) and the **rest** (first scheduled to its first token: the iteration(s) of its prefill).
Beside it, both TTFTs in **steps** (each over its own p50 TPOT, one decode token an iteration): a
simulation whose operating point is wrong (a short step at a small batch) can still have the
scheduler's shape right, and the ratio in steps says which.

What-ifs (diagnostics, never defaults: each changes what the simulator is given, not budgetlint):

* ``--compute=F``: the compute fraction times F (the per-token cost at large batch);
* ``--line=A,B``: replace the step by the line ``t = A + B x tokens`` (seconds, seconds a token;
  ``LinearStepCost``), e.g. the Dell XE9680 Server/Interactive pair's 0.01484,0.000124 (docs/load.md);
* ``--kv=TOKENS``: the KV cache of every replica;
* ``--balancer=least_loaded``: NVIDIA's Server harness sends each query to the core with the fewest
  pending samples (closed/NVIDIA/code/llmlib/config.py:191, factory.py:188-191);
* ``--steps=K``: vLLM V0 multi-step scheduling, K decode iterations a scheduler call (the AMD budgets
  state their configs' 9 / 8: build.py MLPERF_SCHEDULER_STEPS; ``--steps=1``: without it);
* ``--prompt-p95=X``: the prompts' lognormal p95 at X times their mean (the budgets: 2.5).

    .venv/bin/python benchmarks/validation/ttft_split.py [NAME ...] [--n=40000] [what-ifs]
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import budgets, check_reading_inputs, header, measured  # noqa: E402  (this folder's run.py)


def simulated_inputs() -> dict:
    """budget name -> {"roof", "cost", "traffic", "sched"}: what the load simulation receives."""
    import budgetlint.evaluate.load as load
    import budgetlint.physics.serving_sim as sim

    seen: dict = {}
    original = load._simulate

    class Read(Exception):
        pass

    def spy(b, roof, env, out, calibration=None):  # type: ignore[no-untyped-def]
        seen[b.name] = {"roof": roof}
        stream = sim.stream

        def read(cost, traffic, sched, **kw):  # type: ignore[no-untyped-def]
            seen[b.name].update(cost=cost, traffic=traffic, sched=sched)
            raise Read

        sim.stream = read
        try:
            original(b, roof, env, out, calibration)
        except Read:
            pass
        finally:
            sim.stream = stream
        raise ValueError("ttft_split: inputs read, no simulation")

    check_reading_inputs(spy)
    return seen


def pct(xs: list[float], p: float) -> float:
    """Linear interpolation, as numpy (the simulator's own percentiles)."""
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    f = math.floor(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def option(name: str, default: str | None = None) -> str | None:
    return next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith(f"--{name}=")), default)


def main() -> int:
    import budgetlint.physics.serving_sim as sim
    from budgetlint.physics.step_cost import LinearStepCost, RooflineStepCost
    from budgetlint.physics.traffic import LogNormal

    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(option("n", "40000") or 40000)
    inputs = simulated_inputs()
    print("| run | batch | preemptions a request | TTFT p50 / p90 / p99 ms (measured) | queue p50 / p99 ms "
          "| rest p50 / p99 ms | TPOT p50 / p99 ms (measured) | TTFT p50 / p99 in steps (measured) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in budgets():
        if header(path)["format"] != "mlperf" or (names and not any(x in path.stem for x in names)):
            continue
        got = inputs[path.stem]
        cost, traffic, sched = got["cost"], got["traffic"], got["sched"]
        if option("compute"):
            eff = got["roof"].efficiency
            cost = RooflineStepCost(got["roof"].deployment, replace(eff, compute=eff.compute * float(option("compute"))))
        if option("line"):
            a, b = (float(x) for x in option("line").split(","))
            cost = LinearStepCost(a, b, a, b)
        if option("kv"):
            sched = replace(sched, kv_capacity_tokens=float(option("kv")))
        if option("balancer"):
            sched = replace(sched, load_balancer=option("balancer"))
        if option("steps"):
            sched = replace(sched, scheduler_steps=int(option("steps")))
        if option("prompt-p95") and isinstance(traffic.prompt, LogNormal):
            p = traffic.prompt
            traffic = replace(traffic, prompt=LogNormal(p.mean_tokens, p.mean_tokens * float(option("prompt-p95")),
                                                        p.minimum, p.maximum))
        raw = sim.run(cost, traffic, sched, requests=n, warmup=n // 4)
        rs = [r for r in raw.records if not r.rejected]
        ttft = [r.ttft_s for r in rs]
        queue = [r.queue_s for r in rs]
        rest = [r.ttft_s - r.queue_s for r in rs]
        tpot = [r.tpot_s for r in rs]
        batch = sum(d * k for d, k in raw.batch_time) / sum(d for d, _ in raw.batch_time)
        m = measured(path)
        mt, mp = m["ttft_s"], m["tpot_s"]
        step = pct(tpot, 0.5)
        ms = lambda x: f"{x * 1e3:.0f}"  # noqa: E731
        print(f"| {path.stem} | {batch:.0f} | {sum(r.preemptions for r in rs) / len(rs):.3f} "
              f"| {' / '.join(ms(pct(ttft, p)) for p in (0.5, 0.9, 0.99))} "
              f"({' / '.join(ms(mt[p]) for p in ('p50', 'p90', 'p99'))}) "
              f"| {ms(pct(queue, 0.5))} / {ms(pct(queue, 0.99))} | {ms(pct(rest, 0.5))} / {ms(pct(rest, 0.99))} "
              f"| {ms(step)} / {ms(pct(tpot, 0.99))} ({ms(mp['p50'])} / {ms(mp['p99'])}) "
              f"| {pct(ttft, 0.5) / step:.2f} / {pct(ttft, 0.99) / step:.2f} "
              f"({mt['p50'] / mp['p50']:.2f} / {mt['p99'] / mp['p50']:.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
