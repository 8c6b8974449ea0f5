"""Before/after figures for the defects of issue 24 (docs/limits.md).

    cd /tmp && python /path/to/benchmarks/issue24_figures.py                 # this checkout
    cd /tmp && PYTHONPATH=/old/tree python /path/to/benchmarks/issue24_figures.py   # the code before

Each case builds its files in a fresh folder and runs the CLI in a child with
generous bounds (ISSUE24_TIME_S, default 60 s; 2 GiB of address space), and
prints a markdown row: exit code ("killed" at the time bound), wall seconds,
CPU seconds, peak RSS (MiB, from wait4) and the rule codes in the output.
The cases are the ones tests/hardening/test_issue24_gate.py bounds.
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
TIME_S = float(os.environ.get("ISSUE24_TIME_S", "60"))
MEMORY = 2048 * 1024 * 1024
VLLM = {"date": "20250101-000000", "backend": "vllm", "model_id": "m", "num_prompts": 3, "request_rate": 4.0,
        "duration": 2.0, "completed": 3, "total_input_tokens": 30, "total_output_tokens": 12,
        "output_throughput": 6.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "p99_ttft_ms": 150.0}
CHAT = (HERE / "budgets" / "chat.yaml").read_text()
OVER = (HERE / "tests" / "examples" / "overpromised.yaml").read_text()
LOAD = ("version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: \"@acme/chat\"\n    percentile: p95\n"
        "    workload: {{prompt_tokens: 1000, output_tokens: 200, arrival_rate: {rate} request/s}}\n"
        "    promise: {{ttft: 1 s, tpot: 60 ms}}\n    deployment: {{model: llama-3.1-8b, hardware: h100-sxm}}\n")


def crash(d):
    (d / "hw.yaml").write_text("version: 1\nkind: hardware\nhardware:\n  - name: bw-only\n    bandwidth: 2 TB/s\n")
    (d / "b.yaml").write_text(OVER)
    return ["check", "."]


def tiny_rate(d):
    (d / "b.yaml").write_text(LOAD.format(rate="5e-324"))
    return ["check", "b.yaml"]


def max_concurrency(d):
    (d / "run.json").write_text(json.dumps(dict(VLLM, max_concurrency=1e308, output_throughput=1e6)))
    (d / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: \"@acme/chat\"\n"
                              "    workload: {prompt_tokens: 10, output_tokens: 4, concurrency: 4}\n"
                              "    promise: {ttft: 1 s}\n    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n"
                              "    bench: [run.json]\n")
    return ["check", "b.yaml"]


def glob(d):
    f = d / ("a" * 200) / ("a" * 200)
    f.mkdir(parents=True)
    (f / "b.yaml").write_text(CHAT)
    (d / "budgetlint.toml").write_text('[per-file-ignores]\n"*a*a*a*a*a*ab" = ["BL104"]\n')
    return ["check", "."]


def version(d):
    ms = [{"source": "runs.json", "format": "native", "label": f"run {i + 1}",
           "conditions": {"concurrency": {"value": c, "provenance": "read"},
                          "prompt_tokens": {"value": 1000.0, "provenance": "read"},
                          "output_tokens": {"value": 200.0, "provenance": "read"}},
           "metrics": {"ttft": {"unit": "s", "definition": "first_token", "method": "reported",
                                "percentiles": {"p50": t}, "count": 500},
                       "tpot": {"unit": "s", "definition": "budgetlint", "method": "reported",
                                "percentiles": {"p50": p}, "count": 500}},
           "provenance": {"engine": "vllm", "engine_version": v, "date": "2026-10-01T12:00:00"}}
          for i, (c, t, p, v) in enumerate([(1, .06, .011, "0.11.0"), (8, .075, .0122, "1" * 5000),
                                            (32, .14, .0165, "0.9")])]
    (d / "runs.json").write_text(json.dumps({"kind": "budgetlint-benchmark", "version": 1, "measurements": ms}))
    return ["calibrate", "runs.json", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--no-loo", "-o", "c.yaml"]


def spill(d):
    (d / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets:\n" + "".join(
        f"  - name: b{i}\n    owner: \"@acme/chat\"\n    promise: {{ttft: 1 s}}\n" for i in range(30)))
    (d / "site").mkdir()
    (d / "site" / "sitecustomize.py").write_text(
        "import tempfile, budgetlint.run.check as c\nc.SPILL_AFTER_BUDGETS = 1\n"
        "def full(*a, buffering=-1, **k):\n    return open('/dev/full', 'r+b', buffering=buffering)\n"
        "tempfile.TemporaryFile = full\n")
    return ["check", "b.yaml", "--format", "json", "--jobs", "1"]


def margin(d):
    (d / "b.yaml").write_text(CHAT)
    (d / "budgetlint.toml").write_text("margin-warning = " + "9" * 4000 + "\n")
    return ["check", "b.yaml"]


def nan(d):
    (d / "b.yaml").write_text(OVER.replace("      weight_precision: bf16", "      weight_precision: bf16\n"
                                           "      efficiency: {bandwidth: .nan}"))
    return ["check", "b.yaml"]


def nan_band(d):
    shutil.copytree(HERE / "tests" / "cases" / "bl311_calibration_stale", d / "c")
    cal = d / "c" / "cal.yaml"
    cal.write_text(cal.read_text().replace("ttft: {median: 0.06, max: 0.12", "ttft: {median: .nan, max: .nan"))
    return ["check", "c/budgets.yaml", "c/teams.yaml"]


def from_bench(d):
    n = 150_000
    (d / "lens.json").write_text(json.dumps(dict(VLLM, num_prompts=n, completed=n,
                                                 input_lens=[1000 + i % 977 for i in range(n)],
                                                 output_lens=[100 + i % 313 for i in range(n)])))
    (d / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets:\n" + "".join(
        f"  - name: b{i}\n    owner: \"@acme/chat\"\n    workload: {{prompt_tokens: {{from_bench: lens.json}}, "
        f"output_tokens: {{from_bench: lens.json}}, concurrency: 4}}\n    promise: {{ttft: 1 s}}\n"
        f"    deployment: {{model: llama-3.1-8b, hardware: h100-sxm}}\n" for i in range(40)))
    return ["check", "b.yaml", "--jobs", "1"]


def base_blob(d):
    (d / "budgets").mkdir()
    (d / "budgets" / "chat.yaml").write_text(CHAT)
    with open(d / "budgets" / "big.json", "wb") as fh:
        fh.truncate(300 * 1000 * 1000)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "core.bigFileThreshold=1m"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run(git + args, cwd=d, check=True, capture_output=True)
    (d / "budgets" / "big.json").unlink()
    return ["check", "budgets", "--base", "HEAD"]


def fifo(d):
    os.mkfifo(d / "pipe.json")
    return ["calibrate", "pipe.json", "--model", "llama-3.1-8b", "--hardware", "h100-sxm"]


def _tree() -> Path:
    """The source tree under test: the first PYTHONPATH entry that holds budgetlint, else this checkout."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and (Path(entry) / "budgetlint").is_dir():
            return Path(entry)
    return HERE


