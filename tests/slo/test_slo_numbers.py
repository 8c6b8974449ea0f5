"""The SLO arithmetic, each expected number worked by hand here.

* histogram_quantile: Prometheus's linear interpolation inside the bucket
  (promql/quantile.go): rank q x n in the first bucket whose cumulative count
  reaches it.
* The bucket rule: vLLM's TTFT edges (vllm/v1/metrics/loggers.py) around
  400 ms are 0.25 s and 0.5 s, so the worst-case error is 250 ms; 500 ms is an
  edge. SGLang's TTFT edges (collector.py defaults) around 150 ms are 0.1 s and 0.2 s.
* The burn-rate windows: SRE workbook, table 6 (2 %/1 h, 5 %/6 h, 10 %/1 d,
  10 %/3 d of a 30-day budget: 14.4, 6, 3, 1).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from budgetlint.stats import histogram as hist

INF = math.inf
# 5,000 TTFTs: 3,000 <= 0.25 s, 4,850 <= 0.5 s, 4,950 <= 0.75 s, all <= 1 s
H = ((0.25, 3000.0), (0.5, 4850.0), (0.75, 4950.0), (1.0, 5000.0), (INF, 5000.0))


def test_histogram_quantile_by_hand() -> None:
    # p95: rank 4750 lies in (0.25, 0.5] which holds 1,850: 0.25 + 0.25 x (4750 - 3000) / 1850
    assert hist.quantile(H, 0.95) == pytest.approx(0.25 + 0.25 * 1750 / 1850)
    # p50: rank 2500 in the first bucket, which starts at 0: 0.25 x 2500 / 3000
    assert hist.quantile(H, 0.5) == pytest.approx(0.25 * 2500 / 3000)
    assert hist.quantile_band(H, 0.95) == (0.25, 0.5)
    # a rank in the +Inf bucket returns the highest finite edge
    assert hist.quantile(((0.5, 10.0), (INF, 20.0)), 0.9) == 0.5
    assert math.isnan(hist.quantile(((INF, 0.0),), 0.5))


def test_share_at_an_edge_is_exact_and_between_edges_is_bounded() -> None:
    at = hist.share_at_most(H, 0.5)
    assert at.exact and at.at_most_low == at.at_most_high == 4850
    mid = hist.share_at_most(H, 0.4)
    assert not mid.exact and (mid.at_most_low, mid.at_most_high) == (3000, 4850)
    # linear inside (0.25, 0.5]: 3000 + 1850 x 0.15 / 0.25
    assert mid.interpolated == pytest.approx(3000 + 1850 * 0.6)


def _budget(tmp_path: Path, body: str):
    from budgetlint.run.check import Options, evaluate_run

    p = tmp_path / "b.yaml"
    p.write_text("version: 1\nkind: budgets\nbudgets:\n" + body)
    result = evaluate_run([str(p)], Options(use_codeowners=False, simulate=False), keep=True)
    return result.evaluations[0]


BASE = """  - name: b
    owner: "@acme/chat"
    percentile: p95
    workload: {{prompt_tokens: 1000, output_tokens: 100}}
    promise: {{ttft: {ttft}}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm, engine: {engine}}}
