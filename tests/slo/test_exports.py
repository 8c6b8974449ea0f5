"""`budgetlint slo`: every format validates against its project's published schema or tool.

* Prometheus: `promtool check rules` on the rules of budgets/, and `promtool
  test rules` showing each burn-rate alert firing at the error rate it is
  written for and not below it.
* Sloth, Pyrra, OpenSLO: the vendored schemas in tests/slo/vendor/ (sources
  and licences in its README).

The expected burn rates are the SRE workbook's (Alerting on SLOs, table 6):
2 % of a 30-day budget in 1 h = 14.4, 5 % in 6 h = 6, 10 % in 1 d = 3,
10 % in 3 d = 1; written here, not read from the code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tool_skips import tool_missing

ROOT = Path(__file__).resolve().parents[2]
VENDOR = Path(__file__).parent / "vendor"

# (alert name, burn rate, long window, short window) for the 30-day window: SRE workbook, table 6
WORKBOOK = [("SLOBurnRatePage1h", 14.4, "1h", "5m"), ("SLOBurnRatePage6h", 6.0, "6h", "30m"),
            ("SLOBurnRateTicket1d", 3.0, "1d", "2h"), ("SLOBurnRateTicket3d", 1.0, "3d", "6h")]
# the same table for a 7-day window: every window x 7/30 (whole minutes), the burn rates unchanged
# (2 % of 7 d in 14 min is still 14.4x); promtool evaluates it 20 times faster than the 30-day one
WEEK = [("SLOBurnRatePage14m", 14.4, "14m", "1m"), ("SLOBurnRatePage84m", 6.0, "84m", "7m"),
        ("SLOBurnRateTicket336m", 3.0, "336m", "28m"), ("SLOBurnRateTicket1008m", 1.0, "1008m", "84m")]


def _slo(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "budgetlint", "slo", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        tool_missing("promtool not installed (Debian package prometheus: tests/slo/setup_prometheus.sh)")
    return found  # type: ignore[return-value]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("slo")
    files = {}
    for fmt in ("prometheus", "sloth", "pyrra", "openslo"):
        path = out / f"{fmt}.yaml"
        r = _slo("budgets/", "--format", fmt, "-o", str(path))
        assert r.returncode == 0, r.stderr
        files[fmt] = path
    return files


def test_chat_budget_bucket_warning_names_the_edges(exports: dict[str, Path]) -> None:
    r = _slo("budgets/chat.yaml", "--format", "prometheus")
    ttft = [line for line in r.stderr.splitlines() if "BL601" in line and "ttft" in line]
    assert len(ttft) == 1 and "0.25 s and 0.5 s" in ttft[0] and "250 ms" in ttft[0]
    assert 'le="0.25"' in r.stdout  # the stricter edge is exported


def test_promtool_accepts_every_rule_file(exports: dict[str, Path]) -> None:
    r = subprocess.run([_promtool(), "check", "rules", str(exports["prometheus"])], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


def test_prometheus_rules_carry_owners_and_segment_owners(exports: dict[str, Path]) -> None:
    doc = yaml.safe_load(exports["prometheus"].read_text())
    groups = {g["name"]: g for g in doc["groups"]}
    ttft = groups["budgetlint-chat-reply-ttft"]["rules"][0]
    assert ttft["labels"]["owner"] == "@acme/chat"
    decode_queue = groups["budgetlint-chat-reply-segment-queue"]["rules"][0]
    assert decode_queue["labels"]["owner"] == "@acme/serving" and decode_queue["labels"]["budget_owner"] == "@acme/chat"
    assert "vllm:request_queue_time_seconds_bucket" in decode_queue["expr"]
    tpot = groups["budgetlint-chat-reply-tpot"]["rules"][0]
    assert "vllm:request_time_per_output_token_seconds" in tpot["expr"]  # per request, not the per-gap ITL
    alerts = [r for r in groups["budgetlint-chat-reply-ttft"]["rules"] if "alert" in r]
    assert [a["alert"] for a in alerts] == [name for name, *_ in WORKBOOK]
    # p95: the allowed error ratio is 5 %; each alert fires above burn x 5 % in both windows
    for a, (_, burn, long_w, short_w) in zip(alerts, WORKBOOK):
        assert f"rate{long_w}" in a["expr"] and f"rate{short_w}" in a["expr"]
        assert f"> {burn * 0.05:g}" in a["expr"]


def _burn_test(tmp: Path, error_ratio: float, objective: float, annotations: dict | None = None) -> dict:
    """A promtool unit test: the engine's TTFT histogram at a constant error ratio for 3 days."""
    per_min = 1000
    good = round(per_min * (1 - error_ratio))
    series = [
        {"series": 'vllm:time_to_first_token_seconds_count{model_name="m"}', "values": f"0+{per_min}x1100"},
        {"series": 'vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.5"}', "values": f"0+{good}x1100"},
    ]
    allowed = 1 - objective
    firing = [name for name, burn, *_ in WEEK if error_ratio > burn * allowed]
    tests = [{"eval_time": "1050m", "alertname": name,
              "exp_alerts": ([{"exp_labels": {"alertname": name, "budget": "burn", "slo": "burn-ttft", "promise": "ttft",
                                              "owner": "@acme/chat", "severity": sev, "long_window": lw,
                                              "short_window": sw},
                                "exp_annotations": (annotations or {}).get(name, {})}] if name in firing else [])}
             for name, _, lw, sw in WEEK for sev in [("page" if "Page" in name else "ticket")]]
    return {"rule_files": [str(tmp / "rules.yaml")], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": tests}]}


def test_each_burn_rate_alert_fires_at_its_rate_and_not_below(tmp_path: Path) -> None:
    promtool = _promtool()
    budget = tmp_path / "burn.yaml"
    budget.write_text("""version: 1
kind: budgets
budgets:
  - name: burn
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 100}
    promise: {ttft: 500 ms}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, engine: vllm}
    slo: {selectors: {model_name: m}, window: 7d}
""")
    r = _slo(str(budget), "--format", "prometheus", "-o", str(tmp_path / "rules.yaml"))
    assert r.returncode == 0, r.stderr
    objective = 0.95
    rules = yaml.safe_load((tmp_path / "rules.yaml").read_text())
    annotations = {r["alert"]: r["annotations"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    unit = {"rule_files": [str(tmp_path / "rules.yaml")], "evaluation_interval": "1m", "tests": []}
    for _, burn, *_ in WEEK:
        for factor in (1.1, 0.9):  # just above the alert's error rate: fires; just below: does not
            ratio = min(0.999, burn * (1 - objective) * factor)
            unit["tests"] += _burn_test(tmp_path, ratio, objective, annotations)["tests"]
    (tmp_path / "unit.yaml").write_text(yaml.safe_dump(unit, sort_keys=False))
    out = subprocess.run([promtool, "test", "rules", str(tmp_path / "unit.yaml")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS" in out.stdout
    # the expectations are not vacuous: 14.4 x 5 % x 1.1 fires all four, 1 x 5 % x 0.9 fires none
    top = _burn_test(tmp_path, 14.4 * 0.05 * 1.1, objective)["tests"][0]["alert_rule_test"]
    assert all(t["exp_alerts"] for t in top)
    bottom = _burn_test(tmp_path, 0.05 * 0.9, objective)["tests"][0]["alert_rule_test"]
    assert not any(t["exp_alerts"] for t in bottom)


def _validator(schema: dict, registry=None):
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=registry) if registry is not None else cls(schema)


def test_sloth_specs_validate(exports: dict[str, Path]) -> None:
    schema = json.loads((VENDOR / "sloth-prometheus-v1.schema.json").read_text())
    docs = [d for d in yaml.safe_load_all(exports["sloth"].read_text()) if d]
    assert len(docs) == 4
    v = _validator(schema)
    for d in docs:
        assert list(v.iter_errors(d)) == []
    chat = next(d for d in docs if d["service"] == "chat-reply")
    ttft = next(s for s in chat["slos"] if s["name"] == "ttft")
    assert ttft["objective"] == 95 and "{{.window}}" in ttft["sli"]["events"]["error_query"]
    # a wrong document fails: the schema can fail
    assert list(v.iter_errors({**chat, "slos": [{**ttft, "objective": 0}]}))


def test_pyrra_objects_validate(exports: dict[str, Path]) -> None:
    crd = json.loads((VENDOR / "pyrra.dev_servicelevelobjectives.json").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    docs = [d for d in yaml.safe_load_all(exports["pyrra"].read_text()) if d]
    assert docs and all(d["kind"] == "ServiceLevelObjective" and d["apiVersion"] == "pyrra.dev/v1alpha1" for d in docs)
    v = _validator(schema)
    for d in docs:
        assert list(v.iter_errors(d)) == []
    chat = next(d for d in docs if d["metadata"]["name"] == "chat-reply-ttft")
    assert chat["spec"]["target"] == "95" and chat["spec"]["window"] == "30d"
    assert chat["spec"]["indicator"]["latency"]["success"]["metric"] == 'vllm:time_to_first_token_seconds_bucket{le="0.25"}'
    assert chat["metadata"]["annotations"]["budgetlint.dev/owner"] == "@acme/chat"
    assert list(v.iter_errors({**chat, "spec": {"target": "95"}}))


def test_openslo_documents_validate(exports: dict[str, Path]) -> None:
    from referencing import Registry, Resource

    resources = []
    for path in sorted((VENDOR / "openslo-v1" / "parts").glob("*.json")):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    registry = Registry().with_resources(resources)
    combined = {"$schema": "http://json-schema.org/draft-07/schema", "allOf": [
        {"$ref": "https://openslo.com/schemas/v1/parts/general.schema.json"},
        {"$ref": "https://openslo.com/schemas/v1/parts/slo-spec.schema.json"}]}
    v = _validator(combined, registry)
    docs = [d for d in yaml.safe_load_all(exports["openslo"].read_text()) if d]
    assert docs
    for d in docs:
        assert list(v.iter_errors(d)) == [], d["metadata"]["name"]
    chat = next(d for d in docs if d["metadata"]["name"] == "chat-reply-ttft")
    assert chat["spec"]["objectives"][0]["target"] == 0.95
    assert chat["spec"]["timeWindow"] == [{"duration": "30d", "isRolling": True}]
    bad = json.loads(json.dumps(chat))
    bad["spec"]["objectives"][0]["target"] = 95
    assert list(v.iter_errors(bad))


def test_an_objective_of_many_nines_is_exported_as_written(tmp_path: Path) -> None:
    """p99.9999999 is an objective of 99.9999999 % (an error budget of 10^-9 of the requests). Rounded to six
    decimals it was exported as 100 % in Sloth, Pyrra and OpenSLO until stop 47: an SLO with no error budget.
    Each export keeps it, and each still validates against its tool's schema."""
    (tmp_path / "b.yaml").write_text(
        "version: 1\nkind: budgets\nbudgets:\n  - name: nines\n    owner: '@acme/x'\n    percentile: p99.9999999\n"
        "    promise: {ttft: 500 ms}\n    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n")
    got = {}
    for fmt in ("sloth", "pyrra", "openslo"):
        r = _slo(str(tmp_path / "b.yaml"), "--format", fmt, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        got[fmt] = [d for d in yaml.safe_load_all(r.stdout) if d]
    assert got["sloth"][0]["slos"][0]["objective"] == 99.9999999
    assert got["pyrra"][0]["spec"]["target"] == "99.9999999"
    slo = next(d for d in got["openslo"] if d.get("kind") == "SLO")
    assert slo["spec"]["objectives"][0]["target"] == 0.999999999
    assert list(_validator(json.loads((VENDOR / "sloth-prometheus-v1.schema.json").read_text())).iter_errors(
        got["sloth"][0])) == []
    crd = json.loads((VENDOR / "pyrra.dev_servicelevelobjectives.json").read_text())
    assert list(_validator(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]).iter_errors(got["pyrra"][0])) == []
