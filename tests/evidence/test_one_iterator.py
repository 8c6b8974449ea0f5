"""The evidence rules walk the evaluation through one iterator (rules/_evidence.py), and the
physics re-run at a run's load swallows only the physics's refusals, never a bug."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from budgetlint.rules import _evidence

from .helpers import budget_yaml, by_rule, check, codes, metric, native, write_budgets

RULES = Path(__file__).resolve().parents[2] / "budgetlint" / "rules"
H100_8B = "model: llama-3.1-8b, hardware: h100-sxm, devices: 1, weight_precision: bf16, kv_precision: bf16"


def test_no_evidence_rule_walks_the_links_itself() -> None:
    modules = sorted(RULES.glob("bl4*.py"))
    assert len(modules) >= 11
    walking = [p.name for p in modules if re.search(r"\b(ev|evaluation)\.links\b|\.readings\.items\(\)|\.sufficiency\.items\(\)",
                                                    p.read_text(encoding="utf-8"))]
    assert walking == []
    # and none imports the evaluation's module for words
    assert [p.name for p in modules if re.search(r"evaluate(\.| import )evidence", p.read_text(encoding="utf-8"))] == []


def test_links_partitions_counting_and_not() -> None:
    a, b, c = (SimpleNamespace(counts=x, name=n) for x, n in ((True, "a"), (False, "b"), (True, "c")))
    ev = SimpleNamespace(links=(a, b, c))
    assert [l.name for l in _evidence.links(ev)] == ["a", "c"]
    assert [l.name for l in _evidence.links(ev, counting=False)] == ["b"]
    assert [l.name for l in _evidence.links(ev, counting=None)] == ["a", "b", "c"]


def test_promises_are_each_counting_link_s_readings_in_order() -> None:
    budget = SimpleNamespace(promise=SimpleNamespace(pace_given=True))
    r1, r2, r3 = (SimpleNamespace(status="compared", measured_s=0.05, promised_s=0.04) for _ in range(3))
    one = SimpleNamespace(counts=True, readings={"ttft": r1, "tpot": r2}, sufficiency={"tpot": "s"})
    other = SimpleNamespace(counts=False, readings={"e2e": r3}, sufficiency={})
    got = list(_evidence.promises(budget, SimpleNamespace(links=(one, other))))
    assert [(p.promise, p.reading, p.sufficiency) for p in got] == [("ttft", r1, None), ("tpot", r2, "s")]
    assert [p.pace for p in got] == [False, True]  # a TPOT promised as a pace reads as a rate
    assert [p.what for p in got] == ["TTFT", "pace"]
    assert got[1].value(0.05, 3) == "20 token/s"  # 1 / 50 ms
    assert got[0].value(0.05, 3) == "50 ms"


def _bl403_case(tmp_path: Path) -> None:
    # the setup of tests/evidence/test_rules.py::test_bl403_pace_above_the_bandwidth_bound:
    # 400 token/s measured where the bandwidth bound is ~223 token/s
    write_budgets(tmp_path, budget_yaml(promise="pace: 20 token/s", deployment=H100_8B, concurrency=1,
                                        prompt=100, output=100, bench=["r.json"]))
    native(tmp_path / "r.json", metrics={"tpot": metric("budgetlint", p50=2.5, p95=2.5)},
           conditions={"concurrency": 1.0, "prompt_tokens": 100.0, "output_tokens": 100.0})


@pytest.mark.parametrize("refusal", [ValueError("concurrency must be an integer >= 1"),
                                     OverflowError("int too large to convert to float")])
def test_a_physics_refusal_only_means_no_bound(tmp_path: Path, monkeypatch, refusal: Exception) -> None:
    from budgetlint.evaluate.evidence import bound

    _bl403_case(tmp_path)
    assert codes(check(tmp_path)) == ["BL403"]  # the case does reach the bound

    def refuse(*args, **kwargs):
        raise refusal

    monkeypatch.setattr(bound, "_bound_at", refuse)
    report = check(tmp_path)
    assert "BL403" not in by_rule(report)  # no bound, nothing to be faster than


def test_a_bug_in_the_bound_is_not_swallowed(tmp_path: Path, monkeypatch) -> None:
    """Before: ``except Exception`` turned any bug (here a KeyError) into a silent 'no bound'."""
    from budgetlint.evaluate.evidence import bound

    _bl403_case(tmp_path)

    def bug(*args, **kwargs):
        raise KeyError("a bug, not a refusal")

    monkeypatch.setattr(bound, "_bound_at", bug)
    with pytest.raises(KeyError):
        check(tmp_path)
