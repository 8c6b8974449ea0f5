"""budgetlint and NVIDIA's aiconfigurator side by side on the validation set (issue 25).

For every run of ``benchmarks/validation`` that aiconfigurator can express (an NVIDIA system
in its database: h100_sxm, h200_sxm, b200_sxm, l40s; not H200 NVL, not AMD), prints each
tool's predicted / measured TTFT and TPOT and its wall time for that configuration.

aiconfigurator's ``cli estimate`` predicts a **static batch** (``--batch-size``), not an
arrival rate: each run is asked at the batch it held by Little's law, (requests per second
per replica) x (its measured mean request latency). budgetlint is asked the budget as
written (its traffic). aiconfigurator reads the model's ``config.json`` from Hugging Face;
offline it is given a local one (``models/``, written here from each model's published
config, the values budgetlint's catalog holds).

    benchmarks/aiconfigurator/setup.sh                      # its own venv (PyPI)
    .venv/bin/python benchmarks/aiconfigurator/compare.py [--aic PATH/TO/aiconfigurator] [--no-disagg]
    .venv/bin/python benchmarks/aiconfigurator/compare.py --only-disagg   # the disaggregated configuration alone

Ratios: predicted / measured, against the run's p99 where it records one (MLPerf, vLLM), else
its median (SGLang's old key set); aiconfigurator's figures are one number per configuration.
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VALIDATION = HERE.parent / "validation"
sys.path.insert(0, str(VALIDATION))
import run as validation  # noqa: E402  (the validation set's readers)

SYSTEMS = {"h100-sxm": "h100_sxm", "h200-sxm": "h200_sxm", "b200": "b200_sxm", "l40s": "l40s"}
BACKEND = {"mlperf": "trtllm", "vllm": "vllm", "sglang": "sglang"}
QUANT = {"fp8": "fp8", "fp4": "nvfp4", "bf16": "bfloat16"}
KVQUANT = {"fp8": "fp8", "fp4": "fp8", "bf16": "bfloat16"}
#: the models' published config.json values (Hugging Face), as budgetlint's catalog holds them
CONFIGS = {
    "llama-2-70b": dict(hidden_size=8192, intermediate_size=28672, num_attention_heads=64, num_key_value_heads=8,
                        num_hidden_layers=80, vocab_size=32000, max_position_embeddings=4096, rope_theta=10000.0),
    "llama-3.3-70b": dict(hidden_size=8192, intermediate_size=28672, num_attention_heads=64, num_key_value_heads=8,
                          num_hidden_layers=80, vocab_size=128256, max_position_embeddings=131072,
                          rope_theta=500000.0),
    "llama-3.2-3b": dict(hidden_size=3072, intermediate_size=8192, num_attention_heads=24, num_key_value_heads=8,
                         num_hidden_layers=28, vocab_size=128256, max_position_embeddings=131072,
                         rope_theta=500000.0, tie_word_embeddings=True),
}


def model_dir(root: Path, name: str) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "rms_norm_eps": 1e-5, "hidden_act": "silu",
           "torch_dtype": "bfloat16", "head_dim": 128, "tie_word_embeddings": False, **CONFIGS[name]}
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def held_batch(path: Path, b: dict) -> tuple[int, float, float]:
    """(batch by Little's law per replica, mean prompt, mean reply) of the run."""
    h = validation.header(path)
    src, line = validation.resolve(h["measured"])
    rate = float(str(b["workload"]["arrival_rate"]).split()[0]) / b["deployment"]["replicas"]
    if h["format"] == "mlperf":
        s = {}
        for ln in src.read_text().splitlines():
            m = re.match(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$", ln)
            if m:
                s.setdefault(m.group(1), m.group(2))
        e2e = float(s["Mean latency (ns)"]) * 1e-9
        n = float(s["Completed tokens per second"]) / float(s["Completed samples per second"])
        prompt = 300.0  # the validation set's rule (README.md)
    else:
        r = json.loads([x for x in src.read_text().splitlines() if x.strip()][(line or 1) - 1])
        n = r["total_output_tokens"] / r["completed"]
        prompt = r["total_input_tokens"] / r["completed"]
        e2e = (r["mean_e2e_latency_ms"] * 1e-3 if "mean_e2e_latency_ms" in r
               else (r["mean_ttft_ms"] + r["mean_tpot_ms"] * (n - 1)) * 1e-3)
    return max(1, round(rate * e2e)), prompt, n


def aic(exe: str, model: Path, system: str, backend: str, isl: int, osl: int, bs: int, tp: int, wq: str,
        kvq: str) -> tuple[float | None, float | None, float, str]:
    cmd = [exe, "cli", "estimate", "--model", str(model), "--system", system, "--backend", backend,
           "--isl", str(isl), "--osl", str(osl), "--batch-size", str(bs), "--tp", str(tp), "--estimate-mode", "agg",
           "--gemm-quant-mode", wq, "--kvcache-quant-mode", kvq]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    out = p.stdout + p.stderr
    ttft = re.search(r"TTFT:\s+([\d.]+) ms", out)
    tpot = re.search(r"TPOT:\s+([\d.]+) ms", out)
    why = "" if ttft else (out.strip().splitlines() or ["no output"])[-1][:160]
    return (float(ttft.group(1)) * 1e-3 if ttft else None, float(tpot.group(1)) * 1e-3 if tpot else None, wall, why)


#: a disaggregated configuration both tools express (issue 29): Llama 3.3 70B, fp8 weights and KV,
#: on one 8 x H200 node, a prefill pool of 1 x TP4 and a decode pool of 1 x TP4 (the KV over NVLink),
#: 4,096 prompt tokens, 200 output tokens, a decode batch of 16. No published run measures it, so the
#: two tools are compared with each other only: aiconfigurator's ``--estimate-mode disagg`` static
#: batch against budgetlint's flat estimate at concurrency 16 (also a static batch) and its simulated
#: p50 at the request rate aiconfigurator reports for the configuration (its ``seq/s``).
DISAGG = dict(name="disagg-h200x8-llama33-70b-p1tp4-d1tp4", model="llama-3.3-70b", hardware="h200-sxm",
              system="h200_sxm", backend="trtllm", isl=4096, osl=200, tp=4, batch=16, wq="fp8", kvq="fp8")


def disagg_budget(root: Path, rate: float | None) -> Path:
    c = DISAGG
    traffic = f"arrival_rate: {rate:.4g} request/s" if rate else f"concurrency: {c['batch']}"
    path = root / f"disagg-{'rate' if rate else 'static'}.yaml"
    path.write_text(f"""version: 1
kind: budgets
budgets:
  - name: {c['name']}
    owner: "@bench/aiconfigurator"
    percentile: p50
    workload: {{prompt_tokens: {c['isl']}, output_tokens: {c['osl']}, {traffic}}}
    promise: {{ttft: 10 s, tpot: 1 s}}
    deployment:
      model: {c['model']}
      hardware: {c['hardware']}
      weight_precision: {c['wq']}
      kv_precision: {c['kvq']}
      devices: {c['tp']}
      disaggregated:
        prefill: {{replicas: 1}}
        decode: {{replicas: 1}}
        kv_link: nvlink-4
""")
    return path


def disagg_rows(exe: str, root: Path) -> None:
    """The disaggregated configuration: each tool's TTFT and TPOT and its wall time."""
    c = DISAGG
    cmd = [exe, "cli", "estimate", "--model", str(model_dir(root, c["model"])), "--system", c["system"],
           "--backend", c["backend"], "--isl", str(c["isl"]), "--osl", str(c["osl"]), "--estimate-mode", "disagg",
           "--prefill-tp-size", str(c["tp"]), "--prefill-batch-size", "1", "--prefill-num-workers", "1",
           "--decode-tp-size", str(c["tp"]), "--decode-batch-size", str(c["batch"]), "--decode-num-workers", "1",
           "--gemm-quant-mode", QUANT[c["wq"]], "--kvcache-quant-mode", KVQUANT[c["kvq"]]]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall_aic = time.perf_counter() - t0
    out = p.stdout + p.stderr
    grab = {k: re.search(rf"{k}:\s+([\d.]+)", out) for k in ("TTFT", "TPOT", "seq/s")}
    aic_v = {k: float(m.group(1)) for k, m in grab.items() if m}
    rate = aic_v.get("seq/s")
    t0 = time.perf_counter()
    static = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--isolated", str(disagg_budget(root, None)),
                             "--format", "json", "--quiet"], capture_output=True, text=True)
    wall_bl = time.perf_counter() - t0
    flat = json.loads(static.stdout)["budgets"][0]["analysis"]
    sim = {}
    if rate:
        r = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--isolated", str(disagg_budget(root, rate)),
                            "--format", "json", "--quiet"], capture_output=True, text=True)
        sim = json.loads(r.stdout)["budgets"][0].get("load", {}).get("predicted", {})
    print(f"\n{c['name']} (disaggregated; no measured run: the tools against each other)")
    for metric, key in (("ttft_s", "TTFT"), ("tpot_s", "TPOT")):
        a = aic_v.get(key)
        got = flat.get(f"realistic_{metric}")
        s50 = sim.get(metric, {}).get("p50")
        tail = f"  batch {c['batch']}  {wall_bl:5.1f} s / {wall_aic:5.1f} s" if metric == "ttft_s" else ""
        print(f"  {key}: aiconfigurator {a if a is not None else float('nan'):.1f} ms; budgetlint flat "
              f"{got * 1e3 if got else float('nan'):.1f} ms (x{(got * 1e3 / a) if got and a else float('nan'):.2f}), "
              f"simulated p50 at {rate or float('nan'):.3g} request/s "
              f"{s50 * 1e3 if s50 else float('nan'):.1f} ms{tail}")


