"""Every output of one report spells each number the same way.

One budget is checked in every output format and explained; each number the
JSON report holds (the bound and realistic TTFT, TPOT and E2E, the headroom
of each promise, the memory needed) is then looked for in every output: each
text within rounding of it (three significant figures: 0.5 %) must be the
same text. Before budgetlint/text/numbers.py, 0.1234 s was "123 ms" in a
finding and "123.4 ms" in the PR diff, and a -21.9 % headroom was "-22%" in
the text report and "-21.9%" in the HTML one.
"""

from __future__ import annotations

import html
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from budgetlint.reporters import REPORTERS

ROOT = Path(__file__).resolve().parents[2]
BUDGET = ROOT / "tests/examples/overpromised.yaml"

#: SI factor of each unit label the outputs use
SCALE = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "ms/token": 1e-3, "s/token": 1.0,
         "B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
TOKEN = re.compile(r"(?<![\w.,])([-+]?\d[\d,]*(?:\.\d+)?)\s?(µs|ms/token|s/token|ms|s|kB|MB|GB|TB|B)(?![\w/])")
HEADROOM = re.compile(r"(?<![\w.])([-+]\d+(?:\.\d+)?)\s?%")
MERMAID = re.compile(r"```mermaid.*?```", re.S)


def _run(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "budgetlint", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def outputs() -> tuple[dict, dict[str, str]]:
    texts = {fmt: _run("check", str(BUDGET), "--format", fmt) for fmt in REPORTERS}
    texts["explain"] = _run("explain", str(BUDGET))
    # charts' data (a mermaid series, an SVG coordinate) is data, not text to read
    texts = {k: MERMAID.sub("", html.unescape(v)) for k, v in texts.items()}
    report = json.loads(texts["json"])
    return report, texts


def _spellings(texts: dict[str, str], value: float, pattern: re.Pattern, scale: dict | None) -> dict[str, set]:
    found: dict[str, set] = {}
    for fmt, text in texts.items():
        for m in pattern.finditer(text):
            number = float(m.group(1).replace(",", ""))
            si = number * (scale[m.group(2)] if scale else 0.01)
            if value and _rounds_to(si, value, 3):
                found.setdefault(m.group(0).replace(" ", ""), set()).add(fmt)
    return found


def _rounds_to(shown: float, value: float, figures: int) -> bool:
    """Whether ``shown`` is ``value`` rounded to ``figures`` significant figures or more."""
    half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(value))) - (figures - 1))
    return abs(shown - value) <= half_unit * (1 + 1e-9)


def _values(report: dict, suffix: str) -> list[tuple[str, float]]:
    (b,) = report["budgets"]
    return [(k, v) for k, v in b["analysis"].items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k.endswith(suffix) and v]


def test_each_time_and_size_is_spelled_once(outputs) -> None:
    report, texts = outputs
    values = _values(report, "_s") + _values(report, "_bytes_per_device")
    assert len(values) >= 6
    clashes = {}
    for key, value in values:
        found = _spellings(texts, value, TOKEN, SCALE)
        if len(found) > 1:
            clashes[key] = found
    assert clashes == {}


def test_each_headroom_is_spelled_once(outputs) -> None:
    report, texts = outputs
    values = [(k, v * 100) for k, v in _values(report, "") if k.startswith("headroom_")]
    assert values
    clashes = {}
    for key, value in values:
        found = {}
        for fmt, text in texts.items():
            for m in HEADROOM.finditer(text):
                # two significant figures (and never the other sign)
                if float(m.group(1)) * value > 0 and _rounds_to(float(m.group(1)), value, 2):
                    found.setdefault(m.group(0).replace(" ", ""), set()).add(fmt)
        if len(found) > 1:
            clashes[key] = found
    assert clashes == {}


def test_a_tpot_reads_as_a_time(outputs) -> None:
    """TPOT is a time per output token, written as a time ("38.8 ms") in every output."""
    _, texts = outputs
    # (the JSON report's data names units, "unit": "s/token"; its messages are in the others too)
    assert {fmt for fmt, text in texts.items() if fmt != "json" and ("ms/token" in text or " s/token" in text)} == set()


def test_the_check_finds_a_clash() -> None:
    """The test of the test: two spellings of one number are caught."""
    texts = {"text": "ttft 123 ms", "diff": "ttft 123.4 ms"}
    assert len(_spellings(texts, 0.1234, TOKEN, SCALE)) == 2


#: the cost and energy figures (docs/cost.md): SI per unit label; USD/Mtok is USD per 1e6 tokens
COST_SCALE = {"USD/Mtok": 1e-6, "USD/hour": 1 / 3600, "USD": 1.0, "J/token": 1.0}
COST_TOKEN = re.compile(r"(?<![\w.,])([-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)\s?(USD/Mtok|USD/hour|J/token|USD)(?![\w/])")
#: a priced deployment with a cost promise, under a declared traffic. By hand (its comments): 1.39 USD/Mtok,
#: 0.000347 USD per request, 1.4 J/token at 2 request/s x 250 tokens on one H100 at 2.50 USD/hour
COST_BUDGET = ROOT / "tests/cases/bl362_cost_shown.yaml"


@pytest.fixture(scope="module")
def cost_outputs() -> tuple[dict, dict[str, str]]:
    texts = {fmt: _run("check", str(COST_BUDGET), "--no-codeowners", "--format", fmt) for fmt in REPORTERS}
    texts["explain"] = _run("explain", str(COST_BUDGET))
    texts = {k: MERMAID.sub("", html.unescape(v)) for k, v in texts.items()}
    return json.loads(texts["json"]), texts


def test_each_cost_figure_is_spelled_once_and_shown_in_every_output(cost_outputs) -> None:
    """USD/Mtok, USD per request and J/token at the judged operating point: one spelling across every
    format and explain, and present in each human output (text, markdown, HTML, explain)."""
    report, texts = cost_outputs
    (b,) = report["budgets"]
    c = b["analysis"]["cost"]
    values = {"usd_per_token": c["usd_per_token"], "usd_per_request": c["usd_per_request"],
              "joules_per_token": c["joules_per_token"], "judged": b["judgement"]["cost"]["value"]}
    # (the price is not among them: the input's own "2.50 USD/hour" is quoted, and explain converts it to
    # "0.000694 USD per second" on purpose, the arithmetic's next line)
    # the hand figures of the case file, so that the test cannot pass on a report that computes nothing
    assert values["usd_per_token"] == pytest.approx(2.5 / 3600 / 500)
    assert values["joules_per_token"] == pytest.approx(700 / 500)
    clashes, missing = {}, {}
    for key, value in values.items():
        found = _spellings(texts, value, COST_TOKEN, COST_SCALE)
        if len(found) > 1:
            clashes[key] = found
        shown = set().union(*found.values()) if found else set()
        if {"text", "markdown", "html", "explain"} - shown:
            missing[key] = {"text", "markdown", "html", "explain"} - shown
    assert clashes == {} and missing == {}
    # the verdict too: every human output says the cost promise is met
    assert "cost 2 USD/Mtok is met" in texts["text"]
    assert "| cost 2 USD/Mtok |" in texts["markdown"] and "met (simulated)" in texts["markdown"]
    assert "cost   met on the simulated 1.39 USD/Mtok" in texts["explain"]


def test_the_cost_check_finds_a_clash() -> None:
    texts = {"text": "1.39 USD/Mtok", "html": "1.389 USD/Mtok"}
    assert len(_spellings(texts, 2.5 / 3600 / 500, COST_TOKEN, COST_SCALE)) == 2
