"""A CODEOWNERS that is there but cannot be read (stop 47).

Until stop 47 the CODEOWNERS found in a repository was read with every error swallowed: a folder, a pipe
or a broken link at ``.github/CODEOWNERS`` was passed over and BL104 said no CODEOWNERS was found; one of
3 MB or more gave no handles yet was named as a source, so every owner it alone names was "not a known
team" (BL103 errors naming a file that was never read). GitHub does not load a CODEOWNERS of 3 MB or more
("CODEOWNERS files must be under 3 MB in size", GitHub's "About code owners"), so neither does budgetlint;
each case is now a warning naming the file, and BL104 names it too.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_runner import cli

BUDGET = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    promise: {ttft: 1 s}
"""
TEAMS = """version: 1
kind: teams
teams:
  - handle: "@acme/other"
"""


def _repo(tmp_path: Path, teams: bool = False) -> Path:
    (tmp_path / ".git").mkdir()  # the walk up for CODEOWNERS stops at the repository's root
    (tmp_path / ".github").mkdir()
    (tmp_path / "b.yaml").write_text(BUDGET)
    if teams:
        (tmp_path / "teams.yaml").write_text(TEAMS)
    return tmp_path / ".github" / "CODEOWNERS"


def _check(tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        return cli("check", "--no-simulate", "--no-summary", *args)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("kind,words", [
    ("folder", "expected a CODEOWNERS file, found a directory"),
    ("broken link", "cannot read the CODEOWNERS file: No such file or directory"),
])
def test_a_codeowners_that_is_no_file_is_said(tmp_path: Path, kind: str, words: str) -> None:
    place = _repo(tmp_path)
    if kind == "folder":
        place.mkdir()
    else:
        place.symlink_to(tmp_path / "nowhere")
    (tmp_path / "CODEOWNERS").write_text("* @acme/chat\n")  # a later place: GitHub takes the first there
    result = _check(tmp_path, "b.yaml")
    assert f".github/CODEOWNERS:1:1: BL010 warning: {words}; owners are not verified against it" in result.output
    assert ("BL104 info: owners cannot be verified: no teams registry (kind: teams), and the CODEOWNERS found "
            "(.github/CODEOWNERS) cannot be read") in result.output
    assert result.exit_code == 0, result.output  # a warning: the budgets themselves were checked


def test_a_codeowners_of_3_mb_is_not_read_and_not_named_as_a_source(tmp_path: Path) -> None:
    place = _repo(tmp_path, teams=True)
    line = "* @acme/chat\n"
    place.write_text(line + "#" * (3_000_000 - len(line) - 1) + "\n")
    assert place.stat().st_size == 3_000_000  # 3 MB: not under it
    result = _check(tmp_path, "b.yaml", "teams.yaml")
    assert (".github/CODEOWNERS:1:1: BL011 warning: expected a CODEOWNERS under 3 MB (GitHub does not load a larger "
            "one), found 3,000,000 bytes; owners are not verified against it") in result.output, result.output
    # the owner is unknown to what was read, and the message no longer names the file it was not read from
    assert "'@acme/chat' of budget 'chat' is not a known team (teams from teams.yaml)" in result.output
    assert "teams.yaml, .github/CODEOWNERS" not in result.output


def test_a_codeowners_just_under_3_mb_is_read(tmp_path: Path) -> None:
    place = _repo(tmp_path, teams=True)
    line = "* @acme/chat\n"
    place.write_text(line + "#" * (2_999_999 - len(line) - 1) + "\n")
    assert place.stat().st_size == 2_999_999
    result = _check(tmp_path, "b.yaml", "teams.yaml")
    assert "BL103" not in result.output and "BL011" not in result.output, result.output


def test_a_named_codeowners_that_cannot_be_read_is_exit_2(tmp_path: Path) -> None:
    place = _repo(tmp_path)
    place.write_text("* @acme/chat\n" + "#" * 3_000_000 + "\n")
    result = _check(tmp_path, "b.yaml", "--codeowners", ".github/CODEOWNERS")
    assert result.exit_code == 2
    assert ".github/CODEOWNERS: expected a CODEOWNERS under 3 MB (GitHub does not load a larger one), found " \
           "3,000,014 bytes" in result.output


def test_several_teams_files_stay_the_sources_when_codeowners_is_not_read(tmp_path: Path) -> None:
    """Two teams' registries in one run beside a 3 MB CODEOWNERS: each registry's owners are known, an owner
    only the unread CODEOWNERS names is not, and the message names the two registries, not the CODEOWNERS."""
    place = _repo(tmp_path)
    place.write_text("* @acme/chat @acme/search @acme/ads\n" + "#" * 3_000_000 + "\n")
    (tmp_path / "chat-teams.yaml").write_text(TEAMS.replace("@acme/other", "@acme/chat"))
    (tmp_path / "search-teams.yaml").write_text(TEAMS.replace("@acme/other", "@acme/search"))
    (tmp_path / "more.yaml").write_text(BUDGET.replace("name: chat", "name: search").replace("@acme/chat", "@acme/search")
                                        + BUDGET.split("budgets:\n")[1].replace("name: chat", "name: ads")
                                        .replace("@acme/chat", "@acme/ads"))
    result = _check(tmp_path, "b.yaml", "more.yaml", "chat-teams.yaml", "search-teams.yaml")
    assert "BL011 warning: expected a CODEOWNERS under 3 MB" in result.output
    unknown = [line for line in result.output.splitlines() if "BL103" in line]
    assert len(unknown) == 1 and "'@acme/ads' of budget 'ads' is not a known team" in unknown[0], unknown
    assert "(teams from chat-teams.yaml, search-teams.yaml)" in unknown[0]
