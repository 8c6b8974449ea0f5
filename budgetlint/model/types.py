"""Typed objects built from validated documents: SI floats plus where each came from.

Every object keeps its :class:`~budgetlint.files.loader.Document` and path, so a
rule can point at the exact YAML line of any field (``obj.loc("promise",
"ttft")``) and quote what the user wrote (``obj.raw("promise", "ttft")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from budgetlint.findings import Location
from budgetlint.files.loader import Document


@dataclass
class Located:
    doc: Document
    path: tuple

    def loc(self, *sub: Any, key: bool = False) -> Location:
        return self.doc.loc(self.path + sub, key=key)

    def raw(self, *sub: Any) -> Any:
        return self.doc.get(self.path + sub)

    def has(self, *sub: Any) -> bool:
        return self.doc.get(self.path + sub, _MISSING) is not _MISSING


_MISSING = object()


@dataclass
class HardwareDef(Located):
    name: str = ""
    aliases: tuple[str, ...] = ()
    vendor: str | None = None
    memory_bytes: float | None = None
    bandwidth_bytes_per_s: float | None = None
    compute_flop_per_s: dict[str, float] = field(default_factory=dict)
    interconnect_bytes_per_s: float | None = None
    tdp_w: float | None = None  # thermal design power per device, W (docs/cost.md)
    price_usd_per_s: float | None = None  # what one device costs, USD/s ("2.50 USD/hour")
    source: str | None = None
    notes: str | None = None
    builtin: bool = False

    def origin(self) -> str:
        where = "built-in catalog" if self.builtin else str(self.loc())
        return f"{where}; source: {self.source}" if self.source else where


@dataclass
class ModelDef(Located):
    name: str = ""
    aliases: tuple[str, ...] = ()
    parameters: float | None = None
    active_parameters: float | None = None
    layers: int | None = None
    hidden_size: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    attention: str = "gqa"
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    moe_layers: int | None = None  # layers with routed experts (None: every layer)
    max_context: int | None = None
    vocab_size: int | None = None
    tie_word_embeddings: bool | None = None
    source: str | None = None
    builtin: bool = False

    @property
    def active(self) -> float | None:
        return self.active_parameters if self.active_parameters is not None else self.parameters

    def origin(self) -> str:
        where = "built-in catalog" if self.builtin else str(self.loc())
        return f"{where}; source: {self.source}" if self.source else where


@dataclass
class Segment(Located):
    name: str = ""
    kind: str = "other"
    allowance_s: float | None = None
    pace_token_per_s: float | None = None
    owner: str | None = None


@dataclass
class WorkloadDef:
    prompt_tokens: int = 0  # the mean (rounded) when a distribution is given
    output_tokens: int = 1
    concurrency: int = 1
    cached_prompt_tokens: float = 0.0
    shared_prefix_tokens: int | None = None
    measured_at: str = "server"
    # traffic (docs/load.md): lengths as ("fixed", n) | ("uniform", lo, hi) |
    # ("lognormal", mean, p95, max or None) | ("values", (n, ...)) | ("bench", path as written:
    # the evaluation reads it, evaluate/lengths.py); None: fixed at the integer
    prompt_dist: tuple | None = None
    output_dist: tuple | None = None
    arrival_rate_per_s: float | None = None  # open loop when given
    arrival_rate_per: str = "service"  # service | replica
    arrival: str = "poisson"
    arrival_cv: float = 1.0
    prefix_cache_hit_requests: float = 1.0
    prefix_cache_hit_share: float | None = None  # `prefix_cache_hit` given as a fraction of the prompt

    @property
    def declares_traffic(self) -> bool:
        """Whether the load simulation has something to say (docs/load.md)."""
        return (self.arrival_rate_per_s is not None or self.prompt_dist is not None
                or self.output_dist is not None)

    @property
    def reads_bench_lengths(self) -> bool:
        """Whether a length is given ``from_bench`` (the evaluation reads the file: evaluate/lengths.py)."""
        return any(isinstance(d, tuple) and d[0] == "bench" for d in (self.prompt_dist, self.output_dist))


@dataclass
class Promise:
    ttft_s: float | None = None
    tpot_s: float | None = None  # over all N output tokens: e2e = ttft + N x tpot
    e2e_s: float | None = None
    pace_given: bool = False  # the user wrote `pace:` rather than `tpot:`
    throughput_request_per_s: float | None = None  # for the service, every latency promise held
    throughput_token_per_s: float | None = None  # output tokens, the same
    slo_attainment: float | None = None  # 0..1: share of requests meeting every latency promise at once
    cost_usd_per_token: float | None = None  # per output token at the judged operating point (docs/cost.md)

    @property
    def pace_token_per_s(self) -> float | None:
        return 1.0 / self.tpot_s if self.tpot_s else None


@dataclass
class PoolDef:
    """One pool of a disaggregated deployment (deployment.disaggregated.prefill / .decode)."""

    role: str = "prefill"  # prefill | decode
    hardware: HardwareDef | None = None  # None: the deployment's
    devices: int | None = None  # None: the deployment's
    replicas: int = 1
    data_parallel: int | None = None  # None: the deployment's
    pipeline_parallel: int | None = None
    expert_parallel: int | None = None


@dataclass
class DisaggregatedDef:
    """deployment.disaggregated: the two pools and the KV link (docs/topologies.md)."""

    prefill: PoolDef = field(default_factory=PoolDef)
    decode: PoolDef = field(default_factory=lambda: PoolDef(role="decode"))
    kv_link: str | None = None  # a link name of model/links.py, when named
    kv_bandwidth_bytes_per_s: float | None = None
    kv_latency_s: float = 0.0


@dataclass
class DeploymentDef:
    model: ModelDef | None = None
    hardware: HardwareDef | None = None
    devices: int = 1
    weight_precision: str = "bf16"
    kv_precision: str | None = None
    compute_precision: str | None = None
    accepted_tokens_per_pass: float = 1.0
    draft_model: ModelDef | None = None
    lookahead: int | None = None
    efficiency_bandwidth: float | None = None
    efficiency_compute: float | None = None
    collective_overhead: float | None = None
    memory_usable_fraction: float | None = None
    memory_overhead_bytes: float | None = None  # None: not declared (the default reserve applies)
    replicas: int = 1
    load_balancer: str = "round_robin"
    max_num_seqs: int | None = None  # None: the engine default (docs/load.md)
    max_num_batched_tokens: int | None = None
    scheduler_steps: int = 1  # vLLM V0 --num-scheduler-steps (multi-step scheduling; docs/load.md)
    calibration: str | None = None  # path of a `kind: calibration` file, relative to the budget's file
    engine: str | None = None  # vllm | sglang | trtllm | tgi | other; None: not declared
    engine_version: str | None = None  # "0.11.0"; None: not declared
    cuda_graphs: bool | None = None  # False: the engine runs eager (no CUDA graphs); None: not declared
    #: chunked prefill on/off as a deployed configuration's flag sets it (evaluate/deployed.py; not a budget
    #: key); None: the engine release's default (deployed/defaults.py chunked_prefill_at)
    chunked_prefill: bool | None = None
    config: list[str] = field(default_factory=list)  # deployed configuration files, relative to the budget's file
    price_usd_per_s: float | None = None  # `price:` per device (docs/cost.md); wins over config and catalog
    power_w: float | None = None  # `power:` measured per device (docs/cost.md); wins over the hardware's tdp
    provenance: dict[str, str] = field(default_factory=dict)  # field -> where a value not in the budget came from
    #: declared physics effects (model/build.py DECLARED_EFFECTS): physics.shapes.Deployment field -> SI value,
    #: passed to the physics as they are (evaluate/physics_inputs.py); a declared effect is a fact, in the bound too
    effects: dict[str, float] = field(default_factory=dict)
    # parallelism beyond tensor (deployment.parallelism; docs/topologies.md): devices is the tensor degree
    data_parallel: int = 1
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    expert_imbalance: float | None = None  # None: not declared (1 in the bound, the cited default realistic)
    interconnect: str | None = None  # a link name of model/links.py, when declared by name
    disaggregated: DisaggregatedDef | None = None  # prefill/decode pools (None: colocated)


@dataclass
class Suppression(Located):
    rule: str = ""
    reason: str | None = None
    expires: str | None = None


@dataclass
class EvidencePolicy:
    """What benchmark evidence a budget accepts: how old, from which engine and version."""

    max_age_days: float | None = None
    engine: str | None = None
    engine_version: str | None = None
    where: str = "budget"  # "budget" | "config": who asked, for messages


@dataclass
class SloDef:
    """How the budget's promises become production SLOs (docs/slo.md)."""

    window_s: float = 30 * 86400.0
    window: str = "30d"  # as written (Prometheus duration)
    selectors: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, tuple[float, ...]] = field(default_factory=dict)  # metric key -> edges (s)
    goodput: dict[str, float] | None = None  # vllm --goodput thresholds in seconds: ttft, tpot, e2el
    declared: bool = False  # the budget has an `slo:` block


