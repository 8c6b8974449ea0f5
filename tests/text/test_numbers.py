"""The one number formatter: its rounding rule, worked by hand (docs: budgetlint/text/numbers.py)."""

from __future__ import annotations

import math

import pytest

from budgetlint.text import numbers


@pytest.mark.parametrize(("value", "unit", "text"), [
    (0.1234, "s", "123 ms"),          # three significant figures: 123.4 ms -> 123
    (0.12345, "s", "123 ms"),
    (1.234, "s", "1.23 s"),
    (0.9996, "s", "1 s"),             # the prefix is chosen after rounding: never "1000 ms"
    (0.0005, "s", "500 µs"),
    (1234.5, "s", "1234 s"),          # integer digits are never rounded away
    (5000.0, "token/s", "5000 token/s"),  # not "5e+03 token/s" (the old .3g)
    (20.0, "token/s", "20 token/s"),
    (0.05, "s/token", "50 ms/token"),
    (3.35e12, "B/s", "3.35 TB/s"),
    (989e12, "FLOP/s", "989 TFLOP/s"),
    (1.979e15, "FLOP/s", "1.98 PFLOP/s"),
    (80e9, "B", "80 GB"),
    (999.7e9, "B", "1 TB"),
    (140e9, "FLOP", "140 GFLOP"),
    (6.0, "request/s", "6 request/s"),
    (0.0, "s", "0 s"),
    (math.inf, "s", "∞"),
    (-math.inf, "s", "-∞"),
    (math.nan, "s", "—"),
    (None, "s", "—"),
])
def test_quantity(value: float | None, unit: str, text: str) -> None:
    assert numbers.quantity(value, unit) == text


@pytest.mark.parametrize(("fraction", "text"), [
    (0.0813, "8.1%"), (0.004, "0.4%"), (1.14, "114%"), (2e-5, "0.002%"), (0.996, "99.6%"),
    (0.9996, "99.96%"), (1.0, "100%"), (-0.05, "-5%"), (0.0, "0%"), (0.219, "22%"),
])
def test_percent_two_significant_figures(fraction: float, text: str) -> None:
    assert numbers.percent(fraction) == text


def test_signed_percent_and_headroom() -> None:
    assert numbers.percent(0.12, signed=True) == "+12%"
    assert numbers.percent(-0.12, signed=True) == "-12%"
    assert (numbers.headroom(3.09), numbers.headroom(-0.004), numbers.headroom(0.0)) == ("+309%", "-0.4%", "0%")
    assert numbers.headroom(None, absent="unbounded") == "unbounded"


@pytest.mark.parametrize(("n", "noun", "text"), [
    (1, "replica", "1 replica"), (1.0, "replica", "1 replica"), (2, "replica", "2 replicas"),
    (0, "run", "0 runs"), (16.0, "device", "16 devices"), (2.5, "token", "2.5 tokens"),
])
def test_count_and_plural(n: float, noun: str, text: str) -> None:
    assert numbers.count(n, noun) == text


def test_a_nonzero_value_never_prints_as_zero() -> None:
    for x in (1e-3, 1e-5, 3e-7, 1e-12):
        assert numbers.number(x) not in ("0", "-0")
        assert numbers.percent(x) != "0%"


def test_exponents_only_far_from_everyday_magnitudes() -> None:
    for x in (1e-6, 0.00123, 1.0, 999.0, 5000.0, 12345678.0, 9.99e14):
        assert "e" not in numbers.number(x), x
    assert numbers.number(1e20) == "1e20"  # trailing zeros dropped here too
    assert numbers.number(1.234e-9) == "1.23e-09" and numbers.stated(1e-7) == "1e-07"


def test_five_digit_integers_are_grouped() -> None:
    assert numbers.quantity(20000.0, "token/s") == "20,000 token/s"
    assert numbers.number(1234567.0) == "1,234,567"
    assert numbers.number(5000.0) == "5000"


def test_figures_apart_tells_a_sentence_s_numbers_apart() -> None:
    # 47.73 vs 47.70 token/s: three figures print both "47.7"; four tell them apart
    assert numbers.figures_apart([47.73, 47.70], "token/s") == 4
    assert numbers.quantity(47.73, "token/s", figures=4) == "47.73 token/s"
    assert numbers.figures_apart([0.400, 0.500], "s") == 3
    assert numbers.figures_apart([0.4, 0.4], "s") == 3  # equal values may print equal


def test_a_stated_share_is_written_as_stated() -> None:
    """An SLO objective or a percentile someone wrote is not a measured figure: it keeps its digits
    (issue 22: ``f"{0.99999:.4g}"`` printed "1" in BL604/BL605, and ``percent`` rounds to two figures)."""
    assert numbers.stated_percent(0.975) == "97.5%" and numbers.percent(0.975) == "98%"
    assert numbers.stated_percent(0.99999) == "99.999%"
    assert numbers.stated_percent(0.95) == "95%"
    assert numbers.stated(0.99999) == "0.99999" and f"{0.99999:.4g}" == "1"
    assert numbers.stated(0.95 * 100) == "95" and numbers.stated(0.999 * 100) == "99.9"  # p95, p99.9
    assert numbers.stated(None) == "—" and numbers.stated_percent(None) == "—"
    # an exact bucket edge in an SLO description keeps its figures: 1.2345 s, not 1.23 s
    assert numbers.quantity(1.2345, "s", figures=numbers.STATED_FIGURES) == "1.2345 s"
    assert numbers.quantity(0.25, "s", figures=numbers.STATED_FIGURES) == "250 ms"


def test_a_stated_number_is_never_rounded_into_another() -> None:
    """Six figures print 99.9999999 as "100" and 0.9999999 as "1" (until stop 47 a p99.9999999 promise read
    "simulated p100 TTFT"): more figures where six would print another number, as written."""
    assert numbers.stated(99.9999999) == "99.9999999" and numbers.number(99.9999999, figures=6) == "100"
    assert numbers.stated(0.9999999) == "0.9999999"
    assert numbers.stated(99.99999999999) == "99.99999999999"
    assert numbers.stated(12345678.9) == "12,345,678.9"
    assert numbers.stated(0.1 + 0.2) == "0.3"  # a float's last bit is not a figure anyone wrote
    assert numbers.stated(95.0) == "95" and numbers.stated(float("inf")) == "∞"
