"""The adapter from the model (what the user wrote) to the physics core (SI floats).

Turns a budget's model, hardware, deployment, workload and edge into the
physics dataclasses, and says which efficiencies a run assumes. Raises
:class:`Skip` with the reason when the facts needed are missing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from budgetlint.model.types import Budget, HardwareDef, ModelDef
from budgetlint.physics import precision as phys_precision
from budgetlint.physics.shapes import Accelerator, Deployment, Edge, Efficiency, ModelShape, Workload


#: Runtime memory reserved per device beyond weights and KV cache (activation
#: peak, CUDA context, NCCL and engine workspace), charged by default in the
#: realistic memory judgement; a deployment's ``memory_overhead`` replaces it
#: (and, being declared, is charged in the bound too). Source: vLLM's start-up
#: memory profile for Llama-3-8B on one H100 (vllm-project/vllm PR #10511):
#: non-torch memory 1.79 GiB + PyTorch activation peak 1.26 GiB = 3.05 GiB;
#: rounded down to 3 GiB.
DEFAULT_RUNTIME_RESERVE_BYTES = 3 * 2**30


class Skip(Exception):
    """The facts needed for physics are missing; the reason says which."""


def model_shape(m: ModelDef) -> ModelShape:
    missing = [k for k in ("parameters", "layers", "attention_heads") if getattr(m, k) is None]
    if m.head_dim is None and m.hidden_size is None:
        missing.append("head_dim (or hidden_size, from which head_dim = hidden_size / attention_heads)")
    if missing:
        raise Skip(f"model {m.name!r} lacks {', '.join(missing)}")
    try:
        return ModelShape(
            total_params=m.parameters, active_params=m.active_parameters, layers=m.layers,
            hidden_size=m.hidden_size, attention_heads=m.attention_heads, kv_heads=m.kv_heads,
            head_dim=m.head_dim, attention="gqa" if m.attention == "mqa" else m.attention,
            kv_lora_rank=m.kv_lora_rank, qk_rope_head_dim=m.qk_rope_head_dim,
            sliding_window=m.sliding_window, sliding_window_layers=m.sliding_window_layers,
            experts=m.experts, experts_per_token=m.experts_per_token,
            vocab_size=m.vocab_size, tie_word_embeddings=m.tie_word_embeddings,
        )
    except ValueError as exc:
        raise Skip(f"model {m.name!r}: {exc}") from None


def accelerator(hw: HardwareDef) -> Accelerator:
    """The physics view of a device. Bandwidth is needed for every time bound;
    memory and compute may be unknown (the analysis says what it could not judge)."""
    if hw.bandwidth_bytes_per_s is None:
        missing = "bandwidth" + (" and memory" if hw.memory_bytes is None else "")
        raise Skip(f"hardware {hw.name!r} lacks {missing} (every time bound reads the weights at the "
                   "memory bandwidth)")
    try:
        return Accelerator(memory_bytes=hw.memory_bytes, bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s,
                           compute_flop_per_s=hw.compute_flop_per_s,
                           interconnect_bytes_per_s=hw.interconnect_bytes_per_s)
    except ValueError as exc:
        raise Skip(f"hardware {hw.name!r}: {exc}") from None


#: each model's and device's physics view, made once per catalog entry (by identity, the entry
#: held so that its id is not reused): the catalog's entries are built once per run and not
#: changed after (model/build.py), and every budget on one deployment asked for the same views
#: again (with the levers, every catalog device's for each budget that fails). Bounded.
_VIEWS: dict[int, tuple[Any, Any]] = {}


def _view(entry: Any, make: Any) -> Any:
    hit = _VIEWS.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1]
    view = make(entry)  # a Skip propagates and is not kept
    if len(_VIEWS) >= 4096:
        _VIEWS.clear()
    _VIEWS[id(entry)] = (entry, view)
    return view


def shape_of(m: ModelDef) -> ModelShape:
    """:func:`model_shape` of a catalog entry, made once per entry."""
    return _view(m, model_shape)


def accelerator_of(hw: HardwareDef) -> Accelerator:
    """:func:`accelerator` of a catalog entry, made once per entry."""
    return _view(hw, accelerator)


def default_compute_precision(weight_precision: str, hw: HardwareDef) -> str:
    """Weight-only quantisation computes at bf16 unless the hardware has the narrow units.

    fp8 weights compute in fp8 where the accelerator lists an fp8 peak;
    4-bit weights are dequantised and computed at fp8 (if listed) or bf16.
    """
    key = phys_precision.compute_key(weight_precision)
    if key in hw.compute_flop_per_s:
        return weight_precision
    return "bf16"


def queue_allowance(b: Budget) -> float:
    if b.queue_s is not None:
        return b.queue_s
    return sum(s.allowance_s for s in b.segments if s.kind == "queue" and s.allowance_s is not None)


def network_allowance(b: Budget) -> float:
    return sum(s.allowance_s for s in b.segments if s.kind == "network" and s.allowance_s is not None)


def physics_inputs(b: Budget, *, draft: bool = True) -> tuple[Deployment, Workload, Edge | None, float]:
    dep, wl = b.deployment, b.workload
    if dep is None:
        raise Skip("no deployment declared")
    if wl is None:
        raise Skip("no workload declared")
    if dep.model is None or dep.hardware is None:
        raise Skip("the deployment's model or hardware is not defined")
    shape = shape_of(dep.model)
    acc = accelerator_of(dep.hardware)
    weight_p = dep.weight_precision or "bf16"
    kv_p = dep.kv_precision or "bf16"
    compute_p = dep.compute_precision or default_compute_precision(weight_p, dep.hardware)
    draft_shape = shape_of(dep.draft_model) if (draft and dep.draft_model is not None) else None
    try:
        deployment = Deployment(
            model=shape, accelerator=acc, devices=dep.devices,
            weight_bytes_per_param=phys_precision.bytes_per_element(weight_p),
            kv_bytes_per_elem=phys_precision.bytes_per_element(kv_p),
            compute_precision=compute_p,
            spec_accepted_tokens_per_pass=dep.accepted_tokens_per_pass,
            draft=draft_shape, draft_lookahead=dep.lookahead,
        )
        workload = Workload(prompt_tokens=wl.prompt_tokens, output_tokens=wl.output_tokens,
                            concurrency=wl.concurrency, cached_prompt_tokens=wl.cached_prompt_tokens)
        edge = None
        if wl.measured_at == "client":
            edge = Edge(connection_setup_s=b.connection_setup_s or 0.0,
                        proxy_flush_tokens=b.proxy_flush_tokens or 0)
    except ValueError as exc:
        raise Skip(str(exc)) from None
    queue = queue_allowance(b) + (network_allowance(b) if wl.measured_at == "client" else 0.0)
    return deployment, workload, edge, queue


def realistic_efficiency(b: Budget, options: Any) -> Efficiency:
    dep = b.deployment
    bw = dep.efficiency_bandwidth if dep and dep.efficiency_bandwidth else options.efficiency_bandwidth
    cp = dep.efficiency_compute if dep and dep.efficiency_compute else options.efficiency_compute
    return Efficiency(bw, cp)


def realistic_deployment(d: Deployment, b: Budget, options: Any) -> Deployment:
    """The deployment at the realistic assumptions: declared values, else the run's defaults.

    The collective overhead is kept whatever the device count (the physics
    charges it only when N > 1), so a lever that adds devices pays the same
    overhead a deployment declared with those devices would.
    """
    dep = b.deployment
    overhead = dep.collective_overhead if dep.collective_overhead is not None else options.collective_overhead
    usable = dep.memory_usable_fraction if dep.memory_usable_fraction is not None else options.memory_usable_fraction
    reserve = dep.memory_overhead_bytes
    if reserve is None:
        reserve = getattr(options, "memory_reserve_bytes", None)
        if reserve is None:
            reserve = DEFAULT_RUNTIME_RESERVE_BYTES
    return replace(d, collective_overhead=overhead, memory_usable_fraction=usable, memory_overhead_bytes=reserve)


def bound_deployment(d: Deployment, b: Budget) -> Deployment:
    """The physical bound: 100 % of peak, all of memory, and only declared facts
    (a declared collective overhead or memory overhead; no default assumption)."""
    dep = b.deployment
    return replace(d, collective_overhead=dep.collective_overhead or 0.0, memory_usable_fraction=1.0,
                   memory_overhead_bytes=dep.memory_overhead_bytes or 0.0)
