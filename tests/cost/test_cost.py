"""Cost and energy (issue 29): USD per million output tokens, per request, J per output token at the
judged operating point, the cost promise, the price's precedence, levers ranked by cost.

Expected numbers are worked by hand here: 2.50 USD/hour = 2.5 / 3600 USD/s; an H100 SXM's TDP is
700 W (NVIDIA H100 datasheet, ../shared/reference/hardware.csv); $/Mtok = price x devices x replicas /
output tokens per second x 1e6; J/token = power x devices x replicas / output tokens per second.
Where the throughput is the simulation's (an input of the arithmetic, not its result) the test reads
it from the report's `load` and does the cost arithmetic itself.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main

H100_TDP_W = 700.0  # NVIDIA H100 SXM datasheet: max TDP up to 700 W
PRICE = 2.5 / 3600  # 2.50 USD per device-hour, in USD/s

CLOSED_LOOP = """\
version: 1
kind: budgets
budgets:
  - name: priced
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 200, concurrency: 16}
    promise: {ttft: 2 s, tpot: 50 ms, cost: 0.50 USD/Mtok}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, devices: 2, price: 2.50 USD/hour}
"""


def _check(tmp_path: Path, text: str, *args: str, name: str = "b.yaml") -> tuple[dict, str]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(main, ["check", name, "--no-codeowners", "--format", "json", *args])
    finally:
        os.chdir(old)
    assert "Traceback" not in r.output, r.output
    return json.loads(r.output), r.output


def _explain(tmp_path: Path, name: str = "b.yaml") -> str:
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(main, ["explain", name])
    finally:
        os.chdir(old)
    assert r.exit_code == 0, r.output
    return r.output


def test_cost_promise_judged_from_the_simulated_throughput_with_the_arithmetic_in_explain(tmp_path: Path) -> None:
    report, _ = _check(tmp_path, CLOSED_LOOP)
    b = report["budgets"][0]
    tokens_per_s = b["load"]["output_token_per_s"]  # the simulated closed loop's output throughput
    assert tokens_per_s > 0
    usd_per_mtok = PRICE * 2 * 1 / tokens_per_s * 1e6  # 2 devices x 1 replica
    j = b["judgement"]["cost"]
    assert j["basis"] == "simulated" and j["unit"] == "USD/token"
    assert j["value"] * 1e6 == pytest.approx(usd_per_mtok, rel=1e-9)
    assert j["verdict"] == ("met" if usd_per_mtok <= 0.5 else "at-risk")
    assert j["headroom"] == pytest.approx(0.5 / usd_per_mtok - 1, rel=1e-9)
    c = b["analysis"]["cost"]
    assert c["joules_per_token"] == pytest.approx(H100_TDP_W * 2 / tokens_per_s, rel=1e-9)
    assert c["usd_per_request"] == pytest.approx(PRICE * 2 / b["load"]["throughput_request_per_s"], rel=1e-9)
    assert b["promises"]["cost_usd_per_token"] == pytest.approx(0.5e-6)
    text = _explain(tmp_path)
    assert "Cost and energy at the judged operating point" in text
    assert "2.5 USD/hour x 2 devices x 1 replica = 5 USD/hour" in text  # the fleet's price, by hand
    assert "0.00139 USD per second" in text  # 5 / 3600
    assert "700 W (h100-sxm TDP" in text and "J/token" in text
    assert "the simulated closed loop, 16 users per replica" in text


def test_the_physics_of_cost_by_hand() -> None:
    from budgetlint.physics.cost import cost, cost_ratio, flat_output_tokens_per_s

    c = cost(4000.0, 10.0, devices=8, replicas=2, price_usd_per_s=PRICE, power_w=H100_TDP_W)
    assert c.fleet_usd_per_s == pytest.approx(2.5 * 16 / 3600)  # 0.01111 USD/s
    assert c.usd_per_mtok == pytest.approx(2.5 * 16 / 3600 / 4000 * 1e6)  # 2.778 USD/Mtok
    assert c.usd_per_mtok == pytest.approx(2.7778, rel=1e-4)
    assert c.usd_per_request == pytest.approx(0.0011111, rel=1e-4)
    assert c.joules_per_token == pytest.approx(2.8)  # 700 W x 16 / 4000 token/s
    none = cost(4000.0, None, devices=1, replicas=1)
    assert none.usd_per_token is None and none.joules_per_token is None and none.usd_per_request is None
    with pytest.raises(ValueError):
        cost(0.0, 1.0, devices=1, replicas=1, price_usd_per_s=PRICE)
    with pytest.raises(ValueError):
        cost(math.nan, 1.0, devices=1, replicas=1)
    # 16 requests in flight, 200 tokens each, 2 s busy: 1600 token/s
    assert flat_output_tokens_per_s(16, 200, 2.0) == pytest.approx(1600.0)
    # 3 devices at 2 USD/s serving 100 token/s against 2 devices at 1 USD/s serving 50: (6/100) / (2/50) = 1.5
    assert cost_ratio(2, 50.0, 1.0, 3, 100.0, 2.0) == pytest.approx(1.5)


OPEN_LOOP = """\
version: 1
kind: budgets
budgets:
  - name: priced
    owner: "@acme/chat"
    percentile: p50
    workload: {prompt_tokens: 1000, output_tokens: 250, arrival_rate: 2 request/s}
    promise: {ttft: 1 s, cost: 2 USD/Mtok}
    deployment: {model: my-h100-8b, hardware: my-h100, replicas: 2, __PRICE__}
