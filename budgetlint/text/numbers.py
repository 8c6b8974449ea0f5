"""The one place where numbers become text, in every output format and in ``explain``.

API (every function returns a ``str``):

- ``number(x)``: a plain number: ``2.53``, ``5000``, ``0.004``.
- ``quantity(value, unit)``: an SI float with its unit, scaled for people:
  ``quantity(0.1234, "s") == "123 ms"``, ``quantity(3.35e12, "B/s") == "3.35 TB/s"``,
  ``quantity(5000, "token/s") == "5000 token/s"``; ``"—"`` for None; money and energy
  in the units prices are written in: ``quantity(5e-7, "USD/token") == "0.5 USD/Mtok"``,
  ``quantity(2.5 / 3600, "USD/s") == "2.5 USD/hour"``, ``quantity(0.0012, "USD") == "0.0012 USD"``,
  ``quantity(1400, "W") == "1.4 kW"``, ``quantity(0.35, "J/token") == "0.35 J/token"``.
- ``percent(fraction)``: ``0.0813`` -> ``"8.1%"``, ``-0.05`` -> ``"-5%"``.
- ``headroom(fraction)``: ``promise / estimate - 1`` signed: ``"+8.1%"``, ``"-0.4%"``.
- ``stated_percent(fraction)``: a share someone wrote (an objective, a percentile), as written:
  ``0.975`` -> ``"97.5%"``, ``0.99999`` -> ``"99.999%"`` (up to six figures, never rounded to two).
- ``stated(x)``: a stated plain number the same way: ``0.975`` -> ``"0.975"``, ``99.9`` -> ``"99.9"``.
- ``count(n, noun)``: ``count(1, "replica") == "1 replica"``, ``count(3, "replica") == "3 replicas"``.
- ``plural(n, noun)``: the noun alone, in the form ``n`` takes.
- ``figures_apart(values, unit)``: the figures that keep a sentence's different values different.

The rounding rule (one implementation, :func:`_significant`):

- a quantity or plain number keeps **three significant figures**, a percent
  **two**; digits left of the decimal point are never rounded away
  (``1234 ms`` is ``"1.23 s"`` once scaled, but ``5000 token/s`` stays
  ``"5000"``, never ``"5e+03"``); trailing zeros are dropped (``"0.5"``, not
  ``"0.500"``);
- the unit's prefix is chosen after rounding, so ``0.9996 s`` is ``"1 s"``,
  never ``"1000 ms"``;
- a value that is not zero never prints as ``0`` (``0.00002`` of a percent is
  ``"0.002%"``), a percent near 100 shows which side of 100 it is on
  (``99.6%`` is not ``100%``);
- exponent notation only outside 1e-6 .. 1e15 (where no prefix applies); an
  integer part of five digits or more is grouped by threes (``20,000``);
- numbers compared in one sentence (a measurement, its promise, an interval)
  take as many more figures as tell them apart (:func:`figures_apart`, at most 6);
- infinities are ``"∞"`` / ``"-∞"``, NaN and None ``"—"``.

This module imports nothing of budgetlint (it sits with ``findings.py`` in
the vocabulary layer). It is the one module outside the pure core that ``physics/``
and ``stats/`` may import: their error messages, lever names and stopping rules are
worded with it, so a number reads the same wherever it was worded
(``tests/design/test_one_formatter.py`` refuses any other format spec that rounds).
"""

from __future__ import annotations

import math
from typing import Iterable

#: significant figures of a quantity or a plain number
FIGURES = 3
#: significant figures of a percent (a headroom, a shortfall, an efficiency)
PERCENT_FIGURES = 2
#: figures of a number someone wrote (an objective, a percentile, a bucket edge): as written
STATED_FIGURES = 6
#: shown for an absent value (None, NaN)
ABSENT = "—"

