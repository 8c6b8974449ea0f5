from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest

from budgetlint.report import BudgetResult, Report
from budgetlint.reporters.json_report import render

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "report.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    assert cls is jsonschema.Draft202012Validator
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_output_is_the_contract_and_validates(report: Report, validator: jsonschema.protocols.Validator) -> None:
    out = render(report)
    assert out.endswith("}\n")
    data = json.loads(out)
    assert data == report.as_dict()
    validator.validate(data)
    assert list(data)[:5] == ["version", "tool", "summary", "findings", "budgets"]
    summary = {k: v for k, v in data["summary"].items() if k != "suppressed"}
    assert summary == {"files": 5, "budgets": 2, "errors": 3, "warnings": 2, "infos": 1}
    assert [f.get("fix") for f in data["findings"] if "fix" in f] == ["use 2 devices, or fp8 weights"]


def test_empty_report_validates(validator: jsonschema.protocols.Validator) -> None:
    validator.validate(json.loads(render(Report())))


def test_schema_is_strict(report: Report, validator: jsonschema.protocols.Validator) -> None:
    data = json.loads(render(report))
    data["findings"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)
    data = json.loads(render(report))
    data["budgets"][0]["verdicts"]["ttft"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)
    data = json.loads(render(report))
    data["suppressed"] = [dict(data["findings"][0], reason="")]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)
    data["suppressed"] = [dict(data["findings"][0], reason="known", expires=None, suppressed_at="a.yaml:3:5")]
    validator.validate(data)
    data["suppressed"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)
    data = json.loads(render(report))
    del data["summary"]["infos"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)


def test_non_finite_numbers_become_null(validator: jsonschema.protocols.Validator) -> None:
    b = BudgetResult("b", "f.yaml", 1, None, None, {"ttft_s": 0.4}, {"headroom_ttft": math.inf, "x": [math.nan]}, {})
    data = json.loads(render(Report(files=["f.yaml"], budgets=[b])))
    assert data["budgets"][0]["analysis"] == {"headroom_ttft": None, "x": [None]}
    validator.validate(data)
