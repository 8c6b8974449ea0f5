"""The verdict thresholds, pinned by the evaluation's own tests (issue 22: an at-risk threshold of
2x the promise survived tests/evaluate/ before; only the case files guarded it).

Worked by hand for fp8 Llama 3.1 70B on one H100 SXM (3.35 TB/s), 100 prompt + 100 output
tokens, one sequence: a decode step reads (70.55e9 - 128,256 x 8,192) x 1 B = 69.499 GB of
weights plus the KV cache of the mean context (about 150 tokens x 327,680 B = 0.049 GB), so
the bound pace is 3.35e12 / 69.55e9 = 48.17 token/s; at the dense one-device default of 86.0 %
of bandwidth plus the fixed 2.1 ms an iteration (docs/calibration.md) a step is 20.76 / 0.860 +
2.1 = 26.24 ms: 38.1 token/s (34.8 at 72.3 % with no fixed part, until issue 25).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from budgetlint.evaluate.roofline import _verdict
from test_evaluation_numbers import _analysis

BOUND_PACE = 3.35e12 / (69.499e9 + 150 * 327_680)
REALISTIC_PACE = 1 / (1 / (0.860 * BOUND_PACE) + 2.1e-3)


def _budget(pace: float) -> str:
    return f"""\
    - name: chat
      owner: "@acme/chat"
      workload: {{prompt_tokens: 100, output_tokens: 100}}
      promise: {{pace: {pace} token/s}}
      deployment: {{model: llama-3.1-70b, hardware: h100-sxm, weight_precision: fp8}}
    """


@pytest.mark.parametrize(("pace", "verdict"), [
    (30, "met"),            # below the realistic 38.1 token/s
    (37.5, "met"),
    (39, "at-risk"),        # above the realistic estimate, below the 48.2 token/s bound
    (47, "at-risk"),        # just below the bound: still possible
    (49, "cannot-be-met"),  # just above the bound
    (60, "cannot-be-met"),
])
def test_pace_verdicts_either_side_of_each_threshold(tmp_path: Path, pace: float, verdict: str) -> None:
    assert 37.9 < REALISTIC_PACE < 38.3 and 48.0 < BOUND_PACE < 48.3  # the hand calculation
    b, _ = _analysis(tmp_path, _budget(pace))
    assert b["verdicts"]["tpot"] == verdict


def test_required_efficiency_and_headroom_of_an_at_risk_pace(tmp_path: Path) -> None:
    b, _ = _analysis(tmp_path, _budget(40))
    a = b["analysis"]
    # the efficiency a 40 token/s promise needs: 40 / 48.17 of peak bandwidth
    assert a["required_efficiency_tpot"] == pytest.approx(40 / BOUND_PACE, rel=2e-3)
    # headroom = promise / estimate - 1 on times: (1/40) / (1/38.11) - 1 = 38.11/40 - 1 = -4.7 %
    assert a["headroom_tpot"] == pytest.approx(REALISTIC_PACE / 40 - 1, rel=5e-3)


@pytest.mark.parametrize(("promise", "bound", "realistic", "verdict"), [
    (1.0, 0.5, 0.9, "met"),
    (1.0, 0.5, 1.0, "met"),               # equal to the promise is met
    (1.0, 0.5, 1.0 + 1e-6, "at-risk"),    # any amount over, not 2x over
    (1.0, 0.5, 1.9, "at-risk"),
    (1.0, 1.0, 1.5, "at-risk"),           # a bound equal to the promise can be met
    (1.0, 1.0 + 1e-6, 1.5, "cannot-be-met"),
    (1.0, 1.2, 1.1, "cannot-be-met"),     # the bound decides first
])
def test_the_verdict_function_at_its_edges(promise: float, bound: float, realistic: float, verdict: str) -> None:
    assert _verdict(promise, bound, realistic) == verdict
