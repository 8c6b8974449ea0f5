"""Issue 15 point 10 (the readers), issue 18 points 2, 5 and 6: benchmark files.

* 18.5: a 500 MB JSON took 26 s and 6.2 GB; files over ``max-bench-size``
  (64 MiB by default) are refused before reading.
* 18.6 / 15.10: JSON-lines line numbers were recounted from the start for
  every value (200,000 lines of ``{}``: 31 s); 5 million documents or 2
  million malformed lines ran past 300 s. Lines are now counted in one pass,
  at most MAX_JSON_VALUES values are read and MAX_MALFORMED malformed ones
  reported, and the limit is a finding.
* 18.2: a p99 of 5e-324 ms underflowed to 0 s and passed as a measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from budgetlint.bench import json_values, problems

from hardening_bounds import BUDGET_WITH_BENCH as BUDGET, VLLM_RUN as VLLM
from hardening_bounds import HANG_LIMIT_S, MEMORY_LIMIT_MIB, _limit_memory, assert_bounded, run_bounded


def _check(tmp_path: Path, *extra: str):
    (tmp_path / "b.yaml").write_text(BUDGET.format(bench="run.json"))
    return run_bounded("check", "b.yaml", "--no-codeowners", "--no-summary", *extra, cwd=tmp_path)


def test_500_mb_benchmark_is_refused_before_reading(tmp_path: Path) -> None:
    with open(tmp_path / "run.json", "wb") as fh:  # sparse: 500 MB of size, nothing written
        fh.truncate(500 * 1000 * 1000)
    run = _check(tmp_path)
    assert_bounded(run, names="run.json", codes=(1,), rule="BL406")
    assert "477 MiB" in run.stdout and "up to 64 MiB" in run.stdout and "max-bench-size" in run.stdout
    assert run.peak_mib is not None and run.peak_mib < 60  # nothing of it was read


def test_the_cap_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(VLLM) + " " * 3_000_000)
    (tmp_path / "budgetlint.toml").write_text("max-bench-size = 2\n")  # MiB
    run = _check(tmp_path)
    assert_bounded(run, names="run.json", codes=(1,), rule="BL406")
    assert "2.86 MiB; benchmark files are read up to 2 MiB" in run.stdout, run.stdout
    (tmp_path / "budgetlint.toml").write_text("max-bench-size = 4\n")
    run = _check(tmp_path)
    assert run.returncode == 0 and "BL406" not in run.stdout, run.stdout


def test_200000_jsonl_lines_end_at_the_value_limit_with_the_right_line(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(VLLM) + "\n" + "{}\n" * 200_000)
    run = _check(tmp_path)
    limit = json_values.MAX_JSON_VALUES
    assert_bounded(run, names=f"run.json:{limit + 1}", codes=(1,), rule="BL406")
    assert f"more than {limit:,} JSON values" in run.stdout, run.stdout


def test_5_million_documents(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(VLLM) + "\n" + "{}\n" * 5_000_000)  # 15 MB
    run = _check(tmp_path)
    assert_bounded(run, names="run.json", codes=(1,), rule="BL406")
    assert "JSON values in one file" in run.stdout


def test_2_million_malformed_lines(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(VLLM) + "\n" + "{x\n" * 2_000_000)
    run = _check(tmp_path)
    limit = json_values.MAX_MALFORMED
    assert_bounded(run, names=f"run.json:{limit + 2}", codes=(1,), rule="BL406")
    assert f"more than {limit} values that are not valid JSON" in run.stdout, run.stdout
    assert run.stdout.count("bench-malformed") == limit  # each of the first ones, then one summary


_LINEAR = """
import sys, time
from budgetlint.bench import json_values, problems
json_values.MAX_JSON_VALUES = 10**7
ctx = problems.Ctx("x.jsonl")
docs = json_values.parse_json_stream("{}\\n" * 200_000 + "{}", ctx)
assert len(docs) == 200_001 and docs[-1].line == 200_001 and docs[123_456].line == 123_457, docs[-1]
print("ok")
"""


def test_jsonl_line_numbers_are_counted_once(tmp_path: Path) -> None:
    """200,000 values: before, each recounted lines from the start (31 s); now one pass."""
    proc = subprocess.run([sys.executable, "-c", _LINEAR], capture_output=True, text=True, cwd=tmp_path,
                          timeout=HANG_LIMIT_S, preexec_fn=_limit_memory)  # CPU-bounded in _limit_memory
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-2000:]


def test_malformed_line_and_column_stay_exact() -> None:
    ctx = problems.Ctx("x.jsonl")
    docs = json_values.parse_json_stream('{"a": 1}\n{"b": 2}\n{"c" 3}\n{"d": 4}\n', ctx)
    assert [d.line for d in docs] == [1, 2, 4]
    assert [(p.line, p.code) for p in ctx.problems] == [(3, "bench-malformed")]
    assert "line 3 column 6" in ctx.problems[0].message


@pytest.mark.parametrize(("key", "value", "stat"), [("p99_ttft_ms", 5e-324, "p99"), ("median_ttft_ms", 1e-310, "p50"),
                                                    ("mean_ttft_ms", 4e-7, "mean")])
def test_latency_that_rounds_to_zero_is_not_a_measurement(tmp_path: Path, key: str, value: float,
                                                          stat: str) -> None:
    (tmp_path / "run.json").write_text(json.dumps({**VLLM, key: value}))
    run = _check(tmp_path)
    assert_bounded(run, names="run.json", codes=(1,), rule="BL406")
    assert f"ttft {stat} is" in run.stdout and "bench-impossible-value" in run.stdout, run.stdout
    assert "No problems found" not in run.stdout


def test_native_latency_that_rounds_to_zero(tmp_path: Path) -> None:
    from budgetlint.bench import read_benchmark, to_native
    from budgetlint.bench.measurement import Measurement, Metric

    doc = to_native([Measurement("x", "native", metrics={"ttft": Metric(percentiles={"p99": 5e-324})})])
    (tmp_path / "run.json").write_text(json.dumps(doc))
    measurements, problems = read_benchmark(tmp_path / "run.json")
    assert any(p.code == "bench-impossible-value" and "p99" in p.message for p in problems), problems
    assert all("ttft" not in m.metrics or m.metrics["ttft"].get("p99") is None for m in measurements)


assert MEMORY_LIMIT_MIB == 200
