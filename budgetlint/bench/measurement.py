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
from typing import Any, Mapping, Sequence, Union
from budgetlint.text import numbers

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
    #: the per-request values behind a computed metric, sorted, in seconds (empty when the
    #: file has only summaries); they give the percentile's confidence interval in seconds
    samples: tuple[float, ...] = field(default=(), repr=False, compare=False)
    #: a Prometheus histogram behind a ``method="histogram"`` metric: (upper edge in seconds,
    #: cumulative count) pairs, ascending, the last edge ``inf`` (bench/prometheus.py)
    histogram: tuple[tuple[float, float], ...] = field(default=(), repr=False, compare=False)

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


#: RunRecord fields (what the file says of how the run went); None = the file does not say
RUN_FIELDS = (
    "requested",
    "completed",
    "failed",
    "max_concurrency",
    "mean_in_flight",
    "duration_s",
    "warmup_s",
    "request_rate",
    "achieved_rate",
    "requested_output_tokens",
    "mean_output_tokens",
    "requested_prompt_tokens",
    "mean_prompt_tokens",
    "ignore_eos",
    "valid",
    "mean_latency_s",
)


@dataclass(frozen=True)
class RunRecord:
    """What a result file says of how the run went (run quality), each with its key.

    ``sources`` maps a field to the file's key (or the computation) it came
    from, so a quality finding can name the field. ``mean_in_flight`` is the
    tool's own figure when it reports one, else Little's law: request
    throughput x mean end-to-end latency (``sources`` says which).
    ``requested_output_tokens`` is the mean output length the requests asked
    for (a max_tokens), ``mean_output_tokens`` the mean they got.
    """

    requested: int | None = None  # requests the run was to send
    completed: int | None = None  # requests that succeeded
    failed: int | None = None  # failed, errored or incomplete requests
    max_concurrency: float | None = None  # the declared cap on requests in flight
    mean_in_flight: float | None = None
    duration_s: float | None = None  # the measured span
    warmup_s: float | None = None  # the warm-up before it
    request_rate: float | None = None  # the declared arrival rate, requests/s (inf: all at once)
    achieved_rate: float | None = None  # the rate requests were sent at, when the tool reports it
    requested_output_tokens: float | None = None
    mean_output_tokens: float | None = None
    requested_prompt_tokens: float | None = None
    mean_prompt_tokens: float | None = None
    ignore_eos: bool | None = None
    valid: bool | None = None  # the tool's own verdict on the run (MLPerf "Result is")
    mean_latency_s: float | None = None  # mean end-to-end latency (for the run-length check)
    sources: Mapping[str, str] = field(default_factory=dict)


PROVENANCE_FIELDS = ("engine", "engine_version", "gpu", "date", "tool", "tool_version")


@dataclass(frozen=True)
class Provenance:
    """Where a measurement came from, as its file says (None: the file does not say).

    ``date`` is ISO 8601 (``2025-05-30T19:47:38``, the file's local time when
    it gives no zone, or ``...+00:00`` for a Unix timestamp).
    """

    engine: str | None = None  # the serving engine (vllm, sglang, tensorrt-llm)
    engine_version: str | None = None
    gpu: str | None = None
    date: str | None = None
    tool: str | None = None  # the benchmark client
    tool_version: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)


