"""The pint-free fast path in budgetlint.model.units gives exactly pint's floats.

``units._fast_parse`` reads the common "number [prefix]unit[/[prefix]unit]"
forms without importing pint (whose import and registry cost more than the
rest of a check). These tests hold it to pint, bit for bit: every prefix x
unit pair (numerator and denominator) exhaustively, and arbitrary numbers
and spacing by hypothesis. Anything the fast path does not take, and every
error, is pint's by construction (it returns None and pint decides).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetlint.model import units
from budgetlint.model.units import KINDS, UnitError, parse_quantity

TOKENS = sorted([p + u for p in units._FAST_PREFIXES for u in units._FAST_UNITS] + list(units._FAST_BARE))


def pint_reference(text: str, kinds: tuple[str, ...]) -> tuple[float, str]:
    """What parse_quantity answered before the fast path: pint alone."""
    q = units.registry().Quantity(text)
    dims = units._dimensionality(q)
    for kind in kinds:
        if dims == KINDS[kind][0]:
            return float(q.to(KINDS[kind][1]).magnitude), kind
    raise UnitError("wrong-dimension", text)


#: denominators and numerators every token is paired with (the arithmetic of a prefix on either
#: side, a bare scaled unit, and a compound unit); the tables themselves are units.txt's, read at import
PARTNERS = [None, "s", "ms", "token", "KiB", "min", "FLOPS"]


def test_every_prefix_and_unit_matches_pint_exactly() -> None:
    checked = 0
    for token in TOKENS:
        for partner in PARTNERS:
            for text in ([f"3.35 {token}"] if partner is None else [f"3.35 {token}/{partner}", f"3.35 {partner}/{token}"]):
                fast = units._fast_parse(text)
                if fast is None:
                    continue
                assert fast == pint_reference(text, (fast[1],)), text
                checked += 1
    assert checked > 1_000


def test_the_fast_tables_are_units_txt() -> None:
    """Every unit and prefix symbol of units.txt is on the fast path (a unit added there is read
    without pint), and the fast path knows nothing units.txt does not define."""
    text = (Path(units.__file__).with_name("units.txt")).read_text(encoding="utf-8")
    defined = set()
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if "=" in line:
            parts = [x.strip() for x in line.split("=")]
            defined.update(x.rstrip("-") for x in (parts[0], *parts[2:]))
    fast = set(units._FAST_PREFIXES) | set(units._FAST_UNITS) | set(units._FAST_BARE)
    assert fast - {""} == defined


NUMBERS = st.one_of(
    st.floats(min_value=0, max_value=1e30, allow_nan=False).map(repr),
    st.integers(0, 10**12).map(str),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(0, 9999), st.integers(-30, 30)),
    st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 999), st.integers(0, 999)),
)


@settings(max_examples=200, deadline=None)
@given(NUMBERS, st.sampled_from(TOKENS), st.one_of(st.none(), st.sampled_from(TOKENS)),
       st.sampled_from([" ", "  ", "\t"]), st.sampled_from(["/", " / ", "/ "]), st.sampled_from(["", " "]),
       st.sampled_from(["", "-", "+"]))
def test_fast_path_equals_pint(number: str, num: str, den: str | None, gap: str, slash: str, pad: str,
                               sign: str) -> None:
    text = f"{pad}{sign}{number}{gap}{num}" + (f"{slash}{den}" if den else "") + pad
    fast = units._fast_parse(text)
    if fast is None:
        return
    assert fast == pint_reference(text, (fast[1],)), text


@pytest.mark.parametrize("text", ["250 ms", "3.35 TB/s", "989 TFLOP/s", "20 token/s", "50 ms/token",
                                  "80 GB", "128 KiB", "1800 token", "2 min", "1 h", "1979 TOP/s", "0.4 s"])
def test_common_forms_take_the_fast_path(text: str) -> None:
    assert units._fast_parse(text) is not None


@pytest.mark.parametrize("text", ["1e3ms", "2**10 B", "5 ms*2", "1 kmin", "3 furlong", "5 ms/token/s",
                                  "1e400 ms", "1_000 ms", "5 ms ms"])
def test_unusual_forms_go_to_pint(text: str) -> None:
    assert units._fast_parse(text) is None


@pytest.mark.parametrize(("text", "kinds"), [("5 GB", ("time",)), ("1e400 ms", ("time",)), ("5", ("time",)),
                                             ("-5 ms", ("bandwidth",)), ("nan ms", ("time",))])
def test_errors_are_pints(text: str, kinds: tuple[str, ...]) -> None:
    with pytest.raises(UnitError):
        parse_quantity(text, *kinds)


def test_checking_the_shipped_budgets_does_not_import_pint(repo_root: Path) -> None:
    code = ("import sys\nfrom budgetlint.run.check import Options, run_check\n"
            "report = run_check(['budgets/'], Options())\n"
            "assert report.budgets, 'no budgets'\n"
            "print('pint' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo_root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False", "pint was imported: a quantity in budgets/ or the catalog missed the fast path"
