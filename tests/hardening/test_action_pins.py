"""Issue 18 point 10: the Action installs budgetlint's dependencies pinned.

It used to run ``pip install budgetlint`` alone, so a gate could change its
verdicts when pint, jsonschema or PyYAML released. The Action now ships
``action-constraints.txt`` and installs with ``--constraint`` it; these tests
check that every runtime dependency, and every dependency of theirs, is
pinned to one version, that each pin meets pyproject.toml, and that the
install step (run for real against a fake Python, in a bounded child) passes
the file.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from hardening_bounds import HANG_LIMIT_S, _limit_memory

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
CONSTRAINTS = REPO / "action-constraints.txt"


def _pins() -> dict[str, tuple[str, Marker | None]]:
    pins: dict[str, tuple[str, Marker | None]] = {}
    for raw in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", f"{line!r} is not pinned to one version"
        name = canonicalize_name(req.name)
        assert name not in pins, f"{name} pinned twice"
        pins[name] = (specs[0].version, req.marker)
    return pins


def _runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in project["dependencies"]]


def test_every_runtime_dependency_is_pinned_within_pyproject() -> None:
    pins = _pins()
    for req in _runtime_requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is a dependency but not in {CONSTRAINTS.name}"
        version, _ = pins[name]
        assert req.specifier.contains(version, prereleases=True), f"{name}=={version} does not meet {req}"


def test_dependencies_of_dependencies_are_pinned_too() -> None:
    """The closure under this interpreter's markers, from the installed metadata."""
    pins = _pins()
    todo = [r for r in _runtime_requirements() if r.marker is None or r.marker.evaluate()]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        assert name in pins, f"{name} (needed through {req}) is not pinned in {CONSTRAINTS.name}"
        version, _ = pins[name]
        assert req.specifier.contains(version, prereleases=True), f"{name}=={version} does not meet {req}"
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            pytest.skip(f"{name} is not installed here: its own dependencies cannot be listed")
        for text in requires:
            sub = Requirement(text)
            if sub.marker is None or sub.marker.evaluate({"extra": ""}):
                todo.append(sub)
    unused = {n for n, (_, marker) in pins.items() if marker is None or marker.evaluate()} - seen
    assert not unused, f"pinned but needed by nothing: {sorted(unused)}"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("version", ["", "0.2.0"])
def test_the_install_step_passes_the_constraints(tmp_path: Path, version: str) -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "install")
    python = tmp_path / "python"  # `python -m venv DIR` makes DIR/bin/python that logs its arguments
    python.write_text(
        "#!/usr/bin/env bash\n"
        'if [[ "$1 $2" == "-m venv" ]]; then\n'
        '  mkdir -p "$3/bin"\n'
        "  printf '#!/usr/bin/env bash\\nprintf \"%%s\\\\n\" \"$@\" > \"$PIP_LOG\"\\n' > \"$3/bin/python\"\n"
        "  printf '#!/usr/bin/env bash\\necho budgetlint 0.0.0\\n' > \"$3/bin/budgetlint\"\n"
        '  chmod +x "$3/bin/python" "$3/bin/budgetlint"\n'
        "fi\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHON": str(python), "BUDGETLINT_VERSION": version,
           "ACTION_PATH": str(REPO), "RUNNER_TEMP": str(tmp_path), "PIP_LOG": str(tmp_path / "pip"),
           "GITHUB_OUTPUT": str(tmp_path / "out")}
    proc = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=HANG_LIMIT_S, preexec_fn=_limit_memory)  # CPU-bounded in _limit_memory
    assert proc.returncode == 0, proc.stderr
    args = (tmp_path / "pip").read_text(encoding="utf-8").splitlines()
    assert args[:3] == ["-m", "pip", "install"], args
    i = args.index("--constraint")
    assert Path(args[i + 1]) == CONSTRAINTS and CONSTRAINTS.is_file()
    assert re.fullmatch(r"budgetlint==0\.2\.0|" + re.escape(str(REPO)), args[-1]), args