class RecordBuilder:
    """Mutable helper for readers: the first value set for a field wins, with its key."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def set(self, name: str, value: Any, source: str) -> None:
        if value is None or name in self.values:
            return
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # counts, lengths, rates and times are never negative or NaN; only a rate may be
            # infinite (all requests at once): anything else in a file is not recorded
            if math.isnan(value) or value < 0 or (math.isinf(value) and name != "request_rate"):
                return
        self.values[name] = value
        self.sources[name] = source

    def run(self) -> RunRecord:
        return RunRecord(**self.values, sources=dict(self.sources))

    def provenance(self) -> Provenance:
        return Provenance(**{k: str(v) for k, v in self.values.items()}, sources=dict(self.sources))


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
    run: RunRecord = field(default_factory=RunRecord)
    provenance: Provenance = field(default_factory=Provenance)
    #: per-request token counts of the successful requests, where the file has them
    #: (vLLM --save-detailed input_lens/output_lens, LLMPerf individual responses);
    #: the workload's `from_bench` lengths (docs/load.md)
    prompt_lengths: tuple[int, ...] = field(default=(), repr=False, compare=False)
    output_lengths: tuple[int, ...] = field(default=(), repr=False, compare=False)


def per_request_lengths(values: object, keep: Sequence[bool] | None = None, minimum: int = 0) -> tuple[float, ...]:
    """Per-request token counts from a file's array, for the workload's ``from_bench`` lengths.

    Left out: what is not a number (a request without a count), a failed request where
    ``keep`` says so, and whole counts in ``0 <= v < minimum`` (an output of 0 tokens). Kept
    as read, for the evaluation to report (BL406, with how many: issue 24, they were dropped
    silently): counts that no request can have, negative, fractional or above 1e9."""
    if not isinstance(values, list):
        return ()
    out: list[int] = []
    for i, v in enumerate(values):
        if keep is not None and (i >= len(keep) or not keep[i]):
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            continue
        if v < 0 or v != int(v) or v > 1e9:
            out.append(v)  # impossible: lengths.py counts and reports them
            continue
        if v < minimum:
            continue
        out.append(int(v))
    return tuple(out)


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
    return "p" + numbers.stated(round(float(percent), 6))


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
        samples=tuple(clean),
    )


def _declared(c: Conditions, name: str) -> bool:
    """A condition the run was set up with (not a measured mean, not a guess)."""
    return getattr(c, name) is not None and c.status(name) == READ and "measured" not in c.sources.get(name, "")


def complete_record(m: Measurement) -> Measurement:
    """Fill the run record and provenance from what the reader already found.

    Counts, the declared concurrency, rate and lengths come from the
    conditions when the reader did not set them (``failed`` only ever from
    the file's own failure count); ``mean_in_flight`` is Little's law, ``L = request throughput x mean
    end-to-end latency``, when the file does not report it. Nothing here
    reads a file.
    """
    r = RecordBuilder()
    r.values.update({k: getattr(m.run, k) for k in RUN_FIELDS if getattr(m.run, k) is not None})
    r.sources.update(m.run.sources)
    c = m.conditions
    r.set("requested", c.num_requests, c.sources.get("num_requests", "num_requests"))
    r.set("completed", c.successful_requests, c.sources.get("successful_requests", "successful_requests"))
    if _declared(c, "concurrency") or c.status("concurrency") == INFERRED and "strategy" in c.sources.get(
            "concurrency", ""):
        r.set("max_concurrency", c.concurrency, c.sources.get("concurrency", "concurrency"))
    r.set("request_rate", c.request_rate, c.sources.get("request_rate", "request_rate"))
    r.set("duration_s", m.duration, "duration")
    for name, extra in (("output_tokens", "measured_mean_output_tokens"),
                        ("prompt_tokens", "measured_mean_prompt_tokens")):
        if _declared(c, name):
            r.set(f"requested_{name}", getattr(c, name), c.sources.get(name, name))
        elif getattr(c, name) is not None:
            r.set(f"mean_{name}", getattr(c, name), c.sources.get(name, name))
        value = c.extra.get(extra)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            r.set(f"mean_{name}", float(value), extra.replace("measured_", "") + " (measured)")
    e2e = m.metrics.get("e2e")
    if e2e is not None and e2e.mean is not None:
        r.set("mean_latency_s", e2e.mean, f"mean E2E ({e2e.source})")
    lat = r.values.get("mean_latency_s")
    if m.request_throughput is not None and lat is not None and m.request_throughput > 0:
        r.set("mean_in_flight", m.request_throughput * lat,
              "Little's law: request throughput x mean E2E latency")
    p = RecordBuilder()
    p.values.update({k: getattr(m.provenance, k) for k in PROVENANCE_FIELDS
                     if getattr(m.provenance, k) is not None})
    p.sources.update(m.provenance.sources)
    p.set("tool", m.format, "the file's format")
    p.set("tool_version", m.tool_version, "the file's version key")
    if c.hardware is not None and c.status("hardware") == READ:
        p.set("gpu", c.hardware, c.sources.get("hardware", "hardware"))
    from dataclasses import replace

    return replace(m, run=r.run(), provenance=p.provenance())
