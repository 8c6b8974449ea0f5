"""How fast is `budgetlint check`, side by side with check-jsonschema and the
libyaml parse floor, at monorepo scale? Not a timed test: a report.

Run from a fresh clone:

    bash benchmarks/setup.sh && .venv/bin/python benchmarks/bench_speed.py

(about 5 minutes on 2 cores; ``--sizes 100,1000`` skips the 100,000-budget
row.) It generates a synthetic monorepo (N budget files of 10 budgets each,
on ``--configs`` distinct serving configurations as real repositories share
a few, each declaring its traffic when the schema has the load simulation;
plus hardware, models and teams files) in a temporary directory and prints:

1. cold start on the shipped ``budgets/``: budgetlint vs check-jsonschema
   validating the same files against our schemas;
2. the 1,000-file repo (10,000 budgets): budgetlint (``--jobs`` default: every
   core) vs check-jsonschema vs only parsing the YAML with libyaml;
3. per-budget cost vs llm-analysis's per-configuration cost (skipped without
   ``.venvs/llm-analysis``);
4. scaling at 100 / 1,000 / 10,000 files, with the peak memory of each
   process (the parent and every worker);
5. the targets (issue 16), side by side: 10,000 budgets at most 3x the parse
   floor; cold start at most 0.6x check-jsonschema; 100,000 budgets linear
   (10x the files in at most 10.5x the time) within 150 MiB per process.

Options: ``--repeat N`` (default 3; the median is reported), ``--sizes``
(default 100,1000,10000), ``--configs`` (default 50; 0: every budget draws
its own), ``--jobs`` (passed to budgetlint; default: its own, every core),
``--keep DIR`` to keep the generated repo.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BUDGETLINT_PY = REPO / ".venv" / "bin" / "python"
BENCH_PY = REPO / ".venvs" / "bench" / "bin" / "python"
LLM_ANALYSIS_PY = REPO / ".venvs" / "llm-analysis" / "bin" / "python"

#: runs argv[2:] as a console entry point and writes, at exit, the peak RSS of the
#: child (VmHWM, its own address space after exec) and of the largest of its own
#: children (budgetlint's workers, reaped by then) to argv[1], in kB
PEAK_WRAPPER = """
import atexit, resource, sys
def _peak(path=sys.argv[1]):
    try:
        own = int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])
    except OSError:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    open(path, 'w').write('%d %d' % (own, children))
atexit.register(_peak)
module, func = sys.argv[2].split(':')
sys.argv = [module] + sys.argv[3:]
import importlib
sys.exit(getattr(importlib.import_module(module), func)())
"""

YAML_FLOOR = """
import sys, yaml
loader = yaml.CSafeLoader
for path in open(sys.argv[1]).read().split('\\n'):
    if path:
        with open(path, 'rb') as fh:
            list(yaml.load_all(fh, Loader=loader))
