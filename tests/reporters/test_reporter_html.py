"""The html format: well-formed SVG, and every number on a chart equal to the
JSON report's (the test renders both formats of one check and reads both)."""

from __future__ import annotations

import copy
import re

import pytest
from html_support import REPO, bars, cards, lines, markers, points, reports, rules, svgs

from budgetlint.reporters.html import MAX_CARDS, render_dict

SHIPPED = ("budgets",)
OVERPROMISED = ("tests/examples/overpromised.yaml",)


@pytest.fixture(scope="module", params=[SHIPPED, OVERPROMISED], ids=["shipped", "overpromised"])
def both(request) -> tuple[dict, str]:
    return reports(*request.param)


def test_every_chart_parses_as_xml_with_title_and_desc(both) -> None:
    data, page = both
    charts = svgs(page)
    assert len(charts) >= 1 + 3 * len(data["budgets"])  # headroom + roofline, a waterfall, memory each
    for svg in charts:
        assert svg.get("role") == "img"
        assert svg.find("{http://www.w3.org/2000/svg}title").text
        assert svg.find("{http://www.w3.org/2000/svg}desc").text
        labelled = svg.get("aria-labelledby").split()
        assert labelled == [f"{svg.get('id')}-t", f"{svg.get('id')}-d"]


def test_self_contained(both) -> None:
    _, page = both
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # nothing that a browser would fetch: no src/href to another place, no url(), no @import
    assert not re.search(r"""\b(?:src|href)\s*=\s*["'](?!#|data:)""", page)
    assert "url(" not in page and "@import" not in page


def test_roofline_points_are_the_json_reports(both) -> None:
    data, page = both
    by_name = cards(page)
    for b in data["budgets"]:
        bound, real = b["analysis"]["bound"], b["analysis"]["realistic"]
        svg = by_name[b["name"]]["roofline"]
        for kind in ("decode", "prefill"):
            x = bound[f"{kind}_intensity_flop_per_byte"]
            assert points(svg, f"{kind} at 100 %") == [(x, bound[f"{kind}_attainable_flop_per_s"])]
            assert points(svg, f"{kind}, realistic") == [(real[f"{kind}_intensity_flop_per_byte"],
                                                          real[f"{kind}_attainable_flop_per_s"])]
        roof = lines(svg)["roof at 100 %"]
        # the flat roof is the peak compute, and it starts at the ridge
        assert roof[-1][1] == roof[-2][1] == bound["compute_peak_flop_per_s"]
        assert roof[-2][0] == bound["ridge_intensity_flop_per_byte"]
        # the sloped part is the peak bandwidth: y = x * BW
        x0, y0 = roof[0]
        assert y0 == pytest.approx(x0 * bound["bandwidth_peak_bytes_per_s"], rel=1e-12)
        flat = lines(svg)["realistic roof"]
        assert flat[-1][1] == real["compute_effective_flop_per_s"]


def test_waterfalls_add_up_to_the_json_reports_latencies(both) -> None:
    data, page = both
    by_name = cards(page)
    seen = 0
    for b in data["budgets"]:
        a = b["analysis"]
        for promise in ("ttft", "tpot", "e2e"):
            key = f"{promise}_s"
            if key not in b["promises"]:
                assert promise not in by_name[b["name"]]
                continue
            seen += 1
            svg = by_name[b["name"]][promise]
            assert rules(svg)[next(n for n in rules(svg) if n.startswith("promise"))] == b["promises"][key]
            for row, which in (("bound (100 %)", "bound"), ("estimate", "realistic")):
                segs = bars(svg, row)
                assert segs[0][1] == 0.0
                for (_, _, end), (_, start, _) in zip(segs, segs[1:]):
                    assert start == end  # a waterfall: each stage starts where the last ended
                # the total is the JSON report's number for that promise
                assert segs[-1][2] == pytest.approx(a[which][key], rel=1e-12)
                assert segs[-1][2] == pytest.approx(a[f"{which}_{key}"], rel=1e-12)
                stages = {name: end - start for name, start, end in segs}
                if promise == "ttft":
                    assert stages["prefill"] == pytest.approx(a[which]["prefill_s"], rel=1e-12, abs=1e-15)
                    assert stages["queue"] == a[which]["queue_s"]
                if promise == "e2e":
                    # the N - 1 decode steps after the first token (prefill made it)
                    assert stages["decode"] == pytest.approx(a[which]["decode_after_first_s"], rel=1e-12)
    assert seen


