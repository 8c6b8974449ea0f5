"""`budgetlint calibrate` end to end, the calibration document, and leave-one-out on real sweeps."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from budgetlint.cli import main
from budgetlint.files import schema as schema_mod
from budgetlint.files.loader import load_file
from budgetlint.run.calibrate import load_calibration

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "bench"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/fixtures/bench is absent (a fresh clone)")
CASE = Path(__file__).resolve().parents[1] / "cases" / "bl311_calibration_stale"


def _native_run(tmp: Path, name: str, runs: list[tuple[float, float, float]]) -> Path:
    """A native benchmark file: (concurrency, ttft_p50_s, tpot_p50_s) per run, 1000/200 tokens."""
    ms = []
    for i, (c, ttft, tpot) in enumerate(runs):
        ms.append({"source": name, "format": "native", "label": f"run {i + 1}",
                   "conditions": {"concurrency": {"value": c, "provenance": "read"},
                                  "prompt_tokens": {"value": 1000.0, "provenance": "read"},
                                  "output_tokens": {"value": 200.0, "provenance": "read"}},
                   "metrics": {"ttft": {"unit": "s", "definition": "first_token", "method": "reported",
                                        "percentiles": {"p50": ttft}, "count": 500},
                               "tpot": {"unit": "s", "definition": "budgetlint", "method": "reported",
                                        "percentiles": {"p50": tpot}, "count": 500}},
                   "provenance": {"engine": "vllm", "engine_version": "0.11.0", "date": "2026-10-01T12:00:00"}})
    p = tmp / name
    p.write_text(json.dumps({"kind": "budgetlint-benchmark", "version": 1, "measurements": ms}))
    return p


def test_calibrate_writes_a_valid_document_that_loads(tmp_path: Path) -> None:
    # llama-3.1-8b on one H100: 16.06 GB of weights over 3.35 TB/s = 4.8 ms at 100 %; runs near 60 %
    bench = _native_run(tmp_path, "runs.json", [(1, 0.060, 0.0110), (8, 0.075, 0.0122), (32, 0.140, 0.0165),
                                                (64, 0.230, 0.0215)])
    out = tmp_path / "cal.yaml"
    r = CliRunner().invoke(main, ["calibrate", str(bench), "--model", "llama-3.1-8b", "--hardware", "h100-sxm",
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["kind"] == "calibration" and len(doc["runs"]) == 4
    assert doc["deployment"]["engine_version"] == "0.11.0"
    assert set(doc["error"]) == {"ttft", "tpot"}
    assert all("leave_one_out" in run and "residuals" in run for run in doc["runs"])
    assert not schema_mod.validate(load_file(out, str(out)).documents[0], "calibration")
    cal, problems = load_calibration(out)
    assert not problems and cal.runs == 4
    # 1 / 0.011 s is below the bound's 4.8 ms per token: the fit lands between the bound and 100 %
    assert 0.3 < cal.params.bandwidth <= 1.0


def test_calibrate_refuses_unknown_names_and_missing_files(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["calibrate", str(tmp_path / "nope.json"), "--model", "llama-3.1-8b",
                                  "--hardware", "h100-sxm"])
    assert r.exit_code == 2 and "no such file" in r.output
    bench = _native_run(tmp_path, "runs.json", [(1, 0.06, 0.011)])
    r = CliRunner().invoke(main, ["calibrate", str(bench), "--model", "llama-3.1-8bb", "--hardware", "h100-sxm"])
    assert r.exit_code == 2 and "did you mean 'llama-3.1-8b'" in r.output
    (tmp_path / "empty.json").write_text(json.dumps({"kind": "budgetlint-benchmark", "version": 1,
                                                      "measurements": []}))
    r = CliRunner().invoke(main, ["calibrate", str(tmp_path / "empty.json"), "--model", "llama-3.1-8b",
                                  "--hardware", "h100-sxm"])
    assert r.exit_code == 2 and "no usable run" in r.output


def test_no_usable_run_says_why_each_file_gave_none(tmp_path: Path) -> None:
    """A folder whose files gave no run: the error named none of them (the readers' problems were collected
    and dropped); now each file's reason follows, and an empty folder says it holds no result files."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"hello": 1}))
    r = CliRunner().invoke(main, ["calibrate", str(folder), "--model", "llama-3.1-8b", "--hardware", "h100-sxm"])
    assert r.exit_code == 2
    assert "no usable run in the benchmark files" in r.output
    assert "a.json:1: refused: no supported benchmark format recognised" in r.output, r.output
    empty = tmp_path / "none"
    empty.mkdir()
    (empty / "notes.md").write_text("not a result")
    r = CliRunner().invoke(main, ["calibrate", str(empty), "--model", "llama-3.1-8b", "--hardware", "h100-sxm"])
    assert r.exit_code == 2 and f"no benchmark result files (.json, .jsonl, .txt) in {empty}" in r.output


