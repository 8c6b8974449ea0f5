"""docs/format.md is generated from the schemas and is current (issue 27: "there is no
single reference of the budget file format; the keys are spread over five docs")."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORMAT = REPO / "docs" / "format.md"


def test_format_md_is_what_the_schemas_give() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "docs" / "format_reference.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + "\nregenerate: python docs/format_reference.py"


def _property_names(node: object, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out |= set(value)
            _property_names(value, out)
    elif isinstance(node, list):
        for value in node:
            _property_names(value, out)
    return out


def test_every_key_of_every_kind_is_in_the_reference() -> None:
    """Independently of the generator: every property name any document schema
    declares is the last part of some path in docs/format.md."""
    text = FORMAT.read_text(encoding="utf-8")
    paths = re.findall(r"^\| `([^`]+)` \|", text, re.M)
    last = {re.split(r"[.\[\]]+", p.rstrip("[]"))[-1] for p in paths}
    for name in ("budgets", "hardware", "models", "teams", "calibration", "benchmark", "config"):
        schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
        missing = _property_names(schema, set()) - last
        assert not missing, f"{name}.schema.json keys missing from docs/format.md: {sorted(missing)}"


def test_the_reference_reads_the_schema_facts() -> None:
    text = FORMAT.read_text(encoding="utf-8")
    rows = {m[0]: m for m in re.findall(r"^\| `([^`]+)` \| (.*?) \| (yes|) \| (.*) \|$", text, re.M)}
    # the budget's name: required, a string, with the schema's description (schemas/budgets.schema.json)
    assert rows["budgets[].name"][1:3] == ("string", "yes")
    assert "Stable, unique name" in rows["budgets[].name"][3]
    assert rows["budgets[].workload.measured_at"][1] == '`"server"` \\| `"client"`'
    assert "## kind: hardware" in text and "## configuration" in text
