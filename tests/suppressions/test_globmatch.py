"""The per-file-ignores matcher: pathspec's answers without pathspec's backtracking (issue 24).

``budgetlint/run/globmatch.py`` replaces ``pathspec.GitIgnoreSpec`` for
per-file-ignores. Its answers are held to pathspec's (the independent
reference: a well-kept implementation of gitignore's rules) on globs and
paths drawn over a small alphabet, so every wildcard meets every edge; the
hostile glob of the issue is checked for time in a bounded child run
(tests/hardening/test_issue24_gate.py).
"""

from __future__ import annotations

import re

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.run.globmatch import matches, segment_matches

GLOB_PIECES = ["a", "b", ".", "*", "**", "?", "/", "[ab]", "[!a]", "[a-c]", "\\*", "x.yaml", "!", "#", " "]
PATH_PIECES = ["a", "b", "c", "ab", ".", "x.yaml", "*"]


def reference(glob: str, path: str) -> bool:
    pattern = glob.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    compiled = pathspec.GitIgnoreSpec.from_lines([pattern]).patterns[0]
    if compiled.include is None:  # a comment, an empty line: matches nothing
        return False
    # git's wildmatch never lets a class match "/"; pathspec's regex lets "[!a]" match one
    # (the one place this matcher follows git rather than pathspec): the same regex, told so
    regex = re.compile(compiled.regex.pattern.replace("[^", "[^/"))
    return bool(compiled.include and regex.search(path))


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(GLOB_PIECES), min_size=1, max_size=7).map("".join),
       st.lists(st.lists(st.sampled_from(PATH_PIECES), min_size=1, max_size=3).map("".join)
                .filter(lambda s: s.strip(".")), min_size=1, max_size=4).map("/".join))
def test_same_answers_as_pathspec(glob: str, path: str) -> None:
    """(Paths as the run gives them: resolved, so never a ``.`` or ``..`` segment.)"""
    try:
        expected = reference(glob, path)
    except Exception:  # noqa: BLE001 - a glob pathspec refuses: ours must simply not crash
        matches(glob, path)
        return
    assert matches(glob, path) == expected, (glob, path)


@pytest.mark.parametrize("glob,path,expected", [
    ("budgets/**/a.yaml", "budgets/a.yaml", True),
    ("budgets/**/a.yaml", "budgets/x/y/a.yaml", True),
    ("*.yaml", "deep/er/x.yaml", True),
    ("/x.yaml", "deep/x.yaml", False),
    ("generated/", "generated/x.yaml", True),
    ("generated/", "generated", False),
    ("gen/**", "gen", False),
    ("gen/**", "gen/a/b.yaml", True),
    ("./.hidden/*.yaml", ".hidden/a.yaml", True),
    ("*a*a*a*a*a*ab", "a" * 5000 + "/x.yaml", False),
])
def test_worked_cases(glob: str, path: str, expected: bool) -> None:
    assert matches(glob, path) is expected


def test_a_long_segment_costs_the_product_of_lengths_not_an_exponential() -> None:
    # the greedy algorithm retries from the last star only: 13 x 100,000 steps at most
    assert segment_matches("*a*a*a*a*a*ab", "a" * 100_000) is False