def test_an_invalid_calibration_is_reported_with_its_position(tmp_path: Path) -> None:
    bad = tmp_path / "cal.yaml"
    bad.write_text((CASE / "cal.yaml").read_text().replace("bandwidth: 0.6", "bandwidth: 1.6"))
    cal, problems = load_calibration(bad)
    assert cal is None
    assert problems and problems[0].location.line == 12 and "parameters.bandwidth" in problems[0].message


def test_a_calibrated_budget_carries_the_band_in_json_and_its_verdict(tmp_path: Path) -> None:
    """The case's calibration: 60 % bandwidth, 3 ms per iteration. TPOT by hand at 16 sequences of
    2,000 + 100 tokens: weights read 8.03e9 x 2 B less the input-embedding rows not gathered
    ((128,256 - 16) x 4,096 x 2 B = 1.05 GB; physics.md, issue 11) = 15.01 GB, + KV 16 x 2,100 x
    131,072 B = 4.40 GB, over 0.6 x 3.35 TB/s, plus 3 ms = 12.66 ms."""
    r = CliRunner().invoke(main, ["check", str(CASE), "--no-codeowners", "--format", "json"])
    report = json.loads(r.output)
    cal = report["budgets"][0]["analysis"]["calibration"]
    want = (8.03e9 * 2 - (128256 - 16) * 4096 * 2 + 16 * 2100 * 131072) / (0.6 * 3.35e12) + 3e-3
    assert cal["predicted"]["tpot_s"] == pytest.approx(want, rel=0.01)
    assert cal["band"] == {"ttft": 0.12, "tpot": 0.08, "e2e": 0.12}
    assert cal["runs"] == 3 and cal["leave_one_out_median_error"] == {"ttft": 0.06, "tpot": 0.04}
    assert cal["declared_at"].endswith("budgets.yaml:11:72")
    assert report["budgets"][0]["analysis"]["realistic_tpot_s"] == pytest.approx(want, rel=0.01)


def _loo(doc: dict, metric: str, keep=lambda run: True) -> list[float]:
    return [abs(e) for run in doc["runs"] if keep(run) for k, e in run["leave_one_out"].items()
            if k.startswith(metric + ".")]


@pytest.mark.slow
@needs_shared
def test_leave_one_out_on_the_vllm_sweep(tmp_path: Path) -> None:
    """vLLM benchmark_serving on 4 replicas of Llama-3.2-3B (one L40S each), rates 10 and 30 over three
    gateway set-ups; the three rate-inf runs are saturated and left out. The issue's targets: TPOT
    within 10 % median error, TTFT below saturation within 20 %. Reached (docs/calibration.md): TTFT
    13 %, TPOT 0.8 %, once each run is simulated with its own request count (with 160 requests the
    rate-30 runs never reached their steady batch: TPOT 21 %)."""
    from budgetlint.run.calibrate import calibrate

    res = calibrate([str(SHARED / "vllm" / "vllm-bench-automation_llmd_l40s_llama3b_jsonl.json")],
                    model="llama-3.2-3b", hardware="l40s", replicas=4)
    doc = res.document
    print("vLLM sweep leave-one-out:", doc["error"])
    assert len(doc["runs"]) == 6 and len(doc["skipped"]) == 3
    assert statistics.median(_loo(doc, "ttft")) < 0.20
    assert statistics.median(_loo(doc, "tpot")) < 0.10


