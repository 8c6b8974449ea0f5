"""Benchmark result readers: tool output files -> :class:`Measurement`.

``read_benchmark(path, fmt=None)`` auto-detects the format from the content
(``fmt`` forces one by name) and never raises on bad input: problems come back
as :class:`Problem` values. ``to_native``/``from_native`` convert to and from
budgetlint's native format (``schemas/benchmark.schema.json``).

Importing this package is cheap: readers load on first use and jsonschema
only when a native document is validated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Union

from .measurement import (
    METRIC_NAMES,
    Conditions,
    Measurement,
    Metric,
    Problem,
)
from budgetlint.text import numbers

__all__ = [
    "METRIC_NAMES",
    "Conditions",
    "Measurement",
    "Metric",
    "Problem",
    "FORMAT_NAMES",
    "from_native",
    "read_benchmark",
    "to_native",
]

def __getattr__(name: str) -> Any:
    """``FORMAT_NAMES``: every name ``--bench-format`` accepts, from the reader registry
    (:data:`budgetlint.bench.detect.READERS`), imported only when asked for."""
    if name == "FORMAT_NAMES":
        from .detect import FORMATS

        return tuple(FORMATS)
    raise AttributeError(name)


#: benchmark files larger than this are refused before reading (bytes; 64 MiB).
#: The config key ``max-bench-size`` (MiB) changes it; see docs/limits.md.
MAX_BENCH_BYTES = 64 * 1024 * 1024


def read_benchmark(
    path: Union[str, Path], fmt: str | None = None, *, max_bytes: int | None = None
) -> tuple[list[Measurement], list[Problem]]:
    """Read one benchmark file of at most ``max_bytes`` (default :data:`MAX_BENCH_BYTES`).

    Returns the measurements found (one per run / load point) and the problems
    (malformed, truncated, empty, NaN, unit-less, unknown format, too large,
    not a regular file). Never raises on bad input, never blocks on a pipe and
    never reads more than the limit.
    """
    from budgetlint.files import fs

    from .plausibility import refuse_impossible
    from .problems import IO, LIMIT, Ctx
    from .detect import read_text
    from .measurement import complete_record

    p = Path(path)
    ctx = Ctx(str(path))
    limit = MAX_BENCH_BYTES if max_bytes is None else max_bytes
    try:
        data = fs.read_regular(p, limit)
    except fs.NotRegular as exc:
        ctx.problem(f"cannot read the file: it is {exc.kind}, not a regular file", IO)
        return [], ctx.problems
    except fs.TooLarge as exc:
        ctx.problem(f"file is {_mib(exc.size)}; benchmark files are read up to {_mib(limit)} "
                    "(config key max-bench-size); not read", LIMIT)
        return [], ctx.problems
    except OSError as exc:
        ctx.problem(f"cannot read the file: {exc.strerror or exc}", IO)
        return [], ctx.problems
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        ctx.problem(f"not UTF-8 text (byte {exc.start}): not a benchmark result file", IO)
        return [], ctx.problems
    try:
        measurements = read_text(text, p, ctx, fmt)
        measurements = [complete_record(m) for m in measurements]
    except RecursionError:
        ctx.problem("JSON nested too deeply", "bench-malformed")
        measurements = []
    return [_without_vanishing(m, ctx) for m in refuse_impossible(ctx, measurements)], ctx.problems


#: a latency below this (seconds) is no measurement: it rounds to zero at any clock's resolution
MIN_LATENCY_S = 1e-9


def _without_vanishing(m: Measurement, ctx: Any) -> Measurement:
    """``m`` without the statistics that cannot be zero yet are below a nanosecond.

    Readers refuse a written 0 where a zero is impossible (``check_latency``);
    a p99 of ``5e-324 ms`` is not 0 as written but underflows to 0 s once in
    seconds, and a value of a few femtoseconds is no more a measurement.
    Every reader's output passes here, whatever its units.
    """
    from dataclasses import replace

    from .plausibility import zero_impossible
    from .problems import IMPOSSIBLE

    metrics = dict(m.metrics)
    for name, metric in m.metrics.items():
        stats = {"mean": metric.mean, **metric.percentiles}
        gone = [k for k, v in stats.items()
                if v is not None and v < MIN_LATENCY_S and v >= 0 and zero_impossible(name, k)]
        for k in gone:
            where = f" (from {metric.source})" if metric.source else ""
            ctx.problem(f"{name} {k} is {numbers.stated(stats[k])} s{where}{' in ' + m.label if m.label else ''}: below one "
                        "nanosecond, a latency that rounds to zero is not a measurement; the value is ignored "
                        "(not measured)", IMPOSSIBLE)
        if gone:
            metrics[name] = replace(metric, mean=None if "mean" in gone else metric.mean,
                                    percentiles={k: v for k, v in metric.percentiles.items() if k not in gone})
    return replace(m, metrics=metrics) if metrics != dict(m.metrics) else m


def _mib(size: int) -> str:
    return f"{numbers.number(size / 1024 / 1024)} MiB" if size >= 1024 * 1024 else f"{numbers.number(size)} bytes"


def to_native(measurements: Union[Measurement, Iterable[Measurement]]) -> dict[str, Any]:
    """A native benchmark document (JSON-ready dict) for one or more measurements."""
    from .native import to_native as _to_native

    return _to_native(measurements)


def from_native(doc: Mapping[str, Any], *, validate: bool = True) -> list[Measurement]:
    """Measurements from a native document; ValueError if it fails the schema."""
    from .native import from_native as _from_native

    return _from_native(doc, validate=validate)
