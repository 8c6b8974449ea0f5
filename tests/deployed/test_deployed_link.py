"""deployment.config against the budget (BL701-BL703) and engine defaults by release: issue 26's "Done when"."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from budgetlint.reporters import get_reporter
from budgetlint.run.check import Options, evaluate_run, run_check
from budgetlint.run.explain import explain_budget
from cli_runner import cli_json

BUDGET = """\
version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@a/b"
    workload: {{prompt_tokens: 1000, output_tokens: 100{workload}}}
    promise: {{pace: 20 token/s}}
    deployment:
      model: llama-3.1-70b
      hardware: h100-sxm
{deployment}
"""



@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch) -> None:
    """Run where the files are: display paths are then relative, as in a repository."""
    monkeypatch.chdir(tmp_path)

def _write(tmp_path: Path, deployment: str, workload: str = "") -> Path:
    body = textwrap.indent(textwrap.dedent(deployment), " " * 6)
    p = Path("b.yaml")
    p.write_text(BUDGET.format(deployment=body, workload=workload))
    return p


def _findings(p: Path, rule: str) -> list[dict]:
    report = run_check([str(p)], Options(use_codeowners=False))
    doc = json.loads(get_reporter("json")(report))
    return [f for f in doc["findings"] if f["rule"] == rule]


def _values(tmp_path: Path) -> Path:
    d = tmp_path / "deploy"
    d.mkdir()
    (d / "values.yaml").write_text(textwrap.dedent("""\
        modelArtifacts:
          name: meta-llama/Llama-3.1-70B-Instruct
        decode:
          replicas: 1
          containers:
            - name: vllm
              image: ghcr.io/llm-d/llm-d-cuda:v0.5.0
              modelCommand: vllmServe
              args:
                - "--tensor-parallel-size=2"
                - "--kv-cache-dtype"
                - "fp8"
                - "--no-enable-prefix-caching"
        """))
    return d / "values.yaml"


def test_devices_against_the_helm_tensor_parallel_size(tmp_path: Path) -> None:
    _values(tmp_path)
    p = _write(tmp_path, "devices: 4\nconfig: [deploy/values.yaml]\n")
    (f,) = [f for f in _findings(p, "BL701") if "devices" in f["message"]]
    # the budget's devices: 4 is line 11 of b.yaml; --tensor-parallel-size=2 is line 10 of values.yaml
    assert (f["line"], f["severity"]) == (11, "warning")
    assert "devices: 4" in f["message"] and "tensor-parallel 2" in f["message"]
    assert "b.yaml:11" in f["message"] and "deploy/values.yaml:10" in f["message"]
    assert "the verdict used the budget's 4" in f["message"]


def test_prefix_caching_off_against_a_hit_rate_and_kv_dtype(tmp_path: Path) -> None:
    _values(tmp_path)
    p = _write(tmp_path, "devices: 2\nkv_precision: bf16\nconfig: [deploy/values.yaml]\n",
               workload=", prefix_cache_hit: 0.5")
    msgs = [f["message"] for f in _findings(p, "BL701")]
    assert any("prefix_cache_hit: 0.5" in m and "--no-enable-prefix-caching at deploy/values.yaml:13" in m
               for m in msgs), msgs
    assert any("kv_precision: bf16" in m and "kv-cache-dtype fp8" in m and "deploy/values.yaml:11" in m
               for m in msgs), msgs
    assert not any("devices" in m for m in msgs)  # 2 == 2: no finding


def test_a_deployed_max_num_seqs_is_simulated_and_explained(tmp_path: Path) -> None:
    d = tmp_path / "deploy"
    d.mkdir()
    lines = ["#!/bin/sh"] + [f"# line {i}" for i in range(2, 13)] + [
        "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 \\",
        "    --max-num-seqs 512"]  # line 14
    (d / "serve.sh").write_text("\n".join(lines) + "\n")
    p = _write(tmp_path, "devices: 4\nconfig: [deploy/serve.sh]\n")
    run = evaluate_run([str(p)], Options(use_codeowners=False), keep=True)
    (ev,) = run.evaluations
    assert ev.budget.deployment.max_num_seqs == 512
    assert ev.load is not None and ev.load.max_num_seqs == 512
    text = explain_budget(ev)
    assert "--max-num-seqs 512 in deploy/serve.sh:14" in text
    assert _findings(p, "BL701") == []


def test_each_release_uses_its_memory_utilisation_default(tmp_path: Path) -> None:
    """vLLM 0.6.0: gpu_memory_utilization 0.90 (vllm/engine/arg_utils.py:88 at v0.6.0); from 0.20.0 on,
    0.92 (vllm/config/cache.py:66 at v0.20.0). Read off the releases' sources (docs/deployed-config.md)."""
    texts = {}
    for version in ("0.6.0", "0.20.0"):
        p = _write(tmp_path, f'devices: 4\nweight_precision: fp8\nengine: vllm\nengine_version: "{version}"\n')
        run = evaluate_run([str(p)], Options(use_codeowners=False), keep=True)
        (ev,) = run.evaluations
        texts[version] = (ev.budget.deployment.memory_usable_fraction, explain_budget(ev),
                          ev.analysis["deployed"]["defaults"]["memory_usable_fraction"])
    assert texts["0.6.0"][0] == 0.90 and texts["0.20.0"][0] == 0.92
    assert "90% of memory usable" in texts["0.6.0"][1] and "92% of memory usable" in texts["0.20.0"][1]
    assert "vllm/engine/arg_utils.py:88" in texts["0.6.0"][2] and "vLLM 0.6.0" in texts["0.6.0"][2]
    assert "vllm/config/cache.py:66" in texts["0.20.0"][2] and "vLLM 0.20.0" in texts["0.20.0"][2]
    assert _findings(p, "BL703") == []


