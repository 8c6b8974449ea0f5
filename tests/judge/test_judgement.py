"""One truthful verdict per promise (issue 23): the judgement step and every output reading it.

Each test here failed on the code before the judgement step: the verdicts,
headroom, summaries and exit code read only the flat estimate. Expected
numbers are worked in the test (500 / 459 - 1, 8 x 24 token/s), or come
from docs/load.md (one H100 SXM completes ~9.6 request/s of these lengths).
"""

from __future__ import annotations

import html as html_lib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main
from budgetlint.model.units import format_headroom

REPO = Path(__file__).resolve().parents[2]
FORMATS = ("text", "json", "sarif", "junit", "markdown", "html", "github")
TEAMS = 'version: 1\nkind: teams\nteams:\n  - handle: "@acme/serving"\n'

#: docs/load.md, tests/cases/bl307: Llama 3.1 8B on one H100 SXM saturates near 11.7 request/s for these
#: lengths (9.6 before the closed form and issue 25's refitted defaults); 13 request/s arrive, so there
#: is no steady state. The flat estimate (one request, idle) of
#: an 8B model's TTFT on an H100 is tens of milliseconds: far below 800 ms.
OVERLOADED = """\
version: 1
kind: budgets
budgets:
  - name: chat-under-load
    owner: "@acme/serving"
    percentile: p95
    workload:
      prompt_tokens: {lognormal: {mean: 1500, p95: 4000}}
      output_tokens: {lognormal: {mean: 300, p95: 800}}
      arrival_rate: 13 request/s
    promise:
      ttft: 800 ms
      tpot: 50 ms
    deployment: {model: llama-3.1-8b, hardware: h100-sxm}
"""

MEASURED = """\
version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/serving"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 200, concurrency: 8}
    promise: {ttft: 500 ms}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm}
    bench: [run.json]
"""


def vllm_run(**extra: object) -> dict:
    run = {"date": "20260101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
           "num_prompts": 2000, "request_rate": "inf", "max_concurrency": 8, "duration": 400.0, "completed": 2000,
           "total_input_tokens": 2000 * 1000, "total_output_tokens": 2000 * 200,
           "mean_ttft_ms": 300.0, "median_ttft_ms": 280.0, "p95_ttft_ms": 459.0}
    run.update(extra)
    return run


