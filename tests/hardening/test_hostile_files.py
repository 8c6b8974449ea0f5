"""Hostile input files: each gives a clear finding, in bounded time and memory.

Every case runs the real CLI in a child process (so a hang is a timeout and
a memory blow-up is visible in the child's peak RSS), and most also run
in-process to pin the exact rule and message. The limits are the loader's
(``budgetlint/files/loader.py``) and are documented in ``docs/limits.md``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from budgetlint.files import loader
from budgetlint.run.check import Options, run_check
from budgetlint.findings import Finding, Severity

#: every hostile case must finish within this (seconds of CPU, user + system, so a busy machine
#: cannot fail it; a normal run is ~0.4 s; the wall time only catches a hang)
TIME_LIMIT_S = 20.0
#: and stay under this peak resident memory in the child (MiB; a normal run is ~30)
MEMORY_LIMIT_MIB = 200.0


# the child that runs the CLI and writes its peak RSS (one wrapper for every hardening test)
from hardening_bounds import _WRAPPER as _PEAK_WRAPPER  # noqa: E402


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float


def run_cli(*args: str, cwd: Path) -> CliRun:
    """``budgetlint check ARGS`` in a child; its own CPU time and peak RSS (os.wait4)."""
    import tempfile
    import threading

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        hwm = Path(tempfile.mkdtemp()) / "hwm"
        proc = subprocess.Popen([sys.executable, "-c", _PEAK_WRAPPER, str(hwm), "check", "--no-summary", *args],
                                cwd=cwd,
                                stdout=out, stderr=err, text=True,
                                env={**os.environ, "BUDGETLINT_TRACEBACK": "", "NO_COLOR": "1"})
        killed: list[bool] = []
        timer = threading.Timer(TIME_LIMIT_S * 30, lambda: (killed.append(True), proc.kill()))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = usage.ru_utime + usage.ru_stime
        if killed:
            pytest.fail(f"budgetlint check {' '.join(args)} hung (killed after {TIME_LIMIT_S * 30:.0f} s)")
        out.seek(0)
        err.seek(0)
        # the child's own high-water mark (VmHWM, KiB); ru_maxrss would also count
        # the parent's pages at fork time, before exec
        peak_kib = float(hwm.read_text().split()[1]) if hwm.exists() else usage.ru_maxrss
        return CliRun(proc.returncode, out.read(), err.read(), seconds, peak_kib / 1024)


def assert_clean(run: CliRun, *, rule: str, codes: tuple[int, ...] = (1,)) -> None:
    assert run.returncode in codes, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert rule in run.stdout, run.stdout
    assert run.seconds < TIME_LIMIT_S, f"took {run.seconds:.1f} s of CPU"
    assert run.peak_mib < MEMORY_LIMIT_MIB, f"peak RSS {run.peak_mib:.0f} MiB"


def findings(path: Path | str, **kw: object) -> list[Finding]:
    return run_check([str(path)], Options(use_codeowners=False, **kw)).findings  # type: ignore[arg-type]


def only(found: list[Finding], rule: str) -> Finding:
    matching = [f for f in found if f.rule == rule]
    assert matching, [(f.rule, f.message) for f in found]
    return matching[0]


# --------------------------------------------------------------------------- YAML bombs and limits


ALIAS_BOMB = """version: 1
kind: budgets
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
budgets: *i
"""


def test_alias_bomb_is_cut_at_the_node_limit(tmp_path: Path) -> None:
    """A billion laughs (9**9 ≈ 387 million strings) stops at MAX_NODES values."""
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    f = only(findings(path), "BL011")
    assert f.severity == Severity.ERROR and "alias bomb" in f.message
    assert f"{loader.MAX_NODES:,}" in f.message
    assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL011")


def test_merge_key_bomb_is_cut_too(tmp_path: Path) -> None:
    lines = ["version: 1", "kind: teams", "x0: &x0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}"]
    for i in range(1, 12):
        refs = ", ".join(f"k{j}: *x{i - 1}" for j in range(8))
        lines.append(f"x{i}: &x{i} {{{refs}}}")
    lines.append("teams: [*x11]")
    path = tmp_path / "merge-bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    only(findings(path), "BL011")
    assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL011")


def test_100_mb_file_is_refused_by_size_without_reading_it(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:  # sparse: 100 MiB of size, no blocks written
        fh.truncate(100 * 1024 * 1024)
    real_read = os.read

    def no_read(fd: int, n: int) -> bytes:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("huge.yaml"):
            raise AssertionError("the loader read a file it should refuse by size")
        return real_read(fd, n)

    with monkeypatch.context() as m:
        m.setattr(os, "read", no_read)
        f = only(findings(path), "BL011")
    assert "file is 100 MiB" in f.message  # the rounding rule: no trailing zeros (was "100.0 MiB") and f"{loader.MAX_FILE_BYTES // 1024 // 1024} MiB" in f.message
    run = run_cli(str(path), cwd=tmp_path)
    assert_clean(run, rule="BL011")
    assert run.peak_mib < 100, "the child must not have read 100 MiB"


def _flow_nesting(depth: int) -> str:
    return "version: 1\nkind: budgets\nbudgets: " + "[" * depth + "]" * depth + "\n"


def _block_nesting(depth: int) -> str:
    # compact block sequences: "- - - ... x", each "- " one level deeper
    return "version: 1\nkind: budgets\nbudgets:\n" + "- " * depth + "x\n"


def _block_mapping_nesting(depth: int) -> str:
    # block mappings need one more column per level: depth 1,000 is 0.5 MB
    return "version: 1\nkind: budgets\nbudgets:\n" + "".join(" " * (i + 1) + "k:\n" for i in range(depth)) + \
        " " * (depth + 1) + "v: 1\n"


@pytest.mark.parametrize("make", [_flow_nesting, _block_nesting], ids=["flow", "block"])
@pytest.mark.parametrize("pure_python", [False, True], ids=["libyaml", "pure-python"])
def test_10000_deep_nesting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: object,
                            pure_python: bool) -> None:
    """10,000 levels: libyaml stops at its own depth limit (1,000), the pure-Python
    parser at Python's recursion limit, and our converter at MAX_DEPTH: BL011 always."""
    path = tmp_path / "deep.yaml"
    path.write_text(make(10_000))  # type: ignore[operator]
    if pure_python:
        monkeypatch.setattr(loader, "_yaml_loader_class", lambda: yaml.SafeLoader)
    start = time.process_time()
    f = only(findings(path), "BL011")
    assert "nest" in f.message or "depth" in f.message, f.message
    assert time.process_time() - start < TIME_LIMIT_S  # this process's CPU, not the wall clock
    if not pure_python:
        assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL011")


