"""The worked arithmetic behind each verdict, as a reviewer reads it in a PR.

Every number carries its unit and its origin (the YAML line, or the catalog
entry and its source), in the order physics.md works its examples:
weights, KV cache, decode step, pace, prefill, TTFT, end-to-end, memory,
then the verdict per promise and the levers that would fix a miss.
"""

from __future__ import annotations

from typing import Any

from budgetlint.findings import printable
from budgetlint.model.units import format_headroom, format_percent, format_quantity
from budgetlint.evaluate.roofline import lever_words
from budgetlint.rules._messages import headroom
from budgetlint.text import numbers


# the numbers in :mod:`budgetlint.text.numbers`'s one rounding rule, under the names this module reads
def pct_label(load: Any) -> str:
    return f"p{numbers.stated(load.percentile)}"


def _time(x: float) -> str:
    return numbers.quantity(x, "s")


def _bytes(x: float) -> str:
    return numbers.quantity(x, "B")


def _bandwidth(x: float) -> str:
    return numbers.quantity(x, "B/s")


def _compute(x: float | None) -> str:
    return numbers.quantity(x, "FLOP/s", absent="unknown compute")


def _memory(x: float | None) -> str:
    return numbers.quantity(x, "B", absent="unknown memory")


def _count(x: float) -> str:
    """A count: 70.55e9 -> "70.55e9"; 2000 -> "2000"; 20000 -> "20,000" (the rounding rule's grouping)."""
    if x >= 1e6:
        return f"{numbers.number(x / 1e9, figures=4)}e9" if x >= 1e9 else f"{numbers.number(x / 1e6, figures=4)}e6"
    return numbers.number(x)


VERDICT_WORDS = {"cannot-be-met": "CANNOT BE MET", "at-risk": "AT RISK", "met": "met", "unknown": "unknown",
                 "not-shown": "NOT SHOWN"}


def _queue_words(ev: Any) -> str:
    """What the queue allowance holds: the queue, and at the client edge the network segments too."""
    b = ev.budget
    if b.workload is not None and b.workload.measured_at == "client" and any(
            s.kind == "network" and s.allowance_s for s in b.segments):
        return "queue + network"
    return "queue"


