"""Issue 15 point 8 and issue 18 point 8: YAML merge keys (``<<``).

* 15.8: merged pairs were collected before anything was counted:
  20,000 merges of a 20,000-key mapping ran past 120 s at 3 GB. They now
  count toward the value limit before they are expanded (BL011 at the merge).
* 18.8: a valid chain (``<<: *mid`` where ``mid`` itself merges) gave false
  errors (BL004 unknown key '<<', BL012, BL003, BL101); merges YAML 1.1
  allows now work, with own keys winning and earlier sources first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from budgetlint.files import loader

from hardening_bounds import assert_bounded, run_bounded

CHAIN = """version: 1
kind: budgets
budgets:
  - &base
    name: base
    owner: "@acme/chat"
    percentile: p99
    promise: {ttft: 1 s, e2e: 30 s}
  - &mid
    <<: *base
    name: mid
    description: merges base
  - <<: *mid
    name: chained
  - <<: [*mid, {owner: "@acme/other", percentile: p50}]
    name: listed
    promise: {ttft: 2 s}
"""


def test_merge_chains_are_read_as_yaml_1_1_says(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(CHAIN)
    result = loader.load_file(path, "chain.yaml")
    assert result.findings == []
    budgets = result.documents[0].data["budgets"]
    # hand-resolved per the YAML 1.1 merge spec: own keys win, then sources in order
    assert budgets[2] == {"name": "chained", "description": "merges base", "owner": "@acme/chat",
                          "percentile": "p99", "promise": {"ttft": "1 s", "e2e": "30 s"}}
    assert budgets[3] == {"name": "listed", "promise": {"ttft": "2 s"}, "description": "merges base",
                          "owner": "@acme/chat", "percentile": "p99"}
    run = run_bounded("check", "chain.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="chain.yaml", codes=(0,), rule="BL306")  # physics not checked: info only
    for false_error in ("BL003", "BL004", "BL012", "BL101"):
        assert false_error not in run.stdout, run.stdout


def _quadratic(keys: int, merges: int) -> str:
    lines = ["version: 1", "kind: teams", "teams:", "  - &big"]
    lines += [f"    k{i}: {i}" for i in range(keys)]
    lines.append("  - <<: [" + ", ".join(["*big"] * merges) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("keys", "merges"), [(20_000, 20_000), (150_000, 1_000)])
def test_quadratic_merges_stop_at_the_value_limit(tmp_path: Path, keys: int, merges: int) -> None:
    path = tmp_path / "merge-bomb.yaml"
    path.write_text(_quadratic(keys, merges))
    run = run_bounded("check", "merge-bomb.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="merge-bomb.yaml", codes=(1,), rule="BL011")
    assert (f"more than {loader.MAX_NODES:,} values through merge keys" in run.stdout
            or f"more than {loader.MAX_FILE_NODES:,} keys and values" in run.stdout), run.stdout


def test_merge_of_a_scalar_is_a_finding(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("version: 1\nkind: teams\nteams:\n  - <<: 3\n    handle: '@a/b'\n")
    found = loader.load_file(path, "bad.yaml").findings
    assert [(f.rule, f.location.line) for f in found] == [("BL001", 4)], found
