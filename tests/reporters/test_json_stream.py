"""json_stream.chunks writes exactly what json.dumps(value, indent=2) writes.

The oracle is the standard library: the same value with every Lazy array
materialised, encoded by ``json.dumps``. The reporters that stream (json,
sarif) are held to their whole-string rendering on real reports too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.reporters.json_stream import Lazy, chunks

ROOT = Path(__file__).resolve().parents[2]

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False))
plain = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=20)


def lazify(draw, value):
    """Wrap some of the lists in ``value`` in Lazy (generators, consumed once)."""
    if isinstance(value, list):
        items = [lazify(draw, v) for v in value]
        return Lazy(x for x in items) if draw(st.booleans()) else items
    if isinstance(value, dict):
        return {k: lazify(draw, v) for k, v in value.items()}
    return value


@settings(max_examples=300, deadline=None)
@given(st.data(), plain)
def test_chunks_equal_json_dumps(data, value) -> None:
    expected = json.dumps(value, indent=2)
    lazy = lazify(data.draw, value)
    assert "".join(chunks(lazy)) == expected


def test_empty_and_nested_lazy_arrays() -> None:
    value = {"a": Lazy(iter([])), "b": [Lazy(iter([{"c": Lazy(iter([1, 2]))}])), 3], "d": {}}
    expected = json.dumps({"a": [], "b": [[{"c": [1, 2]}], 3], "d": {}}, indent=2)
    assert "".join(chunks(value)) == expected


def test_each_maps_elements_before_encoding() -> None:
    finite = lambda v: None if isinstance(v, float) and not math.isfinite(v) else v  # noqa: E731
    out = "".join(chunks({"xs": Lazy(iter([1.0, math.inf]))}, each=finite))
    assert json.loads(out) == {"xs": [1.0, None]}


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_streamed_reporters_equal_their_whole_rendering(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.run.check import Options, run_check
    from budgetlint.reporters import get_chunks
    from budgetlint.reporters.json_report import _finite
    from budgetlint.reporters.sarif import build

    monkeypatch.chdir(ROOT)
    report = run_check(["budgets/", "tests/cases/"], Options(use_codeowners=False))
    streamed = "".join(get_chunks(fmt)(report))
    data = _finite(report.as_dict()) if fmt == "json" else build(report)
    assert streamed == json.dumps(data, indent=2) + "\n"
    assert len(report.budgets) > 5 and len(report.findings) > 20  # a report with something in it


def test_junit_written_a_suite_at_a_time_equals_the_whole_tree(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.run.check import Options, run_check
    from budgetlint.reporters import get_chunks, get_reporter

    monkeypatch.chdir(ROOT)
    report = run_check(["budgets/", "tests/cases/"], Options(use_codeowners=False))
    assert "".join(get_chunks("junit")(report)) == get_reporter("junit")(report)  # render: one ElementTree
    for paths in (["tests/cases/bl013_no_kind.yaml"], [str(tmp_path)]):  # one suite; none at all
        small = run_check(paths, Options(use_codeowners=False))
        assert "".join(get_chunks("junit")(small)) == get_reporter("junit")(small)
