"""Did a benchmark run run as declared? Checks on a measurement's :class:`RunRecord`.

Each check looks at what the file itself says (``RunRecord``; budgetlint
never guesses a missing number) and returns a :class:`QualityProblem` that
names the file's field(s), the numbers, and what they do to the latencies.
A check whose inputs the file lacks does not run; ``not_checked`` says which.

The thresholds (and why):

* **failed requests**: any. A failed request is left out of every latency
  percentile, and failures are usually the slow ones (timeouts); once they
  reach the percentile's tail share (1 % for p99) the percentile can be
  entirely made of survivors.
* **completed fewer than requested** (without failures to account for it):
  the run stopped early or lost requests; its percentiles describe part of it.
* **concurrency not reached**: the mean number of requests in flight (the
  tool's own figure, or Little's law ``L = request throughput x mean E2E
  latency``) below :data:`CONCURRENCY_SHARE` of the declared
  ``max_concurrency``, in a run the concurrency drives (no finite request
  rate). The latencies then describe at most half the declared load. Not
  with failed requests and Little's law: the throughput and latency of the
  successes alone undercount the requests in flight.
* **shorter than its warm-up**: a measured span shorter than the warm-up
  before it.
* **too short for its rate**: at a finite request rate, a run lasting fewer
  than :data:`RUN_LIFETIMES` mean request latencies: ramp-up (the first
  latency) and drain (the last) are then more than half of it, and the
  queue never reaches its steady state.
* **rate not held**: the tool's achieved sending rate below
  :data:`RATE_SHARE` of the declared rate (the load generator fell behind).
* **outputs cut short**: the mean output length below
  ``1 - LENGTH_TOLERANCE`` of the length the requests asked for: EOS was not
  ignored, so TPOT averages over fewer, cheaper tokens and E2E is short.
* **input lengths**: the measured mean prompt length more than
  ``LENGTH_TOLERANCE`` away from the budget's (the same tolerance as the
  condition matching of BL404), when the file's declared length hid it.
* **invalid**: the tool's own verdict (MLPerf ``Result is : INVALID``,
  AIPerf ``was_cancelled``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from budgetlint.bench.measurement import RunRecord
from budgetlint.text import numbers

#: mean in flight below this share of max_concurrency: the declared concurrency was not reached
CONCURRENCY_SHARE = 0.5
#: a rate-driven run must last at least this many mean request latencies
RUN_LIFETIMES = 4.0
#: achieved sending rate below this share of the declared rate: the rate was not held
RATE_SHARE = 0.9
#: relative tolerance on lengths (the same as BL404's condition matching)
LENGTH_TOLERANCE = 0.25


@dataclass(frozen=True)
class QualityProblem:
    check: str  # failed | incomplete | concurrency | warmup | run-length | rate | output-length | input-length | invalid
    field: str  # the file's key(s) the numbers come from
    message: str

    def as_dict(self) -> dict:
        return {"check": self.check, "field": self.field, "message": self.message}


def _src(run: RunRecord, name: str) -> str:
    return run.sources.get(name, name)


def _share(x: float) -> str:
    return numbers.percent(x)


def problems(run: RunRecord, *, budget_prompt_tokens: float | None = None,
             percentile: str | None = None) -> list[QualityProblem]:
    """Every run-quality problem the record shows (see the module doc for each check).

    ``percentile`` (the budget's, ``"p99"``) lets the failure message say
    whether the failures alone could be every request slower than it;
    ``budget_prompt_tokens`` enables the input-length check.
    """
    from budgetlint.bench.measurement import label_percent

    pct = label_percent(percentile) if percentile else None
    out: list[QualityProblem] = []
    if run.valid is False:
        out.append(QualityProblem(
            "invalid", _src(run, "valid"),
            f"the tool marked the run invalid ({_src(run, 'valid')}): its own constraints were not met"))
    total = None
    if run.failed is not None and run.failed > 0:
        total = run.requested if run.requested else (run.completed or 0) + run.failed
        share = run.failed / total if total else 1.0
        tail = ""
        if pct is not None and pct < 100.0:
            above = 1.0 - pct / 100.0
            tail = (f"; as many as the {_share(above)} of requests above the {percentile}: the failures alone "
                    f"could be every request slower than it" if share >= above else
                    f"; fewer than the {_share(above)} above the {percentile}, but failed requests are usually "
                    f"slow ones, so the true {percentile} is likely higher")
        out.append(QualityProblem(
            "failed", _src(run, "failed"),
            f"{run.failed} of {total} requests failed ({_share(share)}, {_src(run, 'failed')}); latency "
            f"percentiles count only the {run.completed if run.completed is not None else total - run.failed} "
            f"that succeeded{tail}"))
    if run.requested is not None and run.completed is not None:
        missing = run.requested - run.completed - (run.failed or 0)
        if missing > 0:
            out.append(QualityProblem(
                "incomplete", f"{_src(run, 'requested')}, {_src(run, 'completed')}",
                f"completed {run.completed} of {run.requested} requested ({_src(run, 'completed')} vs "
                f"{_src(run, 'requested')}); {missing} neither succeeded nor failed: the run stopped early or "
                "lost requests"))
    rate_bound = run.request_rate is not None and math.isfinite(run.request_rate)
    littles = "Little" in _src(run, "mean_in_flight")
    if (run.max_concurrency is not None and run.mean_in_flight is not None and not rate_bound
            and not (littles and run.failed)  # Little's law over successes alone undercounts the slots
            and math.isfinite(run.max_concurrency) and run.max_concurrency > 1
            and run.mean_in_flight < CONCURRENCY_SHARE * run.max_concurrency):
        out.append(QualityProblem(
            "concurrency", f"{_src(run, 'max_concurrency')}, {_src(run, 'mean_in_flight')}",
            f"declared concurrency {numbers.stated(run.max_concurrency)} ({_src(run, 'max_concurrency')}) never held: "
            f"{numbers.number(run.mean_in_flight)} requests in flight on average ({_src(run, 'mean_in_flight')}), "
            f"{numbers.percent(run.mean_in_flight / run.max_concurrency)} of it (threshold {numbers.percent(CONCURRENCY_SHARE)}); "
            "the latencies describe a lighter load"))
    if run.warmup_s is not None and run.duration_s is not None and run.duration_s < run.warmup_s:
        out.append(QualityProblem(
            "warmup", f"{_src(run, 'duration_s')}, {_src(run, 'warmup_s')}",
            f"the measured span ({numbers.quantity(run.duration_s, 's')}, {_src(run, 'duration_s')}) is shorter than the "
            f"warm-up before it ({numbers.quantity(run.warmup_s, 's')}, {_src(run, 'warmup_s')})"))
    if (rate_bound and run.request_rate and run.duration_s is not None and run.mean_latency_s is not None
            and run.duration_s < RUN_LIFETIMES * run.mean_latency_s):
        out.append(QualityProblem(
            "run-length", f"{_src(run, 'duration_s')}, {_src(run, 'mean_latency_s')}",
            f"too short for its rate: {numbers.quantity(run.duration_s, 's')} ({_src(run, 'duration_s')}) at "
            f"{numbers.stated(run.request_rate)} requests/s is {numbers.number(run.duration_s / run.mean_latency_s)} mean request "
            f"latencies ({numbers.quantity(run.mean_latency_s, 's')}); below {numbers.stated(RUN_LIFETIMES)}, ramp-up and drain are more "
            "than half the run and the queue never reaches its steady state"))
    if (rate_bound and run.request_rate and run.achieved_rate is not None
            and run.achieved_rate < RATE_SHARE * run.request_rate):
        out.append(QualityProblem(
            "rate", f"{_src(run, 'request_rate')}, {_src(run, 'achieved_rate')}",
            f"declared rate {numbers.stated(run.request_rate)} requests/s ({_src(run, 'request_rate')}) not held: sent at "
            f"{numbers.number(run.achieved_rate)} requests/s ({_src(run, 'achieved_rate')}), "
            f"{numbers.percent(run.achieved_rate / run.request_rate)} of it (threshold {numbers.percent(RATE_SHARE)}); the load "
            "generator fell behind"))
    if (run.requested_output_tokens is not None and run.mean_output_tokens is not None
            and run.requested_output_tokens > 0
            and run.mean_output_tokens < (1.0 - LENGTH_TOLERANCE) * run.requested_output_tokens):
        short = 1.0 - run.mean_output_tokens / run.requested_output_tokens
        eos = " with ignore_eos false" if run.ignore_eos is False else ""
        out.append(QualityProblem(
            "output-length", f"{_src(run, 'requested_output_tokens')}, {_src(run, 'mean_output_tokens')}",
            f"outputs {numbers.percent(short)} shorter than requested: mean {numbers.number(run.mean_output_tokens)} tokens "
            f"({_src(run, 'mean_output_tokens')}) for {numbers.stated(run.requested_output_tokens)} asked "
            f"({_src(run, 'requested_output_tokens')}){eos}: EOS was not ignored, so TPOT and E2E are biased "
            f"(tolerance {numbers.percent(LENGTH_TOLERANCE)}); rerun with ignore_eos"))
    if (budget_prompt_tokens is not None and budget_prompt_tokens > 0 and run.mean_prompt_tokens is not None
            and abs(run.mean_prompt_tokens - budget_prompt_tokens) > LENGTH_TOLERANCE * budget_prompt_tokens):
        rel = "shorter" if run.mean_prompt_tokens < budget_prompt_tokens else "longer"
        out.append(QualityProblem(
            "input-length", _src(run, "mean_prompt_tokens"),
            f"prompts {numbers.percent(abs(run.mean_prompt_tokens / budget_prompt_tokens - 1))} {rel} than the budget's: "
            f"mean {numbers.number(run.mean_prompt_tokens)} tokens ({_src(run, 'mean_prompt_tokens')}) for "
            f"{numbers.stated(budget_prompt_tokens)} (tolerance ±{numbers.percent(LENGTH_TOLERANCE)})"))
    return out
