"""Fuzzing: no input makes budgetlint crash or hang.

Every run over arbitrary YAML text, arbitrary bytes, documents shaped by our
own schemas with values at the extremes, the shipped budgets with hostile
values, and mutated real benchmark files ends with exit code 0, 1 or 2 and
findings with messages; no exception escapes. See fuzz_support for the
property and tests/fuzz/conftest.py for the ``ci`` and ``long`` profiles.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from fuzz_support import (
    REPO_ROOT, check_in_process, count, extreme_scalar, from_our_schema, fuzz_settings,
    inlined_schema, profile_name,
)

KIND_SCHEMAS = {"budgets": "budgets.schema.json", "hardware": "hardware.schema.json",
                "models": "models.schema.json", "teams": "teams.schema.json"}

YAML_TOKENS = ["version: 1\n", "kind: budgets\n", "kind: hardware\n", "kind: models\n", "kind: teams\n",
               "budgets:\n", "  - name: x\n", "    promise:\n", "      ttft: 400 ms\n", "      e2e: nan s\n",
               "      pace: -5 token/s\n", "    deployment: {model: llama-3.1-8b, hardware: h100-sxm}\n",
               "---\n", "...\n", "&a ", "*a ", "<<: *a\n", "!!python/object:os.system ", "!!binary ",
               "? ", ": ", "- ", "[", "]", "{", "}", ",", "'", '"', "|\n", ">-\n", "#", "\t", "\n", "  ",
               "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "!local ", "@", "`", "\\", "\ufeff", "\x85", "\u2028",
               "1e400", ".nan", ".inf", "-.inf", "0x1F", "0o17", "2001-12-14", "~", "null", "yes", "no",
               "1 GB", "3.35 TB/s", "1e400 GB/s", "-5 ms", "nan ms", "@acme/chat"]


def _write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@fuzz_settings()
@given(st.one_of(st.lists(st.sampled_from(YAML_TOKENS), max_size=40).map("".join),
                 st.text(max_size=400),
                 st.lists(st.one_of(st.sampled_from(YAML_TOKENS), st.text(max_size=6)), max_size=40).map("".join)))
def test_arbitrary_yaml_text(work: Path, text: str) -> None:
    count("arbitrary_yaml_text")
    path = _write(work, "text.yaml", text.encode("utf-8", "surrogatepass"))
    check_in_process([str(path)])


@fuzz_settings()
@given(st.binary(max_size=600), st.sampled_from([b"", b"version: 1\nkind: budgets\nbudgets:\n", b"\xef\xbb\xbf",
                                                 b"\xff\xfe", b"# c\n"]))
def test_arbitrary_bytes(work: Path, data: bytes, prefix: bytes) -> None:
    count("arbitrary_bytes")
    path = _write(work, "bytes.yaml", prefix + data)
    check_in_process([str(path)])


def _dump(doc: Any) -> bytes:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode("utf-8", "surrogatepass")


_STRATEGIES = {kind: from_our_schema(inlined_schema(name)) for kind, name in KIND_SCHEMAS.items()}


@fuzz_settings()
@given(st.sampled_from(sorted(KIND_SCHEMAS)).flatmap(lambda k: st.tuples(st.just(k), _STRATEGIES[k])),
       st.sampled_from(sorted(KIND_SCHEMAS)).flatmap(lambda k: _STRATEGIES[k]))
def test_schema_shaped_documents_at_extremes(work: Path, first: tuple[str, Any], second: Any) -> None:
    """Two documents (any kinds, so user hardware/models meet budgets) from our schemas."""
    count("schema_shaped_at_extremes")
    _, doc = first
    a = _write(work, "schema-a.yaml", _dump(doc))
    b = _write(work, "schema-b.yaml", _dump(second))
    check_in_process([str(a), str(b)], explain=True)


def _shipped() -> list[tuple[str, Any]]:
    out = []
    for path in sorted((REPO_ROOT / "budgets").glob("*.yaml")):
        out.append((path.name, yaml.safe_load(path.read_text(encoding="utf-8"))))
    return out


SHIPPED = _shipped()


def _leaf_paths(node: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaf_paths(v, path + (k,))] or [path]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaf_paths(v, path + (i,))] or [path]
    return [path]


def _set(node: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    node[path[0]] = _set(node[path[0]], path[1:], value)
    return node


@fuzz_settings()
@given(st.data())
def test_shipped_budgets_with_hostile_values(work: Path, data: st.DataObject) -> None:
    """The shipped budgets (which reach the physics) with leaves replaced by extremes."""
    count("shipped_budgets_hostile_values")
    name, original = data.draw(st.sampled_from(SHIPPED), label="file")
    doc = json.loads(json.dumps(original))  # a deep copy
    leaves = _leaf_paths(doc)
    for path in data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=4, unique=True), label="leaves"):
        doc = _set(doc, path, data.draw(extreme_scalar(), label=str(path)))
    path = _write(work, name, _dump(doc))
    teams = REPO_ROOT / "budgets" / "teams.yaml"
    check_in_process([str(path), str(teams)], explain=True)


def _jsonschema_strategy_or_reason() -> tuple[Any, str]:
    """hypothesis-jsonschema's generator for our budgets schema, or why it cannot run."""
    try:
        from hypothesis_jsonschema import from_schema
    except ImportError:
        return None, "hypothesis-jsonschema is not installed (pip install 'hypothesis-jsonschema>=0.23')"
    strategy = from_schema(inlined_schema("budgets.schema.json"))
    probe = from_schema({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})
    seen: list[Any] = []

    @fuzz_settings(max_examples=3, database=None)
    @given(probe)
    def _probe(value: Any) -> None:
        seen.append(value)

    try:
        _probe()
    except AttributeError as exc:  # hypothesis-jsonschema uses hypothesis internals that moved
        import hypothesis

        return None, (f"hypothesis-jsonschema does not work with hypothesis {hypothesis.__version__} "
                      f"({exc}); see docs/limits.md for the versions that do")
    return strategy, ""


