"""Bad input gives a Problem with a clear message, never an exception; plus the
paths the real fixtures do not cover (detailed arrays, CSV, forcing)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from budgetlint.bench import Problem, read_benchmark
from budgetlint.bench.measurement import quantile_linear

VLLM = {
    "date": "20250101-000000",
    "backend": "vllm",
    "model_id": "m",
    "num_prompts": 3,
    "request_rate": 4.0,
    "max_concurrency": None,
    "duration": 2.0,
    "completed": 3,
    "total_input_tokens": 30,
    "total_output_tokens": 12,
    "output_throughput": 6.0,
    "mean_ttft_ms": 100.0,
    "median_ttft_ms": 90.0,
    "p99_ttft_ms": 150.0,
    "mean_tpot_ms": 20.0,
    "median_tpot_ms": 20.0,
    "p99_tpot_ms": 25.0,
}


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def codes(problems: list[Problem]) -> list[str]:
    return [p.code for p in problems]


@pytest.mark.parametrize("text", ["", "   \n\t\n"])
def test_empty(tmp_path: Path, text: str) -> None:
    ms, problems = read_benchmark(write(tmp_path, "r.json", text))
    assert ms == [] and codes(problems) == ["bench-empty"]
    assert "empty" in problems[0].message


def test_truncated(tmp_path: Path) -> None:
    text = json.dumps(VLLM, indent=2)
    ms, problems = read_benchmark(write(tmp_path, "r.json", text[: len(text) // 2]))
    assert ms == [] and codes(problems) == ["bench-truncated"]
    assert "truncated" in problems[0].message and problems[0].line == 1


def test_malformed_line_in_jsonl_keeps_the_rest(tmp_path: Path) -> None:
    good = json.dumps(VLLM)
    text = good + "\n{\"mean_ttft_ms\": 1,, }\n" + good + "\n"
    ms, problems = read_benchmark(write(tmp_path, "r.jsonl", text))
    assert len(ms) == 2
    assert codes(problems) == ["bench-malformed"] and problems[0].line == 2


def test_nan_value_is_not_measured(tmp_path: Path) -> None:
    text = json.dumps(VLLM).replace('"median_ttft_ms": 90.0', '"median_ttft_ms": NaN')
    (m,), problems = read_benchmark(write(tmp_path, "r.json", text))
    assert codes(problems) == ["bench-nan"]
    assert "median_ttft_ms is NaN" in problems[0].message
    assert "p50" not in m.metrics["ttft"].percentiles  # absent, not interpolated
    assert m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.150)


def test_nan_in_unread_field_is_reported(tmp_path: Path) -> None:
    text = json.dumps({**VLLM, "std_ttft_ms": 0.0}).replace('"std_ttft_ms": 0.0', '"std_ttft_ms": NaN')
    ms, problems = read_benchmark(write(tmp_path, "r.json", text))
    assert len(ms) == 1 and codes(problems) == ["bench-nan"]


def test_unitless_genai_perf_metric_is_refused(tmp_path: Path) -> None:
    doc = {
        "time_to_first_token": {"avg": 10.0, "p50": 9.0, "p99": 20.0},  # no "unit"
        "request_latency": {"unit": "ms", "avg": 100.0, "p50": 90.0},
        "input_config": {"concurrency": 4},
    }
    (m,), problems = read_benchmark(write(tmp_path, "g.json", json.dumps(doc)))
    assert codes(problems) == ["bench-unitless"]
    assert "no time unit" in problems[0].message
    assert "ttft" not in m.metrics
    assert m.metrics["e2e"].percentiles["p50"] == pytest.approx(0.09)


def test_unitless_mlperf_line_is_refused(tmp_path: Path) -> None:
    text = (
        "MLPerf Results Summary\nScenario : Server\n"
        "99.00 percentile first token latency : 452744202\n"
        "99.00 percentile first token latency (ns) : 452744202\n"
    )
    (m,), problems = read_benchmark(write(tmp_path, "mlperf_log_summary.txt", text))
    assert codes(problems) == ["bench-unitless"] and problems[0].line == 3
    assert m.metrics["ttft"].percentiles == {"p99": pytest.approx(0.452744202)}


def test_unknown_json_is_refused(tmp_path: Path) -> None:
    ms, problems = read_benchmark(write(tmp_path, "x.json", '{"hello": 1}'))
    assert ms == [] and codes(problems) == ["bench-unknown-format"]
    assert "no supported benchmark format" in problems[0].message


def test_unknown_text_binary_missing_and_directory(tmp_path: Path) -> None:
    _, p1 = read_benchmark(write(tmp_path, "a.txt", "hello world\n"))
    _, p2 = read_benchmark(write(tmp_path, "b.bin", b"\xff\xfe\x00\x01"))
    _, p3 = read_benchmark(tmp_path / "missing.json")
    _, p4 = read_benchmark(tmp_path)
    assert codes(p1) == ["bench-unknown-format"]
    assert codes(p2) == ["bench-io"] and "UTF-8" in p2[0].message
    assert codes(p3) == ["bench-io"] and "cannot read" in p3[0].message
    assert codes(p4) == ["bench-io"]


def test_deep_nesting_does_not_raise(tmp_path: Path) -> None:
    ms, problems = read_benchmark(write(tmp_path, "deep.json", "[" * 100000 + "]" * 100000))
    assert ms == [] and problems


def test_all_failed_is_a_problem_not_zero_latency(tmp_path: Path) -> None:
    doc = {**VLLM, "completed": 0, "failed": 3, "mean_ttft_ms": 0.0, "median_ttft_ms": 0.0}
    (m,), problems = read_benchmark(write(tmp_path, "r.json", json.dumps(doc)))
    assert m.metrics == {} and codes(problems) == ["bench-no-successful-requests"]


def test_forced_format(tmp_path: Path) -> None:
    p = write(tmp_path, "r.json", json.dumps(VLLM))
    ms, problems = read_benchmark(p, "vllm")
    assert len(ms) == 1 and problems == []
    ms, problems = read_benchmark(p, "nope")
    assert ms == [] and codes(problems) == ["bench-unknown-format"] and "known:" in problems[0].message
    ms, problems = read_benchmark(p, "mlperf")
    assert ms == [] and problems and "Scenario" in problems[0].message
    ms, problems = read_benchmark(p, "llmperf")
    assert ms == [] and codes(problems) == ["bench-not-a-measurement"]


def test_detection_ignores_the_file_name(tmp_path: Path) -> None:
    p = write(tmp_path, "mlperf_log_summary.txt", json.dumps(VLLM))
    (m,), _ = read_benchmark(p)
    assert m.format == "vllm"


def test_vllm_detailed_arrays_convert_tpot_exactly(tmp_path: Path) -> None:
    doc = {
        **VLLM,
        "ttfts": [0.1, 0.2, 0.3],  # seconds
        "itls": [[0.01, 0.03], [0.02, 0.02, 0.02], [0.05]],
        "output_lens": [3, 4, 2],
        "errors": ["", "", ""],
    }
    (m,), problems = read_benchmark(write(tmp_path, "r.json", json.dumps(doc)))
    assert problems == []
    tpot = m.metrics["tpot"]
    assert tpot.method == "computed" and tpot.definition == "budgetlint"
    per_request = sorted([0.04 / 3, 0.06 / 4, 0.05 / 2])  # sum(itls) / N
    assert tpot.percentiles["p50"] == pytest.approx(per_request[1])
    assert tpot.percentiles["p99"] == pytest.approx(quantile_linear(per_request, 99))
    # numpy's linear: pos = (n-1) * q = 1.98 -> v[1] + 0.98 (v[2] - v[1])
    assert tpot.percentiles["p99"] == pytest.approx(per_request[1] + 0.98 * (per_request[2] - per_request[1]))
    e2e = m.metrics["e2e"]
    assert e2e.percentiles["p50"] == pytest.approx(0.26)  # sorted e2e: 0.14, 0.26, 0.35
    assert m.metrics["itl"].count == 6  # pooled gaps
    assert m.metrics["ttft"].mean == pytest.approx(0.2)
    assert any("linear interpolation" in n for n in tpot.notes)


def test_genai_perf_csv_with_thousands_separators(tmp_path: Path) -> None:
    text = (
        "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"
        'Time To First Token (ms),"1,146.31",500.00,"2,000.00","1,900.50",N/A,N/A,N/A,"1,100.00",900.00\n'
        "Inter Token Latency (ms),10.00,9.00,11.00,10.90,10.80,10.70,10.50,10.00,9.50\n"
        "Request Latency,100,90,110,109,108,107,105,100,95\n"
        "\n"
        "Metric,Value\n"
        'Output Token Throughput (tokens/sec),"1,234.50"\n'
        "Request Throughput (per sec),3.00\n"
    )
    (m,), problems = read_benchmark(write(tmp_path, "profile_export_genai_perf.csv", text))
    assert codes(problems) == ["bench-unitless"]  # "Request Latency" row has no unit
    assert m.metrics["ttft"].mean == pytest.approx(1.14631)
    assert m.metrics["ttft"].percentiles == {"p99": pytest.approx(1.9005), "p50": pytest.approx(1.1), "p25": pytest.approx(0.9)}
    assert m.metrics["tpot"].percentiles["p95"] == pytest.approx(0.0108)
    assert "e2e" not in m.metrics
    assert m.output_throughput == pytest.approx(1234.5)
    assert m.request_throughput == pytest.approx(3.0)


def test_aiperf_nested_config(tmp_path: Path) -> None:
    doc = {
        "aiperf_version": "0.3.0",
        "time_to_first_token": {"unit": "ms", "avg": 50.0, "p50": 45.0, "p99": 90.0},
        "inter_token_latency": {"unit": "ms", "avg": 5.0, "p50": 5.0, "p99": 7.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 1000.0},
        "input_config": {
            "endpoint": {"model_names": ["llama"], "streaming": True},
            "loadgen": {"concurrency": 8},
            "input": {"prompt": {"input_tokens": {"mean": 512}}},
        },
    }
    (m,), problems = read_benchmark(write(tmp_path, "profile_export_aiperf.json", json.dumps(doc)))
    assert problems == []
    assert m.format == "aiperf" and m.tool_version == "0.3.0"
    assert m.conditions.model == "llama" and m.conditions.concurrency == 8.0
    assert m.conditions.prompt_tokens == 512.0
    assert m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.09)


def test_bare_infinity_in_a_latency_is_refused(tmp_path: Path) -> None:
    line = json.dumps(
        {"backend": "sglang", "request_rate": 1.0, "completed": 5, "total_output_tokens_retokenized": 5,
         "median_ttft_ms": 1.0, "median_e2e_latency_ms": 2.0}
    ).replace('"median_ttft_ms": 1.0', '"median_ttft_ms": Infinity')
    (m,), problems = read_benchmark(write(tmp_path, "s.jsonl", line))
    assert codes(problems) == ["bench-nan"] and "infinite" in problems[0].message
    assert "ttft" not in m.metrics


def test_import_is_cheap() -> None:
    code = (
        "import sys, budgetlint.bench as b; "
        "assert 'jsonschema' not in sys.modules; "
        "assert 'budgetlint.bench.vllm' not in sys.modules; "
        "assert 'yaml' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_inf_request_rate_is_kept(tmp_path: Path) -> None:
    (m,), _ = read_benchmark(write(tmp_path, "r.json", json.dumps({**VLLM, "request_rate": "inf"})))
    assert math.isinf(m.conditions.request_rate)


@pytest.mark.parametrize("value,words", [
    ('"fast"', "median_ttft_ms is the text 'fast': expected a number"),
    ("[90, 91]", "median_ttft_ms is a list: expected a number"),
    ('{"value": 90}', "median_ttft_ms is an object: expected a number"),
    ("true", "median_ttft_ms is true: expected a number"),
])
def test_a_value_that_is_not_a_number_is_said_not_dropped(tmp_path: Path, value: str, words: str) -> None:
    """Until stop 47 a latency written as text, a list, an object or a boolean was read as absent, in
    silence: the run lost its p50 and nobody was told. Now a problem (bench-schema), the rest still read."""
    text = json.dumps(VLLM).replace('"median_ttft_ms": 90.0', f'"median_ttft_ms": {value}')
    (m,), problems = read_benchmark(write(tmp_path, "r.json", text))
    assert codes(problems) == ["bench-schema"]
    assert problems[0].message.startswith(words) and problems[0].message.endswith("the value is ignored (not measured)")
    assert "p50" not in m.metrics["ttft"].percentiles and m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.150)


def test_a_count_past_a_billion_is_refused(tmp_path: Path) -> None:
    """completed: 10^30 went on into the order statistics and ended the check with an internal error
    (MemoryError, until stop 47). A run's count is at most 10^9 (eleven days at a thousand a second)."""
    text = json.dumps({**VLLM, "completed": 10**30})
    _, problems = read_benchmark(write(tmp_path, "r.json", text))
    assert "bench-impossible-value" in codes(problems)
    assert any(p.message.startswith("completed is 1e30: expected a count of at most 1,000,000,000 requests")
               for p in problems)
    ok = json.dumps({**VLLM, "completed": 10**9})
    _, problems = read_benchmark(write(tmp_path, "ok.json", ok))
    assert not any("expected a count" in p.message for p in problems)