def test_memory_and_headroom_charts_are_the_json_reports(both) -> None:
    data, page = both
    by_name = cards(page)
    headroom = next(s for s in svgs(page) if s.get("id") == "headroom")
    for b in data["budgets"]:
        a = b["analysis"]
        svg = by_name[b["name"]]["memory"]
        assert bars(svg, "required")[-1][2] == pytest.approx(a["realistic"]["memory_required_bytes_per_device"],
                                                            rel=1e-12)
        assert rules(svg)[next(n for n in rules(svg) if n.startswith("device"))] == \
            a["bound"]["memory_available_bytes_per_device"]
        smallest = min(v for k, v in a.items() if k.startswith("headroom_") and v is not None)
        (row,) = [e for e in headroom.iter() if e.get("class") == "bl-bar"
                  and e.get("data-row").startswith(f"{b['name']} (")]
        promise = row.get("data-row")[len(b["name"]) + 2:-1]
        assert a[f"headroom_{promise}"] == smallest
        assert (float(row.get("data-start")), float(row.get("data-end"))) == (0.0, smallest)


def test_summary_is_ordered_by_smallest_headroom_and_counts_verdicts(both) -> None:
    data, page = both
    table = page[page.index('<table class="sortable bl-budgets">'):]
    table = table[: table.index("</table>")]
    keys = [float(k) for k in re.findall(r'<td data-key="([^"]+)"', table)]  # "Infinity": no headroom, last
    assert keys == sorted(keys) and len(keys) == len(data["budgets"])
    counts = page[page.index('class="bl-verdict-counts"'):]
    counts = counts[: counts.index("</table>")]
    total = sum(int(n) for n in re.findall(r'<td class="num">(\d+)</td>', counts))
    assert total == len(data["budgets"])


def test_overpromised_card_says_at_risk_with_its_numbers() -> None:
    data, page = reports(*OVERPROMISED)
    (b,) = data["budgets"]
    assert b["verdicts"]["ttft"] == "at-risk"
    card = page[page.index('data-budget="research-assistant"'):]
    assert "at risk" in card
    # the promise table shows the judged headroom (issue 23), formatted in the one rule (two significant
    # figures, signed): between 10 % and 99.5 % that is the whole percent with its sign
    h = b["judgement"]["ttft"]["headroom"]
    assert 10 <= abs(h * 100) < 99.5
    assert f"{h * 100:+.0f}%" in card


# ------------------------------------------------------------------ a hand-made report with traffic

LOAD = {
    "arrival_rate_request_per_s": 6.0,
    "capacity_request_per_s": 4.1,
    "utilisation": 0.93,
    "replicas_needed": 2,
    "predicted": {
        "ttft_s": {"p50": 0.31, "p90": 0.74, "p95": 1.9, "p99": 3.2},
        "tpot_s": {"p50": 0.021, "p90": 0.026, "p95": 0.029, "p99": 0.041},
        "e2e_s": {"p50": 17.0, "p90": 21.0, "p95": 24.5, "p99": 30.0},
        "queue_s": {"p50": 0.05, "p90": 0.4, "p95": 1.2, "p99": 2.5},
    },
    "curve": [
        {"request_per_s": 2.0, "ttft_s": 0.45, "tpot_s": 0.022},
        {"request_per_s": 4.0, "ttft_s": 0.78, "tpot_s": 0.024},
        {"request_per_s": 6.0, "ttft_s": 1.9, "tpot_s": 0.029},
    ],
}


def _with_load() -> dict:
    data, _ = reports(*OVERPROMISED)
    data = copy.deepcopy(data)
    b = data["budgets"][0]
    b["load"] = copy.deepcopy(LOAD)
    b["analysis"]["measured_ttft_s"] = 0.62
    b["analysis"]["measured_percentile"] = "p95"
    return data


