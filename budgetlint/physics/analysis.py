"""One call that does all the arithmetic for a deployment and a workload.

:func:`analyse` returns an :class:`Analysis` holding every intermediate
number, so a CLI can print the arithmetic step by step and a JSON report can
emit it (:meth:`Analysis.as_dict`: SI floats, the unit in each key name).

Conventions
-----------
* Effective bandwidth ``BW = peak bandwidth x efficiency.bandwidth``;
  effective compute ``F = dense peak at the compute precision x efficiency.compute``.
  An accelerator with no compute peak for the precision has unknown compute:
  the compute terms are left out (``F`` taken as unbounded), so every time
  is still a true lower bound, and ``compute_known`` is False: a caller must
  not call a promise *met* on such an analysis, only *cannot be met*.
* Weights read per forward pass: all weights touched except the input
  embedding rows not gathered (``memory.embedding_params_not_read``).
* Decode over the reply: output token j (j = 0..N-1) is charged one target
  step at context ``prompt + j``, divided by the accepted tokens per pass
  ``a``; with a draft model, each target pass also costs ``k`` draft decode
  steps (``k = deployment.lookahead``) and the target verifies ``k + 1``
  tokens per sequence (compute ``x (k + 1)``, MoE experts touched by
  ``B (k + 1)`` tokens). ``decode_s = (1/a) x sum_j pass(prompt + j)``.
* ``pace = N / decode_s`` (the mean pace over the reply), ``tpot = 1 / pace``
  (over all N tokens), ``aggregate = B x pace``: the promise arithmetic
  ``E2E = TTFT + N / pace``.
* The ``decode_*_s`` step terms and the binding resource are reported at the
  mean context ``prompt + (N - 1) / 2``.
* Prefill processes ``max(uncached, 1)`` tokens (a full cache hit still runs
  the last token to produce logits); a draft model's prefill is added.
* ``ttft = queue + prefill + connection setup + proxy delay``, the proxy
  delay ``(min(k, N) - 1) / pace`` for a proxy flushing every k tokens;
  ``e2e = queue + prefill + connection setup + decode_after_first_s`` (a proxy
  buffer delays the first visible token, not the last one, which is flushed
  at the end). Prefill produces the first token, so the physical floor of a
  reply holds ``N - 1`` decode steps (contexts ``prompt + 1 .. prompt + N - 1``):
  ``decode_after_first_s = decode_s - (the first step)``; for N = 1 it is 0.
* Memory: per device, in the steady state of continuous batching (all B
  sequences at the mean in-flight context ``prompt + N / 2``: ``memory_*``)
  and in the worst case (all at the longest context ``prompt + N``:
  ``memory_*_worst``), with the most sequences that fit in each.
* The roofline picture (for charts): per device, a decode step (target
  model, mean context) moves ``W/N + B KV/N`` bytes for ``B T 2 P_a / N``
  FLOP; the prefill reads the touched weights once (``W_u / N``) for its
  FLOP / N. Arithmetic intensity = FLOP / bytes; the attainable rate is
  ``min(F, I x BW)``; the ridge is ``F / BW`` (all at this efficiency).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, fields
from typing import Any, Optional

from .latency import proxy_delay_s, ttft_s
from .memory import kv_bytes_per_token, max_sequences_that_fit, memory_fit, params_read, weight_bytes
from .prefill import attention_flop, prefill_flop, prefill_time
from .shapes import ROOFLINE, Deployment, Edge, Efficiency, Workload
from .step import NO_PREFILL, PrefillLoad, StepInputs, iteration, prefill_load, steps_sum


@dataclass(frozen=True, slots=True)  # a report keeps two per budget: slots are a third of a dict
class Analysis:
    """Every number of one analysis (SI units, named in the field)."""

    # inputs as used
    devices: int
    concurrency: int
    prompt_tokens: float
    cached_prompt_tokens: float
    prefill_tokens: float
    output_tokens: float
    accepted_tokens_per_pass: float
    draft_lookahead_tokens: int
    efficiency_bandwidth: float
    efficiency_compute: float
    bandwidth_effective_bytes_per_s: float
    compute_precision_key: str
    compute_known: bool
    compute_peak_flop_per_s: Optional[float]  # None: unknown (compute_known False)
    compute_effective_flop_per_s: Optional[float]
    # bytes
    weight_bytes: float
    weight_bytes_touched_per_step: float
    kv_bytes_per_token: float
    kv_bytes_per_sequence_final: float
    # decode (target step at the mean context)
    decode_context_mean_tokens: float
    decode_memory_s: float
    decode_compute_s: float
    decode_step_s: float
    decode_binding: str
    draft_step_s: float
    decode_pass_s: float
    #: the decode pass's terms at the mean context, ``(name, label, seconds)`` each (physics/step.py)
    decode_terms: tuple
    # decode over the reply
    decode_s: float
    decode_after_first_s: float
    tpot_s: float
    pace_token_per_s: float
    aggregate_token_per_s: float
    # prefill
    prefill_linear_flop: float
    prefill_attention_flop: float
    prefill_flop: float
    prefill_compute_s: float
    prefill_weight_read_s: float
    draft_prefill_s: float
    prefill_s: float
    prefill_binding: str
    # latency
    queue_s: float
    connection_setup_s: float
    proxy_delay_s: float
    ttft_s: float
    e2e_s: float
    # memory per device: steady state (mean in-flight context) and worst case
    memory_context_steady_tokens: float
    memory_weight_bytes_per_device: float
    memory_kv_bytes_per_device: float
    memory_draft_bytes_per_device: float
    memory_overhead_bytes_per_device: float
    memory_required_bytes_per_device: float
    memory_available_bytes_per_device: Optional[float]  # None: device memory unknown
    memory_headroom_bytes_per_device: Optional[float]
    memory_fits: Optional[bool]  # None: not judged
    memory_max_sequences: Optional[int]
    memory_kv_worst_bytes_per_device: float
    memory_required_worst_bytes_per_device: float
    memory_headroom_worst_bytes_per_device: Optional[float]
    memory_fits_worst: Optional[bool]
    memory_max_sequences_worst: Optional[int]
    # the roofline picture (per device, peak figures; decode at the mean context,
    # the target model only): arithmetic intensity = FLOP / bytes moved, and the
    # attainable rate min(F, I x BW) at this analysis's efficiency
    bandwidth_peak_bytes_per_s: float
    ridge_intensity_flop_per_byte: float
    decode_flop_per_step: float
    decode_bytes_per_step: float
    decode_intensity_flop_per_byte: float
    decode_attainable_flop_per_s: float
    prefill_bytes: float
    prefill_intensity_flop_per_byte: float
    prefill_attainable_flop_per_s: float
    prefill_alltoall_s: float = 0.0  # expert-parallel dispatch + combine of the prompt (physics/step.py)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict: floats in SI units (unit in the key), strings, bools, ints."""
        # every field is a scalar, so a shallow copy equals dataclasses.asdict
        # (which deep-copies, at ~1 ms per call: bench_speed.py)
        out = {name: getattr(self, name) for name in _ANALYSIS_FIELDS}
        out["decode_terms"] = {name: seconds for name, _, seconds in self.decode_terms}  # unit: s
        return out

    def __reduce__(self) -> tuple:
        """Pickled as its values (a worker process sends analyses to the parent: ``--jobs``);
        equal analyses unpickle to one object, as budgets on one deployment share one."""
        return (_unpickled, (_VALUES(self),))