"""

#: (model, hardware, devices, weight precision): deployments that fit, as a real fleet's do
DEPLOYMENTS = [
    ("llama-3.1-8b", "l40s", 1, "bf16"), ("llama-3.1-8b", "h100-sxm", 1, "fp8"), ("acme-13b", "acme-gpu", 1, "bf16"),
    ("qwen3-30b-a3b", "h100-tuned", 1, "fp8"), ("mixtral-8x7b", "h200-sxm", 2, "bf16"),
    ("qwen2.5-32b", "a100-sxm-80gb", 2, "bf16"), ("llama-3.1-70b", "h100-sxm", 4, "fp8"),
    ("llama-3.3-70b", "mi300x", 2, "bf16"), ("acme-moe", "acme-gpu", 2, "fp8"), ("gemma-2-27b", "l40s", 2, "fp8"),
    ("deepseek-v3", "h200-sxm", 8, "fp8"), ("llama-3.1-405b", "b200", 8, "fp8"),
]


# --------------------------------------------------------------------------- the synthetic monorepo


def configurations(count: int, seed: int = 16) -> list[tuple]:
    """``count`` distinct serving configurations (deployment and workload), as a fleet has a few."""
    rng = random.Random(seed)
    out: list[tuple] = []
    while len(out) < count:
        cfg = (*rng.choice(DEPLOYMENTS), rng.choice([200, 1000, 2000, 4000]), rng.choice([50, 200, 600, 1000]),
               rng.choice([1, 2, 4, 8]), rng.choice([0, 0.5]), rng.choice(["bf16", "fp8"]),
               rng.choice([0.5, 1, 2, 4]), rng.choice([1, 2]))  # traffic: request/s per service, replicas
        if cfg not in out:
            out.append(cfg)
    return out


def schema_has_traffic() -> bool:
    """Does this checkout's schema know the load simulation's traffic keys (docs/load.md)?"""
    return "arrival_rate" in (REPO / "schemas" / "budgets.schema.json").read_text()


def generate(root: Path, files: int, per_file: int = 10, seed: int = 6, configs: int | None = None,
             traffic: int = 0) -> int:
    """``files`` budget files of ``per_file`` budgets each, plus hardware/models/teams; returns budgets.

    With ``configs``, every budget runs one of that many distinct configurations
    (deployment and workload, as real repositories share a few); only the
    promises, percentiles, names and owners differ. Without, each budget draws
    its own (about 3,000 distinct among 10,000 budgets). The first ``traffic``
    configurations also declare their traffic (simulated, when the schema has
    the load simulation), and their budgets share one promise tier each (the
    simulation's cache is per configuration and promises)."""
    rng = random.Random(seed)
    fleet = configurations(configs) if configs else None
    simulated = {fleet[k] for k in range(min(traffic, len(fleet)))} if fleet and schema_has_traffic() else set()
    root.mkdir(parents=True, exist_ok=True)
    teams = [f"@acme/team-{i:02d}" for i in range(40)]
    (root / "teams.yaml").write_text("version: 1\nkind: teams\nteams:\n" + "".join(
        f'  - handle: "{t}"\n    name: Team {i}\n' for i, t in enumerate(teams)))
    (root / "platform").mkdir(exist_ok=True)
    (root / "platform" / "hardware.yaml").write_text("""version: 1
kind: hardware
hardware:
  - name: acme-gpu
    vendor: Acme
    memory: 96 GB
    bandwidth: 4 TB/s
    compute: {bf16: 1200 TFLOP/s, fp8: 2400 TFLOP/s}
    interconnect: 450 GB/s
    source: synthetic
  - name: h100-tuned
    extends: h100-sxm
    bandwidth: 3.2 TB/s
    source: synthetic
""")
    (root / "platform" / "models.yaml").write_text("""version: 1
kind: models
models:
  - name: acme-13b
    parameters: "13B"
    layers: 40
    hidden_size: 5120
    attention_heads: 40
    kv_heads: 8
    head_dim: 128
    attention: gqa
    source: synthetic
  - name: acme-moe
    parameters: "47B"
    active_parameters: "13B"
    layers: 32
    hidden_size: 4096
    attention_heads: 32
    kv_heads: 8
    head_dim: 128
    attention: gqa
    experts: 8
    experts_per_token: 2
    source: synthetic
""")
    count = 0
    for i in range(files):
        team = teams[i % len(teams)]
        lines = ["version: 1", "kind: budgets", "budgets:"]
        for j in range(per_file):
            count += 1
            cfg = fleet[rng.randrange(len(fleet))] if fleet else None
            if cfg:
                model, hardware, devices, weights, prompt, output = cfg[:6]
            else:
                model, hardware, devices, weights = rng.choice(DEPLOYMENTS)
                prompt, output = rng.choice([200, 1000, 2000, 4000]), rng.choice([50, 200, 600, 1000])
            tight = rng.random() < 0.1  # about one budget in ten cannot be met or is at risk
            ttft_ms = rng.choice([50, 100]) if tight else rng.choice([800, 1500, 3000])
            pace = rng.choice([150, 300]) if tight else rng.choice([5, 8, 10, 15])
            # drawn in the order the corpus always drew them (the same files as before for a seed)
            percentile = rng.choice(['p50', 'p90', 'p95', 'p99'])
            concurrency = cfg[6] if cfg else rng.choice([1, 2, 4, 8])
            prefix = cfg[7] if cfg else rng.choice([0, 0.5])
            as_pace = rng.random() < 0.5
            kv = cfg[8] if cfg else rng.choice(['bf16', 'fp8'])
            traffic_here = cfg in simulated
            if traffic_here:  # one promise tier per simulated configuration
                tier = random.Random(str(cfg))
                ttft_ms, pace = tier.choice([800, 1500, 3000]), tier.choice([5, 8, 10, 15])
                percentile, as_pace = tier.choice(['p90', 'p95', 'p99']), tier.random() < 0.5
            e2e_s = int(ttft_ms / 1000 + output / pace * 1.25) + 1
            lines += [
                f"  - name: svc{i:05d}-b{j}",
                f"    description: synthetic budget {j} of service {i}",
                f'    owner: "{team}"',
                f"    percentile: {percentile}",
                "    workload:",
                f"      prompt_tokens: {prompt}",
                f"      output_tokens: {output}",
                f"      concurrency: {concurrency}",
                f"      prefix_cache_hit: {prefix}",
                *([f"      arrival_rate: {cfg[9]:g} request/s"] if traffic_here else []),
                "    promise:",
                f"      ttft: {ttft_ms} ms",
                f"      pace: {pace} token/s" if as_pace else f"      tpot: {1000 / pace:g} ms",
                f"      e2e: {e2e_s} s",
                "    segments:",
                "      - name: queue",
                "        kind: queue",
                f"        allowance: {ttft_ms // 4} ms",
                f'        owner: "{team}"',
                "      - name: prefill",
                "        kind: prefill",
                f"        allowance: {ttft_ms // 2} ms",
                f'        owner: "{team}"',
                "    deployment:",
                f"      model: {model}",
                f"      hardware: {hardware}",
                f"      devices: {devices}",
                f"      weight_precision: {weights}",
                f"      kv_precision: {kv}",
                *([f"      replicas: {cfg[10]}"] if traffic_here else []),
            ]
        d = root / "services" / f"group-{i % 50:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"svc{i:05d}.yaml").write_text("\n".join(lines) + "\n")
    return count


# --------------------------------------------------------------------------- check-jsonschema's schema


def _inline(node: Any, here: str, schemas: Path) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            file, _, pointer = node["$ref"].partition("#")
            file = file or here
            target: Any = json.loads((schemas / file).read_text())
            for part in pointer.strip("/").split("/"):
                if part:
                    target = target[part]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            out = _inline(target, file, schemas)
            return {"allOf": [out, _inline(rest, here, schemas)]} if rest else out
        return {k: _inline(v, here, schemas) for k, v in node.items() if k not in ("$defs", "$id", "$schema")}
    if isinstance(node, list):
        return [_inline(v, here, schemas) for v in node]
    return node


def combined_schema(path: Path) -> Path:
    """One self-contained schema for every document kind, dispatched on ``kind``
    (check-jsonschema validates against one schema and cannot fetch our $ids)."""
    schemas = REPO / "schemas"
    branches = []
    for kind in ("budgets", "hardware", "models", "teams"):
        name = f"{kind}.schema.json"
        branches.append({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                         "then": _inline(json.loads((schemas / name).read_text()), name, schemas)})
    path.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "allOf": branches}))
    return path


