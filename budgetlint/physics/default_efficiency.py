"""Default realistic efficiencies per deployment class, from public measurements.

Where nobody has calibrated a deployment (docs/calibration.md), the
realistic estimate assumes the efficiency that public runs of its *class*
reached: dense or mixture-of-experts, on one device or tensor-parallel over
several. Each class's bandwidth fraction is the **median** of the implied
fractions of that class's rows in the table of docs/calibration.md section
"Defaults for uncalibrated deployments" (decode at batch 1, serving engines
only; a test recomputes the medians from that table, so the two cannot
drift). The implied fraction of a run is its roofline bound over what it
measured: (weight bytes read per token x tokens/s) / (peak bandwidth x
devices).

* ``compute`` was not measured by these runs (they are decode, bandwidth
  bound): it stays at 50 % of peak for every class, except where the deployment's
  generation and compute precision have measured throughput rows
  (:data:`COMPUTE_BY_GENERATION`: Hopper fp8 and bf16, Blackwell fp4, CDNA3 fp8 on MI300X and on MI325X);
  a TensorRT-LLM release older than those rows' builds takes its own MLPerf round's rows
  (:data:`COMPUTE_BY_RELEASE`: 0.9.0.dev from v4.0, 0.12.0.dev from v4.1, Hopper fp8).
* A class whose counted runs come from fewer than :data:`MIN_SOURCES` sources
  does not get its own median (no single source sets a default): it borrows
  its family's one-device figures (``borrowed_from``), collective overhead
  included (``moe-tp``: three DeepSeek-R1 runs from one issue thread).
* ``collective_overhead`` is 0 for the tensor-parallel classes: their runs
  were measured *with* the all-reduce, so its cost is already inside their
  bandwidth fraction. The single-device classes keep 10 % (the physics
  charges it for N > 1 only). A bandwidth fraction that is declared or
  configured rather than a class default is a kernel figure: 10 % is charged
  on top of it for N > 1 unless an overhead is given too
  (:data:`GIVEN_BANDWIDTH_COLLECTIVE_OVERHEAD`).

Pure: floats and strings, no I/O. The bound (100 %) is not touched here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

#: where the rows behind every default are written (the messages cite it)
SOURCE_DOC = "docs/calibration.md"

#: the collective overhead charged for N > 1 on top of a bandwidth fraction that is *not* a
#: class default (declared or configured: a kernel figure without the all-reduce in it), when
#: no overhead is given either; the assumption budgetlint has always made
GIVEN_BANDWIDTH_COLLECTIVE_OVERHEAD = 0.10


@dataclass(frozen=True)
class ClassDefault:
    """The assumed efficiencies of one deployment class and where they come from."""

    key: str  # dense-1 | dense-tp | moe-1 | moe-tp
    label: str  # "dense, 1 device"
    bandwidth: float  # fraction of peak memory bandwidth: the median of ``runs`` rows
    compute: float  # fraction of peak compute (not measured: 0.5 for every class)
    collective_overhead: float  # fraction of a decode step lost to the all-reduce when N > 1
    runs: int  # rows in the median
    #: the class whose figures this one takes: its own counted runs come from fewer than
    #: MIN_SOURCES sources, and one source does not set a default (issue 13)
    borrowed_from: str | None = None

    def basis(self) -> str:
        """Where the bandwidth figure comes from, in words: "median of 3 public runs"."""
        runs = f"median of {self.runs} public run{'s' if self.runs != 1 else ''}"
        if self.borrowed_from:
            return (f"the {DEFAULTS[self.borrowed_from].label} {runs}; the {self.label} runs "
                    f"come from one source")
        return runs


#: The fixed part of every engine iteration the realistic estimate charges where a deployment
#: declares none (``iteration_overhead`` / ``collective_latency``; the bound charges none):
#: scheduling, sampling and kernel launches, un-hidden at every batch size. 2.1 ms: what
#: ``budgetlint calibrate`` fits on the public vLLM sweep (Llama-3.2-3B on L40S, May 2025; beside
#: 85 % of bandwidth, docs/calibration.md "What was measured"); the counted batch-1 rows bound it
#: above (row 1 leaves 13.33 - 10.33 = 3.0 ms beside its weights at peak bandwidth).
ITERATION_OVERHEAD_S = 2.1e-3

#: Seconds per layer per iteration an engine without CUDA graphs (``deployment.cuda_graphs: false``:
#: vLLM --enforce-eager, SGLang --disable-cuda-graph) pays beside ITERATION_OVERHEAD_S, launching
#: each layer's kernels one by one: 27.5 us = (8.23 - 7.35 ms) / 32 layers, SGLang's Llama-3-8B decode
#: at batch 1 (``sglang.bench_latency --batch-size 1 --input 128 --output 8``, FlashInfer attention)
#: without and with CUDA graphs, median decode latency (github.com/sgl-project/sglang/pull/1401,
#: 2024-09-12). Measured at batch 1, where the launches are not hidden behind the kernels: the other
#: public pairs shrink with the batch (xLLM Qwen3-0.6B mean TPOT 4.20 -> 2.72 ms at concurrency 1,
#: 9.85 -> 9.11 ms at 30: github.com/xLLM-AI/xllm/pull/713), so at large batches this errs slow.
EAGER_LAUNCH_PER_LAYER_S = (8.23e-3 - 7.35e-3) / 32

#: The whole fixed part of a TensorRT-LLM iteration without CUDA graphs (``deployment.engine:
#: trtllm`` with ``cuda_graphs: false``, the MLPerf harness's ``use_graphs: False``) for Llama-2-70B's
#: 80 layers: 15.50 ms, the median intercept ``a`` of ``t = a + b T`` over nine MLPerf v5.1 systems
#: held out of the validation set (H200 SXM / NVL and B200, each its VALID Server and Interactive
#: pair, TP 1: benchmarks/validation/trtllm_fixed_part.py, heldout/README.md; docs/calibration.md
#: "TensorRT-LLM without CUDA graphs"; range 13.40-19.39 ms, HPE XD670 H200 the median). What it is
#: (launches, the C++ executor's per-iteration host work) is not separated; it does not move with the
#: device generation (H200 median 15.9 ms, B200 15.0 ms), as a host cost would not.
TRTLLM_EAGER_ITERATION_80_LAYERS_S = 15.50e-3
#: the same per layer beside ITERATION_OVERHEAD_S, in place of EAGER_LAUNCH_PER_LAYER_S for that
#: engine: (15.50 - 2.1 ms) / 80 = 167.5 us (scaled by layers as the launches are: an assumption,
#: every row of the fit has 80)
TRTLLM_EAGER_PER_LAYER_S = (TRTLLM_EAGER_ITERATION_80_LAYERS_S - ITERATION_OVERHEAD_S) / 80

#: The whole fixed part of a vLLM iteration on ROCm (AMD Instinct) without graphs (``deployment.cuda_graphs:
#: false`` on a catalog accelerator whose vendor is AMD, ``engine`` vLLM or unstated) for Llama-2-70B's 80
#: layers: 16.62 ms, the median over ten MLPerf v5.1 Server and Interactive runs held out of the validation set
#: (benchmarks/validation/rocm_fixed_part.py, heldout_rocm/README.md; docs/calibration.md "vLLM on ROCm
#: without graphs"): each run's second spent in full, ``1 = n (a + max(W, L B) + KV) + prompts``, solved
#: for ``a`` at its Little's-law batch, with the compute defaults fitted beside it. The CUDA figure
#: (EAGER_LAUNCH_PER_LAYER_S: 4.3 ms in all) left the AMD runs' steps 0.58-0.63 of the measured one at
#: their Interactive batches and the MI300X Server run a quarter of its real batch (issue 25, acc41).
ROCM_VLLM_EAGER_ITERATION_80_LAYERS_S = 16.62e-3
#: the same per layer beside ITERATION_OVERHEAD_S, in place of EAGER_LAUNCH_PER_LAYER_S there (scaled by
#: layers as the launches are: an assumption, every run of the fit has 80)
ROCM_VLLM_EAGER_PER_LAYER_S = (ROCM_VLLM_EAGER_ITERATION_80_LAYERS_S - ITERATION_OVERHEAD_S) / 80

#: Seconds per layer per iteration under tensor parallelism (N > 1) where none is declared: two
#: all-reduces a layer (after the attention and after the MLP, Megatron-style), each ~6 us for a
#: small message over NVLink ("approximately 6us" with 2 H100, NCCL 2.20.5, NVLS, CUDA graphs:
#: github.com/NVIDIA/nccl/issues/1259).
COLLECTIVE_LATENCY_S = 2 * 6e-6

#: a class's own median needs counted runs from at least this many sources (pages, issue
#: threads); with fewer it takes its family's one-device figures (``borrowed_from``)
MIN_SOURCES = 2

#: class -> defaults. ``bandwidth`` is the median of the class's rows in docs/calibration.md,
#: each row's fraction *beside* the fixed part above (``t - o - L x a`` for N > 1 left for the
#: weight read: table "The runs beside the fixed part"; tests/calibration/test_default_efficiency.py
#: recomputes it), so a batch-1 decode at the median row is predicted at its measured time.
DEFAULTS: dict[str, ClassDefault] = {
    "dense-1": ClassDefault("dense-1", "dense, 1 device", 0.860, 0.5, 0.10, 3),
    "dense-tp": ClassDefault("dense-tp", "dense, tensor-parallel", 0.634, 0.5, 0.0, 3),
    "moe-1": ClassDefault("moe-1", "MoE, 1 device", 0.5245, 0.5, 0.10, 2),
}
# its three counted runs (DeepSeek-R1 on 8-16 H100, 2-4 %) are one issue thread: one source.
# So MoE on one device's figures, its 10 % all-reduce charged for N > 1 (docs/calibration.md)
DEFAULTS["moe-tp"] = replace(DEFAULTS["moe-1"], key="moe-tp", label="MoE, tensor-parallel", borrowed_from="moe-1")


def class_key(moe: bool, devices: int) -> str:
    """The class of a deployment: ``dense-1``, ``dense-tp``, ``moe-1`` or ``moe-tp``."""
    return ("moe" if moe else "dense") + ("-tp" if devices > 1 else "-1")


def class_default(moe: bool, devices: int) -> ClassDefault:
    """The defaults of the deployment's class."""
    return DEFAULTS[class_key(moe, devices)]


