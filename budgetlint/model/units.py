"""Quantities with units: one small pint registry, parsed at the edge only.

pint's default registry treats bytes as dimensionless, has no FLOP and no
token, and costs ~0.25 s to build. Ours (``units.txt``) has [time],
[information], [compute] and [token] with SI and IEC prefixes, builds in a few
milliseconds, and is created once, lazily, on first use.

Inside budgetlint every value is a plain float in SI units: seconds, bytes,
bytes/s, FLOP, FLOP/s, tokens, tokens/s; money in USD (USD/s, USD/token) and
power in W (docs/cost.md).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from budgetlint.text import numbers

#: Each kind of quantity: its dimensionality (exponents of the base
#: dimensions), the SI unit the float is returned in, and examples of valid
#: units to put in messages.
KINDS: dict[str, tuple[dict[str, int], str, str]] = {
    "time": ({"[time]": 1}, "s", '"250 ms", "0.4 s"'),
    "information": ({"[information]": 1}, "B", '"80 GB", "128 KiB"'),
    "bandwidth": ({"[information]": 1, "[time]": -1}, "B/s", '"3.35 TB/s", "900 GB/s"'),
    "compute_rate": ({"[compute]": 1, "[time]": -1}, "FLOP/s", '"989 TFLOP/s"'),
    "compute": ({"[compute]": 1}, "FLOP", '"140 GFLOP"'),
    "pace": ({"[token]": 1, "[time]": -1}, "token/s", '"20 token/s"'),
    "time_per_token": ({"[time]": 1, "[token]": -1}, "s/token", '"50 ms/token"'),
    "tokens": ({"[token]": 1}, "token", '"1800 token"'),
    "request_rate": ({"[request]": 1, "[time]": -1}, "request/s", '"6 request/s"'),
    # cost and energy (docs/cost.md): a price per device-hour, a cost per output token, a power
    "price_rate": ({"[currency]": 1, "[time]": -1}, "USD/s", '"2.50 USD/hour"'),
    "cost_per_token": ({"[currency]": 1, "[token]": -1}, "USD/token", '"0.50 USD/Mtok"'),
    "power": ({"[energy]": 1, "[time]": -1}, "W", '"700 W"'),
}

#: Human names of the kinds, for messages.
KIND_NAMES = {
    "time": "a time",
    "information": "an amount of memory",
    "bandwidth": "a bandwidth",
    "compute_rate": "a compute rate",
    "compute": "an amount of compute",
    "pace": "a pace",
    "time_per_token": "a time per token",
    "tokens": "a token count",
    "request_rate": "a request rate",
    "price_rate": "a price per device-hour",
    "cost_per_token": "a cost per output token",
    "power": "a power",
}

_STARTS_WITH_NUMBER = re.compile(r"^[-+]?(\d|\.\d)")
_NUMBER_ONLY = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")

# --- the grammar in front of pint: one number and one unit ---
# pint evaluates what it is given as arithmetic: "2 50 ms" is 2 x 50 ms,
# "1..5 s" is 1. x .5 s, "10**10**10 ms" a tower that never finishes, a
# 100,000-letter unit name minutes of prefix matching. A quantity is one
# number and one unit: the unit is names joined by "/" or "*", each with an
# optional one-digit power ("s^-1"). Anything else, or anything longer than
# MAX_QUANTITY_CHARS, is refused here, quoted, before pint sees it.

#: longest quantity text read (the longest legitimate one is ~30 characters)
MAX_QUANTITY_CHARS = 80
#: longest unit name, prefix included ("microseconds" is 12)
MAX_UNIT_NAME_CHARS = 24
#: most names in one unit ("GB/s" is 2, "ms/token" 2)
MAX_UNIT_NAMES = 4
_NUMBER_RE = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NAME_RE = r"[A-Za-zµμ]+"
_TERM_RE = rf"{_NAME_RE}(?:\s*(?:\^|\*\*)\s*[-+]?[1-9])?"
_GRAMMAR = re.compile(rf"^\s*({_NUMBER_RE})\s*({_TERM_RE}(?:\s*[*/]\s*{_TERM_RE})*)\s*$")
_NAMES = re.compile(_NAME_RE)
#: the smallest amount of information that is one: a bit, in bytes
_ONE_BIT = 0.125
# The smallest normal IEEE 754 double (sys.float_info.min): below it a value is subnormal and its
# reciprocal is infinite, so no pace, rate or time there is a number the arithmetic can carry.
_SMALLEST_NORMAL = 2.2250738585072014e-308
_MANTISSA = re.compile(r"^\s*[-+]?(\d*\.?\d*)")


def _quoted(value: str) -> str:
    """``value`` as messages quote it: repr, cut to MAX_QUANTITY_CHARS characters."""
    if len(value) <= MAX_QUANTITY_CHARS:
        return repr(value)
    return repr(value[:MAX_QUANTITY_CHARS]) + f"... ({numbers.number(len(value))} characters)"


def check_grammar(value: str, expected: str) -> None:
    """Raise :class:`UnitError` (invalid) unless ``value`` is one number and one unit."""
    text = value.strip()
    if len(text) > MAX_QUANTITY_CHARS:
        raise UnitError("invalid", f"expected {expected}; found {_quoted(value)}: a quantity is one number "
                        f"and one unit, at most {MAX_QUANTITY_CHARS} characters")
    m = _GRAMMAR.match(text)
    if m is not None:
        names = _NAMES.findall(m.group(2))
        long = [n for n in names if len(n) > MAX_UNIT_NAME_CHARS]
        if long:
            raise UnitError("invalid", f"expected {expected}; found {_quoted(value)}: the unit name "
                            f"{long[0][:MAX_UNIT_NAME_CHARS]!r}... is longer than {MAX_UNIT_NAME_CHARS} "
                            "characters")
        if len(names) <= MAX_UNIT_NAMES:
            return
    raise UnitError("invalid", f"expected {expected}; found {_quoted(value)}, which is not one number and "
                    f"one unit{_why_not(text)}")


def _why_not(text: str) -> str:
    """The most likely typo in a text the grammar refuses, for the message."""
    if re.search(r"\d\s*\.\.", text):
        return " ('..' is not part of a number)"
    if re.search(r"\d\s+[-+]?\.?\d", text):
        return " (two numbers side by side; budgetlint does not multiply them)"
    if re.search(r"\d\s*(\*\*|\^|\*|/|\(|\))\s*[-+]?\.?\d|\(", text):
        return " (arithmetic is not evaluated: write the number itself)"
    if re.search(r"[A-Za-zµμ]\s+[A-Za-zµμ]", text):
        return " (unit names side by side: join them with '/' or '*')"
    return ""


@dataclass(frozen=True)
class UnitError(Exception):
    """A quantity that could not be read: ``reason`` is a stable slug."""

    reason: str  # "missing-unit" | "unknown-unit" | "wrong-dimension" | "invalid"
    message: str

    def __str__(self) -> str:
        return self.message


@functools.lru_cache(maxsize=1)
def registry() -> Any:
    """The one registry of the program, built on first use."""
    import pint

    reg = pint.UnitRegistry(
        str(Path(__file__).with_name("units.txt")),
        autoconvert_offset_to_baseunit=False,
        cache_folder=None,
    )
    return reg


def expected_text(kinds: tuple[str, ...]) -> str:
    return " or ".join(f"{KIND_NAMES[k]} such as {KINDS[k][2]}" for k in kinds)


def _dimensionality(q: Any) -> dict[str, int]:
    return {str(k): int(v) if float(v).is_integer() else float(v) for k, v in q.dimensionality.items()}


# --- fast path: the common "number [prefix]unit[/[prefix]unit]" forms without pint ---
# Importing pint and building the registry costs ~0.3 s, more than the rest of
# a check; nearly every quantity people write is "250 ms", "3.35 TB/s",
# "989 TFLOP/s", "20 token/s", "50 ms/token". Those are read here from the
# tables below, which are built from units.txt itself when this module is
# imported (one source: a unit added there is on the fast path at once);
# anything else, and every error, goes to pint, so messages and unusual forms
# are pint's. tests/properties/test_units_fast_path.py holds the arithmetic to
# pint's, bit for bit.

_DIMENSION = re.compile(r"^\[(\w+)\]$")
_SCALED = re.compile(r"^(?:([0-9.eE*+-]+)\s*\*\s*(\w+)|(\w+)\s*/\s*([0-9.eE*+-]+))$")
_RATIO = re.compile(r"^(\w+)\s*/\s*(\w+)$")
_Unit = tuple[tuple[tuple[str, int], ...], float]


def _number(text: str) -> float:
    """A factor in units.txt: ``1e-9``, ``60``, ``2**10``."""
    base, _, power = text.partition("**")
    return float(base) ** int(power) if power else float(base)


def _fast_tables(path: Path) -> tuple[dict[str, float], dict[str, _Unit], dict[str, _Unit]]:
    """(prefixes, units that take a prefix, units that take none) from units.txt.

    A base unit (``second = [time] = s = ...``) and a ratio of base units
    (``FLOPS = FLOP / second``) take prefixes: their factor is 1, so the
    fast path's arithmetic is pint's. A unit scaled by a number
    (``minute = 60 * second``, ``bit = byte / 8``) is read bare only
    (``2 min``); ``1 kmin`` goes to pint.
    """
    prefixes: dict[str, float] = {}
    units: dict[str, _Unit] = {}
    bare: dict[str, _Unit] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or "=" not in line:
            continue
        parts = [x.strip() for x in line.split("=")]
        name, definition, aliases = parts[0], parts[1], parts[2:]
        if name.endswith("-"):
            factor = _number(definition)
            for symbol in (name, *aliases):
                prefixes[symbol.rstrip("-")] = factor
            continue
        names = [name, *aliases]
        if (m := _DIMENSION.match(definition)):
            entry: _Unit = (((f"[{m.group(1)}]", 1),), 1.0)
            units.update(dict.fromkeys(names, entry))
        elif (m := _RATIO.match(definition)) and m.group(1) in units and m.group(2) in units:
            (num,), (den,) = units[m.group(1)][0], units[m.group(2)][0]
            units.update(dict.fromkeys(names, (tuple(sorted((num, (den[0], -den[1])))), 1.0)))
        elif (m := _SCALED.match(definition)):
            factor_text, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            ref = units.get(unit) or bare.get(unit)
            if ref is None:
                continue
            factor = _number(factor_text)
            scale = ref[1] * factor if m.group(1) else ref[1] / factor
            bare.update(dict.fromkeys(names, (ref[0], scale)))
    prefixes[""] = 1.0
    return prefixes, units, bare


_FAST_PREFIXES, _FAST_UNITS, _FAST_BARE = _fast_tables(Path(__file__).with_name("units.txt"))
_FAST_PREFIX_LENGTHS = sorted({len(p) for p in _FAST_PREFIXES}, reverse=True)
_FAST_FORM = re.compile(
    r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s+([A-Za-zµμ]+)(?:\s*/\s*([A-Za-z]+))?\s*$")
_FAST_KIND_BY_DIMS = {tuple(sorted(dims.items())): kind for kind, (dims, _, _) in KINDS.items()}


def _fast_unit(symbol: str) -> _Unit | None:
    if symbol in _FAST_BARE:
        return _FAST_BARE[symbol]
    for cut in _FAST_PREFIX_LENGTHS:
        prefix, unit = symbol[:cut], symbol[cut:]
        if len(symbol) > cut and prefix in _FAST_PREFIXES and unit in _FAST_UNITS:
            dims, factor = _FAST_UNITS[unit]
            return dims, _FAST_PREFIXES[prefix] * factor
    return None


#: ISO 4217 codes people write for money other than USD (a hint in the unknown-unit message)
_CURRENCY_CODE = re.compile(r"(?<![A-Za-z])(EUR|GBP|JPY|CNY|RMB|INR|CHF|CAD|AUD|KRW|SGD|HKD|SEK|NOK|DKK|BRL)(?![A-Za-z])")


@functools.lru_cache(maxsize=8192)
def _fast_parse(text: str) -> tuple[float, str] | None:
    """``(si_float, kind)`` for a common form, else None (the caller asks pint)."""
    m = _FAST_FORM.match(text)
    if m is None:
        return None
    num = _fast_unit(m.group(2))
    den = _fast_unit(m.group(3)) if m.group(3) else ((), 1)
    if num is None or den is None:
        return None
    dims: dict[str, int] = dict(num[0])
    for name, exp in den[0]:
        dims[name] = dims.get(name, 0) - exp
    kind = _FAST_KIND_BY_DIMS.get(tuple(sorted((k, v) for k, v in dims.items() if v)))
    if kind is None:
        return None
    # pint's order of operations, for bit-identical floats: equal scales
    # cancel, then factor = num_scale * den_scale ** -1, then value * factor.
    factor: float = 1
    if num[1] != den[1]:
        factor = factor * num[1]
        factor = factor * den[1] ** -1
    magnitude = float(m.group(1)) * factor
    if not math.isfinite(magnitude):
        return None
    return magnitude, kind


def parse_quantity(value: Any, *kinds: str) -> tuple[float, str]:
    """Parse ``value`` (a string with a unit) as one of ``kinds``.

    Returns ``(si_float, kind)``. Raises :class:`UnitError` for a bare
    number, an unknown unit, a wrong dimension or a non-finite value.
    """
    if isinstance(value, str) and len(value) <= MAX_QUANTITY_CHARS:
        fast = _fast_parse(value)
        if fast is not None and fast[1] in kinds:
            return _at_least_a_bit(_representable(fast, value), value)
    expected = expected_text(kinds)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UnitError("invalid", f"expected {expected}; found {type(value).__name__} {value!r}")
    if isinstance(value, (int, float)) or _NUMBER_ONLY.match(value):
        raise UnitError(
            "missing-unit",
            f"expected {expected}; found the bare number {value!r} with no unit",
        )
    text = value.strip()
    if not text:
        raise UnitError("invalid", f"expected {expected}; found an empty string")
    if not _STARTS_WITH_NUMBER.match(text):
        raise UnitError(
            "invalid", f"expected {expected}; found {_quoted(value)}, which does not start with a number"
        )
    check_grammar(value, expected)
    reg = registry()
    try:
        q = reg.Quantity(text)
    except Exception as exc:  # pint raises several types: undefined unit, syntax
        # (pint may raise an exception without args: an AssertionError for "0×", found by fuzzing)
        name = getattr(exc, "unit_names", None) or (exc.args[0] if exc.args else type(exc).__name__)
        if isinstance(name, (list, tuple)):
            name = ", ".join(str(n) for n in name)
        money = ("; USD is the only currency: budgetlint converts none (docs/cost.md)"
                 if _CURRENCY_CODE.search(text) else "")
        raise UnitError(
            "unknown-unit",
            f"expected {expected}; could not read {value!r} (unknown unit or syntax: {name}){money}",
        ) from None
    if not hasattr(q, "dimensionality"):
        raise UnitError("missing-unit", f"expected {expected}; found {value!r} with no unit")
    dims = _dimensionality(q)
    for kind in kinds:
        want, si_unit, _ = KINDS[kind]
        if dims == want:
            magnitude = float(q.to(si_unit).magnitude)
            if not math.isfinite(magnitude):
                raise UnitError("invalid", f"expected {KIND_NAMES[kind]} that is finite; found {value!r}")
            return _at_least_a_bit(_representable((magnitude, kind), value), value)
    if not dims:
        raise UnitError("missing-unit", f"expected {expected}; found {value!r}, which has no unit")
    raise UnitError("wrong-dimension", f"expected {expected}; found {value!r}, which is {_dimension_words(dims)}")


def _representable(parsed: tuple[float, str], value: str) -> tuple[float, str]:
    """Refuse a value a float cannot carry: subnormal, or a non-zero text that rounded to 0.0
    (``"9.7e-5021495230 minutes"``); either would become an infinity one division later."""
    magnitude, kind = parsed
    if magnitude == 0:
        m = _MANTISSA.match(value)
        if not (m and re.search(r"[1-9]", m.group(1))):
            return parsed  # a zero written as zero
    elif abs(magnitude) >= _SMALLEST_NORMAL:
        return parsed
    raise UnitError("invalid", f"expected {KIND_NAMES[kind]} that is 0 or at least 2.2e-308 in SI units "
                    f"(the smallest normal double); found {value!r}, too small for a float to carry: "
                    "a typo in the exponent?")


def _at_least_a_bit(parsed: tuple[float, str], value: str) -> tuple[float, str]:
    """An amount of information above zero but below one bit is no amount of memory (``"1e-6 bit"``)."""
    magnitude, kind = parsed
    if kind == "information" and 0 < abs(magnitude) < _ONE_BIT:
        raise UnitError("invalid", f"expected {KIND_NAMES[kind]} of at least one bit; found {value!r} "
                        f"({numbers.stated(magnitude)} B): a typo for a size?")
    return parsed


def _dimension_words(dims: dict[str, Any]) -> str:
    """{"[information]": 1, "[time]": -1} -> "information per time" (a bandwidth)."""
    def part(items: list) -> str:
        return " x ".join(k.strip("[]") + (f"^{abs(v)}" if abs(v) != 1 else "") for k, v in items)

    up = [(k, v) for k, v in sorted(dims.items()) if v > 0]
    down = [(k, v) for k, v in sorted(dims.items()) if v < 0]
    text = part(up) or "1"
    if down:
        text += " per " + part(down)
    for kind, (want, _, _) in KINDS.items():
        if want == dims:
            text += f" ({KIND_NAMES[kind]})"
    return text


_COUNT = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([kKMBGT]?)\s*$")
_COUNT_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def parse_count(value: Any) -> float:
    """A count such as a parameter count: 8030000000, "8.03B", "405M", "8.03e9"."""
    if isinstance(value, bool):
        raise UnitError("invalid", f"expected a count such as 70000000000 or \"70B\"; found {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and (m := _COUNT.match(value)):
        number = float(m.group(1)) * _COUNT_SUFFIX[m.group(2)]
    else:
        raise UnitError(
            "invalid", f'expected a count such as 70000000000, "70B" or "405M"; found {value!r}'
        )
    if not math.isfinite(number):
        raise UnitError("invalid", f"expected a finite count; found {value!r}")
    return number


def format_quantity(value: float, kind: str) -> str:
    """An SI float of ``kind`` for people (``3.35e12`` bandwidth -> ``"3.35 TB/s"``): the one
    formatter, :func:`budgetlint.text.numbers.quantity`, in the kind's SI unit."""
    from budgetlint.text.numbers import quantity

    # a time per token reads as a time ("50 ms"), as a TPOT does in every report
    return quantity(value, "s" if kind == "time_per_token" else KINDS[kind][1])


def format_percent(fraction: float) -> str:
    """``0.0813`` -> ``"8.1%"``, unsigned magnitude (the caller words the direction);
    :func:`budgetlint.text.numbers.percent` holds the rounding rule."""
    from budgetlint.text.numbers import percent

    return percent(abs(fraction))


def format_headroom(fraction: float) -> str:
    """Headroom ``promise / estimate - 1`` signed: :func:`budgetlint.text.numbers.headroom`."""
    from budgetlint.text.numbers import headroom

    return headroom(fraction)
