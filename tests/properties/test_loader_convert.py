"""The loader's short paths (files/loader.py ``_Converter``) give PyYAML's values and the nodes' own positions.

Plain strings, decimal integers and floats skip PyYAML's constructor, and a
mapping's string keys and values are converted in the mapping's own loop.
Held here against two independent sources: the values PyYAML's safe loader
builds from the same text, and the start marks of the nodes PyYAML composes
(walked by a few lines below, not by the loader's code).
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings, strategies as st

from budgetlint.files.loader import load_text, unpack

#: plain scalars of every implicit type the short paths touch, and their neighbours that must not take them
PLAIN = ["0", "7", "017", "09", "0o17", "0x1f", "0b101", "1_000", "+12", "-12", "-0", "123456789012345678",
         "1:30", "0.5", "5.", ".5", "-0.0", "+0.5", "1.5e3", "1.0e+3", "6.8523015e+5", "1_0.5", "190:20:30.15",
         "true", "no", "null", "~", "bf16", "p95", "400 ms", "12ab", "٣", "0.5.1",
         "1e3", "1__2", "2026-12-31x"]
KEYS = ["a", "b", "name", "1", "0.5", "null", "k-1", "x y"]  # no two equal once read (1 == True)

scalar = st.one_of(st.sampled_from(PLAIN), st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
                                                   max_size=8).map(lambda t: yaml.safe_dump(t, default_style='"').strip()))
tree = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)), max_leaves=12)


def _block(node: Any, indent: int = 0) -> list[str]:
    """Block-style lines of a non-empty mapping or list (a nested one starts on the next line)."""
    pad, lines = " " * indent, []
    items = node.items() if isinstance(node, dict) else ((None, v) for v in node)
    for k, v in items:
        head = f"{pad}{k}:" if k is not None else f"{pad}-"
        if isinstance(v, (dict, list)) and v:
            lines += [head, *_block(v, indent + 2)]
        else:
            lines.append(f"{head} {_flow(v)}")
    return lines


def _flow(node: Any) -> str:
    if isinstance(node, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_flow(v) for v in node) + "]"
    return node


def _marks(node: Any, path: tuple, values: dict, keys: dict) -> None:
    """Every value's and key's start mark (line and column from 1), by path: the composed nodes' own."""
    values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = yaml.load(yaml.serialize(k), Loader=yaml.CSafeLoader)
            keys[path + (key,)] = (k.start_mark.line + 1, k.start_mark.column + 1)
            _marks(v, path + (key,), values, keys)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _marks(v, path + (i,), values, keys)


@settings(max_examples=400, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(KEYS), tree, min_size=1, max_size=5), flow=st.booleans())
def test_values_and_positions_are_pyyamls(doc: dict, flow: bool) -> None:
    text = (_flow(doc) if flow else "\n".join(_block(doc))) + "\n"
    result = load_text(text, "t.yaml")
    assert result.findings == [], (text, result.findings)
    [loaded] = result.documents
    expected = yaml.load(text, Loader=yaml.CSafeLoader)
    assert repr(loaded.data) == repr(expected), text  # repr: 1, 1.0 and True apart, -0.0 too
    values: dict = {}
    keys: dict = {}
    _marks(yaml.compose(text, Loader=yaml.CSafeLoader), (), values, keys)
    assert {p: unpack(v) for p, v in loaded.positions.items()} == values, text
    assert {p: unpack(v) for p, v in loaded.key_positions.items()} == keys, text


def test_nan_and_infinity_are_refused_where_they_stand() -> None:
    """Not PyYAML's values (issue 24): NaN passes every ``minimum`` and switches the physics off,
    so the loader reads ``.nan``, ``.inf`` and ``-.Inf`` as text with a BL003 at their position."""
    result = load_text("a: .nan\nb: [1, -.Inf]\nc: .inf\nd: 1.5\n", "t.yaml")
    [doc] = result.documents
    assert doc.data == {"a": ".nan", "b": [1, "-.Inf"], "c": ".inf", "d": 1.5}
    assert [(f.rule, f.location.line, f.location.column) for f in result.findings] == [
        ("BL003", 1, 4), ("BL003", 2, 8), ("BL003", 3, 4)]
