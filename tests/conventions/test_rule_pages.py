"""A documentation page per rule (docs/rules/BLNNN.md), SARIF's helpUri to it, catalog show in units."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from budgetlint.cli import main

REPO = Path(__file__).resolve().parents[2]
PAGES = REPO / "docs" / "rules"


def test_every_rule_has_its_generated_page_and_no_page_is_stale() -> None:
    from budgetlint.rules import all_rules
    from budgetlint.rules._pages import pages

    wanted = pages()
    assert set(wanted) == {f"{r.code}.md" for r in all_rules()} | {"README.md"}
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in PAGES.glob("*.md")}
    stale = sorted(n for n in set(wanted) | set(on_disk) if wanted.get(n) != on_disk.get(n))
    assert not stale, f"regenerate docs/rules (python -m budgetlint.rules._pages): {stale}"
    for r in all_rules():  # each page names a module that exists, and holds the rule's docs
        text = on_disk[f"{r.code}.md"]
        module = text.rsplit("generated from `", 1)[1].split("`", 1)[0]
        assert (REPO / module).is_file(), module
        assert r.doc.strip() in text


def test_sarif_rules_link_their_pages(tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    CliRunner().invoke(main, ["check", "budgets/", "-f", "sarif", "-o", str(out), "--no-summary"])
    rules = json.loads(out.read_text())["runs"][0]["tool"]["driver"]["rules"]
    assert rules
    for rule in rules:
        assert rule["helpUri"].endswith(f"/blob/main/docs/rules/{rule['id']}.md"), rule["helpUri"]
        assert (PAGES / f"{rule['id']}.md").is_file()


def test_catalog_show_speaks_in_units() -> None:
    result = CliRunner().invoke(main, ["catalog", "show", "h100-sxm"])
    assert result.exit_code == 0
    rows = {line[:24].strip(): line[25:] for line in result.output.splitlines()}
    # NVIDIA's H100 SXM datasheet: 80 GB, 3.35 TB/s, 989 TFLOPS dense BF16, NVLink 900 GB/s both ways
    assert rows["memory"] == "80 GB"
    assert rows["bandwidth"] == "3.35 TB/s"
    assert rows["compute bf16"] == "989 TFLOP/s"
    assert rows["interconnect"] == "450 GB/s"
    assert "[" not in result.output and "{" not in result.output  # no Python list or dict reprs
    assert "e+" not in result.output and ".0\n" not in result.output
    model = CliRunner().invoke(main, ["catalog", "show", "llama-3.1-70b"]).output
    assert "parameters               70.55B" in model  # the model card: 70.55 B parameters
    raw = json.loads(CliRunner().invoke(main, ["catalog", "show", "h100-sxm", "--format", "json"]).output)
    assert raw["memory_bytes"] == 80e9  # the JSON keeps SI floats