def test_load_cdf_plots_the_predicted_percentiles_and_marks_promise_and_percentile() -> None:
    data = _with_load()
    page = render_dict(data)
    charts = cards(page)["research-assistant"]
    promises = data["budgets"][0]["promises"]
    for name in ("ttft", "tpot", "e2e", "queue"):
        svg = charts[f"cdf-{name}"]
        dist = LOAD["predicted"][f"{name}_s"]
        expected = [(dist["p50"], 0.5), (dist["p90"], 0.9), (dist["p95"], 0.95), (dist["p99"], 0.99)]
        assert points(svg, "predicted percentiles") == expected
        assert lines(svg)["predicted"] == expected
        marks = rules(svg)
        assert marks["declared p95"] == 0.95
        if f"{name}_s" in promises:
            assert marks[next(k for k in marks if k.startswith("promise"))] == promises[f"{name}_s"]
    assert points(charts["cdf-ttft"], "measured p95") == [(0.62, 0.95)]


def test_capacity_curve_marks_declared_rate_and_capacity() -> None:
    page = render_dict(_with_load())
    charts = cards(page)["research-assistant"]
    svg = charts["capacity-ttft"]
    assert lines(svg)["ttft at p95"] == [(2.0, 0.45), (4.0, 0.78), (6.0, 1.9)]
    marks = rules(svg)
    assert marks["declared"] == 6.0 and marks["capacity"] == 4.1
    assert marks[next(k for k in marks if k.startswith("promise"))] == 0.5
    assert "capacity-e2e" not in charts  # the curve has no e2e numbers: nothing is made up
    assert "utilisation" in page and "93%" in page


def test_capacity_without_a_curve_is_two_bars() -> None:
    data = _with_load()
    del data["budgets"][0]["load"]["curve"]
    charts = cards(render_dict(data))["research-assistant"]
    svg = charts["capacity"]
    assert bars(svg, "capacity") == [("capacity", 0.0, 4.1)]
    assert bars(svg, "declared rate") == [("declared rate", 0.0, 6.0)]


def test_no_load_no_load_charts() -> None:
    _, page = reports(*OVERPROMISED)
    assert "cdf-" not in page and "capacity" not in page.split('<section id="budgets">')[1]


# ------------------------------------------------------------------ what is missing is said, not drawn

def test_skipped_analysis_says_why_and_draws_nothing() -> None:
    data = copy.deepcopy(_with_load())
    b = data["budgets"][0]
    b["analysis"] = {"skipped": "model 'x' lacks layers"}
    del b["load"]
    page = render_dict(data)
    assert "model &#x27;x&#x27; lacks layers" in page or "model 'x' lacks layers" in page
    assert cards(page)["research-assistant"] == {}


def test_hardware_without_compute_peak_gets_no_roofline() -> None:
    data = _with_load()
    data["budgets"][0]["analysis"]["bound"]["compute_peak_flop_per_s"] = 1e30
    page = render_dict(data)
    assert "roofline" not in cards(page)["research-assistant"]
    assert "lists no compute peak" in page


def test_hostile_names_are_escaped_and_svg_still_parses() -> None:
    data = _with_load()
    data["budgets"][0]["name"] = 'x"><script>alert(1)</script>&'
    data["budgets"][0]["owner"] = "<b>@team</b>"
    page = render_dict(data)
    assert "<script>alert(1)" not in page and "<b>@team" not in page
    assert svgs(page)
    assert page.count("<script>") == 1  # ours, at the end


def test_non_finite_numbers_render_as_absent() -> None:
    data = _with_load()
    data["budgets"][0]["analysis"]["headroom_ttft"] = None  # inf in the report: null in JSON
    data["budgets"][0]["load"]["predicted"]["ttft_s"]["p99"] = None
    page = render_dict(data)
    svg = cards(page)["research-assistant"]["cdf-ttft"]
    assert [y for _, y in points(svg, "predicted percentiles")] == [0.5, 0.9, 0.95]
    body = re.sub(r"<[^>]*>", " ", page[page.index("<body>"): page.index("<script>")])  # the text shown
    assert not re.search(r"\b(?:nan|inf|infinity|none)\b", body, re.I)


