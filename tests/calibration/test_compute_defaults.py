"""docs/calibration.md "Compute defaults per generation and precision": every MLPerf v5.1
Offline row's two fractions recomputed by hand from the figures quoted in the row, the
medians per (generation, precision), and the defaults the realistic estimate takes from them."""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

import pytest

from budgetlint.physics.default_efficiency import COMPUTE_BY_GENERATION, compute_default

DOC = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"
P = 68.98e9  # Llama-2-70B (models.yaml of benchmarks/validation)
KV_TOKEN = 80 * 2 * 8 * 128 * 1  # bytes a token, fp8: 163,840
DENSE_1_BANDWIDTH = 0.860  # the one-device dense class fraction beside the fixed part (docs/calibration.md)
FIXED_ITERATION_S = 2.1e-3  # the fixed part of an iteration (docs/calibration.md), shared by
SLOTS = 1024  # the decodes of a saturated iteration (vLLM's max_num_seqs for the device; a TensorRT-LLM
#: row's own Offline config says 2,048: TRTLLM_SLOTS), or fewer:
#: what the KV cache holds at the mean lengths, (memory x 0.9 usable - 3 GiB runtime reserve - weights)
#: / 163,840 bytes a token / (in + out) (the realistic defaults: options memory_usable_fraction,
#: evaluate/physics_inputs DEFAULT_RUNTIME_RESERVE_BYTES). (vLLM, the AMD rows: an H200 would hold (126.9 - 3.22 - 68.98 GB) / 163,840 =
#: 333,854 tokens, 647 sequences of 222.33 + 293.40; the MI300X and MI325X more than 1,024)
USABLE, RESERVE = 0.9, 3 * 2**30
#: the TensorRT-LLM rows' Offline configs (closed/<submitter>/configs/<system>/Offline/llama2-70b.py):
#: gpu_batch_size 2,048, max_num_tokens 1,536 (H200) / 3,584 (B200), kvcache_free_gpu_mem_frac 0.9: the
#: engine's cache is 0.9 of the memory the weights and the reserve leave, (memory - 3 GiB - weights) x 0.9
#: (TensorRT-LLM's rule, issue 25 acc25: budgetlint/evaluate/physics_inputs.py KV_OF_FREE_MEMORY_ENGINES).
#: An H200: (141 - 68.98 - 3.22 GB) x 0.9 / 163,840 = 377,923 tokens, 732-735 sequences of 222.33 +
#: 291.7-293.4 (647 under vLLM's rule, until acc25); a B200 (fp4 weights 34.49 GB): (180 - 34.49 - 3.22 GB)
#: x 0.9 / 163,840 = 781,615 tokens, 1,569-1,576 sequences (1,523-1,530 under vLLM's rule), 2,774 tokens
#: an iteration at most, under the token limit
TRTLLM_SLOTS = 2048
MEMORY = {"Hopper (H200), fp8": (141e9, 1.0), "Blackwell (B200), fp4": (180e9, 0.5),
          "CDNA3 (MI300X), fp8": (192e9, 1.0), "CDNA3 (MI325X), fp8": (256e9, 1.0)}  # bytes, bytes a weight
#: the mean prompt: the official llama2-70b dataset's 5,463,976 input tokens over its 24,576 samples
#: (benchmarks/validation/README.md; 300 was assumed until issue 25)
PROMPT_MEAN = 5_463_976 / 24_576
#: the budgets' reply lengths (benchmarks/validation/README.md): lognormal, p95 2.5 x the mean. By hand:
#: sigma solves z sigma - sigma^2 / 2 = ln 2.5 with z = 1.6449 (the normal's 95th percentile), the
#: smaller root of sigma^2 - 2 z sigma + 2 ln 2.5 = 0; CV^2 = exp(sigma^2) - 1
_Z = 1.6448536269514722
SIGMA = _Z - math.sqrt(_Z * _Z - 2 * math.log(2.5))
CV2 = math.exp(SIGMA * SIGMA) - 1
#: catalog peaks (dense) and bandwidths, as the section quotes them
HW = {"Hopper (H200), fp8": (1979e12, 4.8e12), "Blackwell (B200), fp4": (9000e12, 8e12),
      "CDNA3 (MI300X), fp8": (2614.9e12, 5.3e12), "CDNA3 (MI325X), fp8": (2614.9e12, 6.0e12)}