def explain_budget(evaluation: Any) -> str:
    """The worked arithmetic of one :class:`~budgetlint.evaluate.BudgetEvaluation`."""
    ev = evaluation.roofline
    b = ev.budget
    lines: list[str] = []
    add = lines.append
    add(f"{printable(b.name)}  ({b.loc('name')})")
    add(f"  owner {printable(b.owner or '(none)')}; promise at {printable(b.percentile or 'an unstated percentile')}")
    p = b.promise
    promised = []
    if p.ttft_s is not None:
        promised.append(f"ttft {_time(p.ttft_s)} [{b.loc('promise', 'ttft')}]")
    if p.tpot_s is not None:
        key = "pace" if p.pace_given else "tpot"
        promised.append(f"pace {numbers.quantity(1 / p.tpot_s, 'token/s')} = tpot {_time(p.tpot_s)} [{b.loc('promise', key)}]")
    if p.e2e_s is not None:
        promised.append(f"e2e {_time(p.e2e_s)} [{b.loc('promise', 'e2e')}]")
    if p.cost_usd_per_token is not None:
        owner = f", owner {printable(b.cost_owner)}" if getattr(b, "cost_owner", None) else ""
        promised.append(f"cost {numbers.quantity(p.cost_usd_per_token, 'USD/token')}{owner} [{b.loc('promise', 'cost')}]")
    add("  promises: " + "; ".join(promised))
    if ev.skipped:
        add(f"  physics not checked: {printable(ev.skipped)}")
        lines.extend(evidence_lines(evaluation.links, b))
        lines.extend(calibration_lines(evaluation))
        lines.extend(deployed_lines(evaluation))
        return "\n".join(lines)

    dep, wl, bd = b.deployment, ev.workload, ev.bound
    m, hw = dep.model, dep.hardware
    d = ev.deployment
    pools = getattr(ev, "pools", None)
    if pools is not None:  # disaggregated: the arithmetic is the decode pool's, its prefill lines the prefill pool's
        d = pools.pools_bound.decode
        hw = dep.disaggregated.decode.hardware or hw
    n = d.devices
    add("")
    add("  Inputs")
    add(f"    model     {printable(m.name)}: {_count(m.parameters)} parameters"
        + (f" ({_count(m.active)} active)" if m.active != m.parameters else "")
        + f", {m.layers} layers"
        + (f", {m.kv_heads} KV heads x {m.head_dim} head dim" if m.attention != "mla" else
           f", MLA latent {m.kv_lora_rank} + rope {m.qk_rope_head_dim}")
        + f"   [{printable(m.origin())}]")
    peak_line = (f"{_compute(bd.compute_peak_flop_per_s)} dense {bd.compute_precision_key}" if bd.compute_known
                 else "no compute peak (unknown: compute is not checked)")
    add(f"    hardware  {printable(hw.name)}{' (the decode pool)' if pools is not None else ''}: "
        f"{_memory(hw.memory_bytes)}, {_bandwidth(hw.bandwidth_bytes_per_s)}, {peak_line}   "
        f"[{printable(hw.origin())}]")
    topo = ""
    if d.total_devices != d.devices or d.expert_parallel > 1:
        topo = (f" per replica = tensor {d.devices} x data {d.data_parallel} x pipeline {d.pipeline_parallel}"
                + (f", experts over {d.expert_parallel} ranks (load imbalance {numbers.number(d.expert_imbalance)})"
                   if d.expert_parallel > 1 else ""))
        n = d.total_devices
    pool_note = ""
    if pools is not None:
        pf_d = pools.pools_bound.prefill
        pool_note = (f" per decode replica ({numbers.count(pf_d.total_devices, 'device')} per prefill replica: the "
                     f"arithmetic below is the decode pool's, its prefill lines the prefill pool's)")
    add(f"    deploy    N = {numbers.count(n, 'device')}{topo}{pool_note}, {dep.weight_precision} weights ({numbers.stated(d.weight_bytes_per_param)} B/param), "
        f"{dep.kv_precision or 'bf16'} KV cache ({numbers.stated(d.kv_bytes_per_elem)} B/element)"
        + (f", speculative {numbers.stated(d.spec_accepted_tokens_per_pass)} accepted tokens/pass" if d.spec_accepted_tokens_per_pass > 1 else "")
        + f"   [{b.loc('deployment')}]")
    add(f"    workload  {numbers.stated(wl.prompt_tokens)} prompt tokens ({numbers.stated(wl.cached_prompt_tokens)} cached), "
        f"{numbers.stated(wl.output_tokens)} output tokens, B = {wl.concurrency} sequences   [{b.loc('workload')}]")

    lines.extend(pools_lines(ev))
    add("")
    add("  Arithmetic at the pure roofline (100% of bandwidth and compute)")
    step = 1
    w = bd.weight_bytes

    def s(text: str) -> None:
        nonlocal step
        add(f"    {step}. {text}")
        step += 1

    s(f"Weights  W = P x b_w = {_count(m.parameters)} x {numbers.stated(d.weight_bytes_per_param)} B = {_bytes(w)}"
      + (f"; per device W/N = {_bytes(w / n)}" if n > 1 else ""))
    if bd.weight_bytes_touched_per_step != w:
        why = []
        if m.experts:
            why.append(f"MoE: {wl.concurrency} sequences touch only some experts")
        if m.vocab_size and m.hidden_size and not m.tie_word_embeddings:
            why.append(f"the input embedding ({_count(m.vocab_size)} x {_count(m.hidden_size)}) is gathered one row "
                       "per token, not read (the LM head is)")
        elif m.vocab_size and m.hidden_size:
            why.append("tied embeddings: the one matrix is read once, as the LM head")
        s(f"Weights read per decode step = {_bytes(bd.weight_bytes_touched_per_step)}"
          + (f" ({'; '.join(why)})" if why else ""))
    if m.attention == "mla":
        s(f"KV cache per token (MLA)  layers x (kv_lora_rank + rope_dim) x b_kv = {m.layers} x "
          f"({m.kv_lora_rank} + {m.qk_rope_head_dim}) x {numbers.stated(d.kv_bytes_per_elem)} B = {_bytes(bd.kv_bytes_per_token)}")
    else:
        s(f"KV cache per token  2 x layers x kv_heads x head_dim x b_kv = 2 x {m.layers} x {m.kv_heads} x "
          f"{m.head_dim} x {numbers.stated(d.kv_bytes_per_elem)} B = {_bytes(bd.kv_bytes_per_token)}"
          + (" (sliding-window layers capped at their window)" if m.sliding_window else ""))
    s(f"Decode step at the mean context L = {numbers.number(bd.decode_context_mean_tokens)} tokens, its terms:")
    lines.extend(decode_term_lines(bd))
    if bd.compute_known:
        add(f"         t_mem = weights + KV = {_time(bd.decode_memory_s)}; t_cmp = linear + attention = "
            f"{_time(bd.decode_compute_s)} at {_compute(bd.compute_peak_flop_per_s)}")
    else:
        add(f"         t_mem = weights + KV = {_time(bd.decode_memory_s)}; t_cmp unknown (no compute peak): left out, "
            "so the step is a bandwidth-only lower bound")
    add(f"         step = max(t_mem, t_cmp) + the terms after it = {_time(bd.decode_pass_s)} ({bd.decode_binding}-bound)")
    if d.spec_accepted_tokens_per_pass > 1:
        s(f"Speculative decoding: {numbers.stated(d.spec_accepted_tokens_per_pass)} tokens accepted per target pass"
          + (f"; the draft costs {_time(bd.draft_step_s)} per pass" if bd.draft_step_s else " (draft not charged: none declared)"))
    s(f"Pace over the {numbers.stated(wl.output_tokens)}-token reply (KV grows with each token): decode {_time(bd.decode_s)}, "
      f"pace = {numbers.stated(wl.output_tokens)} / {_time(bd.decode_s)} = {numbers.quantity(bd.pace_token_per_s, 'token/s')} per user "
      f"({numbers.quantity(bd.aggregate_token_per_s, 'token/s')} aggregate)")
    s(f"Prefill of {numbers.stated(bd.prefill_tokens)} uncached tokens: 2 x P_active x tokens + attention = "
      f"{numbers.quantity(bd.prefill_linear_flop, 'FLOP')} + {numbers.quantity(bd.prefill_attention_flop, 'FLOP')} = {numbers.quantity(bd.prefill_flop, 'FLOP')}")
    if topo and bd.compute_known:
        add(f"         time: the prompt on one data-parallel rank (attention and dense layers on {numbers.count(d.devices, 'device')}, "
            f"the experts on {d.devices * d.data_parallel}, {numbers.count(d.pipeline_parallel, 'stage')} in turn) = {_time(bd.prefill_compute_s)}; "
            f"never below its weight read = {_time(bd.prefill_weight_read_s)}"
            + (f"; all-to-all {_time(bd.prefill_alltoall_s)}" if bd.prefill_alltoall_s else ""))
    elif bd.compute_known:
        pf_n, pf_peak = n, bd.compute_peak_flop_per_s
        if pools is not None:
            pf_n, pf_peak = pools.pools_bound.prefill.devices, pools.bound.prefill.compute_peak_flop_per_s
        add(f"         time = FLOP / (N x F) = {numbers.quantity(bd.prefill_flop, 'FLOP')} / ({pf_n} x {_compute(pf_peak)}) = "
            f"{_time(bd.prefill_compute_s)}; never below one weight read W/N/BW = {_time(bd.prefill_weight_read_s)}")
    else:
        add(f"         time = FLOP / (N x F): unknown (no compute peak); only the floor, one weight read "
            f"W/N/BW = {_time(bd.prefill_weight_read_s)}, is checked")
    if pools is not None:
        add(f"         prefill = {_time(pools.bound.prefill.prefill_s)} ({bd.prefill_binding}-bound), on the prefill pool")
    else:
        add(f"         prefill = {_time(bd.prefill_s)} ({bd.prefill_binding}-bound)")
    parts = [f"{_queue_words(ev)} {_time(bd.queue_s)}"] if bd.queue_s else []
    if pools is not None:
        parts += [f"prefill {_time(pools.bound.prefill.prefill_s)}", f"KV transfer {_time(pools.bound.kv_transfer_s)}"]
    else:
        parts.append(f"prefill {_time(bd.prefill_s)}")
    if bd.connection_setup_s:
        parts.append(f"connection {_time(bd.connection_setup_s)}")
    if bd.proxy_delay_s:
        parts.append(f"proxy flush {_time(bd.proxy_delay_s)}")
    s(f"TTFT = {' + '.join(parts)} = {_time(bd.ttft_s)}")
    first = bd.e2e_s - bd.decode_after_first_s  # queue + prefill + connection: no proxy delay
    e2e_parts = [p for p in parts if not p.startswith("proxy flush")]
    s(f"End to end = {' + '.join(e2e_parts)} + {numbers.stated(wl.output_tokens - 1)} more decode steps (prefill made the "
      f"first token) = {_time(first)} + {_time(bd.decode_after_first_s)} = {_time(bd.e2e_s)}"
      + ("; the proxy buffer delays the first token, not the last (flushed when generation ends)"
         if bd.proxy_delay_s else ""))
    s(f"Memory per device, steady state (B sequences at the mean in-flight context prompt + output / 2 = "
      f"{numbers.stated(bd.memory_context_steady_tokens)} tokens) = W/N + B x L x kv / N"
      + (" + draft" if bd.memory_draft_bytes_per_device else "")
      + (" + overhead" if bd.memory_overhead_bytes_per_device else "")
      + f" = {_bytes(bd.memory_weight_bytes_per_device)} + {_bytes(bd.memory_kv_bytes_per_device)}"
      + (f" + {_bytes(bd.memory_draft_bytes_per_device)}" if bd.memory_draft_bytes_per_device else "")
      + (f" + {_bytes(bd.memory_overhead_bytes_per_device)}" if bd.memory_overhead_bytes_per_device else "")
      + f" = {_bytes(bd.memory_required_bytes_per_device)} of {_memory(hw.memory_bytes)}"
      + (f" ({bd.memory_max_sequences} sequences fit)" if bd.memory_max_sequences is not None else ""))
    add(f"         worst case (all at prompt + output = {numbers.stated(wl.prompt_tokens + wl.output_tokens)} tokens): "
        f"{_bytes(bd.memory_required_worst_bytes_per_device)}"
        + (f" ({bd.memory_max_sequences_worst} sequences fit)" if bd.memory_max_sequences_worst is not None else ""))

    eff = ev.efficiency
    rl = ev.realistic
    add("")
    if ev.assumed is not None:
        add(f"  Assumed efficiency: {ev.assumed.words()}")
    add(f"  At the realistic efficiency ({numbers.percent(eff.bandwidth)} of bandwidth, {numbers.percent(eff.compute)} of compute"
        + (f", {numbers.percent(d.collective_overhead)} collective overhead" if n > 1 else "")
        + f", {numbers.percent(d.memory_usable_fraction)} of memory usable, "
        + f"{_bytes(d.memory_overhead_bytes)} {'memory_overhead' if dep.memory_overhead_bytes is not None else 'runtime reserve'}): "
        f"ttft {_time(rl.ttft_s)}, pace {numbers.quantity(rl.pace_token_per_s, 'token/s')}, e2e {_time(rl.e2e_s)}, "
        f"memory {_bytes(rl.memory_required_bytes_per_device)} of {_memory(rl.memory_available_bytes_per_device)}"
        + (f" usable (worst case {_bytes(rl.memory_required_worst_bytes_per_device)})"
           if rl.memory_available_bytes_per_device is not None else ""))
    add(f"    decode pass at the realistic efficiency, its terms ({_time(rl.decode_pass_s)} in all, "
        f"{rl.decode_binding}-bound):")
    lines.extend(decode_term_lines(rl, "      "))
    add("")
    if evaluation.load is not None and evaluation.load.result is not None:
        from budgetlint.judge import flat_words

        add(f"  Verdicts of the flat estimate ({flat_words(evaluation)};")
        add("  the simulated figures under load are below, and the Judgement at the end is what counts)")
    else:
        add("  Verdicts")
    for name, v in ev.verdicts.items():
        seg = next((x for x in b.segments if f"segment:{x.name}" == name), None)
        if seg is not None and seg.kind == "decode":
            row = (f"decode segment {seg.name!r} ({seg.owner or 'no owner'}) promise {numbers.quantity(1 / v.budget_value, 'token/s')}; "
                   f"bound {numbers.quantity(1 / v.bound_value, 'token/s')}; realistic {numbers.quantity(1 / v.realistic_value, 'token/s')}")
        elif seg is not None:
            row = (f"prefill segment {seg.name!r} ({seg.owner or 'no owner'}) promise {_time(v.budget_value)}; "
                   f"bound {_time(v.bound_value)}; realistic {_time(v.realistic_value)}")
        elif name == "tpot":
            row = (f"pace   promise {numbers.quantity(1 / v.budget_value, 'token/s')}; bound {numbers.quantity(1 / v.bound_value, 'token/s')}; "
                   f"realistic {numbers.quantity(1 / v.realistic_value, 'token/s')}")
        elif name == "memory":
            row = (f"memory needs {_bytes(v.bound_value)} per device of {_memory(hw.memory_bytes)} (bound); "
                   f"{_bytes(v.realistic_value)} of {_memory(v.budget_value)} usable (realistic)")
        else:
            row = (f"{name:<6} promise {_time(v.budget_value)}; bound {_time(v.bound_value)}; realistic {_time(v.realistic_value)}")
        extra = ""
        if v.required_efficiency is not None and v.verdict != "met":
            extra = f"; needs {format_percent(v.required_efficiency)} efficiency"
        if v.budget_value and v.realistic_value and v.verdict != "unknown":
            extra += f"; headroom {format_headroom(headroom(v))}"
        add(f"    {row}  ->  {VERDICT_WORDS[v.verdict]}{extra}")
        for o in v.optimistic:
            add(f"           relies on {o}")
    if any(v.verdict != "met" for v in ev.verdicts.values()):
        levers = evaluation.levers
        add("")
        if levers:
            add("  Levers that would meet every promise at the realistic efficiency")
            for lv in levers:
                add(f"    - {lever_words(lv)}")
        else:
            add("  No single standard lever meets every promise: loosen the promise or combine levers.")
    lines.extend(evidence_lines(evaluation.links, b))
    lines.extend(calibration_lines(evaluation))
    lines.extend(deployed_lines(evaluation))
    if evaluation.load is not None:
        add("")
        lines.extend(under_load(evaluation))
    lines.extend(cost_lines(evaluation))
    lines.extend(judgement_lines(evaluation))
    return "\n".join(lines)


