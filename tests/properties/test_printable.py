"""findings.printable: every control character escaped, everything else as it was (its ASCII short path too)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from budgetlint.findings import printable


def _reference(text: str) -> str:
    """Written from the rule, not the code: C0 and C1 controls, DEL, the Unicode line and paragraph
    separators and the bidirectional marks and overrides become escapes (\\n, \\r, \\t by name)."""
    out = []
    for ch in text:
        o = ord(ch)
        if o < 0x20 or 0x7f <= o <= 0x9f or o in (0x2028, 0x2029, 0x200e, 0x200f) or 0x202a <= o <= 0x202e \
                or 0x2066 <= o <= 0x2069:
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch) or
                       (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"))
        else:
            out.append(ch)
    return "".join(out)


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(st.text(), st.text(st.characters(max_codepoint=0x7f)),
                      st.text(st.sampled_from("a\n\x1b\x7f\x85\u2028\u202e\u2066 é\t"))))
def test_printable_escapes_exactly_the_controls(text: str) -> None:
    assert printable(text) == _reference(text)


def test_examples() -> None:
    assert printable("budgets/chat.yaml") == "budgets/chat.yaml"
    assert printable("a\nb\x1b[31m\u202e") == "a\\nb\\x1b[31m\\u202e"
    assert printable(42) == "42"
