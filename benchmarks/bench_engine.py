"""The engine's cost per budget: physics only (floats inside), vs the whole pipeline.

    .venv/bin/python benchmarks/bench_engine.py [--files 100]

Builds the synthetic monorepo of bench_speed.py (10 budgets per file), then
times, in-process and after a warm-up:

* ``roofline.evaluate(budget, options)`` for every budget: the physics at
  the pure roofline and at the realistic efficiency, plus the verdicts
  (plain floats; pint is not imported at all when the quantities take the
  fast path, and never inside the engine);
* ``levers.levers_for`` for the budgets that cannot be met or are at risk;
* the whole pipeline, ``run_check`` + the JSON report.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_speed import generate  # noqa: E402

from budgetlint.evaluate.levers import levers_for  # noqa: E402
from budgetlint.evaluate.roofline import evaluate  # noqa: E402
from budgetlint.reporters import render  # noqa: E402
from budgetlint.run.check import Options, evaluate_run, run_check  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        generate(root, args.files)
        options = Options(use_codeowners=False)
        run_check(["budgets/"] if Path("budgets").is_dir() else [str(root)], options)  # warm imports
        result = evaluate_run([str(root)], options, keep=True)
        budgets = [ev.budget for ev in result.evaluations if ev.budget.deployment is not None]
        best_eval = best_levers = best_total = float("inf")
        failing = 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            for b in budgets:
                evaluate(b, options.assumptions())
            best_eval = min(best_eval, time.perf_counter() - start)

            evs = [ev.roofline for ev in result.evaluations]
            bad = [ev for ev in evs if any(v.verdict in ("cannot-be-met", "at-risk") for v in ev.verdicts.values())]
            failing = len(bad)
            start = time.perf_counter()
            for ev in bad:
                levers_for(result.catalog, ev)
            best_levers = min(best_levers, time.perf_counter() - start)

            start = time.perf_counter()
            report = run_check([str(root)], options)
            render("json", report)
            best_total = min(best_total, time.perf_counter() - start)
        n = len(budgets)
        print(f"{n:,} budgets ({args.files:,} files), best of {args.repeat}; "
              f"pint imported: {'pint' in sys.modules}")
        print(f"  roofline.evaluate        {best_eval / n * 1e6:8.1f} us/budget  ({best_eval:.3f} s)")
        if failing:
            print(f"  levers.levers_for        {best_levers / failing * 1e6:8.1f} us per failing budget "
                  f"({failing:,} of {n:,} fail or are at risk)")
        print(f"  whole pipeline (run_check + JSON) {best_total / n * 1e6:8.1f} us/budget  ({best_total:.3f} s)")
        print(f"  engine share of the pipeline: {best_eval / best_total:.0%}")


if __name__ == "__main__":
    main()