@pytest.mark.slow
@needs_shared
def test_leave_one_out_on_the_sglang_sweep() -> None:
    """SGLang bench_serving, Llama-3.3-70B on 4 H200 (TP 4; model and hardware from the source repo's
    launch script), rates 1-16 and two ShareGPT runs: TTFT medians only. Reached: median 10.9 %, max 30 %
    (the issue's target for TTFT below saturation: 20 %)."""
    from budgetlint.run.calibrate import calibrate

    res = calibrate([str(SHARED / "sglang" / "datacrunch_h200_llama33-70b_online.jsonl")],
                    model="llama-3.3-70b", hardware="h200-sxm", devices=4)
    doc = res.document
    print("SGLang sweep leave-one-out:", doc["error"])
    assert len(doc["runs"]) == 7
    assert statistics.median(_loo(doc, "ttft")) < 0.20


def test_a_calibration_outside_the_folders_a_run_reads_is_refused(tmp_path: Path) -> None:
    """Like a `bench:` file: a `calibration:` outside the run's read roots is not opened (BL310)."""
    here, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    (elsewhere / "cal.yaml").write_text((CASE / "cal.yaml").read_text())
    (here / "teams.yaml").write_text((CASE / "teams.yaml").read_text())
    (here / "b.yaml").write_text((CASE / "budgets.yaml").read_text()
                                 .replace("calibration: cal.yaml", f"calibration: {elsewhere / 'cal.yaml'}")
                                 .replace("bench: [runs/new.json]", "bench: []"))
    r = CliRunner().invoke(main, ["check", str(here / "b.yaml"), str(here / "teams.yaml"), "--no-codeowners",
                                  "--format", "json"])
    report = json.loads(r.output)
    found = [f for f in report["findings"] if f["rule"] == "BL310"]
    assert len(found) == 1 and "not read" in found[0]["message"]
    assert report["budgets"][0]["analysis"]["calibration"]["usable"] is False


def test_a_calibration_path_with_a_nul_byte_is_a_finding_not_an_internal_error(tmp_path: Path) -> None:
    """Found by the fuzz run: `calibration: "a\\0b.yaml"` raised ValueError in the read-roots check."""
    (tmp_path / "b.yaml").write_text(
        'version: 1\nkind: budgets\nbudgets:\n  - name: c\n    owner: "@a/b"\n'
        '    workload: {prompt_tokens: 100, output_tokens: 10}\n    promise: {ttft: 1 s}\n'
        '    deployment: {model: llama-3.1-8b, hardware: h100-sxm, calibration: "a\\0b.yaml"}\n')
    r = CliRunner().invoke(main, ["check", str(tmp_path / "b.yaml"), "--no-codeowners", "--no-summary",
                                  "--format", "json"])
    assert r.exit_code in (1, 2), r.output
    findings = json.loads(r.output)["findings"]
    assert any(f["rule"] in ("BL310", "BL003") for f in findings)


def test_the_leave_one_out_refits_in_worker_processes_give_the_same_document(tmp_path: Path) -> None:
    """--jobs: the refits run in forked processes and come back in run order: the document is
    byte for byte the one-process document."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("worker processes need fork; elsewhere the refits run in one process")
    bench = _native_run(tmp_path, "runs.json", [(1, 0.060, 0.0110), (8, 0.075, 0.0122), (32, 0.140, 0.0165),
                                                (64, 0.230, 0.0215)])
    texts = []
    for jobs in ("1", "3"):
        out = tmp_path / f"cal{jobs}.yaml"
        r = CliRunner().invoke(main, ["calibrate", str(bench), "--model", "llama-3.1-8b", "--hardware",
                                      "h100-sxm", "--jobs", jobs, "-o", str(out)])
        assert r.exit_code == 0, r.output
        texts.append(out.read_text().replace(f"cal{jobs}.yaml", ""))
    assert texts[0] == texts[1]
    assert "leave_one_out" in texts[0]