def test_block_mapping_nesting_beyond_max_depth(tmp_path: Path) -> None:
    """Nesting the parsers accept but deeper than MAX_DEPTH is cut by the converter."""
    path = tmp_path / "deep-map.yaml"
    path.write_text(_block_mapping_nesting(loader.MAX_DEPTH + 10))
    f = only(findings(path), "BL011")
    assert f"deeper than {loader.MAX_DEPTH}" in f.message


# --------------------------------------------------------------------------- not text


def test_binary_file_named_yaml(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_bytes(bytes(range(256)) * 64)
    f = only(findings(path), "BL010")
    assert "binary" in f.message
    assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL010")


def test_non_utf8_text_points_at_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("version: 1\nkind: teams\nteams:\n  - handle: \"@caf\xe9\"\n".encode("latin-1"))
    f = only(findings(path), "BL010")
    assert "0xe9" in f.message and "UTF-8" in f.message
    assert f.location is not None and (f.location.line, f.location.column) == (4, 18)
    assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL010")


def test_utf16_text_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "utf16.yaml"
    path.write_bytes("version: 1\nkind: teams\n".encode("utf-16"))
    found = findings(path)
    assert any(f.rule == "BL010" for f in found), [(f.rule, f.message) for f in found]


# --------------------------------------------------------------------------- the file system


def test_symlink_loop_in_the_budgets_directory(tmp_path: Path, repo_root: Path) -> None:
    budgets = tmp_path / "budgets"
    (budgets / "team-a").mkdir(parents=True)
    (budgets / "team-a" / "chat.yaml").write_text((repo_root / "budgets" / "chat.yaml").read_text())
    (budgets / "team-a" / "loop").symlink_to("..", target_is_directory=True)
    (budgets / "self").symlink_to(".", target_is_directory=True)
    found = findings(budgets)
    loops = [f for f in found if f.rule == "BL010" and "loop" in f.message]
    assert loops and all(f.severity == Severity.WARNING for f in loops)
    run = run_cli("budgets", cwd=tmp_path)
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr
    assert "BL010" in run.stdout and run.seconds < TIME_LIMIT_S


def test_broken_symlink(tmp_path: Path) -> None:
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    f = only(findings(tmp_path), "BL010")
    assert "broken symbolic link" in f.message


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """chmod 000 does not stop root: as root the read error is simulated."""
    path = tmp_path / "secret.yaml"
    path.write_text("version: 1\nkind: teams\nteams: []\n")
    path.chmod(0)
    try:
        if os.geteuid() == 0:  # root reads anything: simulate the kernel's refusal
            from budgetlint.files import fs

            real_read = fs.read_regular

            def denied(self: Path, limit: int) -> bytes:
                if Path(self).name == "secret.yaml":
                    raise PermissionError(13, "Permission denied", str(self))
                return real_read(self, limit)

            monkeypatch.setattr(fs, "read_regular", denied)
        f = only(findings(path), "BL010")
        assert "cannot read file: Permission denied" in f.message
        if os.geteuid() != 0:
            assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL010")
    finally:
        path.chmod(0o644)


# --------------------------------------------------------------------------- content


def test_duplicate_keys_name_the_first(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("version: 1\nkind: teams\nteams:\n  - handle: '@a/b'\n    handle: '@c/d'\n")
    f = only(findings(path), "BL002")
    assert "duplicate key 'handle'" in f.message and "line 4" in f.message
    assert f.location is not None and f.location.line == 5
    assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL002")


BUDGET = """version: 1
kind: budgets
budgets:
  - name: hostile
    owner: "@acme/chat"
    workload: {{prompt_tokens: 100, output_tokens: 100}}
    promise:
      ttft: {ttft}
      e2e: 30 s
    deployment:
      model: llama-3.1-8b
      hardware:
        name: weird
        memory: {memory}
        bandwidth: {bandwidth}
        compute: {{bf16: {compute}}}
"""


@pytest.mark.parametrize(("field", "value", "rule"), [
    ("ttft", "nan ms", "BL007"),
    ("ttft", "NaN ms", "BL007"),
    ("ttft", "inf s", "BL007"),
    ("ttft", "-5 ms", "BL003"),
    ("ttft", "0 ms", "BL003"),
    ("ttft", "1e400 ms", "BL007"),
    ("ttft", "5 GB", "BL005"),
    ("ttft", "5", "BL006"),
    ("bandwidth", "1e400 GB/s", "BL007"),
    ("bandwidth", "1e300 TB/s", "BL007"),  # finite as written, infinite in B/s
    ("bandwidth", "-5 GB/s", "BL003"),
    ("memory", "nan GB", "BL007"),
    ("memory", "-80 GB", "BL003"),
    ("compute", "-1 TFLOP/s", "BL003"),
    ("compute", "1e400 TFLOP/s", "BL007"),
])
def test_hostile_budget_quantities(tmp_path: Path, field: str, value: str, rule: str) -> None:
    values = {"ttft": "400 ms", "memory": "80 GB", "bandwidth": "3.35 TB/s", "compute": "989 TFLOP/s"}
    values[field] = json.dumps(value)
    path = tmp_path / "b.yaml"
    path.write_text(BUDGET.format(**values))
    f = only(findings(path), rule)
    assert f.severity == Severity.ERROR and value.split()[0] in f.message


def test_huge_but_finite_quantities_are_checked(tmp_path: Path) -> None:
    values = {"ttft": '"1e300 s"', "memory": '"1e290 GB"', "bandwidth": '"1e280 TB/s"', "compute": '"1e270 TFLOP/s"'}
    path = tmp_path / "b.yaml"
    path.write_text(BUDGET.format(**values))
    report = run_check([str(path)], Options(use_codeowners=False))
    assert all(f.rule != "BL007" for f in report.findings), [(f.rule, f.message) for f in report.findings]
    from budgetlint.reporters import FORMATS, render

    for fmt in FORMATS:
        render(fmt, report)


# --------------------------------------------------------------------------- benchmark JSON

VLLM = {
    "date": "20250101-000000", "backend": "vllm", "model_id": "m", "num_prompts": 3, "request_rate": 4.0,
    "max_concurrency": None, "duration": 2.0, "completed": 3, "total_input_tokens": 30,
    "total_output_tokens": 12, "output_throughput": 6.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0,
    "p99_ttft_ms": 150.0, "mean_tpot_ms": 20.0, "median_tpot_ms": 20.0, "p99_tpot_ms": 25.0,
}


@pytest.mark.parametrize(("token", "expect"), [
    ("NaN", "is NaN"), ("Infinity", "is infinite"), ("-Infinity", "is infinite"),
    ("1e400", "is infinite"), ("1" + "0" * 400, "is infinite"),
])
def test_benchmark_json_non_finite(tmp_path: Path, token: str, expect: str) -> None:
    from budgetlint.bench import read_benchmark

    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(VLLM).replace("90.0", token))
    measurements, problems = read_benchmark(path)
    assert [p.code for p in problems] == ["bench-nan"], problems
    assert "median_ttft_ms" in problems[0].message and expect in problems[0].message
    assert len(measurements) == 1  # the rest of the file is still read


def test_benchmark_json_negative_numbers_do_not_crash(tmp_path: Path) -> None:
    from budgetlint.bench import read_benchmark, to_native

    path = tmp_path / "vllm.json"
    path.write_text(json.dumps({**VLLM, "median_ttft_ms": -90.0, "output_throughput": -6.0, "completed": -3}))
    measurements, problems = read_benchmark(path)
    assert isinstance(problems, list)
    to_native(measurements)


def test_benchmark_json_negative_latency_is_a_problem(tmp_path: Path) -> None:
    from budgetlint.bench import read_benchmark

    path = tmp_path / "vllm.json"
    path.write_text(json.dumps({**VLLM, "median_ttft_ms": -90.0}))
    _, problems = read_benchmark(path)
    assert any("median_ttft_ms" in p.message for p in problems)


def test_benchmark_json_nested_too_deep(tmp_path: Path) -> None:
    from budgetlint.bench import read_benchmark

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    measurements, problems = read_benchmark(path)
    assert measurements == [] and problems


def test_integer_beyond_int64_is_refused(tmp_path: Path) -> None:
    """A 400-digit token count used to overflow float() deep in the rules (found by fuzzing)."""
    path = tmp_path / "b.yaml"
    path.write_text("version: 1\nkind: budgets\nbudgets:\n  - name: x\n    owner: '@a/b'\n"
                    f"    workload: {{prompt_tokens: 1{'0' * 400}, output_tokens: 10}}\n"
                    "    promise: {ttft: 1 s}\n    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n")
    f = only(findings(path), "BL011")
    assert "401 digits" in f.message and f.location is not None and f.location.line == 6
    assert_clean(run_cli(str(path), cwd=tmp_path), rule="BL011")


@pytest.mark.parametrize("digits", [400, 5000])
def test_benchmark_json_huge_integers_in_any_reader(tmp_path: Path, digits: int) -> None:
    """Integers beyond float range read as infinite in every reader (fuzzing found
    OverflowError in the llmperf and inference-perf readers)."""
    from budgetlint.bench import read_benchmark

    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(VLLM).replace("90.0", "9" * digits))
    measurements, problems = read_benchmark(path)
    assert any("infinite" in p.message for p in problems), problems
    individual = tmp_path / "individual_responses.json"
    rows = [{"ttft_s": 0.1, "end_to_end_latency_s": 1.0, "inter_token_latency_s": 0.01,
             "number_input_tokens": 10, "number_output_tokens": 20, "error_code": None}] * 3
    individual.write_text(json.dumps(rows).replace("20", "2" * digits, 1))
    read_benchmark(individual)  # must not raise


