"""Shared helpers of the fuzz tests: the in-process check, hostile values,
and a small generator of documents from our own JSON Schemas.

The property every fuzz test asserts: a run over any input ends with exit
code 0, 1 or 2, every finding has a rule code and a message, and every
output format renders (JSON strictly: no NaN/Infinity). No exception may
escape ``run_check`` or a reporter: one that did would be exit code 3 (an
internal error) in the CLI.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from budgetlint.run.check import InputError, Options, evaluate_run, run_check
from budgetlint.findings import Severity
from budgetlint.reporters import FORMATS, render

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO_ROOT / "schemas"

#: the long profile's promise: at least this many inputs over the fuzz tests
LONG_TOTAL = 100_000


def profile_name() -> str:
    if os.environ.get("BUDGETLINT_FUZZ") == "long":
        return "long"
    current = settings.get_current_profile_name()
    return "long" if current == "long" else "ci"


def fuzz_settings(*, long_examples: int | None = None, **overrides: Any) -> settings:
    """The settings of the selected fuzz profile (``ci`` unless ``long`` is asked for).

    ``long_examples`` caps a test's inputs in the long profile only: for a test
    whose inputs are slow to *generate* (hypothesis-jsonschema, ~0.2 s each),
    so that the profile's 100,000 inputs run in about an hour, not 2.5.
    """
    if long_examples is not None and profile_name() == "long":
        overrides.setdefault("max_examples", long_examples)
    return settings(settings.get_profile(profile_name()), **overrides)


def check_in_process(paths: list[str], *, explain: bool = False) -> int:
    """Run the check and every reporter in-process; return the CLI's exit code.

    Exceptions are not caught: any that escapes is a bug the test reports.
    """
    options = Options(use_codeowners=False)
    try:
        report = run_check(paths, options)
    except InputError:
        return 2
    for finding in report.findings:
        assert finding.rule.startswith("BL") and finding.message.strip(), finding
    for fmt in FORMATS:
        text = render(fmt, report)
        assert isinstance(text, str)
        if fmt == "json":
            json.loads(text, parse_constant=_reject_constant)
    if explain:
        from budgetlint.run.explain import explain_budget

        for evaluation in evaluate_run(paths, options, keep=True).evaluations:
            assert isinstance(explain_budget(evaluation), str)
    code = report.exit_code(Severity.ERROR)
    assert code in (0, 1), code
    return code


def _reject_constant(name: str) -> Any:
    raise AssertionError(f"the JSON report contains {name}, which is not JSON")


# --------------------------------------------------------------------------- hostile values

EXTREME_NUMBERS = ["0", "-0", "-5", "1e400", "-1e400", "1e-400", "1e308", "4.9e-324", "1e-320", "3e-309", "nan", "inf",
                   "-inf", "NaN", "Infinity", "123456789012345678901234567890", "0.0000001", "1_000",
                   "0x10", "1e3", ".5", "5.", "+7", "--1", "", " "]
EXTREME_UNITS = ["ms", "s", "us", "µs", "min", "h", "GB", "GiB", "KiB", "TB/s", "GB/s", "B/s",
                 "TFLOP/s", "TFLOPS", "FLOP", "token/s", "tok/s", "ms/token", "token", "kg", "m",
                 "", "%", "bit", "GB/GB", "s/s", "1/s", "ms**2", "ms^-1", "ms ms", "(ms)", "nan",
                 "degC", "GB/ms/token"]


def quantity_text() -> st.SearchStrategy[str]:
    """Quantity strings at the extremes: zero, negative, huge, NaN, wrong units, junk."""
    return st.one_of(
        st.builds(lambda n, sep, u: f"{n}{sep}{u}", st.sampled_from(EXTREME_NUMBERS),
                  st.sampled_from([" ", "", "  ", "\t"]), st.sampled_from(EXTREME_UNITS)),
        st.builds(lambda x, u: f"{x!r} {u}", st.floats(allow_nan=True, allow_infinity=True),
                  st.sampled_from(EXTREME_UNITS)),
        st.text(max_size=12),
    )


def extreme_scalar() -> st.SearchStrategy[Any]:
    """Any scalar a YAML file could hold, biased to the extremes."""
    return st.one_of(
        st.sampled_from([0, -1, 1, 2**31, 2**63, 10**400, -(10**400), True, False, None, "", 0.0,
                         float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324]),
        st.integers(), st.floats(), quantity_text(), st.text(max_size=20),
    )


# --------------------------------------------------------------------------- schema-shaped documents


def load_schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def _resolve(ref: str, here: str) -> tuple[dict, str]:
    file, _, pointer = ref.partition("#")
    file = file or here
    node: Any = load_schema(file)
    for part in pointer.strip("/").split("/"):
        if part:
            node = node[part]
    return node, file


def inline_refs(node: Any, here: str, depth: int = 0) -> Any:
    """The schema with every ``$ref`` (local or to a sibling file) inlined."""
    if depth > 40:
        raise ValueError("recursive schema")
    if isinstance(node, dict):
        if "$ref" in node:
            target, file = _resolve(node["$ref"], here)
            inlined = inline_refs(target, file, depth + 1)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {"allOf": [inlined, inline_refs(rest, here, depth + 1)]} if rest else inlined
        return {k: inline_refs(v, here, depth + 1) for k, v in node.items()
                if k not in ("$defs", "$id", "$schema")}
    if isinstance(node, list):
        return [inline_refs(v, here, depth + 1) for v in node]
    return node


def inlined_schema(name: str) -> dict:
    """One kind's document schema, inlined (budgets.schema.json's root dispatches on ``kind`` to
    every kind; its budgets document is ``$defs/document``)."""
    schema = load_schema(name)
    if name == "budgets.schema.json":
        schema = schema["$defs"]["document"]
    return inline_refs(schema, name)


def _typed(schema: dict) -> list[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return t
    if isinstance(t, str):
        return [t]
    if "properties" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    return []


def from_our_schema(schema: dict, *, wild: float = 0.15) -> st.SearchStrategy[Any]:
    """Documents shaped like ``schema`` (our subset of JSON Schema), with values
    pushed to the extremes: a fraction ``wild`` of the leaves are hostile.

    Not a general JSON Schema generator: it covers what ``schemas/*.json``
    use (type, properties, required, items, enum, const, oneOf, anyOf,
    allOf, examples), and deliberately breaks constraints (patterns,
    minimum) now and then so that the checker sees near-valid input.
    """

    @st.composite
    def gen(draw: st.DrawFn, node: dict, depth: int) -> Any:
        if depth < 12 and draw(st.floats(0, 1)) < wild:
            return draw(extreme_scalar())
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return draw(st.sampled_from(node["enum"]))
        for key in ("oneOf", "anyOf"):
            if key in node:
                return draw(gen(draw(st.sampled_from(node[key])), depth + 1))
        if "allOf" in node:
            merged: dict = {}
            for part in node["allOf"]:
                merged.update(part)
            return draw(gen(merged, depth))
        if "examples" in node and draw(st.booleans()):
            return draw(st.sampled_from(node["examples"]))
        types = _typed(node) or ["string", "number", "integer", "boolean"]
        kind = draw(st.sampled_from(types))
        if kind == "object":
            props: dict = node.get("properties", {})
            required = [k for k in node.get("required", []) if k in props]
            optional = [k for k in props if k not in required]
            chosen = required + draw(st.lists(st.sampled_from(optional), unique=True,
                                              max_size=len(optional))) if optional else list(required)
            out = {k: draw(gen(props[k], depth + 1)) for k in chosen}
            if draw(st.integers(0, 19)) == 0:
                out[draw(st.text(min_size=1, max_size=8))] = draw(extreme_scalar())
            return out
        if kind == "array":
            items = node.get("items", {})
            return draw(st.lists(gen(items, depth + 1) if isinstance(items, dict) else extreme_scalar(),
                                 max_size=3 if depth < 3 else 1))
        if kind == "integer":
            lo = node.get("minimum", node.get("exclusiveMinimum", 0))
            return draw(st.integers(int(lo), int(lo) + 100_000) if draw(st.booleans()) else st.integers())
        if kind == "number":
            return draw(st.floats(0, 1) if draw(st.booleans()) else st.floats())
        if kind == "boolean":
            return draw(st.booleans())
        if kind == "null":
            return None
        return draw(st.one_of(quantity_text(), st.text(max_size=16)))

    return gen(schema, 0)


def finite_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isfinite(value))


#: inputs run per test in this session (the long profile's count is reported
#: at the end of the run by tests/fuzz/conftest.py)
COUNTS: dict[str, int] = {}


def count(test: str) -> None:
    COUNTS[test] = COUNTS.get(test, 0) + 1
    progress = os.environ.get("BUDGETLINT_FUZZ_COUNTS")
    if progress and (COUNTS[test] == 1 or COUNTS[test] % 100 == 0):
        # a long run stopped before its end still says how far it got (the terminal summary
        # is written only at the end): the counts so far, rewritten every 100 inputs of a test
        total = sum(COUNTS.values())
        Path(progress).write_text(f"fuzz inputs run (profile {profile_name()}): {total:,}\n"
                                  + "".join(f"  {n}: {c:,}\n" for n, c in sorted(COUNTS.items())))
