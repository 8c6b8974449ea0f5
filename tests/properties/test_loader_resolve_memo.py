"""The loader resolves each scalar text's tag once (files/loader.py): the same tags as PyYAML's."""

from __future__ import annotations

import yaml
from hypothesis import given, settings, strategies as st

from budgetlint.files.loader import _yaml_loader_class

PLAIN = ["1", "1.0", "0x1f", "0o17", "1_000", "1:30", "true", "yes", "No", "null", "~", "2026-12-31",
         ".inf", "-.Inf", ".nan", "1e3", "+1", "=", "bf16", "400 ms", "p95", "-1", "0.5"]
SCALARS = st.one_of(st.text(max_size=12), st.sampled_from(PLAIN))


def _tags(loader_cls, text: str) -> list[str]:
    loader = loader_cls(text)
    try:
        node = loader.get_single_node()
    finally:
        loader.dispose()
    return [v.tag for _, v in node.value] if node is not None else []


@settings(max_examples=300, deadline=None)
@given(values=st.lists(SCALARS, min_size=1, max_size=6))
def test_memoised_tags_equal_pyyamls(values: list[str]) -> None:
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    # each value twice, plain (implicit tags apply) and quoted (they do not): the memo must tell them apart
    text = "".join((f"k{i}: {v}\n" if v in PLAIN else "")
                   + f"q{i}: {yaml.safe_dump(v, default_style=chr(34)).strip()}\n" for i, v in enumerate(values))
    for _ in range(2):  # the second pass answers from the memo
        assert _tags(_yaml_loader_class(), text) == _tags(base, text)