def test_many_budgets_get_cards_up_to_the_limit() -> None:
    data = _with_load()
    one = data["budgets"][0]
    del one["load"]
    data["budgets"] = []
    for i in range(MAX_CARDS + 5):
        b = copy.deepcopy(one)
        b["name"] = f"b{i}"
        b["analysis"]["headroom_ttft"] = -1.0 + i / 1000
        data["budgets"].append(b)
    page = render_dict(data)
    assert len(cards(page)) == MAX_CARDS
    assert "5 more budgets" in page
    assert page.count("<tr><td><a href=") + page.count("<tr><td>b") >= MAX_CARDS + 5


def test_cli_writes_the_file(tmp_path) -> None:
    from click.testing import CliRunner

    from budgetlint.cli import main

    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["check", str(REPO / "budgets"), "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert len(cards(text)) == 4  # the four shipped budgets


def test_findings_are_listed_up_to_the_limit_with_a_note() -> None:
    from reporter_fixtures import many_findings_report

    from budgetlint.reporters import get_reporter
    from budgetlint.reporters.html import MAX_FINDINGS

    page = get_reporter("html")(many_findings_report(MAX_FINDINGS, 7, MAX_FINDINGS + 3))
    section = page[page.index('<section id="findings">'):page.index('<section id="budgets">')]
    listed = section[:section.index("<details>")]
    assert listed.count("<tr><td>error</td>") == MAX_FINDINGS
    assert listed.count("<tr><td>warning</td>") == 0  # errors first; the 7 warnings did not fit
    assert "7 more errors and warnings are not listed here" in section
    assert f"{MAX_FINDINGS + 3} informational findings (the first {MAX_FINDINGS})" in section


def test_measured_values_are_marked_on_the_waterfall(tmp_path) -> None:
    """A benchmark held against the budget: its p95 is the diamond on the waterfall, as in the JSON."""
    import json
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from evidence.helpers import budget_yaml, check, metric, native, write_budgets

    from budgetlint.reporters import get_reporter

    write_budgets(tmp_path, budget_yaml(promise="ttft: 400 ms", bench=["runs/*.json"],
                                        deployment="model: llama-3.1-8b, hardware: h100-sxm"))
    native(tmp_path / "runs/chat.json", metrics={"ttft": metric("first_token", p50=120, p95=310)})
    report = check(tmp_path)
    data = json.loads(get_reporter("json")(report))
    measured = data["budgets"][0]["analysis"]["measured_ttft_s"]
    assert measured == pytest.approx(0.310)
    svg = cards(get_reporter("html")(report))["chat"]["ttft"]
    assert markers(svg, "measured p95") == [("measured p95", measured)]


def _unbalanced(page: str) -> list[str]:
    """Tags closed out of order or left open (HTML void elements aside)."""
    from html.parser import HTMLParser

    void = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "source", "wbr"}
    problems: list[str] = []
    stack: list[str] = []

    class Checker(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in void:
                stack.append(tag)

        def handle_startendtag(self, tag, attrs):
            pass  # <line .../> inside SVG

        def handle_endtag(self, tag):
            if not stack or stack[-1] != tag:
                problems.append(f"</{tag}> closes {stack[-1] if stack else 'nothing'}")
                if tag in stack:
                    while stack and stack.pop() != tag:
                        pass
            else:
                stack.pop()

    Checker(convert_charrefs=True).feed(page)
    return problems + [f"<{t}> never closed" for t in stack]


def test_markup_is_balanced(both) -> None:
    _, page = both
    assert _unbalanced(page) == []
    assert _unbalanced(render_dict(_with_load())) == []
    assert _unbalanced("<div><p>x</div>") != []  # the checker can fail


def test_declared_rate_under_either_name() -> None:
    data = _with_load()
    load = data["budgets"][0]["load"]
    load["arrival_rate_per_s"] = load.pop("arrival_rate_request_per_s")
    marks = rules(cards(render_dict(data))["research-assistant"]["capacity-ttft"])
    assert marks["declared"] == 6.0