def cost_lines(evaluation: Any) -> list[str]:
    """The "Cost and energy" section (docs/cost.md): the operating point, the price and the power with
    where each came from, and each figure's arithmetic, as evaluate/cost.py computed it."""
    c = getattr(evaluation, "cost", None)
    if c is None:
        return []
    return ["", "  Cost and energy at the judged operating point (docs/cost.md)"] + \
        [f"    {printable(line)}" for line in c.arithmetic()]


def deployed_lines(evaluation: Any) -> list[str]:
    """The deployed configuration's part (docs/deployed-config.md): files, engine, values used, defaults."""
    de = getattr(evaluation, "deployed", None)
    if de is None:
        return []
    out = ["", "  Deployed configuration"]
    if de.files:
        out.append("    read " + ", ".join(printable(f) for f in de.files))
    if de.engine:
        out.append(f"    engine {printable(de.engine)}" + (f" {printable(de.engine_version)}" if de.engine_version else "")
                   + (f"   [{printable(de.engine_from)}]" if de.engine_from else ""))
    if de.release:
        out.append(f"    defaults of {de.release}" + (f": {printable(de.release_note)}" if de.release_note else ""))
    elif de.release_note:
        out.append(f"    {printable(de.release_note)}")
    for key, why in de.used.items():
        out.append(f"    {key}: {printable(why)}")
    for key, why in de.defaults.items():
        out.append(f"    {key} (engine default): {printable(why)}")
    for c in de.contradictions:
        out.append(f"    contradiction: {printable(c.budget_text)} [{c.budget_loc}] vs {printable(c.deployed_text)} "
                   f"[{printable(c.deployed.where)}]; {printable(c.used)}")
    for cfg in de.configs:
        for u in cfg.unresolved:
            out.append(f"    unresolved: {printable(u.text)} [{printable(u.where)}] (a variable: not read)")
        for u in cfg.unread:  # a file it names, not read: its text says why
            out.append(f"    unresolved: {printable(u.text)} [{printable(u.where)}]")
    return out


