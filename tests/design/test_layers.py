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

#: lowest first; a module may import only its own layer and those before it
LAYERS: list[tuple[str, ...]] = [
    ("budgetlint", "budgetlint.findings", "budgetlint.report", "budgetlint.text"),  # the vocabulary every step shares
    ("budgetlint.physics", "budgetlint.stats"),  # the pure core: floats in, floats out (imports only itself)
    ("budgetlint.files",),  # discovery, fs, YAML loader, JSON Schema validation
    ("budgetlint.model",),  # typed dataclasses, units, catalog, owners, building
    ("budgetlint.bench",),  # benchmark readers -> Measurement
    ("budgetlint.evaluate",),  # each budget evaluated once
    ("budgetlint.judge",),  # one verdict per promise, on one basis
    ("budgetlint.rules",),  # pure functions of (budget, evaluation)
    ("budgetlint.reporters", "budgetlint.slo"),  # render a Report; render the SLO plans (budgetlint slo)
    ("budgetlint.options",),  # flags over config file over defaults
    ("budgetlint.run",),  # the pipeline, diff, explain, ingest, policy
    ("budgetlint.cli", "budgetlint.__main__"),
]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
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


def test_no_import_goes_up_the_pipeline() -> None:
    bad = []
    for module, imports in _graph().items():
        for target, line in imports:
            if _layer(target) > _layer(module):
                bad.append(f"{module}:{line} imports {target} (a later step)")
    assert bad == []


@pytest.mark.parametrize("core", ["budgetlint.physics", "budgetlint.stats"])
def test_the_pure_core_imports_only_itself(core: str) -> None:
    bad = [f"{m}:{line} imports {t}" for m, imports in _graph().items() if m.startswith(core)
           for t, line in imports if not t.startswith(core)]
    assert bad == []


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
