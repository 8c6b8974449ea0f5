"""The simulation reads each budget's percentile off its samples; a label that is no
percentile (found by the long fuzz profile: ``percentile: true`` beside ``max_num_seqs``
ended in an internal error, exit 3) is reported by the schema check and simulated for nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main
from budgetlint.evaluate.load import percentile_number


@pytest.mark.parametrize("label, expected", [
    (None, 50.0), ("median", 50.0), ("p50", 50.0), ("p95", 95.0), ("p99.9", 99.9), ("95", 95.0),
])
def test_percentile_labels(label, expected) -> None:
    assert math.isclose(percentile_number(label), expected)


@pytest.mark.parametrize("label", ["ptrue", "pabc", "p", "p0", "p100", "p150", "p-5", "pnan", "pinf", "p1e400"])
def test_labels_that_are_no_percentile(label) -> None:
    assert percentile_number(label) is None


def test_a_boolean_percentile_with_load_settings_is_a_schema_error_not_an_internal_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "b.yaml").write_text(
        "version: 1\nkind: budgets\nbudgets:\n"
        "  - name: chat\n"
        "    owner: '@team/a'\n"
        "    percentile: true\n"
        "    workload: {prompt_tokens: 100, output_tokens: 100}\n"
        "    promise: {ttft: 1 s}\n"
        "    deployment: {model: llama-3.1-8b, hardware: h100-sxm, max_num_seqs: 1}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-summary", "--no-codeowners", "b.yaml"])
    assert result.exit_code == 1, result.output
    assert "internal error" not in result.output
    assert "b.yaml:6:17: BL003 error: budget 'chat' percentile: expected string or number; found the boolean true" \
        in result.output
    assert "BL309" not in result.output  # said once, by the schema check (BL309 said it again until stop 47)


def test_p100_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """p0 and p100 are no percentile a simulation reads: the schema check says so (BL003), and the load's
    words (which said "between p0 and p100" of p100 itself until stop 47) are no second finding (BL309
    said it again until stop 47); the report's load keeps them."""
    (tmp_path / "b.yaml").write_text(
        "version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: '@team/a'\n    percentile: p100\n"
        "    workload: {prompt_tokens: 100, output_tokens: 100, arrival_rate: 1 request/s}\n"
        "    promise: {ttft: 1 s}\n    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-summary", "--no-codeowners", "b.yaml"])
    assert "BL003 error: budget 'chat' percentile" in result.output and "BL309" not in result.output
    result = CliRunner().invoke(main, ["check", "--no-summary", "--no-codeowners", "--format", "json", "b.yaml"])
    load = json.loads(result.output)["budgets"][0]["load"]
    assert load["reason"].startswith("the budget's percentile 'p100' is not a percentile above p0 and below p100")
