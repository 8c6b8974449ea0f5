"""A real client against a server that batches: the simulator, told the server's
law, must predict the p95 TTFT and TPOT the client measures, at two rates.

The server (tests/clients/fake_server.py, batching mode) runs iterations of

    A + B x (streams decoding) + C x (prompt tokens of newcomers)
    A = 20 ms, B = 2 ms per stream, C = 0.1 ms per prompt token

and aiperf sends 100-token prompts for 50-token replies as a Poisson stream
at 3 and at 6 request/s (the batch grows from about 5 to about 15 streams,
so the step from ~30 to ~50 ms; the law saturates at 10 request/s). aiperf's result file is read back by
budgetlint's reader (``budgetlint.bench.read_benchmark``); its TPOT excludes
the first token (``(e2e - ttft) / (N - 1)``), so it is converted to
budgetlint's (over all N tokens, the simulator's) with ``tpot_from_vllm``. The simulator runs the
same law (``LinearStepCost``), the same lengths and the same arrival
process, and the same experiment: the arrival times aiperf actually used
(``request_start_ns`` of each request in its ``profile_export.jsonl``) are
replayed, 150 requests from an empty server with no warm-up left out. (With
fresh Poisson arrivals instead, the p95 TPOT of one 150-request run at 6
request/s varies by about 18 % from seed to seed: a comparison with one
measured run would test luck.) Measured and predicted p95 must agree within
20 % at both rates. A busy machine wakes the server late, so a miss while the machine was
measured busy (tests/clients/wall_clock.py) is a skip that says so, never a pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from budgetlint.physics.latency import tpot_from_vllm
from budgetlint.physics.load_stats import percentile
from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed

from .conftest import TinyTokenizer, client_env, fake_server, require_client, run_bounded
from .wall_clock import WakeProbe, judge_on_this_machine

pytestmark = pytest.mark.clients

A_MS, B_MS, C_MS = 20.0, 2.0, 0.1
PROMPT, OUTPUT = 100, 50
RATES = (3.0, 6.0)
REQUESTS = 150
TOLERANCE = 0.20


def run_aiperf_at_rate(tok: TinyTokenizer, work: Path, rate: float) -> Path:
    venv = require_client("aiperf")
    extra = ["--batch-step-ms", str(A_MS), "--batch-per-stream-ms", str(B_MS),
             "--batch-prompt-token-ms", str(C_MS)]
    artifacts = work / "artifacts"
    with fake_server(venv.python, tok.path, work / "fake_server.log", extra_args=extra) as server:
        cmd = [
            str(venv.command), "profile",
            "--model", server.model, "--url", server.url,
            "--endpoint-type", "completions", "--streaming",
            "--tokenizer", tok.repo_id,
            "--request-count", str(REQUESTS), "--request-rate", str(rate),
            "--arrival-pattern", "poisson", "--random-seed", "7",
            "--isl", str(PROMPT), "--isl-stddev", "0",
            "--osl", str(OUTPUT), "--osl-stddev", "0",
            "--ui", "none", "--no-server-metrics", "--no-gpu-telemetry",
            "--artifact-dir", str(artifacts),
        ]
        env = client_env(work, {"HF_HUB_CACHE": str(tok.hub_cache)})
        done = run_bounded(cmd, work, env, work / "client.log", 240.0)
    result = artifacts / "profile_export_aiperf.json"
    if done.returncode != 0 or not result.is_file():
        pytest.fail(f"aiperf exited {done.returncode} after {done.wall_s:.1f} s\n{done.tail()}\n"
                    f"server log:\n{(work / 'fake_server.log').read_text()[-1500:]}")
    return result


@pytest.mark.parametrize("rate", RATES)
def test_simulator_predicts_a_batching_server(rate: float, tiny_tokenizer: TinyTokenizer,
                                              tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from budgetlint.bench import read_benchmark

    with WakeProbe() as probe:  # a busy machine makes the server late: that is not the simulator's error
        result = run_aiperf_at_rate(tiny_tokenizer, tmp_path, rate)
    measurements, problems = read_benchmark(result)
    assert problems == [] and len(measurements) == 1, (measurements, problems)
    m = measurements[0]
    assert m.metrics["tpot"].definition == "excludes_first_token"
    measured_ttft = m.metrics["ttft"].get("p95")
    measured_tpot = tpot_from_vllm(m.metrics["tpot"].get("p95"), OUTPUT)

    law = LinearStepCost(decode_fixed_s=A_MS / 1e3, decode_per_seq_s=B_MS / 1e3,
                         prefill_fixed_s=A_MS / 1e3, prefill_per_token_s=C_MS / 1e3)
    starts = sorted(json.loads(line)["metadata"]["request_start_ns"] * 1e-9
                    for line in (result.parent / "profile_export.jsonl").read_text().splitlines() if line.strip())
    assert len(starts) == REQUESTS
    assert (len(starts) - 1) / (starts[-1] - starts[0]) == pytest.approx(rate, rel=0.3)
    raw = run(law, Traffic(prompt=Fixed(PROMPT), output=Fixed(OUTPUT), arrival_times_s=tuple(starts)),
              Scheduler(max_num_seqs=1024, max_num_batched_tokens=1 << 20), requests=REQUESTS, warmup=0)
    records = raw.records
    predicted_ttft = percentile(sorted(r.ttft_s for r in records), 95)
    predicted_tpot = percentile(sorted(r.tpot_s for r in records), 95)
    with capsys.disabled():
        print(f"\naiperf at {rate} request/s: p95 TTFT measured {measured_ttft * 1e3:.1f} ms, predicted "
              f"{predicted_ttft * 1e3:.1f} ms; p95 TPOT measured {measured_tpot * 1e3:.2f} ms, predicted "
              f"{predicted_tpot * 1e3:.2f} ms")

    def compare() -> None:
        assert measured_ttft == pytest.approx(predicted_ttft, rel=TOLERANCE)
        assert measured_tpot == pytest.approx(predicted_tpot, rel=TOLERANCE)

    judge_on_this_machine(probe, f"the batching server's p95 at {rate} request/s", compare)
