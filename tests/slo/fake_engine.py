"""A fake serving engine: vLLM's TTFT histogram (its metric name, labels and buckets) through
prometheus-client, fed a known latency distribution, for the live Prometheus test.

    python tests/slo/fake_engine.py PORT DELAY SECONDS MODEL=F1,F2,F3 ...

Its series exist (at zero) from the start; after DELAY seconds, every 100 ms each MODEL observes one batch of 100 TTFTs: F1 % at 0.1 s, F2 % at 0.4 s and
F3 % at 0.9 s (so F1 + F2 percent fall at or under 0.5 s), for SECONDS seconds; then it keeps
serving /metrics until killed.
"""

from __future__ import annotations

import sys
import time

from prometheus_client import CollectorRegistry, Histogram, start_http_server

# vLLM's TTFT buckets: vllm/v1/metrics/loggers.py, PrometheusStatLogger.__init__ (docs/slo.md)
VLLM_TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                     20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]


def main() -> None:
    port, delay, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    mixes = {}
    for arg in sys.argv[4:]:
        model, _, shares = arg.partition("=")
        mixes[model] = [int(x) for x in shares.split(",")]
    registry = CollectorRegistry()
    ttft = Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                     ["model_name", "engine"], buckets=VLLM_TTFT_BUCKETS, registry=registry)
    for model in mixes:
        ttft.labels(model_name=model, engine="0")  # the series exist at zero before any traffic
    start_http_server(port, addr="127.0.0.1", registry=registry)
    print("ready", flush=True)
    time.sleep(delay)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for model, (fast, mid, slow) in mixes.items():
            h = ttft.labels(model_name=model, engine="0")
            for value, times in ((0.1, fast), (0.4, mid), (0.9, slow)):
                for _ in range(times):
                    h.observe(value)
        time.sleep(0.1)
    print("done", flush=True)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    main()