"""
HARDWARE = """\
version: 1
kind: hardware
hardware:
  - name: my-h100
    extends: h100-sxm
    price: 4 USD/hour
"""


@pytest.mark.parametrize("deployment_price, config, expected_usd_per_hour", [
    ("price: 2.50 USD/hour", 'prices = {my-h100 = "3 USD/hour"}', 2.5),  # the deployment wins
    ("", 'prices = {my-h100 = "3 USD/hour"}', 3.0),  # then the config's price list
    ("", "", 4.0),  # then the hardware entry
])
def test_price_precedence_deployment_then_config_then_catalog(tmp_path: Path, deployment_price: str, config: str,
                                                              expected_usd_per_hour: float) -> None:
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace(", __PRICE__", f", {deployment_price}"
                                                                  if deployment_price else "")
    (tmp_path / "hw.yaml").write_text(HARDWARE, encoding="utf-8")
    (tmp_path / "budgetlint.toml").write_text(config + "\n", encoding="utf-8")
    report, _ = _check(tmp_path, text, "hw.yaml")
    b = next(x for x in report["budgets"] if x["name"] == "priced")
    c = b["analysis"]["cost"]
    assert c["price_usd_per_s"] * 3600 == pytest.approx(expected_usd_per_hour)
    # the declared traffic is sustained: 2 request/s x 250 tokens = 500 token/s for the service,
    # on 2 replicas x 1 device: price x 2 / 500 x 1e6
    assert c["output_token_per_s"] == pytest.approx(500.0)
    assert c["usd_per_mtok"] == pytest.approx(expected_usd_per_hour / 3600 * 2 / 500 * 1e6)
    assert c["joules_per_token"] == pytest.approx(H100_TDP_W * 2 / 500)  # the TDP extends: inherits


def test_a_measured_power_wins_over_the_tdp(tmp_path: Path) -> None:
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm") \
        .replace("__PRICE__", "price: 2.50 USD/hour, power: 550 W")
    report, _ = _check(tmp_path, text)
    c = report["budgets"][0]["analysis"]["cost"]
    assert c["power_w"] == 550.0 and "measured" in c["power_from"]
    assert c["joules_per_token"] == pytest.approx(550 * 2 / 500)  # 2.2 J/token


def test_a_cost_promise_without_a_price_is_a_warning_not_a_pass(tmp_path: Path) -> None:
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm").replace(", __PRICE__", "")
    report, _ = _check(tmp_path, text)
    b = report["budgets"][0]
    assert b["judgement"]["cost"]["verdict"] == "unknown"
    assert b["status"] == "warn"
    [f] = [f for f in report["findings"] if f["rule"] == "BL361"]
    assert f["severity"] == "warning" and "no price for h100-sxm" in f["message"]


def test_levers_are_ranked_by_cost_for_a_cost_promise(tmp_path: Path) -> None:
    report, _ = _check(tmp_path, CLOSED_LOOP.replace("0.50 USD/Mtok", "0.05 USD/Mtok"))
    b = report["budgets"][0]
    levers = b["analysis"]["levers"]
    ratios = [lv["cost_ratio"] for lv in levers if "cost_ratio" in lv]
    assert ratios and ratios == sorted(ratios)
    eight = next(lv for lv in levers if lv["name"] == "weights-8bit")
    assert "of the cost per output token" in eight["description"]
    # 8-bit weights read half the bytes per decode step: cheaper per token, never dearer
    assert eight["cost_ratio"] < 1.0
    [f] = [f for f in report["findings"] if f["rule"] == "BL360"]
    assert f["promise"] == "cost" and "(owner @acme/chat)" in f["message"]


@pytest.mark.parametrize("bad, code", [
    ("price: 2.5 W", "BL005"),  # a power where a price goes
    ("price: 2.5", "BL006"),
    ("price: 0 USD/hour", "BL003"),
    ("power: 5 USD/hour", "BL005"),
])
def test_bad_prices_and_powers_are_findings_at_their_place(tmp_path: Path, bad: str, code: str) -> None:
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm").replace("__PRICE__", bad)
    report, _ = _check(tmp_path, text)
    assert any(f["rule"] == code and f["line"] == 9 for f in report["findings"]), report["findings"]


def test_a_bad_config_price_is_bl501(tmp_path: Path) -> None:
    (tmp_path / "budgetlint.toml").write_text('prices = {h100-sxm = "2.50 USD"}\n', encoding="utf-8")
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm").replace(", __PRICE__", "")
    report, _ = _check(tmp_path, text)
    assert any(f["rule"] == "BL501" and "prices.h100-sxm" in f["message"] for f in report["findings"])


def test_the_one_spelling_of_money_and_energy() -> None:
    from budgetlint.text.numbers import quantity

    assert quantity(0.5e-6, "USD/token") == "0.5 USD/Mtok"
    assert quantity(2.5 / 3600, "USD/s") == "2.5 USD/hour"
    assert quantity(0.000347, "USD") == "0.000347 USD"
    assert quantity(1400.0, "W") == "1.4 kW"
    assert quantity(1.4, "J/token") == "1.4 J/token"


MEASURED = """\
version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/serving"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 200, concurrency: 8}
    promise: {ttft: 500 ms, cost: 0.50 USD/Mtok}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, price: 2.50 USD/hour}
    bench: [run.json]