_ANALYSIS_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Analysis))
_UNPICKLED: dict[bytes, Analysis] = {}
_VALUES = operator.attrgetter(*_ANALYSIS_FIELDS)  # every field's value, as a tuple (in C)


def _unpickled(values: tuple) -> Analysis:
    import marshal

    key = marshal.dumps(values)  # 1 and 1.0, 0.0 and -0.0 apart: equal keys print the same
    found = _UNPICKLED.get(key)
    if found is None:
        found = Analysis(*values)
        if len(_UNPICKLED) >= 4096:  # bounded: a run of all-different deployments stays flat
            _UNPICKLED.clear()
        _UNPICKLED[key] = found
    return found


def _prefill_share(inputs: StepInputs, workload: Workload, uncached: float, cached: float) -> PrefillLoad:
    """The prefill each decode pass carries at concurrency B (continuous batching with chunked
    prefill): the other ``B - 1`` sequences each prefill ``U`` tokens once per reply of ``n``
    tokens, ``n / a`` passes (``a`` accepted tokens per pass), so a pass carries
    ``(B - 1) x a / n`` of one prompt's prefill (tokens, attention FLOP, cached-prefix KV read)."""
    others = workload.concurrency - 1
    if others <= 0:
        return NO_PREFILL
    one = prefill_load(inputs, ((uncached, cached),))
    f = others * inputs.tokens_per_pass / workload.output_tokens
    return PrefillLoad(one.tokens * f, one.attention_flop * f, one.kv_bytes * f)


