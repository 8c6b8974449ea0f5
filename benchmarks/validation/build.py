"""Write the validation set's budgets from the public runs (issue 25).

Every assumption is stated once, here, as a rule applied to every run of its kind
(README.md repeats them in words); the budgets are this script's output, committed so
that ``run.py`` and a reader need nothing else:

    python benchmarks/validation/build.py      # rewrites benchmarks/validation/*.yaml

The runs: ``RUNS`` below, each one public file (``../shared/fixtures/bench`` for the
shared fixtures, ``measured/`` for the MLPerf summaries copied here; README.md gives
each file's repository and commit).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHARED = REPO.parent / "shared" / "fixtures" / "bench"

# --- the rules -------------------------------------------------------------------------

#: MLPerf: the submitter's system name -> the catalog accelerator (budgetlint/model/catalog)
MLPERF_HARDWARE = [("H200_NVL", "h200-nvl"), ("H200-NVL", "h200-nvl"), ("H200", "h200-sxm"),
                   ("H100", "h100-sxm"), ("B200", "b200"), ("MI325X", "mi325x"), ("MI300X", "mi300x")]
#: accelerator memory in GB (the catalog's), for the TP rule below
MEMORY_GB = {"h200-nvl": 141, "h200-sxm": 141, "h100-sxm": 80, "b200": 180, "mi325x": 256, "mi300x": 192}
#: Llama-2-70B's parameters (models.yaml) and bytes per weight at each precision
LLAMA2_70B_PARAMS = 68.98e9
BYTES = {"fp8": 1.0, "fp4": 0.5, "bf16": 2.0}
#: a length distribution's p95 over its mean where the source gives only the mean (replies; prompts)
REPLY_P95_OVER_MEAN = 2.5
#: MLPerf's llama2-70b prompts (no summary states prompt lengths): the official dataset,
#: open_orca_gpt4_tokenized_llama.sampled_24576.pkl (mlcommons/inference language/llama2-70b
#: processorca.py: 24,576 samples, input < 1,024 tokens), holds 5,463,976 input tokens in all,
#: 48 to 1,021 a sample. Those three figures are the dataset's own, read from the official pickle
#: (md5 c247a315b9328365f66d2c2585b35cd4) by FlashLab-MBZUAI/HBFSim @ 96cf1b37
#: validation/calibration/h100-llama2-70b-calibration-protocol.json ("lengths_csv": "input_tokens").
#: So the mean is 5,463,976 / 24,576 = 222.33 tokens (this rule said 300 until issue 25); the
#: spread is not published: p95 REPLY_P95_OVER_MEAN x the mean, capped at the dataset's 1,021.
MLPERF_INPUT_TOKENS, MLPERF_SAMPLES, MLPERF_INPUT_MAX = 5_463_976, 24_576, 1021
_PROMPT_MEAN = round(MLPERF_INPUT_TOKENS / MLPERF_SAMPLES, 2)
MLPERF_PROMPT = {"lognormal": {"mean": _PROMPT_MEAN, "p95": round(REPLY_P95_OVER_MEAN * _PROMPT_MEAN, 1),
                               "max": MLPERF_INPUT_MAX}}
#: MLPerf runs whose submission's engine config runs without CUDA graphs, stated as
#: ``deployment.cuda_graphs: false`` (docs/calibration.md, "Without CUDA graphs"): system name ->
#: the config file saying so, in the V51 mirror below. TensorRT-LLM (Dell, NVIDIA):
#: ``harness_fields.use_graphs: False`` in closed/<submitter>/configs/<system>/<scenario>/llama2-70b.py
#: (NVIDIA's code/llmlib/config.py binds it to use_cuda_graphs, default False); vLLM on ROCm (AMD,
#: ASUSTeK's AMD code): ``enforce_eager: True`` in the harness_llm model file named. Cisco's 16 x H100
#: (TensorRT-LLM): its class-style config sets no ``use_graphs``, and its harness's default is off
#: (closed/Cisco/code/llmlib/config.py:284 binds harness_fields.use_graphs to use_cuda_graphs, :298
#: ``use_cuda_graphs: bool = False``). The v4.0 and v4.1 NVIDIA runs (their own repositories, named
#: "V40" / "V41" in the values: mlcommons/inference_results_v4.0 @ 3c4a1cf196b70175cfe7c59e067cd1d923aa4f3f,
#: its stored files; mlcommons/inference_results_v4.1 @ 198fc46799b3328b36ee4bcbdebfa2db5a8e6183): the LLM
#: harness's flag is ``DEFINE_bool(use_graphs, false, "TODO: enable cuda graph for
#: the inference.")`` (closed/NVIDIA/code/harness/harness_llm/main_llm.cc, v4.0 :56, v4.1 :55), read
#: nowhere else in the v4.1 harness (llm_core.cc, llm_server.cc: no graph option passed to its
#: GptManager), and v4.1's configs/llama2-70b/__init__.py:32 sets ``use_graphs = False``. The
#: TensorRT-LLM fixed part they then take was fitted on v5.1's releases (an assumption for 2024's).
MLPERF_NO_CUDA_GRAPHS = {
    "DGX-H100x2_TRT": "V40 closed/NVIDIA/code/harness/harness_llm/main_llm.cc:56",
    "H200x8_TRT": "V41 closed/NVIDIA/code/harness/harness_llm/main_llm.cc:55, closed/NVIDIA/configs/llama2-70b/__init__.py:32",
    "XE9680_H200_SXM_141GBx8_TRT": "closed/Dell/configs/XE9680_H200_SXM_141GBx8/{scenario}/llama2-70b.py",
    "XE7745_H200_NVL_141GBx8_TRT": "closed/Dell/configs/XE7745_H200_NVL_141GBx8/{scenario}/llama2-70b.py",
    "B200-SXM-180GBx8_TRT": "closed/NVIDIA/configs/B200-SXM-180GBx8/{scenario}/llama2-70b.py",
    "HGX-H100_H100-SXM-80GBx16_TRT": "closed/Cisco/configs/llama2-70b/{scenario}/__init__.py",
    "8xMI300X_2xEPYC_9575F": "closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/{server,interactive}_mi300x.yaml",  # lowercase, unlike the {scenario} folders above
    "8xMI325X_2xEPYC_9575F_1": "closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/{server,interactive}_mi325x.yaml",
    "MI325Xx8": "closed/ASUSTeK/code_AMD/llama2-70b-99.9/harness_llm/models/llama2-70b/{server,interactive}_mi325x.yaml",
}
#: MLPerf TensorRT-LLM runs: the scheduler limits their engine config sets (system -> scenario ->
#: (max_num_seqs, max_num_batched_tokens)): ``model_fields.gpu_batch_size`` and
#: ``llm_fields.trtllm_runtime_flags`` ``max_num_tokens`` (chunked context on) in the config file
#: MLPERF_NO_CUDA_GRAPHS names for the system; the runs in neither table keep vLLM's defaults (below). v4.1 H200 x 8
#: (class ``H200_SXM_141GBx8``, V41 closed/NVIDIA/configs/llama2-70b/Server/__init__.py): ``gpu_batch_size``
#: 896 from ``H200_SXM_141GBx1`` (:158), ``max_num_tokens = 4096`` from the parent config
#: (configs/llama2-70b/__init__.py:34; TensorRT-LLM 0.10's GptManager without chunked context, llm_core.cc:77).
#: v4.0 2 x H100 (``H100_SXM_80GB_TP2x1``, V40 configs/llama2-70b/Server/__init__.py): ``gpu_batch_size =
#: 1024``, the default below; its parent config (the token limit) is not in the stored copy: vLLM's 8,192
MLPERF_TRTLLM_SCHEDULER = {
    "H200x8_TRT": {"Server": (896, 4096)},
    # Cisco's 16 x H100 (two nodes of 8, TP 2 a replica by the README's rule): the configs name no class for 16
    # devices; every H100 SXM TP 2 class in closed/Cisco/configs/llama2-70b/Server/__init__.py sets or inherits
    # gpu_batch_size {'llama2-70b': 2048} (H100_SXM_80GB_TP2x1 :132; TP2x2 :150, TP2x4 :156 subclass it), and the
    # parent configs/llama2-70b/__init__.py sets max_num_tokens 2048 (trtllm_runtime_flags :52) with chunked
    # context (:57); its PP 2 classes (1,024) would not hold the run's own batch, 1,100 a replica by Little's law
    # (step_at_real_batch.py). 1,024 / 8,192 (vLLM's) until acc43
    "HGX-H100_H100-SXM-80GBx16_TRT": {"Server": (2048, 2048)},
    "XE9680_H200_SXM_141GBx8_TRT": {"Server": (2048, 1536), "Interactive": (512, 256)},
    "XE7745_H200_NVL_141GBx8_TRT": {"Server": (2048, 1536), "Interactive": (256, 256)},
    "B200-SXM-180GBx8_TRT": {"Server": (2048, 3584), "Interactive": (768, 768)},
}
#: The AMD-harness (vLLM) runs' own limits, the same shape, from the configs MLPERF_NO_CUDA_GRAPHS names (V51
#: mirror @ a634ab77, closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/): server_mi300x.yaml :30
#: ``max_num_seqs: 650``, :29 ``max_num_batched_tokens: 40960``; interactive_mi300x.yaml :24 ``600``, :23
#: ``40960``; server_mi325x.yaml :42 ``1024``, :41 ``40960``; ASUSTeK's closed/ASUSTeK/code_AMD/llama2-70b-99.9/
#: .../interactive_mi325x.yaml :44 ``3840``, :43 ``43008``. Stated as read (vLLM's 1,024 / 8,192 until acc42):
#: neither binds at the simulated batches (every percentile the same to the digit), but the MI300X runs'
#: saturation, 650 / 600 slots sharing each iteration's fixed part, falls to 0.95 x their Offline throughput
#: (which ran 1,792), so the Server run (utilisation 0.952) is in the capacity band: not shown
MLPERF_VLLM_SCHEDULER = {
    "8xMI300X_2xEPYC_9575F": {"Server": (650, 40960), "Interactive": (600, 40960)},
    "8xMI325X_2xEPYC_9575F_1": {"Server": (1024, 40960)},
    "MI325Xx8": {"Interactive": (3840, 43008)},
}
#: MLPerf TensorRT-LLM runs: the TensorRT-LLM build each submission's code pins (closed/<submitter>/Makefile.build),
#: stated as ``deployment.engine_version``: a release older than the current compute rows' takes its own round's
#: Offline rows (budgetlint/physics/default_efficiency.py COMPUTE_BY_RELEASE; issue 25, acc44). V40 :96-97
#: ``# 2/21/2024 Github main`` ``TRTLLM_PUBLIC_HASH = eb8f26c7...`` (a 0.9.0.dev build: heldout_v40/README.md);
#: V41 :95 ``USE_RELEASE_TRTLLM ?= 1``, :103-104 ``# 7/16/2024 Github main`` ``TRTLLM_PUBLIC_HASH = 2d234357...``,
#: whose tensorrt_llm/version.py says ``0.12.0.dev2024071600``; V51 NVIDIA :109-110 and Dell :109-110 ``# 7/24/25
#: 1.0-mlpinf side branch``; Cisco :114-115 ``TRTLLM_HASH ?= b6cca6db...`` ``# 2/18/2025 GitHub release main`` (the
#: public nightly of that day is 0.18.0.dev2025021800). Until acc44 no run stated one (every run took the v5.1 rows)
MLPERF_TRTLLM_RELEASE = {
    "DGX-H100x2_TRT": "0.9.0.dev",
    "H200x8_TRT": "0.12.0.dev2024071600",
    "HGX-H100_H100-SXM-80GBx16_TRT": "0.18.0.dev",
    "XE9680_H200_SXM_141GBx8_TRT": "1.0",
    "XE7745_H200_NVL_141GBx8_TRT": "1.0",
    "B200-SXM-180GBx8_TRT": "1.0",
}
#: both tables, by system (no system is in both)
MLPERF_SCHEDULER = {**MLPERF_TRTLLM_SCHEDULER, **MLPERF_VLLM_SCHEDULER}
#: MLPerf: the engine, from the system name's ``_TRT`` suffix (NVIDIA's harness convention: the
#: submission runs TensorRT-LLM, closed/<submitter>/code/harness and configs/<system>/<scenario>/
#: llama2-70b.py with ``trtllm_build_flags``), stated as ``deployment.engine: trtllm``. With
#: ``cuda_graphs: false`` it selects the TensorRT-LLM fixed part fitted on the MLPerf runs held out
#: of this set (trtllm_fixed_part.py, heldout/README.md; docs/calibration.md "TensorRT-LLM without
#: CUDA graphs"); elsewhere it changes nothing (no TensorRT-LLM release defaults are pinned).
MLPERF_TRTLLM_SUFFIX = "_TRT"  # in the summary file name: <system>_TRT_<benchmark>
#: MLPerf: how NVIDIA's harness (code/llmlib, which the v5.1 ``_TRT`` runs of this set run: Dell, NVIDIA,
#: Cisco; the v4.0 and v4.1 harnesses were not read, nothing is stated for them) spreads the queries over its engines ("cores", one a replica), stated as
#: ``deployment.load_balancer``. The Server scenario sends each query to the core with the fewest
#: pending samples (enqueued, final token not yet returned), the first such core on ties:
#: closed/<submitter>/code/llmlib/config.py ``traffic_distribution_policy`` (NVIDIA :188-193, Dell
#: :183-189, Cisco :183-188: ``case C.Scenario.Server: "load_balancing"``, ``case _: "round_robin"``)
#: and llmlib/factory.py ``load_balancing()`` (``min(queue_sizes, key=queue_sizes.get)`` over
#: ``core.get_num_pending_samples()``): budgetlint's ``least_loaded``. Interactive is its own
#: ``C.Scenario`` member (code/common/constants.py:290, mapped to LoadGen's Server only in
#: ``to_lg_obj``), so it takes ``case _``: round robin, budgetlint's default, nothing stated. No
#: submitter's config sets the policy (issue 25, ttft25).
MLPERF_HARNESS_BALANCER = {"Server": "least_loaded"}
#: the ``_TRT`` runs whose harness's balancing was not read, so nothing is stated: v4.0's 2 x H100 (one
#: replica needs no policy; its harness's llm_server.cc is not in the stored copy). v4.1's LLM harness
#: (V41 closed/NVIDIA/code/harness/harness_llm) was: ``traffic_distribution_policy`` defaults to 2
#: (main_llm.cc:94), ``loadBalancing = 2`` (llm_server.hpp:44), which sends each query to the core with
#: the fewest transactions in flight, the first on ties (llm_server.cc:853 ``getLeastBusyIdx``,
#: ``std::min_element``); no config sets it: ``least_loaded`` as in v5.1.
MLPERF_BALANCER_NOT_READ = frozenset({"DGX-H100x2_TRT"})
#: MLPerf runs on vLLM V0 with multi-step scheduling (issue 25, multistep25): system -> scenario ->
#: ``vllm_engine_config.num_scheduler_steps`` (vLLM ``--num-scheduler-steps``), stated as
#: ``deployment.scheduler_steps``. In the V51 mirror, closed/AMD/code/llama2-70b-99/harness_llm/models/
#: llama2-70b/: server_mi300x.yaml:21 ``num_scheduler_steps: 9``, interactive_mi300x.yaml:15 ``8``,
#: server_mi325x.yaml:33 ``9`` (each with ``enable_chunked_prefill: False``, :31 / :25 / :43, not stated:
#: chunked prefill is no budget key). vLLM V0 calls its scheduler only when the scheduled groups have no
#: steps left (vllm/engine/llm_engine.py ``LLMEngine.step``, ``_has_remaining_steps``), so a prompt
#: arriving inside a block of k decode iterations waits for its end. ASUSTeK's MI325X Interactive runs
#: vLLM V1 (``VLLM_USE_V1: 1``) with ``num_scheduler_steps: 1`` (closed/ASUSTeK/code_AMD/llama2-70b-99.9/
#: harness_llm/models/llama2-70b/interactive_mi325x.yaml:11, :35): nothing stated.
MLPERF_SCHEDULER_STEPS = {
    "8xMI300X_2xEPYC_9575F": {"Server": 9, "Interactive": 8},
    "8xMI325X_2xEPYC_9575F_1": {"Server": 9},
}
#: The vLLM sweep's router (issue 25, ttft25): llm-d's inference scheduler (the EPP) behind kgateway, in
#: llm-d-deployer's quickstart examples the sweep names (nerdalert/vllm-bench-automation README.md:
#: ``no-features``, ``base`` "prefix scoring", ``kvcache`` "kvcache aware scoring"). no-features has "no
#: ... intelligent routing from the epp" (llm-d/llm-d-deployer quickstart/examples/no-features/README.md
#: @ 2b0f4c53); in base the picker takes the highest score and "In the event of a tiebreak in scores ...
#: a random pod is selected" (quickstart/examples/base/README.md @ 0ecb4ab5, step 19). The sweep's
#: prompts are vLLM's random dataset (each from its own random token offset, ``random_prefix_len=0`` in the
#: run's logged arguments: no shared prefix to score) and
#: its loads leave the replicas' waiting queues (what the load-aware scorer reads) empty nearly always,
#: so the scores tie and the pick is random: ``load_balancer: random`` for all three (an approximation
#: for base and kvcache when a queue forms; the three deployments measured alike: p99 TTFT 90 / 88 /
#: 99 ms at 10 request/s, 183 / 168 / 172 at 30).
LLMD_ROUTER = "random"
#: a run is overloaded (the system did not sustain the offered rate) when its drain, the
#: time from the last arrival (requests / rate) to the end of the run, exceeds this share
#: of the arrival span: a sustained run drains in about one request's latency
OVERLOADED_DRAIN_SHARE = 0.5
#: the promise written for a run that states no constraint of its own (the sweeps): this
#: multiple of the highest percentile it measured, promised at that percentile (a run that
#: measured medians only, SGLang's old key set, promises its p50: a p99 promise of twice a
#: median is a guess about a percentile nobody measured), so the load section is computed
SWEEP_PROMISE_OVER_MEASURED = 2.0


def mlperf_summary(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$", line)
        if m:
            out.setdefault(m.group(1), m.group(2))
    return out


def tp_degree(hardware: str, precision: str) -> int:
    """One replica per device where the weights take at most half its memory, else TP 2."""
    weights_gb = LLAMA2_70B_PARAMS * BYTES[precision] / 1e9
    return 1 if weights_gb <= MEMORY_GB[hardware] / 2 else 2


def mlperf_budget(name: str, rel: str, source: str, precision: str) -> dict:
    s = mlperf_summary(resolve(rel))
    system = rel.split("/")[-1]
    hardware = next(h for key, h in MLPERF_HARDWARE if key in system)
    m = re.search(r"(\d+)xMI", system) or re.search(r"x(\d+)_", system)
    gpus = int(m.group(1))
    tp = tp_degree(hardware, precision)
    n = float(s["Completed tokens per second"]) / float(s["Completed samples per second"])
    ttft = float(s["ttft_latency (ns)"]) * 1e-6
    tpot = float(s["tpot_latency (ns)"]) * 1e-6
    eager = next((k for k in MLPERF_NO_CUDA_GRAPHS if f"_{k}_" in f"_{system}_"), None)
    out = {
        "name": name, "measured": rel, "source": source, "format": "mlperf", "expect": "sustained",
        "description": f"MLPerf LoadGen summary {system} (VALID), at its scheduled QPS",
        "workload": {"prompt_tokens": MLPERF_PROMPT,
                     "output_tokens": {"lognormal": {"mean": round(n), "p95": round(REPLY_P95_OVER_MEAN * n)}},
                     "arrival_rate": f"{float(s['Scheduled samples per second'])} request/s", "arrival": "poisson"},
        "promise": {"ttft": f"{ttft:g} ms", "tpot": f"{tpot * (n - 1) / n:.1f} ms"},
        "deployment": {"model": "llama-2-70b", "hardware": hardware, "devices": tp, "replicas": gpus // tp,
                       "weight_precision": precision, "kv_precision": "fp8",
                       "max_num_seqs": 1024, "max_num_batched_tokens": 8192},
    }
    scenario = "Server" if "_Server_" in system else "Interactive"
    limits = MLPERF_SCHEDULER.get(eager or "", {}).get(scenario)
    if limits is not None:
        out["deployment"]["max_num_seqs"], out["deployment"]["max_num_batched_tokens"] = limits
    if f"{MLPERF_TRTLLM_SUFFIX}_" in system:
        out["deployment"]["engine"] = "trtllm"
        if eager in MLPERF_TRTLLM_RELEASE:
            out["deployment"]["engine_version"] = MLPERF_TRTLLM_RELEASE[eager]
        if eager is not None and eager not in MLPERF_BALANCER_NOT_READ and scenario in MLPERF_HARNESS_BALANCER:
            out["deployment"]["load_balancer"] = MLPERF_HARNESS_BALANCER[scenario]
    if eager is not None:
        out["deployment"]["cuda_graphs"] = False
    steps = MLPERF_SCHEDULER_STEPS.get(eager or "", {}).get(scenario)
    if steps is not None:
        out["deployment"]["scheduler_steps"] = steps
    return out


def bench_lines(rel: str) -> list[dict]:
    text = resolve(rel).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def sweep_budget(name: str, rel: str, line: int, source: str, *, fmt: str, model: str, hardware: str,
                 devices: int, replicas: int, precision: str, prompt, reply_cap: int | None,
                 engine: str | None = None, engine_version: str | None = None,
                 load_balancer: str | None = None) -> dict:
    r = bench_lines(rel)[line]
    rate = float(r["request_rate"])
    n_out = r["total_output_tokens"] / r["completed"]
    reply: object
    if isinstance(prompt, str) and prompt == "uniform-sglang":
        # sglang bench_serving's random set: lengths uniform in [max(len x range_ratio, 1), len]
        lo = max(int(r["random_input_len"] * r["random_range_ratio"]), 1)
        prompt = {"uniform": [lo, int(r["random_input_len"])]}
        lo = max(int(r["random_output_len"] * r["random_range_ratio"]), 1)
        reply = {"uniform": [lo, int(r["random_output_len"])]}
    else:
        reply = {"lognormal": {"mean": round(n_out), "p95": min(round(REPLY_P95_OVER_MEAN * n_out), reply_cap),
                               "max": reply_cap}}
    span = r["completed"] / rate
    sustained = r["duration"] - span <= OVERLOADED_DRAIN_SHARE * span
    metrics = ("ttft", "tpot" if "median_tpot_ms" in r else "itl")
    top = "p99" if all(f"p99_{m}_ms" in r for m in metrics) else "median"
    highest = {m: r[f"{top}_{m}_ms"] for m in metrics}
    promise = {"ttft": f"{SWEEP_PROMISE_OVER_MEASURED * highest['ttft']:.0f} ms",
               "tpot": f"{SWEEP_PROMISE_OVER_MEASURED * highest.get('tpot', highest.get('itl')):.1f} ms"}
    dep = {"model": model, "hardware": hardware, "devices": devices, "replicas": replicas,
           "weight_precision": precision, "kv_precision": precision}
    if engine:
        dep["engine"] = engine
    if engine_version:
        dep["engine_version"] = engine_version
    if load_balancer:
        dep["load_balancer"] = load_balancer
    return {
        "name": name, "measured": f"{rel} line {line + 1}", "source": source, "format": fmt,
        "expect": "sustained" if sustained else "overloaded",
        "description": f"{fmt} run at {rate:g} request/s ({r['completed']} requests in {r['duration']:.0f} s)",
        "workload": {"prompt_tokens": prompt, "output_tokens": reply, "arrival_rate": f"{rate:g} request/s",
                     "arrival": "poisson"},
        "percentile": "p99" if top == "p99" else "p50", "promise": promise, "deployment": dep,
    }


def resolve(rel: str) -> Path:
    rel = rel.split(" line ")[0]
    if rel.startswith("../shared/fixtures/bench/"):
        return SHARED / rel[len("../shared/fixtures/bench/"):]
    return HERE / rel


V51 = "https://github.com/ntuhpc/inference_results_v5.1 @ 387c3dd04e69c7082d25db0b98a3f8315fb5cf52 (a copy of mlcommons/inference_results_v5.1)"


def runs() -> list[dict]:
    out = [
        mlperf_budget("mlperf-v4.0-nvidia-dgx-h100x2-server",
                      "../shared/fixtures/bench/mlperf/v4.0_NVIDIA_DGX-H100x2_TRT_llama2-70b-99.9_Server_mlperf_log_summary.txt",
                      "https://github.com/mlcommons/inference_results_v4.0 (closed/NVIDIA, llama2-70b-99.9 Server)", "fp8"),
        mlperf_budget("mlperf-v4.1-nvidia-h200x8-server",
                      "../shared/fixtures/bench/mlperf/v4.1_NVIDIA_H200x8_TRT_llama2-70b-99_Server_mlperf_log_summary.txt",
                      "https://github.com/mlcommons/inference_results_v4.1 (closed/NVIDIA, llama2-70b-99 Server)", "fp8"),
        mlperf_budget("mlperf-v5.1-asustek-mi325xx8-interactive",
                      "../shared/fixtures/bench/mlperf/v5.1_ASUSTeK_MI325Xx8_llama2-70b-99.9_Interactive_mlperf_log_summary.txt",
                      V51 + " closed/ASUSTeK, llama2-70b-99.9 Interactive", "fp8"),
    ]
    # v5.1 summaries copied into measured/ (README.md: provenance); precision from each
    # submission's measurements/<system>/llama2-70b-99/<scenario>/*.json weight_data_types
    for submitter, system, scenario, precision in [
        ("Dell", "XE9680_H200_SXM_141GBx8_TRT", "Server", "fp8"),
        ("Dell", "XE9680_H200_SXM_141GBx8_TRT", "Interactive", "fp8"),
        ("Dell", "XE7745_H200_NVL_141GBx8_TRT", "Server", "fp8"),
        ("Dell", "XE7745_H200_NVL_141GBx8_TRT", "Interactive", "fp8"),
        ("AMD", "8xMI300X_2xEPYC_9575F", "Server", "fp8"),
        ("AMD", "8xMI300X_2xEPYC_9575F", "Interactive", "fp8"),
        ("AMD", "8xMI325X_2xEPYC_9575F_1", "Server", "fp8"),
        ("NVIDIA", "B200-SXM-180GBx8_TRT", "Server", "fp4"),
        ("NVIDIA", "B200-SXM-180GBx8_TRT", "Interactive", "fp4"),
        ("Cisco", "HGX-H100_H100-SXM-80GBx16_TRT", "Server", "fp8"),
    ]:
        slug = re.sub(r"[^a-z0-9]+", "-", f"{submitter}-{system}".lower()).strip("-")
        out.append(mlperf_budget(f"mlperf-v5.1-{slug}-{scenario.lower()}",
                                 f"measured/v5.1_{submitter}_{system}_llama2-70b-99_{scenario}_mlperf_log_summary.txt",
                                 f"{V51} closed/{submitter}/results/{system}/llama2-70b-99/{scenario}/performance/run_1",
                                 precision))
    # vLLM sweep: llm-d, 4 x L40S, one replica each, Llama-3.2-3B bf16; "inf"-rate runs (every
    # request at once) are not a steady state and are left out; the router: LLMD_ROUTER
    vllm = "../shared/fixtures/bench/vllm/vllm-bench-automation_llmd_l40s_llama3b_jsonl.json"
    for i, r in enumerate(bench_lines(vllm)):
        if r["request_rate"] == "inf":
            continue
        out.append(sweep_budget(f"vllm-llmd-l40s-llama3b-{r['deployment']}-r{r['request_rate']:g}", vllm, i,
                                "nerdalert/vllm-bench-automation @ 1a4f2e4c (PROVENANCE.md)", fmt="vllm",
                                model="llama-3.2-3b", hardware="l40s", devices=1,
                                replicas=int(r["decode_replicas"]), precision="bf16",
                                prompt=round(r["total_input_tokens"] / r["completed"]),
                                reply_cap=int(r["output_len"]), engine="vllm", load_balancer=LLMD_ROUTER))
    # SGLang sweep: datacrunch, Llama-3.3-70B on 4 x H200 TP 4 (the repo's launch script),
    # bf16 (the released weights: the script names no quantisation); the random-set runs
    sgl = "../shared/fixtures/bench/sglang/datacrunch_h200_llama33-70b_online.jsonl"
    for i, r in enumerate(bench_lines(sgl)):
        if r["dataset_name"] != "random":
            continue
        out.append(sweep_budget(f"sglang-h200x4-llama33-70b-r{r['request_rate']:g}", sgl, i,
                                "datacrunch-research/h200-benchmarks @ c091ef53 (PROVENANCE.md)", fmt="sglang",
                                model="llama-3.3-70b", hardware="h200-sxm", devices=4, replicas=1,
                                precision="bf16", prompt="uniform-sglang", reply_cap=None, engine="sglang"))
    return out


def render(b: dict) -> str:
    """The budget file's text for one run (header lines, then the budget)."""
    import yaml

    head = (f"# {b['name']}: a public run as a budget, written by build.py (README.md: the rules).\n"
            f"# measured: {b['measured']}\n# format: {b['format']}\n# expect: {b['expect']}\n"
            f"# source: {b['source']}\n")
    body = {"version": 1, "kind": "budgets", "budgets": [{
        "name": b["name"], "description": b["description"], "owner": "@budgetlint/validation",
        "percentile": b.get("percentile", "p99"), "workload": b["workload"], "promise": b["promise"], "deployment": b["deployment"]}]}
    return head + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=120)


def write(b: dict) -> Path:
    path = HERE / f"{b['name']}.yaml"
    path.write_text(render(b))
    return path


def main() -> int:
    for old in HERE.glob("*.yaml"):
        if old.name != "models.yaml":
            old.unlink()
    for b in runs():
        print(write(b).name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
