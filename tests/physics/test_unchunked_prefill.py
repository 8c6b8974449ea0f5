"""An engine without chunked prefill (Scheduler.chunked_prefill False, vLLM V0's scheduler): a
waiting prompt is prefilled whole in an iteration of prompts only, and the decodes wait for it.

Two requests by hand, prompts 100 tokens, replies 3; a stated law (LinearStepCost): a decode
iteration 10 ms whatever its batch, a prefill 0.1 ms a token, plus 5 ms when no decode shares
its iteration. A arrives at 0, B at 20 ms.

Chunked (the default): A's prefill alone, 5 + 10 = 15 ms (first token at 15 ms); A decodes
from 15 ms (boundaries every 10 ms); B arrives at 20 and joins at the next boundary, 25 ms, in an
iteration with A's decode: 10 + 10 = 20 ms, to 45 ms, when A's third token ends it and B has its
first; B's two decodes end at 65 ms. A: TTFT 15 ms, E2E 45 ms; B: TTFT 25 ms, E2E 45 ms.

Unchunked: A as before; at 25 ms B's prompt runs alone: 5 + 10 = 15 ms, to 40 ms, A's decode
waiting; then both decode: A's third token at 50 ms, B's third at 60 ms. A: TTFT 15 ms, E2E
50 ms (its TPOT over 3 tokens (50 - 15) / 3 = 11.67 ms, not 10); B: TTFT 20 ms, E2E 40 ms.
"""

from __future__ import annotations

import pytest

from budgetlint.physics.serving_sim import Scheduler, Traffic, run
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed

COST = LinearStepCost(decode_fixed_s=0.010, prefill_fixed_s=0.005, prefill_per_token_s=1e-4)
TRAFFIC = Traffic(prompt=Fixed(100), output=Fixed(3), arrival_times_s=(0.0, 0.020))


def _records(chunked: bool, engine: str) -> dict[int, tuple[float, float, float]]:
    raw = run(COST, TRAFFIC, Scheduler(max_num_seqs=8, max_num_batched_tokens=2048, chunked_prefill=chunked),
              requests=2, warmup=0, engine=engine)
    return {r.index: (r.ttft_s, r.e2e_s, r.tpot_s) for r in raw.records}


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_chunked_prefill_shares_the_decode_iteration(engine: str) -> None:
    got = _records(True, engine)
    assert got[0] == pytest.approx((0.015, 0.045, 0.010), abs=1e-9)
    assert got[1] == pytest.approx((0.025, 0.045, 0.020 / 3), abs=1e-9)


@pytest.mark.parametrize("engine", ["event", "iteration"])
def test_without_chunked_prefill_a_prompt_runs_alone_and_the_decodes_wait(engine: str) -> None:
    got = _records(False, engine)
    assert got[0] == pytest.approx((0.015, 0.050, 0.035 / 3), abs=1e-9)
    assert got[1] == pytest.approx((0.020, 0.040, 0.020 / 3), abs=1e-9)


def test_chunked_prefill_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="chunked_prefill"):
        Scheduler(chunked_prefill="no")  # type: ignore[arg-type]
