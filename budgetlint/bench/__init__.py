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


def read_benchmark(
    path: Union[str, Path], fmt: str | None = None
) -> tuple[list[Measurement], list[Problem]]:
    """Read one benchmark result file.

    Returns the measurements found (one per run / load point) and the problems
    (malformed, truncated, empty, NaN, unit-less, unknown format). Never raises
    on bad input.
    """
    from ._common import IO, Ctx, refuse_impossible
    from .detect import read_text
    from .measurement import complete_record

    p = Path(path)
    ctx = Ctx(str(path))
    try:
        data = p.read_bytes()
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
    return refuse_impossible(ctx, measurements), ctx.problems


def to_native(measurements: Union[Measurement, Iterable[Measurement]]) -> dict[str, Any]:
    """A native benchmark document (JSON-ready dict) for one or more measurements."""
    from .native import to_native as _to_native

    return _to_native(measurements)


def from_native(doc: Mapping[str, Any], *, validate: bool = True) -> list[Measurement]:
    """Measurements from a native document; ValueError if it fails the schema."""
    from .native import from_native as _from_native

    return _from_native(doc, validate=validate)