@pytest.mark.parametrize("text", ["0×", "0*", "5 ms*", "1 (", "2 **"])
def test_quantities_pint_cannot_parse(tmp_path: Path, text: str) -> None:
    """pint raises bare AssertionErrors on some inputs; they are BL007 findings."""
    path = tmp_path / "b.yaml"
    path.write_text(BUDGET.format(ttft=json.dumps(text), memory="80 GB", bandwidth="3.35 TB/s",
                                  compute="989 TFLOP/s"))
    found = findings(path)
    assert any(f.rule in ("BL006", "BL007") and "ttft" in f.message for f in found), \
        [(f.rule, f.message) for f in found]


def test_samples_near_float_max_do_not_overflow_the_mean() -> None:
    """Per-request samples of 1e308 s overflowed math.fsum (found by the long fuzz run)."""
    from budgetlint.bench.measurement import metric_from_samples

    metric = metric_from_samples([1e308, 1e308, 1e308], "e2e", "test")
    assert metric is not None and metric.mean == pytest.approx(1e308)


# --------------------------------------------------------------------------- names the OS refuses

LONG = "n" * 300  # over NAME_MAX (255): stat() fails with ENAMETOOLONG instead of "no such file"


@pytest.mark.parametrize("args", [
    [LONG],
    ["b.yaml", "--teams", LONG + ".yaml"],
    ["b.yaml", "--config", LONG + ".toml"],
    ["b.yaml", "--codeowners", LONG],
    ["b.yaml", "--codeowners", "no-such-CODEOWNERS"],
], ids=["path", "teams", "config", "codeowners", "codeowners-missing"])
def test_a_name_too_long_or_missing_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "b.yaml").write_text("version: 1\nkind: budgets\nbudgets: []\n")
    run = run_cli(*args, cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert "budgetlint: error: no such" in run.stderr, run.stderr


def test_a_bench_entry_too_long_for_the_file_system(tmp_path: Path) -> None:
    """Found by the long fuzz profile: a 400-digit number as a `bench:` entry raised OSError."""
    (tmp_path / "b.yaml").write_text(f"""version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    promise: {{ttft: 1 s}}
    bench: ["{LONG}", "{LONG}/*.json"]
""")
    found = findings(tmp_path / "b.yaml")
    bl406 = [f for f in found if f.rule == "BL406"]
    assert len(bl406) == 2 and all("matches no file" in f.message for f in bl406), bl406
    run = run_cli("b.yaml", "--bench", LONG + ".json", "--no-codeowners", cwd=tmp_path)
    assert run.returncode == 1 and "BL406" in run.stdout and "internal error" not in run.stderr, run


@pytest.mark.parametrize("value", ["nan", "12 requests", "1e400", True, [3], {"n": 3}, 1e400, float("nan")])
def test_benchmark_conditions_that_are_not_numbers_stay_unknown(value: object) -> None:
    """Found by the long fuzz profile: guidellm's `request_totals.total: "nan"` raised ValueError."""
    from budgetlint.bench.measurement import ConditionsBuilder

    c = ConditionsBuilder()
    c.set("num_requests", value, "read", "request_totals.total")
    c.set("concurrency", value, "read", "concurrency")
    assert c.values == {}  # unknown, not a crash and not a guess
    c.set("num_requests", 2.5, "read", "request_totals.total")  # not a whole number of requests
    c.set("request_rate", "-inf", "read", "request_rate")
    assert c.values == {}
    c.set("request_rate", "inf", "read", "request_rate")  # every request at once: a real setting
    assert c.values == {"request_rate": math.inf}
    c = ConditionsBuilder()
    c.set("num_requests", "12", "read", "request_totals.total")
    c.set("concurrency", 2.5, "read", "concurrency")
    assert c.values == {"num_requests": 12, "concurrency": 2.5}


def test_guidellm_report_with_a_string_total_is_read(tmp_path: Path, shared_dir: Path) -> None:
    from budgetlint.bench import read_benchmark

    src = shared_dir / "fixtures/bench/guidellm/guidellm_v0.8dev_report_v2_mockserver.json"
    if not src.is_file():
        pytest.skip(f"{src} is not in ../shared")
    data = json.loads(src.read_text(encoding="utf-8"))
    data["benchmarks"][0]["metrics"]["request_totals"]["total"] = "nan"
    path = tmp_path / "guidellm.json"
    path.write_text(json.dumps(data))
    measurements, _ = read_benchmark(path)
    assert measurements and measurements[0].conditions.num_requests is None
