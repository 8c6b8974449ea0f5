"""The adapter from the model (what the user wrote) to the physics core (SI floats).

Turns a budget's model, hardware, deployment, workload and edge into the
physics dataclasses, and says which efficiencies a run assumes. Raises
:class:`Skip` with the reason when the facts needed are missing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from budgetlint.model.types import Budget, HardwareDef, ModelDef
from budgetlint.physics import precision as phys_precision
from budgetlint.physics.shapes import Accelerator, Deployment, Edge, Efficiency, ModelShape, Workload
from budgetlint.text import numbers


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


def catalog_deployment(m: ModelDef, hw: HardwareDef, devices: int, weight_precision: str,
                       kv_precision: str) -> Deployment:
    """The physics deployment of a catalog model on catalog hardware, as the calibrate command
    fits it (no budget: no efficiency, overhead or speculative decoding of its own)."""
    return Deployment(model=model_shape(m), accelerator=accelerator(hw), devices=devices,
                      weight_bytes_per_param=phys_precision.bytes_per_element(weight_precision),
                      kv_bytes_per_elem=phys_precision.bytes_per_element(kv_precision))


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
            data_parallel=dep.data_parallel, pipeline_parallel=dep.pipeline_parallel,
            expert_parallel=dep.expert_parallel if shape.experts else 1,
            expert_imbalance=dep.expert_imbalance or 1.0,
            moe_layers=dep.model.moe_layers if dep.model.moe_layers is not None
            and dep.model.moe_layers <= shape.layers else None,
            **dep.effects,
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


@dataclass(frozen=True)
class AssumedEfficiency:
    """The realistic efficiencies one budget is estimated at, and where each came from.

    Each figure is the deployment's own declaration, else the run's (a flag or
    the config file's ``efficiency`` / ``collective-overhead``), else the
    default of the deployment's class (``physics.default_efficiency``: the
    median of public runs of that class, docs/calibration.md)."""

    klass: str  # dense-1 | dense-tp | moe-1 | moe-tp
    label: str  # "dense, 1 device"
    runs: int  # public runs behind the class default
    devices: int
    bandwidth: float
    compute: float
    collective_overhead: float
    sources: tuple[tuple[str, str], ...]  # (figure, "default" | "deployment" | "run"), in figure order
    moe: bool = False
    #: where a default compute fraction comes from when it is the generation's measured one
    #: (physics.default_efficiency.COMPUTE_BY_GENERATION), not the class's 50 %
    compute_basis: Optional[str] = None
    #: the fixed part of an iteration charged beside the fractions (seconds per iteration, seconds
    #: per layer for N > 1; 0 where the deployment declares its own: then its words are its own)
    iteration_overhead_s: float = 0.0
    collective_latency_s: float = 0.0
    #: where the compute fraction is a measured default whose rows spread wide: the lowest saturation
    #: it predicts over its rows' measured one (ComputeDefault.saturation_low; its basis is compute_basis);
    #: None else
    saturation_low: Optional[float] = None

    def at_devices(self, devices: int) -> tuple[Efficiency, float]:
        """The (efficiency, collective overhead) the same deployment on ``devices`` devices
        is assumed at: given figures stay, class defaults follow the class of that count (a
        lever that adds devices is judged as the deployment declared with them would be)."""
        from budgetlint.physics.default_efficiency import class_default

        cls = class_default(self.moe, devices)
        given = dict(self.sources)
        pick = {f: getattr(self, f) if given[f] != "default" else getattr(cls, f)
                for f in ("bandwidth", "compute", "collective_overhead")}
        if given["collective_overhead"] == "default":
            pick["collective_overhead"] = _default_overhead(cls, given["bandwidth"])
        if self.compute_basis is not None and given["compute"] == "default":
            pick["compute"] = self.compute  # the generation's measured fraction: not a per-class figure
        return Efficiency(pick["bandwidth"], pick["compute"]), pick["collective_overhead"]

    def source(self, figure: str) -> str:
        return dict(self.sources)[figure]

    @property
    def default(self) -> bool:
        """Every figure is the class default (nothing declared or configured)."""
        return all(src == "default" for _, src in self.sources)

    def fixed_words(self) -> str:
        """The default fixed part charged to every iteration, in words ("2.1 ms an iteration and
        12 us a layer"; the layer term only for N > 1), or "" where none is charged by default."""
        fixed = []
        if self.iteration_overhead_s:
            fixed.append(f"{numbers.quantity(self.iteration_overhead_s, 's')} an iteration")
        if self.devices > 1 and self.collective_latency_s:
            fixed.append(f"{numbers.quantity(self.collective_latency_s, 's')} a layer")
        return " and ".join(fixed)

    def words(self) -> str:
        """The one sentence every output format prints for it, e.g. "dense, 1 device: 72% of
        bandwidth, 50% of compute (median of 3 public runs, docs/calibration.md)"."""
        from budgetlint.physics.default_efficiency import DEFAULTS, SOURCE_DOC

        tp = self.devices > 1
        in_it = (tp and self.collective_overhead == 0 and self.source("collective_overhead") == "default"
                 and self.source("bandwidth") == "default")
        fixed = self.fixed_words()
        parts = [f"{_pct(self.bandwidth)} of bandwidth" + (" with the all-reduce in it" if in_it else "")
                 + (f" plus {fixed}" if fixed else ""),
                 f"{_pct(self.compute)} of compute"
                 + (f" ({self.compute_basis})" if self.compute_basis and self.source("compute") == "default" else "")]
        if tp and not in_it:
            parts.append(f"{_pct(self.collective_overhead)} collective overhead")
        where = self.label.replace("tensor-parallel", f"tensor-parallel on {numbers.count(self.devices, 'device')}")
        median = f"{DEFAULTS[self.klass].basis()}, {SOURCE_DOC}"
        if self.compute_basis and self.source("compute") == "default":
            median = f"bandwidth: {median}"
        shown = [(f, src) for f, src in self.sources if f != "collective_overhead" or tp]
        if all(src == "default" for _, src in shown):
            return f"{where}: {', '.join(parts)} ({median})"
        words = []
        for figure, src in shown:
            name = figure.replace("_", " ")
            if src != "default":
                words.append(f"{name} {_SOURCE_WORDS[src]}")
            elif figure == "bandwidth":
                words.append(f"bandwidth: the class {median}")
            elif figure == "compute":
                words.append("compute: the class default")
            else:
                words.append("collective overhead: the class default")
        return f"{where}: {', '.join(parts)} ({'; '.join(words)})"

    def basis(self, figure: str) -> str:
        """Where one figure came from, in words: "dense, 1 device: median of 3 public runs,
        docs/calibration.md", "declared by the deployment", "set for the run (flag or config)"."""
        from budgetlint.physics.default_efficiency import DEFAULTS, SOURCE_DOC

        src = self.source(figure)
        if src != "default":
            return _SOURCE_WORDS[src]
        if figure == "bandwidth":
            return f"{self.label}: {DEFAULTS[self.klass].basis()}, {SOURCE_DOC}"
        if figure == "compute" and self.compute_basis:  # a generation's measured fraction, not the class's 50 %
            return f"{self.compute_basis}, {SOURCE_DOC}"
        return f"{self.label} default, not measured"

    def as_dict(self) -> dict[str, Any]:
        """The report's ``analysis.efficiency_assumed``: one object per distinct assumption in a
        run (a repository has a few deployment classes; a 10,000-budget report keeps a few of
        these, not 10,000). Read-only by contract, like the rest of the analysis."""
        found = _AS_DICT.get(self)
        if found is None:
            if len(_AS_DICT) >= 1024:
                _AS_DICT.clear()
            found = _AS_DICT[self] = {
                "class": self.klass, "label": self.label, "devices": self.devices, "runs": self.runs,
                "bandwidth": self.bandwidth, "compute": self.compute,
                "collective_overhead": self.collective_overhead, "source": dict(self.sources),
                "words": self.words()}
        return found


_AS_DICT: dict[AssumedEfficiency, dict[str, Any]] = {}


_SOURCE_WORDS = {"deployment": "declared by the deployment", "run": "set for the run (flag or config)"}


def _pct(x: float) -> str:
    from budgetlint.model.units import format_percent

    return format_percent(x)


def _default_overhead(cls: Any, bandwidth_source: str) -> float:
    """The class's collective overhead: one default whether or not a bandwidth is set (issue 23:
    setting ``--efficiency-bandwidth`` to the class's own figure changed a p95 TTFT from 330 ms
    to 427 ms by switching on a 10 % overhead). A different overhead is its own setting:
    ``collective_overhead`` (deployment key), ``collective-overhead`` (config),
    ``--collective-overhead`` (flag)."""
    return cls.collective_overhead


def is_moe(m: ModelDef) -> bool:
    """A mixture-of-experts model: it lists experts, or fewer active than total parameters."""
    return m.experts is not None or (m.active_parameters is not None and m.parameters is not None
                                     and m.active_parameters < m.parameters)


def _measured_compute(dep: Any) -> Any:
    """The compute fraction measured for the deployment's generation and compute precision
    (physics.default_efficiency.COMPUTE_BY_GENERATION; COMPUTE_BY_RELEASE for an older engine release
    fitted on its own rows), or None."""
    from budgetlint.physics.default_efficiency import compute_default

    if dep.hardware is None:
        return None
    try:
        key = phys_precision.compute_key(dep.compute_precision
                                         or default_compute_precision(dep.weight_precision or "bf16", dep.hardware))
    except ValueError:
        return None
    # the engine release selects older rows where its own were fitted (TensorRT-LLM before the current
    # rows' builds: default_efficiency.COMPUTE_BY_RELEASE); unstated or not a version: the current rows
    from budgetlint.deployed.defaults import version_key

    return compute_default(dep.hardware.name, key, getattr(dep, "engine", None),
                           version_key(getattr(dep, "engine_version", None)))


def assumed_efficiency(b: Budget, options: Any) -> AssumedEfficiency:
    """The deployment's realistic efficiencies: declared, else the run's, else its class default.

    A run's figure equal to the class's own is the class default, said as such: setting
    ``--efficiency-bandwidth`` to the value a report shows as assumed reproduces that report
    byte for byte (issue 23)."""
    from budgetlint.physics.default_efficiency import class_default

    dep = b.deployment
    devices = dep.devices
    dis = getattr(dep, "disaggregated", None)
    if dis is not None:  # one efficiency for both pools: the class of the decode pool's devices (its pace)
        devices = dis.decode.devices or dep.devices
    cls = class_default(is_moe(dep.model), devices)
    # the generation's measured compute fraction at this precision (docs/calibration.md), where one applies
    measured = _measured_compute(dep)
    default = {"bandwidth": cls.bandwidth, "compute": measured.compute if measured is not None else cls.compute}
    sources = []
    values = {}
    for figure, declared, run in (
            ("bandwidth", dep.efficiency_bandwidth or None, getattr(options, "efficiency_bandwidth", None)),
            ("compute", dep.efficiency_compute or None, getattr(options, "efficiency_compute", None)),
            ("collective_overhead", dep.collective_overhead, getattr(options, "collective_overhead", None))):
        if declared is not None:
            values[figure], src = declared, "deployment"
        elif run is not None and not (figure != "collective_overhead" and run == default[figure]):
            values[figure], src = run, "run"
        elif figure == "collective_overhead":
            values[figure], src = _default_overhead(cls, sources[0][1]), "default"
        else:
            values[figure], src = default[figure], "default"
        sources.append((figure, src))
    overhead_s, latency_s = default_fixed_part(dep)
    return AssumedEfficiency(cls.key, cls.label, cls.runs, devices, values["bandwidth"], values["compute"],
                             values["collective_overhead"], tuple(sources), is_moe(dep.model),
                             measured.basis() if measured is not None else None,
                             overhead_s or 0.0, latency_s or 0.0,
                             measured.saturation_low if measured is not None and dict(sources)["compute"] == "default"
                             else None)


def default_fixed_part(dep: Any) -> tuple[Optional[float], Optional[float]]:
    """``(iteration overhead, collective latency)`` the realistic estimate charges where the
    deployment declares none (physics/default_efficiency.py ITERATION_OVERHEAD_S,
    COLLECTIVE_LATENCY_S: the class bandwidth fractions were fitted beside them); ``None`` for a term
    the deployment declares (its own value stands). A deployment declaring ``cuda_graphs: false``
    adds EAGER_LAUNCH_PER_LAYER_S for each of its model's layers to the iteration overhead
    (TRTLLM_EAGER_PER_LAYER_S where it also declares ``engine: trtllm``, ROCM_VLLM_EAGER_PER_LAYER_S for vLLM
    or an unstated engine on an AMD accelerator: the held-out MLPerf fits)."""
    from budgetlint.physics.default_efficiency import (COLLECTIVE_LATENCY_S, EAGER_LAUNCH_PER_LAYER_S,
                                                       ITERATION_OVERHEAD_S, ROCM_VLLM_EAGER_PER_LAYER_S,
                                                       TRTLLM_EAGER_PER_LAYER_S)

    declared = dep.effects
    overhead = ITERATION_OVERHEAD_S
    if getattr(dep, "cuda_graphs", None) is False:
        layers = getattr(getattr(dep, "model", None), "layers", None) or 0
        engine = getattr(dep, "engine", None)
        vendor = getattr(getattr(dep, "hardware", None), "vendor", None) or ""
        if engine == "trtllm":
            per_layer = TRTLLM_EAGER_PER_LAYER_S
        elif engine in (None, "vllm") and vendor.upper() == "AMD":
            per_layer = ROCM_VLLM_EAGER_PER_LAYER_S
        else:
            per_layer = EAGER_LAUNCH_PER_LAYER_S
        overhead += layers * per_layer
    return (None if "iteration_overhead_s" in declared else overhead,
            None if "collective_latency_s" in declared else COLLECTIVE_LATENCY_S)


#: The busiest expert-parallel rank's load over the mean, assumed where a deployment with
#: expert parallelism declares none: 1.18 = 59,337 / 50,302 tokens/s per node, SGLang's DeepSeek-V3
#: prefill on 4 x 8 H100 (EP32) with a simulated perfect EPLB over its default expert distribution
#: (LMSYS, "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 H100
#: GPUs", 2025-05-05, "Overall Throughput"). A whole-step ratio charged to the expert work only: the
#: expert part's own imbalance is larger, so this errs fast.
DEFAULT_EXPERT_IMBALANCE = 59337 / 50302


#: engines whose KV cache takes its memory fraction of what is *free* once the weights (and the
#: runtime's own buffers) are loaded, not of the whole device (physics/shapes.py
#: Deployment.kv_of_free_memory): TensorRT-LLM, "The default for free_gpu_memory_fraction is 0.9, which
#: means TensorRT LLM will try to allocate 90% of free GPU memory for KV cache"
#: (nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html); every MLPerf v5.1 TensorRT-LLM
#: Llama-2-70B config read (closed/<submitter>/configs/<system>/<scenario>/llama2-70b.py) sets
#: ``kvcache_free_gpu_mem_frac: 0.9``. vLLM's gpu_memory_utilization and SGLang's mem_fraction_static
#: are fractions of the whole device (the default rule). docs/calibration.md "The KV cache of a
#: TensorRT-LLM engine" (issue 25, acc25)
KV_OF_FREE_MEMORY_ENGINES = frozenset({"trtllm"})


def realistic_deployment(d: Deployment, b: Budget, options: Any, collective_overhead: float | None = None) -> Deployment:
    """The deployment at the realistic assumptions: declared values, else the run's, else the class's.

    The collective overhead is kept whatever the device count (the physics
    charges it only when N > 1); the more-devices lever re-reads it, with the
    efficiencies, for the device count it tries (AssumedEfficiency.at_devices).
    """
    dep = b.deployment
    overhead = collective_overhead
    if overhead is None:
        overhead = assumed_efficiency(b, options).collective_overhead
    usable = dep.memory_usable_fraction if dep.memory_usable_fraction is not None else options.memory_usable_fraction
    reserve = dep.memory_overhead_bytes
    if reserve is None:
        reserve = getattr(options, "memory_reserve_bytes", None)
        if reserve is None:
            reserve = DEFAULT_RUNTIME_RESERVE_BYTES
    # a real engine's costs the bound leaves out: decode attention FLOPs, and each decode pass's share
    # of the other sequences' prefill (continuous batching with chunked prefill; physics/step.py)
    imbalance = dep.expert_imbalance
    if imbalance is None:
        imbalance = DEFAULT_EXPERT_IMBALANCE if d.expert_parallel > 1 else 1.0
    # and the roofline per operator (physics/shapes.py Deployment.per_operator): the weight matmuls and
    # the attention's KV read are separate kernels, each at its own bound, one after the other
    # and the fixed part of every iteration (scheduling, launches; per-layer all-reduce latency for N > 1)
    # where the deployment declares none: the class bandwidth fractions were fitted beside it
    # (physics/default_efficiency.py ITERATION_OVERHEAD_S, COLLECTIVE_LATENCY_S; docs/calibration.md)
    o, a = default_fixed_part(dep)
    o = d.iteration_overhead_s if o is None else o
    a = d.collective_latency_s if a is None else a
    return replace(d, collective_overhead=overhead, memory_usable_fraction=usable, memory_overhead_bytes=reserve,
                   engine_terms=True, expert_imbalance=imbalance, per_operator=True,
                   iteration_overhead_s=o, collective_latency_s=a,
                   kv_of_free_memory=getattr(dep, "engine", None) in KV_OF_FREE_MEMORY_ENGINES)


def bound_deployment(d: Deployment, b: Budget) -> Deployment:
    """The physical bound: 100 % of peak, all of memory, and only declared facts
    (a declared collective overhead or memory overhead; no default assumption)."""
    dep = b.deployment
    return replace(d, collective_overhead=dep.collective_overhead or 0.0, memory_usable_fraction=1.0,
                   memory_overhead_bytes=dep.memory_overhead_bytes or 0.0)
