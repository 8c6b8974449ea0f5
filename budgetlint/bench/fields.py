"""Reading one field of a benchmark file: numbers (NaN and infinity refused), counts, rates, paths, units."""

from __future__ import annotations

import math
from typing import Any

from .problems import IMPOSSIBLE, NAN, SCHEMA, Ctx
from budgetlint.text import numbers


#: seconds per unit, for unit fields and key suffixes
TIME_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "msec": 1e-3,
    "millisecond": 1e-3,
    "milliseconds": 1e-3,
    "nanoseconds": 1e-9,
    "microseconds": 1e-6,
}


def num(
    ctx: Ctx,
    obj: Any,
    key: str,
    line: int | None = None,
    *,
    allow_inf: bool = False,
    what: str | None = None,
) -> float | None:
    """A finite float at ``obj[key]`` (numbers or numeric strings), else None.

    NaN (and infinity unless ``allow_inf``) is reported as a problem.
    """
    if not isinstance(obj, dict) or key not in obj:
        return None
    return to_float(ctx, obj[key], what or key, line, allow_inf=allow_inf)


def to_float(
    ctx: Ctx, raw: Any, what: str, line: int | None = None, *, allow_inf: bool = False
) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool):  # JSON true / false where a number belongs: said, not read as absent
        ctx.problem(f"{what} is {'true' if raw else 'false'}: expected a number; the value is ignored (not measured)",
                    SCHEMA, line)
        return None
    if isinstance(raw, str):
        text = raw.strip().replace(",", "")
        if text.lower() in ("inf", "infinity", "+inf"):
            value = math.inf
        elif text.lower() in ("", "n/a", "na", "none", "null"):
            return None
        else:
            try:
                value = float(text)
            except ValueError:  # until stop 47 read as absent, in silence
                ctx.problem(f"{what} is the text {printable_excerpt(raw)}: expected a number; the value is ignored "
                            "(not measured)", SCHEMA, line)
                return None
            if text.lower() == "nan":
                value = math.nan
    elif isinstance(raw, (int, float)):
        try:
            value = float(raw)
        except OverflowError:  # an integer beyond float range, e.g. 1e400 written out
            value = math.inf if raw > 0 else -math.inf
    else:  # a list or an object where a number belongs (until stop 47 read as absent, in silence)
        ctx.problem(f"{what} is {'a list' if isinstance(raw, list) else 'an object'}: expected a number; the value "
                    "is ignored (not measured)", SCHEMA, line)
        return None
    if math.isnan(value):
        ctx.nan_reported += 1
        ctx.problem(f"{what} is NaN; the value is ignored (not measured)", NAN, line)
        return None
    if math.isinf(value) and not allow_inf:
        ctx.problem(f"{what} is infinite; the value is ignored", NAN, line)
        return None
    return value


def printable_excerpt(text: str, most: int = 40) -> str:
    """``text`` quoted for a message, cut at ``most`` characters (a field may hold a whole document)."""
    return repr(text if len(text) <= most else text[:most] + "...")


#: the most requests one benchmark run's count may say: a billion, eleven days at a thousand a second
#: (a ``completed`` of 10^30 went on into the order statistics and ended the run: MemoryError, stop 47)
MAX_COUNT = 10**9


def integer(ctx: Ctx, obj: Any, key: str, line: int | None = None) -> int | None:
    """A count (requests, prompts) at ``obj[key]``; a negative count, or one above :data:`MAX_COUNT`, is a
    problem and is ignored."""
    value = num(ctx, obj, key, line)
    if value is None or not value.is_integer():
        return None
    if value < 0:
        ctx.problem(f"{key} is {numbers.stated(value)}: a count cannot be negative; the value is ignored (not measured)",
                    IMPOSSIBLE, line)
        return None
    if value > MAX_COUNT:
        ctx.problem(f"{key} is {numbers.stated(value)}: expected a count of at most {numbers.number(MAX_COUNT)} "
                    f"requests in one run; the value is ignored (not measured)", IMPOSSIBLE, line)
        return None
    return int(value)


def rate(ctx: Ctx, value: float | None, what: str, line: int | None = None) -> float | None:
    """``value`` if it can be a throughput (tokens/s, requests/s): a negative one is a problem, ignored."""
    if value is not None and value < 0:
        ctx.problem(f"{what} is {numbers.stated(value)}: a throughput cannot be negative; the value is ignored (not measured)",
                    IMPOSSIBLE, line)
        return None
    return value


def dig(obj: Any, *path: str) -> Any:
    """``obj[p0][p1]...`` or None."""
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def first_path(obj: Any, paths: list[tuple[str, ...]]) -> tuple[Any, str | None]:
    """The first non-null value among dotted paths, and the path used."""
    for path in paths:
        value = dig(obj, *path)
        if value is not None and value != [] and value != "":
            return value, ".".join(path)
    return None, None


def mean_lengths_from_totals(ctx: Any, obj: Any, conditions: Any, completed: Any,
                             line: Any) -> tuple[float | None, float | None]:
    """Mean prompt and output lengths as ``total_*_tokens / completed`` (vLLM, SGLang).

    Sets them on ``conditions`` as inferred and returns them (None when absent).
    """
    from .measurement import INFERRED

    if not completed:
        return None, None
    means = []
    for field_name, key in (("prompt_tokens", "total_input_tokens"), ("output_tokens", "total_output_tokens")):
        total = num(ctx, obj, key, line)
        mean = total / completed if total is not None else None
        if mean is not None:
            conditions.set(field_name, mean, INFERRED, f"{key} / completed")
        means.append(mean)
    return means[0], means[1]
