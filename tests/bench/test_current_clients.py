"""Layouts of current client versions, written small in tmp_path in the real shape.

Shapes copied from real runs of aiperf 0.13.0 and inference-perf 0.7.0
(tests/clients), trimmed; every expected number is worked out by hand in the
comment beside it. Also: impossible (negative / zero) latencies are Problems.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from budgetlint.bench import read_benchmark
from budgetlint.bench.inference_perf import OLD_TPOT_DEFINITION

IMPOSSIBLE = "bench-impossible-value"


def dist(mean: float, median: float, p99: float, lo: float, hi: float) -> dict[str, float]:
    """inference-perf's summarize(): mean, min, max, then p0.1 ... p99.9 with "median"."""
    return {"mean": mean, "min": lo, "max": hi, "p0.1": lo, "p1": lo, "p5": lo, "p10": lo,
            "p25": median, "median": median, "p75": median, "p90": p99, "p95": p99, "p99": p99,
            "p99.9": hi}


# ---- aiperf 0.13: profile_export_aiperf.json --------------------------------------------

AIPERF_013 = {
    "schema_version": "1.4",
    "aiperf_version": "0.13.0",
    "benchmark_id": "3c5260494545",
    "request_count": {"unit": "requests", "avg": 20.0},
    "time_to_first_token": {"unit": "ms", "avg": 108.62, "p50": 105.72, "p99": 123.46, "min": 101.2,
                            "max": 123.6, "std": 7.07, "count": 20, "sum": 2172.4},
    "inter_token_latency": {"unit": "ms", "avg": 20.02, "p50": 20.0, "p99": 20.47, "count": 20},
    "request_latency": {"unit": "ms", "avg": 1089.82, "p50": 1087.64, "p99": 1107.06, "count": 20},
    "input_sequence_length": {"unit": "tokens", "avg": 99.0, "p50": 99.0},
    "output_sequence_length": {"unit": "tokens", "avg": 49.0, "p50": 49.0},
    "benchmark_duration": {"unit": "sec", "avg": 10.98},
    "input_config": {
        "models": {"items": [{"name": "tiny-model"}]},
        "endpoint": {"urls": ["http://127.0.0.1:39571"], "type": "completions", "streaming": True},
        "datasets": [{"name": "main", "type": "synthetic", "entries": 20,
                      "prompts": {"isl": {"mean": 100.0, "stddev": 0.0},
                                  "osl": {"mean": 50.0, "stddev": 0.0}}}],
        "phases": [
            {"name": "warmup", "kind": "warmup", "type": "concurrency", "requests": 4, "concurrency": 8},
            {"name": "profiling", "kind": "profiling", "type": "concurrency", "requests": 20,
             "concurrency": 2},
        ],
        "tokenizer": {"name": "local/tiny"},
    },
    "was_cancelled": False,
    "is_complete": True,
    "error_summary": [],
}


def test_aiperf_013_run_conditions(tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(AIPERF_013))
    (m,), problems = read_benchmark(path)
    assert problems == []
    assert (m.format, m.tool_version) == ("aiperf", "0.13.0")
    c = m.conditions
    assert c.model == "tiny-model"  # models.items[0].name
    assert c.status("model") == "read" and c.sources["model"] == "input_config.models.items[0].name"
    # the warmup phase (concurrency 8) is excluded from results: the profiling one counts
    assert c.concurrency == 2.0 and c.status("concurrency") == "read"
    assert c.sources["concurrency"] == "input_config.phases[1].concurrency"
    assert c.request_rate is None  # a concurrency phase has no rate
    # configured lengths (read) win over the measured means (99 / 49 here)
    assert (c.prompt_tokens, c.output_tokens) == (100.0, 50.0)
    assert c.sources["prompt_tokens"] == "input_config.datasets[0].prompts.isl.mean"
    assert c.successful_requests == 20
    assert c.extra["load_type"] == "concurrency"
    assert m.metrics["ttft"].percentiles["p50"] == pytest.approx(0.10572)  # 105.72 ms
    assert m.metrics["tpot"].definition == "excludes_first_token"
    assert m.duration == pytest.approx(10.98)  # "unit": "sec"