"""


def test_a_linked_run_judges_the_cost_on_its_output_throughput(tmp_path: Path) -> None:
    run = {"date": "20260101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
           "num_prompts": 2000, "request_rate": "inf", "max_concurrency": 8, "duration": 400.0, "completed": 2000,
           "total_input_tokens": 2000 * 1000, "total_output_tokens": 2000 * 200, "output_throughput": 1000.0,
           "mean_ttft_ms": 300.0, "median_ttft_ms": 280.0, "p95_ttft_ms": 459.0}
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    report, _ = _check(tmp_path, MEASURED)
    j = report["budgets"][0]["judgement"]["cost"]
    # 2.5 / 3600 USD/s on 1 device over the run's 1000 output token/s: 0.694 USD/Mtok, over 0.50
    assert j["basis"] == "measured"
    assert j["value"] * 1e6 == pytest.approx(2.5 / 3600 / 1000 * 1e6)
    assert j["verdict"] == "at-risk" and j["headroom"] == pytest.approx(0.5 / 0.69444 - 1, rel=1e-4)
    assert "simulated" in j["considered"]  # the simulation's figure was weighed too


def test_every_output_shows_the_cost(tmp_path: Path) -> None:
    """The bl362 case (hand: 1.39 USD/Mtok, 0.000347 USD per request, 1.4 J/token) in each format."""
    from budgetlint.text.numbers import quantity

    repo = Path(__file__).resolve().parents[2]
    case = repo / "tests/cases/bl362_cost_shown.yaml"
    outs = {}
    for fmt in ("text", "json", "markdown", "html", "sarif", "junit"):
        r = CliRunner().invoke(main, ["check", str(case), "--no-codeowners", "--format", fmt])
        assert "Traceback" not in r.output
        outs[fmt] = r.output
    for fmt in ("text", "markdown", "html"):
        assert "1.39 USD/Mtok" in outs[fmt] and "1.4 J/token" in outs[fmt], fmt
    assert "0.000347 USD per request" in outs["markdown"]
    b = json.loads(outs["json"])["budgets"][0]
    assert b["analysis"]["cost"]["usd_per_mtok"] == pytest.approx(2.5 / 3600 / 500 * 1e6)
    assert quantity(b["judgement"]["cost"]["value"], "USD/token") == "1.39 USD/Mtok"
    assert "| cost 2 USD/Mtok |" in outs["markdown"]  # the promise's row


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_a_loosened_cost_promise_is_a_pr_regression(tmp_path: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True, env={k: v for k, v in os.environ.items() if k != "GIT_DIR"})

    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm") \
        .replace("__PRICE__", "price: 2.50 USD/hour")
    git("init", "-q")
    (tmp_path / "b.yaml").write_text(text, encoding="utf-8")
    git("add", "b.yaml")
    git("commit", "-q", "-m", "first")
    report, _ = _check(tmp_path, text.replace("cost: 2 USD/Mtok", "cost: 3 USD/Mtok"), "--base", "HEAD")
    (chat,) = report["diff"]["changed"]
    (cost,) = chat["promises"]
    assert (cost["promise"], cost["change"]) == ("cost", "loosened")
    assert cost["old"] == pytest.approx(2e-6) and cost["new"] == pytest.approx(3e-6)
    [f] = [f for f in report["findings"] if f["rule"] == "BL505" and "cost promise" in f["message"]]
    assert "2 USD/Mtok -> 3 USD/Mtok" in f["message"]


def test_a_replica_pays_for_every_device_of_its_parallelism(tmp_path: Path) -> None:
    """tensor 1 x data 2 (docs/topologies.md): a replica is two devices, both paid for and powered."""
    text = OPEN_LOOP.replace("my-h100-8b", "qwen3-30b-a3b").replace("my-h100", "h100-sxm") \
        .replace("__PRICE__", "price: 2.50 USD/hour, parallelism: {tensor: 1, data: 2, expert: 2}")
    report, _ = _check(tmp_path, text)
    c = report["budgets"][0]["analysis"]["cost"]
    assert c["devices"] == 2 and c["replicas"] == 2
    # 2.5 / 3600 USD/s x 2 devices x 2 replicas over the declared 500 token/s
    assert c["usd_per_mtok"] == pytest.approx(2.5 / 3600 * 4 / 500 * 1e6)
    assert c["joules_per_token"] == pytest.approx(H100_TDP_W * 4 / 500)


def test_a_disaggregated_deployment_pays_for_both_pools(tmp_path: Path) -> None:
    """prefill 2 replicas x 2 devices + decode 3 replicas x 4 devices = 16 H100s (docs/topologies.md)."""
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm").replace(
        "replicas: 2, __PRICE__", "price: 2.50 USD/hour, disaggregated: {prefill: {devices: 2, replicas: 2}, "
        "decode: {devices: 4, replicas: 3}, kv_link: 50 GB/s}")
    report, _ = _check(tmp_path, text)
    c = report["budgets"][0]["analysis"].get("cost")
    assert c is not None, report["findings"]
    assert c["devices"] * c["replicas"] == 2 * 2 + 4 * 3
    assert c["fleet_usd_per_s"] == pytest.approx(2.5 / 3600 * 16)
    assert c["fleet_power_w"] == pytest.approx(H100_TDP_W * 16)
