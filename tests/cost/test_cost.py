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
    ("price: nan USD/hour", "BL007"),  # NaN and inf are bad input, never a figure
    ("price: 1e400 USD/hour", "BL007"),
    ("price: -2 USD/hour", "BL003"),
    ("power: inf W", "BL007"),
    ("power: -5 W", "BL003"),
    ("power: 0 W", "BL003"),
    ("price: 2.5 EUR/hour", "BL007"),
])
def test_bad_prices_and_powers_are_findings_at_their_place(tmp_path: Path, bad: str, code: str) -> None:
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm").replace("__PRICE__", bad)
    report, _ = _check(tmp_path, text)
    assert any(f["rule"] == code and f["line"] == 9 for f in report["findings"]), report["findings"]
    if code == "BL003":  # zero and below: one message, "above zero"
        assert any("expected a value above zero" in f["message"] for f in report["findings"] if f["rule"] == code)
    if "EUR" in bad:  # only USD is defined: the message says so rather than only "unknown unit"
        assert any("USD is the only currency" in f["message"] for f in report["findings"])


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


DONE_WHEN = """\
version: 1
kind: budgets
budgets:
  - name: priced
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 200, arrival_rate: 4 request/s}
    promise: {ttft: 2 s, tpot: 50 ms, cost: 0.50 USD/Mtok}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, devices: 2, price: 2.50 USD/hour}
"""


def test_the_done_when_an_open_loop_is_judged_at_its_simulated_traffic(tmp_path: Path) -> None:
    """Issue 29's done-when: cost 0.50 USD/Mtok at 2.50 USD per H100-hour, judged from the simulated
    throughput. The declared 4 request/s is sustained (the simulation says so: not overloaded), so the
    service's output is, in steady state, exactly the arrivals x the output length:
    T = 4 x 200 = 800 token/s (a closed form, not the code's figure). By hand:
      fleet     2.5 / 3600 USD/s x 2 devices = 0.0013889 USD/s (5 USD/hour)
      USD/Mtok  0.0013889 / 800 x 1e6 = 1.7361 USD/Mtok > 0.50: at-risk, 247% over
      request   0.0013889 / 4 = 0.00034722 USD
      J/token   700 W (H100 SXM TDP) x 2 / 800 = 1.75 J/token
      headroom  0.5 / 1.7361 - 1 = -0.712"""
    report, _ = _check(tmp_path, DONE_WHEN)
    b = report["budgets"][0]
    assert b["load"]["overloaded"] is False and b["load"]["arrival_rate_request_per_s"] == 4.0
    j = b["judgement"]["cost"]
    assert (j["basis"], j["verdict"]) == ("simulated", "at-risk")
    assert j["value"] * 1e6 == pytest.approx(2.5 / 3600 * 2 / 800 * 1e6, rel=1e-12)
    assert j["value"] * 1e6 == pytest.approx(1.7361, rel=1e-4)
    assert j["headroom"] == pytest.approx(0.5 / 1.7361111 - 1, rel=1e-6)
    c = b["analysis"]["cost"]
    assert c["output_token_per_s"] == pytest.approx(800.0, rel=1e-12)
    assert c["usd_per_request"] == pytest.approx(0.00034722, rel=1e-4)
    assert c["joules_per_token"] == pytest.approx(700 * 2 / 800, rel=1e-12)  # 1.75 J/token
    text = _explain(tmp_path)
    for line in ("operating point (simulated): the declared traffic, 4 request/s x 200 output tokens = "
                 "800 token/s of output, 4 request/s",
                 "fleet: 2.5 USD/hour x 2 devices x 1 replica = 5 USD/hour = 0.00139 USD per second",
                 "cost per output token: 0.00139 USD/s / 800 token/s x 1e6 = 1.74 USD/Mtok",
                 "cost per request: 0.00139 USD/s / 4 request/s = 0.000347 USD",
                 "x 2 devices x 1 replica / 800 token/s = 1.75 J/token",
                 "cost   AT RISK on the simulated 1.74 USD/Mtok; headroom -71%"):
        assert line in text, line


@pytest.mark.parametrize("traffic", ["arrival_rate: 4 request/s", "concurrency: 8"])
def test_the_same_fleet_at_capacity_is_shown_beside_the_declared_traffic(tmp_path: Path, traffic: str) -> None:
    """At 4 request/s (or 8 users) the two H100s are mostly idle; the figure at capacity is the same
    arithmetic on the simulated capacity (read from the report: an input) x 200 tokens:
    price x 2 / (cap x 200) x 1e6; the judged figure stays the declared traffic's."""
    report, out = _check(tmp_path, DONE_WHEN.replace("arrival_rate: 4 request/s", traffic))
    b = report["budgets"][0]
    cap = b["load"]["capacity_request_per_s"]  # per replica, every latency promise held
    served = b["analysis"]["cost"]["output_token_per_s"]
    assert cap * 200 > served
    full = b["analysis"]["cost"]["at_capacity"]
    assert full["output_token_per_s"] == pytest.approx(cap * 200, rel=1e-12)
    assert full["usd_per_mtok"] == pytest.approx(2.5 / 3600 * 2 / (cap * 200) * 1e6, rel=1e-12)
    assert full["joules_per_token"] == pytest.approx(700 * 2 / (cap * 200), rel=1e-12)
    # still judged at the declared traffic
    assert b["judgement"]["cost"]["value"] == pytest.approx(2.5 / 3600 * 2 / served, rel=1e-12)
    from budgetlint.text.numbers import quantity

    shown = quantity(full["usd_per_token"], "USD/token")
    [f] = [f for f in report["findings"] if f["rule"] == "BL360"]
    assert f"the same fleet would cost {shown}, which " in f["message"]
    assert "at capacity (the same fleet fully loaded, not judged)" in _explain(tmp_path)


