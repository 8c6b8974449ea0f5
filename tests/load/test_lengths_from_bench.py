"""Workload lengths taken from a benchmark file: `prompt_tokens: {from_bench: FILE}` (docs/load.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TEAMS = 'version: 1\nkind: teams\nteams:\n  - handle: "@acme/serving"\n'
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "bench"

# a vLLM `bench serve --save-detailed` result: four requests, the third failed
VLLM_DETAILED = {
    "date": "20250101-000000", "backend": "vllm", "model_id": "m", "num_prompts": 4,
    "request_rate": 2.0, "max_concurrency": None, "duration": 2.0, "completed": 3, "failed": 1,
    "total_input_tokens": 900, "total_output_tokens": 90, "output_throughput": 45.0,
    "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "p99_ttft_ms": 150.0,
    "mean_tpot_ms": 20.0, "median_tpot_ms": 20.0, "p99_tpot_ms": 25.0,
    "input_lens": [120, 480, 999, 300],
    "output_lens": [20, 45, 0, 25],
    "ttfts": [0.1, 0.2, 0.0, 0.15],
    "itls": [[0.02] * 19, [0.02] * 44, [], [0.02] * 24],
    "errors": ["", "", "connection reset", ""],
}
VLLM_PROMPTS = [120, 480, 300]  # the failed request's 999 is not a served prompt
VLLM_OUTPUTS = [20, 45, 25]

# LLMPerf `*_individual_responses.json`: the second response errored
_OK = {"error_code": None, "error_msg": "", "ttft_s": 0.1, "end_to_end_latency_s": 1.1}
LLMPERF_INDIVIDUAL = [
    {**_OK, "number_input_tokens": 512, "number_output_tokens": 50},
    {**_OK, "error_code": 500, "error_msg": "overloaded", "number_input_tokens": 7000, "number_output_tokens": 1},
    {**_OK, "number_input_tokens": 1024, "number_output_tokens": 150},
    {**_OK, "number_input_tokens": 2048, "number_output_tokens": 250},
    {**_OK, "number_input_tokens": 4096, "number_output_tokens": 350},
]
LLMPERF_PROMPTS = [512, 1024, 2048, 4096]
LLMPERF_OUTPUTS = [50, 150, 250, 350]


def budget(prompt: str, output: str, extra: str = "") -> str:
    """A budget file; ``extra``: more workload lines (indented 6)."""
    text = textwrap.dedent(f"""\
        version: 1
        kind: budgets
        budgets:
          - name: replay
            owner: "@acme/serving"
            percentile: p95
            workload:
              prompt_tokens: {prompt}
              output_tokens: {output}
              arrival_rate: 2 request/s
            promise: {{ttft: 2 s, tpot: 100 ms}}
            deployment: {{model: llama-3.1-8b, hardware: h100-sxm}}
        """)
    return text.replace("    promise:", extra + "    promise:")


def run(tmp: Path, text: str):
    from budgetlint.options import Options
    from budgetlint.run.check import evaluate_run

    (tmp / "teams.yaml").write_text(TEAMS)
    (tmp / "budgets").mkdir(exist_ok=True)
    (tmp / "budgets" / "b.yaml").write_text(text)
    result = evaluate_run([str(tmp)], Options(use_codeowners=False), keep=True)
    (ev,) = result.evaluations
    return ev, result.report.findings


def mean(xs: list[int]) -> float:
    return sum(xs) / len(xs)


@pytest.mark.parametrize("name, doc, prompts, outputs", [
    ("runs/detailed.json", VLLM_DETAILED, VLLM_PROMPTS, VLLM_OUTPUTS),
    ("runs/m_100_50_individual_responses.json", LLMPERF_INDIVIDUAL, LLMPERF_PROMPTS, LLMPERF_OUTPUTS),
])
def test_lengths_from_a_benchmark_file(tmp_path: Path, name: str, doc, prompts: list[int],
                                       outputs: list[int]) -> None:
    (tmp_path / "budgets" / "runs").mkdir(parents=True)
    (tmp_path / "budgets" / name).write_text(json.dumps(doc))
    ev, findings = run(tmp_path, budget(f"{{from_bench: {name}}}", f"{{from_bench: {name}}}"))
    assert not [f for f in findings if f.rule.startswith(("BL0", "BL406", "BL309"))], findings
    # the simulator drew from exactly the successful requests' lengths
    assert ev.load is not None and ev.load.skipped is None
    assert sorted(ev.load.prompt_lengths.values) == sorted(prompts)
    assert sorted(ev.load.output_lengths.values) == sorted(outputs)
    # the flat roofline workload: their arithmetic mean (whole tokens; these means are whole)
    wl = ev.budget.workload
    assert (wl.prompt_tokens, wl.output_tokens) == (mean(prompts), mean(outputs))
    assert ev.roofline.workload.prompt_tokens == mean(prompts)
    assert ev.roofline.workload.output_tokens == mean(outputs)
    assert [(s.key, s.count) for s in ev.lengths] == [("prompt_tokens", len(prompts)), ("output_tokens", len(outputs))]


def test_prefix_share_applies_to_the_files_mean_prompt(tmp_path: Path) -> None:
    (tmp_path / "budgets" / "runs").mkdir(parents=True)
    (tmp_path / "budgets" / "runs" / "d.json").write_text(json.dumps(VLLM_DETAILED))
    ev, findings = run(tmp_path, budget("{from_bench: runs/d.json}", "64",
                                        extra="      prefix_cache_hit: 0.5\n"))
    assert not [f for f in findings if f.rule.startswith("BL0")], findings
    assert ev.budget.workload.cached_prompt_tokens == 0.5 * mean(VLLM_PROMPTS)
    assert ev.load.output_lengths.mean == 64  # a plain integer stays fixed


def test_file_without_per_request_lengths_is_a_finding_at_the_key(tmp_path: Path) -> None:
    summary = {k: v for k, v in VLLM_DETAILED.items()
               if k not in ("input_lens", "output_lens", "ttfts", "itls", "errors")}
    (tmp_path / "budgets" / "runs").mkdir(parents=True)
    (tmp_path / "budgets" / "runs" / "summary.json").write_text(json.dumps(summary))
    ev, findings = run(tmp_path, budget("{from_bench: runs/summary.json}", "{from_bench: runs/missing.json}"))
    mine = sorted((f for f in findings if f.rule == "BL406"), key=lambda f: f.location.line)
    assert [(f.location.line, f.location.column) for f in mine] == [(8, 35), (9, 35)]  # line 8: 6 + len("prompt_tokens: {from_bench: ") + 1
    assert mine[0].location.file.endswith("b.yaml")
    assert "no per-request input token counts" in mine[0].message
    assert "no such file" in mine[1].message
    assert ev.roofline.skipped and ev.load.skipped  # lengths unknown: no numbers made up
    assert not [f for f in findings if f.rule in ("BL309", "BL306")]  # one finding says why


def test_cli_exit_code_and_location(tmp_path: Path) -> None:
    (tmp_path / "teams.yaml").write_text(TEAMS)
    (tmp_path / "b.yaml").write_text(budget("{from_bench: nope.json}", "10"))
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", ".", "--no-codeowners", "--no-summary"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "b.yaml:8:35" in proc.stdout and "BL406" in proc.stdout


def test_from_bench_outside_the_read_roots_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "d.json").write_text(json.dumps(VLLM_DETAILED))
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    ev, findings = run(repo, budget("{from_bench: ../../elsewhere/d.json}", "10"))
    (f,) = [f for f in findings if f.rule == "BL406"]
    assert "resolves" in f.message and ev.lengths[0].file is None  # refused, never read


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/fixtures/bench is absent (a fresh clone has no ../shared)")
def test_real_llmperf_individual_responses(tmp_path: Path) -> None:
    src = SHARED / "llmperf" / "leaderboard_individual_anyscale_70b.json"
    responses = json.loads(src.read_text())
    ok = [r for r in responses if r.get("error_code") in (None, 0) and not r.get("error_msg")]
    prompts = [r["number_input_tokens"] for r in ok]
    outputs = [r["number_output_tokens"] for r in ok]
    (tmp_path / "budgets" / "runs").mkdir(parents=True)
    (tmp_path / "budgets" / "runs" / src.name).write_bytes(src.read_bytes())
    ev, _ = run(tmp_path, budget(f"{{from_bench: runs/{src.name}}}", f"{{from_bench: runs/{src.name}}}"))
    assert sorted(ev.load.prompt_lengths.values) == sorted(prompts)
    assert sorted(ev.load.output_lengths.values) == sorted(outputs)
    assert ev.budget.workload.prompt_tokens == round(mean(prompts))
    assert ev.budget.workload.output_tokens == round(mean(outputs))
