"""The load simulation wired into the evaluation: report keys, verdicts, switches, cache."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BUDGET = """\
version: 1
kind: budgets
budgets:
  - name: {name}
    owner: "@acme/serving"
    percentile: p95
    workload:
      prompt_tokens: {{lognormal: {{mean: 1500, p95: 4000}}}}
      output_tokens: {{lognormal: {{mean: 300, p95: 800}}}}
      arrival_rate: {rate}
      arrival_rate_per: replica
    promise:
      ttft: {ttft}
      tpot: 50 ms
    # compute declared at the class's 50 % the figures below were set at (bf16 on Hopper now defaults to 0.319)
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm, replicas: 2, efficiency: {{compute: 0.5}}}}
"""
TEAMS = 'version: 1\nkind: teams\nteams:\n  - handle: "@acme/serving"\n'


def write(tmp: Path, *budgets: dict, extra: str = "") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "teams.yaml").write_text(TEAMS)
    text = BUDGET.format(**budgets[0])
    for b in budgets[1:]:
        text += "\n".join(BUDGET.format(**b).splitlines()[3:]) + "\n"
    (tmp / "budgets.yaml").write_text(text + extra)
    return tmp


def check(tmp: Path, *args: str) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", ".", "--format", "json",
                           "--no-codeowners", "--no-summary", *args],
                          cwd=tmp, capture_output=True, text=True, timeout=120)
    return proc.returncode, json.loads(proc.stdout)


def test_report_carries_the_load_contract(tmp_path: Path) -> None:
    write(tmp_path, dict(name="chat", rate="6 request/s", ttft="800 ms"))
    code, doc = check(tmp_path)
    load = doc["budgets"][0]["load"]
    assert load["simulated"] is True
    for metric in ("ttft_s", "tpot_s", "e2e_s", "queue_s"):
        for p in ("p50", "p90", "p95", "p99"):
            assert load["predicted"][metric][p] >= 0
        assert load["predicted"][metric]["p50"] <= load["predicted"][metric]["p99"]
    for key in ("ttft_s.p95", "tpot_s.p95"):
        iv = load["interval"][key]
        assert iv["low"] <= load["predicted"][key.split(".")[0]]["p95"] <= iv["high"]
    assert 0 < load["utilisation"] < 1
    assert load["batch_size"]["mean"] > 1 and load["batch_size"]["p95"] >= load["batch_size"]["mean"]
    assert load["preemptions_per_request"] == 0
    assert 0.9 <= load["slo_attainment"] <= 1
    assert load["goodput_request_per_s"] == pytest.approx(12.0, rel=0.15)  # 2 replicas x 6
    assert load["capacity_request_per_s"] > 6
    assert load["replicas_needed"] == 2
    assert load["verdicts"] == {"ttft": "met", "tpot": "met"}
    assert code == 0


def test_no_simulate_flag_and_config_key_say_so(tmp_path: Path) -> None:
    write(tmp_path, dict(name="chat", rate="6 request/s", ttft="800 ms"))
    _, doc = check(tmp_path, "--no-simulate")
    load = doc["budgets"][0]["load"]
    assert load["simulated"] is False and "--no-simulate" in load["reason"]
    (tmp_path / "budgetlint.toml").write_text("simulate = false\n")
    _, doc = check(tmp_path)
    assert doc["budgets"][0]["load"]["simulated"] is False
    (tmp_path / "budgetlint.toml").write_text("simulate = \"no\"\n")
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", ".", "--no-summary"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "'simulate' must be true or false" in proc.stdout + proc.stderr


def test_a_budget_without_traffic_has_no_load(tmp_path: Path) -> None:
    tmp_path.joinpath("teams.yaml").write_text(TEAMS)
    tmp_path.joinpath("b.yaml").write_text(textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: flat
            owner: "@acme/serving"
            workload: {prompt_tokens: 100, output_tokens: 100}
            promise: {pace: 20 token/s}
            deployment: {model: llama-3.1-8b, hardware: h100-sxm}
        """))
    _, doc = check(tmp_path)
    assert "load" not in doc["budgets"][0]


