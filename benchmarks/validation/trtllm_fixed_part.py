"""The fixed part of a TensorRT-LLM iteration without CUDA graphs, fitted on MLPerf runs held out
of the validation set (issue 25).

Each held-out system (heldout/README.md: nine v5.1 Llama-2-70B systems, none of them in the
validation set, each with a VALID Server and a VALID Interactive run, TensorRT-LLM with
``harness_fields.use_graphs: False`` and tensor parallelism 1 in its configs) gives two points
of its iteration time against the tokens an iteration carries, read off the LoadGen summaries
by Little's law, one rule for every run:

* the iteration time: the run's p50 time to output token (one decode token an iteration);
* the requests a replica serves: scheduled samples/s over the system's devices (one replica a
  device, TP 1);
* the decoding batch: that rate x the mean reply (completed tokens / completed samples) x the
  iteration time (Little's law: each decoding request is in the batch for its reply's tokens);
* the prompt tokens an iteration: that rate x the dataset's mean prompt, 5,463,976 / 24,576 =
  222.33 tokens (build.py MLPERF_INPUT_TOKENS) x the iteration time (chunked context, every
  prompt token passes once);

and the line ``t = a + b T`` through the pair (T = batch + prompt tokens). ``a``, the time an
iteration takes at no tokens, is the fixed part. Prints one row a system and the median, which
physics/default_efficiency.py TRTLLM_EAGER_ITERATION_80_LAYERS_S holds (docs/calibration.md
"TensorRT-LLM without CUDA graphs"). The validation set's own systems (Dell XE9680, XE7745,
NVIDIA B200) are printed below the line for comparison and are not in the median.

    python benchmarks/validation/trtllm_fixed_part.py
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROMPT_MEAN = 5_463_976 / 24_576
HELD_OUT = ["Cisco_C885_H200x8_TRT", "HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT", "Nebius_H200-SXM-141GBx8_TRT",
            "Quanta_Cloud_Technology_D75E-4U_H200-NVL-141GBx4_TRT", "Dell_XE9680L_B200_SXM_180GBx8_TRT",
            "GigaComputing_G894-SD1_B200-SXM-180GBx8_TRT", "Google_B200-SXM-180GBx8_TRT",
            "Nebius_B200-SXM-180GBx8_TRT", "Supermicro_SYS-422GS-NBRT-LCC_B200-SXM-180GBx8_TRT"]
VALIDATION = ["Dell_XE9680_H200_SXM_141GBx8_TRT", "Dell_XE7745_H200_NVL_141GBx8_TRT", "NVIDIA_B200-SXM-180GBx8_TRT"]


def summary(path: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^\s*([^:]+?)\s*:\s*([0-9.]+)\s*$", line)
        if m:
            out.setdefault(m.group(1), float(m.group(2)))
    return out


def point(path: Path, devices: int) -> tuple[float, float, float]:
    """(tokens an iteration, iteration time s, decoding batch) of one run."""
    s = summary(path)
    step = s["50.00 percentile time to output token (ns)"] * 1e-9
    rate = s["Scheduled samples per second"] / devices
    reply = s["Completed tokens per second"] / s["Completed samples per second"]
    batch = rate * reply * step
    return batch + rate * PROMPT_MEAN * step, step, batch


def fit(system: str, folder: Path) -> tuple[float, float, tuple, tuple]:
    devices = int(re.search(r"x(\d+)_TRT$", system).group(1))
    srv = point(folder / f"v5.1_{system}_llama2-70b-99_Server_mlperf_log_summary.txt", devices)
    itv = point(folder / f"v5.1_{system}_llama2-70b-99_Interactive_mlperf_log_summary.txt", devices)
    b = (srv[1] - itv[1]) / (srv[0] - itv[0])
    return itv[1] - b * itv[0], b, srv, itv


def main() -> int:
    def row(system: str, folder: Path) -> float:
        a, b, srv, itv = fit(system, folder)
        print(f"| {system} | {srv[0]:,.0f} | {srv[2]:,.0f} | {srv[1] * 1e3:.2f} | {itv[0]:,.0f} | {itv[2]:,.0f} | "
              f"{itv[1] * 1e3:.2f} | {a * 1e3:.2f} | {b * 1e6:.1f} |")
        return a

    print("| system | Server T | Server batch | Server step ms | Interactive T | Interactive batch | "
          "Interactive step ms | a ms | b us a token |")
    print("|---|---|---|---|---|---|---|---|---|")
    held = [row(s, HERE / "heldout") for s in HELD_OUT]
    print(f"median a over the {len(held)} held-out systems: {statistics.median(held) * 1e3:.3f} ms")
    print("validation set (not in the median):")
    for s in VALIDATION:
        row(s, HERE / "measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
