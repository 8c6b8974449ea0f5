"""Run-quality checks on the real benchmark files: each broken by hand (on a copy), and
the untouched files raising only what their own numbers show.

Every expected number is worked out here from the raw file's keys, not taken
from budgetlint's output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from budgetlint.bench import read_benchmark
from budgetlint.evaluate.run_quality import problems

from .helpers import budget_yaml, by_rule, check, write_budgets

SWEEP = "vllm/vllm-0.25.1_bench-sweep_run0_maxconc2.json"
LLMD = "vllm/vllm-bench-automation_llmd_l40s_llama3b_jsonl.json"
GUIDE_V2 = "guidellm/guidellm_v0.8dev_report_v2_mockserver.json"
STAGE0 = "inference-perf/kubecon25_vllm_llama31-8b_h100_stage_0_lifecycle_metrics.json"
ANYSCALE = "llmperf/leaderboard_summary_anyscale_70b.json"
MLPERF = "mlperf/v4.1_NVIDIA_H200x8_TRT_llama2-70b-99_Server_mlperf_log_summary.txt"


@pytest.fixture()
def bench_dir(shared_dir: Path) -> Path:
    root = shared_dir / "fixtures" / "bench"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    return root


def _edited_json(bench_dir: Path, rel: str, tmp_path: Path, edit) -> Path:
    doc = json.loads((bench_dir / rel).read_text())
    edit(doc)
    out = tmp_path / Path(rel).name
    out.write_text(json.dumps(doc))
    return out


def _checks(path: Path) -> list[list[tuple[str, str]]]:
    ms, probs = read_benchmark(path)
    assert ms, probs
    return [[(q.check, q.message) for q in problems(m.run)] for m in ms]


def _only(path: Path, check_name: str) -> str:
    found = _checks(path)
    assert len(found) == 1 and [c for c, _ in found[0]] == [check_name], found
    return found[0][0][1]


def test_failed_requests(bench_dir: Path, tmp_path: Path) -> None:
    # the sweep run: num_prompts 8, completed 8, failed 0; two of them now fail
    path = _edited_json(bench_dir, SWEEP, tmp_path, lambda d: d.update(completed=6, failed=2))
    msg = _only(path, "failed")
    assert "2 of 8 requests failed (25%, failed)" in msg and "only the 6 that succeeded" in msg


def test_completed_fewer_than_requested(bench_dir: Path, tmp_path: Path) -> None:
    path = _edited_json(bench_dir, SWEEP, tmp_path, lambda d: d.update(completed=5))
    msg = _only(path, "incomplete")
    assert "completed 5 of 8 requested (completed vs num_prompts)" in msg and "3 neither" in msg


def test_concurrency_never_reached(bench_dir: Path, tmp_path: Path) -> None:
    raw = json.loads((bench_dir / SWEEP).read_text())
    assert raw["max_concurrency"] == 2 and raw["request_rate"] == "inf"
    # Little's law on the untouched run: 5.859 req/s x 340.3 ms = 1.99 in flight (of 2)
    assert raw["request_throughput"] * raw["mean_e2el_ms"] / 1e3 == pytest.approx(1.994, abs=1e-3)
    path = _edited_json(bench_dir, SWEEP, tmp_path, lambda d: d.update(request_throughput=2.0))
    msg = _only(path, "concurrency")
    expected = 2.0 * raw["mean_e2el_ms"] / 1e3  # 0.681
    assert f"{expected:.3g} requests in flight" in msg and "declared concurrency 2 (max_concurrency)" in msg
    assert f"{expected / 2:.0%} of it" in msg


def test_shorter_than_warmup(bench_dir: Path, tmp_path: Path) -> None:
    def edit(d: dict) -> None:
        for b in d["benchmarks"]:
            b["warmup_duration"] = 10.0  # measured spans are 5.02 s and 2.52 s

    found = _checks(_edited_json(bench_dir, GUIDE_V2, tmp_path, edit))
    assert [[c for c, _ in f] for f in found] == [["warmup"], ["warmup"]]
    assert "(5.02 s, duration) is shorter than the warm-up before it (10 s, warmup_duration)" in found[0][0][1]


def test_too_short_for_its_rate(bench_dir: Path, tmp_path: Path) -> None:
    raw = json.loads((bench_dir / GUIDE_V2).read_text())
    latency = raw["benchmarks"][0]["metrics"]["request_latency"]["successful"]["mean"]  # 19.8 ms

    def edit(d: dict) -> None:
        d["benchmarks"][0]["duration"] = 2 * latency  # two request lifetimes at 2 requests/s
        d["benchmarks"] = d["benchmarks"][:1]

    msg = _only(_edited_json(bench_dir, GUIDE_V2, tmp_path, edit), "run-length")
    assert "at 2 requests/s is 2 mean request latencies" in msg


def test_rate_not_held(bench_dir: Path, tmp_path: Path) -> None:
    path = _edited_json(bench_dir, STAGE0, tmp_path, lambda d: d["load_summary"].update(achieved_rate=0.5))
    msg = _only(path, "rate")
    assert "declared rate 1 requests/s (load_summary.requested_rate) not held" in msg and "50% of it" in msg


def test_outputs_cut_short(bench_dir: Path, tmp_path: Path) -> None:
    # 150 requested (mean_output_tokens), 146.9 measured on the untouched file: within 25 %
    path = _edited_json(bench_dir, ANYSCALE, tmp_path, lambda d: d.update(results_number_output_tokens_mean=60.0))
    msg = _only(path, "output-length")
    assert "outputs 60% shorter than requested: mean 60 tokens (results_number_output_tokens_mean) " \
           "for 150 asked (mean_output_tokens)" in msg


def test_invalid_run(bench_dir: Path, tmp_path: Path) -> None:
    text = (bench_dir / MLPERF).read_text()
    assert "Result is : VALID" in text
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(text.replace("Result is : VALID", "Result is : INVALID"))
    assert "marked the run invalid (Result is)" in _only(path, "invalid")


def test_input_lengths_differ_from_the_budget(bench_dir: Path, tmp_path: Path) -> None:
    """The file declares input_len 1000 (so BL404 is satisfied) but its prompts average 400."""
    first = json.loads((bench_dir / LLMD).read_text().splitlines()[0])
    assert first["input_len"] == "1000" and first["completed"] == 300
    first["total_input_tokens"] = 400 * 300
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs/llmd.json").write_text(json.dumps(first))
    write_budgets(tmp_path, budget_yaml(percentile="p50", prompt=1000, output=500, concurrency=1,
                                        measured_at="client", bench=["runs/llmd.json"]))
    found = by_rule(check(tmp_path))
    quality = sorted(f.message.split(": ", 1)[1] for f in found.get("BL409", []))
    assert any(q.startswith("prompts 60% shorter than the budget's: mean 400 tokens") for q in quality), quality
    # and the outputs: 80,945 tokens over 300 requests = 269.8 of 500 asked, 46 % short (the real file's)
    assert any("outputs 46% shorter than requested: mean 270 tokens" in q for q in quality), quality  # 269.8 in three figures
    assert "BL404" not in found


#: what the untouched files show, each worked out from the raw keys:
TRUE_POSITIVES = {
    # load_summary.achieved_rate 106.5 of requested_rate 183.38 = 58 % (schedule_delay median 19 s)
    ("inference-perf/kubecon25_vllm_llama31-8b_h100_stage_6_lifecycle_metrics.json", "stage 6"): ["rate"],
    # results_number_errors 97 of results_num_requests_started 150
    ("llmperf/leaderboard_summary_bedrock_13b.json", None): ["failed"],
    # 176.74 completed/min / 60 x 0.8151 s mean E2E = 2.40 in flight of num_concurrent_requests 5
    ("llmperf/leaderboard_summary_groq_70b.json", None): ["concurrency"],
    # request_rate 16 for 383 s with a 149 s mean E2E: the queue grew for the whole run (overload)
    ("sglang/datacrunch_h200_llama33-70b_online.jsonl", "line 5"): ["run-length"],
    # completed 0, failed 8
    ("vllm/vllm-0.25.1_cpu_opt125m_all-requests-failed.json", None): ["failed"],
    # --metadata output_len 500; total_output_tokens / completed = 264..275 on every line
    **{(LLMD, f"line {i}"): ["output-length"] for i in range(1, 10)},
}


def test_untouched_fixtures_raise_only_what_their_numbers_show(bench_dir: Path) -> None:
    got = {}
    for path in sorted(bench_dir.rglob("*")):
        if not path.is_file() or path.suffix in (".md", ".yaml"):
            continue
        rel = path.relative_to(bench_dir).as_posix()
        for m in read_benchmark(path)[0]:
            found = [q.check for q in problems(m.run)]
            if found:
                got[(rel, m.label)] = found
    assert got == TRUE_POSITIVES


def test_groq_concurrency_by_hand(bench_dir: Path) -> None:
    raw = json.loads((bench_dir / "llmperf/leaderboard_summary_groq_70b.json").read_text())
    in_flight = raw["results_num_completed_requests_per_min"] / 60 * raw["results_end_to_end_latency_s_mean"]
    assert in_flight == pytest.approx(2.401, abs=1e-3) and in_flight < 0.5 * raw["num_concurrent_requests"]
    m = read_benchmark(bench_dir / "llmperf/leaderboard_summary_groq_70b.json")[0][0]
    assert m.run.mean_in_flight == pytest.approx(in_flight)


def test_provenance_recorded(bench_dir: Path) -> None:
    m = read_benchmark(bench_dir / LLMD)[0][0]
    # "date": "20250530-194738", "backend": "vllm", "gpu": "4xNVIDIA_L40S"
    assert (m.provenance.date, m.provenance.engine, m.provenance.gpu, m.provenance.tool) == (
        "2025-05-30T19:47:38", "vllm", "4xNVIDIA_L40S", "vllm")
    m = read_benchmark(bench_dir / ANYSCALE)[0][0]
    assert m.provenance.date == "2023-12-21T05:22:09+00:00"  # "timestamp": 1703136129
    m = read_benchmark(bench_dir / STAGE0)[0][0]
    assert m.provenance.engine is None or m.provenance.engine == "vllm"
    assert math.isclose(m.run.request_rate, 1.0)


def test_mlperf_request_count_is_a_lower_bound_from_min_duration(bench_dir: Path) -> None:
    # "Completed samples per second : 100.35", "min_duration (ms): 2400000", "Min duration satisfied : Yes"
    m = read_benchmark(bench_dir / MLPERF)[0][0]
    assert m.run.completed == int(100.35 * 2400) == 240840
    assert m.run.sources["completed"].startswith("at least")
    off = read_benchmark(bench_dir / MLPERF.replace("Server", "Offline"))[0][0]
    assert off.run.completed is None  # an Offline run has no per-request latencies to count
