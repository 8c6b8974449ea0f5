"""docs/load.md "Capacity against MLPerf Offline": budgetlint's saturation of each MLPerf budget of
the validation set against the same submitter's and system's MLPerf Offline throughput (issue 25).

Runs ``budgetlint check`` on this folder (the interpreter running this script: that checkout's
defaults) and prints one markdown row a MLPerf budget: its scheduled QPS, the Offline samples/s
and tokens/s (OFFLINE below, each from its summary), budgetlint's closed-form saturation
(``load.saturation_request_per_s``, a replica) x replicas in requests/s and in output tokens/s at
the budget's mean reply, their ratio to Offline, the real utilisation (QPS / Offline samples/s),
the simulated one (``load.utilisation``), and the decoding batch a replica: simulated (the load
section's mean) against the real run's by Little's law (rate a replica x measured p50 TPOT x the
mean reply, as run.py --detail).

    .venv/bin/python benchmarks/validation/capacity_vs_offline.py
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import json
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import measured  # noqa: E402  (this folder's run.py: the measured percentiles)

V51 = "ntuhpc/inference_results_v5.1 @ 387c3dd closed/{}/results/{}/llama2-70b-99/Offline/performance/run_1"
#: budget -> (Offline samples/s, Offline tokens/s, the summary's source)
OFFLINE = {
    "mlperf-v4.0-nvidia-dgx-h100x2-server": (18.9752, 5539.47, "mlcommons/inference_results_v4.0 @ 3c4a1cf closed/NVIDIA/"
                                             "results/DGX-H100_H100-SXM-80GBx2_TRT/llama2-70b-99.9/Offline"),
    "mlperf-v4.1-nvidia-h200x8-server": (107.477, 31302.7, "../shared/fixtures/bench/mlperf/"
                                         "v4.1_NVIDIA_H200x8_TRT_llama2-70b-99_Offline_mlperf_log_summary.txt"),
    "mlperf-v5.1-amd-8xmi300x-2xepyc-9575f-server": (92.1544, 27803.9, V51.format("AMD", "8xMI300X_2xEPYC_9575F")),
    "mlperf-v5.1-amd-8xmi300x-2xepyc-9575f-interactive": (92.1544, 27803.9, V51.format("AMD", "8xMI300X_2xEPYC_9575F")),
    "mlperf-v5.1-amd-8xmi325x-2xepyc-9575f-1-server": (114.7, 34520.4, V51.format("AMD", "8xMI325X_2xEPYC_9575F_1")),
    "mlperf-v5.1-asustek-mi325xx8-interactive": (112.869, 33987.4, V51.format("ASUSTeK", "ESC_A8A_MI325X_256GBx8")),
    "mlperf-v5.1-cisco-hgx-h100-h100-sxm-80gbx16-trt-server": (212.808, 62351.6,
                                                               V51.format("Cisco", "HGX-H100_H100-SXM-80GBx16_TRT")),
    "mlperf-v5.1-dell-xe7745-h200-nvl-141gbx8-trt-server": (106.977, 31267.4, V51.format("Dell", "XE7745_H200_NVL_141GBx8_TRT")),
    "mlperf-v5.1-dell-xe7745-h200-nvl-141gbx8-trt-interactive": (106.977, 31267.4,
                                                                 V51.format("Dell", "XE7745_H200_NVL_141GBx8_TRT")),
    "mlperf-v5.1-dell-xe9680-h200-sxm-141gbx8-trt-server": (120.831, 35316.7, V51.format("Dell", "XE9680_H200_SXM_141GBx8_TRT")),
    "mlperf-v5.1-dell-xe9680-h200-sxm-141gbx8-trt-interactive": (120.831, 35316.7,
                                                                 V51.format("Dell", "XE9680_H200_SXM_141GBx8_TRT")),
    "mlperf-v5.1-nvidia-b200-sxm-180gbx8-trt-server": (371.423, 101527.0, V51.format("NVIDIA", "B200-SXM-180GBx8_TRT")),
    "mlperf-v5.1-nvidia-b200-sxm-180gbx8-trt-interactive": (371.423, 101527.0, V51.format("NVIDIA", "B200-SXM-180GBx8_TRT")),
}


def main() -> int:
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(HERE), "--format", "json", "--quiet"],
                          capture_output=True, text=True, cwd=HERE)
    by_name = {b["name"]: b for b in json.loads(proc.stdout)["budgets"]}
    print("| run | scheduled QPS | Offline samples/s | Offline out tok/s | budgetlint saturation request/s | "
          "budgetlint saturation out tok/s | budgetlint / Offline | real utilisation (QPS / Offline) | "
          "simulated utilisation | decoding batch a replica: simulated / real (Little) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (samples, tokens, _source) in OFFLINE.items():
        path = HERE / f"{name}.yaml"
        b = yaml.safe_load(path.read_text())["budgets"][0]
        reply = float(b["workload"]["output_tokens"]["lognormal"]["mean"])
        replicas = int(b["deployment"].get("replicas", 1))
        qps = float(b["workload"]["arrival_rate"].split()[0])
        load = by_name[name]["load"]
        sat = load["saturation_request_per_s"] * replicas
        real_batch = qps / replicas * measured(path)["tpot_s"]["p50"] * reply
        print(f"| {name} | {qps:g} | {samples:g} | {tokens:,.1f} | {sat:.1f} | {sat * reply:,.0f} | "
              f"{sat * reply / tokens:.2f} | {qps / samples:.3f} | {load['utilisation']:.3f} | "
              f"{load['batch_size']['mean']:.0f} / {real_batch:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