def decode_term_lines(analysis: Any, indent: str = "         ") -> list[str]:
    """The decode pass's terms as the analysis names them (physics/step.py), one a line; terms
    that are zero for this deployment are left out. Nothing is computed here."""
    rows = [(label, seconds) for _, label, seconds in analysis.decode_terms if seconds]
    width = max((len(label) for label, _ in rows), default=0)
    return [f"{indent}{label:<{width}}  {_time(seconds)}" for label, seconds in rows]


def judgement_lines(evaluation: Any) -> list[str]:
    """The one verdict per promise and what decided it (budgetlint.judge; docs/judgement.md):
    what every output format shows, with every other basis's value weighed."""
    judgement = getattr(evaluation, "judgement", None) or {}
    if not judgement:
        return []
    from budgetlint.judge import fmt as _fmt

    out = ["", "  Judgement (what every output shows; precedence in docs/judgement.md)"]
    for name, j in judgement.items():
        room = f"; headroom {format_headroom(j.headroom)}" if j.headroom is not None else ""
        value = f" {_fmt(j.value, j.unit)}" if j.value is not None else ""
        others = ", ".join(f"{basis} {_fmt(v, j.unit)}" for basis, v in j.considered.items())
        out.append(f"    {name:<6} {VERDICT_WORDS.get(j.verdict, j.verdict)} on the {j.basis}{value}{room}"
                   + (f"; considered: {others}" if others else ""))
        if j.words:
            out.append(f"           {j.words}")
        if j.note:
            out.append(f"           {j.note}")
    return out