def test_identical_configurations_are_simulated_once(tmp_path: Path, monkeypatch) -> None:
    from budgetlint.options import Options
    from budgetlint.physics import capacity as capacity_mod
    from budgetlint.run.check import evaluate_run

    calls: list[int] = []
    real = capacity_mod.capacity

    def counted(*args, **kwargs):  # the capacity search: once per distinct configuration
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(capacity_mod, "capacity", counted)
    write(tmp_path, dict(name="a", rate="6 request/s", ttft="800 ms"), dict(name="b", rate="6 request/s", ttft="800 ms"),
          dict(name="c", rate="3 request/s", ttft="800 ms"))
    result = evaluate_run([str(tmp_path)], Options(use_codeowners=False), keep=True)
    assert len(calls) == 2  # a's configuration (b shares it) and c's
    sims = {ev.budget.name: ev.load.simulations for ev in result.evaluations}
    # the simulations behind each result, the same for a budget whose result was shared (one number
    # whichever process met the configuration first: tests/hardening/test_parallel.py)
    assert sims["a"] > 1 and sims["b"] == sims["a"] and sims["c"] > 1
    a, b = (next(ev for ev in result.evaluations if ev.budget.name == n) for n in "ab")
    assert a.load.as_dict()["predicted"] == b.load.as_dict()["predicted"]


def test_the_bound_keeps_cannot_be_met(tmp_path: Path) -> None:
    """A TTFT below one prefill at 100 % is BL301 only; the simulation never adds BL307 to it."""
    write(tmp_path, dict(name="impossible", rate="2 request/s", ttft="5 ms"))
    _, doc = check(tmp_path)
    b = doc["budgets"][0]
    assert b["verdicts"]["ttft"] == "cannot-be-met"
    assert b["load"]["verdicts"]["ttft"] == "cannot-be-met"
    rules = {(f["rule"], f["line"]) for f in doc["findings"]}
    assert ("BL301", 13) in rules and ("BL307", 13) not in rules


