"""The schema files as other tools read them (issue 27): offline, with units by pattern, bundled.

check-jsonschema is the real consumer (the ``test`` extra installs it): it must
validate budgets/ with no flag and no network (the files' old ``$id`` sent
their relative ``$ref``s to a domain that serves nothing), and must reject a
quantity with no unit or a unit of another dimension, while budgetlint itself
keeps its own BL005/BL006 findings for them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tool_skips import tool_missing

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
HERE = Path(__file__).resolve().parent
NO_UNIT = HERE / "ttft_without_unit.yaml"  # budgets/chat.yaml with ttft: 300
WRONG_UNIT = HERE / "e2e_in_bytes.yaml"  # budgets/chat.yaml with e2e: "3.35 TB"
BUDGET_FILES = sorted((REPO / "budgets").glob("*.yaml"))


def _check_jsonschema(schemafile: Path, *files: Path) -> subprocess.CompletedProcess:
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        tool_missing("check-jsonschema is not installed (pip install -e '.[test]')")
    # no --base-uri, no cache: as a user runs it; a network fetch would fail here (the old $id)
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--no-cache", "--schemafile", str(schemafile),
                           *map(str, files)], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY":
                               "http://127.0.0.1:9", "NO_COLOR": "1"})


def test_check_jsonschema_validates_budgets_with_no_flags() -> None:
    assert BUDGET_FILES and any("kind: teams" in p.read_text() for p in BUDGET_FILES)  # two kinds, one schema
    proc = _check_jsonschema(SCHEMAS / "budgets.schema.json", *BUDGET_FILES)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("bad", "where", "what"), [
    (NO_UNIT, "$.budgets[0].promise.ttft", "300 is not of type 'string'"),
    (WRONG_UNIT, "$.budgets[0].promise.e2e", "'3.35 TB' does not match"),
])
def test_check_jsonschema_rejects_a_missing_or_wrong_unit(bad: Path, where: str, what: str) -> None:
    proc = _check_jsonschema(SCHEMAS / "budgets.schema.json", bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert where in proc.stdout and what in proc.stdout, proc.stdout


def test_budgetlint_keeps_its_own_unit_findings(tmp_path: Path) -> None:
    """The pattern makes other tools fail; budgetlint still says BL006/BL005 in its words, and no BL003."""
    from budgetlint.cli import main

    from click.testing import CliRunner

    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["check", str(NO_UNIT), str(WRONG_UNIT), "-f", "json", "-o", str(out),
                                       "--no-summary"])
    assert result.exit_code == 1, result.output
    findings = [f for f in json.loads(out.read_text())["findings"] if f["severity"] == "error"]
    assert sorted((f["rule"], f["message"]) for f in findings) == [
        ("BL005", "promise.e2e: expected a time such as \"250 ms\", \"0.4 s\"; found '3.35 TB', which is "
                  "information (an amount of memory)"),
        ("BL006", "promise.ttft: expected a time such as \"250 ms\", \"0.4 s\"; found the bare number 300 with no "
                  "unit"),
    ]


def test_a_bad_teams_file_fails_through_the_dispatch(tmp_path: Path) -> None:
    bad = tmp_path / "teams.yaml"
    bad.write_text("version: 1\nkind: teams\nteams:\n  - handle: not a handle\n")
    proc = _check_jsonschema(SCHEMAS / "budgets.schema.json", bad)
    assert proc.returncode == 1 and "$.teams[0].handle" in proc.stdout, proc.stdout


def test_the_bundle_is_one_file_that_checks_the_same(tmp_path: Path) -> None:
    from budgetlint.cli import main

    from click.testing import CliRunner

    target = tmp_path / "budgetlint.json"
    result = CliRunner().invoke(main, ["schema", "--bundle", "--id", "https://json.schemastore.org/budgetlint.json",
                                       "-o", str(target)])
    assert result.exit_code == 0, result.output
    bundle = json.loads(target.read_text())
    assert bundle["$id"] == "https://json.schemastore.org/budgetlint.json"
    refs = re.findall(r'"\$ref": "([^"]*)"', target.read_text())
    assert refs and all(r.startswith("#") for r in refs)  # nothing outside the one file
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(bundle)
    only = tmp_path / "alone"
    only.mkdir()
    (only / "budgetlint.json").write_text(target.read_text())  # no sibling files beside it
    assert _check_jsonschema(only / "budgetlint.json", *BUDGET_FILES).returncode == 0
    for bad in (NO_UNIT, WRONG_UNIT):
        assert _check_jsonschema(only / "budgetlint.json", bad).returncode == 1


def test_schema_prints_a_kinds_file() -> None:
    from budgetlint.cli import main

    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["schema", "teams"])
    assert result.exit_code == 0
    assert result.output == (SCHEMAS / "teams.schema.json").read_text()
    assert CliRunner().invoke(main, ["schema", "teams", "--bundle"]).exit_code == 2


def test_no_schema_file_names_a_remote_base() -> None:
    """An $id would make the relative $refs point at a URL (what check-jsonschema then fetched)."""
    for name in ("budgets", "teams", "hardware", "models", "calibration"):
        assert "$id" not in json.loads((SCHEMAS / f"{name}.schema.json").read_text()), name


def _catalog_names(kind: str) -> list[str]:
    data = yaml.safe_load((REPO / "budgetlint" / "model" / "catalog" / f"{kind}.yaml").read_text())
    return [entry["name"] for entry in data[kind]]


def test_catalog_names_are_the_examples_of_model_and_hardware() -> None:
    deployment = json.loads((SCHEMAS / "budgets.schema.json").read_text())["$defs"]["budget"]["properties"][
        "deployment"]["properties"]
    for key, kind in (("model", "models"), ("hardware", "hardware")):
        string_branch = next(b for b in deployment[key]["oneOf"] if b.get("type") == "string")
        assert string_branch["examples"] == _catalog_names(kind), f"regenerate the examples of deployment.{key}"


def test_the_patterns_in_the_schemas_are_the_generated_ones() -> None:
    from budgetlint.model.quantity_patterns import definition

    for file, names in (("budgets", ["time", "time_per_token", "pace", "request_rate", "throughput",
                                     "information", "tokens", "price_rate", "cost_per_token", "power"]),
                        ("hardware", ["information", "bandwidth", "compute_rate", "price_rate", "power"])):
        defs = json.loads((SCHEMAS / f"{file}.schema.json").read_text())["$defs"]
        for name in names:
            assert defs[name] == definition(name), f"{file}.schema.json $defs/{name}"


# the written forms: prefix x unit, alone and per another unit; 1e9 keeps "n"/"µ" amounts of
# memory above the one-bit floor the parser also holds (a magnitude no pattern can see)
_PREFIXES = ["", "n", "u", "µ", "m", "k", "K", "M", "G", "T", "Ki", "Gi", "milli", "kilo", "giga"]
_UNITS = ["s", "sec", "seconds", "min", "h", "hours", "B", "bytes", "bit", "FLOP", "flops", "OP", "token",
          "tokens", "tok", "request", "req", "requests", "FLOPS", "x", "Hz", "m2", "USD", "usd", "J", "W", "watts"]


@pytest.mark.parametrize("kind", ["time", "information", "bandwidth", "compute_rate", "pace", "time_per_token",
                                  "tokens", "request_rate", "price_rate", "cost_per_token", "power"])
def test_pattern_and_parser_agree(kind: str) -> None:
    """Each kind's pattern accepts exactly what budgetlint's parser reads as that kind, on every form here."""
    from budgetlint.model.quantity_patterns import pattern
    from budgetlint.model.units import UnitError, parse_quantity

    forms = [p + u for p in _PREFIXES for u in _UNITS]
    forms += [f"{a} / {b}" if i % 2 else f"{a}/{b}" for i, (a, b) in enumerate(
        (a, b) for a in forms for b in ("s", "ms", "min", "hour", "token", "request"))]
    regex = re.compile(pattern(kind))
    disagree = []
    for i, form in enumerate(forms):
        for text in ((f"1e9 {form}", f"0.4{form}", f"2.5 {form}")[i % 3],):
            try:
                parse_quantity(text, kind)
                parsed = True
            except UnitError:
                parsed = False
            if parsed != bool(regex.match(text)) and not (kind == "information" and not parsed):
                disagree.append((text, parsed))
    assert not disagree, disagree[:20]
    # and the bare number, the unit of another dimension, a negative value
    for text in ("300", "-5 ms", "3.35 TB" if kind != "information" else "3.35 s"):
        assert not regex.match(text), text


def test_the_jsonschema_hook(tmp_path: Path) -> None:
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        tool_missing("check-jsonschema is not installed (pip install -e '.[test]')")
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "budgetlint-jsonschema")
    assert hook["entry"] == "python -m budgetlint.files.jsonschema_hook"
    assert any(d.startswith("check-jsonschema") for d in hook["additional_dependencies"])
    run = [sys.executable, "-m", "budgetlint.files.jsonschema_hook"]
    good = subprocess.run(run + [str(p) for p in BUDGET_FILES], capture_output=True, text=True, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run(run + [str(NO_UNIT)], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 1 and "promise.ttft" in bad.stdout, bad.stdout + bad.stderr


def test_every_quantity_key_has_its_dimension() -> None:
    """A key that takes a string or a number, other than those that are not quantities, refers to a
    quantity definition (a new quantity key without one would pass ttft: 300 in other tools)."""
    not_quantities = {"percentile", "engine_version", "parameters", "active_parameters", "prefix_cache_hit",
                      "slo_attainment"}  # a share of requests ("95 %" or 0.95), as prefix_cache_hit is
    loose = []

    def walk(node, path):
        if isinstance(node, dict):
            t = node.get("type")
            if isinstance(t, list) and "string" in t and "number" in t and path[-1] not in not_quantities:
                loose.append("/".join(path))
            for k, v in node.items():
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + [str(i)])

    for name in ("budgets", "hardware", "models"):
        walk(json.loads((SCHEMAS / f"{name}.schema.json").read_text()), [name])
    assert not loose, f"give these a $ref to a $defs quantity entry (model/quantity_patterns.py): {loose}"