def test_a_check_with_a_count_past_a_billion_ends_with_findings(tmp_path: Path) -> None:
    """The same file behind a budget, through the command line: exit 1 and the problem, not exit 3."""
    from cli_runner import cli

    (tmp_path / "r.json").write_text(json.dumps({**VLLM, "completed": 10**30, "model_id": "llama-3.1-8b"}))
    (tmp_path / "b.yaml").write_text(
        "version: 1\nkind: budgets\nbudgets:\n  - name: b\n    owner: '@acme/x'\n    percentile: p99\n"
        "    workload: {prompt_tokens: 10, output_tokens: 4, arrival_rate: 4 request/s}\n"
        "    promise: {ttft: 1 s}\n    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n"
        "    bench: [r.json]\n")
    result = cli("check", "--no-simulate", "--no-codeowners", str(tmp_path / "b.yaml"))
    assert result.exit_code == 1, result.output
    assert "expected a count of at most 1,000,000,000 requests" in result.output


@pytest.mark.parametrize("span", [-1.0, 0.0])
def test_a_run_that_took_no_time_is_refused(tmp_path: Path, span: float) -> None:
    """A duration of zero or less was kept as the run's measured span (its run-quality checks then read a
    "-1 s" run); now a problem and the span is not measured, the rest of the run still read."""
    (m,), problems = read_benchmark(write(tmp_path, "r.json", json.dumps({**VLLM, "duration": span})))
    assert codes(problems) == ["bench-impossible-value"]
    assert problems[0].message.startswith(f"duration is {span:g} s: a run's measured span must be above zero")
    assert m.duration is None and m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.150)


def test_no_real_file_is_refused_by_the_new_gates(shared_dir: Path) -> None:
    """The gates of stop 47 (a count past 10^9, a number that is no number, a run that took no time) against
    every real benchmark output in ../shared/fixtures/bench (vLLM's `bench serve --max-concurrency` and sweep
    files, SGLang, guidellm, genai-perf / AIPerf, inference-perf, LLMPerf, MLPerf): none of them says any of it,
    so none of them is a false alarm. (The gates fire on the mutated files above.)"""
    words = ("expected a count of at most", "expected a number", "a run's measured span must be above zero")
    files = sorted(p for p in (shared_dir / "fixtures" / "bench").rglob("*")
                   if p.is_file() and p.suffix in (".json", ".jsonl", ".txt", ".csv") and p.name != "PROVENANCE.md")
    read = 0
    for path in files:
        measurements, problems = read_benchmark(path)
        read += bool(measurements)
        assert not [p.message for p in problems if any(w in p.message for w in words)], path
    assert len(files) >= 20 and read >= 20, (len(files), read)  # the walk found the fixtures, and they read