def test_vllm_060_has_prefix_caching_off_by_default(tmp_path: Path) -> None:
    """v0.6.0 vllm/engine/arg_utils.py:83: enable_prefix_caching = False; a hit rate is then a contradiction."""
    p = _write(tmp_path, 'devices: 4\nengine: vllm\nengine_version: "0.6.0"\n', workload=", prefix_cache_hit: 0.5")
    (f,) = _findings(p, "BL701")
    assert "prefix caching off" in f["message"] and "arg_utils.py:83" in f["message"]
    p = _write(tmp_path, 'devices: 4\nengine: vllm\nengine_version: "0.11.0"\n', workload=", prefix_cache_hit: 0.5")
    assert _findings(p, "BL701") == []  # V1: on by default


def test_an_unknown_version_takes_the_newest_release_and_says_so(tmp_path: Path) -> None:
    p = _write(tmp_path, "devices: 4\nengine: vllm\n")
    (f,) = _findings(p, "BL703")
    assert "no vLLM version given" in f["message"] and "newest release read" in f["message"]


def test_a_value_the_budget_leaves_out_is_taken_from_the_deployment(tmp_path: Path) -> None:
    _values(tmp_path)
    p = _write(tmp_path, "config: [deploy/values.yaml]\n")
    run = evaluate_run([str(p)], Options(use_codeowners=False), keep=True)
    (ev,) = run.evaluations
    dep = ev.budget.deployment
    assert (dep.devices, dep.kv_precision, dep.engine) == (2, "fp8", "vllm")
    assert "deploy/values.yaml:10" in dep.provenance["devices"]


def test_repository_wide_discovery_matches_configurations_by_model(tmp_path: Path) -> None:
    """`deployed-config` globs in the config file: a configuration serving another model is not this budget's."""
    d = tmp_path / "deploy"
    d.mkdir()
    (d / "a.sh").write_text("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 2\n")
    (d / "b.sh").write_text("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8\n")
    (tmp_path / "budgetlint.toml").write_text('deployed-config = ["deploy/*.sh"]\n')
    _write(tmp_path, "devices: 4\n")
    _code, doc = cli_json("check", "b.yaml", "--no-codeowners")
    msgs = [f["message"] for f in doc["findings"] if f["rule"] == "BL701"]
    assert len(msgs) == 1 and "tensor-parallel 2" in msgs[0] and "deploy/a.sh:1" in msgs[0]


def _serve(tmp_path: Path, flag: str, served: str) -> None:
    d = tmp_path / "deploy"
    d.mkdir(exist_ok=True)
    lines = ["#!/bin/sh"] + [f"# line {i}" for i in range(2, 13)] + [
        f"vllm serve {served} --tensor-parallel-size 4 \\",
        f"    {flag}"]  # line 14
    (d / "serve.sh").write_text("\n".join(lines) + "\n")


