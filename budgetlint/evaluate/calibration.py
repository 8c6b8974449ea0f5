"""The edge between benchmark measurements and the calibration core.

:func:`observation` turns one :class:`~budgetlint.bench.Measurement` into a
:class:`~budgetlint.physics.calibration.Observation` at the run's own
conditions (lengths, concurrency, arrival rate, request count), or says why
it cannot. :func:`calibrated_prediction` predicts a budget's promises at a
calibration, with its band. No file reading or writing here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Optional

from budgetlint.physics import calibration as core
from budgetlint.physics.shapes import Deployment

#: the statistics a fit uses of each metric, most robust first; tails are the band's business
FIT_STATS = ("p50", "mean", "p90")
TPOT_DEFINITIONS = {
    "budgetlint": core.TPOT_BUDGETLINT,
    "excludes_first_token": core.TPOT_EXCLUDES_FIRST,
    "per_token_timestamp": core.TPOT_EXCLUDES_FIRST,  # inference-perf: mean gap between tokens
    "includes_ttft": core.TPOT_INCLUDES_TTFT,
}


@dataclass(frozen=True)
class RunRef:
    """Where a run came from (for the calibration document)."""

    file: str
    label: str
    engine: Optional[str]
    engine_version: Optional[str]
    date: Optional[str]


def run_ref(m: Any) -> RunRef:
    prov = m.provenance
    return RunRef(m.source, m.label or "run 1", prov.engine, prov.engine_version, prov.date)


def observation(m: Any, deployment: Deployment, scheduler: tuple[int, int], replicas: int = 1) -> tuple[Optional[core.Observation], str]:
    """The run as a calibration observation, or ``(None, why not)``."""
    c = m.conditions
    # what the requests got, before what they asked for
    prompt = m.run.mean_prompt_tokens or c.prompt_tokens
    output = m.run.mean_output_tokens or c.output_tokens
    if not prompt or not output:
        return None, "its prompt and output lengths are not recorded"
    targets = []
    for metric in ("ttft", "tpot"):
        met = m.metrics.get(metric)
        if met is None:
            continue
        definition = TPOT_DEFINITIONS.get(met.definition, core.TPOT_EXCLUDES_FIRST)
        for stat in FIT_STATS:
            v = met.get(stat)
            if v is not None and math.isfinite(v) and v > 0:
                targets.append(core.Target(metric, stat, v, definition))
    if not targets:
        return None, "it has no TTFT or TPOT mean or median"
    rate = c.request_rate if c.request_rate is not None else m.run.request_rate
    conc = c.concurrency if c.concurrency is not None else m.run.max_concurrency
    requests = m.run.completed or c.successful_requests or c.num_requests
    if rate is None and conc is None:
        conc = m.run.mean_in_flight
        if conc is None:
            return None, "neither its concurrency nor its request rate is recorded"
    if rate is not None and math.isinf(rate) and not requests and conc is None:
        return None, "all requests were sent at once but their number is not recorded"
    dep = deployment
    if c.devices and c.devices != dep.devices:
        dep = replace(dep, devices=int(c.devices))
    try:
        obs = core.Observation(deployment=dep, prompt_tokens=float(prompt), output_tokens=float(output),
                               targets=tuple(targets), concurrency=conc, request_rate=rate,
                               requests=int(requests) if requests else None,
                               max_num_seqs=scheduler[0], max_num_batched_tokens=scheduler[1],
                               replicas=replicas,
                               label=f"{m.source} {m.label or 'run 1'}")
    except ValueError as exc:
        return None, str(exc)
    return obs, ""


SATURATED_WHY = ("every request was sent at once, more than the batch holds: its TTFT is queueing, not the "
                 "engine's speed, and simulating it costs tens of times a rate run (--include-saturated fits it)")


def saturated(obs: core.Observation) -> bool:
    """A run whose requests queue without bound (all sent at once, more than the batch holds):
    its TTFT is queueing, not physics; the TTFT criterion is for runs below saturation."""
    return obs.mode == "burst" and (obs.requests or 0) > (obs.concurrency or obs.max_num_seqs or 0) \
        or obs.mode == "burst" and obs.concurrency is None
