"""Normalised benchmark measurement types (SI floats: seconds, tokens/s).

Every reader in :mod:`budgetlint.bench` turns a tool's result file into
:class:`Measurement` objects. Nothing here knows a file format.

Metric names are ``ttft``, ``tpot``, ``itl`` and ``e2e``. Percentile labels are
canonical: ``p50`` (never ``median``), ``p99.9`` (never ``p999``), ``p0.1``.
The mean is kept apart from the percentiles. A percentile a file lacks is
absent: it is "not measured", never derived from a mean.

Definitions (the ``definition`` of a :class:`Metric`):

ttft
    ``first_token``: request sent -> first generated token received.
tpot
    ``budgetlint``: (e2e - ttft) / N, N = output tokens (E2E = TTFT + N x TPOT).
    ``excludes_first_token``: (e2e - ttft) / (N - 1) per request (vLLM, SGLang,
    GenAI-Perf/AIPerf "inter_token_latency", MLPerf, inference-perf).
    ``includes_ttft``: e2e / N per request (LLMPerf "inter_token_latency",
    guidellm v2 "time_per_output_token", inference-perf
    "normalized_time_per_output_token").
itl
    ``pooled_gaps``: every gap between streamed chunks, pooled over requests.
    ``excludes_first_token``: per-request mean gap (guidellm).
e2e
    ``request_latency``: request sent -> last token received.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence, Union

METRIC_NAMES = ("ttft", "tpot", "itl", "e2e")

CONDITION_FIELDS = (
    "model",
    "hardware",
    "devices",
    "concurrency",
    "request_rate",
    "prompt_tokens",
    "output_tokens",
    "measured_at",
    "num_requests",
    "successful_requests",
)

#: how a condition was obtained; a field absent from ``provenance`` is unknown
READ = "read"
INFERRED = "inferred"
UNKNOWN = "unknown"

#: percentiles computed from per-request data
COMPUTED_PERCENTILES = (25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9)
PERCENTILE_METHOD = (
    "computed from per-request values, linear interpolation between closest "
    "ranks (numpy's default 'linear', Hyndman-Fan type 7)"
)

Scalar = Union[str, float, int, bool]


@dataclass(frozen=True)
class Problem:
    """Something wrong with an input file; readers return these, never raise."""

    path: str
    line: int | None
    message: str
    code: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message} [{self.code}]"


@dataclass(frozen=True)
class Metric:
    """One latency metric in seconds."""

    percentiles: Mapping[str, float] = field(default_factory=dict)
    mean: float | None = None
    definition: str = ""
    method: str = "reported"  # "reported" | "computed"
    count: int | None = None  # samples behind the statistics, when known
    source: str = ""  # the source's key(s) for this metric
    notes: tuple[str, ...] = ()

    def get(self, label: str) -> float | None:
        """The value at a canonical label (``"p99"``, ``"mean"``), or None."""
        if label == "mean":
            return self.mean
        return self.percentiles.get(label)


@dataclass(frozen=True)
class Conditions:
    """Run conditions, with where each came from."""

    model: str | None = None
    hardware: str | None = None
    devices: int | None = None
    concurrency: float | None = None  # max in-flight requests
    request_rate: float | None = None  # requests/s; math.inf = unbounded
    prompt_tokens: float | None = None  # mean prompt length
    output_tokens: float | None = None  # mean output length
    measured_at: str | None = None  # "server" | "client"
    num_requests: int | None = None
    successful_requests: int | None = None
    provenance: Mapping[str, str] = field(default_factory=dict)  # field -> read|inferred
    sources: Mapping[str, str] = field(default_factory=dict)  # field -> key / reasoning
    extra: Mapping[str, Scalar] = field(default_factory=dict)  # other recorded conditions

    def status(self, name: str) -> str:
        """``"read"``, ``"inferred"`` or ``"unknown"`` for a condition field."""
        if getattr(self, name) is None:
            return UNKNOWN
        return self.provenance.get(name, READ)


@dataclass(frozen=True)
class Measurement:
    """One benchmark run (one load point), normalised."""

    source: str
    format: str
    tool_version: str | None = None
    label: str | None = None  # which run inside the file: "line 3", "benchmark 1"
    conditions: Conditions = field(default_factory=Conditions)
    metrics: Mapping[str, Metric] = field(default_factory=dict)
    output_throughput: float | None = None  # tokens/s, whole run
    request_throughput: float | None = None  # requests/s
    duration: float | None = None  # seconds
    constraints: Mapping[str, Scalar] = field(default_factory=dict)  # limits the run was held to
    notes: tuple[str, ...] = ()


_INTEGERS = ("devices", "num_requests", "successful_requests")
_NUMBERS = ("concurrency", "request_rate", "prompt_tokens", "output_tokens")


class ConditionsBuilder:
    """Mutable helper for readers: set fields with provenance, then freeze."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.provenance: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        self.extra: dict[str, Scalar] = {}

    def set(self, name: str, value: object, how: str, source: str) -> None:
        if value is None or name in self.values:
            return
        if name not in CONDITION_FIELDS:
            raise ValueError(name)
        if name in _INTEGERS or name in _NUMBERS:
            # readers pass what the file says: "nan", "12", true, [..] or 1e400 must
            # leave the condition unknown, never raise (found by the long fuzz profile)
            if isinstance(value, bool):
                return
            try:
                number = float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError, OverflowError):
                return
            if math.isinf(number) and name == "request_rate" and number > 0:
                pass  # "inf": every request sent at once (vLLM's and SGLang's offline runs)
            elif not math.isfinite(number) or (name in _INTEGERS and not number.is_integer()):
                return
            value = int(number) if name in _INTEGERS else number
        self.values[name] = value
        self.provenance[name] = how
        self.sources[name] = source

    def build(self) -> Conditions:
        return Conditions(
            **self.values,  # type: ignore[arg-type]
            provenance=dict(self.provenance),
            sources=dict(self.sources),
            extra=dict(self.extra),
        )


def percent_label(percent: float) -> str:
    """Canonical label for a percentile given in percent: 50 -> "p50", 99.9 -> "p99.9"."""
    return "p" + format(round(float(percent), 6), "g")


def label_percent(label: str) -> float | None:
    """Inverse of :func:`percent_label` (also accepts "median"); None if not a label."""
    if label == "median":
        return 50.0
    if not label.startswith("p"):
        return None
    try:
        value = float(label[1:])
    except ValueError:
        return None
    return value if 0.0 <= value <= 100.0 else None


def quantile_linear(sorted_values: Sequence[float], percent: float) -> float:
    """Percentile by linear interpolation between closest ranks (numpy default)."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("no values")
    pos = (n - 1) * percent / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def metric_from_samples(
    values: Sequence[float], definition: str, source: str, notes: Sequence[str] = ()
) -> Metric | None:
    """A computed :class:`Metric` from per-request (or pooled) samples in seconds."""
    clean = sorted(v for v in values if v is not None and math.isfinite(v))
    if not clean:
        return None
    try:
        mean = math.fsum(clean) / len(clean)
    except OverflowError:  # finite samples near 1e308 overflow the sum (found by fuzzing)
        mean = math.fsum(v / len(clean) for v in clean)
    return Metric(
        percentiles={percent_label(p): quantile_linear(clean, p) for p in COMPUTED_PERCENTILES},
        mean=mean,
        definition=definition,
        method="computed",
        count=len(clean),
        source=source,
        notes=(PERCENTILE_METHOD, *notes),
    )