SET = {"Hopper (H200), fp8": ("hopper", "fp8"), "Blackwell (B200), fp4": ("blackwell", "fp4"),
       "CDNA3 (MI300X), fp8": ("mi300x", "fp8"), "CDNA3 (MI325X), fp8": ("mi325x", "fp8")}


def _rows() -> list[list[str]]:
    part = DOC.read_text().split("## Compute defaults per generation and precision", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines() if re.match(r"^\| m\d+ \|", line)]


def _nums(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\.?\d*", text)]


#: a run without CUDA graphs ("off": its engine config says so) pays each layer's launches beside the
#: fixed part: (8.23 - 7.35 ms) / 32 layers, SGLang's Llama-3-8B batch-1 decode without and with graphs
#: (github.com/sgl-project/sglang/pull/1401), x Llama-2-70B's 80 layers = 2.2 ms
EAGER_S = 80 * (8.23e-3 - 7.35e-3) / 32
#: a TensorRT-LLM run without CUDA graphs: the whole fixed part is 15.50 ms, the median intercept of
#: nine MLPerf v5.1 Server/Interactive pairs held out of the validation set (HPE XD670 H200's pair, worked
#: by hand in tests/calibration/test_trtllm_fixed_part.py)
TRTLLM_EAGER_ITERATION_S = 15.50e-3
#: a vLLM run on ROCm (every "off, vLLM" row is an MI300X or MI325X) without graphs: the whole fixed part is
#: 16.62 ms, the median over the Server and Interactive runs of five vLLM systems held out of the validation
#: set (benchmarks/validation/heldout_rocm/; the rule and Dell XE9680 MI300X Interactive worked by hand in
#: tests/calibration/test_rocm_fixed_part.py); 2.1 ms + the CUDA launches (EAGER_S) until issue 25 acc41
ROCM_VLLM_EAGER_ITERATION_S = 16.62e-3


def _fractions(row: list[str]) -> tuple[float, float]:
    _, gen, run, _, shape, measured, graphs, _, _ = row
    fixed = {"off, TensorRT-LLM": TRTLLM_EAGER_ITERATION_S, "off, vLLM": ROCM_VLLM_EAGER_ITERATION_S,
             "not read": FIXED_ITERATION_S}[graphs]
    assert (graphs == "off, TensorRT-LLM") == ("_TRT " in run) or graphs == "not read"
    devices = 8
    inp = PROMPT_MEAN
    tok_s, samples_s = _nums(measured)[:2]
    out = tok_s / samples_s
    peak, bw = HW[gen]
    memory, per_weight = MEMORY[gen]
    trtllm = graphs == "off, TensorRT-LLM"
    cache = (memory - RESERVE - P * per_weight) * USABLE if trtllm else memory * USABLE - RESERVE - P * per_weight
    slots = min(TRTLLM_SLOTS if trtllm else SLOTS, int(cache / KV_TOKEN // (inp + out)))
    lower = tok_s * 2 * P * (inp + out) / out / (devices * peak)
    t = devices / tok_s
    # the context a decoding sequence holds over its decode iterations, E[O (P + O/2)] / E[O]
    context = inp + out * (1 + CV2) / 2
    per_op = 2 * P * (1 + inp / out) / peak / (t - KV_TOKEN * context / (bw * DENSE_1_BANDWIDTH)
                                               - fixed / slots)
    assert out == pytest.approx(_nums(shape.split("/")[1])[0], abs=0.01)
    return lower, per_op


def test_the_reply_length_spread() -> None:
    """sigma = 0.7105 and CV^2 = 0.6567 (docs/calibration.md): the 95th percentile of the lognormal
    is 2.5 x its mean, and the decode-weighted context is in + out x 1.6567 / 2."""
    assert SIGMA == pytest.approx(0.7105, abs=1e-4) and CV2 == pytest.approx(0.6567, abs=1e-4)
    assert math.exp(_Z * SIGMA - SIGMA * SIGMA / 2) == pytest.approx(2.5, rel=1e-12)


def test_there_are_rows() -> None:
    assert len(_rows()) == 17


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r[0])
def test_each_rows_fractions(row: list[str]) -> None:
    lower, per_op = _fractions(row)
    assert lower == pytest.approx(float(row[7]), abs=0.0015)
    assert per_op == pytest.approx(float(row[8]), abs=0.0015)
    assert per_op > lower  # the KV read taken out of the time leaves less for the matmuls


def test_the_defaults_are_the_medians_of_at_least_three_submitters() -> None:
    by: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for row in _rows():
        submitter = row[2].split("v5.1 ", 1)[1].split()[0]
        by.setdefault(SET[row[1]], []).append((_fractions(row)[1], submitter))
    assert set(by) == set(COMPUTE_BY_GENERATION) - {("hopper", "bf16")}  # bf16: the b-rows below
    for key, rows in by.items():
        d = COMPUTE_BY_GENERATION[key]
        assert d.compute == pytest.approx(statistics.median(f for f, _ in rows), abs=0.0015)
        assert d.runs == len(rows)
        assert d.sources == len({s for _, s in rows}) >= 3


def test_compute_default_by_hardware_and_precision() -> None:
    assert compute_default("h200-sxm", "fp8").compute == COMPUTE_BY_GENERATION[("hopper", "fp8")].compute
    assert compute_default("h100-sxm", "fp8") is COMPUTE_BY_GENERATION[("hopper", "fp8")]
    assert compute_default("h100-sxm", "bf16") is COMPUTE_BY_GENERATION[("hopper", "bf16")]  # the b-rows
    assert compute_default("h100-sxm", "tf32") is None  # no row set: the class's 50 %
    assert compute_default("a100-sxm", "bf16") is None
    assert compute_default("l40s", "fp8") is None
    assert compute_default("b200", "fp4") is COMPUTE_BY_GENERATION[("blackwell", "fp4")]
    # CDNA3's rows set a default per device (docs/calibration.md): MI300X 0.337-0.344, MI325X 0.420-0.432
    assert compute_default("mi300x", "fp8") is COMPUTE_BY_GENERATION[("mi300x", "fp8")]
    assert compute_default("mi325x", "fp8") is COMPUTE_BY_GENERATION[("mi325x", "fp8")]
    assert compute_default("mi300x", "bf16") is None  # a device with its own rows, not at this precision


def test_each_devices_rows_stand_apart_where_its_generations_are_split() -> None:
    """A generation's rows are split by device only where they differ beyond their spread: every MI300X
    row is below every MI325X row, and each device's rows come from at least three submitters."""
    by: dict[str, list[float]] = {}
    for row in _rows():
        by.setdefault(row[1], []).append(_fractions(row)[1])
    mi300x, mi325x = by["CDNA3 (MI300X), fp8"], by["CDNA3 (MI325X), fp8"]
    assert max(mi300x) < min(mi325x)
    # by hand from the rows' per-operator column: medians 0.353 (0.342, 0.353, 0.360) and
    # (0.449 + 0.457) / 2 = 0.453; the single CDNA3 median of all seven would be 0.449, 27 % above 0.353
    # (before acc41's ROCm fixed part: 0.342, 0.4275 and 0.420, 23 % above)
    assert statistics.median(mi300x) == pytest.approx(0.353, abs=0.0015)
    assert statistics.median(mi325x) == pytest.approx(0.453, abs=0.0015)
    assert statistics.median(mi300x + mi325x) / statistics.median(mi300x) == pytest.approx(1.27, abs=0.01)


def test_a_budget_on_hopper_fp8_is_estimated_at_the_measured_fraction(tmp_path: Path) -> None:
    """An H200 fp8 budget's realistic compute fraction is Hopper fp8's median (0.650, the rows
    above), said with its basis; the same budget in bf16 takes Hopper bf16's (0.319, the b-rows below), and so
    in fp16 (one compute key: the same tensor-core rate); on an A100, which has no rows, the class's 50 %."""
    import json
    import subprocess
    import sys

    for precision, want in (("fp8", 0.650), ("bf16", 0.319), ("fp16", 0.319), ("a100 bf16", 0.5)):
        hardware = "a100-sxm-80gb" if precision.startswith("a100") else "h200-sxm"
        precision = precision.split()[-1]
        (tmp_path / "b.yaml").write_text(f"""version: 1
kind: budgets
budgets:
  - name: b
    owner: "@x"
    workload: {{prompt_tokens: 300, output_tokens: 300}}
    promise: {{ttft: 2 s}}
    deployment: {{model: llama-3.1-70b, hardware: {hardware}, weight_precision: {precision}}}
""")
        proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(tmp_path / "b.yaml"),
                               "--format", "json", "--quiet"], capture_output=True, text=True, cwd=tmp_path)
        analysis = json.loads(proc.stdout)["budgets"][0]["analysis"]
        assert analysis["efficiency_compute"] == pytest.approx(want)
        words = analysis["efficiency_assumed"]["words"]
        assert ("MLPerf v5.1 Offline" in words) == (precision == "fp8"), words
        assert ("public serving-engine throughput runs" in words) == (want == 0.319), words