def test_aiperf_013_rate_phase_and_disagreeing_phases(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(AIPERF_013))
    doc["input_config"]["phases"] = [
        {"name": "profiling", "kind": "profiling", "type": "poisson", "rate": 4.5, "concurrency": 16,
         "duration": 60},
    ]
    path = tmp_path / "rate.json"
    path.write_text(json.dumps(doc))
    (m,), _ = read_benchmark(path)
    assert (m.conditions.request_rate, m.conditions.concurrency) == (4.5, 16.0)
    doc["input_config"]["phases"] = [
        {"name": "a", "kind": "profiling", "type": "concurrency", "requests": 5, "concurrency": 2},
        {"name": "b", "kind": "profiling", "type": "concurrency", "requests": 5, "concurrency": 4},
    ]
    path.write_text(json.dumps(doc))
    (m,), _ = read_benchmark(path)
    assert m.conditions.concurrency is None  # 2 and 4: not one run condition, left unknown
    assert m.conditions.status("concurrency") == "unknown"


def test_aiperf_older_loadgen_layout_still_read(tmp_path: Path) -> None:
    doc = {k: v for k, v in AIPERF_013.items() if k != "input_config"}
    doc["input_config"] = {"endpoint": {"model_names": ["m-old"], "streaming": True},
                           "loadgen": {"concurrency": 8},
                           "input": {"prompt": {"input_tokens": {"mean": 512}, "output_tokens": {"mean": 128}}}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    (m,), _ = read_benchmark(path)
    c = m.conditions
    assert (c.model, c.concurrency, c.prompt_tokens, c.output_tokens) == ("m-old", 8.0, 512.0, 128.0)
    assert c.sources["concurrency"] == "input_config.loadgen.concurrency"


# ---- aiperf 0.13: profile_export_aiperf.csv ---------------------------------------------

AIPERF_CSV = textwrap.dedent("""\
    Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std
    Active Decode Throughput (tokens/sec),98.75,0.00,420.57,,,,,,99.91,,111.95,122.35,141.10,16.45
    Credit-to-Start Latency (ms),3.92,0.70,9.28,78.49,0.72,0.77,0.82,1.07,2.77,6.40,8.94,9.26,9.28,3.05
    Effective Latency (CO-aware) (ms),1093.81,1081.81,1109.78,21876.24,1081.84,1081.97,1082.00,1087.95,1091.97,1100.12,1105.21,1109.28,1109.68,8.78
    HTTP Chunks Received,50.50,49.00,52.00,1010.00,49.00,49.00,49.90,50.00,50.00,52.00,52.00,52.00,52.00,1.02
    Input Sequence Length (tokens),100.00,100.00,100.00,2000.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,0.00
    Inter Chunk Latency (ms),20.02,0.00,52.77,19624.00,9.34,14.47,16.61,19.70,20.00,20.20,23.70,25.69,29.45,3.57
    Inter Token Latency (ms),20.02,19.79,20.52,400.49,19.80,19.84,19.88,19.96,20.00,20.04,20.15,20.27,20.47,0.15
    Network-Adjusted Time to First Token (ms),90.00,80.00,99.00,1800.00,80.00,80.00,80.00,85.00,88.00,92.00,95.00,97.00,99.00,4.00
    Output Sequence Length (tokens),50.00,50.00,50.00,1000.00,50.00,50.00,50.00,50.00,50.00,50.00,50.00,50.00,50.00,0.00
    Request Latency (ms),1089.82,1081.00,1108.33,21796.42,1081.02,1081.10,1081.15,1083.13,1087.64,1094.45,1100.63,1101.99,1107.06,7.87
    Time to First Output Token (ms),108.62,101.23,123.61,2172.42,101.23,101.23,101.28,103.21,105.72,111.95,119.37,122.87,123.46,7.08
    Time to First Token (ms),108.62,101.23,123.61,2172.42,101.23,101.23,101.28,103.21,105.72,111.95,119.37,122.87,123.46,7.08

    Metric,Value
    Benchmark Duration (sec),10.98
    Output Token Throughput (tokens/sec),91.02
    Request Count,20.00
    Request Throughput (requests/sec),1.82
    """)


def test_aiperf_csv_is_read(tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_text(AIPERF_CSV)
    (m,), problems = read_benchmark(path)
    assert problems == []
    assert m.format == "aiperf"  # the "sum" column and "Benchmark Duration" row
    ttft = m.metrics["ttft"]  # "Time to First Token (ms)", not the network-adjusted row
    assert ttft.mean == pytest.approx(0.10862)  # 108.62 ms
    assert ttft.percentiles["p50"] == pytest.approx(0.10572)  # 105.72 ms
    assert ttft.percentiles["p99"] == pytest.approx(0.12346)  # 123.46 ms
    assert ttft.percentiles["p1"] == pytest.approx(0.10123)  # 101.23 ms
    assert set(ttft.percentiles) == {"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
    tpot = m.metrics["tpot"]  # "Inter Token Latency (ms)", not "Inter Chunk Latency"
    assert tpot.definition == "excludes_first_token"
    assert tpot.percentiles["p99"] == pytest.approx(0.02047)  # 20.47 ms
    assert m.metrics["e2e"].percentiles["p90"] == pytest.approx(1.10063)  # 1100.63 ms
    assert "itl" not in m.metrics
    assert m.output_throughput == pytest.approx(91.02)
    assert m.request_throughput == pytest.approx(1.82)
    assert m.duration == pytest.approx(10.98)  # "(sec)"
    c = m.conditions
    assert (c.prompt_tokens, c.output_tokens, c.successful_requests) == (100.0, 50.0, 20)
    assert c.status("prompt_tokens") == "inferred"  # measured mean, not the configured target
    assert c.concurrency is None and c.model is None  # not in the CSV


def test_aiperf_csv_forced_and_genai_perf_csv_kept(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text(AIPERF_CSV)
    (m,), _ = read_benchmark(path, fmt="aiperf-csv")
    assert m.metrics["ttft"].percentiles["p50"] == pytest.approx(0.10572)
    old = tmp_path / "profile_export_genai_perf.csv"
    old.write_text(
        'Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n'
        'Time To First Token (ms),"1,146.31",900.00,"1,500.00","1,400.00",N/A,N/A,N/A,"1,100.00",N/A\n'
        '\nMetric,Value\nRequest Throughput (per sec),2.50\n'
    )
    (g,), problems = read_benchmark(old)
    assert problems == []
    assert g.format == "genai-perf"
    assert g.metrics["ttft"].mean == pytest.approx(1.14631)  # "1,146.31" ms
    assert g.metrics["ttft"].percentiles == pytest.approx({"p50": 1.1, "p99": 1.4})


# ---- inference-perf 0.7 ------------------------------------------------------------------

#: per request: latency 1.0835, TTFT 0.1020, N = 50 tokens -> TPOT (1.0835 - 0.1020) / 49 = 0.020031
IP07_LATENCY = {
    "request_latency": dist(1.0835, 1.0826, 1.1000, 1.0800, 1.1010),
    "normalized_time_per_output_token": dist(0.02167, 0.02165, 0.0220, 0.0216, 0.0221),
    "time_per_output_token": dist(0.020031, 0.020005, 0.0205, 0.0199, 0.0206),
    "time_to_first_token": dist(0.1020, 0.1015, 0.1100, 0.1005, 0.1110),
    "inter_token_latency": dist(0.020015, 0.020002, 0.0210, 0.0, 0.0300),
}


def ip07_report(load_summary: dict) -> dict:
    return {
        "benchmark_time_seconds": 10.9,
        "load_summary": load_summary,
        "successes": {
            "count": 20,
            "latency": IP07_LATENCY,
            "throughput": {"input_tokens_per_sec": 183.5, "output_tokens_per_sec": 91.7,
                           "total_tokens_per_sec": 275.2, "requests_per_sec": 1.83},
            "prompt_tokens": {"total": 2000.0, "cached": 0.0, "uncached": 2000.0,
                              **dist(100.0, 100.0, 100.0, 100.0, 100.0)},
            "output_len": dist(50.0, 50.0, 50.0, 50.0, 50.0),
            "output_tokens": {"total": 1000.0, **dist(50.0, 50.0, 50.0, 50.0, 50.0)},
            "token_count_mismatches": 0,
            "client_fallback_requests": {"prompt": 20, "output": 20},
        },
        "failures": {"count": 0, "request_latency": None, "prompt_tokens": {"total": 0.0}},
    }


IP07_CONFIG = textwrap.dedent("""\
    api: {type: completion, streaming: true}
    data:
      type: random
      input_distribution: {min: 100, max: 100, mean: 100.0, std_dev: 0.0, type: fixed}
      output_distribution: {min: 50, max: 50, mean: 50.0, std_dev: 0.0, type: fixed}
    load:
      type: concurrent
      interval: 1.0
      stages:
      - {num_requests: 20, concurrency_level: 2, rate: 20.0, duration: 1}
      num_workers: 1
    server: {type: vllm, model_name: tiny-model, base_url: 'http://127.0.0.1:40907', ignore_eos: true}
    """)


def test_inference_perf_07_summary_conditions(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(IP07_CONFIG)
    path = tmp_path / "summary_lifecycle_metrics.json"
    path.write_text(json.dumps(ip07_report({"count": 20, "schedule_delay": dist(0.0, 0.0, 0.0, 0.0, 0.0)})))
    (m,), problems = read_benchmark(path)
    assert problems == []
    c = m.conditions
    assert c.model == "tiny-model" and c.status("model") == "inferred"
    # the summary has no load_summary.concurrency: the sidecar's one stage gives it
    assert c.concurrency == 2.0 and c.status("concurrency") == "inferred"
    assert c.sources["concurrency"] == "sidecar config.yaml: load.stages[0].concurrency_level"
    assert c.request_rate is None  # a concurrent stage's "rate: 20.0" is the scheduler's pacing
    assert c.prompt_tokens == 100.0 and c.sources["prompt_tokens"] == "successes.prompt_tokens.mean (measured)"
    assert c.output_tokens == 50.0 and c.sources["output_tokens"] == "successes.output_len.mean (measured)"
    tpot = m.metrics["tpot"]
    assert tpot.definition == "excludes_first_token"
    assert tpot.percentiles["p50"] == pytest.approx(0.020005)
    assert any("(N - 1)" in n and "0.7" in n for n in tpot.notes)
    # zero intra-chunk gaps at the low percentiles of ITL are possible, not a problem
    assert m.metrics["itl"].percentiles["p0.1"] == 0.0


def test_inference_perf_07_stage_concurrency_and_pacing_rate(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(IP07_CONFIG)
    path = tmp_path / "stage_0_lifecycle_metrics.json"
    path.write_text(json.dumps(ip07_report({
        "count": 20, "schedule_delay": dist(0.0, 0.0, 0.0, 0.0, 0.0), "send_duration": 9.81,
        "requested_rate": 20.0, "achieved_rate": 2.038, "concurrency": 2,
    })))
    (m,), problems = read_benchmark(path)
    assert problems == []
    c = m.conditions
    assert m.label == "stage 0"
    assert c.concurrency == 2.0 and c.status("concurrency") == "read"  # load_summary.concurrency
    assert c.request_rate is None
    assert c.extra["scheduled_rate"] == 20.0 and c.extra["achieved_rate"] == 2.038
    assert any("pacing" in n for n in m.notes)


def test_inference_perf_summary_stages_differ(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(IP07_CONFIG.replace(
        "- {num_requests: 20, concurrency_level: 2, rate: 20.0, duration: 1}",
        "- {num_requests: 20, concurrency_level: 2}\n  - {num_requests: 20, concurrency_level: 8}"))
    path = tmp_path / "summary_lifecycle_metrics.json"
    path.write_text(json.dumps(ip07_report({"count": 40})))
    (m,), _ = read_benchmark(path)
    assert m.conditions.concurrency is None
    assert any("differ in concurrency_level" in n for n in m.notes)
    stage1 = tmp_path / "stage_1_lifecycle_metrics.json"
    stage1.write_text(json.dumps(ip07_report({"count": 20})))  # no load_summary.concurrency
    (s1,), _ = read_benchmark(stage1)
    assert s1.conditions.concurrency == 8.0  # stages[1]
    assert s1.conditions.sources["concurrency"] == "sidecar config.yaml: load.stages[1].concurrency_level"


def test_inference_perf_constant_rate_from_sidecar(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(textwrap.dedent("""\
        load:
          type: constant
          stages:
          - {rate: 5.0, duration: 30}
        server: {type: vllm, model_name: m}
        """))
    path = tmp_path / "summary_lifecycle_metrics.json"
    path.write_text(json.dumps(ip07_report({"count": 150})))
    (m,), _ = read_benchmark(path)
    assert m.conditions.request_rate == 5.0 and m.conditions.status("request_rate") == "inferred"
    assert m.conditions.concurrency is None


def test_inference_perf_sidecar_over_its_limit_is_not_read(tmp_path: Path) -> None:
    """A config.yaml beside the reports larger than 1 MiB is not the run's (was read whole, whatever its size)."""
    from budgetlint.bench import inference_perf

    config = textwrap.dedent("""\
        load:
          type: constant
          stages:
          - {rate: 5.0, duration: 30}
        server: {type: vllm, model_name: m}
        """)
    assert inference_perf.MAX_CONFIG_BYTES == 1024 * 1024
    (tmp_path / "config.yaml").write_text(config + "#" * (1024 * 1024 - len(config)))  # exactly 1 MiB: read
    path = tmp_path / "summary_lifecycle_metrics.json"
    path.write_text(json.dumps(ip07_report({"count": 150})))
    (m,), _ = read_benchmark(path)
    assert m.conditions.request_rate == 5.0
    (tmp_path / "config.yaml").write_text(config + "#" * (1024 * 1024 + 1 - len(config)))  # one byte more
    (m,), _ = read_benchmark(path)
    assert m.conditions.request_rate is None


def old_report(tpot_mean: float) -> dict:
    """The older layout (prompt_len); latency 0.4805, TTFT 0.0311, N = 63.15 (kubecon25 stage 0)."""
    return {
        "load_summary": {"count": 60, "send_duration": 58.5, "requested_rate": 1.0, "achieved_rate": 1.025},
        "successes": {
            "count": 60,
            "latency": {
                "request_latency": dist(0.4805, 0.4796, 0.49, 0.47, 0.50),
                "normalized_time_per_output_token": dist(0.00767, 0.00746, 0.008, 0.007, 0.009),
                "time_per_output_token": dist(tpot_mean, tpot_mean, tpot_mean * 1.02, tpot_mean * 0.98,
                                              tpot_mean * 1.03),
                "time_to_first_token": dist(0.0311, 0.0310, 0.040, 0.025, 0.041),
                "inter_token_latency": dist(tpot_mean, 3.7e-5, 0.01, 0.0, 0.02),
            },
            "throughput": {"output_tokens_per_sec": 64.2, "requests_per_sec": 1.0},
            "prompt_len": {"mean": 204.1},
            "output_len": {"mean": 63.15},
        },
        "failures": {"count": 0},
    }


def test_inference_perf_old_halved_tpot_is_not_per_token(tmp_path: Path) -> None:
    # decode 0.4805 - 0.0311 = 0.4494 s over N - 1 = 62.15 tokens -> 0.0072308 s per token;
    # the file says 0.0034734: 0.0034734 x 62.15 / 0.4494 = 0.4803, about half
    path = tmp_path / "stage_0_lifecycle_metrics.json"
    path.write_text(json.dumps(old_report(0.0034734)))
    (m,), problems = read_benchmark(path)
    assert problems == []
    tpot = m.metrics["tpot"]
    assert tpot.definition == OLD_TPOT_DEFINITION == "per_token_timestamp"
    assert any("= 0.48 x" in n and "#564" in n for n in tpot.notes)
    assert any("not compared" in n for n in m.notes)
    assert tpot.percentiles["p50"] == pytest.approx(0.0034734)  # kept as written, not rescaled
    assert m.conditions.prompt_tokens == pytest.approx(204.1)  # prompt_len still read
    assert m.conditions.request_rate == 1.0  # a constant-rate stage: requested_rate is the rate


def test_inference_perf_old_layout_per_token_tpot_kept(tmp_path: Path) -> None:
    # 0.0072308 x 62.15 / 0.4494 = 1.000: per output token, excluding the first
    path = tmp_path / "stage_0_lifecycle_metrics.json"
    path.write_text(json.dumps(old_report(0.0072308)))
    (m,), _ = read_benchmark(path)
    assert m.metrics["tpot"].definition == "excludes_first_token"
    assert any("= 1 x" in n for n in m.metrics["tpot"].notes)  # 1.000 in the rounding rule


def test_inference_perf_fixture_tpot_is_flagged(shared_dir: Path) -> None:
    path = (shared_dir / "fixtures" / "bench" / "inference-perf"
            / "kubecon25_vllm_llama31-8b_h100_stage_0_lifecycle_metrics.json")
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    (m,), _ = read_benchmark(path)
    # raw means: TPOT 0.0034734, latency 0.4804823, TTFT 0.0311273, output_len 63.15
    # 0.0034734 x 62.15 / (0.4804823 - 0.0311273) = 0.4804
    assert m.metrics["tpot"].definition == "per_token_timestamp"
    assert any("= 0.48 x" in n for n in m.metrics["tpot"].notes)


# ---- impossible latencies ----------------------------------------------------------------

VLLM = {
    "backend": "vllm", "model_id": "m", "num_prompts": 3, "completed": 3, "request_rate": 4.0,
    "total_input_tokens": 30, "total_output_tokens": 12,
    "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "p99_ttft_ms": 150.0,
    "mean_tpot_ms": 20.0, "median_tpot_ms": 20.0, "p99_tpot_ms": 25.0,
    "mean_itl_ms": 20.0, "median_itl_ms": 0.0, "p99_itl_ms": 30.0,
}


def impossible(problems: list) -> list[str]:
    return [p.message for p in problems if p.code == IMPOSSIBLE]


def test_negative_latency_is_a_problem_and_dropped(tmp_path: Path) -> None:
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps({**VLLM, "median_ttft_ms": -90.0}))
    (m,), problems = read_benchmark(path)
    (msg,) = impossible(problems)
    assert msg == "median_ttft_ms is -90: a latency cannot be negative; the value is ignored (not measured)"
    assert "p50" not in m.metrics["ttft"].percentiles  # not measured, never clamped
    assert m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.150)


def test_zero_where_impossible(tmp_path: Path) -> None:
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps({**VLLM, "p99_ttft_ms": 0.0, "mean_tpot_ms": 0, "p99_tpot_ms": 0}))
    (m,), problems = read_benchmark(path)
    msgs = impossible(problems)
    assert "p99_ttft_ms is 0: a p99 TTFT of zero is impossible; the value is ignored (not measured)" in msgs
    assert "mean_tpot_ms is 0: a mean TPOT of zero is impossible; the value is ignored (not measured)" in msgs
    assert "p99_tpot_ms is 0: a p99 TPOT of zero is impossible; the value is ignored (not measured)" in msgs
    assert len(msgs) == 3  # median_itl_ms 0.0 is possible: chunks read together
    assert m.metrics["itl"].percentiles["p50"] == 0.0
    assert m.metrics["tpot"].mean is None and "p99" not in m.metrics["tpot"].percentiles


@pytest.mark.parametrize("fmt", ["genai-perf", "guidellm", "inference-perf", "llmperf", "mlperf"])
def test_negative_latency_in_every_reader(tmp_path: Path, fmt: str) -> None:
    if fmt == "genai-perf":
        doc = json.loads(json.dumps(AIPERF_013))
        doc["time_to_first_token"]["p99"] = -5.0
        name, text, key = "a.json", json.dumps(doc), "time_to_first_token.p99"
    elif fmt == "guidellm":
        node = {"mean": 10.0, "median": 9.0, "count": 2, "percentiles": {"p99": -1.0, "p50": 9.0}}
        bench = {"type_": "generative_benchmark", "metrics": {"time_to_first_token_ms": {"successful": node}},
                 "request_totals": {"successful": 2, "total": 2}}
        name, text, key = "g.json", json.dumps({"benchmarks": [bench]}), "metrics.time_to_first_token_ms.p99"
    elif fmt == "inference-perf":
        doc = old_report(0.0072308)
        doc["successes"]["latency"]["request_latency"]["p90"] = -0.4
        name, text, key = "r.json", json.dumps(doc), "request_latency.p90"
    elif fmt == "llmperf":
        doc = {"results_ttft_s_quantiles_p50": 0.1, "results_ttft_s_quantiles_p99": -0.2,
               "results_ttft_s_mean": 0.12, "results_num_completed_requests": 5, "model": "m"}
        name, text, key = "s_summary.json", json.dumps(doc), "results_ttft_s_quantiles_p99"
    else:
        text = textwrap.dedent("""\
            ================================================
            MLPerf Results Summary
            ================================================
            SUT name : x
            Scenario : Server
            Mode     : PerformanceOnly
            Completed samples per second    : 10.00
            Mean First Token latency (ns)                : 198269106
            99.00 percentile first token latency (ns)    : -452744202
            """)
        name, key = "mlperf_log_summary.txt", "99.00 percentile first token latency (ns)"
    path = tmp_path / name
    path.write_text(text)
    _, problems = read_benchmark(path)
    msgs = impossible(problems)
    assert len(msgs) == 1 and msgs[0].startswith(key + " is -"), problems


def test_negative_per_request_values(tmp_path: Path) -> None:
    # vLLM --save-detailed arrays: request 2 has a negative TTFT, request 3 a zero one
    doc = {**VLLM, "ttfts": [0.1, -0.05, 0.0], "itls": [[0.02, 0.02], [0.02, 0.02], [0.02, 0.02]],
           "output_lens": [3, 3, 3], "errors": ["", "", ""]}
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps(doc))
    (m,), problems = read_benchmark(path)
    (msg,) = impossible(problems)
    assert msg == ("ttfts: 1 negative (lowest -0.05) and 1 zero of 3 per-request TTFT values "
                   "are impossible latencies; those requests' values are ignored")
    assert m.metrics["ttft"].count == 1 and m.metrics["ttft"].percentiles["p50"] == pytest.approx(0.1)


def test_llmperf_individual_negative_response_dropped(tmp_path: Path) -> None:
    ok = {"error_code": None, "error_msg": "", "ttft_s": 0.1, "end_to_end_latency_s": 1.1,
          "number_output_tokens": 50, "number_input_tokens": 100}
    bad = {**ok, "ttft_s": -0.1}
    path = tmp_path / "m_100_50_individual_responses.json"
    path.write_text(json.dumps([ok, bad, ok]))
    (m,), problems = read_benchmark(path)
    assert impossible(problems) == [
        "ttft_s: 1 negative (lowest -0.1) of 3 per-request TTFT values are impossible latencies; "
        "those requests' values are ignored"]
    assert m.metrics["ttft"].count == 2 and m.metrics["e2e"].count == 2
    assert m.metrics["tpot"].percentiles["p50"] == pytest.approx(0.02)  # (1.1 - 0.1) / 50
