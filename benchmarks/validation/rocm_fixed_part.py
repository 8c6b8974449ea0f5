"""The fixed part of a vLLM iteration on ROCm (AMD Instinct) without graphs, fitted on MLPerf v5.1
Server and Interactive runs held out of the validation set (issue 25, acc41).

Until acc41 budgetlint charged a vLLM engine on an MI300X / MI325X the CUDA figure: 2.1 ms plus
27.5 us a layer of launches (SGLang's Llama-3-8B on an H100 with and without CUDA graphs), 4.3 ms
for Llama-2-70B's 80 layers. Held at the operating point the AMD runs of the validation set really
had (step_at_real_batch.py), budgetlint's step was 0.58-0.63 of the measured one at the Interactive
runs' small batches, where the fixed part rules, and the MI300X Server run held a quarter of the real
decoding batch (a batch near saturation grows with the fixed part: ``B = lambda O a / (1 - rho)``).

The rule, for each held-out run (heldout_rocm/README.md: the runs, their sources and engine configs;
the Server and Interactive runs of the five systems running AMD's vLLM harness), one replica a device (TP 1, the configs' ``tensor_parallel_size: 1``):

* ``t``: the run's p50 time to output token; a decoding request gains one token an iteration, so
  the engine runs ``n = 1 / t`` decode iterations a second, each with ``B = lambda O t`` decodes
  (Little's law; ``lambda`` the scheduled samples/s over the devices, ``O`` completed tokens over
  completed samples), each holding ``X = 222.33 + O (1 + CV^2) / 2`` tokens of context;
* budgetlint's decode iteration beside the fixed part ``a``: the weights read ``W`` or the linear
  layers' compute ``L B``, whichever is longer (``W = weight bytes / (bandwidth x 0.860)``, ``L = 2 P /
  (fp8 peak x c)``, ``c`` the device's compute default), and the KV read ``B X kv / (bandwidth x 0.860)``;
* the prompts, ``lambda x 222.33`` tokens a second: under vLLM V0 without chunked prefill (the configs'
  ``enable_chunked_prefill: False``) and ``k``-step scheduling (``num_scheduler_steps``), the scheduler
  runs only at a block's end (every ``k`` iterations, ``k t`` seconds) and admits every prompt that
  arrived in the block in one prompts-only iteration: ``(1 - exp(-lambda k t)) / (k t)`` such
  iterations a second (Poisson arrivals), each a fixed part ``a`` plus its prompts' compute (a mean
  prompt, 222.33 tokens, already outlasts the weights read: ``L x 222.33 > W``); under chunked prefill
  (vLLM V1) the prompt tokens ``U = lambda x 222.33 x t`` share the decode iteration's linear layers
  instead: ``max(W, L (B + U))``;
* the engine is never idle (a batch of ``B`` >= 34 decodes is always running), so a second is spent
  in full: ``1 = n (a + max(W, L B) + KV) + lambda 222.33 L + n_p a`` (V0), solved for ``a``.

``c`` itself depends on ``a``: each CDNA3 Offline row of docs/calibration.md (m11-m17) is the compute
fraction at which an Offline-shaped budget spends its measured time per token beside the fixed part
shared by its 1,024 decodes (tests/calibration/test_compute_defaults.py has the formula), so the rows
whose engine ran without graphs ("off, vLLM") move with ``a``. The fit iterates ``a -> c -> a`` until ``a``
moves by under 1 ns (three or four rounds). Prints one row a run, the median, which
physics/default_efficiency.py ROCM_VLLM_EAGER_ITERATION_80_LAYERS_S holds, and the compute defaults
at it; the validation set's own AMD Interactive runs are printed below the line and are not in the
median.

    python benchmarks/validation/rocm_fixed_part.py
"""

from __future__ import annotations

import math
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import SHARED  # noqa: E402  (this folder's run.py: the shared benchmark fixtures)
from trtllm_fixed_part import summary  # noqa: E402  (a LoadGen summary's "key : number" lines)

