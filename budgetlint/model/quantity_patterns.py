"""The JSON Schema ``pattern`` of each kind of quantity, for tools other than budgetlint.

budgetlint reads quantities with its own parser (``model/units.py``) and
reports a missing unit (BL006) or a unit of the wrong dimension (BL005) in
its own words. Editors and schema tools (yaml-language-server,
check-jsonschema) see only the schemas: each quantity key refers to a
``$defs`` entry of its kind whose ``pattern`` accepts one number and one unit
of that dimension, so ``ttft: 300`` and ``e2e: "3.35 TB"`` fail there too.
The definitions carry ``x-budgetlint-quantity`` (the kind), by which
``files/schema.py`` leaves those two errors to the parser's better messages.

The patterns accept the forms people write (``"250 ms"``, ``"0.4s"``,
``"3.35 TB/s"``, ``"989 TFLOP/s"``, ``"20 tokens/sec"``, ``"300 request/min"``):
an unsigned number, one unit name from ``units.txt`` (with an SI or IEC prefix)
or one name per another. budgetlint's parser reads a little more (powers,
``*``); tests/catalog/test_schema_files.py holds the two to the same answer on
every prefix x unit pair. The regular expressions use only the subset shared by
ECMA-262 and Python's ``re``.
"""

from __future__ import annotations

#: SI and IEC prefixes of units.txt, symbols and names
PREFIXES = ("n", "µ", "μ", "u", "m", "k", "K", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi",
            "nano", "micro", "milli", "kilo", "mega", "giga", "tera", "peta", "exa",
            "kibi", "mebi", "gibi", "tebi", "pebi")
#: unit names of each base dimension (units.txt)
NAMES = {
    "time": ("s", "sec", "secs", "second", "seconds", "min", "minute", "minutes", "h", "hr", "hour", "hours"),
    "information": ("B", "byte", "bytes", "bit", "bits"),
    "compute": ("FLOP", "flop", "FLOPs", "flops", "OP", "op", "OPs", "ops"),
    "token": ("token", "tok", "tokens", "toks"),
    "request": ("request", "req", "requests", "reqs"),
    "currency": ("USD", "usd"),
    "energy": ("J", "joule", "joules"),
    "power": ("W", "watt", "watts"),
}
NUMBER = r"\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?"


def _alt(items: tuple[str, ...]) -> str:
    return "(" + "|".join(sorted(items, key=lambda s: (-len(s), s))) + ")"


def _unit(dimension: str) -> str:
    return _alt(PREFIXES) + "?" + _alt(NAMES[dimension])


def _per(top: str, bottom: str) -> str:
    return f"{_unit(top)}\\s*/\\s*{_unit(bottom)}"


#: each kind of model/units.py: the unit part of its pattern
UNITS = {
    "time": _unit("time"),
    "information": _unit("information"),
    "bandwidth": _per("information", "time"),
    "compute_rate": f"({_per('compute', 'time')}|{_alt(PREFIXES)}?FLOPS)",
    "pace": _per("token", "time"),
    "time_per_token": _per("time", "token"),
    "tokens": _unit("token"),
    "request_rate": _per("request", "time"),
    "price_rate": _per("currency", "time"),
    "cost_per_token": _per("currency", "token"),
    "power": f"({_per('energy', 'time')}|{_unit('power')})",
}


def pattern(*kinds: str) -> str:
    """The anchored pattern of a quantity of one of ``kinds``."""
    units = UNITS[kinds[0]] if len(kinds) == 1 else "(" + "|".join(UNITS[k] for k in kinds) + ")"
    return f"^\\s*{NUMBER}\\s*{units}\\s*$"


#: the ``$defs`` name of each quantity definition: its kinds and its description
DEFS: dict[str, tuple[tuple[str, ...], str]] = {
    "time": (("time",), 'A time: a number and a unit, such as "250 ms" or "1.5 s".'),
    "time_per_token": (("time_per_token", "time"),
                       'A time per output token, such as "50 ms" or "50 ms/token".'),
    "pace": (("pace",), 'A pace, such as "20 token/s".'),
    "request_rate": (("request_rate",), 'A request rate, such as "6 request/s" or "300 request/min".'),
    "throughput": (("request_rate", "pace"), 'A request or token rate, such as "20 request/s" or "5000 token/s".'),
    "information": (("information",), 'An amount of memory, such as "80 GB" or "128 KiB".'),
    "bandwidth": (("bandwidth",), 'A bandwidth, such as "3.35 TB/s".'),
    "compute_rate": (("compute_rate",), 'A compute rate, such as "989 TFLOP/s".'),
    "tokens": (("tokens",), 'A token count with its unit, such as "1800 token".'),
    "price_rate": (("price_rate",), 'A price per device-hour, such as "2.50 USD/hour" (docs/cost.md).'),
    "cost_per_token": (("cost_per_token",), 'A cost per output token, such as "0.50 USD/Mtok" (docs/cost.md).'),
    "power": (("power",), 'A power per device, such as "700 W" (docs/cost.md).'),
}


def definition(name: str) -> dict:
    """The ``$defs`` entry ``name`` as the schemas hold it."""
    kinds, description = DEFS[name]
    return {"type": "string", "pattern": pattern(*kinds), "x-budgetlint-quantity": "|".join(kinds),
            "description": description}