def check_all(tmp: Path, *args: str) -> tuple[int, dict[str, str]]:
    """One run writing every format to a file; (exit code, format -> text)."""
    out = []
    for f in FORMATS:
        out += ["--format", f, "-o", str(tmp / f"out.{f}")]
    result = CliRunner().invoke(main, ["check", str(tmp), "--no-codeowners", "--no-summary", *out, *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, {f: (tmp / f"out.{f}").read_text(encoding="utf-8") for f in FORMATS}


def write(tmp: Path, budgets: str, **files: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "teams.yaml").write_text(TEAMS)
    (tmp / "budgets.yaml").write_text(budgets)
    for name, text in files.items():
        (tmp / name).write_text(text)
    return tmp


# --------------------------------------------------------------------------- reading each format


def html_card_row(page: str, budget: str, promise: str) -> str:
    start = page.index(f'data-budget="{budget}"')
    table = page[page.index('class="bl-promises"', start):]
    table = table[: table.index("</table>")]
    for row in re.findall(r"<tr>(.*?)</tr>", table):
        cells = [html_lib.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        if cells and cells[0] == promise:
            return " | ".join(cells)
    raise AssertionError(f"no {promise} row in the card of {budget}")


def html_counts(page: str, cls: str) -> dict[str, int]:
    table = page[page.index(f'class="{cls}"'):]
    table = table[: table.index("</table>")]
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table):
        cells = [html_lib.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        if len(cells) == 2:
            out[cells[0]] = int(cells[1])
    return out


def markdown_row(md: str, budget: str, promise: str) -> str:
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 9 and cells[0] == budget and cells[1].split(" ")[0] == promise:
            return line
    raise AssertionError(f"no markdown row {budget} {promise}")


def junit_props(xml: str, budget: str, promise: str) -> dict[str, str]:
    root = ET.fromstring(xml)
    for case in root.iter("testcase"):
        if case.get("name") == f"{budget}: {promise}":
            return {p.get("name"): p.get("value") for p in case.iter("property")}
    raise AssertionError(f"no testcase {budget}: {promise}")


def sarif_props(sarif: str, budget: str, promise: str) -> list[dict]:
    doc = json.loads(sarif)
    return [r.get("properties", {}) for r in doc["runs"][0]["results"]
            if r.get("properties", {}).get("budget", budget) == budget and f"'{budget}'" in r["message"]["text"]
            and r.get("properties", {}).get("verdict") is not None
            and (promise.upper() in r["message"]["text"] or promise in r["message"]["text"])]


# --------------------------------------------------------------------------- the scenarios


def test_flat_met_but_overloaded_is_not_met_in_any_format(tmp_path: Path) -> None:
    code, out = check_all(write(tmp_path, OVERLOADED), "--fail-on", "warning", "--sarif-info")
    doc = json.loads(out["json"])
    (b,) = doc["budgets"]
    # the flat estimate meets the promise (the old verdict), the simulation does not
    assert b["analysis"]["realistic_ttft_s"] < 0.8
    j = b["judgement"]["ttft"]
    assert j["basis"] == "simulated" and j["verdict"] != "met"
    assert b["verdicts"]["ttft"] == j["verdict"]
    assert set(j["considered"]) >= {"bound", "estimate"}
    assert b["status"] == "warn"
    # text: no line says the promise is met; the simulation's finding names its basis
    assert "ttft 800 ms is met" not in out["text"]
    assert "simulated p95 TTFT" in out["text"]
    # HTML: the card's badge and the summary counts
    assert "met" not in html_card_row(out["html"], "chat-under-load", "ttft").split(" | ")[6].split()
    counts = html_counts(out["html"], "bl-verdict-counts")
    assert counts["met"] == 0 and counts["at risk"] == 1
    assert html_counts(out["html"], "bl-status-counts") == {"fail": 0, "warn": 1, "pass": 0}
    # markdown (the job summary is the same text)
    assert "at risk (simulated)" in markdown_row(out["markdown"], "chat-under-load", "ttft")
    assert "Budgets: 0 failing, 1 with warnings, 0 passing" in out["markdown"]
    # JUnit and SARIF
    props = junit_props(out["junit"], "chat-under-load", "ttft")
    assert props["verdict"] == j["verdict"] and props["basis"] == "simulated"
    sarif = json.loads(out["sarif"])
    verdicts = {(r["ruleId"], r["properties"].get("verdict")) for r in sarif["runs"][0]["results"]
                if "properties" in r and r["properties"].get("verdict")}
    assert verdicts and all(v != "met" for _, v in verdicts if _ in ("BL307", "BL320"))
    assert not any(rule == "BL304" for rule, _ in verdicts)
    # one headroom in every format
    text = format_headroom(j["headroom"])
    assert text in markdown_row(out["markdown"], "chat-under-load", "ttft")
    assert props["headroom"] == text
    assert text in html_card_row(out["html"], "chat-under-load", "ttft")
    assert any(r["properties"].get("headroomText") == text for r in sarif["runs"][0]["results"]
               if r["ruleId"] == "BL307" and "TTFT" in r["message"]["text"])
    # and the gate: a warning under --fail-on warning
    assert code == 1


def test_linked_run_decides_with_its_own_headroom_in_every_format(tmp_path: Path) -> None:
    write(tmp_path, MEASURED, **{"run.json": json.dumps(vllm_run())})
    _, out = check_all(tmp_path, "--sarif-info")
    (b,) = json.loads(out["json"])["budgets"]
    j = b["judgement"]["ttft"]
    expected = 500 / 459 - 1  # promise / measured p95 - 1 = +8.93 %
    assert j["basis"] == "measured" and j["verdict"] == "met"
    assert j["value"] == pytest.approx(0.459) and j["headroom"] == pytest.approx(expected, rel=1e-9)
    assert j["considered"]["estimate"] < 0.1  # the flat estimate weighed, not deciding
    shown = format_headroom(expected)
    assert shown == "+8.9%"
    assert "headroom +8.9%" in out["text"] and "met by measurement: measured p95 TTFT 459 ms over 2000 requests" \
        in out["text"]
    assert shown in markdown_row(out["markdown"], "chat", "ttft")
    assert "met (measured)" in markdown_row(out["markdown"], "chat", "ttft")
    assert junit_props(out["junit"], "chat", "ttft")["headroom"] == shown
    assert shown in html_card_row(out["html"], "chat", "ttft")
    sarif = json.loads(out["sarif"])
    rooms = {r["properties"]["headroomText"] for r in sarif["runs"][0]["results"]
             if r.get("properties", {}).get("headroomText") and r["ruleId"] in ("BL304", "BL402")}
    assert rooms == {shown}
    # the prediction is more than a factor 3 off the run: said, with both numbers
    assert "BL321" in out["text"] and "459 ms" in out["text"]


def test_overpromised_example_counts_as_failing(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(REPO / "tests/examples/overpromised.yaml"), "--no-summary",
                                       "--format", "html", "-o", str(tmp_path / "r.html"),
                                       "--format", "markdown", "-o", str(tmp_path / "r.md"),
                                       "--format", "json", "-o", str(tmp_path / "r.json")])
    assert result.exit_code == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [b["status"] for b in doc["budgets"]] == ["fail"]
    page = (tmp_path / "r.html").read_text()
    assert html_counts(page, "bl-status-counts")["fail"] == 1
    assert "Budgets: 1 failing, 0 with warnings, 0 passing" in (tmp_path / "r.md").read_text()


def test_throughput_from_per_user_pace_times_concurrency(tmp_path: Path) -> None:
    budgets = MEASURED.replace("promise: {ttft: 500 ms}", "promise: {ttft: 500 ms, throughput: 180 token/s}") \
        .replace("    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n", "")
    write(tmp_path, budgets, **{"run.json": json.dumps(vllm_run(mean_tpot_ms=1000 / 24, median_tpot_ms=1000 / 24))})
    _, out = check_all(tmp_path)
    (b,) = json.loads(out["json"])["budgets"]
    j = b["judgement"]["throughput"]
    assert j["basis"] == "measured" and j["unit"] == "token/s"
    assert j["value"] == pytest.approx(8 * 24)  # 8 users x 24 token/s each
    assert j["headroom"] == pytest.approx(192 / 180 - 1)
    assert b["verdicts"]["throughput"] == "met"
    row = markdown_row(out["markdown"], "chat", "throughput")
    assert "192 token/s" in row and format_headroom(192 / 180 - 1) in row and "met (measured)" in row
    assert junit_props(out["junit"], "chat", "throughput")["verdict"] == "met"


def test_p99_without_traffic_says_it_was_judged_for_an_idle_system(tmp_path: Path) -> None:
    budgets = MEASURED.replace("p95", "p99").replace("    bench: [run.json]\n", "").replace(", concurrency: 8", "")
    write(tmp_path, budgets)
    _, out = check_all(tmp_path)
    (b,) = json.loads(out["json"])["budgets"]
    j = b["judgement"]["ttft"]
    assert j["basis"] == "estimate" and "idle system" in j["note"] and "p99" in j["note"]
    assert "idle system" in out["text"]


# --------------------------------------------------------------------------- knobs and silent skips

CLASSES = {
    "dense-1": "{model: llama-3.1-8b, hardware: h100-sxm}",
    "dense-tp": "{model: llama-3.1-70b, hardware: h100-sxm, devices: 4}",
    "moe-1": "{model: qwen3-30b-a3b, hardware: h100-sxm}",
    "moe-tp": "{model: mixtral-8x22b, hardware: h100-sxm, devices: 8}",
}


@pytest.mark.parametrize("klass", sorted(CLASSES))
def test_setting_the_assumed_bandwidth_changes_nothing(tmp_path: Path, klass: str) -> None:
    budgets = f"""\
version: 1
kind: budgets
budgets:
  - name: b
    owner: "@acme/serving"
    percentile: p95
    workload: {{prompt_tokens: 1500, output_tokens: 300, arrival_rate: 1 request/s}}
    promise: {{ttft: 300 ms, tpot: 30 ms}}
    deployment: {CLASSES[klass]}
"""
    write(tmp_path, budgets)

    def run(*args: str) -> str:
        r = CliRunner().invoke(main, ["check", str(tmp_path), "--no-codeowners", "--no-summary", "--format", "json",
                                      *args])
        return r.output

    before = run()
    assumed = json.loads(before)["budgets"][0]["analysis"]["efficiency_assumed"]
    assert assumed["class"] == klass
    after = run("--efficiency-bandwidth", repr(assumed["bandwidth"]))
    # a figure equal to the class's own is the class default: the same report, byte for byte (before
    # issue 23, dense-tp and moe-tp moved: any given bandwidth switched on a 10 % collective overhead)
    assert after == before


def test_collective_overhead_is_its_own_flag(tmp_path: Path) -> None:
    budgets = OVERLOADED.replace("{model: llama-3.1-8b, hardware: h100-sxm}",
                                 "{model: llama-3.1-70b, hardware: h100-sxm, devices: 4}")
    write(tmp_path, budgets)

    def tpot(*args: str) -> float:
        r = CliRunner().invoke(main, ["check", str(tmp_path), "--no-codeowners", "--no-summary", "--format", "json",
                                      "--no-simulate", *args])
        return json.loads(r.output)["budgets"][0]["analysis"]["realistic_tpot_s"]

    base = tpot()
    assert tpot("--collective-overhead", "0.2") > base


def test_mistyped_kind_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("version: 1\nkind: budget\nbudgets:\n  - name: x\n")
    r = CliRunner().invoke(main, ["check", str(tmp_path / "b.yaml"), "--no-summary", "--ignore", "BL014"])
    assert r.exit_code == 1
    assert "BL013 error" in r.output and "did you mean 'budgets'" in r.output


def test_no_sequence_at_the_usable_fraction_is_an_error(tmp_path: Path) -> None:
    # Llama 3.1 70B in 16-bit: 141 GB of weights over 2 devices = 70.5 GB each. An H100 SXM has 80 GB
    # (fits at 100 %), 72 GB usable at the default 90 %, less the runtime reserve: no sequence fits.
    budgets = MEASURED.replace("    bench: [run.json]\n", "").replace(
        "{model: llama-3.1-8b, hardware: h100-sxm}", "{model: llama-3.1-70b, hardware: h100-sxm, devices: 2}")
    write(tmp_path, budgets)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--no-codeowners", "--no-summary"])
    assert r.exit_code == 1
    line = next(x for x in r.output.splitlines() if "BL302" in x)
    assert "BL302 error" in line and "usable fraction 90%" in line and "--gpu-memory-utilization 0.9" in line


def test_closed_loop_does_not_contradict_itself(tmp_path: Path) -> None:
    # 128 users on one H100: the saturation run (every one of vLLM's 1024 slots busy) preempts on the
    # KV cache and completes fewer requests per second than the 128-user loop itself did; utilisation
    # was 1.24. A closed loop's completions are a sustained rate: utilisation <= 1, goodput <= throughput.
    budgets = OVERLOADED.replace("arrival_rate: 13 request/s", "concurrency: 128").replace(
        "ttft: 800 ms\n      tpot: 50 ms", "ttft: 2 s\n      e2e: 40 s")
    write(tmp_path, budgets)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--no-codeowners", "--no-summary", "--format", "json"])
    (b,) = json.loads(r.output)["budgets"]
    load = b["load"]
    assert 0 < load["utilisation"] <= 1.0
    assert load["goodput_request_per_s"] <= load["throughput_request_per_s"]
    assert load["goodput_request_per_s"] == pytest.approx(load["slo_attainment"] * load["throughput_request_per_s"])
    # the flat E2E beside the simulated one says what it is: at 128 users a steady batch whose
    # decode passes carry the others' prefill (it said "one request on an idle system ... no
    # prefill sharing the iteration" before, the opposite of what it computed)
    words = b["judgement"]["e2e"]["words"]
    assert b["judgement"]["e2e"]["basis"] == "simulated"
    assert "(a steady batch of 128 sequences: no queueing, no bursts" in words and "idle system" not in words, words


def test_pr_diff_compares_the_judged_headroom() -> None:
    """BL505 reads the judgement: a linked run whose measured p95 went 400 -> 480 ms against 500 ms is a
    headroom 500/400 - 1 = +25 % -> 500/480 - 1 = +4.2 %, though the flat estimate (and its +1000 %) did
    not move. Before issue 23 the diff compared only ``analysis.headroom_ttft``: no change."""
    from budgetlint.report import BudgetResult, Report
    from budgetlint.run.diff import compare

    def row(measured: float) -> BudgetResult:
        return BudgetResult(name="chat", file="b.yaml", line=4, owner="@a/b", percentile="p95",
                            promises={"ttft_s": 0.5}, analysis={"headroom_ttft": 10.0},
                            verdicts={"ttft": "met"},
                            judgement={"ttft": {"verdict": "met", "basis": "measured", "value": measured, "unit": "s",
                                                "headroom": 0.5 / measured - 1, "interval": None,
                                                "considered": {"estimate": 0.5 / 11}}})

    diff = compare(Report(budgets=[row(0.400)]), Report(budgets=[row(0.480)]), threshold=0.5)
    (entry,) = diff["changed"]
    (h,) = entry["headroom"]
    assert h["promise"] == "ttft"
    assert h["old"] == pytest.approx(0.25) and h["new"] == pytest.approx(0.5 / 0.48 - 1)
    assert h["regression"]  # (0.25 - 0.0417) / 0.25 = 83 % of it gone, over the 50 % threshold


#: the OVERLOADED budget at 11.6 request/s: utilisation about 11.6 / 11.7 = 0.99, inside the
#: uncalibrated capacity band 0.95 up to 1 / 0.98 = 1.02 (issue 25, docs/load.md)
#: (compute declared at the class's 50 % the rates were chosen at: bf16 on Hopper now defaults to its public
#: runs' 0.319, whose own band reaches 1 / 0.810, docs/calibration.md)
PINNED = ("deployment: {model: llama-3.1-8b, hardware: h100-sxm}",
          "deployment: {model: llama-3.1-8b, hardware: h100-sxm, efficiency: {compute: 0.5}}")
IN_BAND = OVERLOADED.replace("arrival_rate: 13 request/s", "arrival_rate: 11.6 request/s").replace(*PINNED)


def test_in_the_capacity_band_it_is_not_shown_in_every_format(tmp_path: Path) -> None:
    """Not met, not at risk: every output reads the judgement's not-shown, with no headroom from the
    transient percentile; BL330 is the warning that says it (no BL307, no BL304, no BL320)."""
    assert IN_BAND != OVERLOADED
    code, out = check_all(write(tmp_path, IN_BAND), "--fail-on", "warning", "--sarif-info")
    (b,) = json.loads(out["json"])["budgets"]
    assert 0.95 <= 11.6 / b["load"]["saturation_request_per_s"] < 1 / 0.98
    for name in ("ttft", "tpot"):
        j = b["judgement"][name]
        assert (j["verdict"], j["basis"], j["headroom"]) == ("not-shown", "simulated", None)
        assert b["verdicts"][name] == "not-shown" and b["load"]["verdicts"][name] == "not-shown"
        assert j["note"].startswith("capacity ")
        assert "not shown (simulated)" in markdown_row(out["markdown"], "chat-under-load", name)
        props = junit_props(out["junit"], "chat-under-load", name)
        assert props["verdict"] == "not-shown" and props["basis"] == "simulated"
    assert b["status"] == "warn"
    assert "is met" not in out["text"] and "BL330 warning" in out["text"]
    sarif = json.loads(out["sarif"])
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert "BL330" in rules and not rules & {"BL307", "BL304", "BL320"}
    assert html_counts(out["html"], "bl-verdict-counts")["met"] == 0
    assert code == 1


#: the same budget at 6 request/s, p99, promising only a TPOT of 21.5 ms (tests/cases/bl331): the
#: simulated p99 TPOT 21.1 ms holds, the top of its interval (23.1 ms) does not, but is under the
#: uncalibrated percentile band's edge 1.185 x 21.5 = 25.4775 ms (issue 25, docs/load.md; 1.108 before ttft25)
IN_PERCENTILE_BAND = (OVERLOADED.replace("arrival_rate: 13 request/s", "arrival_rate: 6 request/s")
                      .replace("percentile: p95", "percentile: p99")
                      .replace("      ttft: 800 ms\n      tpot: 50 ms\n", "      tpot: 21.5 ms\n").replace(*PINNED))


def test_in_the_percentile_band_it_is_not_shown_in_every_format(tmp_path: Path) -> None:
    """Not at risk: every output reads the judgement's not-shown, its note naming the band; BL331 is
    the warning that says it (no BL307, no BL303, no BL320, no BL330)."""
    assert "tpot: 21.5 ms" in IN_PERCENTILE_BAND and "arrival_rate: 6 request/s" in IN_PERCENTILE_BAND
    code, out = check_all(write(tmp_path, IN_PERCENTILE_BAND), "--fail-on", "warning", "--sarif-info")
    (b,) = json.loads(out["json"])["budgets"]
    assert b["load"]["utilisation"] < 0.95 and b["load"]["in_capacity_band"] is False
    top = b["load"]["interval"]["tpot_s.p99"]["high"]
    assert 0.0215 < top <= 0.0215 * 1.185
    j = b["judgement"]["tpot"]
    assert (j["verdict"], j["basis"]) == ("not-shown", "simulated")
    assert b["verdicts"]["tpot"] == "not-shown" and b["load"]["verdicts"]["tpot"] == "not-shown"
    assert b["load"]["in_percentile_band"] == ["tpot"]
    assert "inside the band from the promise up to 25.5 ms" in j["note"]
    assert "not shown (simulated)" in markdown_row(out["markdown"], "chat-under-load", "tpot")
    props = junit_props(out["junit"], "chat-under-load", "tpot")
    assert props["verdict"] == "not-shown" and props["basis"] == "simulated"
    assert "not shown" in html_card_row(out["html"], "chat-under-load", "tpot")
    assert b["status"] == "warn"
    assert "is met" not in out["text"] and "BL331 warning" in out["text"]
    assert "BL331" in out["github"]
    sarif = json.loads(out["sarif"])
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert "BL331" in rules and not rules & {"BL307", "BL303", "BL304", "BL320", "BL330"}
    assert html_counts(out["html"], "bl-verdict-counts")["met"] == 0
    assert code == 1