def calibration_lines(evaluation: Any) -> list[str]:
    """The deployment's calibration (docs/calibration.md): calibrated or assumed, the band, the runs."""
    ce = getattr(evaluation, "calibration", None)
    if ce is None:
        return ["", "  Calibration: none; the estimates use assumed efficiencies (docs/calibration.md)"] \
            if not evaluation.roofline.skipped else []
    out = ["", f"  Calibration ({ce.path}, declared at {ce.declared_at})"]
    if ce.calibration is None:
        out.extend(f"    not used: {f.message}" for f in ce.problems)
        out.append("    the estimates use assumed efficiencies")
        return out
    c = ce.calibration
    p = c.params
    out.append(f"    {ce.origin_words()}, fitted {c.created or 'on an unrecorded date'}")
    out.append(f"    parameters: {numbers.percent(p.bandwidth)} of bandwidth, {numbers.percent(p.compute)} of compute, "
               f"{_time(p.iteration_overhead_s)} per iteration, {_time(p.collective_latency_s)} per layer under "
               f"tensor parallelism, {_time(p.ttft_overhead_s)} on every first token")
    for metric in ("ttft", "tpot"):
        e = c.error.get(metric)
        if e:
            out.append(f"    leave-one-out {metric}: median error {numbers.percent(e['median'])}, max {numbers.percent(e['max'])} "
                       f"over {numbers.count(e['runs'], 'run')} (the band)")
    for key, label in (("ttft_s", "ttft"), ("tpot_s", "tpot"), ("e2e_s", "e2e")):
        v = ce.predicted.get(key)
        if v is not None:
            out.append(f"    predicted {label} {_time(v)} {ce.band_words(label)}")
    for check_name, message in ce.stale:
        out.append(f"    STALE ({check_name}): {message}")
    for o in ce.outside:
        out.append(f"    OUTSIDE THE BAND: {o.run} {o.metric} {o.stat} measured {_time(o.measured_s)}, "
                   f"predicted {_time(o.predicted_s)} ({numbers.percent(o.error, signed=True)})")
    return out


