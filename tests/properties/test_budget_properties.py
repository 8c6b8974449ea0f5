"""Properties of the verdicts, through budget files and ``run_check``.

* Unit invariance: the same budget written in other units (ms vs s, GB vs
  GiB with the number converted exactly, TB/s vs GB/s, pace in token/s vs
  TPOT in ms) gets the same verdicts.
* Monotonicity: more bandwidth, compute or devices never turns a verdict
  worse (cannot-be-met < at-risk < met); more output tokens never shortens
  the end-to-end bound.

Each example writes a real budget file (the deployment's hardware inline,
the model from the built-in catalog) and reads ``report.budgets[0]``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal, getcontext
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetlint.run.check import Options, run_check
from budgetlint.report import BudgetResult

getcontext().prec = 60
RANK = {"cannot-be-met": 0, "at-risk": 1, "met": 2}
MODELS = ["llama-3.2-1b", "llama-3.1-8b", "qwen2.5-32b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b",
          "deepseek-v3", "gemma-2-9b"]
#: TPOT in ms whose pace (1000 / TPOT token/s) is an exact decimal
TPOT_MS = [1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 50, 80, 100, 125, 200, 250, 400, 500]
PROPS = settings(max_examples=25, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@dataclass(frozen=True)
class Spec:
    """One budget in base units: ms, GB, GB/s, TFLOP/s, ms per token."""

    model: str
    devices: int
    memory_gb: int
    bandwidth_gbps: int
    compute_tflops: int
    prompt: int
    output: int
    concurrency: int
    ttft_ms: int
    tpot_ms: int
    e2e_ms: int


specs = st.builds(
    Spec, model=st.sampled_from(MODELS), devices=st.sampled_from([1, 2, 4, 8]),
    memory_gb=st.integers(8, 300), bandwidth_gbps=st.integers(100, 10_000), compute_tflops=st.integers(10, 5000),
    prompt=st.integers(0, 32_000), output=st.integers(1, 4000), concurrency=st.integers(1, 256),
    ttft_ms=st.integers(10, 20_000), tpot_ms=st.sampled_from(TPOT_MS), e2e_ms=st.integers(100, 600_000),
)


def _dec(x: Decimal) -> str:
    text = format(x.normalize(), "f")
    return text


def budget_yaml(s: Spec, *, alt: bool = False) -> str:
    """The budget in base units, or (``alt``) in the other units, converted exactly."""
    if alt:
        ttft = f"{_dec(Decimal(s.ttft_ms) / 1000)} s"
        e2e = f"{_dec(Decimal(s.e2e_ms) / 1000)} s"
        memory = f"{_dec(Decimal(s.memory_gb) * 10**9 / Decimal(2**30))} GiB"
        bandwidth = f"{_dec(Decimal(s.bandwidth_gbps) / 1000)} TB/s"
        compute = f"{_dec(Decimal(s.compute_tflops) / 1000)} PFLOP/s"
        pace_line = f"pace: {_dec(Decimal(1000) / s.tpot_ms)} token/s"
    else:
        ttft, e2e = f"{s.ttft_ms} ms", f"{s.e2e_ms} ms"
        memory, bandwidth = f"{s.memory_gb} GB", f"{s.bandwidth_gbps} GB/s"
        compute = f"{s.compute_tflops} TFLOP/s"
        pace_line = f"tpot: {s.tpot_ms} ms"
    return f"""version: 1
kind: budgets
budgets:
  - name: prop
    owner: "@acme/prop"
    workload:
      prompt_tokens: {s.prompt}
      output_tokens: {s.output}
      concurrency: {s.concurrency}
    promise:
      ttft: {ttft}
      {pace_line}
      e2e: {e2e}
    deployment:
      model: {s.model}
      devices: {s.devices}
      hardware:
        name: prop-gpu
        memory: {memory}
        bandwidth: {bandwidth}
        compute: {{bf16: {compute}}}
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("props")


def check(work: Path, text: str, name: str = "b.yaml") -> BudgetResult:
    path = work / name
    path.write_text(text)
    report = run_check([str(path)], Options(use_codeowners=False))
    input_errors = [f for f in report.findings if f.rule < "BL100" and f.severity.label == "error"]
    assert not input_errors, [(f.rule, f.message) for f in input_errors]
    assert len(report.budgets) == 1
    return report.budgets[0]


def known(verdicts: dict[str, str]) -> dict[str, int]:
    return {k: RANK[v] for k, v in verdicts.items() if v in RANK}


@PROPS
@given(specs)
def test_same_budget_in_other_units_gets_the_same_verdicts(work: Path, s: Spec) -> None:
    base = check(work, budget_yaml(s))
    alt = check(work, budget_yaml(s, alt=True))
    assert base.verdicts, "the physics ran"
    assert base.verdicts == alt.verdicts
    assert base.promises == pytest.approx(alt.promises, rel=1e-12)


@PROPS
@given(specs, st.sampled_from(["bandwidth_gbps", "compute_tflops", "devices"]), st.integers(2, 8))
def test_more_resources_never_make_a_verdict_worse(work: Path, s: Spec, field: str, factor: int) -> None:
    more = replace(s, **{field: getattr(s, field) * factor})
    before = known(check(work, budget_yaml(s)).verdicts)
    after = known(check(work, budget_yaml(more)).verdicts)
    for promise, rank in before.items():
        if promise in after:
            assert after[promise] >= rank, (promise, field, before, after)


@PROPS
@given(specs, st.integers(1, 4000))
def test_more_output_tokens_never_shortens_the_e2e_bound(work: Path, s: Spec, extra: int) -> None:
    a = check(work, budget_yaml(s)).as_dict()["analysis"]  # as in the JSON report
    b = check(work, budget_yaml(replace(s, output=s.output + extra))).as_dict()["analysis"]
    if "bound" not in a or "bound" not in b:
        return  # physics skipped (facts missing): nothing to compare
    assert b["bound"]["e2e_s"] >= a["bound"]["e2e_s"]


def test_the_unit_pairs_are_exact() -> None:
    """The alternative spellings parse to the same SI floats as the base ones."""
    from budgetlint.model.units import parse_quantity

    s = Spec("llama-3.1-8b", 1, 80, 3350, 989, 100, 100, 1, 250, 25, 30_000)
    pairs = [(f"{s.memory_gb} GB", f"{_dec(Decimal(s.memory_gb) * 10**9 / Decimal(2**30))} GiB", "information"),
             (f"{s.ttft_ms} ms", f"{_dec(Decimal(s.ttft_ms) / 1000)} s", "time"),
             (f"{s.bandwidth_gbps} GB/s", f"{_dec(Decimal(s.bandwidth_gbps) / 1000)} TB/s", "bandwidth")]
    for a, b, kind in pairs:
        assert parse_quantity(a, kind) == parse_quantity(b, kind), (a, b)