#: the median row of each set: (hardware, weight precision, reply mean, samples/s of 8 devices, engine,
#: max_num_seqs, max_num_batched_tokens: the TensorRT-LLM rows' own Offline configs, vLLM's defaults else;
#: cuda_graphs as the row's column: "off" false, "not read" unstated). MI325X's four rows have no middle
#: one: m16 (0.457) is 0.9 % above their median 0.453; MI300X's middle row is m12, Dell's (m13 until acc41)
MEDIAN_ROWS = {"m6": ("b200", "fp4", 273.35, 371.423, "trtllm", 2048, 3584, False),
               "m3": ("h200-sxm", "fp8", 293.40, 119.442, "trtllm", 2048, 1536, False),
               "m12": ("mi300x", "fp8", 301.67, 90.5808, "vllm", 1024, 8192, False),
               "m16": ("mi325x", "fp8", 300.96, 114.578, "vllm", 1024, 8192, False)}


@pytest.mark.parametrize("row", sorted(MEDIAN_ROWS))
def test_an_offline_shaped_budget_saturates_at_its_rows_throughput(row: str, tmp_path: Path) -> None:
    """The default reproduces the run it came from: a budget of the validation set's shape (one
    replica a device, lognormal prompts of the dataset's mean 222.33 capped at 1,021 and replies of the
    row's mean, p95 2.5 x, the row's scheduler limits, no CUDA graphs and the engine as the rows' submissions) saturates (the closed
    form, load.saturation_request_per_s) at the row's Offline samples/s over its 8 devices, within 1.5 %. Until issue 25 the fit took fixed lengths and no fixed part:
    the B200 row's budget saturated at ~45.2 against 46.43, and the B200 Server run (at 0.98 of it)
    was judged overloaded."""
    import json
    import shutil
    import subprocess
    import sys

    hardware, precision, reply, samples, engine, seqs, tokens, graphs = MEDIAN_ROWS[row]
    graphs_key = "" if graphs is None else f" cuda_graphs: {str(graphs).lower()},"
    shutil.copy(Path(__file__).resolve().parents[2] / "benchmarks" / "validation" / "models.yaml", tmp_path)
    (tmp_path / "b.yaml").write_text(f"""version: 1
kind: budgets
budgets:
  - name: offline-shaped
    owner: "@x"
    percentile: p99
    workload:
      prompt_tokens: {{lognormal: {{mean: 222.33, p95: 555.8, max: 1021}}}}
      output_tokens: {{lognormal: {{mean: {reply}, p95: {reply * 2.5}}}}}
      arrival_rate: 1 request/s
      arrival: poisson
    promise: {{ttft: 2 s, tpot: 200 ms}}
    deployment: {{model: llama-2-70b, hardware: {hardware}, devices: 1, weight_precision: {precision},
                  kv_precision: fp8, max_num_seqs: {seqs}, max_num_batched_tokens: {tokens},{graphs_key}
                  engine: {engine}}}
""")
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(tmp_path / "b.yaml"),
                           "--format", "json", "--quiet"], capture_output=True, text=True, cwd=tmp_path)
    mu = json.loads(proc.stdout)["budgets"][0]["load"]["saturation_request_per_s"]
    assert mu == pytest.approx(samples / 8, rel=0.015)


