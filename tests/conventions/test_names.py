"""Names that resolve (issue 27): catalog names by case and punctuation, instruct variants,
suggestions only for near matches, never another team."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main

BUDGET = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "{owner}"
    workload: {{prompt_tokens: 100, output_tokens: 10}}
    promise: {{ttft: 400 ms}}
    deployment:
      model: {model}
      hardware: {hardware}
      devices: 4
"""


def _findings(tmp_path: Path, *, model: str = "llama-3.1-8b", hardware: str = "h100-sxm",
              owner: str = "@acme/chat", teams: list[str] | None = None) -> list[dict]:
    (tmp_path / "b.yaml").write_text(BUDGET.format(model=model, hardware=hardware, owner=owner))
    args = ["check", str(tmp_path / "b.yaml"), "-f", "json", "--no-summary", "--isolated", "--no-codeowners"]
    if teams is not None:
        (tmp_path / "teams.yaml").write_text("version: 1\nkind: teams\nteams:\n"
                                             + "".join(f'  - handle: "{t}"\n' for t in teams))
        args += ["--teams", str(tmp_path / "teams.yaml")]
    result = CliRunner().invoke(main, args)
    return json.loads(result.output)["findings"]


@pytest.mark.parametrize("hardware", ["h100-sxm5", "H100_SXM5", "h100 sxm5", "H100SXM5"])
def test_hardware_alias_by_case_and_punctuation(tmp_path: Path, hardware: str) -> None:
    found = _findings(tmp_path, hardware=hardware)  # the catalog's alias is "H100 SXM5"
    assert not [f for f in found if f["rule"] == "BL008"], found
    assert any(f["rule"] == "BL304" for f in found)  # the physics ran on the H100


def test_instruct_variant_is_the_base_model_with_a_note(tmp_path: Path) -> None:
    found = _findings(tmp_path, model="Llama-3.1-70B-Instruct")
    assert not [f for f in found if f["rule"] == "BL008"], found  # was: "did you mean 'llama-3.3-70b'?"
    note = [f for f in found if f["rule"] == "BL506"]
    assert len(note) == 1 and note[0]["severity"] == "info"
    assert "'llama-3.1-70b'" in note[0]["message"]
    assert any(f["rule"] == "BL304" for f in found)  # checked as llama-3.1-70b


@pytest.mark.parametrize(("model", "base"), [("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
                                             ("Qwen2.5-7B-Instruct", "qwen2.5-7b"),
                                             ("gemma-2-9b-it", "gemma-2-9b"),
                                             ("mistral-7b-instruct-v0.3", "mistral-7b-v0.3")])
def test_other_variants(tmp_path: Path, model: str, base: str) -> None:
    found = _findings(tmp_path, model=model)
    assert not [f for f in found if f["rule"] == "BL008"], found
    notes = [f["message"] for f in found if f["rule"] == "BL506"]
    assert all(repr(base) in n for n in notes)


def test_no_suggestion_for_another_model(tmp_path: Path) -> None:
    bl008 = [f for f in _findings(tmp_path, model="llama-4-scout") if f["rule"] == "BL008"]
    assert len(bl008) == 1 and "did you mean" not in bl008[0]["message"], bl008
    typo = [f for f in _findings(tmp_path, hardware="h100-sxn") if f["rule"] == "BL008"]
    assert "did you mean 'h100-sxm'?" in typo[0]["message"]


def test_bl103_never_suggests_another_team(tmp_path: Path) -> None:
    teams = ["@platform/serving", "@acme/chat"]
    edge = [f for f in _findings(tmp_path, owner="@platform/edge", teams=teams) if f["rule"] == "BL103"]
    assert len(edge) == 1 and "did you mean" not in edge[0]["message"], edge  # was '@platform/serving'
    assert edge[0]["fix"] == "add the team to the teams registry"
    typo = [f for f in _findings(tmp_path, owner="@acme/chta", teams=teams) if f["rule"] == "BL103"]
    assert "did you mean '@acme/chat'?" in typo[0]["message"]
    org = [f for f in _findings(tmp_path, owner="@acm/chat", teams=teams) if f["rule"] == "BL103"]
    assert "did you mean '@acme/chat'?" in org[0]["message"]


@pytest.mark.parametrize(("a", "b", "edits"), [("chta", "chat", 1), ("kitten", "sitting", 3), ("", "abc", 3),
                                               ("edge", "serving", 6), ("h100-sxn", "h100-sxm", 1)])
def test_typo_distance(a: str, b: str, edits: int) -> None:
    """By hand: a swap is one edit; kitten -> sitting is k->s, e->i, +g; edge -> serving:
    +s, e = e, d->r, g->v, e->i, +n, +g (no alignment does better)."""
    from budgetlint.model.suggest import typo_distance

    assert typo_distance(a, b) == edits


def test_catalog_show_finds_by_punctuation() -> None:
    result = CliRunner().invoke(main, ["catalog", "show", "h100-sxm5"])
    assert result.exit_code == 0 and result.output.startswith("name                     h100-sxm\n")
