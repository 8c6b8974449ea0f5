"""Rules are pure: order and selection change which findings are shown, never a number.

Each rule is a function of (budget, evaluation, context). Run with the
rules shuffled, or with one rule alone, the findings are the same (the
union over single rules equals the full run) and the JSON report, which
carries every number, is byte-identical apart from the findings.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from budgetlint import rules as rules_pkg
from budgetlint.reporters import get_reporter
from budgetlint.run.check import Options, run_check

ROOT = Path(__file__).resolve().parents[2]
PATHS = ["budgets/", "tests/examples/", "tests/cases/"]


def _report(monkeypatch: pytest.MonkeyPatch, order: tuple) -> tuple[str, list]:
    monkeypatch.setattr(rules_pkg, "checks", lambda: order)
    report = run_check(PATHS, Options(use_codeowners=False))
    return get_reporter("json")(report), report.findings


@pytest.fixture()
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BUDGETLINT_TODAY", "2026-06-01")


def _without_findings(text: str) -> dict:
    doc = json.loads(text)
    doc.pop("findings")
    doc.pop("summary")
    doc.pop("suppressed")
    for b in doc["budgets"]:  # a budget's status is its worst finding: it follows the findings by definition
        b.pop("status")
    return doc


def test_shuffled_rule_order_gives_a_byte_identical_report(in_repo: None, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = rules_pkg.checks()
    _install_evaluated_once(monkeypatch)  # each run gets its own copy of one evaluation per budget
    base, _ = _report(monkeypatch, tuple(rules))
    assert '"rule": "BL303"' in base and '"levers"' in base  # the inputs exercise the physics rules
    for seed in range(3):
        shuffled = list(rules)
        random.Random(seed).shuffle(shuffled)
        assert _report(monkeypatch, tuple(shuffled))[0] == base, f"seed {seed}"
    backwards, _ = _report(monkeypatch, tuple(reversed(rules)))
    assert backwards == base


def _install_evaluated_once(monkeypatch: pytest.MonkeyPatch) -> dict:
    """``evaluate_budget`` answered from a first evaluation of each budget, deep-copied for every
    run: each run sees a fresh evaluation, as if it had evaluated the budget itself (a rule that
    changed one would change only its own run's copy), without the physics and evidence again."""
    import copy
    import copyreg
    import types

    from budgetlint import evaluate

    real = evaluate.evaluate_budget
    first: dict = {}
    # frozen mappings (types.MappingProxyType) copy as the mapping they show
    monkeypatch.setitem(copyreg.dispatch_table, types.MappingProxyType,
                        lambda m: (types.MappingProxyType, (dict(m),)))

    def evaluate_budget(budget, env):
        key = (budget.name, str(budget.loc()))
        if key not in first:
            first[key] = real(budget, env)
        return copy.deepcopy(first[key])

    monkeypatch.setattr(evaluate, "evaluate_budget", evaluate_budget)
    return first


def test_each_rule_alone_gives_its_own_findings_and_the_same_numbers(
        in_repo: None, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = rules_pkg.all_rules.__wrapped__()
    first = _install_evaluated_once(monkeypatch)  # every run, the full one too, gets its own copy
    full_text, full = _report(monkeypatch, tuple(rules))
    for rule in rules:
        if rule.check is None and rule.check_run is None:
            continue
        text, alone = _report(monkeypatch, (rule,))
        # budgets, their analysis and verdicts do not depend on which rules ran
        assert _without_findings(text) == _without_findings(full_text), rule.code
        # and the rule finds the same alone as among all the others
        mine = sorted((f for f in alone if f.rule == rule.code), key=lambda f: f.sort_key())
        assert mine == sorted((f for f in full if f.rule == rule.code), key=lambda f: f.sort_key()), rule.code
    assert len(first) >= 10  # the single-rule runs did reuse the evaluations
    assert {f.rule for f in full} >= {"BL201", "BL202", "BL302", "BL303", "BL304", "BL306"}
