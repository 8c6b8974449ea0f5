"""Sample sufficiency, evidence age and version, bench entries that expire: end to end.

Expected ranks and counts come from the binomial by hand (see the comments)
or from tests/stats, never from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main

from .helpers import ENOUGH, budget_yaml, by_rule, check, codes, metric, native, write_budgets


def _native_with(path: Path, *, samples: list[float] | None = None, count: int | None = ENOUGH,
                 provenance: dict | None = None, p: str = "p99", value_ms: float = 350.0) -> Path:
    m = metric("first_token", count=count, **{p: value_ms})
    if samples is not None:
        m["method"] = "computed"
        m["samples"] = samples
    native(path, metrics={"ttft": m})
    if provenance is not None:
        doc = json.loads(path.read_text())
        doc["measurements"][0]["provenance"] = provenance
        path.write_text(json.dumps(doc))
    return path


# ------------------------------------------------------------------ sample sufficiency


def test_met_p99_from_too_few_requests_is_not_shown(tmp_path: Path) -> None:
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", count=1000)
    report = check(tmp_path)
    found = by_rule(report)
    assert list(found) == ["BL407"]
    msg = found["BL407"][0].message
    # 1,000 requests >= 368 (0.99^368 <= 2.5 %) but < 1,867 (tests/stats)
    assert "1000 requests" in msg and "p99 needs 1867" in msg and "not shown" in msg
    # ranks for p99 of 1,000: 983..997 (tests/stats, exact binomial sums)
    assert "ranks 983 and 997 of 1000" in msg
    analysis = report.budgets[0].analysis
    assert analysis["measured_ttft_verdict"] == "not shown"
    assert analysis["measured_ttft_samples"] == 1000


def test_p99_from_50_requests_has_no_upper_bound(tmp_path: Path) -> None:
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", count=50)
    msg = by_rule(check(tmp_path))["BL407"][0].message
    assert "50 requests" in msg and "cannot bound a p99" in msg and "at least 368" in msg


def test_enough_requests_is_met(tmp_path: Path) -> None:
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", count=1867)
    report = check(tmp_path)
    assert codes(report) == []
    assert report.budgets[0].analysis["measured_ttft_verdict"] == "met"


def test_unknown_request_count_is_a_warning_not_a_pass(tmp_path: Path) -> None:
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", count=None)
    msg = by_rule(check(tmp_path))["BL407"][0].message
    assert "does not say how many requests" in msg


def test_per_request_samples_give_the_interval_in_seconds(tmp_path: Path) -> None:
    # 1,000 samples 1..1000 ms: the p95's 95 % ranks are 936 and 964 (tests/stats), so the
    # interval is 936 ms .. 964 ms; the file's p95 is 950 ms
    samples = [i / 1000 for i in range(1, 1001)]
    write_budgets(tmp_path, budget_yaml(percentile="p95", promise="ttft: 955 ms", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", samples=samples, p="p95", value_ms=950.0)
    found = by_rule(check(tmp_path))
    assert list(found) == ["BL408"]
    assert "95% interval 936 ms .. 964 ms (ranks 936..964 of 1000) contains it" in found["BL408"][0].message


def test_interval_below_the_promise_is_shown_met(tmp_path: Path) -> None:
    samples = [i / 1000 for i in range(1, 1001)]
    write_budgets(tmp_path, budget_yaml(percentile="p95", promise="ttft: 1100 ms", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", samples=samples, p="p95", value_ms=950.0)
    report = check(tmp_path)
    assert codes(report) == []
    ev = report.budgets[0].analysis["evidence"][0]
    assert ev["promises"]["ttft"]["interval_s"] == [0.936, 0.964]
    assert ev["promises"]["ttft"]["verdict"] == "met" and ev["requests"] is None


def test_miss_names_its_interval(tmp_path: Path) -> None:
    samples = [i / 1000 for i in range(1, 1001)]
    write_budgets(tmp_path, budget_yaml(percentile="p95", promise="ttft: 900 ms", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", samples=samples, p="p95", value_ms=950.0)
    found = by_rule(check(tmp_path))
    assert list(found) == ["BL401"]
    assert "shown at 95%: the 95% interval 936 ms .. 964 ms" in found["BL401"][0].message


def test_thin_margin_on_thin_evidence_is_not_shown_not_met(tmp_path: Path) -> None:
    # 395 ms against 400 ms is a 1 % margin (BL402), but from 300 requests the p99 is not shown
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", count=300, value_ms=395.0)
    assert codes(check(tmp_path)) == ["BL407"]


# ------------------------------------------------------------------ age and version


def test_old_evidence_and_other_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUDGETLINT_TODAY", "2025-12-01")
    extra = '    evidence: {max_age: 12 weeks, engine: vLLM, engine_version: "0.11"}\n'
    write_budgets(tmp_path, budget_yaml(bench=["runs/*.json"], extra=extra))
    _native_with(tmp_path / "runs/a.json", p="p95", provenance={
        "engine": "vllm", "engine_version": "0.10.2", "date": "2025-08-01T10:00:00"})
    found = by_rule(check(tmp_path))
    msgs = sorted(f.message for f in found["BL410"])
    # 2025-08-01 -> 2025-12-01: 31 + 30 + 31 + 30 + 31 = 122 days, over 12 x 7 = 84
    assert any("measured on 2025-08-01 (date): 122 days old, older than 84 days" in m for m in msgs), msgs
    assert any("engine version 0.10.2 (engine_version), the budget's evidence.engine_version asks for 0.11"
               in m for m in msgs), msgs
    assert len(msgs) == 2  # the engine matches (case and punctuation aside)


def test_fresh_matching_evidence_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUDGETLINT_TODAY", "2025-12-01")
    extra = '    evidence: {max_age: 90 days, engine_version: "0.11"}\n'
    write_budgets(tmp_path, budget_yaml(bench=["runs/*.json"], extra=extra))
    _native_with(tmp_path / "runs/a.json", p="p95", provenance={
        "engine_version": "0.11.2", "date": "2025-11-20T10:00:00"})
    report = check(tmp_path)
    assert codes(report) == []
    assert report.budgets[0].analysis["evidence"][0]["age_days"] == 11


def test_policy_without_a_date_in_the_file_is_a_warning(tmp_path: Path) -> None:
    write_budgets(tmp_path, budget_yaml(bench=["runs/*.json"], extra="    evidence: {max_age: 30 days}\n"))
    _native_with(tmp_path / "runs/a.json", p="p95")
    msg = by_rule(check(tmp_path))["BL410"][0].message
    assert "records no date" in msg and "30 days (the budget's evidence.max_age)" in msg


def test_config_evidence_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUDGETLINT_TODAY", "2025-12-01")
    write_budgets(tmp_path, budget_yaml(bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", p="p95", provenance={"date": "2025-01-01T00:00:00"})
    (tmp_path / "budgetlint.toml").write_text('evidence-max-age = "30 days"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", ".", "--no-codeowners", "--format", "json"])
    report = json.loads(result.output)
    stale = [f for f in report["findings"] if f["rule"] == "BL410"]
    assert len(stale) == 1 and "older than 30 days (the config's evidence-max-age)" in stale[0]["message"]


def test_bad_max_age_is_a_schema_error(tmp_path: Path) -> None:
    write_budgets(tmp_path, budget_yaml(bench=[], extra="    evidence: {max_age: 3 fortnights}\n"))
    assert "BL003" in codes(check(tmp_path), "BL0")


# ------------------------------------------------------------------ expiry


def test_expired_entry_no_longer_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUDGETLINT_TODAY", "2026-02-01")
    extra = "    bench:\n      - {path: runs/a.json, expires: 2026-01-31}\n"
    write_budgets(tmp_path, budget_yaml(extra=extra))
    _native_with(tmp_path / "runs/a.json", p="p95", value_ms=900.0)  # a miss of the 400 ms promise
    found = by_rule(check(tmp_path))
    assert list(found) == ["BL411"]
    assert "expired on 2026-01-31 (1 day ago): it is no longer evidence for chat" in found["BL411"][0].message


def test_entry_on_its_last_day_still_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUDGETLINT_TODAY", "2026-01-31")
    extra = "    bench:\n      - {path: runs/a.json, expires: 2026-01-31}\n"
    write_budgets(tmp_path, budget_yaml(extra=extra))
    _native_with(tmp_path / "runs/a.json", p="p95", value_ms=900.0)
    assert codes(check(tmp_path)) == ["BL401"]


# ------------------------------------------------------------------ outputs


def test_explain_and_markdown_show_the_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUDGETLINT_TODAY", "2025-12-01")
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    _native_with(tmp_path / "runs/a.json", count=300, provenance={"date": "2025-11-01T00:00:00", "tool": "vllm"})
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["explain", "budgets.yaml", "--budget", "chat"]).output
    assert "Evidence (95% distribution-free intervals" in out
    assert "NOT SHOWN; 300 requests" in out and "p99 needs 1867" in out and "30 days old" in out
    md = CliRunner().invoke(main, ["check", ".", "--no-codeowners", "--format", "markdown"]).output
    assert "350 ms (not shown, 300 requests)" in md


def test_request_count_is_never_a_token_count(tmp_path: Path) -> None:
    """A metric counting 20,000 tokens from 300 completed requests is 300 requests."""
    write_budgets(tmp_path, budget_yaml(percentile="p99", bench=["runs/*.json"]))
    path = _native_with(tmp_path / "runs/a.json", count=20000)
    doc = json.loads(path.read_text())
    doc["measurements"][0]["run"] = {"completed": 300, "sources": {"completed": "completed"}}
    path.write_text(json.dumps(doc))
    msg = by_rule(check(tmp_path))["BL407"][0].message
    assert "300 requests (completed)" in msg


def test_pace_promise_interval_in_token_per_s(tmp_path: Path) -> None:
    # 1,000 per-request TPOTs 20.001..21 ms (pace 47.6..50 token/s); the p95 TPOT's ranks are 936
    # and 964 (tests/stats): TPOT 20.936 .. 20.964 ms = pace 47.70 .. 47.76 token/s; the file's
    # p95 TPOT 20.95 ms is 47.73 token/s against a 47.74 token/s promise: inside the interval
    samples = [0.020 + i / 1e6 for i in range(1, 1001)]
    write_budgets(tmp_path, budget_yaml(percentile="p95", promise="pace: 47.72 token/s",
                                        bench=["runs/*.json"]))
    m = metric("budgetlint", count=None, p95=20.95)
    m["method"], m["samples"] = "computed", samples
    native(tmp_path / "runs/a.json", metrics={"tpot": m})
    found = by_rule(check(tmp_path))
    assert list(found) == ["BL408"], found
    lo, hi = 1 / 0.020964, 1 / 0.020936
    assert f"95% interval {lo:.4g} token/s .. {hi:.4g} token/s (ranks 936..964 of 1000)" in found["BL408"][0].message
