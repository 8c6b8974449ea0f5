"""Imports go down the pipeline, never up, and form no cycle.

The package is laid out by pipeline step (docs/design.md). Every import in
every module, including the lazy ones inside functions, is read with
:mod:`ast` and held against the layer table below: a module may import its
own folder and the layers below it, never a layer above. The physics core
imports nothing of budgetlint outside ``physics/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "budgetlint"

#: lowest first, in docs/design.md's order (files -> model -> evaluate -> judge -> rules -> run
#: -> reporters): a module may import only its own layer and those before it. An entry is a
#: package or module and everything under it, except ``=name``: that module alone. There is no
#: catch-all: a new top-level module or folder has no layer until it is placed here (and in
#: docs/design.md), and ``test_every_module_has_a_layer`` fails until then.
LAYERS: list[tuple[str, ...]] = [
    # the vocabulary every step shares: the package's own __init__, findings, the report, the
    # on-disk list a big report spills into, and the words numbers become (text/)
    ("=budgetlint", "budgetlint.findings", "budgetlint.report", "budgetlint.promise_rows", "budgetlint.spill_to_disk",
     "budgetlint.text"),
    ("budgetlint.physics", "budgetlint.stats"),  # the pure core: floats in, floats out (imports only itself)
    ("budgetlint.files",),  # discovery, fs, YAML loader, JSON Schema validation
    ("budgetlint.model",),  # typed dataclasses, units, catalog, owners, building
    ("budgetlint.bench", "budgetlint.deployed"),  # benchmark readers -> Measurement; deployed configurations -> Deployed
    ("budgetlint.evaluate",),  # each budget evaluated once
    ("budgetlint.judge",),  # the judgement: one verdict per promise, on one basis
    ("budgetlint.rules",),  # pure functions of (budget, evaluation[, judgement], ctx)
    ("budgetlint.options",),  # flags over config file over defaults (reads the rule registry)
    ("budgetlint.run",),  # the pipeline, diff, explain, ingest, policy
    ("budgetlint.reporters", "budgetlint.slo"),  # render a Report; render the SLO plans (budgetlint slo)
    ("budgetlint.cli", "budgetlint.cli_check", "budgetlint.github_comment", "budgetlint.__main__"),  # cli_check: check's conventions (issue 27); github_comment: renders and posts the PR comment
]

#: imports of the pure core (physics/, stats/) from outside it and evaluate/, each with why it is
#: right (docs/design.md says the same); any other is a step doing the evaluation's work
CORE_READERS = {
    ("budgetlint.model.build", "budgetlint.physics.precision"):
        "one table of precision names and their bytes, checked where the YAML names them (BL003)",
    ("budgetlint.model.build", "budgetlint.physics.traffic"):
        "whether a lognormal's mean and p95 can be one (one definition, checked at the YAML position)",
    ("budgetlint.run.calibrate", "budgetlint.physics.calibration"):
        "the calibrate command drives the core's fit and leave-one-out refits",
    ("budgetlint.cli_check", "budgetlint.physics.default_efficiency"):
        "check --show-settings prints the core's table of default efficiencies as it is",
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str, layers: list[tuple[str, ...]] = LAYERS) -> int:
    best, best_len = -1, -1
    for i, entries in enumerate(layers):
        for entry in entries:
            exact = entry.startswith("=")
            prefix = entry.lstrip("=")
            if (module == prefix or (not exact and module.startswith(prefix + "."))) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("budgetlint")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            if name.startswith("budgetlint"):
                # `from budgetlint.x import y` may name a submodule y
                for alias in node.names:
                    sub = f"{name}.{alias.name}"
                    out.append((sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                                or (PACKAGE.parent / sub.replace(".", "/")).is_dir() else name, node.lineno))
    return out


def _graph() -> dict[str, list[tuple[str, int]]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_layer() -> None:
    assert [m for m in _graph() if _layer(m) < 0] == []


def test_a_new_top_level_module_or_folder_has_no_layer() -> None:
    """The test of the test: nothing is placed by default (the old table's bare ``budgetlint``
    prefix placed every new folder in the lowest layer)."""
    for name in ("budgetlint.newstep", "budgetlint.newstep.part", "budgetlint.helpers", "budgetlint.textual"):
        assert _layer(name) < 0, name
    assert _layer("budgetlint") == 0 and _layer("budgetlint.text.numbers") == 0


def test_a_new_top_level_module_fails_the_layer_test(tmp_path: Path) -> None:
    """A module written outside the layers is reported by the same check the suite runs."""
    pkg = tmp_path / "budgetlint"
    (pkg / "text").mkdir(parents=True)
    for rel in ("__init__.py", "findings.py", "text/__init__.py", "stray.py"):
        (pkg / rel).write_text("", encoding="utf-8")
    modules = {_module_name_under(p, tmp_path) for p in pkg.rglob("*.py")}
    assert sorted(m for m in modules if _layer(m) < 0) == ["budgetlint.stray"]


def _module_name_under(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_the_layers_are_the_diagrams_order() -> None:
    """docs/design.md's pipeline, read left to right, is the table's order."""
    order = [_layer(f"budgetlint.{step}") for step in ("files", "model", "evaluate", "judge", "rules", "run", "reporters")]
    assert order == sorted(order) and len(set(order)) == len(order)
    design = (PACKAGE.parent / "docs/design.md").read_text(encoding="utf-8")
    diagram = design.split("```")[1]
    at = [diagram.index(f"{step}/") for step in ("files", "model", "evaluate", "judge", "rules", "run", "reporters")]
    assert at == sorted(at)


def test_only_the_evaluation_reads_the_pure_core() -> None:
    bad = []
    for module, imports in _graph().items():
        if module.startswith(("budgetlint.physics", "budgetlint.stats", "budgetlint.evaluate")):
            continue
        for target, line in imports:
            if target.startswith(("budgetlint.physics", "budgetlint.stats")):
                key = (module, target)
                if key not in CORE_READERS:
                    bad.append(f"{module}:{line} imports {target}")
    assert bad == []


def test_rules_read_no_files_and_compute_no_statistics() -> None:
    """A rule is a pure function of (budget, evaluation, ctx): no file system, no benchmark
    reading, no physics or statistics of its own (the evaluation computes the numbers)."""
    banned = ("budgetlint.files.fs", "budgetlint.bench", "budgetlint.physics", "budgetlint.stats")
    bad = [f"{m}:{line} imports {t}" for m, imports in _graph().items() if m.startswith("budgetlint.rules")
           for t, line in imports if t.startswith(banned)]
    assert bad == []


def test_no_import_goes_up_the_pipeline() -> None:
    bad = []
    for module, imports in _graph().items():
        for target, line in imports:
            if _layer(target) > _layer(module):
                bad.append(f"{module}:{line} imports {target} (a later step)")
    assert bad == []


#: the one module outside the pure core that it may import: the number formatter (a leaf that
#: imports nothing of budgetlint), so the core's error messages, lever names and stopping rules
#: spell numbers as every output does
CORE_MAY_IMPORT = ("budgetlint.text.numbers",)


@pytest.mark.parametrize("core", ["budgetlint.physics", "budgetlint.stats"])
def test_the_pure_core_imports_only_itself(core: str) -> None:
    bad = [f"{m}:{line} imports {t}" for m, imports in _graph().items() if m.startswith(core)
           for t, line in imports if not t.startswith(core) and t not in CORE_MAY_IMPORT]
    assert bad == []


def test_the_formatter_the_core_may_import_is_a_leaf() -> None:
    """What the pure core may import imports nothing of budgetlint itself."""
    graph = _graph()
    for leaf in CORE_MAY_IMPORT:
        assert leaf in graph
        assert [t for t, _ in graph[leaf] if t.startswith("budgetlint")] == []


def test_no_import_cycle() -> None:
    graph = {m: {t for t, _ in imports if t in _all_modules()} for m, imports in _graph().items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    # a package's __init__ importing its own submodules (and back) is the package, not a cycle
    cycles = [c for c in cycles if not _within_one_package(c)]
    assert cycles == []


def _within_one_package(cycle: str) -> bool:
    nodes = cycle.split(" -> ")
    return any(all(n == pkg or n.startswith(pkg + ".") for n in nodes) for pkg in nodes)


def _all_modules() -> set[str]:
    return {_module_name(p) for p in PACKAGE.rglob("*.py")}


@pytest.mark.parametrize("module, target, expected", [
    ("budgetlint.rules.bl301_promise_cannot_be_met", "budgetlint.run.check", False),
    ("budgetlint.run.check", "budgetlint.rules", True),
    ("budgetlint.model.build", "budgetlint.evaluate", False),
    ("budgetlint.bench.vllm", "budgetlint.model.units", True),
    ("budgetlint.run.diff", "budgetlint.reporters.wording", False),  # the diagram: reporters come last
    ("budgetlint.rules.bl301_promise_cannot_be_met", "budgetlint.judge", True),
    ("budgetlint.judge", "budgetlint.rules", False),
    ("budgetlint.files.loader", "budgetlint.text.numbers", True),
])
def test_the_layer_table_itself(module: str, target: str, expected: bool) -> None:
    """The checker is not vacuous: an upward import is recognised as one."""
    assert (_layer(target) <= _layer(module)) is expected


def test_no_two_classes_share_a_name() -> None:
    """A reader should never have to ask which `Deployment` a line means."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(_module_name(path))
    assert {name: mods for name, mods in where.items() if len(mods) > 1} == {}