DOC = HERE.parents[1] / "docs" / "calibration.md"
PROMPT_MEAN = 5_463_976 / 24_576
P = 68.98e9  # Llama-2-70B parameters (models.yaml here); fp8: one byte each
KV_TOKEN = 80 * 2 * 8 * 128  # bytes a token of fp8 KV cache: 163,840
DENSE_1_BANDWIDTH = 0.860  # the one-device dense class fraction (physics/default_efficiency.py)
FIXED_ELSEWHERE_S = 2.1e-3  # the fixed part of a row whose engine config was not read
SLOTS = 1024  # vLLM's max_num_seqs on these devices: the decodes sharing an Offline iteration
_Z = 1.6448536269514722
_SIGMA = _Z - math.sqrt(_Z * _Z - 2 * math.log(2.5))
CV2 = math.exp(_SIGMA * _SIGMA) - 1  # the budgets' lognormal replies, p95 2.5 x the mean: 0.6567
#: the catalog's fp8 peak (dense) and bandwidth of each chip
CHIPS = {"mi300x": (2614.9e12, 5.3e12), "mi325x": (2614.9e12, 6.0e12)}
#: held-out runs: path -> (chip, devices, chunked prefill, scheduler steps), from each system's engine
#: config (heldout_rocm/README.md)
_V0_SERVER = (False, 9)  # server_mi300x.yaml :21 / :31, server_mi325x.yaml :33 / :43 (Vultr's :31 / :41)
HELD_OUT: dict[str, tuple[str, int, bool, int]] = {
    "heldout_rocm/v5.1_Dell_XE9680_MI300X_192GBx8_llama2-70b-99_Server_mlperf_log_summary.txt": ("mi300x", 8, *_V0_SERVER),
    # interactive_mi300x.yaml :15 num_scheduler_steps 8, :25 enable_chunked_prefill False (vLLM V0)
    "heldout_rocm/v5.1_Dell_XE9680_MI300X_192GBx8_llama2-70b-99_Interactive_mlperf_log_summary.txt": ("mi300x", 8, False, 8),
}
for _system in ("GigaComputing_8xMI325X_2xEPYC_9575F", "MiTAC_8xMI325X_2xEPYC_9755", "Quanta_Cloud_Technology_D75T-7U_8xMI325X",
                "Vultr_8xMI325X_2xEPYC_9554"):
    HELD_OUT[f"heldout_rocm/v5.1_{_system}_llama2-70b-99_Server_mlperf_log_summary.txt"] = ("mi325x", 8, *_V0_SERVER)
    # interactive_mi325x.yaml: VLLM_USE_V1 1 (:11; Vultr's :10), num_scheduler_steps 1, enable_chunked_prefill True
    HELD_OUT[f"heldout_rocm/v5.1_{_system}_llama2-70b-99_Interactive_mlperf_log_summary.txt"] = ("mi325x", 8, True, 1)
#: the validation set's own AMD Interactive runs (printed for comparison; not in the median)
VALIDATION = {
    "measured/v5.1_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive_mlperf_log_summary.txt": ("mi300x", 8, False, 8),
    str(SHARED / "mlperf" / "v5.1_ASUSTeK_MI325Xx8_llama2-70b-99.9_Interactive_mlperf_log_summary.txt"):
        ("mi325x", 8, True, 1),
}


def reading(path: Path) -> dict[str, float]:
    """The four figures of a LoadGen summary (a VALID run)."""
    if "Result is : VALID" not in path.read_text():
        raise ValueError(f"{path.name}: not a VALID run")
    s = summary(path)
    return {"step": s["50.00 percentile time to output token (ns)"], "scheduled": s["Scheduled samples per second"],
            "samples": s["Completed samples per second"], "tokens": s["Completed tokens per second"]}


