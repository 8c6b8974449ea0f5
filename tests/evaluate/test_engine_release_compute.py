"""deployment.engine_version under engine: trtllm picks the compute fraction of that release's own MLPerf
Offline rows (docs/calibration.md "Compute defaults of older TensorRT-LLM releases"; issue 25, acc44): two
budgets in one file, the same deployment but for the release, are judged at their own fractions in one run
(no cache shared between them), and the words say which rows set each."""

from __future__ import annotations

from pathlib import Path

from budgetlint.run.check import Options, run_check

#: name -> (engine, its deployment's engine_version entry); the last runs vLLM at an old version string:
#: another engine keeps the current rows
CASES = {"old": ("trtllm", ", engine_version: '0.9.0'"), "v12": ("trtllm", ", engine_version: 0.12.0.dev2024071600"),
         "new": ("trtllm", ", engine_version: '1.0'"), "unstated": ("trtllm", ""),
         "vllm-old": ("vllm", ", engine_version: '0.9.0'"),
         # what else users write: a v-prefixed tag takes its release; a word that is no version, the current rows
         "v-tag": ("trtllm", ", engine_version: v0.12.0"), "latest": ("trtllm", ", engine_version: latest")}
BUDGETS = "version: 1\nkind: budgets\nbudgets:\n" + "".join(f"""  - name: {name}
    owner: "@x"
    workload: {{prompt_tokens: 2000, output_tokens: 200}}
    promise: {{ttft: 2 s, tpot: 100 ms}}
    deployment: {{model: llama-3.1-70b, hardware: h100-sxm, devices: 2, weight_precision: fp8,
                  engine: {engine}{version}}}
""" for name, (engine, version) in CASES.items())


def test_each_release_its_own_rows_in_one_run(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "b.yaml").write_text(BUDGETS)
    monkeypatch.chdir(tmp_path)
    report = run_check(["b.yaml"], Options(use_codeowners=False, jobs=1))
    assumed = {r.name: r.as_dict()["analysis"]["efficiency_assumed"] for r in report.budgets}
    assert set(assumed) == set(CASES)
    # the medians of docs/calibration.md's rows (recomputed by hand in tests/calibration/test_compute_defaults.py)
    assert assumed["old"]["compute"] == 0.417 and "under TensorRT-LLM 0.9.0.dev" in assumed["old"]["words"]
    assert "median of 7 MLPerf v4.0 Offline runs" in assumed["old"]["words"]
    assert assumed["v12"]["compute"] == 0.477 and "MLPerf v4.1" in assumed["v12"]["words"]
    assert assumed["v-tag"]["compute"] == 0.477
    for name in ("new", "unstated", "vllm-old", "latest"):
        assert assumed[name]["compute"] == 0.650, name
        assert "median of 5 MLPerf v5.1 Offline runs" in assumed[name]["words"], name