def evidence_lines(links: Any, b: Any) -> list[str]:
    """The budget's benchmark evidence: per measurement its requests, interval, run quality, age."""
    from budgetlint.rules._messages import evidence_figures as figures_apart
    from budgetlint.rules._messages import evidence_value as fmt_value
    from budgetlint.rules._messages import promise_words

    if not links:
        return []
    out = ["", "  Evidence (95% distribution-free intervals from order statistics)"]
    for lk in links:
        m = lk.measurement
        prov = m.provenance
        origin = ", ".join(x for x in (
            prov.tool and f"{prov.tool}{' ' + prov.tool_version if prov.tool_version else ''}",
            prov.engine and f"engine {prov.engine}{' ' + prov.engine_version if prov.engine_version else ''}",
            prov.gpu and f"GPU {prov.gpu}", prov.date and f"date {prov.date}") if x)
        age = f"; {lk.age_days} days old" if lk.age_days is not None else "; date unknown"
        state = "counts" if lk.counts else ("EXPIRED" if lk.expired else "does not match")
        out.append(f"    {lk.name}  [{state}]  {origin or 'no provenance recorded'}{age}")
        for name, r in lk.readings.items():
            what = promise_words(b, name)
            if r.status != "compared":
                out.append(f"      {r.percentile} {what}: {r.status} ({r.reason})")
                continue
            pace = name == "tpot" and b.promise.pace_given
            verdict = "met" if (r.margin or 0) >= -1e-9 else "missed"
            s = lk.sufficiency.get(name)
            fig = figures_apart(name, pace, r.measured_s, r.promised_s, *((s.lower_s, s.upper_s) if s else ()))
            detail = ""
            if s is not None:
                if verdict == "met" and not s.shown:
                    verdict = "NOT SHOWN"
                if s.n is None:
                    detail = f"; request count unknown ({r.percentile} needs {numbers.number(s.needed_n)})"
                else:
                    detail = f"; {numbers.number(s.n)} requests ({s.n_source}), {s.words(pace, fig)}; {r.percentile} needs {numbers.number(s.needed_n)}"
            out.append(f"      {r.percentile} {what} {fmt_value(name, r.measured_s, pace, fig)} vs promise "
                       f"{fmt_value(name, r.promised_s, pace, fig)}: {verdict}{detail}")
        for q in lk.quality:
            out.append(f"      quality ({q.check}): {q.message}")
        for st in lk.stale:
            out.append(f"      stale ({st.check}): {st.message}")
        if lk.expires:
            out.append(f"      entry expires {lk.expires}" + (" (expired)" if lk.expired else ""))
    return out