def _simulated(tmp_path: Path, version: str, flag: str | None,
               model: tuple[str, str] = ("llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct")) -> tuple[dict, dict]:
    """The load and the deployed defaults of a budget at 2 request/s on 4 H100s under vLLM ``version``
    (``model``: the catalog's name, the served one), with the launch line's ``flag`` (or no launch line)."""
    config = ""
    if flag is not None:
        _serve(tmp_path, flag, model[1])
        config = "config: [deploy/serve.sh]\n"
    p = _write(tmp_path, f'devices: 4\nweight_precision: fp8\nengine: vllm\nengine_version: "{version}"\n'
                         f"max_num_seqs: 64\nmax_num_batched_tokens: 32768\n{config}",
               workload=", arrival_rate: 2 request/s, arrival: poisson")
    p.write_text(p.read_text().replace("model: llama-3.1-70b", f"model: {model[0]}"))
    doc = json.loads(get_reporter("json")(run_check([str(p)], Options(use_codeowners=False))))
    (b,) = doc["budgets"]
    return b["load"], b["analysis"].get("deployed", {}).get("defaults", {})


def test_a_launch_lines_chunked_prefill_flag_is_the_one_simulated(tmp_path: Path) -> None:
    """vLLM 0.11.0 chunks by default (its row in deployed/defaults.py); `--no-enable-chunked-prefill` on
    the launch line turns it off, so the simulation prefills each prompt whole in an iteration of its own
    (the scheduling tests/physics/test_unchunked_prefill.py works by hand) and says where that came from.
    Before, the flag was read and shown but the simulation kept the release's default."""
    on, _ = _simulated(tmp_path, "0.11.0", None)
    off, _ = _simulated(tmp_path, "0.11.0", "--no-enable-chunked-prefill")
    assert "no chunked prefill" not in on["scheduler"]["from"]
    assert "no chunked prefill (chunked prefill off from --no-enable-chunked-prefill" in off["scheduler"]["from"]
    assert "deploy/serve.sh:14" in off["scheduler"]["from"]


def test_a_launch_line_turning_chunked_prefill_on_overrides_the_v0_default(tmp_path: Path) -> None:
    """vLLM 0.6.0's default is off up to a 32,768-token max_model_len (vllm/engine/arg_utils.py:843-869
    at v0.6.0), Mistral 7B v0.1's own (config.json max_position_embeddings 32,768); `--enable-chunked-prefill`
    on the launch line turns it on: nothing unchunked is simulated."""
    mistral = ("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1")
    off, _ = _simulated(tmp_path, "0.6.0", None, mistral)
    on, _ = _simulated(tmp_path, "0.6.0", "--enable-chunked-prefill", mistral)
    assert "no chunked prefill (vLLM 0.6.0 default" in off["scheduler"]["from"]
    assert "no chunked prefill" not in on["scheduler"]["from"]


def test_the_shown_chunked_prefill_default_is_the_simulated_one(tmp_path: Path) -> None:
    """Llama 3.1 70B's config.json gives max_position_embeddings 131,072 (the catalog's max_context),
    above vLLM 0.6.0's 32,768: that release turns chunked prefill on for it, so the deployed defaults
    say "on" as the simulation has it (before: "off", the row's value below the threshold)."""
    load, defaults = _simulated(tmp_path, "0.6.0", None)
    assert defaults["chunked_prefill"].startswith("on: ") and "max_model_len 131072 > 32768" in defaults["chunked_prefill"]
    assert "no chunked prefill" not in load["scheduler"]["from"]


def test_explain_says_why_each_unresolved_value_is_not_read(tmp_path: Path) -> None:
    """A variable is "(a variable: not read)"; a --config file not there says its own why (until stop 47 it was
    called a variable too)."""
    d = tmp_path / "deploy"
    d.mkdir()
    (d / "serve.sh").write_text("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size $TP "
                                "--config nothere.yaml\n")
    p = _write(tmp_path, "devices: 4\nconfig: [deploy/serve.sh]\n")
    run = evaluate_run([str(p)], Options(use_codeowners=False), keep=True)
    (ev,) = run.evaluations
    lines = [line.strip() for line in explain_budget(ev).splitlines() if "unresolved:" in line]
    assert any(line.endswith("(a variable: not read)") and "$TP" in line for line in lines), lines
    config = next(line for line in lines if "--config nothere.yaml" in line)
    assert config.endswith("[deploy/serve.sh:1]") and "not found beside deploy/serve.sh: its values are not read" in config
