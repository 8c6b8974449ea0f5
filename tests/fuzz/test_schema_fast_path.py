"""The schema fast path never vouches for a document jsonschema rejects.

``files/schema.py`` lets a compiled check (fastjsonschema's code, generated
into ``files/_schema_compiled.py``) vouch for valid documents and sends
everything else to jsonschema, whose errors are the report's. The one way this could go wrong is the fast path accepting what
jsonschema rejects: these tests hold that it does not, on schema-shaped
documents pushed to the extremes (the fuzz profile's examples), on the
differences we know between the two libraries, and on every shipped and
case file.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, strategies as st

from budgetlint.files import schema as schema_mod
from budgetlint.files.loader import load_file

from fuzz_support import REPO_ROOT, extreme_scalar, from_our_schema, fuzz_settings, inlined_schema

KINDS = tuple(schema_mod.KIND_SCHEMAS)


def _agree(kind: str, data: Any) -> None:
    fast = schema_mod.fast_validator(kind)
    assert fast is not None
    # a quantity's type and pattern errors are the unit parser's (BL005/BL006/BL007), not findings of the
    # schema: the fast path leaves them out as validate() does (files/schema.py, _left_to_the_parser)
    errors = [leaf for top in schema_mod.validator(kind).iter_errors(data) for leaf in schema_mod._leaf_errors(top)
              if not schema_mod._left_to_the_parser(leaf)]
    if fast(data):
        assert not errors, f"the fast path vouched for a document jsonschema rejects: {errors[0].message}"


@fuzz_settings(suppress_health_check=list(HealthCheck))
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_schema_shaped_documents(data: st.DataObject, kind: str) -> None:
    doc = data.draw(from_our_schema(inlined_schema(f"{kind}.schema.json")))
    _agree(kind, doc)


def _valid_budget() -> dict:
    return {"version": 1, "kind": "budgets", "budgets": [{
        "name": "chat", "owner": "@acme/chat", "percentile": "p95",
        "workload": {"prompt_tokens": 1000, "output_tokens": 200},
        "promise": {"ttft": "400 ms", "tpot": "50 ms"},
        "deployment": {"model": "llama-3.1-70b", "hardware": "h100-sxm", "devices": 2},
        "suppress": [{"rule": "BL303", "reason": "tuned", "expires": "2026-12-31"}],
    }]}


def _paths(node: Any, here: tuple = ()) -> list[tuple]:
    out = [here]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, here + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, here + (i,))
    return out


@fuzz_settings(suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_one_hostile_value_anywhere_in_a_valid_budget(data: st.DataObject) -> None:
    doc = _valid_budget()
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    value = data.draw(st.one_of(extreme_scalar(), st.sampled_from(
        [True, False, 1, 1.0, 0, None, [], {}, "BL303\n", "p95\n", "2026-02-30", "2026-13-01", "20261231",
         "@acme/chat\n", "\x1c", "", " "])))
    mutated = copy.deepcopy(doc)
    node = mutated
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    _agree("budgets", mutated)


@pytest.mark.parametrize("version", [True, 1.0, "1", 2])
def test_booleans_are_not_numbers_for_const(version: Any) -> None:
    doc = _valid_budget()
    doc["version"] = version
    _agree("budgets", doc)
    if version is True:  # True == 1 in Python; not in JSON Schema
        assert not schema_mod.fast_validator("budgets")(doc)


def test_every_shipped_and_case_file() -> None:
    files = sorted((REPO_ROOT / "budgets").rglob("*.y*ml")) + sorted((REPO_ROOT / "tests" / "cases").rglob("*.y*ml"))
    vouched = 0
    for path in files:
        for doc in load_file(path, str(path)).documents:
            kind = doc.data.get("kind") if isinstance(doc.data, dict) else None
            if kind in KINDS:
                _agree(kind, doc.data)
                vouched += bool(schema_mod.fast_validator(kind)(doc.data))
    assert vouched >= 5  # the valid ones are vouched for: the fast path is in use


def test_findings_are_jsonschemas_whichever_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the fast path or without it, the same findings."""
    from budgetlint.reporters import get_reporter
    from budgetlint.run.check import Options, run_check

    monkeypatch.chdir(REPO_ROOT)
    fast = get_reporter("json")(run_check(["budgets/", "tests/cases/"], Options(use_codeowners=False)))
    monkeypatch.setattr(schema_mod, "fast_validator", lambda kind: None)
    slow = get_reporter("json")(run_check(["budgets/", "tests/cases/"], Options(use_codeowners=False)))
    assert fast == slow
    assert '"rule": "BL003"' in fast and '"rule": "BL004"' in fast