def under_load(evaluation: Any) -> list[str]:
    """The "Under load" section: the declared traffic simulated (docs/load.md)."""
    from budgetlint.evaluate.load import load_words, mechanism, utilisation

    load = evaluation.load
    b = evaluation.budget
    out = ["  Under load (simulated, docs/load.md)"]
    if load.skipped is not None:
        out.append(f"    not simulated: {load.skipped}")
        return out
    r = load.result
    wl = b.workload
    if load.arrival_rate_per_s is not None:
        per = "replica" if wl.arrival_rate_per == "replica" else "service"
        out.append(f"    traffic: {wl.arrival} arrivals at {format_quantity(load.arrival_rate_per_s, 'request_rate')} "
                   f"for the service (declared per {per}) over {numbers.count(load.replicas, 'replica')}, "
                   f"{b.deployment.load_balancer.replace('_', '-')}")
    else:
        out.append(f"    traffic: closed loop, {numbers.count(load.concurrency, 'user')} per replica, {numbers.count(load.replicas, 'replica')}")
    out.append(f"    scheduler: {load.max_num_seqs} sequences, {numbers.number(load.max_num_batched_tokens)} tokens per iteration, "
               f"KV cache {numbers.number(load.kv_capacity_tokens)} tokens per replica ({load.scheduler_from})")
    out.append(f"    step cost: {load.calibrated}" if load.calibrated
               else "    step cost: the roofline at the assumed efficiencies (no calibration)")
    u = utilisation(load)
    from budgetlint.evaluate.load import utilisation_text

    ut = utilisation_text(u)
    sat = (f" of {format_quantity(load.saturation_request_per_s, 'request_rate')} per replica at saturation"
           if load.saturation_request_per_s else "")
    pl = getattr(load, "pools", None)
    if pl is not None:  # a disaggregated deployment: each pool (docs/topologies.md)
        for role in ("prefill", "decode"):
            n, mu = getattr(pl, f"{role}_replicas"), getattr(pl, f"{role}_saturation_per_replica")
            out.append(f"    {role} pool {getattr(pl, f'{role}_name')}: utilisation "
                       f"{utilisation_text(getattr(pl, f'{role}_utilisation'))} = "
                       f"{format_quantity(load.arrival_rate_per_s or 0.0, 'request_rate')} / ({n} x "
                       f"{format_quantity(mu, 'request_rate')} one replica completes at saturation); busy "
                       f"{numbers.percent(getattr(pl, f'{role}_busy'))} of the time; queue {pct_label(load)} "
                       f"{_time(getattr(pl, f'{role}_queue_s'))}")
        fix = pl.fix_words()
        if fix:
            out.append(f"    simulated fixes: {fix}")
        out.append("    (the rows below are the requests end to end; the batch sizes the decode pool's)")
    else:
        out.append(f"    utilisation {ut}{sat}; busy {numbers.percent(r.busy_fraction)} of the time")
    out.append(f"    batch: {numbers.number(r.batch_size_mean)} sequences per iteration on average, p95 {numbers.number(r.batch_size_p95)}; "
               f"preemptions {numbers.number(r.preemptions_per_request)} per request"
               + (f"; {r.rejected} requests larger than the cache" if r.rejected else ""))
    pct = f"p{numbers.stated(load.percentile)}"
    for metric, label in (("queue_s", "queue"), ("ttft_s", "ttft"), ("tpot_s", "tpot"), ("e2e_s", "e2e")):
        row = r.predicted[metric]
        extra = load.edge_extra_s if metric in ("ttft_s", "e2e_s") else 0.0
        cells = "  ".join(f"{k} {_time(v + extra)}" for k, v in row.items() if k in ("p50", "p90", "p95", "p99"))
        out.append(f"    {label:<5} {cells}")
    for name, verdict in load.verdicts.items():
        iv = load.interval(name)
        value = load.predicted(name)
        ivs = f" (95 % interval {_time(iv[0])}-{_time(iv[1])})" if iv else ""
        got = _time(value) if value is not None else "?"
        line = (f"    {name:<5} {pct} {got}{ivs} {load_words(load)}; promise {_time(load.limits[name])}"
                f"  ->  {VERDICT_WORDS[verdict]}")
        out.append(line)
        if verdict == "at-risk":
            out.append(f"           why: {mechanism(load, name)}")
        elif verdict == "not-shown" and getattr(load, "in_capacity_band", False):
            from budgetlint.evaluate.load import NEAR_SATURATION, band_figure, overload_edge

            out.append(f"           why: inside the band {numbers.number(NEAR_SATURATION)} to "
                       f"{band_figure(overload_edge(load))} of an uncalibrated saturation ({load.band_source}): "
                       "the percentile is a transient; read the "
                       + ("busier pool's saturation" if getattr(load, "pools", None) is not None else "capacity")
                       + " (BL330)")
        elif verdict == "not-shown" and name in getattr(load, "in_percentile_band", ()):
            from budgetlint.evaluate.load import band_factor, percentile_band_edge

            out.append(f"           why: the percentile or its interval's top misses the promise by no more than the "
                       f"uncalibrated model's measured error "
                       f"(the band up to {_time(percentile_band_edge(load, name))}, "
                       f"{band_factor()} x: the largest predicted / measured "
                       "of benchmarks/validation) (BL331)")
    if r.slo_attainment == r.slo_attainment:  # not NaN
        out.append(f"    SLO attainment {numbers.percent(r.slo_attainment)} (every promise at once); goodput "
                   f"{format_quantity(r.goodput_request_per_s, 'request_rate')}")
    cap = load.capacity
    if cap is not None:
        needed = f"; {numbers.count(load.replicas_needed, 'replica')} for the declared rate" if load.replicas_needed else ""
        out.append(f"    capacity {format_quantity(cap.request_per_s, 'request_rate')} per replica with every "
                   f"promise held ({cap.simulations} simulations){needed}")
    if load.throughput_verdict is not None:
        out.append(f"    throughput sustained {format_quantity(load.throughput_sustained_request_per_s or 0, 'request_rate')}"
                   f"  ->  {VERDICT_WORDS[load.throughput_verdict]}")
    out.append(f"    ({numbers.number(r.requests)} requests simulated after warm-up, seeded: the same inputs give the same numbers)")
    if load.stopping_rule:
        out.append(f"    (sample size by need: {load.stopping_rule})")
    return out