# ---- older TensorRT-LLM releases (docs/calibration.md "Compute defaults of older TensorRT-LLM releases";
# issue 25, acc44): MLPerf v4.0 / v4.1 Offline rows, the same rule with a tensor-parallel replica's terms

#: the catalog's H100 SXM (80 GB, 3.35 TB/s, fp8 1,979 TFLOP/s) and H200 SXM, as the section quotes them
OLD_HW = {"Hopper (H100 SXM), fp8": (1979e12, 3.35e12, 80e9, "h100-sxm"),
          "Hopper (H200 SXM), fp8": (1979e12, 4.8e12, 141e9, "h200-sxm")}
#: the class bandwidth fractions beside the fixed part: one device 0.860, tensor-parallel 0.634
BANDWIDTH_BY_TP = {1: 0.860, 2: 0.634}
#: 12 us a layer of all-reduce latency under TP (two all-reduces of ~6 us: github.com/NVIDIA/nccl/issues/1259)
ALLREDUCE_PER_LAYER_S = 12e-6
RELEASES = {"TensorRT-LLM 0.9.0.dev": (0, 9, 0), "TensorRT-LLM 0.12.0.dev": (0, 12, 0)}


def _old_rows() -> list[list[str]]:
    part = DOC.read_text().split("## Compute defaults of older TensorRT-LLM releases", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines() if re.match(r"^\| r\d+ \|", line)]


