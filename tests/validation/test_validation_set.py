"""benchmarks/validation: the committed budgets are build.py's output from the public runs (the
rules stated once), and run.py reads each run's measured figures as its file states them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[2] / "benchmarks" / "validation"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "bench"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/fixtures/bench absent (COMMON.md: symlink it)")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"validation_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_the_committed_budgets_are_build_py_output() -> None:
    build = _load("build")
    runs = build.runs()
    assert len(runs) == 24  # 13 MLPerf, 6 vLLM, 5 SGLang
    committed = {p.name for p in HERE.glob("*.yaml")} - {"models.yaml"}
    assert committed == {f"{b['name']}.yaml" for b in runs}
    for b in runs:
        assert (HERE / f"{b['name']}.yaml").read_text() == build.render(b), b["name"]


def test_the_rules_by_hand() -> None:
    """Two runs checked against their files by hand: the v4.1 H200 Server summary (101.25
    scheduled QPS, 31,302.7 / 107.477 = 291.25 tokens a reply: TPOT 200 ms x 290.25 / 291.25 =
    199.3 ms; 141 GB holds 69 GB of fp8 weights in half: 8 replicas of 1), and the SGLang sweep's
    rate-16 line (3,200 requests sent over 200 s, done at 383 s: drained 183 s, more than half
    the span: overloaded)."""
    build = _load("build")
    by = {b["name"]: b for b in build.runs()}
    h200 = by["mlperf-v4.1-nvidia-h200x8-server"]
    assert h200["workload"]["arrival_rate"] == "101.25 request/s"
    assert h200["promise"] == {"ttft": "2000 ms", "tpot": "199.3 ms"}
    assert (h200["deployment"]["devices"], h200["deployment"]["replicas"]) == (1, 8)
    h100 = by["mlperf-v4.0-nvidia-dgx-h100x2-server"]
    assert (h100["deployment"]["devices"], h100["deployment"]["replicas"]) == (2, 1)  # 69 GB > 80 / 2
    assert by["sglang-h200x4-llama33-70b-r16"]["expect"] == "overloaded"
    assert by["sglang-h200x4-llama33-70b-r8"]["expect"] == "sustained"  # drained 47 s of a 300 s span
    assert by["sglang-h200x4-llama33-70b-r1"]["workload"]["prompt_tokens"] == {"uniform": [1, 1024]}


def test_the_harness_balancer_by_hand() -> None:
    """NVIDIA's v5.1 harness (closed/<submitter>/code/llmlib/config.py: ``case C.Scenario.Server:
    "load_balancing"``, ``case _: "round_robin"``; factory.py: the core with the fewest pending
    samples) spreads a Server run's queries least loaded and an Interactive run's round robin
    (Interactive is its own C.Scenario member): the four v5.1 ``_TRT`` Server budgets state
    ``least_loaded``, and so does v4.1's H200 x 8 Server (its LLM harness's default policy 2,
    ``loadBalancing``: the core with the fewest transactions in flight); their Interactive ones, the
    AMD (vLLM harness) runs and v4.0's one replica state nothing, budgetlint's round robin (issue 25,
    ttft25)."""
    build = _load("build")
    stated = {b["name"]: b["deployment"].get("load_balancer") for b in build.runs() if b["format"] == "mlperf"}
    assert {k for k, v in stated.items() if v == "least_loaded"} == {
        "mlperf-v5.1-cisco-hgx-h100-h100-sxm-80gbx16-trt-server",
        "mlperf-v5.1-dell-xe7745-h200-nvl-141gbx8-trt-server",
        "mlperf-v5.1-dell-xe9680-h200-sxm-141gbx8-trt-server",
        "mlperf-v5.1-nvidia-b200-sxm-180gbx8-trt-server",
        "mlperf-v4.1-nvidia-h200x8-server",
    }
    assert {v for v in stated.values()} == {"least_loaded", None}  # 5 stated, the other 8 MLPerf runs nothing


def test_the_v4_harness_facts_by_hand() -> None:
    """The 2024 rounds' NVIDIA configs as read (issue 25): v4.0's and v4.1's LLM harness define
    ``use_graphs`` false with "TODO: enable cuda graph" (main_llm.cc :56 / :55) and v4.1's parent config
    sets ``use_graphs = False``: both state ``cuda_graphs: false``. v4.1's H200 x 8 Server class inherits
    ``gpu_batch_size`` 896 from H200_SXM_141GBx1 and ``max_num_tokens = 4096`` from the parent config;
    v4.0's 2 x H100 sets ``gpu_batch_size = 1024`` (vLLM's default, the same) and its token limit was
    not read (8,192 kept). Until this, both runs stated 1,024 / 8,192 and CUDA graphs on."""
    build = _load("build")
    by = {b["name"]: b["deployment"] for b in build.runs()}
    h200, h100 = by["mlperf-v4.1-nvidia-h200x8-server"], by["mlperf-v4.0-nvidia-dgx-h100x2-server"]
    assert (h200["cuda_graphs"], h200["max_num_seqs"], h200["max_num_batched_tokens"]) == (False, 896, 4096)
    assert (h100["cuda_graphs"], h100["max_num_seqs"], h100["max_num_batched_tokens"]) == (False, 1024, 8192)
    assert h100["engine"] == h200["engine"] == "trtllm"  # so the TensorRT-LLM fixed part applies

def test_the_llmd_router_by_hand() -> None:
    """The vLLM sweep's 4 replicas sit behind llm-d's inference scheduler, whose picks tie on its
    prompts and loads (no routing in no-features; a random pick on tied scores: build.py LLMD_ROUTER):
    all six budgets state ``random``; the SGLang sweep (one replica) states nothing (issue 25, ttft25)."""
    build = _load("build")
    sweeps = [b for b in build.runs() if b["format"] in ("vllm", "sglang")]
    assert {b["name"]: b["deployment"].get("load_balancer") for b in sweeps if b["format"] == "vllm"} == {
        f"vllm-llmd-l40s-llama3b-{d}-r{r}": "random" for d in ("base", "kvcache", "no-features") for r in (10, 30)}
    assert {b["deployment"].get("load_balancer") for b in sweeps if b["format"] == "sglang"} == {None}

def test_run_py_reads_each_format() -> None:
    run = _load("run")
    m = run.measured(HERE / "mlperf-v4.1-nvidia-h200x8-server.yaml")
    assert m["ttft_s"]["p99"] == pytest.approx(0.453, abs=0.001)
    v = run.measured(HERE / "vllm-llmd-l40s-llama3b-base-r10.yaml")  # line 4: p99 TTFT 89.8 ms
    assert v["ttft_s"]["p99"] == pytest.approx(0.0898, abs=1e-4)
    # TPOT p99 17.14 ms over N - 1 = 274.36 of N = 275.36 tokens (82,608 / 300)
    assert v["tpot_s"]["p99"] == pytest.approx(0.0171377 * (82608 / 300 - 1) / (82608 / 300), rel=1e-5)
    s = run.measured(HERE / "sglang-h200x4-llama33-70b-r1.yaml")  # medians only
    assert set(s["ttft_s"]) == {"p50"} and s["ttft_s"]["p50"] == pytest.approx(0.08575, abs=1e-5)


def test_the_amd_runs_state_their_scheduler_steps() -> None:
    """The AMD v5.1 runs' vLLM V0 engine configs set ``num_scheduler_steps`` (ntuhpc/inference_results_v5.1 @
    387c3dd, closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/server_mi300x.yaml:21 ``9``,
    interactive_mi300x.yaml:15 ``8``, server_mi325x.yaml:33 ``9``): their budgets state
    ``scheduler_steps`` so; ASUSTeK's MI325X Interactive (vLLM V1, ``num_scheduler_steps: 1``) and every
    other run state nothing (issue 25, multistep25)."""
    build = _load("build")
    stated = {b["name"]: b["deployment"]["scheduler_steps"] for b in build.runs() if "scheduler_steps" in b["deployment"]}
    assert stated == {"mlperf-v5.1-amd-8xmi300x-2xepyc-9575f-server": 9,
                      "mlperf-v5.1-amd-8xmi300x-2xepyc-9575f-interactive": 8,
                      "mlperf-v5.1-amd-8xmi325x-2xepyc-9575f-1-server": 9}


def test_the_amd_runs_state_their_own_scheduler_limits() -> None:
    """The AMD-harness vLLM configs' limits as read (ntuhpc/inference_results_v5.1 @ a634ab77,
    closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/): server_mi300x.yaml :30 / :29
    ``max_num_seqs: 650``, ``max_num_batched_tokens: 40960``; interactive_mi300x.yaml :24 / :23 600 / 40960;
    server_mi325x.yaml :42 / :41 1024 / 40960; ASUSTeK's interactive_mi325x.yaml :44 / :43 3840 / 43008.
    Until acc41 they stated vLLM's 1,024 / 8,192 (issue 25)."""
    build = _load("build")
    by = {b["name"]: b["deployment"] for b in build.runs()}
    limits = {name: (by[name]["max_num_seqs"], by[name]["max_num_batched_tokens"]) for name in by
              if "-amd-" in name or "-asustek-" in name}
    assert limits == {"mlperf-v5.1-amd-8xmi300x-2xepyc-9575f-server": (650, 40960),
                      "mlperf-v5.1-amd-8xmi300x-2xepyc-9575f-interactive": (600, 40960),
                      "mlperf-v5.1-amd-8xmi325x-2xepyc-9575f-1-server": (1024, 40960),
                      "mlperf-v5.1-asustek-mi325xx8-interactive": (3840, 43008)}