def pools_lines(ev: Any) -> list[str]:
    """A disaggregated deployment's pools (evaluate/disaggregated.py): what each contributes."""
    p = getattr(ev, "pools", None)
    if p is None:
        return []
    q = numbers.quantity
    bd, rl = p.bound, p.realistic
    link = p.definition.kv_link or "the declared link"
    out = ["", "  Disaggregated pools (docs/topologies.md)",
           f"    prefill pool  {p.prefill_name}: prefill of one prompt {q(bd.prefill.prefill_s, 's')} (bound), "
           f"{q(rl.prefill.prefill_s, 's')} (realistic); memory {q(bd.prefill.memory_required_bytes_per_device, 'B')} "
           f"per device",
           f"    decode pool   {p.decode_name}: TPOT {q(bd.decode.tpot_s, 's')} (bound), {q(rl.decode.tpot_s, 's')} "
           f"(realistic), no prefill sharing its steps; memory {q(bd.decode.memory_required_bytes_per_device, 'B')} "
           f"per device",
           f"    KV link       {link}, {q(p.pools_bound.link_bandwidth_bytes_per_s, 'B/s')} + "
           f"{q(p.pools_bound.link_latency_s, 's')}: {q(bd.kv_bytes, 'B')} per prompt = {q(bd.kv_transfer_s, 's')}",
           f"    TTFT          = queue {q(bd.combined.queue_s, 's')} + prefill {q(bd.prefill.prefill_s, 's')} + KV "
           f"transfer {q(bd.kv_transfer_s, 's')} = {q(bd.combined.ttft_s, 's')} (bound); "
           f"{q(rl.combined.ttft_s, 's')} (realistic)"]
    if p.prefill_utilisation is not None:
        out.append(f"    load          prefill pool {numbers.percent(p.prefill_utilisation)} utilised at "
                   f"{q(p.arrival_rate_per_s, 'request/s')} (arrival rate x realistic prefill / replicas); "
                   f"{numbers.count(p.prefill_replicas_needed, 'prefill replica')} keep it below 100%")
    if p.splits:
        out.append(f"    splits at {p.split_percentile} (simulated: the prefill queue feeding the decode pool)")
        for words, s in zip(p.split_words(), p.splits):
            vals = ", ".join(f"{m[:-2]} {q(v, 's')}" for m, v in s.values)
            out.append(f"      {words}: {vals}")
    out.extend(f"    note: {n}" for n in p.notes)
    return out