def _old_fractions(row: list[str]) -> tuple[int, float, float]:
    _, release, run, device, shape, batch, measured, _, _, _ = row
    devices, tp = (int(x) for x in re.findall(r"\d+", shape))
    peak, bw, memory, _ = OLD_HW[device]
    tok_s, samples_s = _nums(measured)[:2]
    out = tok_s / samples_s
    fixed = TRTLLM_EAGER_ITERATION_S + (80 * ALLREDUCE_PER_LAYER_S if tp > 1 else 0.0)
    cache = tp * (memory - P / tp - RESERVE) * USABLE  # TensorRT-LLM: 0.9 of what the weights leave, per device
    slots = min(int(batch.replace(",", "")), int(cache / KV_TOKEN // (PROMPT_MEAN + out)))
    t = devices / tok_s  # TP x a replica's time per output token
    context = PROMPT_MEAN + out * (1 + CV2) / 2
    lower = tok_s * 2 * P * (PROMPT_MEAN + out) / out / (devices * peak)
    per_op = 2 * P * (1 + PROMPT_MEAN / out) / peak / (t - KV_TOKEN * context / (bw * BANDWIDTH_BY_TP[tp])
                                                       - tp * fixed / slots)
    return slots, lower, per_op


def test_there_are_older_release_rows() -> None:
    rows = _old_rows()
    assert len(rows) == 23 and all("(VALID)" in r[2] for r in rows)
    assert {r[1] for r in rows} == set(RELEASES)


@pytest.mark.parametrize("row", _old_rows(), ids=lambda r: r[0])
def test_each_older_rows_fractions(row: list[str]) -> None:
    slots, lower, per_op = _old_fractions(row)
    assert slots == int(row[7])
    assert lower == pytest.approx(float(row[8]), abs=0.0015)
    assert per_op == pytest.approx(float(row[9]), abs=0.0015)


def test_the_older_release_defaults_are_the_medians_of_at_least_three_submitters() -> None:
    """Each release's device medians (a device with rows from >= 3 submitters) and its Hopper median
    over every row are COMPUTE_BY_RELEASE's, and nothing else is there."""
    from budgetlint.physics.default_efficiency import COMPUTE_BY_RELEASE

    by: dict[tuple[tuple[int, ...], str], list[tuple[float, str]]] = {}
    for row in _old_rows():
        submitter = row[2].split()[3]  # "MLPerf Inference v4.0 NVIDIA ..."
        version, frac = RELEASES[row[1]], _old_fractions(row)[2]
        by.setdefault((version, OLD_HW[row[3]][3]), []).append((frac, submitter))
        by.setdefault((version, "hopper"), []).append((frac, submitter))
    expected = {k: v for k, v in by.items() if len({s for _, s in v}) >= 3}
    assert ((0, 9, 0), "h200-sxm") not in expected  # v4.0's H200: NVIDIA alone
    got = {(fit.version, key[0]): d for fit in COMPUTE_BY_RELEASE for key, d in fit.table.items()}
    assert set(got) == set(expected)
    for key, rows in expected.items():
        d = got[key]
        assert d.compute == pytest.approx(statistics.median(f for f, _ in rows), abs=0.0015), key
        assert (d.runs, d.sources) == (len(rows), len({s for _, s in rows})), key
    # the H100 rows (TP 2) below the H200 rows (TP 1) in each round, beyond their spread
    for version in RELEASES.values():
        h100 = [f for f, _ in by[(version, "h100-sxm")]]
        h200 = [f for f, _ in by[(version, "h200-sxm")]]
        assert max(h100) < min(h200)


def test_the_release_selects_the_rows() -> None:
    """The newest fitted release at or before the declared version; at or after the oldest build of the
    current rows (0.18, Cisco's v5.1 main of 2025-02-18), unstated, or another engine: the current rows."""
    from budgetlint.physics.default_efficiency import release_fit

    current = COMPUTE_BY_GENERATION[("hopper", "fp8")]
    assert compute_default("h100-sxm", "fp8", "trtllm", (0, 9, 0)).compute == 0.417
    assert compute_default("h100-sxm", "fp8", "trtllm", (0, 11, 0)).compute == 0.417  # between: the earlier
    assert compute_default("h100-sxm", "fp8", "trtllm", (0, 7, 1)).compute == 0.417  # older than all: the oldest
    assert compute_default("h100-sxm", "fp8", "trtllm", (0, 12, 0)).compute == 0.477
    assert compute_default("h200-sxm", "fp8", "trtllm", (0, 17, 0)).compute == 0.582
    assert compute_default("h200-sxm", "fp8", "trtllm", (0, 9, 0)).compute == 0.418  # no own rows: the round's Hopper
    assert compute_default("h100-nvl", "fp8", "trtllm", (0, 12, 0)).compute == 0.482
    for engine, version in (("trtllm", (0, 18, 0)), ("trtllm", (1, 0)), ("trtllm", None), ("vllm", (0, 9, 0)),
                            (None, (0, 9, 0))):
        assert compute_default("h100-sxm", "fp8", engine, version) is current
        assert engine != "trtllm" or version is None or release_fit(engine, version) is None
    # a release with no rows for the generation (Blackwell did not exist for 0.12): the current rows
    assert compute_default("b200", "fp4", "trtllm", (0, 12, 0)) is COMPUTE_BY_GENERATION[("blackwell", "fp4")]
    # bf16: no release rows; the current (public serving-engine) rows, as Blackwell's above
    assert compute_default("h100-sxm", "bf16", "trtllm", (0, 9, 0)) is COMPUTE_BY_GENERATION[("hopper", "bf16")]
    assert compute_default("h100-sxm", "tf32", "trtllm", (0, 9, 0)) is None
    assert compute_default("h100-sxm", "fp8", "trtllm", (0, 9, 0)).basis() == (
        "Hopper (H100-SXM) fp8 under TensorRT-LLM 0.9.0.dev: median of 7 MLPerf v4.0 Offline runs, 7 submitters")


# ---- bf16 on Hopper (docs/calibration.md "Compute default for bf16 on Hopper"): nine public serving-engine
# throughput runs, Llama-3.x-70B bf16 TP 4, the same per-operator rule with a TP 4 replica's terms

def _bf16_rows() -> list[list[str]]:
    part = DOC.read_text().split("## Compute default for bf16 on Hopper", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines() if re.match(r"^\| b\d+ \|", line)]


#: Llama-3.3-70B / 3.1-70B (catalog: 70.55 B; 80 layers x 2 x 8 KV heads x 128 x 2 bytes of bf16)
P70 = 70.55e9
KV_BF16 = 80 * 2 * 8 * 128 * 2
#: catalog H200 SXM and H100 SXM: bytes of memory, bytes/s; dense bf16 989 TFLOP/s on both
BF16_HW = {"4 x H200 SXM": (141e9, 4.8e12), "4 x H100 SXM": (80e9, 3.35e12)}
BF16_PEAK = 989e12
#: the fixed part of an iteration under TP with CUDA graphs: 2.1 ms + 80 layers x 12 us
TP_FIXED_S = FIXED_ITERATION_S + 80 * ALLREDUCE_PER_LAYER_S
#: reply-length spread: SGLang's random set uniform in [1, L] (CV^2 of a uniform from 0: 1/3); ShareGPT: the
#: validation set's lognormal rule (CV2 above)
SPREAD = {"uniform": 1 / 3, "ShareGPT": CV2}


def _bf16_fractions(row: list[str]) -> tuple[int, float, float, float]:
    _, source, engine, devices, lengths, spread, measured, _, _, _, _ = row
    memory, bw = BF16_HW[devices]
    inp, out = _nums(lengths)[:2]
    tok_s = _nums(measured)[0]
    limit = 256 if engine.startswith("vLLM 0.6.0") else None  # vLLM 0.6.0's max_num_seqs default; Lambda's stated
    cache = 4 * (memory * USABLE - RESERVE) - 2 * P70  # vLLM's rule over four devices, bf16 weights
    slots = int(cache / KV_BF16 // (inp + out))
    slots = min(slots, limit) if limit else slots
    context = inp + out * (1 + SPREAD[spread]) / 2
    t = 4 / tok_s
    lower = tok_s * 2 * P70 * (inp + out) / out / (4 * BF16_PEAK)
    per_op = 2 * P70 * (1 + inp / out) / BF16_PEAK / (t - KV_BF16 * context / (bw * BANDWIDTH_BY_TP[2])
                                                      - 4 * TP_FIXED_S / slots)
    return slots, context, lower, per_op


def test_there_are_bf16_rows_from_three_sources() -> None:
    rows = _bf16_rows()
    assert len(rows) == 9
    assert {r[1].split(",")[0] for r in rows} == {"DataCrunch", "SGLang team", "Lambda"}


@pytest.mark.parametrize("row", _bf16_rows(), ids=lambda r: r[0])
def test_each_bf16_rows_fractions(row: list[str]) -> None:
    slots, context, lower, per_op = _bf16_fractions(row)
    assert slots == int(row[7].replace(",", ""))
    assert context == pytest.approx(float(row[8].replace(",", "")), abs=0.6)
    assert lower == pytest.approx(float(row[9]), abs=0.0015)
    assert per_op == pytest.approx(float(row[10]), abs=0.0015)
    assert per_op > lower


def test_the_bf16_default_is_the_rows_median() -> None:
    """By hand, b1 (DataCrunch random 1024/1024: 1,525,074 in and 1,544,818 out over 3,000 requests,
    4,520.70 out tok/s on 4 x H200): t = 4 / 4,520.70 = 884.8 us; X = 508.36 + 514.94 x 4/3 / 2 = 851.7;
    KV term 327,680 x 851.7 / (4.8e12 x 0.634) = 91.7 us; U = (4 x (126.9 - 3.22) - 141.1 GB) / 327,680 /
    1,023.3 = 1,054, fixed 4 x 3.06 ms / 1,054 = 11.6 us; 2 x 70.55e9 x (1 + 508.36 / 514.94) / 989e12 =
    283.7 us of dense compute a token: 283.7 / (884.8 - 91.7 - 11.6) = 0.363. The default is the median
    of the nine rows, from three organisations."""
    b1 = _bf16_fractions(_bf16_rows()[0])
    assert b1[3] == pytest.approx(283.7 / (884.8 - 91.7 - 11.6), rel=2e-3)
    fractions = sorted(_bf16_fractions(r)[3] for r in _bf16_rows())
    d = COMPUTE_BY_GENERATION[("hopper", "bf16")]
    assert d.compute == pytest.approx(statistics.median(fractions), abs=0.0015)
    assert (d.runs, d.sources) == (9, 3)
    assert 0.26 < fractions[0] and fractions[-1] < 0.40  # every row: about a third of the dense peak
    assert d.basis() == ("Hopper bf16: median of 9 public serving-engine throughput runs (SGLang, vLLM; "
                         "2024), 3 sources")


def test_the_bf16_defaults_saturation_band_is_its_fastest_rows() -> None:
    """Each row's throughput at the median fraction over its measured throughput: the fastest row (b2, 0.399)
    is predicted at 0.811 of what it measured. By hand for b2 (random 1024/512): compute a token 2 x 70.55e9 x
    (1 + 508.54 / 257.40) / 989e12 = 424.6 us, at 0.319: 1,331.0 us; beside it KV 327,680 x 679.7 / (4.8e12 x
    0.634) = 73.2 us and fixed 4 x 3.06 ms / 1,408 = 8.7 us: 1,412.9 us a token against the measured 4 / 3,492.29
    = 1,145.4 us: 0.8107. The default's ``saturation_low`` is that, rounded down (an open loop is overloaded on
    it only from 1 / 0.810 = 1.235, evaluate/load.py overload_edge)."""
    d = COMPUTE_BY_GENERATION[("hopper", "bf16")]
    ratios = {}
    for row in _bf16_rows():
        slots, context, _, _ = _bf16_fractions(row)
        bw = BF16_HW[row[3]][1]
        inp, out = _nums(row[4])[:2]
        compute = 2 * P70 * (1 + inp / out) / BF16_PEAK
        other = KV_BF16 * context / (bw * BANDWIDTH_BY_TP[2]) + 4 * TP_FIXED_S / slots
        ratios[row[0]] = 4 / _nums(row[6])[0] / (compute / d.compute + other)
    assert min(ratios, key=ratios.get) == "b2"
    assert ratios["b2"] == pytest.approx(1145.4 / 1412.9, abs=5e-4)
    assert d.saturation_low == math.floor(min(ratios.values()) * 1000) / 1000 == 0.810
    # the MLPerf sets' rows spread within the 2 % the global band already allows: none of them sets one
    assert all(v.saturation_low is None for k, v in COMPUTE_BY_GENERATION.items() if k != ("hopper", "bf16"))


def test_bf16_on_other_hopper_cards_and_on_a_users_partial_card(tmp_path: Path) -> None:
    """What users write beside the catalog's H100 SXM: an H200 NVL (Hopper: the bf16 rows' 0.319 and their
    band, 1 / 0.810) and a card of their own hardware file that lists its bandwidth alone (no generation: the
    class's 50 %; its missing memory and compute are said, BL306 / BL309, and nothing stops the run)."""
    import json
    import subprocess
    import sys

    (tmp_path / "hw.yaml").write_text("version: 1\nkind: hardware\nhardware:\n  - name: my-h100\n"
                                      "    bandwidth: 3.35 TB/s\n")
    (tmp_path / "b.yaml").write_text("""version: 1
kind: budgets
budgets:
  - name: nvl
    owner: "@x"
    workload: {prompt_tokens: 2000, output_tokens: 200, arrival_rate: 3 request/s}
    promise: {ttft: 1 s, tpot: 60 ms}
    deployment: {model: llama-3.1-8b, hardware: h200-nvl, weight_precision: bf16}
  - name: partial
    owner: "@x"
    workload: {prompt_tokens: 2000, output_tokens: 200, arrival_rate: 3 request/s}
    promise: {ttft: 1 s, tpot: 60 ms}
    deployment: {model: llama-3.1-8b, hardware: my-h100, weight_precision: bf16}
""")
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-cache", "--no-codeowners", "--format",
                           "json", "--quiet", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    by = {b["name"]: b for b in doc["budgets"]}
    assert by["nvl"]["analysis"]["efficiency_compute"] == 0.319
    assert by["nvl"]["load"]["overload_edge"] == pytest.approx(1 / 0.810)
    assert by["partial"]["analysis"]["efficiency_compute"] == 0.5
    said = {(f["rule"], f["budget"]) for f in doc["findings"]}
    assert {("BL306", "partial"), ("BL309", "partial")} <= said
