"""Each registry is declared once and feeds the CLI and the docs.

Output formats (``budgetlint.reporters.REPORTERS``), benchmark readers
(``budgetlint.bench.detect.READERS``) and rules (one module each) are the
single declarations; the CLI's choices come from them, and the docs must
name every entry.
"""

from __future__ import annotations

from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[2]


def test_cli_format_choices_are_the_reporter_registry() -> None:
    from budgetlint.cli import check
    from budgetlint.reporters import REPORTERS

    (opt,) = [p for p in check.params if p.name == "formats"]
    assert isinstance(opt.type, click.Choice)
    assert tuple(opt.type.choices) == tuple(REPORTERS)


def test_every_format_is_documented() -> None:
    from budgetlint.reporters import REPORTERS

    doc = (ROOT / "docs" / "output-formats.md").read_text(encoding="utf-8")
    assert [f for f in REPORTERS if f"`{f}`" not in doc] == []


def test_every_benchmark_reader_is_documented_and_detects_in_one_place() -> None:
    from budgetlint.bench import FORMAT_NAMES
    from budgetlint.bench.detect import FORMATS, READERS

    doc = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert [r.name for r in READERS if r.name not in doc] == []
    assert set(FORMAT_NAMES) == set(FORMATS) and {r.name for r in READERS} <= set(FORMATS)
    assert len({r.name for r in READERS}) == len(READERS)


def test_every_rule_declares_its_metadata_once() -> None:
    from budgetlint.findings import Severity
    from budgetlint.rules import all_rules

    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules) and len({r.name for r in rules}) == len(rules)
    for r in rules:
        assert isinstance(r.severity, Severity), r.code
        for section in ("What it checks", "Why", "Example", "Fix"):
            assert r.section(section), (r.code, section)


def test_findings_take_the_severity_their_rule_declares(monkeypatch) -> None:
    """Every finding on the shipped budgets, examples and case files has its rule's
    declared SEVERITY, or one the rule declares in OTHER_SEVERITIES with when."""
    from budgetlint.rules import get_rule
    from budgetlint.run.check import Options, run_check

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BUDGETLINT_TODAY", "2026-06-01")
    report = run_check(["budgets/", "tests/examples/", "tests/cases/"], Options(use_codeowners=False))
    assert len({f.rule for f in report.findings}) > 20
    wrong = [(f.rule, f.severity.label) for f in report.findings
             if f.severity != get_rule(f.rule).severity and f.severity not in get_rule(f.rule).other_severities]
    assert wrong == []
