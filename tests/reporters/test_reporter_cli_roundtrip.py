"""Every format through the real CLI on the repository's own budgets/, in one
run (``--format X --output PATH`` pairs), each output checked for validity.
Contents are the CLI's business; here only the reporters' contracts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if not (REPO / "budgets").is_dir() or not any((REPO / "budgets").glob("*.y*ml")):
        pytest.skip("no budgets/ in the checkout")
    out = tmp_path_factory.mktemp("formats")
    formats = ["json", "sarif", "junit", "markdown", "text"]
    args = [sys.executable, "-m", "budgetlint", "check", str(REPO / "budgets"), "--no-summary",
            "--format", "github", "--output", "-"]
    for fmt in formats:
        args += ["--format", fmt, "--output", str(out / fmt)]
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert proc.returncode in (0, 1), proc.stderr
    result = {fmt: (out / fmt).read_text(encoding="utf-8") for fmt in formats}
    result["github"] = proc.stdout
    return result


def test_json_validates(outputs: dict[str, str]) -> None:
    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(json.loads(outputs["json"]))


def test_sarif_validates(outputs: dict[str, str]) -> None:
    path = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"  # the official schema, vendored (tests/data/README.md)
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(json.loads(outputs["sarif"]))


def test_github_lines_are_commands_or_the_summary(outputs: dict[str, str]) -> None:
    lines = outputs["github"].splitlines()
    assert lines and lines[-1].startswith("budgetlint: ")
    assert all(re.match(r"^::(error|warning|notice)( [^:]*)?::", line) for line in lines[:-1])


def test_junit_and_markdown_and_text(outputs: dict[str, str]) -> None:
    root = ET.fromstring(outputs["junit"].split("\n", 1)[1])
    assert root.tag == "testsuites" and int(root.get("tests", "0")) > 0
    assert outputs["markdown"].startswith("## ") and "| Budget | Promise |" in outputs["markdown"]
    assert re.search(r"(Found|No problems found) .* in \d+ files? \(\d+ budgets?\)\.$", outputs["text"].strip())