def test_explain_has_an_under_load_section(tmp_path: Path) -> None:
    write(tmp_path, dict(name="chat", rate="11 request/s", ttft="800 ms"))
    proc = subprocess.run([sys.executable, "-m", "budgetlint", "explain", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out = proc.stdout
    assert "Under load (simulated" in out
    for words in ("utilisation", "batch:", "preemptions", "95 % interval", "capacity", "for the declared rate"):
        assert words in out, words


def test_bad_traffic_input_is_located(tmp_path: Path) -> None:
    write(tmp_path, dict(name="chat", rate="6 token/s", ttft="800 ms"))
    code, doc = check(tmp_path)
    f = next(f for f in doc["findings"] if f["rule"] == "BL005")
    assert f["line"] == 10 and "request rate" in f["message"]
    assert code == 1
    write(tmp_path, dict(name="chat", rate="6 request/s", ttft="800 ms"))
    text = (tmp_path / "budgets.yaml").read_text().replace("p95: 4000", "p95: 1000")
    (tmp_path / "budgets.yaml").write_text(text)
    code, doc = check(tmp_path)
    f = next(f for f in doc["findings"] if f["rule"] == "BL003")
    assert f["line"] == 8 and "p95" in f["message"]


def test_a_full_kv_cache_is_named_as_the_mechanism(tmp_path: Path) -> None:
    """32 users of 6,000 + 2,000 tokens on a 24 GB L4: the cache holds ~17,000 tokens
    (21.6 GB usable - 16.06 GB of weights - the 3 GiB default runtime reserve, at
    131,072 B per token), not 256,000."""
    tmp_path.joinpath("teams.yaml").write_text(TEAMS)
    tmp_path.joinpath("b.yaml").write_text(textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: long-docs
            owner: "@acme/serving"
            percentile: p95
            workload: {prompt_tokens: 6000, output_tokens: 2000, concurrency: 32}
            promise: {ttft: 2 s}
            deployment: {model: llama-3.1-8b, hardware: l4, max_num_seqs: 32}
        """))
    _, doc = check(tmp_path)
    load = doc["budgets"][0]["load"]
    assert load["scheduler"]["kv_capacity_tokens"] == pytest.approx((24e9 * 0.9 - 16.06e9 - 3 * 2**30) / 131072,
                                                                    rel=0.01)
    assert load["preemptions_per_request"] > 0.1
    f = next(f for f in doc["findings"] if f["rule"] == "BL307")
    assert "KV cache" in f["message"] and "preemptions per request" in f["message"]


def test_engine_defaults_follow_vllm() -> None:
    """vllm/engine/arg_utils.py get_batch_defaults: >= 70 GiB and not an A100 -> 1024/8192."""
    from budgetlint.evaluate.load import engine_defaults

    assert engine_defaults(80e9, "h100-sxm") == (1024, 8192)  # 80 GB = 74.5 GiB
    assert engine_defaults(80e9, "a100-sxm-80gb") == (256, 2048)
    assert engine_defaults(24e9, "l4") == (256, 2048)
    assert engine_defaults(70 * 2**30, "mi300x") == (1024, 8192)
    assert engine_defaults(70 * 2**30 - 1, "x") == (256, 2048)


def test_rates_per_replica_and_per_service(tmp_path: Path) -> None:
    write(tmp_path / "r", dict(name="per-replica", rate="6 request/s", ttft="800 ms"))
    _, doc = check(tmp_path / "r")
    load = doc["budgets"][0]["load"]
    assert load["arrival_rate_request_per_s"] == 12.0 and load["replicas"] == 2
    write(tmp_path / "s", dict(name="per-service", rate="6 request/s", ttft="800 ms"))
    text = (tmp_path / "s" / "budgets.yaml").read_text().replace("arrival_rate_per: replica", "arrival_rate_per: service")
    (tmp_path / "s" / "budgets.yaml").write_text(text)
    _, doc = check(tmp_path / "s")
    assert doc["budgets"][0]["load"]["arrival_rate_request_per_s"] == 6.0


def test_length_forms_build(tmp_path: Path) -> None:
    from budgetlint.options import Options
    from budgetlint.run.check import evaluate_run

    tmp_path.joinpath("teams.yaml").write_text(TEAMS)
    tmp_path.joinpath("b.yaml").write_text(textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: forms
            owner: "@acme/serving"
            workload:
              prompt_tokens: {uniform: [100, 300]}
              output_tokens: {values: [10, 20, 60]}
              arrival_rate: 120 request/min
              arrival: gamma
              arrival_cv: 2.5
              prefix_cache_hit: 0.5
              prefix_cache_hit_requests: 0.25
            promise: {ttft: 1 s}
            deployment: {model: llama-3.1-8b, hardware: h100-sxm, max_num_seqs: 8, max_num_batched_tokens: 512,
                         load_balancer: least_loaded}
        """))
    result = evaluate_run([str(tmp_path)], Options(use_codeowners=False), keep=True)
    (ev,) = result.evaluations
    wl, dep = ev.budget.workload, ev.budget.deployment
    assert (wl.prompt_tokens, wl.output_tokens) == (200, 30)  # the means, for the flat estimate
    assert wl.prompt_dist == ("uniform", 100, 300) and wl.output_dist == ("values", (10, 20, 60))
    assert wl.arrival_rate_per_s == pytest.approx(2.0) and (wl.arrival, wl.arrival_cv) == ("gamma", 2.5)
    assert wl.prefix_cache_hit_requests == 0.25
    assert (dep.max_num_seqs, dep.max_num_batched_tokens, dep.load_balancer) == (8, 512, "least_loaded")
    assert ev.load.max_num_seqs == 8 and ev.load.scheduler_from == "budget"
    assert ev.load.result.batch_size_p95 <= 8


def test_scheduler_steps_reach_the_simulation(tmp_path: Path) -> None:
    """``deployment.scheduler_steps`` (vLLM V0 ``--num-scheduler-steps``; issue 25, multistep25) is read
    into the deployment and the simulated scheduler (its ``from`` says so); absent, it is 1."""
    from budgetlint.options import Options
    from budgetlint.run.check import evaluate_run

    tmp_path.joinpath("teams.yaml").write_text(TEAMS)
    body = textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: steps
            owner: "@acme/serving"
            workload: {prompt_tokens: 200, output_tokens: 30, arrival_rate: 2 request/s}
            promise: {ttft: 1 s}
            deployment: {model: llama-3.1-8b, hardware: h100-sxm, max_num_seqs: 8, max_num_batched_tokens: 512STEPS}
        """)
    tmp_path.joinpath("b.yaml").write_text(body.replace("STEPS", ", scheduler_steps: 9"))
    (ev,) = evaluate_run([str(tmp_path)], Options(use_codeowners=False), keep=True).evaluations
    assert ev.budget.deployment.scheduler_steps == 9
    assert "multi-step scheduling (9 decode iterations a scheduler call)" in ev.load.scheduler_from
    tmp_path.joinpath("b.yaml").write_text(body.replace("STEPS", ""))
    (ev,) = evaluate_run([str(tmp_path)], Options(use_codeowners=False), keep=True).evaluations
    assert ev.budget.deployment.scheduler_steps == 1 and "multi-step" not in ev.load.scheduler_from


def _steps_repo(tmp_path: Path, config_name: str, config_text: str, deployment: str, workload: str = "") -> Path:
    """A teams file, one deployed configuration and a budget on Llama-3.1-8B linking it (issue 25)."""
    tmp_path.joinpath("teams.yaml").write_text(TEAMS)
    tmp_path.joinpath(config_name).write_text(config_text)
    tmp_path.joinpath("b.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        kind: budgets
        budgets:
          - name: steps
            owner: "@acme/serving"
            workload: {{prompt_tokens: 200, output_tokens: 30{workload}}}
            promise: {{ttft: 1 s}}
            deployment: {{model: llama-3.1-8b, hardware: h100-sxm{deployment}, config: [{config_name}]}}
        """))
    return tmp_path / "b.yaml"


