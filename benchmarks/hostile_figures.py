"""Before/after figures for the hostile inputs of issues 15 (points 7-10) and 18.

    python benchmarks/hostile_figures.py            # this checkout
    PYTHONPATH=/tmp/before python benchmarks/hostile_figures.py   # another tree

Each case builds its files in a fresh temporary folder and runs
``budgetlint`` in a child process with generous bounds (60 s, 2 GiB of
address space), so the old code's cost shows up to those bounds instead of
the tests' 10 s / 200 MiB. Prints one markdown row per case: exit code
("killed" at the time bound, "MemoryError" at the memory cap), wall
seconds, peak RSS (MiB, from wait4), and what the output showed.
Run from outside the checkout (cd /tmp) so PYTHONPATH decides which
budgetlint is measured. Not a test: it takes minutes on the old code.
"""

from __future__ import annotations

import os as _os

# every figure here is of a cold run: the simulation cache between runs (evaluate/load_disk.py) stays off
_os.environ.setdefault("BUDGETLINT_NO_CACHE", "1")

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

TIME_S = float(os.environ.get("HOSTILE_TIME_S", "60"))
MEMORY = int(os.environ.get("HOSTILE_MEMORY_MIB", "2048")) * 1024 * 1024

VLLM = {"date": "20250101-000000", "backend": "vllm", "model_id": "m", "num_prompts": 3, "request_rate": 4.0,
        "duration": 2.0, "completed": 3, "total_input_tokens": 30, "total_output_tokens": 12,
        "output_throughput": 6.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "p99_ttft_ms": 150.0}
BENCH = 'version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: "@acme/chat"\n    promise: {{ttft: 1 s}}\n' \
        '    bench: ["{bench}"]\n'
TTFT = 'version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: "@acme/chat"\n' \
       '    promise: {{ttft: {ttft}}}\n    deployment: {{model: llama-3.1-8b, hardware: h100-sxm, ' \
       'memory_overhead: {overhead}}}\n'


def _ttft(text: str, overhead: str = '"2 GB"') -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        (d / "b.yaml").write_text(TTFT.format(ttft=json.dumps(text), overhead=overhead))
        return ["check", "b.yaml"]
    return make


def _bench(content: Callable[[Path], None], entry: str = "run.json", config: str = "") -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        content(d)
        (d / "b.yaml").write_text(BENCH.format(bench=entry))
        if config:
            (d / "budgetlint.toml").write_text(config)
        return ["check", "b.yaml"]
    return make


def fifo_yaml(d: Path) -> list[str]:
    os.mkfifo(d / "pipe.yaml")
    return ["check", "pipe.yaml"]


def fifo_in_folder(d: Path) -> list[str]:
    (d / "budgets").mkdir()
    os.mkfifo(d / "budgets" / "pipe.yaml")
    return ["check", "budgets"]


def merge_bomb(d: Path) -> list[str]:
    lines = ["version: 1", "kind: teams", "teams:", "  - &big"] + [f"    k{i}: {i}" for i in range(20_000)]
    lines.append("  - <<: [" + ", ".join(["*big"] * 20_000) + "]")
    (d / "m.yaml").write_text("\n".join(lines) + "\n")
    return ["check", "m.yaml"]


def merge_chain(d: Path) -> list[str]:
    (d / "c.yaml").write_text(
        'version: 1\nkind: budgets\nbudgets:\n  - &base\n    name: base\n    owner: "@acme/chat"\n'
        "    promise: {ttft: 1 s}\n  - &mid\n    <<: *base\n    name: mid\n  - <<: *mid\n    name: chained\n")
    return ["check", "c.yaml"]


def jsonl(lines: str, count: int) -> Callable[[Path], None]:
    return lambda d: (d / "run.json").write_text(json.dumps(VLLM) + "\n" + lines * count)


def sparse_500mb(d: Path) -> None:
    with open(d / "run.json", "wb") as fh:
        fh.truncate(500 * 1000 * 1000)


def evil_name(d: Path) -> list[str]:
    (d / "budgets").mkdir()
    (d / "budgets" / "x\n::error file=app.py::pwned.yaml").write_text(TTFT.format(ttft='"2 50 ms"', overhead='"2 GB"'))
    return ["check", "budgets"]


def outside(d: Path) -> list[str]:
    repo, secret = d / "repo", d / "secret"
    (repo / "budgets").mkdir(parents=True)
    (repo / ".git").mkdir()
    secret.mkdir()
    (secret / "run.json").write_text(json.dumps(VLLM))
    (repo / "budgets" / "b.yaml").write_text(BENCH.format(bench="../../secret/run.json"))
    os.chdir(repo)
    return ["check", "budgets"]


def tiny_budgets(d: Path) -> list[str]:
    parts, size, i = [], 0, 0
    while size < 10 * 1024 * 1024 - 4096:
        doc = "version: 1\nkind: budgets\nbudgets:\n" + "".join(
            f"  - {{name: b{i}_{j}, owner: '@a/b', promise: {{ttft: 1 s}}}}\n" for j in range(50))
        parts.append(doc)
        size += len(doc) + 4
        i += 1
    (d / "tiny.yaml").write_text("---\n".join(parts))
    return ["check", "tiny.yaml", "-q"]


