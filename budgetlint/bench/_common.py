"""Shared reader helpers: tolerant JSON, numbers, units, problems."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from .measurement import Metric, Problem, label_percent, percent_label

# Problem codes (stable; the CLI maps them to BL4xx findings)
EMPTY = "bench-empty"
TRUNCATED = "bench-truncated"
MALFORMED = "bench-malformed"
DUPLICATE_KEY = "bench-duplicate-key"
NAN = "bench-nan"
UNITLESS = "bench-unitless"
UNKNOWN_FORMAT = "bench-unknown-format"
NOT_MEASUREMENT = "bench-not-a-measurement"
NO_SUCCESS = "bench-no-successful-requests"
IO = "bench-io"
SCHEMA = "bench-schema"
IMPOSSIBLE = "bench-impossible-value"
LIMIT = "bench-limit"

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


class Ctx:
    """Per-file context: the path and the problems found so far."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []
        self.nan_tokens = 0
        self.nan_reported = 0

    def problem(self, message: str, code: str, line: int | None = None) -> None:
        found = Problem(self.path, line, message, code)
        if found not in self.problems[-8:]:  # a key read twice by one reader is said once
            self.problems.append(found)


@dataclass
class Doc:
    """One top-level JSON value and the (1-based) line it starts on."""

    value: Any
    line: int


_NEXT_VALUE = re.compile(r"\n(?=[{\[])")

#: at most this many top-level JSON values are read from one file (JSONL)
MAX_JSON_VALUES = 10_000
#: malformed values reported one by one; after this many, the file is not read further
MAX_MALFORMED = 20