K8S_ARGS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.6
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--num-scheduler-steps", "8", "--max-num-seqs", "8"]
"""


@pytest.mark.parametrize("config_name, text", [
    ("serve.sh", "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct --num-scheduler-steps 8 --max-num-seqs 8\n"),
    ("vllm.yaml", "model: meta-llama/Llama-3.1-8B-Instruct\nnum-scheduler-steps: 8\nmax-num-seqs: 8\n"),
    ("vllm-underscores.yaml", "model: meta-llama/Llama-3.1-8B-Instruct\nnum_scheduler_steps: 8\nmax_num_seqs: 8\n"),
    ("deploy.yaml", K8S_ARGS)])
def test_a_deployed_num_scheduler_steps_fills_scheduler_steps(config_name: str, text: str, tmp_path: Path) -> None:
    """vLLM's ``--num-scheduler-steps 8`` on a launch line, in a ``--config`` YAML (either spelling) or in a
    Kubernetes container's args fills ``deployment.scheduler_steps`` where the budget leaves it out, with its
    file and line: the simulated scheduler says multi-step scheduling (until this, the flag was not read and
    the simulation took 1)."""
    from budgetlint.options import Options
    from budgetlint.run.check import evaluate_run

    _steps_repo(tmp_path, config_name, text, ", max_num_batched_tokens: 512", ", arrival_rate: 2 request/s")
    (ev,) = evaluate_run([str(tmp_path)], Options(use_codeowners=False), keep=True).evaluations
    assert ev.budget.deployment.scheduler_steps == 8
    assert "multi-step scheduling (8 decode iterations a scheduler call)" in ev.load.scheduler_from
    assert config_name in ev.budget.deployment.provenance["scheduler_steps"]


def test_a_budgets_scheduler_steps_against_the_launch_line_is_bl701(tmp_path: Path) -> None:
    from cli_runner import cli_process

    b = _steps_repo(tmp_path, "serve.sh", "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct --num-scheduler-steps 8\n",
                    ", scheduler_steps: 4")
    proc = cli_process("check", str(b), "--format", "json", cwd=tmp_path)
    (f,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "BL701"]
    assert "scheduler_steps: 4" in f["message"] and "num-scheduler-steps 8" in f["message"], f["message"]
    assert f["fix"] == "set deployment.scheduler_steps to 8, or deploy 4"


@pytest.mark.parametrize("value", ["0", "-3", "two", "nan", "1e999"])
def test_a_bad_num_scheduler_steps_is_a_problem_with_its_place(value: str, tmp_path: Path) -> None:
    from cli_runner import cli_process

    b = _steps_repo(tmp_path, "serve.sh",
                    f"#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct --num-scheduler-steps {value}\n", "")
    proc = cli_process("check", str(b), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "serve.sh:2:" in out and "--num-scheduler-steps" in out, out
    assert proc.returncode != 0, out