"""


@pytest.mark.parametrize("engine,ttft,lower,upper,error", [
    ("vllm", "400 ms", 0.25, 0.5, 0.25),
    ("vllm", "300 ms", 0.25, 0.5, 0.25),
    ("vllm", "150 ms", 0.1, 0.25, 0.15),
    ("sglang", "150 ms", 0.1, 0.2, 0.1),
])
def test_threshold_between_edges(tmp_path: Path, engine: str, ttft: str, lower: float, upper: float,
                                  error: float) -> None:
    ev = _budget(tmp_path, BASE.format(ttft=ttft, engine=engine))
    ind = ev.slo.plan.indicators[0]
    assert (ind.lower_edge, ind.upper_edge, ind.at_edge) == (lower, upper, False)
    assert ind.error_s == pytest.approx(error)
    assert ind.exported_s == lower  # the stricter edge


def test_500_ms_is_an_edge_no_warning(tmp_path: Path) -> None:
    ev = _budget(tmp_path, BASE.format(ttft="500 ms", engine="vllm"))
    ind = ev.slo.plan.indicators[0]
    assert ind.at_edge and ind.exported_s == 0.5 and ind.error_s is None


def test_sglang_below_its_first_ttft_edge(tmp_path: Path) -> None:
    ev = _budget(tmp_path, BASE.format(ttft="80 ms", engine="sglang"))
    ind = ev.slo.plan.indicators[0]
    assert ind.lower_edge is None and ind.upper_edge == 0.1 and ind.exported_s == 0.1
    assert ind.metric.flag == "--bucket-time-to-first-token"


def test_declared_buckets_replace_the_defaults(tmp_path: Path) -> None:
    body = BASE.format(ttft="150 ms", engine="sglang") + "    slo: {buckets: {ttft: [0.05, 0.15, 0.3]}}\n"
    ind = _budget(tmp_path, body).slo.plan.indicators[0]
    assert ind.at_edge and ind.edges == (0.05, 0.15, 0.3)


def test_alert_windows_follow_the_workbook_and_scale_with_the_window() -> None:
    from budgetlint.evaluate.slo import alerts_for, duration_text

    month = alerts_for(30 * 86400)
    assert [(a.severity, duration_text(a.long_s), duration_text(a.short_s)) for a in month] == [
        ("page", "1h", "5m"), ("page", "6h", "30m"), ("ticket", "1d", "2h"), ("ticket", "3d", "6h")]
    assert [a.burn_rate for a in month] == pytest.approx([14.4, 6.0, 3.0, 1.0])
    # 28 days: every window x 28/30; 2 % of 28 d in 56 min is still 14.4x
    four = alerts_for(28 * 86400)
    assert duration_text(four[0].long_s) == "56m" and four[0].burn_rate == pytest.approx(14.4)


def test_low_traffic_numbers(tmp_path: Path) -> None:
    body = BASE.format(ttft="500 ms", engine="vllm").replace(
        "output_tokens: 100}", "output_tokens: 100, arrival_rate: 0.5 request/s}").replace("p95", "p99")
    ev = _budget(tmp_path, body)
    short = {t.alert.short_s: t.requests for t in ev.slo.traffic}
    # 0.5 request/s x 5 min = 150 and x 30 min = 900, both under p99's 1,867; 2 h holds 3,600
    assert short == {300.0: 150.0, 1800.0: 900.0}
    assert ev.slo.traffic[0].needed == 1867


def test_scrape_reader_sums_label_sets_and_reads_escaped_names(tmp_path: Path) -> None:
    from budgetlint.bench.problems import Ctx
    from budgetlint.bench.detect import read_text

    text = "\n".join([
        "# TYPE vllm_time_to_first_token_seconds histogram",
        'vllm_time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="m"} 40',
        'vllm_time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 50',
        'vllm_time_to_first_token_seconds_bucket{engine="1",le="0.5",model_name="m"} 50',
        'vllm_time_to_first_token_seconds_bucket{engine="1",le="+Inf",model_name="m"} 50',
        'some_other_metric{a="b\\"c"} 1 1700000000000',
    ]) + "\n"
    ctx = Ctx("x")
    [m] = read_text(text, tmp_path / "x", ctx, None)
    assert m.format == "prometheus" and ctx.problems == []
    ttft = m.metrics["ttft"]
    assert ttft.histogram == ((0.5, 90.0), (INF, 100.0)) and ttft.count == 100
    assert m.conditions.model == "m" and m.provenance.engine == "vllm"


def test_attainment_from_production_is_bounded() -> None:
    from budgetlint.evaluate.production import ProductionReading, attainment_from_production
    from budgetlint.evaluate.slo import Indicator
    from budgetlint.findings import Location

    class B:
        class promise:
            slo_attainment = 0.95

    loc = Location("b", 1, 1)
    inds = tuple(Indicator(k, k, 0.5, 0.95, None, loc, k, None) for k in ("ttft", "tpot"))

    def r(key: str, share: float) -> ProductionReading:
        return ProductionReading(key, "f", "v", loc, "m", 1000, share, share, share, True, 0.1, (0, 0.5),
                                 (0, 0), "met")

    # 98 % and 99 %: every promise at once is between 1 - 0.02 - 0.01 = 97 % and 98 %: met
    [a] = attainment_from_production(B, (r("ttft", 0.98), r("tpot", 0.99)), inds)
    assert (a.share, a.share_high, a.verdict) == (pytest.approx(0.97), 0.98, "met")
    # 97 % and 96 %: between 93 % and 96 %: cannot tell
    [a] = attainment_from_production(B, (r("ttft", 0.97), r("tpot", 0.96)), inds)
    assert a.verdict == "straddles"
    # 94 %: missed whatever the other
    [a] = attainment_from_production(B, (r("ttft", 0.94), r("tpot", 0.99)), inds)
    assert a.verdict == "missed"


def test_exported_objective_is_the_attainment_promise(tmp_path: Path) -> None:
    body = """  - name: att
    owner: "@acme/chat"
    percentile: p99
    workload: {prompt_tokens: 1000, output_tokens: 100}
    promise: {ttft: 500 ms, tpot: 50 ms, slo_attainment: 95 %}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, engine: vllm}
"""
    ev = _budget(tmp_path, body)
    assert ev.slo.plan.objective == pytest.approx(0.95) and ev.slo.plan.objective_from == "slo_attainment"
    from budgetlint.slo import render
    import yaml

    pyrra = [d for d in yaml.safe_load_all(render([ev.slo.plan], "pyrra")) if d]
    assert {d["spec"]["target"] for d in pyrra} == {"95"}