def offline_rows() -> list[tuple[str, str, float, float, str]]:
    """docs/calibration.md's CDNA3 rows: (row, chip, tokens/s, samples/s of 8 devices, CUDA graphs column)."""
    part = DOC.read_text().split("## Compute defaults per generation and precision", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in part.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not re.match(r"^m\d+$", cells[0]) or "CDNA3" not in cells[1]:
            continue
        chip = "mi300x" if "MI300X" in cells[1] else "mi325x"
        tok, samples = (float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\.?\d*", cells[5])[:2])
        rows.append((cells[0], chip, tok, samples, cells[6]))
    return rows


def compute_defaults(a: float) -> dict[str, float]:
    """Each chip's median per-operator compute fraction over its Offline rows, at fixed part ``a``."""
    by_chip: dict[str, list[float]] = {}
    for _, chip, tok, samples, graphs in offline_rows():
        peak, bw = CHIPS[chip]
        out = tok / samples
        t = 8 / tok
        context = PROMPT_MEAN + out * (1 + CV2) / 2
        fixed = a if graphs == "off, vLLM" else FIXED_ELSEWHERE_S
        c = 2 * P * (1 + PROMPT_MEAN / out) / peak / (t - KV_TOKEN * context / (bw * DENSE_1_BANDWIDTH) - fixed / SLOTS)
        by_chip.setdefault(chip, []).append(c)
    return {chip: statistics.median(v) for chip, v in by_chip.items()}


def fixed_part(path: Path, chip: str, devices: int, chunked: bool, steps: int, compute: float) -> tuple[float, float]:
    """(the fixed part ``a`` the rule solves for, the decoding batch ``B``) of one run."""
    s = reading(path)
    t = s["step"] * 1e-9
    rate = s["scheduled"] / devices
    reply = s["tokens"] / s["samples"]
    batch = rate * reply * t
    peak, bw = CHIPS[chip]
    w = P / (bw * DENSE_1_BANDWIDTH)
    lin = 2 * P / (peak * compute)
    kv = batch * (PROMPT_MEAN + reply * (1 + CV2) / 2) * KV_TOKEN / (bw * DENSE_1_BANDWIDTH)
    n = 1 / t
    if chunked:
        return (1 - n * (max(w, lin * (batch + rate * PROMPT_MEAN * t)) + kv)) / n, batch
    block = steps * t
    prompts_only = (1 - math.exp(-rate * block)) / block
    return (1 - n * (max(w, lin * batch) + kv) - rate * PROMPT_MEAN * lin) / (n + prompts_only), batch


def fit(runs: dict[str, tuple[str, int, bool, int]], start: float = 4.3e-3) -> tuple[float, dict[str, float], dict]:
    """The fixed point of ``a -> compute defaults -> median a`` over ``runs``: (a, defaults, per run (a, B))."""
    a = start
    for _ in range(50):
        c = compute_defaults(a)
        per = {name: fixed_part(HERE / name, chip, d, ch, k, c[chip]) for name, (chip, d, ch, k) in runs.items()}
        new = statistics.median(v[0] for v in per.values())
        if abs(new - a) < 1e-9:
            return new, compute_defaults(new), per
        a = new
    raise RuntimeError("the fit did not settle")


def main() -> int:
    a, c, per = fit(HELD_OUT)
    print("| run | chip | chunked prefill | scheduler steps | decoding batch | fixed part a ms |")
    print("|---|---|---|---|---|---|")
    for name, (chip, _, ch, k) in HELD_OUT.items():
        print(f"| {Path(name).name} | {chip} | {'on' if ch else 'off'} | {k} | {per[name][1]:,.0f} | {per[name][0] * 1e3:.2f} |")
    print(f"median a over the {len(per)} held-out runs: {a * 1e3:.3f} ms; compute defaults at it: "
          + ", ".join(f"{chip} {v:.4f}" for chip, v in sorted(c.items())))
    print("validation set (not in the median), each at that a's compute defaults:")
    for name, (chip, d, ch, k) in VALIDATION.items():
        own, batch = fixed_part(HERE / name, chip, d, ch, k, c[chip])
        print(f"| {Path(name).name} | {chip} | {'on' if ch else 'off'} | {k} | {batch:,.0f} | {own * 1e3:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
