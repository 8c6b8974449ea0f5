"""Input dataclasses for the physics core: SI floats, no units attached.

Seconds, bytes, bytes/s, FLOP, FLOP/s, tokens. Every class is frozen and
validates its own fields (``ValueError`` with the field name) so that the
functions downstream can divide without checking.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Optional
from budgetlint.text import numbers

Attention = Literal["mha", "gqa", "mla"]

#: Largest collective overhead accepted. With ``step(N) = step(1) / (N (1 - c))``
#: for ``N > 1``, going from 1 to 2 devices slows decode iff ``c > 1/2``; the
#: core refuses such overheads so that "more devices never slows decode" holds.
MAX_COLLECTIVE_OVERHEAD = 0.5


def _repr_once(cls: type) -> type:
    """``cls`` (a frozen dataclass) with its own ``repr`` written once per instance.

    The evaluation keys the analyses it shares by the ``repr`` of their inputs
    (budgetlint.evaluate.analysis_cache), and one model shape and one accelerator sit in
    every deployment variant a run analyses. The text is the dataclass's own;
    an instance does not change after ``__post_init__``.
    """
    plain = cls.__repr__

    def __repr__(self: object) -> str:
        text = self.__dict__.get("_repr")
        if text is None:
            text = self.__dict__["_repr"] = plain(self)
        return text

    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    cls.__repr__ = __repr__  # type: ignore[assignment]
    return cls


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")


@_repr_once
@dataclass(frozen=True, kw_only=True)
class ModelShape:
    """Architecture facts of a decoder-only transformer.

    ``active_params`` defaults to ``total_params`` (dense). ``head_dim``
    defaults to ``hidden_size / attention_heads`` (so one of the two must be
    given; ``hidden_size`` is needed for nothing else but the embedding size)
    and ``kv_heads`` to ``attention_heads`` (MHA). ``vocab_size`` with
    ``hidden_size`` sizes the input embedding (``vocab x hidden``), which a
    decode step does not read unless ``tie_word_embeddings`` makes it the LM
    head too (see :func:`~budgetlint.physics.memory.embedding_params_not_read`). MLA models give ``kv_lora_rank`` and
    ``qk_rope_head_dim``. ``sliding_window_layers`` of the ``layers`` use a
    window of ``sliding_window`` tokens (all layers if only the window is given).
    MoE models give ``experts`` (routed experts per layer) and
    ``experts_per_token``.
    """

    total_params: float
    layers: int
    attention_heads: int
    hidden_size: Optional[int] = None
    kv_heads: Optional[int] = None
    head_dim: Optional[float] = None
    active_params: Optional[float] = None
    attention: Attention = "gqa"
    kv_lora_rank: Optional[int] = None
    qk_rope_head_dim: Optional[int] = None
    sliding_window: Optional[int] = None
    sliding_window_layers: Optional[int] = None
    experts: Optional[int] = None
    experts_per_token: Optional[int] = None
    vocab_size: Optional[int] = None
    tie_word_embeddings: Optional[bool] = None

    def __post_init__(self) -> None:
        _positive("total_params", self.total_params)
        for name in ("layers", "attention_heads"):
            _positive(name, getattr(self, name))
        for name in ("hidden_size", "vocab_size"):
            if getattr(self, name) is not None:
                _positive(name, getattr(self, name))
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.attention_heads)
        if self.head_dim is None:
            if self.hidden_size is None:
                raise ValueError("head_dim or hidden_size is needed (head_dim = hidden_size / attention_heads)")
            object.__setattr__(self, "head_dim", self.hidden_size / self.attention_heads)
        if self.active_params is None:
            object.__setattr__(self, "active_params", self.total_params)
        _positive("kv_heads", self.kv_heads)  # type: ignore[arg-type]
        _positive("head_dim", self.head_dim)  # type: ignore[arg-type]
        _positive("active_params", self.active_params)  # type: ignore[arg-type]
        if self.vocab_size is not None and self.hidden_size is not None and not self.tie_word_embeddings \
                and float(self.vocab_size) * float(self.hidden_size) >= float(self.active_params):  # type: ignore[arg-type]
            raise ValueError(
                f"the input embedding (vocab_size {self.vocab_size} x hidden_size {self.hidden_size} = "
                f"{numbers.stated(float(self.vocab_size) * float(self.hidden_size))} parameters) is not smaller than the "
                f"{numbers.stated(self.active_params)} parameters a token uses: check parameters, vocab_size and hidden_size"
            )
        if self.active_params > self.total_params:  # type: ignore[operator]
            raise ValueError(
                f"active_params ({numbers.stated(self.active_params)}) exceeds total_params ({numbers.stated(self.total_params)})"
            )
        if self.attention not in ("mha", "gqa", "mla"):
            raise ValueError(f"attention must be mha, gqa or mla, got {self.attention!r}")
        if self.attention == "mla":
            if self.kv_lora_rank is None or self.qk_rope_head_dim is None:
                raise ValueError("attention 'mla' needs kv_lora_rank and qk_rope_head_dim")
            _positive("kv_lora_rank", self.kv_lora_rank)
            _non_negative("qk_rope_head_dim", self.qk_rope_head_dim)
        if self.sliding_window is not None:
            _positive("sliding_window", self.sliding_window)
            if self.sliding_window_layers is None:
                object.__setattr__(self, "sliding_window_layers", self.layers)
        if self.sliding_window_layers is not None:
            _non_negative("sliding_window_layers", self.sliding_window_layers)
            if self.sliding_window is None and self.sliding_window_layers > 0:
                raise ValueError("sliding_window_layers given without sliding_window")
            if self.sliding_window_layers > self.layers:
                raise ValueError(
                    f"sliding_window_layers ({self.sliding_window_layers}) exceeds layers ({self.layers})"
                )
        if (self.experts is None) != (self.experts_per_token is None):
            raise ValueError("experts and experts_per_token go together")
        if self.experts is not None:
            _positive("experts", self.experts)
            _positive("experts_per_token", self.experts_per_token)  # type: ignore[arg-type]
            if self.experts_per_token > self.experts:  # type: ignore[operator]
                raise ValueError("experts_per_token exceeds experts")

    @property
    def full_attention_layers(self) -> int:
        """Layers whose KV cache grows with the whole context."""
        return self.layers - (self.sliding_window_layers or 0)


@_repr_once
@dataclass(frozen=True, kw_only=True)
class Accelerator:
    """One device: memory (bytes), memory bandwidth (bytes/s), dense peak
    compute per precision key (FLOP/s) and interconnect (bytes/s, per direction).

    Bandwidth is required (every time bound reads weights). ``memory_bytes``
    may be ``None`` (unknown: the memory fit is not judged) and the compute
    mapping empty (unknown: compute terms are left out of the time bounds,
    which stay true lower bounds, and the analysis says ``compute_known=False``
    so that nothing is claimed *met* on that basis).
    """

    bandwidth_bytes_per_s: float
    memory_bytes: Optional[float] = None
    compute_flop_per_s: Mapping[str, float] = field(default_factory=dict)
    interconnect_bytes_per_s: Optional[float] = None

    def __post_init__(self) -> None:
        if self.memory_bytes is not None:
            _positive("memory_bytes", self.memory_bytes)
        _positive("bandwidth_bytes_per_s", self.bandwidth_bytes_per_s)
        for key, value in self.compute_flop_per_s.items():
            _positive(f"compute_flop_per_s[{key!r}]", value)
        if self.interconnect_bytes_per_s is not None:
            _positive("interconnect_bytes_per_s", self.interconnect_bytes_per_s)
        # freeze the mapping so the dataclass stays hashable-by-identity safe
        object.__setattr__(self, "compute_flop_per_s", dict(self.compute_flop_per_s))


@dataclass(frozen=True, kw_only=True)
class Deployment:
    """How a model is served.

    ``devices``: tensor-parallel degree N. ``weight_bytes_per_param`` and
    ``kv_bytes_per_elem`` come from :func:`~budgetlint.physics.precision.bytes_per_element`.
    ``compute_precision`` names the matmul precision (see ``precision.compute_key``).
    ``spec_accepted_tokens_per_pass`` (>= 1) is the mean number of tokens a
    target forward pass emits under speculative decoding (1.0 = off), counting
    the target's own bonus token. ``draft`` is the draft model (charged when
    given); ``draft_lookahead`` the draft tokens proposed per pass (default
    ``ceil(accepted) - 1``, the fewest that can deliver the stated
    acceptance); ``draft_weight_bytes_per_param`` defaults to the target's.
    ``collective_overhead`` c in [0, 0.5] is the fraction of a decode step lost
    to tensor-parallel all-reduce, applied only when N > 1 (default 0: the pure
    bound). ``memory_usable_fraction`` (default 1.0: the physical bound) and
    ``memory_overhead_bytes`` (per device: activations, runtime) enter the fit.
    ``kv_of_free_memory``: the engine gives its KV cache ``memory_usable_fraction`` of
    the memory left free once the weights and the runtime reserve are loaded,
    ``(memory - W/N - overhead) x fraction`` (TensorRT-LLM's ``free_gpu_memory_fraction``),
    instead of that fraction of the whole device less them, ``memory x fraction - W/N -
    overhead`` (vLLM's ``gpu_memory_utilization``, SGLang's ``mem_fraction_static``;
    the default, False). The two agree at a fraction of 1 (the bound).
    ``iteration_overhead_s`` (seconds every engine iteration costs: scheduling,
    kernel launches) and ``collective_latency_s`` (seconds per layer per
    iteration under tensor parallelism, N > 1: the all-reduce's latency) are
    added to each step (default 0: the pure bound; :mod:`.step`).
    ``engine_terms``: charge the costs of a real serving engine that physics.md's
    bound leaves out (a bound may leave a cost out and stay a lower bound):
    decode attention FLOPs, and in the flat analysis each decode pass's share of
    the other sequences' prefill (continuous batching with chunked prefill).
    Default False: the bound; the realistic estimate sets it (:mod:`.step`).
    ``overlap`` in [0, 1]: how much of the smaller of a step's memory and compute
    time hides under the larger: ``step = max + (1 - overlap) x min`` (1, the
    default: the roofline's ``max``; 0: they add, as kernels that do not overlap
    reads and matmuls at large batch).
    ``per_operator``: the roofline per operator instead of per step: ``max(weights,
    linear) + max(kv, attention)`` (the weight matmuls and the attention are separate
    kernels, each bound by its own resource, run one after the other; the iteration
    time is their sum, as Vidur and aiconfigurator sum per-operator times). Default
    False: the step's ``max`` (physics.md's bound: ``max(a + b, c + d) <= max(a, c) +
    max(b, d)``, so the per-step max stays the lower bound); the realistic estimate
    sets it.

    Parallelism beyond tensor parallelism (docs/topologies.md): ``devices`` is the
    tensor-parallel degree ``t`` of the attention and dense layers;
    ``data_parallel`` ``d`` attention data-parallel ranks (each holds the attention
    and dense weights, sharded over its ``t`` devices, and ``1/d`` of the sequences);
    ``pipeline_parallel`` ``p`` stages; one replica has ``t x d x p`` devices.
    ``expert_parallel`` ``e`` (MoE only, dividing ``t x d``): the routed experts are
    split over the ``t x d`` devices of a stage and tokens are dispatched to (and
    combined from) ``e`` ranks by an all-to-all on ``alltoall_bandwidth_bytes_per_s``
    (per direction; default the accelerator's interconnect), each all-to-all also
    costing ``alltoall_latency_s``. ``moe_layers`` (default: every layer) counts the
    layers with routed experts. ``expert_imbalance`` >= 1 is the busiest rank's
    expert load over the mean (1: perfectly balanced, the bound's default).
    """

    model: ModelShape
    accelerator: Accelerator
    devices: int = 1
    weight_bytes_per_param: float = 2.0
    kv_bytes_per_elem: float = 2.0
    compute_precision: str = "bf16"
    spec_accepted_tokens_per_pass: float = 1.0
    draft: Optional[ModelShape] = None
    draft_lookahead: Optional[int] = None
    draft_weight_bytes_per_param: Optional[float] = None
    collective_overhead: float = 0.0
    memory_usable_fraction: float = 1.0
    memory_overhead_bytes: float = 0.0
    kv_of_free_memory: bool = False
    iteration_overhead_s: float = 0.0
    collective_latency_s: float = 0.0
    engine_terms: bool = False
    overlap: float = 1.0
    per_operator: bool = False
    data_parallel: int = 1
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    expert_imbalance: float = 1.0
    alltoall_bandwidth_bytes_per_s: Optional[float] = None
    alltoall_latency_s: float = 0.0
    moe_layers: Optional[int] = None
    prefill_interference: bool = True  # False: a disaggregated decode pool, no prefill shares its passes

    def __post_init__(self) -> None:
        if not isinstance(self.devices, int) or self.devices < 1:
            raise ValueError(f"devices must be an integer >= 1, got {self.devices!r}")
        for name in ("data_parallel", "pipeline_parallel", "expert_parallel"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if self.expert_parallel > 1:
            if self.model.experts is None:
                raise ValueError(f"expert_parallel {self.expert_parallel} needs a model with routed experts")
            if (self.devices * self.data_parallel) % self.expert_parallel:
                raise ValueError(
                    f"expert_parallel {self.expert_parallel} must divide tensor x data = "
                    f"{self.devices} x {self.data_parallel} = {self.devices * self.data_parallel}")
        if self.pipeline_parallel > self.model.layers:
            raise ValueError(f"pipeline_parallel {self.pipeline_parallel} exceeds the model's {self.model.layers} layers")
        _positive("expert_imbalance", self.expert_imbalance)
        if self.expert_imbalance < 1:
            raise ValueError(f"expert_imbalance is the busiest rank's load over the mean: >= 1, got {self.expert_imbalance!r}")
        if self.alltoall_bandwidth_bytes_per_s is not None:
            _positive("alltoall_bandwidth_bytes_per_s", self.alltoall_bandwidth_bytes_per_s)
        _non_negative("alltoall_latency_s", self.alltoall_latency_s)
        if self.moe_layers is not None:
            if not isinstance(self.moe_layers, int) or not 0 <= self.moe_layers <= self.model.layers:
                raise ValueError(f"moe_layers must be an integer in [0, {self.model.layers}], got {self.moe_layers!r}")
        _positive("weight_bytes_per_param", self.weight_bytes_per_param)
        _positive("kv_bytes_per_elem", self.kv_bytes_per_elem)
        _positive("spec_accepted_tokens_per_pass", self.spec_accepted_tokens_per_pass)
        if self.spec_accepted_tokens_per_pass < 1:
            raise ValueError(
                "spec_accepted_tokens_per_pass must be >= 1 (1 = no speculative decoding), "
                f"got {self.spec_accepted_tokens_per_pass!r}"
            )
        if self.draft_lookahead is not None:
            if not isinstance(self.draft_lookahead, int) or self.draft_lookahead < 0:
                raise ValueError("draft_lookahead must be an integer >= 0")
            if self.draft_lookahead + 1 < self.spec_accepted_tokens_per_pass:
                raise ValueError(
                    f"draft_lookahead {self.draft_lookahead} cannot deliver "
                    f"{self.spec_accepted_tokens_per_pass} accepted tokens per pass "
                    "(at most lookahead + 1)"
                )
        if self.draft_weight_bytes_per_param is not None:
            _positive("draft_weight_bytes_per_param", self.draft_weight_bytes_per_param)
        _non_negative("collective_overhead", self.collective_overhead)
        if self.collective_overhead > MAX_COLLECTIVE_OVERHEAD:
            raise ValueError(
                f"collective_overhead must be in [0, {MAX_COLLECTIVE_OVERHEAD}] (a fraction of the "
                f"decode step), got {self.collective_overhead!r}"
            )
        _positive("memory_usable_fraction", self.memory_usable_fraction)
        if self.memory_usable_fraction > 1:
            raise ValueError("memory_usable_fraction must be in (0, 1]")
        _non_negative("memory_overhead_bytes", self.memory_overhead_bytes)
        _non_negative("iteration_overhead_s", self.iteration_overhead_s)
        _non_negative("collective_latency_s", self.collective_latency_s)
        _non_negative("overlap", self.overlap)
        if self.overlap > 1:
            raise ValueError(f"overlap must be in [0, 1], got {self.overlap!r}")

    @property
    def total_devices(self) -> int:
        """Devices of one replica: tensor x data x pipeline."""
        return self.devices * self.data_parallel * self.pipeline_parallel

    @property
    def lookahead(self) -> int:
        """Draft tokens proposed (and verified) per target pass, k."""
        if self.draft_lookahead is not None:
            return self.draft_lookahead
        return max(0, math.ceil(self.spec_accepted_tokens_per_pass) - 1)


@dataclass(frozen=True, kw_only=True)
class Workload:
    """One request shape: prompt and reply lengths (tokens), sequences decoding
    together (``concurrency``, B) and prompt tokens served from a prefix cache."""

    prompt_tokens: float
    output_tokens: float
    concurrency: int = 1
    cached_prompt_tokens: float = 0.0

    def __post_init__(self) -> None:
        _non_negative("prompt_tokens", self.prompt_tokens)
        _positive("output_tokens", self.output_tokens)
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ValueError(f"concurrency must be an integer >= 1, got {self.concurrency!r}")
        _non_negative("cached_prompt_tokens", self.cached_prompt_tokens)
        if self.cached_prompt_tokens > self.prompt_tokens:
            raise ValueError("cached_prompt_tokens exceeds prompt_tokens")

    @property
    def uncached_prompt_tokens(self) -> float:
        return self.prompt_tokens - self.cached_prompt_tokens


@dataclass(frozen=True)
class Efficiency:
    """Fractions (0, 1] of peak bandwidth and compute that kernels reach.
    ``Efficiency(1, 1)`` is the pure roofline; the *at-risk* judgement uses
    the deployment class's default (default_efficiency.py)."""

    bandwidth: float = 1.0
    compute: float = 1.0

    def __post_init__(self) -> None:
        for name in ("bandwidth", "compute"):
            value = getattr(self, name)
            _positive(f"efficiency.{name}", value)
            if value > 1:
                raise ValueError(f"efficiency.{name} must be in (0, 1], got {value!r}")


#: Pure roofline: 100 % of bandwidth and compute.
ROOFLINE = Efficiency(1.0, 1.0)
#: A fixed realistic pair (70 % of bandwidth, 50 % of compute) for the physics' own tests and
#: benchmarks; the linter's defaults are per deployment class (default_efficiency.py).
REALISTIC_EFFICIENCY = Efficiency(0.7, 0.5)


@dataclass(frozen=True)
class Edge:
    """Client-edge extras: connection/TLS setup (s) and a proxy that flushes
    every ``proxy_flush_tokens`` tokens."""

    connection_setup_s: float = 0.0
    proxy_flush_tokens: float = 0.0

    def __post_init__(self) -> None:
        _non_negative("connection_setup_s", self.connection_setup_s)
        _non_negative("proxy_flush_tokens", self.proxy_flush_tokens)