class _Lines:
    """Line numbers of increasing offsets in ``text``, counted once (linear overall)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, pos: int) -> int:
        if pos < self.pos:  # never happens in a forward scan; stay correct anyway
            return self.text.count("\n", 0, pos) + 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def parse_json_stream(text: str, ctx: Ctx) -> list[Doc]:
    """Parse one JSON value, or several (JSONL / concatenated objects).

    ``NaN``/``Infinity``/``-Infinity`` are accepted by the parser but counted
    (``parse_constant``) so readers can refuse NaN where they read values.
    A value that cannot be parsed is reported (truncated or malformed) and the
    reader resumes at the next line. Line numbers are counted in one forward
    pass (linear in the file), at most :data:`MAX_JSON_VALUES` values are
    read and at most :data:`MAX_MALFORMED` malformed ones reported; a limit
    reached is a ``bench-limit`` problem.
    """

    def constant(token: str) -> float:
        if token == "NaN":
            ctx.nan_tokens += 1
            return math.nan
        return math.inf if token == "Infinity" else -math.inf

    def integer(token: str) -> float | int:
        # an integer beyond float range (or Python's int-parsing digit limit)
        # reads as +-inf, so readers report "is infinite" instead of raising
        # OverflowError in float() later (found by fuzzing)
        if len(token.lstrip("-")) > 308:
            return -math.inf if token.startswith("-") else math.inf
        return int(token)

    duplicated: list[str] = []

    def pairs(items: list) -> dict:
        # JSON readers keep the last of two equal keys, silently: which one the tool meant is
        # not knowable, so say so (issue 24); the value read stays the last, as before
        value = dict(items)
        if len(value) != len(items):
            seen: set = set()
            duplicated.extend(k for k, _ in items if k in seen or seen.add(k))
        return value

    decoder = json.JSONDecoder(parse_constant=constant, parse_int=integer, object_pairs_hook=pairs)
    docs: list[Doc] = []
    lines = _Lines(text)
    malformed = 0
    pos = 0
    n = len(text)
    end_of_content = len(text.rstrip())
    while True:
        while pos < n and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= n:
            break
        if len(docs) >= MAX_JSON_VALUES:
            ctx.problem(f"more than {MAX_JSON_VALUES:,} JSON values in one file; the first "
                        f"{MAX_JSON_VALUES:,} are read, the rest from line {lines.at(pos)} is not",
                        LIMIT, lines.at(pos))
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            line = lines.at(pos)
            malformed += 1
            if malformed > MAX_MALFORMED:
                ctx.problem(f"more than {MAX_MALFORMED} values that are not valid JSON; the file is not "
                            f"read past line {line}", LIMIT, line)
                break
            if exc.pos >= end_of_content - 1 or exc.msg.startswith("Unterminated string"):
                ctx.problem(
                    f"JSON ends in the middle of the value that starts at line {line} "
                    f"(truncated file?): {exc.msg}",
                    TRUNCATED,
                    line,
                )
            else:
                bad_line = lines.at(exc.pos) if exc.pos >= pos else line
                column = exc.pos - text.rfind("\n", 0, exc.pos)
                ctx.problem(
                    f"not valid JSON at line {bad_line} column {column}: {exc.msg}",
                    MALFORMED,
                    bad_line,
                )
            # resume at the next line that starts a new top-level value (JSONL)
            nxt = _NEXT_VALUE.search(text, max(exc.pos, pos + 1))
            if nxt is None:
                break
            pos = nxt.start() + 1
            continue
        docs.append(Doc(value, lines.at(pos)))
        if duplicated:
            names = ", ".join(repr(k) for k in dict.fromkeys(duplicated[:5]))
            ctx.problem(f"the value at line {lines.at(pos)} repeats the key {names}: JSON keeps the last, and "
                        f"which one the tool wrote last is not a measurement of anything", DUPLICATE_KEY,
                        lines.at(pos))
            duplicated.clear()
        pos = end
    return docs


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
    if raw is None or isinstance(raw, bool):
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
            except ValueError:
                return None
            if text.lower() == "nan":
                value = math.nan
    elif isinstance(raw, (int, float)):
        try:
            value = float(raw)
        except OverflowError:  # an integer beyond float range, e.g. 1e400 written out
            value = math.inf if raw > 0 else -math.inf
    else:
        return None
    if math.isnan(value):
        ctx.nan_reported += 1
        ctx.problem(f"{what} is NaN; the value is ignored (not measured)", NAN, line)
        return None
    if math.isinf(value) and not allow_inf:
        ctx.problem(f"{what} is infinite; the value is ignored", NAN, line)
        return None
    return value


#: metrics for which no statistic can be zero: nothing answers in no time
_NEVER_ZERO = ("ttft", "e2e")
#: for TPOT/ITL a zero is impossible for the mean and from this percentile up
#: (gaps between chunks delivered together may be 0, a slow tail of them may not)
_ZERO_TAIL_PERCENT = 90.0


def _zero_impossible(metric: str, stat: str | None) -> bool:
    if metric in _NEVER_ZERO:
        return True
    if stat is None or stat == "mean":
        return True
    pct = label_percent(stat)
    return pct is not None and pct >= _ZERO_TAIL_PERCENT


def zero_impossible(metric: str, stat: str | None) -> bool:
    """Whether a zero ``stat`` (``"mean"``, ``"p99"``) of ``metric`` cannot be real."""
    return _zero_impossible(metric, stat)


def check_latency(
    ctx: Ctx,
    value: float | None,
    metric: str,
    what: str,
    line: int | None = None,
    *,
    stat: str | None = None,
) -> float | None:
    """``value`` if it can be a latency of ``metric`` (ttft, tpot, itl, e2e), else None.

    The shared gate for every latency statistic a reader keeps (``stat`` is
    ``"mean"`` or a canonical percentile label). A negative latency is never
    real; zero is impossible for TTFT and E2E (a response takes time) and for
    the mean or a p90+ of TPOT/ITL. Either is a ``bench-impossible-value``
    problem and the value is dropped ("not measured"), never clamped.
    """
    if value is None:
        return None
    if value < 0:
        ctx.problem(
            f"{what} is {value:g}: a latency cannot be negative; the value is ignored "
            f"(not measured)",
            IMPOSSIBLE,
            line,
        )
        return None
    if value == 0 and _zero_impossible(metric, stat):
        label = "" if stat is None else f" {stat}"
        ctx.problem(
            f"{what} is 0: a{label} {metric.upper()} of zero is impossible; the value is "
            f"ignored (not measured)",
            IMPOSSIBLE,
            line,
        )
        return None
    return value


def check_samples(
    ctx: Ctx, values: list[float], metric: str, what: str, line: int | None = None
) -> list[float]:
    """Per-request values of ``metric`` without the impossible ones (one problem for all).

    Per request, zero is impossible only for TTFT and E2E (a one-token reply
    has no decode time, two chunks read together have a zero gap).
    """
    bad = [v for v in values if v < 0 or (v == 0 and metric in _NEVER_ZERO)]
    if not bad:
        return values
    negative = sum(1 for v in bad if v < 0)
    parts = []
    if negative:
        parts.append(f"{negative} negative (lowest {min(bad):g})")
    if len(bad) > negative:
        parts.append(f"{len(bad) - negative} zero")
    ctx.problem(
        f"{what}: {' and '.join(parts)} of {len(values)} per-request {metric.upper()} values "
        f"are impossible latencies; those requests' values are ignored",
        IMPOSSIBLE,
        line,
    )
    return [v for v in values if not (v < 0 or (v == 0 and metric in _NEVER_ZERO))]


def integer(ctx: Ctx, obj: Any, key: str, line: int | None = None) -> int | None:
    """A count (requests, prompts) at ``obj[key]``; a negative count is a problem and is ignored."""
    value = num(ctx, obj, key, line)
    if value is None or not value.is_integer():
        return None
    if value < 0:
        ctx.problem(f"{key} is {value:g}: a count cannot be negative; the value is ignored (not measured)",
                    IMPOSSIBLE, line)
        return None
    return int(value)


def rate(ctx: Ctx, value: float | None, what: str, line: int | None = None) -> float | None:
    """``value`` if it can be a throughput (tokens/s, requests/s): a negative one is a problem, ignored."""
    if value is not None and value < 0:
        ctx.problem(f"{what} is {value:g}: a throughput cannot be negative; the value is ignored (not measured)",
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


def finish_nan(ctx: Ctx) -> None:
    """Report NaN tokens that sat in fields no reader looked at."""
    if ctx.nan_tokens and not ctx.nan_reported:
        ctx.problem(
            f"file contains {ctx.nan_tokens} NaN value(s) in fields budgetlint does not read",
            NAN,
        )


def percentile_table(
    ctx: Ctx,
    stats: dict[str, Any],
    label_to_percent: Callable[[str], float | None],
    scale: float,
    what: str,
    line: int | None = None,
    *,
    metric: str | None = None,
) -> tuple[dict[str, float], float | None]:
    """Generic ``{label: value}`` distribution -> (canonical percentiles, mean) in seconds.

    With ``metric`` (ttft, tpot, itl, e2e) each value goes through
    :func:`check_latency`.
    """
    percentiles: dict[str, float] = {}
    mean = None
    for key, raw in stats.items():
        if key in ("mean", "avg", "average"):
            v = to_float(ctx, raw, f"{what}.{key}", line)
            if metric is not None:
                v = check_latency(ctx, v, metric, f"{what}.{key}", line, stat="mean")
            mean = None if v is None else v * scale
            continue
        pct = label_to_percent(key)
        if pct is None:
            continue
        label = percent_label(pct)
        v = to_float(ctx, raw, f"{what}.{key}", line)
        if metric is not None:
            v = check_latency(ctx, v, metric, f"{what}.{key}", line, stat=label)
        if v is None:
            continue
        # an explicit pNN wins over "median" when both are present
        if label in percentiles and key == "median":
            continue
        percentiles[label] = v * scale
    return percentiles, mean


def percent_style_label(key: str) -> float | None:
    """``p99``, ``p99.9``, ``p0.1``, ``median`` (percent numbers)."""
    return label_percent(key)


_FRACTION_LABEL = re.compile(r"^p(\d+)$")


def fraction_style_label(key: str) -> float | None:
    """guidellm's labels: digits are the fraction's decimals (p999 = 0.999, p05 = 0.05)."""
    if key == "median":
        return 50.0
    m = _FRACTION_LABEL.match(key)
    if not m:
        return None
    digits = m.group(1)
    return int(digits) * 100 / 10 ** len(digits)


def build_metric(
    percentiles: dict[str, float],
    mean: float | None,
    definition: str,
    source: str,
    count: int | None = None,
    notes: tuple[str, ...] = (),
) -> Metric | None:
    if not percentiles and mean is None:
        return None
    return Metric(
        percentiles=dict(sorted(percentiles.items(), key=lambda kv: label_percent(kv[0]) or 0.0)),
        mean=mean,
        definition=definition,
        method="reported",
        count=count,
        source=source,
        notes=notes,
    )


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


#: run conditions that count or measure something: none can be negative
_NON_NEGATIVE_CONDITIONS = ("devices", "concurrency", "request_rate", "prompt_tokens", "output_tokens",
                            "num_requests", "successful_requests")


def refuse_impossible(ctx: Ctx, measurements: list[Any]) -> list[Any]:
    """Every reader's measurements without negative throughputs or counts.

    A negative ``output_throughput``, ``request_throughput``, request count or
    token length is never real: each is a ``bench-impossible-value`` problem
    naming the run and the field, and the value is dropped (not measured),
    never clamped. (Readers already refuse negative latencies: check_latency.)
    """
    import dataclasses

    out = []
    for m in measurements:
        changes: dict[str, Any] = {}
        run = f"{m.label}: " if m.label else ""
        for name in ("output_throughput", "request_throughput"):
            value = getattr(m, name)
            if value is not None and value < 0:
                ctx.problem(f"{run}{name} is {value:g}: a throughput cannot be negative; the value is "
                            "ignored (not measured)", IMPOSSIBLE)
                changes[name] = None
        cond = m.conditions
        dropped = {}
        for name in _NON_NEGATIVE_CONDITIONS:
            value = getattr(cond, name)
            if value is not None and value < 0:
                source = cond.sources.get(name, name)
                ctx.problem(f"{run}{source} is {value:g}: {name.replace('_', ' ')} cannot be negative; the value "
                            "is ignored (unknown)", IMPOSSIBLE)
                dropped[name] = None
        if dropped:
            changes["conditions"] = dataclasses.replace(
                cond, **dropped,
                provenance={k: v for k, v in cond.provenance.items() if k not in dropped},
                sources={k: v for k, v in cond.sources.items() if k not in dropped})
        out.append(dataclasses.replace(m, **changes) if changes else m)
    return out


_VLLM_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$")


def iso_date(raw: Any) -> str | None:
    """A file's date as ISO 8601, or None when it is not one.

    ``20250530-194738`` (vLLM, local time: no zone) -> ``2025-05-30T19:47:38``;
    a Unix timestamp (number) -> UTC ``...+00:00``; an ISO string is kept.
    """
    import datetime as dt

    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        if not math.isfinite(raw) or not (0 < raw < 1e11):
            return None
        return dt.datetime.fromtimestamp(float(raw), dt.timezone.utc).replace(microsecond=0).isoformat()
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    m = _VLLM_DATE.match(text)
    try:
        if m:
            return dt.datetime(*map(int, m.groups())).isoformat()
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return None


#: client backend names that are serving engines (others, like "openai", say nothing of it)
ENGINE_BACKENDS = {
    "vllm": "vllm",
    "sglang": "sglang",
    "sglang-native": "sglang",
    "sglang-oai": "sglang",
    "tgi": "tgi",
    "lmdeploy": "lmdeploy",
    "trt": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "deepspeed-mii": "deepspeed-mii",
    "scalellm": "scalellm",
}

#: --metadata / config keys that name the engine version
ENGINE_VERSION_KEYS = ("engine_version", "vllm_version", "sglang_version", "server_version")
