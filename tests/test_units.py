"""The unit registry: SI and IEC prefixes, our dimensions, clear errors."""

from __future__ import annotations

import pytest

from budgetlint.model.units import UnitError, format_quantity, parse_count, parse_quantity


@pytest.mark.parametrize("text,kind,expected", [
    ("3.35 TB/s", "bandwidth", 3.35e12),
    ("900 GB/s", "bandwidth", 900e9),
    ("1 Gbit/s", "bandwidth", 1e9 / 8),
    ("2 TiB/s", "bandwidth", 2 * 2**40),
    ("128 KiB", "information", 128 * 1024),
    ("80 GB", "information", 80e9),
    ("16 GiB", "information", 16 * 2**30),
    ("989 TFLOP/s", "compute_rate", 989e12),
    ("1979 TOP/s", "compute_rate", 1979e12),
    ("1.2 PFLOPS", "compute_rate", 1.2e15),
    ("140 GFLOP", "compute", 140e9),
    ("250 ms", "time", 0.25),
    ("0.4 s", "time", 0.4),
    ("2 min", "time", 120.0),
    ("1 h", "time", 3600.0),
    ("500 us", "time", 500e-6),
    ("20 token/s", "pace", 20.0),
    ("20 tokens/s", "pace", 20.0),
    ("1.2 ktoken/s", "pace", 1200.0),
    ("50 ms/token", "time_per_token", 0.05),
    ("1800 token", "tokens", 1800.0),
])
def test_parses_to_si(text: str, kind: str, expected: float) -> None:
    value, got_kind = parse_quantity(text, kind)
    assert got_kind == kind
    assert value == pytest.approx(expected, rel=1e-12)


def test_first_matching_kind_wins() -> None:
    assert parse_quantity("50 ms", "time_per_token", "time") == (pytest.approx(0.05), "time")
    assert parse_quantity("50 ms/token", "time_per_token", "time") == (pytest.approx(0.05), "time_per_token")


@pytest.mark.parametrize("value,reason,words", [
    ("3.35 TB", "wrong-dimension", 'expected a bandwidth such as "3.35 TB/s"'),
    ("989 TB/s", "wrong-dimension", "information per time (a bandwidth)"),
    (3.35, "missing-unit", "bare number"),
    ("400", "missing-unit", "bare number"),
    ("3 furlongs", "unknown-unit", "furlongs"),
    ("TB/s", "invalid", "does not start with a number"),
    ("", "invalid", "empty"),
    ("1e400 TB/s", "invalid", "finite"),
    (True, "invalid", "bool"),
    (None, "invalid", "NoneType"),
])
def test_errors_name_what_was_expected(value: object, reason: str, words: str) -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity(value, "bandwidth" if "989" not in str(value) else "compute_rate")
    assert info.value.reason == reason
    assert words in info.value.message


def test_counts() -> None:
    assert parse_count("70.55B") == pytest.approx(70.55e9)
    assert parse_count("405M") == pytest.approx(405e6)
    assert parse_count("8.03e9") == pytest.approx(8.03e9)
    assert parse_count(123) == 123.0
    for bad in ("lots", True, "1.2X", float("nan")):
        with pytest.raises(UnitError):
            parse_count(bad)


def test_format_for_people() -> None:
    assert format_quantity(3.35e12, "bandwidth") == "3.35 TB/s"
    assert format_quantity(0.4, "time") == "400 ms"
    assert format_quantity(40.4, "time") == "40.4 s"
    assert format_quantity(80e9, "information") == "80 GB"


# Numbers a float cannot carry (found by hypothesis-jsonschema: "+9.7e-5021495230 minutes" reached
# rules/_fixes.py as an infinite pace and raised decimal.InvalidOperation). The smallest normal double is
# 2.2250738585072014e-308 (IEEE 754 binary64, sys.float_info.min); below it a value is subnormal, its
# reciprocal overflows (1 / 1e-320 token/s is no time a float holds), and a non-zero text that rounds to
# 0.0 has changed sign class. Each is a BL007 at the value, not a crash downstream.
@pytest.mark.parametrize("text,kind", [
    ("+9.7e-5021495230 minutes", "time"),     # underflows to 0.0 though its digits are not zero
    ("1e-320 token/s", "pace"),          # subnormal: 1 / x is infinite
    ("3e-309 token/s", "pace"),          # just below the smallest normal double
    ("1e-320 s", "time"),                      # the fast path
    ("1e-320 minutes", "time"),                # pint's path (a unit the fast table lacks)
])
def test_a_number_below_the_smallest_normal_float_is_refused(text: str, kind: str) -> None:
    with pytest.raises(UnitError) as info:
        parse_quantity(text, kind)
    assert info.value.reason == "invalid"
    assert "2.2e-308" in info.value.message and text in info.value.message


@pytest.mark.parametrize("text,kind,expected", [
    ("0 s", "time", 0.0), ("0.000 ms", "time", 0.0), ("-0 s", "time", 0.0),   # a zero written as zero
    ("3e-308 s", "time", 3e-308),              # the smallest normal double and up are numbers
])
def test_zero_and_small_normal_numbers_still_parse(text: str, kind: str, expected: float) -> None:
    assert parse_quantity(text, kind)[0] == pytest.approx(expected, abs=0, rel=1e-15)