#: decimal prefixes, largest first, for the units that take them
_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
#: units shown with a decimal prefix (``3.35 TB/s``, ``989 TFLOP/s``, ``80 GB``)
_PREFIXED = frozenset({"B", "B/s", "FLOP", "FLOP/s", "FLOP/B", "W"})
#: money and energy (docs/cost.md): the SI float's unit -> (factor, the unit people read)
_SCALED = {"USD/token": (1e6, "USD/Mtok"), "USD/s": (3600.0, "USD/hour"), "USD": (1.0, "USD"),
           "J/token": (1.0, "J/token")}
#: time ladders: (factor, label), smallest first
_TIME = ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s"))
_TIME_PER_TOKEN = ((1e-3, "ms/token"), (1.0, "s/token"))


def _significant(x: float, figures: int) -> str:
    """``x`` (finite) to ``figures`` significant figures, integer digits kept, no trailing zeros;
    an integer part of five digits or more in groups of three (``20,000``; ``5000`` stays whole)."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    a = abs(x)
    if a >= 1e15 or a < 1e-6:
        mantissa, _, exponent = f"{a:.{figures - 1}e}".partition("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return sign + mantissa + "e" + exponent.lstrip("+")
    magnitude = math.floor(math.log10(a))
    decimals = max(0, figures - 1 - magnitude)
    text = f"{a:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    whole, dot, rest = text.partition(".")
    if len(whole) >= 5:
        text = f"{int(whole):,}" + dot + rest
    return sign + text


def _rounded(x: float, figures: int = FIGURES) -> float:
    """|x| as it will print: what the prefix is chosen on."""
    return abs(float(_significant(x, figures).replace(",", ""))) if math.isfinite(x) else abs(x)


def _not_finite(x: float | None, absent: str = ABSENT) -> str | None:
    if x is None or math.isnan(x):
        return absent
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return None


def number(x: float | None, *, figures: int = FIGURES) -> str:
    """A plain number in the rounding rule: ``2.53``, ``5000``, ``16`` (for 16.0), ``20,000``."""
    special = _not_finite(x)
    if special is not None:
        return special
    assert x is not None
    return _significant(float(x), figures)


def _ladder(value: float, steps: tuple[tuple[float, str], ...], figures: int) -> str:
    """``value`` in the largest step it reaches once rounded (the smallest step below all)."""
    chosen = steps[0]
    for factor, label in steps:
        if _rounded(value / factor, figures) >= 1:
            chosen = (factor, label)
    factor, label = chosen
    return f"{_significant(value / factor, figures)} {label}"


def figures_apart(values: Iterable[float | None], unit: str, *, most: int = 6) -> int:
    """The significant figures (at least :data:`FIGURES`, at most ``most``) that print different
    values of one sentence differently: a p95 of 47.73 token/s against a 47.7 token/s promise
    reads ``47.73`` and ``47.7``, not ``47.7`` twice."""
    finite = sorted({float(v) for v in values if v is not None and math.isfinite(v)})
    for figures in range(FIGURES, most + 1):
        texts = {quantity(v, unit, figures=figures) for v in finite}
        if len(texts) == len(finite):
            return figures
    return most


def quantity(value: float | None, unit: str, *, figures: int = FIGURES, absent: str = ABSENT) -> str:
    """An SI float with its unit (``"s"``, ``"s/token"``, ``"B"``, ``"B/s"``, ``"FLOP/s"``,
    ``"FLOP"``, ``"token/s"``, ``"token"``, ``"request/s"``, ``"%"``, ...), scaled for people;
    ``absent`` for None or NaN."""
    special = _not_finite(value, absent)
    if special is not None:
        return special
    assert value is not None
    value = float(value)
    if unit == "%":
        return percent(value, absent=absent)
    if value == 0:
        return f"0 {unit}".rstrip()
    if unit == "s":
        return _ladder(value, _TIME, figures)
    if unit == "s/token":
        return _ladder(value, _TIME_PER_TOKEN, figures)
    if unit in _SCALED:  # "0.5 USD/Mtok", "2.5 USD/hour": the units prices are written in
        factor, shown = _SCALED[unit]
        return f"{_significant(value * factor, figures)} {shown}"
    if unit in _PREFIXED:
        return _ladder(value, ((1.0, unit),) + tuple((f, p + unit) for f, p in reversed(_PREFIXES)), figures)
    return f"{_significant(value, figures)} {unit}".rstrip()


def percent(fraction: float | None, *, signed: bool = False, absent: str = ABSENT) -> str:
    """A fraction as a percent, two significant figures: ``0.0813`` -> ``"8.1%"``;
    ``0.004`` -> ``"0.4%"``; ``1.14`` -> ``"114%"``; ``2e-5`` -> ``"0.002%"``;
    ``0.996`` -> ``"99.6%"`` (near 100 % as many digits as show the side); ``-0.05`` -> ``"-5%"``;
    ``signed=True`` writes ``"+"`` before a positive one (an error, a change)."""
    special = _not_finite(fraction, absent)
    if special is not None:
        return special if special == absent else special + "%"
    assert fraction is not None
    p = abs(float(fraction)) * 100.0
    if not math.isfinite(p):
        return "∞%"
    if p == 0:
        return "0%"
    sign = "-" if fraction < 0 else ("+" if signed else "")
    if p >= 99.5:
        digits = 0
    else:
        digits = max(0, PERCENT_FIGURES - 1 - int(math.floor(math.log10(p))))
    text = f"{p:.{digits}f}"
    # near 100 % (a required efficiency, a ratio of 1) the side matters: 99.6 % is not 100 %
    while float(text) == 100.0 and p != 100.0 and digits < 6:
        digits += 1
        text = f"{p:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{sign}{text}%"


def stated(x: float | None, *, absent: str = ABSENT) -> str:
    """A number someone wrote (an objective, a percentile, a bucket edge), kept as written: six
    significant figures, so ``0.975`` stays ``"0.975"`` and ``0.99999`` never reads ``"1"``; more (up
    to 15) where six would print another number (until stop 47 a ``p99.9999999`` promise read
    ``p100``, and an objective of ``0.9999999`` read ``1``)."""
    if x is None:
        return absent
    if not math.isfinite(x):
        return number(x)
    for figures in range(STATED_FIGURES, 16):
        text = number(x, figures=figures)
        if abs(float(text.replace(",", "")) - x) <= 4 * math.ulp(x):  # it reads back as x
            break
    return text


def stated_percent(fraction: float | None, *, absent: str = ABSENT) -> str:
    """A share someone wrote (an SLO objective, a percentile) as a percent, as written:
    ``0.975`` -> ``"97.5%"`` (:func:`percent` would say ``"98%"``), ``0.9999`` -> ``"99.99%"``."""
    if fraction is None or not math.isfinite(fraction):
        return percent(fraction, absent=absent)
    return f"{stated(fraction * 100.0)}%"


def headroom(fraction: float | None, *, absent: str = ABSENT) -> str:
    """Headroom ``promise / estimate - 1``, signed: ``"+8.1%"`` (slack), ``"-0.4%"`` (a miss), ``"0%"``."""
    special = _not_finite(fraction, absent)
    if special is not None:
        return special if special == absent else ("+" if special == "∞" else "") + special + "%"
    assert fraction is not None
    if fraction == 0:
        return "0%"
    return ("+" if fraction > 0 else "-") + percent(abs(fraction))


def plural(n: float, noun: str, plural_form: str | None = None) -> str:
    """``noun`` as ``n`` takes it: singular only for exactly one."""
    if n == 1:
        return noun
    return plural_form if plural_form is not None else noun + "s"


def count(n: float, noun: str, plural_form: str | None = None) -> str:
    """``n`` and its noun: ``"1 replica"``, ``"3 replicas"``, ``"0 runs"``, ``"2.5 tokens"``."""
    return f"{number(n)} {plural(n, noun, plural_form)}"