@dataclass
class Budget(Located):
    name: str = ""
    description: str | None = None
    owner: str | None = None
    cost_owner: str | None = None  # who answers for promise.cost (else the budget's owner): docs/cost.md
    percentile: str | None = None
    workload: WorkloadDef | None = None
    promise: Promise = field(default_factory=Promise)
    segments: list[Segment] = field(default_factory=list)
    deployment: DeploymentDef | None = None
    queue_s: float | None = None
    connection_setup_s: float | None = None
    proxy_flush_tokens: int | None = None
    bench: list[str] = field(default_factory=list)
    bench_expires: list[str | None] = field(default_factory=list)  # per `bench:` entry, YYYY-MM-DD
    evidence: EvidencePolicy | None = None
    slo: SloDef = field(default_factory=SloDef)
    suppressions: list[Suppression] = field(default_factory=list)
    complete: bool = True  # False when a field could not be read: physics is skipped

    @property
    def declares_load(self) -> bool:
        """Whether the budget says anything the load simulation speaks for (evaluate/load.py)."""
        wl, dep = self.workload, self.deployment
        if wl is not None and wl.declares_traffic:
            return True
        if dep is not None and (dep.replicas > 1 or dep.max_num_seqs is not None
                                or dep.max_num_batched_tokens is not None):
            return True
        return (self.promise.throughput_request_per_s is not None or self.promise.throughput_token_per_s is not None
                or self.promise.slo_attainment is not None
                or self.promise.cost_usd_per_token is not None)  # a cost is judged at a throughput

