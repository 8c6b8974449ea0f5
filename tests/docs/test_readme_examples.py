"""Every README shell example with its output is run, and the output compared (issue 27:
"README and docs disagree ... examples cut without '...'").

An example is a ```console block: each ``$ command`` line is run (``budgetlint`` is this
checkout's, ``python3 -m budgetlint``) from the repository root, and the lines after it
are its output. A line that is only ``...`` stands for any number of lines the README
leaves out; every other line must be the output's line, exactly (trailing spaces aside).
A block preceded by ``<!-- readme-example: budgets.yaml from the yaml above -->`` runs
in an empty folder holding the YAML block above it (its list items under a ``kind:
budgets`` header) as budgets.yaml.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SETUP = "<!-- readme-example: budgets.yaml from the yaml above -->"


def examples() -> list[tuple[int, str, list[str], str | None]]:
    """(line, command, expected output lines, YAML of the folder or None) per ``$`` line."""
    lines = README.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    last_yaml: list[str] = []
    while i < len(lines):
        if lines[i].startswith("```yaml"):
            j = lines.index("```", i + 1)
            last_yaml = lines[i + 1:j]
            i = j + 1
            continue
        if lines[i].startswith("```console"):
            setup = lines[i - 1].strip() == SETUP
            j = lines.index("```", i + 1)
            block = lines[i + 1:j]
            k = 0
            while k < len(block):
                if block[k].startswith("$ "):
                    expected = []
                    m = k + 1
                    while m < len(block) and not block[m].startswith("$ "):
                        expected.append(block[m])
                        m += 1
                    yaml = None
                    if setup:
                        yaml = "version: 1\nkind: budgets\nbudgets:\n" + "\n".join(last_yaml) + "\n"
                    out.append((i + 1 + k + 1, block[k][2:], expected, yaml))
                    k = m
                else:
                    k += 1
            i = j + 1
            continue
        i += 1
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` with ``...`` lines as wildcards (any number of lines) against ``actual``."""
    exp = [e.rstrip() for e in expected]
    act = [a.rstrip() for a in actual]
    while exp and not exp[-1]:
        exp.pop()
    while act and not act[-1]:
        act.pop()
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(exp):
            result = j == len(act)
        elif exp[i] == "...":
            result = any(go(i + 1, k) for k in range(j, len(act) + 1))
        else:
            result = j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return go(0, 0)


def test_the_matcher() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert not matches(["a", "d"], ["a", "b", "c", "d"])  # a cut without "..." is a disagreement
    assert not matches(["a"], ["a", "b"])
    assert matches(["a  ", ""], ["a"])


EXAMPLES = examples()


def test_the_readme_has_examples() -> None:
    commands = [c for _, c, _, _ in EXAMPLES]
    assert any(c.startswith("budgetlint check tests/examples/overpromised.yaml") for c in commands)
    assert any(c.startswith("budgetlint explain") for c in commands)
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize(("line", "command", "expected", "yaml"), EXAMPLES, ids=[f"README.md:{e[0]}" for e in EXAMPLES])
def test_readme_example(tmp_path: Path, line: int, command: str, expected: list[str], yaml: str | None) -> None:
    argv = shlex.split(command)
    assert argv[0] == "budgetlint", f"README.md:{line}: only budgetlint commands are run"
    cwd = REPO
    if yaml is not None:
        cwd = tmp_path
        (tmp_path / "budgets.yaml").write_text(yaml, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BUDGETLINT_", "FORCE_COLOR"))}
    env.update(NO_COLOR="1", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "budgetlint", *argv[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    actual = (proc.stdout + proc.stderr).splitlines()
    assert matches(expected, actual), (
        f"README.md:{line}: `{command}` prints something else (mark a cut with a line '...'):\n"
        + "\n".join(actual))
