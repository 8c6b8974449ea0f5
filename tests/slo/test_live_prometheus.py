"""A real Prometheus server (Debian's package) scraping a fake vLLM engine on 127.0.0.1, judged
by `budgetlint check --prometheus URL --window 5m`.

The engine (tests/slo/fake_engine.py) serves vLLM's TTFT histogram name, labels and buckets
through prometheus-client and observes a known distribution: for model `good` 97 % of TTFTs at or
under 0.5 s (60 % at 0.1 s, 37 % at 0.4 s, 3 % at 0.9 s), for model `slow` 90 % (60, 30, 10).
A p95 <= 500 ms promise is then met for `good` and missed for `slow`, with basis production, and
the share budgetlint reports is the distribution's (the batches are whole, so every scrape holds
the exact mix; `increase()` scales every bucket alike).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tool_skips import tool_missing

ROOT = Path(__file__).resolve().parents[2]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - 127.0.0.1
        return r.read().decode()


def _wait(check, what: str, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        tool_missing("prometheus not installed (Debian package prometheus: tests/slo/setup_prometheus.sh)")
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        tool_missing("prometheus-client not installed (the test extra: pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("prom")
    engine_port, prom_port = _port(), _port()
    procs: list[subprocess.Popen] = []
    try:
        (tmp / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: engine\n    static_configs: [{{targets: ['127.0.0.1:{engine_port}']}}]\n")
        prom = subprocess.Popen([prometheus, f"--config.file={tmp / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=subprocess.DEVNULL, stderr=(tmp / "prometheus.log").open("w"))
        procs.append(prom)
        url = f"http://127.0.0.1:{prom_port}"
        _wait(lambda: "Ready" in _get(url + "/-/ready"), "Prometheus to be ready")
        # the engine's series exist at zero for 3 s (three scrapes) before its 6 s of traffic
        engine = subprocess.Popen([sys.executable, str(Path(__file__).parent / "fake_engine.py"), str(engine_port),
                                   "3", "6", "good=60,37,3", "slow=60,30,10"], stdout=subprocess.PIPE, text=True)
        procs.append(engine)
        assert engine.stdout is not None and engine.stdout.readline().strip() == "ready"
        _wait(lambda: engine.stdout.readline().strip() == "done", "the engine's traffic", 60)
        time.sleep(3)  # three more scrapes after the last batch
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def _budget(tmp: Path, model: str) -> Path:
    path = tmp / f"{model}.yaml"
    path.write_text(f"""version: 1
kind: budgets
budgets:
  - name: live-{model}
    owner: "@acme/chat"
    percentile: p95
    workload: {{prompt_tokens: 1000, output_tokens: 100}}
    promise: {{ttft: 500 ms}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm, engine: vllm}}
    slo: {{selectors: {{model_name: {model}}}}}
""")
    return path


@pytest.mark.parametrize("model,share,rule", [("good", 0.97, "BL605"), ("slow", 0.90, "BL604")])
def test_live_server_judgement_matches_the_distribution(server: str, tmp_path: Path, model: str, share: float,
                                                        rule: str) -> None:
    r = subprocess.run([sys.executable, "-m", "budgetlint", "check", str(_budget(tmp_path, model)), "--prometheus",
                        server, "--window", "5m", "--format", "json", "--no-codeowners", "--no-summary"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    report = json.loads(r.stdout)
    found = {f["rule"] for f in report["findings"]}
    assert rule in found, r.stdout
    assert "BL606" not in found
    reading = report["budgets"][0]["analysis"]["slo"]["production"][0]
    assert reading["basis"] == "production" and reading["exact"] is True
    low, high = reading["share_at_or_under"]
    assert low == high and abs(low - share) < 0.005
    judged = report["budgets"][0]["judgement"]["ttft"]
    assert judged["basis"] == "production" and judged["verdict"] == ("met" if rule == "BL605" else "at-risk")
    assert reading["samples"] >= 2000  # at least 20 batches of 100 requests seen between scrapes
    assert r.returncode == (1 if rule == "BL604" else 0)
