"""A realistic mixed repository, checked end to end (issue 24).

Several teams' files side by side: a teams registry, one team's partial
hardware entries (a bandwidth-only card, a card with compute for one
precision, an override of a built-in entry), another team's partial model,
budgets with and without traffic on those entries, benchmark evidence, a
calibration file, and a budget that fails. One team's partial entry must
never take the others' check down: every format and ``explain`` end with
exit 0 or 1 and findings, inside the hardening bounds (a child process, 10 s,
200 MiB of address space). The corpus is small on purpose (the default
suite runs it); the partial-catalog property test in tests/fuzz draws the
entries at random.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hardening_bounds import VLLM_RUN, assert_bounded, run_bounded

CASES = Path(__file__).resolve().parents[1] / "cases"

TEAMS = """version: 1
kind: teams
teams:
  - {handle: "@acme/chat", name: Chat}
  - {handle: "@acme/infra", name: Infrastructure}
  - {handle: "@globex/search", name: Search}
"""

HARDWARE = """version: 1
kind: hardware
hardware:
  - name: lab-card          # bandwidth only: memory and compute not published yet
    bandwidth: 2 TB/s
  - name: half-card         # compute for bf16 only, no interconnect
    memory: 48 GB
    bandwidth: 864 GB/s
    compute: {bf16: 181 TFLOP/s}
  - name: h100-tuned        # a built-in entry with one field overridden
    extends: h100-sxm
    memory: 64 GB
"""

MODELS = """version: 1
kind: models
models:
  - name: search-ranker     # a partial entry on top of a built-in one
    extends: llama-3.1-8b
    layers: 16
  - name: tiny-moe
    parameters: "12B"
    active_parameters: "2B"
    layers: 24
    hidden_size: 2048
    attention_heads: 16
    kv_heads: 4
    experts: 16
    experts_per_token: 2
"""

CHAT = """version: 1
kind: budgets
budgets:
  - name: chat-on-lab-card
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 2000, output_tokens: 300, concurrency: 8}
    promise: {ttft: 50 ms, tpot: 5 ms}           # fails: BL301
    deployment: {model: llama-3.1-70b, hardware: lab-card, devices: 2}
  - name: chat-under-load-on-lab-card
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 200, arrival_rate: 3 request/s}
    promise: {ttft: 1 s, tpot: 60 ms}
    deployment: {model: llama-3.1-8b, hardware: lab-card, replicas: 2}
  - name: chat-under-load
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: {lognormal: {mean: 800, p95: 2500}}, output_tokens: 150, arrival_rate: 4 request/s}
    promise: {ttft: 1 s, tpot: 60 ms}
    deployment: {model: llama-3.1-8b, hardware: h100-tuned}
  - name: chat-with-evidence
    owner: "@acme/chat"
    percentile: p50
    workload: {prompt_tokens: 10, output_tokens: 4, concurrency: 1}
    promise: {ttft: 1 s}
    deployment: {model: llama-3.1-8b, hardware: half-card}
    bench: [runs/vllm.json]
"""

SEARCH = """version: 1
kind: budgets
budgets:
  - name: search-rerank
    owner: "@globex/search"
    workload: {prompt_tokens: 500, output_tokens: 20, concurrency: 4}
    promise: {ttft: 300 ms, e2e: 2 s}
    deployment: {model: search-ranker, hardware: half-card, weight_precision: fp8}
  - name: search-moe
    owner: "@globex/search"
    workload: {prompt_tokens: 500, output_tokens: 100, concurrency: 16}
    promise: {ttft: 300 ms, e2e: 5 s}
    deployment: {model: tiny-moe, hardware: lab-card}
  - name: search-calibrated
    owner: "@globex/search"
    percentile: p50
    workload: {prompt_tokens: 2000, output_tokens: 200, concurrency: 16, measured_at: server}
    promise: {ttft: 2 s, tpot: 50 ms}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, calibration: cal/cal.yaml}
    bench: [cal/runs/new.json]
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    for rel, text in {"teams.yaml": TEAMS, "infra/hardware.yaml": HARDWARE, "search/models.yaml": MODELS,
                      "chat/budgets.yaml": CHAT, "search/budgets.yaml": SEARCH}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "chat" / "runs").mkdir()
    (root / "chat" / "runs" / "vllm.json").write_text(json.dumps(VLLM_RUN), encoding="utf-8")
    shutil.copytree(CASES / "bl311_calibration_stale" / "runs", root / "search" / "cal" / "runs")
    shutil.copy(CASES / "bl311_calibration_stale" / "cal.yaml", root / "search" / "cal" / "cal.yaml")
    return root


def test_check_ends_with_findings(repo: Path) -> None:
    run = run_bounded("check", ".", "--format", "json", "--jobs", "1", cwd=repo)
    assert_bounded(run, names="budgets.yaml", codes=(1,))
    report = json.loads(run.stdout)
    rules = {f["rule"] for f in report["findings"]}
    assert "BL301" in rules  # the failing budget still fails ...
    assert "BL309" in rules  # ... and the load on the memory-less card says why it was not simulated
    assert {b["name"] for b in report["budgets"]} >= {"chat-under-load", "search-calibrated", "search-rerank",
                                                      "search-moe", "chat-with-evidence"}


def test_every_format_renders(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same report in every registered format (one in-process run: the simulation is the cost)."""
    from budgetlint.reporters import FORMATS, render
    from budgetlint.run.check import Options, run_check

    monkeypatch.chdir(repo)
    report = run_check(["."], Options(use_codeowners=False, jobs=1))
    for fmt in FORMATS:
        text = render(fmt, report)
        assert "chat-on-lab-card" in text, fmt


def test_explain_every_budget(repo: Path) -> None:
    run = run_bounded("explain", ".", cwd=repo)
    assert_bounded(run, names="chat-on-lab-card", codes=(0, 1))