def test_the_compiled_module_is_current() -> None:
    """Edit a schema and this fails until `python -m budgetlint.files.schema` regenerates the checks
    (meanwhile the fast path is off: a stale check never vouches)."""
    from budgetlint.files import _schema_compiled

    assert _schema_compiled.SCHEMAS_DIGEST == schema_mod.schemas_digest()
    assert _schema_compiled.SOURCES_CHECKSUM == schema_mod.sources_checksum()
    assert set(_schema_compiled.VALIDATORS) == set(KINDS)


def test_a_stale_compiled_module_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.files import _schema_compiled

    monkeypatch.setattr(_schema_compiled, "SOURCES_CHECKSUM", "crc32:00000000")
    schema_mod.fast_validator.cache_clear()
    try:
        assert schema_mod.fast_validator("budgets") is None
    finally:
        monkeypatch.undo()
        schema_mod.fast_validator.cache_clear()
    assert schema_mod.fast_validator("budgets") is not None


@pytest.mark.parametrize("filename", sorted(set(schema_mod.KIND_SCHEMAS.values())))
def test_editing_any_schema_file_turns_the_fast_path_off(filename: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The start-up check reads the schema files themselves (not the digest, which costs ~10 ms):
    one changed byte in any of them and no kind is vouched for until the checks are regenerated;
    a checkout's CRLF line ends are not a change."""
    for name in schema_mod.KIND_SCHEMAS.values():
        (tmp_path / name).write_bytes((schema_mod.schema_dir() / name).read_bytes())

    def fresh() -> list:
        schema_mod._checksum.cache_clear()
        schema_mod.fast_validator.cache_clear()
        return [schema_mod.fast_validator(kind) for kind in schema_mod.KIND_SCHEMAS]

    monkeypatch.setattr(schema_mod, "schema_dir", lambda: tmp_path)
    try:
        assert all(v is not None for v in fresh())  # the copy is current
        original = (tmp_path / filename).read_bytes()
        (tmp_path / filename).write_bytes(original.replace(b"\n", b"\r\n"))
        assert all(v is not None for v in fresh())
        (tmp_path / filename).write_bytes(original.replace(b'"type"', b'"type" ', 1))
        assert all(v is None for v in fresh())
    finally:
        monkeypatch.undo()
        fresh()


@fuzz_settings(suppress_health_check=list(HealthCheck))
@given(text=st.one_of(st.text(max_size=14), st.dates().map(str), st.sampled_from(
    ["2026-02-29", "2024-02-29", "2026-13-01", "2026-00-10", "20261231", "2026-W48-1", "２０２６-01-01",
     "2026-1-01", "2026-12-31\n", " 2026-12-31"])))
def test_date_format_is_jsonschemas(text: str) -> None:
    checker = schema_mod.validator("budgets").FORMAT_CHECKER
    assert schema_mod.is_date(text) == checker.conforms(text, "date")


def test_checking_valid_files_does_not_import_jsonschema() -> None:
    import subprocess
    import sys

    code = ("import sys; from budgetlint.run.check import run_check, Options; "
            "run_check(['budgets/'], Options(use_codeowners=False)); print('jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert out.stdout.strip() == "False"