def budgetlint_check(path: Path) -> tuple[dict, float]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(path), "--format", "json", "--quiet"],
                       capture_output=True, text=True, cwd=VALIDATION)
    wall = time.perf_counter() - t0
    return json.loads(p.stdout)["budgets"][0].get("load", {}).get("predicted", {}), wall


def main() -> int:
    import yaml

    exe = os.environ.get("AICONFIGURATOR", str(HERE / ".venv" / "bin" / "aiconfigurator"))
    if "--aic" in sys.argv:
        exe = sys.argv[sys.argv.index("--aic") + 1]
    if not Path(exe).exists():
        print(f"{exe} absent: run benchmarks/aiconfigurator/setup.sh (or pass --aic PATH)", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="aic-models-"))
    if "--only-disagg" in sys.argv:
        disagg_rows(exe, root)
        return 0
    rows = []
    print(f"{'run':<58} {'metric':<5} {'measured':>9} {'budgetlint':>16} {'aiconfigurator':>16}  batch  wall bl / aic")
    for path in validation.budgets():
        h = validation.header(path)
        if h.get("expect") != "sustained":
            continue
        b = yaml.safe_load(path.read_text())["budgets"][0]
        dep = b["deployment"]
        system = SYSTEMS.get(dep["hardware"])
        if system is None:
            continue
        bs, prompt, n = held_batch(path, b)
        meas = validation.measured(path)
        pred, wall_bl = budgetlint_check(path)
        a_ttft, a_tpot, wall_aic, why = aic(exe, model_dir(root, dep["model"]), system, BACKEND[h["format"]],
                                            round(prompt), round(n), bs, dep["devices"],
                                            QUANT[dep["weight_precision"]], KVQUANT[dep["kv_precision"]])
        for metric, a in (("ttft_s", a_ttft), ("tpot_s", a_tpot)):
            stat = "p99" if "p99" in meas[metric] else "p50"
            want = meas[metric].get(stat)
            if want is None:
                continue
            got = pred.get(metric, {}).get(stat)
            rb = got / want if got else float("nan")
            ra = a / want if a else float("nan")
            rows.append((path.stem, metric, rb, ra, wall_bl, wall_aic))
            tail = f"  {bs:>5}  {wall_bl:5.1f} s / {wall_aic:5.1f} s" if metric == "ttft_s" else ""
            if why and metric == "ttft_s":
                tail += f"  aiconfigurator: {why}"
            print(f"{path.stem:<58} {metric[:4]:<5} {stat} {want * 1e3:5.0f} {got * 1e3 if got else float('nan'):9.0f} "
                  f"{rb:5.2f} {a * 1e3 if a else float('nan'):9.0f} {ra:5.2f}{tail}")
    for metric in ("ttft_s", "tpot_s"):
        both = [(rb, ra) for _, m, rb, ra, _, _ in rows if m == metric and rb == rb and ra == ra]
        if both:
            print(f"{metric[:4]}: median ratio budgetlint {statistics.median(r for r, _ in both):.2f}, "
                  f"aiconfigurator {statistics.median(a for _, a in both):.2f} over {len(both)} runs; median |log "
                  f"ratio| budgetlint {statistics.median(abs(__import__('math').log(r)) for r, _ in both):.2f}, "
                  f"aiconfigurator {statistics.median(abs(__import__('math').log(a)) for _, a in both):.2f}")
    if "--no-disagg" not in sys.argv:
        disagg_rows(exe, root)
    walls = {(r[0]): (r[4], r[5]) for r in rows}
    if walls:
        print(f"wall per configuration: budgetlint median {statistics.median(w for w, _ in walls.values()):.1f} s, "
              f"aiconfigurator median {statistics.median(a for _, a in walls.values()):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
