"""The serving engines' Prometheus latency histograms: names, default bucket edges, sources.

One row per (engine, what a promise measures). A promise's SLO is a ratio of
two series of one histogram (``_bucket{le="T"}`` over ``_count``), so the
metric must be *per request* and its edges decide which thresholds can be
measured exactly (docs/slo.md). Every row names where it was read.

Keys: ``ttft``, ``tpot`` (per-request time per output token: a TPOT or pace
promise; never the per-gap inter-token histogram), ``e2e``, and the segment
kinds ``queue``, ``prefill``, ``decode``.
"""

from __future__ import annotations

from dataclasses import dataclass

VLLM_SOURCE = ("vllm-project/vllm vllm/v1/metrics/loggers.py, PrometheusStatLogger.__init__ "
               "(read at commit 005a810bc40f; the per-request TPOT histogram from a v0.12-era copy, "
               "same buckets)")
SGLANG_SOURCE = ("sgl-project/sglang python/sglang/srt/metrics/collector.py@00ae9c15, "
                 "TokenizerMetricsCollector.__init__ defaults")

_VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
              20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
_VLLM_TPOT = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
              40.0, 80.0)
_VLLM_REQUEST = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
                 240.0, 480.0, 960.0, 1920.0, 7680.0)
_SGLANG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0,
                400.0)
_SGLANG_ITL = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080,
               0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
_SGLANG_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0,
               400.0, 600.0, 1200.0, 1800.0, 2400.0)
_SGLANG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0,
                 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0,
                 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)


@dataclass(frozen=True)
class EngineMetric:
    """One engine histogram a promise maps to."""

    engine: str
    key: str  # ttft | tpot | e2e | queue | prefill | decode
    name: str  # the histogram's base name (without _bucket/_count/_sum)
    buckets: tuple[float, ...]  # default upper edges in seconds (+Inf implied)
    source: str
    model_label: str = "model_name"
    flag: str | None = None  # the server flag that sets the buckets, where the engine has one
    note: str = ""
    per_request: bool = True  # False: one observation per token gap (no per-request ratio)


METRICS: tuple[EngineMetric, ...] = (
    EngineMetric("vllm", "ttft", "vllm:time_to_first_token_seconds", _VLLM_TTFT, VLLM_SOURCE,
                 note="buckets are hard-coded: no flag changes them"),
    EngineMetric("vllm", "tpot", "vllm:request_time_per_output_token_seconds", _VLLM_TPOT, VLLM_SOURCE,
                 note="per request (vLLM's TPOT: decode time over N - 1 tokens); the per-gap "
                      "vllm:inter_token_latency_seconds has the same buckets but is per token"),
    EngineMetric("vllm", "e2e", "vllm:e2e_request_latency_seconds", _VLLM_REQUEST, VLLM_SOURCE),
    EngineMetric("vllm", "queue", "vllm:request_queue_time_seconds", _VLLM_REQUEST, VLLM_SOURCE),
    EngineMetric("vllm", "prefill", "vllm:request_prefill_time_seconds", _VLLM_REQUEST, VLLM_SOURCE),
    EngineMetric("vllm", "decode", "vllm:request_decode_time_seconds", _VLLM_REQUEST, VLLM_SOURCE),
    EngineMetric("sglang", "ttft", "sglang:time_to_first_token_seconds", _SGLANG_TTFT, SGLANG_SOURCE,
                 flag="--bucket-time-to-first-token"),
    EngineMetric("sglang", "tpot", "sglang:inter_token_latency_seconds", _SGLANG_ITL, SGLANG_SOURCE,
                 flag="--bucket-inter-token-latency", per_request=False,
                 note="SGLang has no per-request TPOT histogram: this one is per token gap "
                      "(a chunk's interval spread over its tokens), so the ratio counts gaps, not requests"),
    EngineMetric("sglang", "e2e", "sglang:e2e_request_latency_seconds", _SGLANG_E2E, SGLANG_SOURCE,
                 flag="--bucket-e2e-request-latency"),
    EngineMetric("sglang", "queue", "sglang:queue_time_seconds", _SGLANG_QUEUE, SGLANG_SOURCE),
)

ENGINES = tuple(sorted({m.engine for m in METRICS}))
DEFAULT_ENGINE = "vllm"


def metric_for(engine: str | None, key: str) -> EngineMetric | None:
    """The engine's histogram for ``key``; None where the engine has none (or is not known)."""
    engine = (engine or DEFAULT_ENGINE).lower()
    return next((m for m in METRICS if m.engine == engine and m.key == key), None)


def escaped(name: str) -> str:
    """The name with ``:`` written ``_``: how prometheus-client 0.26's OpenMetrics exposition escapes it
    by default (seen here: a Prometheus 2.42 scrape stored ``vllm_time_to_first_token_seconds_bucket``)."""
    return name.replace(":", "_")


def by_name(name: str) -> EngineMetric | None:
    """The row of a histogram's base name (``vllm:time_to_first_token_seconds``, or its escaped form)."""
    return next((m for m in METRICS if m.name == name), None) or next(
        (m for m in METRICS if escaped(m.name) == name), None)


def le_text(edge: float) -> str:
    """An edge as the engines' prometheus-client writes its ``le`` label (``0.5``, ``1.0``, ``10.0``)."""
    text = repr(float(edge))
    return text