def test_under_a_sustained_open_loop_a_lever_costs_its_devices_price(tmp_path: Path) -> None:
    """The arrivals set the tokens served (800 token/s whatever the step time), so 8-bit weights on the
    same 2 devices cost the same per token (ratio 2 / 2 = 1), and 4 tensor-parallel devices cost twice
    (4 / 2 = 2). Before, both got the flat estimates' ratio (0.51 and 1.0: a cost cut that does not exist)."""
    report, _ = _check(tmp_path, DONE_WHEN.replace("tpot: 50 ms", "tpot: 5 ms"))
    levers = {lv["name"]: lv for lv in report["budgets"][0]["analysis"]["levers"]}
    assert levers["weights-8bit"]["cost_ratio"] == pytest.approx(1.0)
    assert levers["weights-8bit"]["cost_basis"] == "declared traffic"
    assert "at 100% of the cost per output token (the declared traffic sets the tokens" in \
        levers["weights-8bit"]["description"]
    assert levers["more-devices"]["cost_ratio"] == pytest.approx(4 / 2)
    [f] = [f for f in report["findings"] if f["rule"] == "BL360"]
    assert "a faster step alone does not lower the cost" in f["message"]


TEAMS = """\
version: 1
kind: teams
teams:
  - handle: "@acme/chat"
  - handle: "@acme/finops"
"""


def test_a_cost_promise_has_its_own_owner(tmp_path: Path) -> None:
    """`cost_owner` names who answers for the cost promise: BL360 names it, the cost row is theirs in the
    markdown table and the JUnit case, explain names it beside the promise, HTML on the cost line."""
    (tmp_path / "teams.yaml").write_text(TEAMS, encoding="utf-8")
    text = DONE_WHEN.replace('    percentile: p95\n', '    cost_owner: "@acme/finops"\n    percentile: p95\n')
    report, _ = _check(tmp_path, text, "teams.yaml")
    b = report["budgets"][0]
    assert b["owner"] == "@acme/chat" and b["analysis"]["owner_cost"] == "@acme/finops"
    [f] = [f for f in report["findings"] if f["rule"] == "BL360"]
    assert "budget 'priced' (owner @acme/finops): cost 0.5 USD/Mtok promised" in f["message"]
    assert not [f for f in report["findings"] if f["rule"].startswith("BL10")]  # both owners known
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        md = CliRunner().invoke(main, ["check", "b.yaml", "teams.yaml", "--format", "markdown"]).output
        html = CliRunner().invoke(main, ["check", "b.yaml", "teams.yaml", "--format", "html"]).output
        junit = CliRunner().invoke(main, ["check", "b.yaml", "teams.yaml", "--format", "junit"]).output
    finally:
        os.chdir(old)
    [row] = [line for line in md.splitlines() if line.startswith("| priced | cost 0.5 USD/Mtok |")]
    assert "@acme/finops" in row and "@acme/chat" not in row
    [ttft] = [line for line in md.splitlines() if line.startswith("| priced | ttft 2 s |")]
    assert "@acme/chat" in ttft  # the other promises stay the budget owner's
    assert "Cost and energy (owner @acme/finops): 1.74 USD/Mtok" in html
    assert "@acme/finops" in junit
    assert "cost 0.5 USD/Mtok, owner @acme/finops [b.yaml:9:" in _explain(tmp_path)


def test_without_a_cost_owner_the_budget_owner_owns_the_cost(tmp_path: Path) -> None:
    report, _ = _check(tmp_path, DONE_WHEN)
    b = report["budgets"][0]
    assert "owner_cost" not in b["analysis"]
    [f] = [f for f in report["findings"] if f["rule"] == "BL360"]
    assert "(owner @acme/chat)" in f["message"]


@pytest.mark.parametrize("value, code, column", [
    ('"@acme/finsop"', "BL103", 17),  # a typo of a registered team: suggested
    ("5", "BL003", 17),  # not a handle at all
])
def test_a_bad_cost_owner_is_a_finding_at_its_place(tmp_path: Path, value: str, code: str, column: int) -> None:
    (tmp_path / "teams.yaml").write_text(TEAMS, encoding="utf-8")
    text = DONE_WHEN.replace('    percentile: p95\n', f'    cost_owner: {value}\n    percentile: p95\n')
    report, _ = _check(tmp_path, text, "teams.yaml")
    found = [f for f in report["findings"] if f["rule"] == code]
    assert found and (found[0]["line"], found[0]["column"]) == (6, column), report["findings"]
    if code == "BL103":
        assert "cost_owner '@acme/finsop'" in found[0]["message"] and "'@acme/finops'" in found[0]["message"]