def pre_commit(d):
    import yaml

    (hook,) = [h for h in yaml.safe_load((_tree() / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "budgetlint"]
    (d / "budgets.yaml").write_text(CHAT)
    (d / "-obudgets.yaml").write_text(CHAT.replace("chat-reply", "chat-reply-2"))
    return hook["entry"].split()[1:] + ["--no-summary"] + hook.get("args", []) + ["-obudgets.yaml"]


def pre_commit_note(d, out, err):
    return "budgets.yaml intact" if (d / "budgets.yaml").read_text() == CHAT else "budgets.yaml overwritten by the report"


SEGMENTS = ("version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: \"@acme/chat\"\n"
            "    workload: {prompt_tokens: 1000, output_tokens: 100, concurrency: 1}\n"
            "    promise: {ttft: 1 s, e2e: 10 s}\n    segments:\n"
            "      - {name: \"![x](https://tracker.example/p.png)\", kind: prefill, allowance: 300 ms, owner: \"@acme/chat\"}\n"
            "    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n")


def segment_markup(d):
    (d / "b.yaml").write_text(SEGMENTS)
    return ["check", "b.yaml", "--format", "markdown"]


def segment_note(d, out, err):
    if "tracker" not in out:
        return "no segment row"
    rows = [ln for ln in out.splitlines() if "tracker" in ln]
    if any(re.search(r"(?<!\\)[\[\]]", ln) or "https://" in ln for ln in rows):
        return "markup: unescaped brackets or a live `https://` in the segment row"
    return "text (escaped)"


def duplicate_key(d):
    (d / "run.json").write_text(json.dumps(VLLM)[:-1] + ', "p99_ttft_ms": 1.0}')
    (d / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: \"@acme/chat\"\n"
                              "    promise: {ttft: 1 s}\n    bench: [run.json]\n")
    return ["check", "b.yaml"]


def duplicate_note(d, out, err):
    return "`bench-duplicate-key` said" if "duplicate" in out + err else "accepted silently"


def nan_cv(d):
    (d / "b.yaml").write_text(LOAD.format(rate="2").replace("arrival_rate: 2 request/s}",
                                                            "arrival_rate: 2 request/s, arrival: gamma, arrival_cv: .nan}"))
    return ["check", "b.yaml"]


def nan_percentile(d):
    (d / "b.yaml").write_text(LOAD.format(rate="2").replace("percentile: p95", "percentile: .nan"))
    return ["check", "b.yaml"]


def nan_note(d, out, err):
    return "`expected a finite number` at its line" if "finite number" in out + err else "no word of the NaN"


def _cal_case(d, old, new):
    shutil.copytree(HERE / "tests" / "cases" / "bl311_calibration_stale", d / "c")
    cal = d / "c" / "cal.yaml"
    cal.write_text(cal.read_text().replace(old, new, 1))
    return ["check", "c/budgets.yaml", "c/teams.yaml"]


def cal_later_run(d):
    return _cal_case(d, "engine_version: 0.10.0, date: '2025-01-10',\n     leave_one_out: {ttft.p50: -0.06",
                     "engine_version: 0.10.0, date: '2025-03-10',\n     leave_one_out: {ttft.p50: -0.06")


def cal_median(d):
    return _cal_case(d, "ttft: {median: 0.06, max: 0.12", "ttft: {median: 0.001, max: 0.12")


def cal_note(d, out, err):
    m = re.search(r"not trusted to judge the budget: (\S+:\d+:\d+: )?", out)
    if not m:
        return "read as written (used)"
    return "not trusted, not used" + (f", at {m.group(1)[:-2]}" if m.group(1) else "")


CASES = [("crash", "bandwidth-only accelerator beside a failing budget", crash),
         ("3", "arrival_rate 5e-324 request/s", tiny_rate),
         ("4", "max_concurrency 1e308 in a linked run", max_concurrency),
         ("5", "per-file-ignores \"*a*a*a*a*a*ab\" over a 400-letter path", glob),
         ("6", "calibrate: a 5,000-digit engine version", version),
         ("7", "the spill on a full disk (/dev/full)", spill),
         ("8", "margin-warning = 4,000 nines", margin),
         ("9", "efficiency: {bandwidth: .nan}", nan),
         ("10", "a NaN calibration band", nan_band),
         ("2", "40 budgets on one 150,000-request lengths file", from_bench),
         ("12", "--base over a 300 MB blob", base_blob),
         ("low", "a FIFO named to calibrate", fifo),
         ("low", "pre-commit hook on a committed `-obudgets.yaml`", pre_commit, pre_commit_note),
         ("low", "a segment named `![x](https://tracker.example/p.png)`, markdown", segment_markup, segment_note),
         ("low", "a benchmark JSON object repeating `p99_ttft_ms`", duplicate_key, duplicate_note),
         ("low", "`arrival_cv: .nan` (gamma arrivals)", nan_cv, nan_note),
         ("low", "`percentile: .nan`", nan_percentile, nan_note),
         ("low", "a calibration whose run is dated after its `created:`", cal_later_run, cal_note),
         ("low", "a calibration stating a 0.1 % median over rows whose median is 6 %", cal_median, cal_note)]

#: ISSUE24_ONLY=low runs only the cases of that point (a comma list)
ONLY = [p for p in os.environ.get("ISSUE24_ONLY", "").split(",") if p]


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def main() -> None:
    print("| point | case | exit, wall s, CPU s, peak RSS MiB (rules) |")
    print("|---|---|---|")
    for point, words, make, *note in CASES:
        if ONLY and point not in ONLY:
            continue
        d = Path(tempfile.mkdtemp())
        args = make(d)
        env = dict(os.environ, NO_COLOR="1", BUDGETLINT_TRACEBACK="")
        if (d / "site").exists():
            env["PYTHONPATH"] = os.pathsep.join(x for x in (str(d / "site"), env.get("PYTHONPATH", "")) if x)
        start = time.perf_counter()
        with open(d / ".out", "w") as fo, open(d / ".err", "w") as fe:
            proc = subprocess.Popen([sys.executable, "-m", "budgetlint", *args], cwd=d, env=env, text=True,
                                    stdout=fo, stderr=fe, preexec_fn=_limit)
        killed = threading.Timer(TIME_S, proc.kill)
        killed.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        killed.cancel()
        wall = time.perf_counter() - start
        out, err = (d / ".out").read_text(errors="replace"), (d / ".err").read_text(errors="replace")
        code = f"killed at {TIME_S:.0f} s" if proc.returncode == -9 else f"exit {proc.returncode}"
        m = re.search(r"internal error: (\w+)", err)
        if m:
            code += f" ({m.group(1)})"
        rules = ",".join(sorted(set(re.findall(r"\bBL\d{3}\b", out + err))))
        cpu = usage.ru_utime + usage.ru_stime
        said = f": {note[0](d, out, err)}" if note else ""
        print(f"| {point} | {words} | {code}, {wall:.1f} s, {cpu:.1f} s CPU, {usage.ru_maxrss / 1024:.0f} MiB"
              f" ({rules or '-'}){said} |", flush=True)


if __name__ == "__main__":
    main()