def test_ciscos_16_h100_states_its_tp2_classes_limits() -> None:
    """Cisco's 16 x H100 Server: every H100 SXM TP 2 class of closed/Cisco/configs/llama2-70b/Server/__init__.py
    has ``gpu_batch_size`` 2048 (TP2x1 :132, inherited by TP2x2 / TP2x4) and the parent config's
    ``max_num_tokens`` is 2048 (:52); the 1,024 assumed before is below the run's own decoding batch, 1,100 a
    replica by Little's law: 209.94 / 8 = 26.24 request/s x 292.9 tokens (61,101.32 / 208.63) x 143.1 ms (issue 25, acc43)."""
    build = _load("build")
    dep = {b["name"]: b["deployment"] for b in build.runs()}["mlperf-v5.1-cisco-hgx-h100-h100-sxm-80gbx16-trt-server"]
    assert (dep["max_num_seqs"], dep["max_num_batched_tokens"], dep["devices"], dep["replicas"]) == (2048, 2048, 2, 8)
    assert 209.94 / 8 * 61101.32 / 208.63 * 0.1431 > 1024


def test_the_2024_tensorrt_llm_runs_saturate_at_their_own_offline_throughput(tmp_path: Path, monkeypatch) -> None:
    """NVIDIA's MLPerf v4.0 2 x H100 Server budget states its harness's TensorRT-LLM build (main of
    2024-02-21, 0.9.0.dev: V40 closed/NVIDIA/Makefile.build:96-97) and so takes that release's compute rows
    (docs/calibration.md "Compute defaults of older TensorRT-LLM releases"): its saturation is within 5 % of
    the same system's own v4.0 Offline run, 18.9752 samples/s (mlcommons/inference_results_v4.0 @ 3c4a1cf,
    closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx2_TRT/llama2-70b-99.9/Offline; not among the rows, which
    are 8-device systems). At the v5.1 rows (before acc44) it saturated at 26.4 request/s, 1.39 x."""
    from budgetlint.run.check import Options, run_check

    name = "mlperf-v4.0-nvidia-dgx-h100x2-server"
    for f in (f"{name}.yaml", "models.yaml"):
        (tmp_path / f).write_text((HERE / f).read_text())
    monkeypatch.chdir(tmp_path)
    report = run_check([f"{name}.yaml", "models.yaml"], Options(use_codeowners=False, jobs=1))
    row = {r.name: r for r in report.budgets}[name].as_dict()
    saturation = row["load"]["saturation_request_per_s"]  # one replica
    assert saturation == pytest.approx(18.9752, rel=0.05)
    assert "under TensorRT-LLM 0.9.0.dev" in str(row)