def test_a_declared_open_loop_without_a_simulation_is_costed_at_its_traffic(tmp_path: Path) -> None:
    """--no-simulate: no simulation says whether 2 request/s is sustained, but the arrivals are the tokens
    served if it is: T = 2 x 250 = 500 token/s on 2 replicas x 1 device, 2.5/3600 x 2 / 500 x 1e6 =
    2.78 USD/Mtok, the lowest cost the deployment can have at that traffic (basis estimate). Before, the
    flat estimate's one request in flight per replica was taken as the throughput."""
    text = OPEN_LOOP.replace("my-h100-8b", "llama-3.1-8b").replace("my-h100", "h100-sxm") \
        .replace("__PRICE__", "price: 2.50 USD/hour")
    report, _ = _check(tmp_path, text, "--no-simulate")
    b = report["budgets"][0]
    c = b["analysis"]["cost"]
    assert c["basis"] == "estimate" and "not simulated" in c["throughput"]
    assert c["output_token_per_s"] == pytest.approx(500.0)
    assert c["usd_per_mtok"] == pytest.approx(2.5 / 3600 * 2 / 500 * 1e6)  # 2.78 USD/Mtok
    assert c["joules_per_token"] == pytest.approx(700 * 2 / 500)  # 2.8 J/token
    j = b["judgement"]["cost"]
    assert (j["basis"], j["verdict"]) == ("estimate", "at-risk")  # 2.78 over the promised 2


def test_a_disaggregated_deployment_under_a_declared_traffic_is_costed_at_it(tmp_path: Path) -> None:
    """prefill 2 x 4 + decode 6 x 4 = 32 devices at 2.50 USD/hour (H100 and H200 SXM, 700 W each by their
    datasheets) under a declared 2 request/s x 200 tokens = 400 token/s (simulated or not, if sustained):
    2.5/3600 x 32 / 400 x 1e6 = 55.6 USD/Mtok; 700 x 32 / 400 = 56 J/token. Before, without a simulation
    of the pools, the flat estimate's one request in flight (77.6 token/s) was the throughput."""
    text = """\
version: 1
kind: budgets
budgets:
  - name: pd
    owner: "@a/b"
    percentile: p95
    workload: {prompt_tokens: 4096, output_tokens: 200, arrival_rate: 2 request/s}
    promise: {ttft: 1 s, cost: 2 USD/Mtok}
    deployment:
      model: llama-3.1-70b
      hardware: h100-sxm
      price: 2.50 USD/hour
      disaggregated:
        prefill: {devices: 4, replicas: 2}
        decode: {hardware: h200-sxm, devices: 4, replicas: 6}
        kv_link: infiniband-ndr
"""
    report, _ = _check(tmp_path, text)
    c = report["budgets"][0]["analysis"]["cost"]
    assert c["devices"] * c["replicas"] == 32
    assert c["output_token_per_s"] == pytest.approx(400.0, rel=0.02)
    assert c["usd_per_mtok"] == pytest.approx(2.5 / 3600 * 32 / 400 * 1e6, rel=0.02)
    assert c["joules_per_token"] == pytest.approx(700 * 32 / 400, rel=0.02)


def test_a_levers_cost_ratio_with_the_tokens_fixed_is_its_devices_price() -> None:
    """physics/levers.with_cost_ratio: flat, (3 USD x 4 / 200 token/s) / (2 USD x 2 / 100 token/s) = 1.5;
    with the tokens fixed (a sustained open loop) the tokens cancel: 3 x 4 / (2 x 2) = 3."""
    from types import SimpleNamespace

    from budgetlint.physics.levers import Lever, with_cost_ratio

    def analysis(devices: int, tokens_per_s: float) -> SimpleNamespace:
        # a flat closed loop of 1 request of 100 tokens: busy = 100 / tokens_per_s
        return SimpleNamespace(devices=devices, concurrency=1, output_tokens=100, prefill_s=0.0,
                               decode_s=100 / tokens_per_s)

    base = analysis(2, 100.0)
    lever = Lever("x", "x", analysis(4, 200.0), True, None, None)  # type: ignore[arg-type]
    flat = with_cost_ratio(lever, base, 2.0, 3.0)
    assert flat.cost_ratio == pytest.approx(1.5) and flat.cost_basis == "flat estimate"
    fixed = with_cost_ratio(lever, base, 2.0, 3.0, tokens_fixed=True)
    assert fixed.cost_ratio == pytest.approx(3.0) and fixed.cost_basis == "declared traffic"
    assert with_cost_ratio(lever, base, 2.0, None, tokens_fixed=True).cost_ratio is None  # no price: unknown
