"""Every real benchmark file under ../shared/fixtures/bench is read or refused,
and one file per format gives the exact numbers written in it (checked by hand
against the raw file; each expected value quotes the raw text)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from budgetlint.bench import from_native, read_benchmark, to_native
from budgetlint.bench.native import validation_errors

FIXTURE_ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "bench"
FIXTURE_FILES = (
    sorted(str(p.relative_to(FIXTURE_ROOT)) for p in FIXTURE_ROOT.rglob("*") if p.is_file())
    if FIXTURE_ROOT.is_dir()
    else ["(../shared absent)"]
)

#: files that are refused on purpose, with the reason's key words
REFUSED = {
    "PROVENANCE.md": "not JSON and not a known text format",
    "inference-perf/kubecon25_config.yaml": "run conditions, not measurements",
}


@pytest.fixture()
def bench_dir(shared_dir: Path) -> Path:
    root = shared_dir / "fixtures" / "bench"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    return root


def _read(bench_dir: Path, rel: str):
    ms, problems = read_benchmark(bench_dir / rel)
    return ms, problems


@pytest.mark.parametrize("rel", FIXTURE_FILES)
def test_every_fixture_is_read_or_refused(bench_dir: Path, rel: str) -> None:
    ms, problems = read_benchmark(bench_dir / rel)
    if rel in REFUSED:
        assert ms == []
        assert any(REFUSED[rel] in p.message for p in problems), problems
        return
    assert ms, f"{rel}: nothing read; problems: {problems}"
    for m in ms:
        assert m.source == str(bench_dir / rel)
        for name, metric in m.metrics.items():
            assert name in ("ttft", "tpot", "itl", "e2e")
            assert metric.definition
            for label, value in metric.percentiles.items():
                assert label.startswith("p") and label not in ("p999", "pmedian")
                assert math.isfinite(value)
    # each normalised file is a valid native document and round-trips
    doc = to_native(ms)
    assert validation_errors(doc) == []
    assert from_native(json.loads(json.dumps(doc))) == ms
    # only the all-failed vLLM file carries a problem
    if "all-requests-failed" in rel:
        assert [p.code for p in problems] == ["bench-no-successful-requests"]
    else:
        assert problems == []


def test_vllm_save_result(bench_dir: Path) -> None:
    (m,), _ = _read(bench_dir, "vllm/vllm-0.25.1_cpu_opt125m_save-result_prettyprinted.json")
    assert m.format == "vllm"
    ttft, tpot, itl = m.metrics["ttft"], m.metrics["tpot"], m.metrics["itl"]
    assert ttft.percentiles["p50"] == pytest.approx(55.68139649994919e-3)  # raw: "median_ttft_ms": 55.68139649994919
    assert ttft.percentiles["p99"] == pytest.approx(734.4049174101428e-3)  # raw: "p99_ttft_ms": 734.4049174101428
    assert ttft.mean == pytest.approx(215.53594200008774e-3)  # raw: "mean_ttft_ms": 215.53594200008774
    assert tpot.percentiles["p99"] == pytest.approx(11.979541883350674e-3)  # raw: "p99_tpot_ms": 11.979541883350674
    assert tpot.definition == "excludes_first_token"
    assert itl.mean == pytest.approx(11.265836941667354e-3)  # raw: "mean_itl_ms": 11.265836941667354
    assert itl.definition == "pooled_gaps"
    assert "e2e" not in m.metrics  # no *_e2el_ms keys: not measured
    assert set(ttft.percentiles) == {"p50", "p99"}  # nothing interpolated
    c = m.conditions
    assert c.model == "facebook/opt-125m" and c.status("model") == "read"  # raw: "model_id"
    assert c.request_rate == math.inf  # raw: "request_rate": "inf"
    assert c.concurrency == 2.0  # raw: "max_concurrency": 2
    assert c.prompt_tokens == 32.0 and c.status("prompt_tokens") == "inferred"  # raw: 256 / 8
    assert c.measured_at == "client" and c.status("measured_at") == "inferred"
    assert c.status("hardware") == "unknown"
    assert m.output_throughput == pytest.approx(82.89297074037474)  # raw: "output_throughput"


def test_vllm_jsonl_and_sweep(bench_dir: Path) -> None:
    ms, _ = _read(bench_dir, "vllm/vllm-bench-automation_llmd_l40s_llama3b_jsonl.json")
    assert len(ms) == 9
    first = ms[0]
    assert first.label == "line 1"
    assert first.conditions.request_rate == 10.0  # raw: "request_rate": 10.0
    assert first.conditions.hardware == "4xNVIDIA_L40S"  # raw: "gpu": "4xNVIDIA_L40S"
    assert first.conditions.prompt_tokens == 1000.0  # raw: "input_len": "1000"
    assert first.conditions.status("prompt_tokens") == "read"
    assert first.metrics["ttft"].percentiles["p99"] == pytest.approx(98.69780922984769e-3)  # raw: "p99_ttft_ms": 98.69780922984769
    sweep, _ = _read(bench_dir, "vllm/vllm-0.25.1_bench-sweep_summary_maxconc2.json")
    assert [m.label for m in sweep] == ["run 0", "run 1"]
    assert sweep[0].metrics["e2e"].percentiles["p99"] == pytest.approx(876.8009717071254e-3)  # raw: "p99_e2el_ms": 876.8009717071254


def test_sglang_old_keys_and_bare_infinity(bench_dir: Path) -> None:
    ms, problems = _read(bench_dir, "sglang/datacrunch_h200_llama33-70b_online.jsonl")
    assert problems == []
    m = ms[0]
    assert m.format == "sglang"
    assert m.metrics["ttft"].percentiles == {"p50": pytest.approx(85.74514742940664e-3)}  # raw: "median_ttft_ms": 85.74514742940664
    assert m.metrics["ttft"].mean is None  # no mean_ttft_ms in old lines
    assert m.metrics["e2e"].mean == pytest.approx(7840.616212638561e-3)  # raw: "mean_e2e_latency_ms": 7840.616212638561
    assert m.metrics["itl"].percentiles["p50"] == pytest.approx(13.638956006616354e-3)  # raw: "median_itl_ms": 13.638956006616354
    assert "p99" not in m.metrics["ttft"].percentiles  # old SGLang: no p99 at all
    assert m.conditions.request_rate == 1.0  # raw: "request_rate": 1.0
    assert m.conditions.model is None
    offline, _ = _read(bench_dir, "sglang/datacrunch_h200_llama33-70b_offline_inf_rate.jsonl")
    assert offline[0].conditions.request_rate == math.inf  # raw: "request_rate": Infinity
    deepseek, _ = _read(bench_dir, "sglang/datacrunch_h200_deepseek_dp_mla.jsonl")
    assert deepseek[0].conditions.prompt_tokens == 1.0  # raw: "random_input_len": 1, "random_range_ratio": 1.0
    assert deepseek[0].conditions.status("prompt_tokens") == "read"


def test_genai_perf_json(bench_dir: Path) -> None:
    (m,), _ = _read(
        bench_dir,
        "genai-perf/FROM-ISSUE_perf_analyzer-issue298_genai-perf-24.12_trtllm_kserve_c100_streaming.json",
    )
    assert m.format == "genai-perf"
    assert m.metrics["ttft"].percentiles["p99"] == pytest.approx(425.02943662e-3)  # raw: "p99": 425.02943662 (ms)
    assert m.metrics["ttft"].mean == pytest.approx(184.63779366666665e-3)  # raw: "avg": 184.63779366666665
    tpot = m.metrics["tpot"]  # raw key inter_token_latency, per request (lat - ttft)/(osl - 1)
    assert tpot.percentiles["p50"] == pytest.approx(2.1787205e-3)  # raw: "p50": 2.1787205
    assert tpot.definition == "excludes_first_token"
    assert m.metrics["e2e"].percentiles["p90"] == pytest.approx(5882.4496025e-3)  # raw: "p90": 5882.4496025
    assert m.conditions.concurrency == 100.0  # raw: "concurrency": 100
    assert m.conditions.prompt_tokens == 200.0  # raw: "synthetic_input_tokens_mean": 200
    assert m.conditions.output_tokens == 500.0  # raw: "output_tokens_mean": 500
    assert m.output_throughput == pytest.approx(44190.56002502682)  # raw: "avg": 44190.56002502682


def test_llmperf_summary(bench_dir: Path) -> None:
    (m,), _ = _read(bench_dir, "llmperf/leaderboard_summary_anyscale_70b.json")
    assert m.format == "llmperf" and m.tool_version == "2023-08-31"
    assert m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.4745305190600024)  # raw: "results_ttft_s_quantiles_p99"
    assert m.metrics["e2e"].percentiles["p50"] == pytest.approx(2.259533027999993)  # raw: "results_end_to_end_latency_s_quantiles_p50"
    tpot = m.metrics["tpot"]
    assert tpot.definition == "includes_ttft"  # LLMPerf's ITL includes TTFT
    assert tpot.percentiles["p50"] == pytest.approx(0.014559224685430442)  # raw: "results_inter_token_latency_s_quantiles_p50"
    assert m.conditions.concurrency == 5.0  # raw: "num_concurrent_requests": 5
    assert m.conditions.model == "meta-llama/Llama-2-70b-chat-hf"
    assert m.conditions.num_requests == 150


def test_llmperf_individual_computed_percentiles(bench_dir: Path) -> None:
    (m,), _ = _read(bench_dir, "llmperf/leaderboard_individual_anyscale_70b.json")
    (summary,), _ = _read(bench_dir, "llmperf/leaderboard_summary_anyscale_70b.json")
    ttft = m.metrics["ttft"]
    assert ttft.method == "computed" and ttft.count == 150
    # LLMPerf's own quantiles are pandas' linear interpolation, as ours: they agree
    for label in ("p25", "p50", "p75", "p90", "p95", "p99"):
        assert ttft.percentiles[label] == pytest.approx(summary.metrics["ttft"].percentiles[label])
        assert m.metrics["e2e"].percentiles[label] == pytest.approx(summary.metrics["e2e"].percentiles[label])
    tpot = m.metrics["tpot"]
    assert tpot.definition == "budgetlint"  # converted exactly per request
    # the budgetlint TPOT excludes TTFT: below LLMPerf's TTFT-including figure
    assert tpot.mean < summary.metrics["tpot"].mean


def test_guidellm_v03(bench_dir: Path) -> None:
    (m,), _ = _read(bench_dir, "guidellm/guidellm_v0.3-format_benchmarks_stripped.json")
    ttft = m.metrics["ttft"]
    assert ttft.percentiles["p50"] == pytest.approx(16.38054847717285e-3)  # raw: "median": 16.38054847717285 (no p50 key)
    assert ttft.percentiles["p99.9"] == pytest.approx(21.281957626342773e-3)  # raw: "p999": 21.281957626342773
    assert ttft.percentiles["p0.1"] == pytest.approx(15.790939331054688e-3)  # raw: "p001": 15.790939331054688
    assert ttft.percentiles["p5"] == pytest.approx(15.971660614013672e-3)  # raw: "p05": 15.971660614013672
    assert m.metrics["e2e"].percentiles["p99"] == pytest.approx(0.6891846656799316)  # raw: request_latency "p99" (seconds)
    assert m.metrics["tpot"].definition == "budgetlint"
    assert m.metrics["tpot"].mean == pytest.approx(4.90300272307966e-3)  # raw: time_per_output_token_ms "mean"
    assert m.conditions.concurrency == 1.0 and m.conditions.status("concurrency") == "inferred"  # synchronous
    assert m.conditions.prompt_tokens == 256.0  # raw: "data": "prompt_tokens=256,output_tokens=128"
    assert m.conditions.num_requests == 47 and m.conditions.successful_requests == 46


def test_guidellm_report_v2(bench_dir: Path) -> None:
    ms, _ = _read(bench_dir, "guidellm/guidellm_v0.8dev_report_v2_mockserver.json")
    assert [m.conditions.request_rate for m in ms] == [2.0, 4.0]  # raw: strategy "rate": 2.0 / 4.0
    m = ms[0]
    assert m.tool_version == "0.8.0.dev18"
    assert m.metrics["ttft"].percentiles["p50"] == pytest.approx(11.276006698608398e-3)  # raw: "p50": 11.276006698608398
    assert m.metrics["tpot"].definition == "excludes_first_token"
    assert m.conditions.model == "e2e-mock-model"


def test_inference_perf_stage(bench_dir: Path) -> None:
    (m,), _ = _read(bench_dir, "inference-perf/kubecon25_vllm_llama31-8b_h100_stage_0_lifecycle_metrics.json")
    assert m.label == "stage 0"
    ttft = m.metrics["ttft"]
    assert ttft.percentiles["p50"] == pytest.approx(0.031026913959067315)  # raw: "median": 0.031026913959067315
    assert ttft.percentiles["p99.9"] == pytest.approx(0.040956884782877775)  # raw: "p99.9": 0.040956884782877775
    assert ttft.percentiles["p0.1"] == pytest.approx(0.024646742470911705)  # raw: "p0.1": 0.024646742470911705
    assert m.metrics["tpot"].percentiles["p99"] == pytest.approx(0.003521602816623455)  # raw: time_per_output_token "p99"
    assert m.conditions.request_rate == 1.0  # raw: "requested_rate": 1.0
    # model from the sidecar config.yaml, marked inferred
    assert m.conditions.model == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert m.conditions.status("model") == "inferred"
    assert m.output_throughput == pytest.approx(64.23350089997027)  # raw: "output_tokens_per_sec"
    (prom,), _ = _read(bench_dir, "inference-perf/kubecon25_vllm_llama31-8b_h100_stage_0_prometheus_metrics.json")
    assert prom.conditions.measured_at == "server"
    assert prom.metrics["ttft"].percentiles["p99"] == pytest.approx(4.955306)  # raw: "p99": 4.955306


def test_mlperf_server_and_offline(bench_dir: Path) -> None:
    (m,), _ = _read(bench_dir, "mlperf/v4.1_NVIDIA_H200x8_TRT_llama2-70b-99_Server_mlperf_log_summary.txt")
    assert m.format == "mlperf"
    assert m.metrics["ttft"].percentiles["p99"] == pytest.approx(0.452744202)  # raw: "99.00 percentile first token latency (ns)   : 452744202"
    assert m.metrics["ttft"].mean == pytest.approx(0.198269106)  # raw: "Mean First Token latency (ns) : 198269106"
    assert m.metrics["tpot"].percentiles["p99.9"] == pytest.approx(0.157046729)  # raw: "99.90 percentile time to output token (ns)   : 157046729"
    assert m.metrics["tpot"].percentiles["p97"] == pytest.approx(0.140157508)  # raw: "97.00 percentile time to output token (ns)   : 140157508"
    assert m.metrics["e2e"].percentiles["p50"] == pytest.approx(31.107282906)  # raw: "50.00 percentile latency (ns)   : 31107282906"
    assert m.constraints["ttft_latency"] == pytest.approx(2.0)  # raw: "ttft_latency (ns): 2000000000"
    assert m.constraints["tpot_latency"] == pytest.approx(0.2)  # raw: "tpot_latency (ns): 200000000"
    assert m.constraints["target_qps"] == 101.0  # raw: "target_qps : 101"
    assert m.constraints["result"] == "VALID"
    assert m.conditions.request_rate == 101.0
    assert m.output_throughput == pytest.approx(29228.22)  # raw: "Completed tokens per second: 29228.22"
    (off,), _ = _read(bench_dir, "mlperf/v4.1_NVIDIA_H200x8_TRT_llama2-70b-99_Offline_mlperf_log_summary.txt")
    assert off.metrics == {}  # Offline latencies are not per-request latencies
    assert off.output_throughput == pytest.approx(31302.7)  # raw: "Tokens per second: 31302.7"
    (inter,), _ = _read(bench_dir, "mlperf/v5.1_ASUSTeK_MI325Xx8_llama2-70b-99.9_Interactive_mlperf_log_summary.txt")
    assert inter.constraints["ttft_latency"] == pytest.approx(0.45)
    assert inter.constraints["tpot_latency"] == pytest.approx(0.04)
