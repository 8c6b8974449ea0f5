from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import Report
from budgetlint.reporters import sarif
from budgetlint.rules import all_rules

from reporter_fixtures import canned_report, many_findings_report


SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture()
def sarif_validator() -> jsonschema.protocols.Validator:
    # the official SARIF 2.1.0 schema, vendored (tests/data/README.md): validated in every checkout
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _log(report: Report, **kw: bool) -> dict:
    return json.loads(sarif.render(report, **kw))


def test_valid_against_the_official_schema(report: Report, sarif_validator: jsonschema.protocols.Validator) -> None:
    sarif_validator.validate(_log(report))
    sarif_validator.validate(_log(Report()))


def test_driver_and_rules(report: Report) -> None:
    run = _log(report)["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "budgetlint"
    assert driver["version"] and driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert ids == [r.code for r in all_rules()]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"].startswith(f"# {rule['id']} ")
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    bl003 = driver["rules"][ids.index("BL003")]
    assert "## Fix" in bl003["help"]["markdown"] and "```" not in bl003["help"]["text"]


def test_results_point_at_repo_relative_files(report: Report) -> None:
    run = _log(report, include_info=True)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == 5  # every located finding (information too, as asked)
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        assert result["message"]["text"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not loc["artifactLocation"]["uri"].startswith(("/", "./"))
        assert loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["BL013"]["level"] == "note"
    assert by_rule["BL002"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "dir%20with%20space/x.yaml"
    bl301 = by_rule["BL301"]
    assert bl301["locations"][0]["physicalLocation"]["region"] == {"startLine": 14, "startColumn": 7}
    assert bl301["message"]["text"].endswith("Fix: use 2 devices, or fp8 weights")
    # the one headroom (analysis headroom_tpot = -0.22) travels with the result, as every format prints it
    assert bl301["properties"] == {"budget": "chat-reply", "promise": "tpot", "headroom": -0.22,
                                   "headroomText": "-22%"}


def test_unlocated_findings_become_notifications(report: Report) -> None:
    run = _log(report)["runs"][0]
    assert all(r["ruleId"] != "BL010" for r in run["results"])
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["descriptor"]["id"] for n in notes] == ["BL010"]
    assert notes[0]["level"] == "error"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("budgets/a.yaml", {"uri": "budgets/a.yaml", "uriBaseId": "%SRCROOT%"}),
        ("./budgets/a.yaml", {"uri": "budgets/a.yaml", "uriBaseId": "%SRCROOT%"}),
        ("budgets\\win\\a.yaml", {"uri": "budgets/win/a.yaml", "uriBaseId": "%SRCROOT%"}),
        ("/abs/a b.yaml", {"uri": "file:///abs/a%20b.yaml"}),
        ("C:\\x\\a.yaml", {"uri": "file:///C:/x/a.yaml"}),
    ],
)
def test_artifact_location(path: str, expected: dict) -> None:
    assert sarif.artifact_location(path) == expected


def test_fingerprints_survive_changed_numbers_but_not_other_changes() -> None:
    f = Finding("BL301", Severity.ERROR, "tpot 50 ms needs 61.2 ms at 100% of peak", Location("b.yaml", 3, 4), "chat", "tpot")
    same = dataclasses.replace(f, message="tpot 45 ms needs 70.25 ms at 100% of peak", location=Location("b.yaml", 9, 1))
    assert sarif.fingerprint(f) == sarif.fingerprint(same)
    for changed in (
        dataclasses.replace(f, rule="BL302"),
        dataclasses.replace(f, budget="other"),
        dataclasses.replace(f, promise="ttft"),
        dataclasses.replace(f, location=Location("c.yaml", 3, 4)),
        dataclasses.replace(f, message="ttft 50 ms needs 61.2 ms at 100% of peak"),
    ):
        assert sarif.fingerprint(changed) != sarif.fingerprint(f)


def test_fingerprints_are_stable_and_unique_within_a_run() -> None:
    a = _log(canned_report())["runs"][0]["results"]
    b = _log(canned_report())["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in a] == [r["partialFingerprints"] for r in b]
    twins = Report(findings=[Finding("BL003", Severity.ERROR, "same", Location("a.yaml", i, 1)) for i in (1, 2)])
    fps = [r["partialFingerprints"][sarif.FINGERPRINT_KEY] for r in _log(twins)["runs"][0]["results"]]
    assert len(set(fps)) == 2


def test_result_limit_keeps_the_worst(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sarif, "MAX_RESULTS", 10)
    run = _log(many_findings_report(errors=4, warnings=8, infos=5), include_info=True)["runs"][0]
    levels = [r["level"] for r in run["results"]]
    assert len(levels) == 10
    assert levels.count("error") == 4 and levels.count("warning") == 6 and "note" not in levels
    assert run["properties"]["omittedResults"] == 7
    assert "7 more results" in run["invocations"][0]["toolExecutionNotifications"][-1]["message"]["text"]


def test_default_limit_is_githubs() -> None:
    assert sarif.MAX_RESULTS == 25_000


def test_unknown_rule_codes_still_get_a_descriptor(sarif_validator: jsonschema.protocols.Validator) -> None:
    report = Report(findings=[Finding("BL999", Severity.WARNING, "new", Location("a.yaml", 1, 1))])
    log = _log(report)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    result = log["runs"][0]["results"][0]
    assert rules[result["ruleIndex"]]["id"] == "BL999"
    sarif_validator.validate(log)


def test_suppressed_findings_are_results_marked_suppressed(sarif_validator: jsonschema.protocols.Validator) -> None:
    from types import SimpleNamespace

    report = canned_report()
    hidden = Finding("BL301", Severity.ERROR, "ttft 1 ms cannot be met", Location("budgets/chat.yaml", 20, 3), "chat-reply", "ttft")
    report.suppressed = [SimpleNamespace(finding=hidden, reason="accepted until the H200s arrive", expires="2027-01-31")]  # type: ignore[attr-defined]
    log = _log(report)
    sarif_validator.validate(log)
    (result,) = [r for r in log["runs"][0]["results"] if "suppressions" in r]
    assert result["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "accepted until the H200s arrive", "properties": {"expires": "2027-01-31"}}
    ]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 20


# --- issue 15, point 5: a met promise is not a code-scanning alert -----------------------------------


def test_information_stays_out_of_code_scanning_by_default(report: Report,
                                                           sarif_validator: jsonschema.protocols.Validator) -> None:
    infos = [f for f in report.findings if f.severity == Severity.INFO]
    assert infos  # the canned report has some
    log = _log(report)
    run = log["runs"][0]
    assert "note" not in {r["level"] for r in run["results"]}
    assert "note" not in {n["level"] for n in run["invocations"][0]["toolExecutionNotifications"]}
    assert run["properties"]["informationLeftOut"] == len(infos)
    sarif_validator.validate(log)
    with_notes = _log(report, include_info=True)["runs"][0]
    assert {r["level"] for r in with_notes["results"]} >= {"note"}
    assert with_notes["properties"]["informationLeftOut"] == 0
