"""Quantities with units: one small pint registry, parsed at the edge only.

pint's default registry treats bytes as dimensionless, has no FLOP and no
token, and costs ~0.25 s to build. Ours (``units.txt``) has [time],
[information], [compute] and [token] with SI and IEC prefixes, builds in a few
milliseconds, and is created once, lazily, on first use.

Inside budgetlint every value is a plain float in SI units: seconds, bytes,
bytes/s, FLOP, FLOP/s, tokens, tokens/s.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
}

_STARTS_WITH_NUMBER = re.compile(r"^[-+]?(\d|\.\d)")
_NUMBER_ONLY = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")


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


def parse_quantity(value: Any, *kinds: str) -> tuple[float, str]:
    """Parse ``value`` (a string with a unit) as one of ``kinds``.

    Returns ``(si_float, kind)``. Raises :class:`UnitError` for a bare
    number, an unknown unit, a wrong dimension or a non-finite value.
    """
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
            "invalid", f"expected {expected}; found {value!r}, which does not start with a number"
        )
    reg = registry()
    try:
        q = reg.Quantity(text)
    except Exception as exc:  # pint raises several types: undefined unit, syntax
        name = getattr(exc, "unit_names", None) or getattr(exc, "args", [""])[0]
        if isinstance(name, (list, tuple)):
            name = ", ".join(str(n) for n in name)
        raise UnitError(
            "unknown-unit",
            f"expected {expected}; could not read {value!r} (unknown unit or syntax: {name})",
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
            return magnitude, kind
    if not dims:
        raise UnitError("missing-unit", f"expected {expected}; found {value!r}, which has no unit")
    found = " ".join(f"{k}^{v}" if v != 1 else k for k, v in sorted(dims.items()))
    raise UnitError(
        "wrong-dimension",
        f"expected {expected}; found {value!r}, which is {found.replace('[', '').replace(']', '')}",
    )


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
    """Render an SI float for people: 3.35e12 B/s -> "3.35 TB/s"."""
    unit = KINDS[kind][1]
    if kind == "time":
        if abs(value) < 1:
            return f"{value * 1e3:.3g} ms"
        return f"{value:.3g} s"
    if kind in ("pace", "tokens", "time_per_token"):
        if kind == "time_per_token":
            return f"{value * 1e3:.3g} ms/token"
        return f"{value:.3g} {unit}"
    prefixes = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")]
    for factor, prefix in prefixes:
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"