def suppression_date(d: Path) -> list[str]:
    (d / "b.yaml").write_text(
        'version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    promise: {ttft: 2 s}\n'
        '    suppress:\n      - rule: BL101\n        reason: later\n        expires: "20991231"\n')
    return ["check", "b.yaml"]


CASES: list[tuple[str, str, Callable[[Path], list[str]]]] = [
    ("15.7", "FIFO named pipe.yaml", fifo_yaml),
    ("15.7", "FIFO inside a checked folder", fifo_in_folder),
    ("15.7", "/dev/zero as a YAML path", lambda d: ["check", "/dev/zero"]),
    ("15.7", "/dev/urandom as a bench: entry (allowed)", _bench(lambda d: None, "/dev/urandom",
                                                               'allow-read = ["/dev"]\n')),
    ("15.8", "merge keys 20,000 x 20,000", merge_bomb),
    ("18.8", "merge chain <<: *mid", merge_chain),
    ("15.9", "10**10**10 ms", _ttft("10**10**10 ms")),
    ("15.9", "a 5,000-digit integer", _ttft("9" * 5000 + " ms")),
    ("15.9", "a 401-digit integer", _ttft("1" + "0" * 400 + " ms")),
    ("15.9", "2**99999 ms", _ttft("2**99999 ms")),
    ("15.9", "a 100,000-letter unit", _ttft("1 " + "a" * 100_000)),
    ("18.1", "'1..5 s'", _ttft("1..5 s")),
    ("18.1", "'2 50 ms'", _ttft("2 50 ms")),
    ("18.1", "'1e-6 bit'", _ttft("400 ms", '"1e-6 bit"')),
    ("15.10", "bench glob /**/*.json (allowed)", _bench(lambda d: None, "/**/*.nomatch-json", 'allow-read = ["/"]\n')),
    ("15.10", "JSONL of 5 million documents", _bench(jsonl("{}\n", 5_000_000))),
    ("15.10", "JSONL of 2 million malformed lines", _bench(jsonl("{x\n", 2_000_000))),
    ("18.6", "JSONL of 200,000 lines {}", _bench(jsonl("{}\n", 200_000))),
    ("18.2", "p99_ttft_ms 5e-324", _bench(lambda d: (d / "run.json").write_text(json.dumps({**VLLM, "p99_ttft_ms": 5e-324})))),
    ("18.3", "file name with a newline and ::error", evil_name),
    ("18.4", "bench: ../../secret/run.json", outside),
    ("18.5", "500 MB benchmark JSON", _bench(sparse_500mb)),
    ("18.7", "10 MiB of tiny budgets", tiny_budgets),
    ("18.9", "expires: \"20991231\"", suppression_date),
]


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_case(make: Callable[[Path], list[str]]) -> tuple[str, float, float, str]:
    import threading

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            args = make(Path(tmp))
            with tempfile.TemporaryFile() as out:
                start = time.perf_counter()
                proc = subprocess.Popen([sys.executable, "-m", "budgetlint", *args, "--no-codeowners",
                                         "--no-summary"], stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, preexec_fn=_limit,
                                        env={**os.environ, "NO_COLOR": "1"})
                killed: list[bool] = []
                timer = threading.Timer(TIME_S, lambda: (killed.append(True), proc.kill()))
                timer.start()
                try:
                    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
                finally:
                    timer.cancel()
                seconds = time.perf_counter() - start
                out.seek(0)
                text = out.read().decode(errors="replace")
            if killed:
                return f"killed at {TIME_S:.0f} s", seconds, usage.ru_maxrss / 1024, ""
            code = os.waitstatus_to_exitcode(status)
            rc = "MemoryError (exit 3)" if "MemoryError" in text else f"exit {code}"
            return rc, seconds, usage.ru_maxrss / 1024, _gist(text)
        finally:
            os.chdir(here)


def _gist(text: str) -> str:
    raw_command = any(line.startswith("::error file=app.py") for line in text.splitlines())
    codes = sorted({w for w in text.split() if len(w) == 5 and w.startswith("BL") and w[2:].isdigit()} - {"BL104"})
    return ",".join(codes) + ("; raw ::error line" if raw_command else "")


def main() -> None:
    import budgetlint

    print(f"budgetlint from {Path(budgetlint.__file__).parent}; bounds {TIME_S:.0f} s, {MEMORY >> 20} MiB")
    print("| point | case | exit | seconds | peak MiB | findings |\n|---|---|---|---|---|---|")
    only = set(sys.argv[1:])
    for point, name, make in CASES:
        if only and point not in only:
            continue
        rc, seconds, peak, gist = run_case(make)
        print(f"| {point} | {name} | {rc} | {seconds:.1f} | {peak:.0f} | {gist} |", flush=True)


if __name__ == "__main__":
    main()
