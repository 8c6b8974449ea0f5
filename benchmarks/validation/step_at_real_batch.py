"""budgetlint's iteration cost held at the operating point each MLPerf run of the validation set
really had, against the run's measured iteration time (issue 25, acc25).

The simulated Server runs hold about half the real decoding batch (``run.py --detail``). That can
come from two places: a step cost too cheap at the real batch, or a step cost right there whose
operating point (the batch a load holds) sits elsewhere. This prices the step at the real point,
read off each LoadGen summary by Little's law, one rule for every run (as trtllm_fixed_part.py):

* the iteration time: the run's p50 time to output token (one decode token an iteration);
* the requests a replica serves: scheduled samples/s over the budget's replicas;
* the decoding batch ``B``: that rate x the mean reply (completed tokens / completed samples) x the
  iteration time; the prompt tokens an iteration ``U``: that rate x the dataset's mean prompt
  (222.33 tokens, build.py MLPERF_INPUT_TOKENS) x the iteration time, in chunks of a mean prompt;
* the context a decoding sequence holds ``X``: ``222.33 + O (1 + CV^2) / 2`` with the budgets'
  lognormal replies (p95 2.5 x the mean: CV^2 = 0.6567, docs/calibration.md).

Then budgetlint's own step (``RooflineStepCost.iteration_s``: the deployment and efficiency the
simulator uses for that budget, read from ``budgetlint check`` on this folder) at ``B`` decodes
holding ``B X`` tokens with ``U`` prompt tokens beside them, over the measured iteration. Prints a
markdown row a run with the terms.

    .venv/bin/python benchmarks/validation/step_at_real_batch.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import budgets, check_reading_inputs, header, resolve  # noqa: E402  (this folder's run.py)
from trtllm_fixed_part import summary  # noqa: E402  (a LoadGen summary's "key : number" lines)

PROMPT_MEAN = 5_463_976 / 24_576
CV2 = 0.6567  # the budgets' lognormal replies, p95 2.5 x the mean (docs/calibration.md)


def simulated_inputs() -> dict:
    """budget name -> (Deployment, Efficiency) exactly as the load simulation receives them."""
    seen: dict = {}

    def spy(b, roof, env, out, calibration=None):  # type: ignore[no-untyped-def]
        seen[b.name] = (roof.deployment, roof.efficiency)
        raise ValueError("step_at_real_batch: inputs read, no simulation")

    check_reading_inputs(spy)
    return seen


def main() -> int:
    from budgetlint.physics.step import iteration, prefill_load
    from budgetlint.physics.step_cost import RooflineStepCost

    inputs = simulated_inputs()
    print("| run | B | U | X | measured step ms | budgetlint step ms | ratio | weights | KV | linear | attention "
          "| fixed part |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in budgets():
        h = header(path)
        if h["format"] != "mlperf":
            continue
        dep, eff = inputs[path.stem]
        replicas = int(yaml.safe_load(path.read_text())["budgets"][0]["deployment"].get("replicas", 1))
        s = summary(resolve(h["measured"])[0])
        step = s["50.00 percentile time to output token (ns)"] * 1e-9
        rate = s["Scheduled samples per second"] / replicas
        reply = s["Completed tokens per second"] / s["Completed samples per second"]
        batch, prompt_tokens = rate * reply * step, rate * PROMPT_MEAN * step
        context = PROMPT_MEAN + reply * (1 + CV2) / 2
        b = round(batch)
        n = max(1, round(prompt_tokens / PROMPT_MEAN))
        chunks = [(round(prompt_tokens / n), 0)] * n
        cost = RooflineStepCost(dep, eff)
        t = cost.iteration_s(b, b * context, chunks)
        terms = iteration(cost.inputs, b, b * context, prefill_load(cost.inputs, chunks))
        ms = [x * 1e3 for x in (terms.weights_s, terms.kv_s, terms.linear_s, terms.attention_s, terms.overhead_s)]
        print(f"| {path.stem} | {batch:,.0f} | {prompt_tokens:,.0f} | {context:.0f} | {step * 1e3:.1f} | {t * 1e3:.1f} "
              f"| {t / step:.3f} | " + " | ".join(f"{x:.1f}" for x in ms) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