def analyse(
    deployment: Deployment,
    workload: Workload,
    efficiency: Efficiency = ROOFLINE,
    queue_s: float = 0.0,
    edge: Optional[Edge] = None,
) -> Analysis:
    """All the roofline arithmetic for ``deployment`` serving ``workload``."""
    if not (math.isfinite(queue_s) and queue_s >= 0):
        raise ValueError(f"queue_s must be a non-negative finite number, got {queue_s!r}")
    dep, wl = deployment, workload
    model, acc = dep.model, dep.accelerator
    batch = wl.concurrency
    inp = StepInputs.of(dep, efficiency)  # the step inputs: decode, the reply sum and the memory fit read them
    n_dev = inp.devices  # tensor x data x pipeline
    bw, flops = inp.bandwidth_bytes_per_s, inp.compute_flop_per_s
    key, peak = inp.compute_precision_key, inp.compute_peak_flop_per_s
    accepted = dep.spec_accepted_tokens_per_pass
    k = dep.lookahead
    tokens_per_seq = k + 1.0
    b_w = dep.weight_bytes_per_param
    active = float(model.active_params)  # type: ignore[arg-type]

    w_total = inp.weight_bytes_total
    w_touched = inp.target_weight_bytes(batch * tokens_per_seq)
    w_fit = inp.weight_bytes_per_device * n_dev  # / N: what a device holds (DP replicates attention)
    kv_tok = kv_bytes_per_token(model, dep.kv_bytes_per_elem)
    prompt = wl.prompt_tokens
    u = max(wl.uncached_prompt_tokens, 1.0)
    c = max(prompt - u, 0.0)

    # ---- decode over the reply: output token j is charged one pass at context prompt + j
    out = wl.output_tokens
    count = max(1, int(round(out)))
    scale = out / count
    start = wl.prompt_tokens
    share = _prefill_share(inp, wl, u, c) if dep.engine_terms and dep.prefill_interference else NO_PREFILL
    mean_ctx = start + (count - 1) / 2.0
    terms = iteration(inp, batch, batch * mean_ctx, share)
    draft = dep.draft if k > 0 else None
    end_ctx = wl.prompt_tokens + out
    decode_s = steps_sum(inp, batch, start, count, share) / accepted * scale
    pace = out / decode_s
    # the first output token comes from prefill: drop the step at j = 0
    first_step = iteration(inp, batch, batch * start, share).step_s
    decode_after_first = max(0.0, decode_s - first_step / accepted * scale) if count > 1 else 0.0
    draft_prefill_s = 0.0

    # ---- prefill
    attn = attention_flop(model, u, c)
    lin = prefill_flop(active, u)
    pf_flop, pf_weights, pf_a2a = inp.prefill_alone(u, attn)
    pf = prefill_time(
        flop=pf_flop,
        weight_bytes=pf_weights,
        devices=n_dev, compute_flop_per_s=flops, bandwidth_bytes_per_s=bw,
    )
    if draft is not None:
        b_wd = dep.draft_weight_bytes_per_param or b_w
        draft_prefill_s = prefill_time(
            flop=prefill_flop(float(draft.active_params), u, attention_flop(draft, u, c)),  # type: ignore[arg-type]
            weight_bytes=weight_bytes(params_read(draft, u), b_wd),
            devices=n_dev, compute_flop_per_s=flops, bandwidth_bytes_per_s=bw,
        ).time_s
    # the prompt's pass is an engine iteration too: it pays the fixed part (o + L x a; 0 in the bound)
    prefill_s = pf.time_s + draft_prefill_s + pf_a2a + inp.overhead_s

    # ---- the roofline picture (per device; N cancels in the intensities)
    dec_flop = batch * tokens_per_seq * 2.0 * active / n_dev
    dec_bytes = (w_touched + batch * inp.target.kv_bytes_at(mean_ctx)) / n_dev
    pf_flop = (lin + attn) / n_dev
    pf_bytes = weight_bytes(params_read(model, u), b_w) / n_dev
    dec_ai = dec_flop / dec_bytes
    pf_ai = pf_flop / pf_bytes

    # ---- latency
    setup = edge.connection_setup_s if edge else 0.0
    # a buffer larger than the reply is flushed when generation ends: min(k, N)
    flush = min(edge.proxy_flush_tokens, out) if edge else 0.0
    proxy = proxy_delay_s(flush, pace) if edge else 0.0
    ttft = ttft_s(queue_s=queue_s, prefill_s=prefill_s, connection_setup_s=setup,
                  proxy_flush_tokens=flush, pace_token_per_s=pace)
    e2e = queue_s + prefill_s + setup + decode_after_first

    # ---- memory
    # per device it is / N below (MLA's latent counted on every tensor rank: StepInputs.kv_copies)
    kv_final = inp.target.kv_bytes_at(end_ctx)
    steady_ctx = wl.prompt_tokens + out / 2.0
    kv_steady = inp.target.kv_bytes_at(steady_ctx)
    draft_kv_steady = inp.draft.kv_bytes_at(steady_ctx) if inp.draft is not None else 0.0
    draft_kv_final = inp.draft.kv_bytes_at(end_ctx) if inp.draft is not None else 0.0
    draft_w_total = inp.draft_weight_bytes_total

    def fit_at(kv_seq: float, draft_kv_seq: float) -> tuple[Any, Optional[int]]:
        common = dict(devices=n_dev, memory_bytes=acc.memory_bytes, usable_fraction=dep.memory_usable_fraction,
                      overhead_bytes=dep.memory_overhead_bytes, of_free=dep.kv_of_free_memory)
        fit = memory_fit(weight_bytes_total=w_fit, kv_bytes_per_sequence=kv_seq, concurrency=batch,
                         draft_bytes_total=draft_w_total + batch * draft_kv_seq,
                         draft_weight_bytes_total=draft_w_total, **common)
        most = max_sequences_that_fit(weight_bytes_total=w_fit, kv_bytes_per_sequence=kv_seq + draft_kv_seq,
                                      fixed_bytes_total=draft_w_total, **common)
        return fit, most

    fit, most = fit_at(kv_steady, draft_kv_steady)
    worst, most_worst = fit_at(kv_final, draft_kv_final)

    return Analysis(
        devices=n_dev,
        concurrency=batch,
        prompt_tokens=prompt,
        cached_prompt_tokens=wl.cached_prompt_tokens,
        prefill_tokens=u,
        output_tokens=out,
        accepted_tokens_per_pass=accepted,
        draft_lookahead_tokens=k,
        efficiency_bandwidth=efficiency.bandwidth,
        efficiency_compute=efficiency.compute,
        bandwidth_effective_bytes_per_s=bw,
        compute_precision_key=key,
        compute_known=peak is not None,
        compute_peak_flop_per_s=peak,
        compute_effective_flop_per_s=flops if peak is not None else None,
        weight_bytes=w_total,
        weight_bytes_touched_per_step=w_touched,
        kv_bytes_per_token=kv_tok,
        kv_bytes_per_sequence_final=kv_final,
        decode_context_mean_tokens=mean_ctx,
        decode_memory_s=terms.memory_s,
        decode_compute_s=terms.compute_s,
        decode_step_s=terms.target_s,
        decode_binding=terms.binding,
        draft_step_s=terms.draft_s / k if draft is not None else 0.0,
        decode_pass_s=terms.step_s,
        decode_terms=terms.named(),
        decode_s=decode_s,
        decode_after_first_s=decode_after_first,
        tpot_s=decode_s / out,
        pace_token_per_s=pace,
        aggregate_token_per_s=batch * pace,
        prefill_linear_flop=lin,
        prefill_attention_flop=attn,
        prefill_flop=lin + attn,
        prefill_compute_s=pf.compute_s,
        prefill_weight_read_s=pf.weight_read_s,
        draft_prefill_s=draft_prefill_s,
        prefill_s=prefill_s,
        prefill_binding=pf.binding,
        queue_s=queue_s,
        connection_setup_s=setup,
        proxy_delay_s=proxy,
        ttft_s=ttft,
        e2e_s=e2e,
        memory_context_steady_tokens=steady_ctx,
        memory_weight_bytes_per_device=fit.weight_bytes_per_device,
        memory_kv_bytes_per_device=fit.kv_bytes_per_device,
        memory_draft_bytes_per_device=fit.draft_bytes_per_device,
        memory_overhead_bytes_per_device=fit.overhead_bytes_per_device,
        memory_required_bytes_per_device=fit.required_bytes_per_device,
        memory_available_bytes_per_device=fit.available_bytes_per_device,
        memory_headroom_bytes_per_device=fit.headroom_bytes_per_device,
        memory_fits=fit.fits,
        memory_max_sequences=most,
        memory_kv_worst_bytes_per_device=worst.kv_bytes_per_device,
        memory_required_worst_bytes_per_device=worst.required_bytes_per_device,
        memory_headroom_worst_bytes_per_device=worst.headroom_bytes_per_device,
        memory_fits_worst=worst.fits,
        memory_max_sequences_worst=most_worst,
        bandwidth_peak_bytes_per_s=acc.bandwidth_bytes_per_s,
        ridge_intensity_flop_per_byte=flops / bw,
        decode_flop_per_step=dec_flop,
        decode_bytes_per_step=dec_bytes,
        decode_intensity_flop_per_byte=dec_ai,
        decode_attainable_flop_per_s=min(flops, dec_ai * bw),
        prefill_bytes=pf_bytes,
        prefill_intensity_flop_per_byte=pf_ai,
        prefill_attainable_flop_per_s=min(flops, pf_ai * bw),
        prefill_alltoall_s=pf_a2a,
    )