_JS_STRATEGY, _JS_REASON = _jsonschema_strategy_or_reason()


@pytest.mark.skipif(_JS_STRATEGY is None, reason=_JS_REASON or "unavailable")
@fuzz_settings(long_examples=3_000)
@given(st.data())
def test_hypothesis_jsonschema_budgets(work: Path, data: st.DataObject) -> None:
    """Valid-by-construction budgets from hypothesis-jsonschema (when it works here)."""
    count("hypothesis_jsonschema_budgets")
    doc = data.draw(_JS_STRATEGY)
    path = _write(work, "hjs.yaml", _dump(doc))
    check_in_process([str(path)], explain=True)


# --------------------------------------------------------------------------- benchmark files


def _bench_files(shared: Path) -> list[Path]:
    root = shared / "fixtures" / "bench"
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".txt", ".csv", ".yaml"))


HOSTILE_JSON = [float("nan"), float("inf"), -float("inf"), -1, 0, -1e308, 1e308, 10**400, "nan", "12 ms",
                None, True, [], {}, "", -0.0]


def _mutate_json(value: Any, data: st.DataObject) -> Any:
    leaves = _leaf_paths(value)
    for path in data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=6), label="json leaves"):
        try:
            value = _set(value, path, data.draw(st.sampled_from(HOSTILE_JSON)))
        except (KeyError, IndexError, TypeError):
            pass
    return value


def _mutate_bytes(raw: bytes, data: st.DataObject) -> bytes:
    op = data.draw(st.sampled_from(["truncate", "flip", "insert", "delete", "nan-text", "duplicate"]))
    if not raw:
        return raw
    at = data.draw(st.integers(0, len(raw) - 1))
    if op == "truncate":
        return raw[:at]
    if op == "flip":
        return raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1:]
    if op == "insert":
        return raw[:at] + data.draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    if op == "delete":
        return raw[:at] + raw[at + data.draw(st.integers(1, 64)):]
    if op == "nan-text":
        return raw.replace(b": 0", b": NaN", data.draw(st.integers(1, 5))).replace(b": 1", b": -Infinity", 1)
    return raw + raw[: at + 1]


@fuzz_settings(suppress_health_check=list(HealthCheck))
@given(st.data())
def test_mutated_benchmark_files(shared_dir: Path, work: Path, data: st.DataObject) -> None:
    from budgetlint.bench import read_benchmark, to_native

    count("mutated_benchmark_files")
    files = _bench_files(shared_dir)
    if not files:
        pytest.skip("no benchmark fixtures under ../shared/fixtures/bench")
    source = data.draw(st.sampled_from(files), label="file")
    raw = source.read_bytes()
    mutated = raw
    if source.suffix == ".json" and data.draw(st.booleans(), label="structured"):
        try:
            mutated = json.dumps(_mutate_json(json.loads(raw), data)).encode()
        except ValueError:
            mutated = raw
    else:
        mutated = _mutate_bytes(raw, data)
    target = work / "bench" / source.relative_to(shared_dir / "fixtures" / "bench")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(mutated)
    measurements, problems = read_benchmark(target)
    assert isinstance(measurements, list) and isinstance(problems, list)
    for problem in problems:
        assert str(problem).strip()
    if measurements:
        to_native(measurements)


# --------------------------------------------------------------------------- the CLI itself

CLI_INPUTS = [
    b"\x00\x01\x02binary",
    b"version: 1\nkind: budgets\nbudgets:\n  - name: a\n    promise: {ttft: nan ms, e2e: 1e400 s}\n",
    b"version: 1\nkind: hardware\nhardware:\n  - {name: x, memory: -5 GB, bandwidth: 1e400 GB/s}\n",
    b"a: &a [*a]\n",
    b"[" * 5000,
    b"\xff\xfe\x00v\x00e\x00r",
    b"version: 1\nkind: budgets\nkind: teams\n",
    b"!!python/object/apply:os.system ['true']\n",
]


@pytest.mark.parametrize("data", CLI_INPUTS, ids=range(len(CLI_INPUTS)))
def test_cli_never_shows_a_traceback(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "input.yaml").write_bytes(data)
    for fmt in ("text", "json"):
        proc = subprocess.run([sys.executable, "-m", "budgetlint", "check", "--no-summary", "--format", fmt,
                               str(tmp_path / "input.yaml")], capture_output=True, text=True, timeout=60,
                              cwd=tmp_path, env={**os.environ, "BUDGETLINT_TRACEBACK": ""})
        assert proc.returncode in (0, 1, 2), proc.stderr
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        assert proc.stdout.strip() or proc.stderr.strip()


def test_profile_is_known() -> None:
    assert profile_name() in ("ci", "long")