def median(values: list[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    if not values:
        raise ValueError("median of no values")
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2.0


#: accelerator (catalog name) -> compute generation, for :data:`COMPUTE_BY_GENERATION`
GENERATION: dict[str, str] = {
    "h100-sxm": "hopper", "h100-pcie": "hopper", "h100-nvl": "hopper", "h200-sxm": "hopper", "h200-nvl": "hopper",
    "b200": "blackwell", "b300": "blackwell", "gb200": "blackwell", "gb300": "blackwell",
    "mi300x": "cdna3", "mi325x": "cdna3",
}


@dataclass(frozen=True)
class ComputeDefault:
    """The assumed compute fraction of one (generation, compute precision) and its basis."""

    generation: str
    precision: str  # the compute-peak key (fp8, fp4, ...)
    compute: float  # the median of ``runs`` rows' implied fractions
    runs: int
    sources: int  # submitters (distinct sources) among the rows
    #: the accelerator (catalog name) whose rows alone set it (:data:`BY_DEVICE`); None: the generation's
    device: Optional[str] = None
    #: the MLPerf round of the rows, and the engine release they ran where a release selects the figure
    #: (:data:`COMPUTE_BY_RELEASE`; None: the current rows, whatever the release)
    round: str = "v5.1"
    release: Optional[str] = None
    #: what the rows are, where they are not MLPerf Offline runs (the bf16 rows: public serving-engine
    #: throughput runs, each source an organisation rather than a submitter)
    rows: Optional[str] = None
    #: the lowest ratio of the saturation this default predicts to the one its own rows measured (the
    #: fastest row's throughput at the median fraction over its measured throughput), where the rows
    #: spread wider than the MLPerf sets' 2 % (evaluate/load.py UNCALIBRATED_SATURATION_LOW): an open
    #: loop is overloaded on this default only from a utilisation of 1 / this; None: the 2 % stands
    saturation_low: Optional[float] = None

    def basis(self) -> str:
        gen = {"cdna3": "CDNA3"}.get(self.generation, self.generation.capitalize())
        if self.device:
            gen += f" ({self.device.upper()})"
        under = f" under {self.release}" if self.release else ""
        if self.rows:
            return f"{gen} {self.precision}: median of {self.runs} {self.rows}, {self.sources} sources"
        return (f"{gen} {self.precision}{under}: median of {self.runs} MLPerf {self.round} Offline runs, "
                f"{self.sources} submitters")


#: (generation, or for :data:`BY_DEVICE` the accelerator; compute precision) -> the compute fraction
#: large-batch throughput runs reached:
#: the median of docs/calibration.md's MLPerf Inference v5.1 Offline rows (m1-m17, section
#: "Compute defaults per generation and precision"; one software generation, 2025; each row a
#: submitter's VALID Llama-2-70B run on 8 devices), each row's fraction *per operator*: the one
#: at which the realistic estimate's own large-batch cost (linear layers at compute, the KV read
#: beside them at the class bandwidth, the fixed part of each iteration: 2.1 ms, plus, for the rows
#: whose submission ran without CUDA graphs, 80 x TRTLLM_EAGER_PER_LAYER_S (TensorRT-LLM: 15.50 ms in
#: all) or 80 x ROCM_VLLM_EAGER_PER_LAYER_S (vLLM on ROCm: 16.62 ms in all; 4.3 ms, the CUDA launches, until
#: acc41)) spends the run's time per token.
#: tests/calibration/test_compute_defaults.py recomputes every row and median. Elsewhere
#: compute stays at the class's 50 %.
COMPUTE_BY_GENERATION: dict[tuple[str, str], ComputeDefault] = {
    ("hopper", "fp8"): ComputeDefault("hopper", "fp8", 0.650, 5, 5),
    ("blackwell", "fp4"): ComputeDefault("blackwell", "fp4", 0.477, 5, 5),
    ("mi300x", "fp8"): ComputeDefault("cdna3", "fp8", 0.353, 3, 3, device="mi300x"),
    ("mi325x", "fp8"): ComputeDefault("cdna3", "fp8", 0.453, 4, 4, device="mi325x"),
    # docs/calibration.md "Compute default for bf16 on Hopper" (rows b1-b9: SGLang and vLLM at request
    # rate inf, Llama-3.x-70B bf16 TP 4 on 4 x H200 / 4 x H100; 3 organisations: DataCrunch, the SGLang
    # team, Lambda), the same per-operator rule with a TP 4 replica's terms; every row 0.264-0.399
    # the rows' saturation at 0.319 over their measured throughput: 0.811 (b2) to 1.167 (b3)
    ("hopper", "bf16"): ComputeDefault("hopper", "bf16", 0.319, 9, 3, round="2024",
                                       rows="public serving-engine throughput runs (SGLang, vLLM; 2024)",
                                       saturation_low=0.810),
}

#: the accelerators whose own rows set their default rather than their generation's (the rows above
#: with a ``device``): the rows of one generation differ by device, consistently and beyond the rows'
#: spread, and each device's rows come from at least three submitters. CDNA3 fp8: MI300X 0.342-0.360
#: (3 submitters), MI325X 0.445-0.457 (4; before acc41's ROCm fixed part 0.337-0.344 and 0.420-0.432), one
#: die and one peak in the catalog (a 750 W against a 1,000 W board: the MI325X may hold higher clocks under
#: load; an explanation, not measured). One CDNA3
#: median (0.420) was 23 % above every MI300X row, and its Server run's saturation 1.21 x its own
#: Offline throughput (issue 25).
BY_DEVICE: frozenset[str] = frozenset(d.device for d in COMPUTE_BY_GENERATION.values() if d.device)


@dataclass(frozen=True)
class ReleaseFit:
    """The compute fractions an older engine release reached, fitted as :data:`COMPUTE_BY_GENERATION`
    (the same rule, the same fixed part) on the MLPerf Offline rows of a round that ran it."""

    engine: str  # the budget's ``deployment.engine`` value
    version: tuple[int, ...]  # the release's version (what ``engine_version`` parses to, major.minor.patch)
    #: (generation or, for :data:`BY_DEVICE`-like splits, the accelerator; precision) -> the fraction
    table: dict[tuple[str, str], ComputeDefault]


#: TensorRT-LLM releases older than the current rows' (docs/calibration.md "Compute defaults of older
#: TensorRT-LLM releases"; issue 25, acc44): the MLPerf v4.0 and v4.1 Llama-2-70B Offline rows of 8-device
#: Hopper systems (benchmarks/validation/heldout_v40/, heldout_v41/: verbatim LoadGen summaries, each
#: system's config). Each round's NVIDIA code pins one TensorRT-LLM build (closed/NVIDIA/Makefile.build):
#: v4.0 main of 2024-02-21 (eb8f26c7, a 0.9.0.dev build: the public nightlies of that month are
#: 0.9.0.dev2024020600 and 0.9.0.dev2024022000), v4.1 main of 2024-07-16 (2d234357,
#: tensorrt_llm/version.py ``0.12.0.dev2024071600``). The same per-GPU recipe in both rounds (H100 896
#: sequences TP 2, H200 806 sequences TP 1, fp8, no CUDA graphs) ran 11-13 % faster in v4.1 and 24-43 %
#: faster in v5.1: the release is in the figure. In both rounds the H100 rows (TP 2) sit below the H200 rows
#: (TP 1) beyond their spread (v4.1 0.472-0.485 against 0.568-0.586, 7 and 4 submitters): each device with
#: rows from at least three submitters has its own median; the v5.1 H100 TP 2 rows (Cisco) show no such gap
#: (0.666 against the H200 rows' 0.640-0.656), so it is the release's, not the chip's; an explanation, not
#: measured. A device without its own rows takes its generation's median of that release.
COMPUTE_BY_RELEASE: tuple[ReleaseFit, ...] = (
    ReleaseFit("trtllm", (0, 9, 0), {  # main of 2024-02-21
        ("h100-sxm", "fp8"): ComputeDefault("hopper", "fp8", 0.417, 7, 7, device="h100-sxm", round="v4.0",
                                            release="TensorRT-LLM 0.9.0.dev"),
        ("hopper", "fp8"): ComputeDefault("hopper", "fp8", 0.418, 8, 7, round="v4.0",
                                          release="TensorRT-LLM 0.9.0.dev"),
    }),
    ReleaseFit("trtllm", (0, 12, 0), {  # main of 2024-07-16
        ("h100-sxm", "fp8"): ComputeDefault("hopper", "fp8", 0.477, 10, 7, device="h100-sxm", round="v4.1",
                                            release="TensorRT-LLM 0.12.0.dev"),
        ("h200-sxm", "fp8"): ComputeDefault("hopper", "fp8", 0.582, 5, 4, device="h200-sxm", round="v4.1",
                                            release="TensorRT-LLM 0.12.0.dev"),
        ("hopper", "fp8"): ComputeDefault("hopper", "fp8", 0.482, 15, 9, round="v4.1",
                                          release="TensorRT-LLM 0.12.0.dev"),
    }),
)
#: engine -> the oldest release among :data:`COMPUTE_BY_GENERATION`'s rows: at or after it a declared
#: release takes those (current) defaults. TensorRT-LLM: Cisco's v5.1 runs pin main of 2025-02-18
#: (b6cca6db, closed/Cisco/Makefile.build:114-115; the nightly of that day is 0.18.0.dev2025021800), the
#: other submitters the 1.0 MLPerf branch of July 2025 (closed/<submitter>/Makefile.build)
CURRENT_RELEASE_FROM: dict[str, tuple[int, ...]] = {"trtllm": (0, 18, 0)}


def release_fit(engine: Optional[str], version: Optional[tuple[int, ...]]) -> Optional[ReleaseFit]:
    """The older release whose rows speak for ``engine`` at ``version``: the newest fitted release at
    or before it (a version older than the oldest fitted takes the oldest); None where the version is
    not older than the current rows' (:data:`CURRENT_RELEASE_FROM`), or none is given or fitted."""
    if engine is None or not version or engine not in CURRENT_RELEASE_FROM:
        return None
    if tuple(version) >= CURRENT_RELEASE_FROM[engine]:
        return None
    fits = sorted((f for f in COMPUTE_BY_RELEASE if f.engine == engine), key=lambda f: f.version)
    if not fits:
        return None
    before = [f for f in fits if f.version <= tuple(version)]
    return before[-1] if before else fits[0]


def compute_default(hardware: str, precision_key: str, engine: Optional[str] = None,
                    version: Optional[tuple[int, ...]] = None) -> Optional[ComputeDefault]:
    """The measured compute fraction for ``hardware`` (a catalog name) at ``precision_key``,
    or None where no row set one (the class's 50 % applies). ``engine`` and ``version`` (the
    deployment's, the version as a tuple of integers): an engine release older than the current
    rows' takes its release's rows (:func:`release_fit`) where they cover the hardware."""
    fit = release_fit(engine, version)
    if fit is not None:
        found = fit.table.get((hardware, precision_key))
        gen = GENERATION.get(hardware)
        if found is None and gen is not None:
            found = fit.table.get((gen, precision_key))
        if found is not None:
            return found
    key = hardware if hardware in BY_DEVICE else GENERATION.get(hardware)
    return COMPUTE_BY_GENERATION.get((key, precision_key)) if key else None