# --------------------------------------------------------------------------- timing


#: every tool runs as installed: bytecode cached (a PYTHONDONTWRITEBYTECODE in the caller's
#: environment would have budgetlint, an editable install, compile its source on every start)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {
    "NO_COLOR": "1", "GITHUB_STEP_SUMMARY": ""}


def timed(cmd: list[str], repeat: int, cwd: Path) -> tuple[float, float, int]:
    """Median wall seconds, max peak RSS of any one process (MiB: the command's or one of its
    children's) and the exit code of ``cmd`` run ``repeat`` times."""
    times, peaks, code = [], [], 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            hwm = Path(tmp) / "hwm"
            full = [cmd[0], "-c", PEAK_WRAPPER, str(hwm), *cmd[1:]]
            start = time.perf_counter()
            proc = subprocess.run(full, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
            times.append(time.perf_counter() - start)
            code = proc.returncode
            if code not in (0, 1):
                raise SystemExit(f"{' '.join(cmd)} failed ({code}): {proc.stderr.decode()[-2000:]}")
            peaks.append(max(map(float, hwm.read_text().split())) / 1024 if hwm.exists() else float("nan"))
    return statistics.median(times), max(peaks), code


JOBS: list[str] = []  # ["--jobs", N] when given


def budgetlint_cmd(paths: list[str]) -> list[str]:
    return [str(BUDGETLINT_PY), "budgetlint.cli:main", "check", "--no-summary", "--no-codeowners", *JOBS, *paths]


def cjs_cmd(schema: Path, files: list[Path]) -> list[str]:
    return [str(BENCH_PY), "check_jsonschema:main", "--schemafile", str(schema), *map(str, files)]


def yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml"))


def per_budget_llm_analysis(n: int = 200) -> float | None:
    """Seconds per llm-analysis inference() call (a Llama-70B-shaped config, TP 4), imports excluded."""
    if not LLM_ANALYSIS_PY.exists():
        return None
    code = f"""
import json, sys, time
sys.path.insert(0, {str(REPO / 'tests' / 'physics')!r})
import llm_analysis_runner as r
cfg = {{"model": {{"name": "gqa-70b", "layers": 80, "heads": 64, "kv_heads": 8, "hidden": 8192, "vocab": 128256,
        "ffn": 32768}}, "gpu": "h100-sxm-80gb", "dtype": "w16a16e16", "tp": 4, "batch": 8, "seq_len": 2000,
        "generate": 600}}
r.run(cfg)
start = time.perf_counter()
for _ in range({n}):
    r.run(cfg)
print((time.perf_counter() - start) / {n})
"""
    proc = subprocess.run([str(LLM_ANALYSIS_PY), "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"  (llm-analysis failed: {proc.stderr.strip().splitlines()[-1:]})")
        return None
    return float(proc.stdout.strip().splitlines()[-1])


def per_budget_budgetlint(root: Path) -> tuple[float, int]:
    """In-process seconds per budget for the whole pipeline (load, validate, build, rules, JSON)."""
    code = f"""
import time, sys
from budgetlint.run.check import Options, run_check
from budgetlint.reporters import render
run_check(['budgets/'], Options(use_codeowners=False))  # imports and first-use caches
start = time.perf_counter()
report = run_check([{str(root)!r}], Options(use_codeowners=False))
render('json', report)
print(time.perf_counter() - start, len(report.budgets))
"""
    out = subprocess.run([str(BUDGETLINT_PY), "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    seconds, budgets = out.stdout.split()
    return float(seconds) / int(budgets), int(budgets)


def row(label: str, seconds: float, peak: float, extra: str = "") -> None:
    print(f"  {label:<44} {seconds:8.3f} s  {peak:7.1f} MiB  {extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--configs", type=int, default=50,
                        help="distinct serving configurations among the budgets (0: each budget its own)")
    parser.add_argument("--traffic", type=int, default=5,
                        help="how many of the configurations declare traffic (load simulation); default 5")
    parser.add_argument("--jobs", type=int, default=None, help="budgetlint --jobs (default: every core)")
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--cjs-max-files", type=int, default=1000,
                        help="skip check-jsonschema above this many files (it takes ~45 s per 1,000)")
    args = parser.parse_args()
    if args.jobs is not None:
        JOBS[:] = ["--jobs", str(args.jobs)]
    sizes = [int(s) for s in args.sizes.split(",")]
    have_cjs = (REPO / ".venvs" / "bench" / "bin" / "check-jsonschema").exists()
    if not have_cjs:
        print("check-jsonschema missing: run `bash benchmarks/setup.sh` first; its columns are skipped")
    work = Path(tempfile.mkdtemp(prefix="budgetlint-bench-"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"budgetlint speed benchmark ({cores} cores, load average {load:.1f} at the start, Python "
          f"{sys.version.split()[0]}); budgetlint --jobs {args.jobs if args.jobs is not None else 'default (every core)'}; "
          f"{args.configs or 'no shared'} configurations"
          f"{f', {args.traffic} of them with traffic (load simulation)' if args.configs and args.traffic and schema_has_traffic() else ''}; "
          f"median of {args.repeat} runs; peak = the largest process's VmHWM (parent or worker)")
    cold: tuple[float, float] | None = None
    try:
        schema = combined_schema(work / "all-kinds.schema.json")
        shipped = yaml_files(REPO / "budgets")

        print("\n1. cold start on the shipped budgets/ "
              f"({len(shipped)} files)")
        timed(budgetlint_cmd(["budgets/"]), 1, REPO)  # warm-up: bytecode written, files in the page cache
        bl, bl_peak, _ = timed(budgetlint_cmd(["budgets/"]), args.repeat, REPO)
        row("budgetlint check budgets/", bl, bl_peak)
        if have_cjs:
            timed(cjs_cmd(schema, shipped), 1, REPO)
            cj, cj_peak, _ = timed(cjs_cmd(schema, shipped), args.repeat, REPO)
            row("check-jsonschema (same files, our schemas)", cj, cj_peak)
            print(f"  ratio budgetlint / check-jsonschema: {bl / cj:.2f} (target <= 0.6)")
            cold = (bl, cj)

        results: dict[int, tuple[float, float, int]] = {}
        cjs_results: dict[int, float] = {}
        floor_results: dict[int, float] = {}
        for n in sizes:
            root = work / f"repo-{n}"
            budgets = generate(root, n, configs=args.configs or None, traffic=args.traffic)
            files = yaml_files(root)
            reps = args.repeat if n <= 1000 else 1
            print(f"\n{'2' if n == 1000 else '4 (scaling)'}. {n:,} budget files ({budgets:,} budgets, {len(files):,} YAML files)")
            t, peak, _ = timed(budgetlint_cmd([str(root)]), reps, REPO)
            results[n] = (t, peak, budgets)
            row(f"budgetlint check ({n:,} files)", t, peak, f"{t / budgets * 1e6:.0f} us/budget")
            if n <= max(1000, args.cjs_max_files):
                listing = work / f"files-{n}.txt"
                listing.write_text("\n".join(map(str, files)))
                floors = []
                for _ in range(reps):
                    start = time.perf_counter()
                    subprocess.run([str(BENCH_PY if BENCH_PY.exists() else BUDGETLINT_PY), "-c", YAML_FLOOR,
                                    str(listing)], check=True, env=ENV)
                    floors.append(time.perf_counter() - start)
                floor = statistics.median(floors)
                floor_results[n] = floor
                row("floor: parse only, PyYAML + libyaml", floor, float("nan"))
                print(f"  budgetlint / parse floor: {t / floor:.2f}")
            if have_cjs and n <= args.cjs_max_files:
                cj, cj_peak, _ = timed(cjs_cmd(schema, files), reps, REPO)
                cjs_results[n] = cj
                row("check-jsonschema (same files)", cj, cj_peak)
                print(f"  ratio budgetlint / check-jsonschema: {t / cj:.2f}")
            if args.keep and n == 1000:
                shutil.copytree(root, args.keep, dirs_exist_ok=True)

        print("\n3. per-budget cost")
        probe_root = work / "repo-1000" if 1000 in sizes else work / f"repo-{sizes[0]}"
        per, n_budgets = per_budget_budgetlint(probe_root)
        print(f"  budgetlint whole pipeline, in-process, one process: {per * 1e6:8.1f} us/budget ({n_budgets:,} budgets)")
        la = per_budget_llm_analysis()
        if la is None:
            print("  llm-analysis: skipped (no .venvs/llm-analysis; bash benchmarks/setup.sh installs it)")
        else:
            print(f"  llm-analysis inference() per configuration: {la * 1e6:8.1f} us  "
                  f"(ratio budgetlint / llm-analysis: {per / la:.3f})")
        print("  engine only (roofline.evaluate per budget): see benchmarks/bench_engine.py")

        print("\n4. scaling (budgetlint check; wall time includes interpreter start)")
        base_n = sizes[0]
        for n in sizes:
            t, peak, budgets = results[n]
            scale = t / results[base_n][0]
            print(f"  {n:>6,} files {budgets:>7,} budgets  {t:8.3f} s  x{scale:5.1f} for x{n // base_n} files"
                  f"  peak per process {peak:6.1f} MiB"
                  + (f"  check-jsonschema {cjs_results[n]:.3f} s" if n in cjs_results else ""))

        print(f"\n5. targets (issue 16), {cores} cores, load average now {os.getloadavg()[0]:.1f}")
        if 1000 in results and 1000 in floor_results:
            t, _, b = results[1000]
            f = floor_results[1000]
            print(f"  {b:,} budgets: {t:.2f} s = {t / f:.2f}x the libyaml parse floor ({f:.2f} s) "
                  f"on {cores} cores (target <= 3): {'met' if t / f <= 3 else 'NOT met'}")
        if cold:
            print(f"  cold start on budgets/: {cold[0]:.3f} s = {cold[0] / cold[1]:.2f}x check-jsonschema "
                  f"({cold[1]:.3f} s) (target <= 0.6): {'met' if cold[0] / cold[1] <= 0.6 else 'NOT met'}")
        if 1000 in results and 10000 in results:
            (t1, p1, b1), (t2, p2, b2) = results[1000], results[10000]
            peak = max(p1, p2)
            print(f"  {b2:,} budgets: {t2:.1f} s = {t2 / t1:.2f}x the {b1:,}-budget time for 10x the files "
                  f"(target <= 10.5): {'met' if t2 / t1 <= 10.5 else 'NOT met'}; peak RSS per process "
                  f"{peak:.1f} MiB (target <= 150): {'met' if peak <= 150 else 'NOT met'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
