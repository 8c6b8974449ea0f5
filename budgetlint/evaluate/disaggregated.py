"""A disaggregated deployment's pools: the flat estimate per pool, the prefill pool's load and
the simulated split of replicas between the pools (physics/disaggregated.py; docs/topologies.md).

The budget's deployment (model, hardware, devices, parallelism, efficiencies) is the default of
each pool; ``disaggregated.prefill`` and ``.decode`` override hardware, devices, parallelism and
replicas. The verdicts read the combined estimate (TTFT through the prefill pool and the KV link,
pace on the decode pool); :class:`PoolsEvaluation` keeps what each pool contributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from budgetlint.model.types import Budget, DisaggregatedDef, PoolDef
from budgetlint.physics.disaggregated import (
    Pools, PoolsAnalysis, Split, analyse_pools, prefill_replicas_needed, prefill_utilisation,
)
from budgetlint.physics.shapes import Deployment, Edge, Efficiency, Workload
from budgetlint.text import numbers

#: the prefill pool is "too small" at or above this utilisation: its queue grows without bound
TOO_SMALL_UTILISATION = 1.0
#: requests per simulated split (the two pools each); the split search is (replicas - 1) of them
SPLIT_REQUESTS = 400
#: splits simulated at most (the declared one, and around the fewest prefill replicas that keep up)
MAX_SPLITS = 6


@dataclass
class PoolsEvaluation:
    definition: DisaggregatedDef
    pools_bound: Pools
    pools_realistic: Pools
    bound: PoolsAnalysis
    realistic: PoolsAnalysis
    prefill_name: str = ""  # "2 x h100-sxm (4 devices each)"
    decode_name: str = ""
    arrival_rate_per_s: float | None = None
    prefill_utilisation: float | None = None  # at the realistic prefill time, one prompt at a time
    prefill_replicas_needed: int | None = None  # fewest with utilisation below 1
    splits: tuple[Split, ...] = ()
    split_percentile: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def prefill_too_small(self) -> bool:
        return self.prefill_utilisation is not None and self.prefill_utilisation >= TOO_SMALL_UTILISATION

    def split_words(self) -> list[str]:
        """``"2 prefill + 6 decode meets it"`` per simulated split (the declared one marked)."""
        out = []
        declared = (self.definition.prefill.replicas, self.definition.decode.replicas)
        for s in self.splits:
            mark = " (declared)" if (s.prefill_replicas, s.decode_replicas) == declared else ""
            out.append(f"{s.prefill_replicas} prefill + {s.decode_replicas} decode "
                       f"{'meets it' if s.meets else 'does not'}{mark}")
        return out

    def as_dict(self) -> dict[str, Any]:
        def pool(p: PoolDef, dep: Deployment, a: Any, name: str) -> dict[str, Any]:
            return {"name": name, "replicas": p.replicas, "devices": dep.total_devices,
                    "tensor": dep.devices, "data": dep.data_parallel, "pipeline": dep.pipeline_parallel,
                    "expert": dep.expert_parallel,
                    "memory_required_bytes_per_device": a.memory_required_bytes_per_device,
                    "memory_available_bytes_per_device": a.memory_available_bytes_per_device,
                    "memory_fits": a.memory_fits}

        d = self.definition
        out: dict[str, Any] = {
            "prefill": pool(d.prefill, self.pools_realistic.prefill, self.realistic.prefill, self.prefill_name),
            "decode": pool(d.decode, self.pools_realistic.decode, self.realistic.decode, self.decode_name),
            "kv_link": {"name": d.kv_link, "bandwidth_bytes_per_s": self.pools_bound.link_bandwidth_bytes_per_s,
                        "latency_s": self.pools_bound.link_latency_s},
            "kv_bytes_per_prompt": self.bound.kv_bytes,
            "kv_transfer_s": self.bound.kv_transfer_s,
            "bound_prefill_s": self.bound.prefill.prefill_s,
            "realistic_prefill_s": self.realistic.prefill.prefill_s,
            "bound_ttft_s": self.bound.combined.ttft_s,
            "realistic_ttft_s": self.realistic.combined.ttft_s,
        }
        out["prefill"]["prefill_s"] = self.realistic.prefill.prefill_s
        out["decode"]["tpot_s"] = self.realistic.decode.tpot_s
        if self.arrival_rate_per_s is not None:
            out["arrival_rate_per_s"] = self.arrival_rate_per_s
            out["prefill_utilisation"] = self.prefill_utilisation
            out["prefill_replicas_needed"] = self.prefill_replicas_needed
        if self.splits:
            out["splits"] = [{"prefill_replicas": s.prefill_replicas, "decode_replicas": s.decode_replicas,
                              "meets": s.meets, **{m: v for m, v in s.values}} for s in self.splits]
            out["split_percentile"] = self.split_percentile
        out["summary"] = self.summary(numbers)
        return out

    def summary(self, numbers: Any) -> str:
        """One line: the pools, the link and the TTFT's parts (text, markdown and HTML show it)."""
        r = self.realistic
        return (f"disaggregated: prefill pool {self.prefill_name}, decode pool {self.decode_name}; KV "
                f"{numbers.quantity(self.bound.kv_bytes, 'B')} per prompt over "
                f"{self.definition.kv_link or numbers.quantity(self.pools_bound.link_bandwidth_bytes_per_s, 'B/s')}"
                f" = {numbers.quantity(self.bound.kv_transfer_s, 's')}; realistic TTFT = prefill "
                f"{numbers.quantity(r.prefill.prefill_s, 's')} + transfer {numbers.quantity(r.kv_transfer_s, 's')}"
                + (f" (+ queue {numbers.quantity(r.combined.queue_s, 's')})" if r.combined.queue_s else "")
                + (f"; prefill pool {numbers.percent(self.prefill_utilisation)} utilised at "
                   f"{numbers.quantity(self.arrival_rate_per_s, 'request/s')}"
                   if self.prefill_utilisation is not None else ""))


def _pool_deployment(d: Deployment, p: PoolDef) -> Deployment:
    from budgetlint.evaluate.physics_inputs import accelerator_of

    acc = accelerator_of(p.hardware) if p.hardware is not None else d.accelerator
    return replace(d, accelerator=acc, devices=p.devices or d.devices,
                   data_parallel=p.data_parallel or d.data_parallel,
                   pipeline_parallel=p.pipeline_parallel or d.pipeline_parallel,
                   expert_parallel=p.expert_parallel or d.expert_parallel)


def pools_of(d: Deployment, dis: DisaggregatedDef) -> Pools:
    return Pools(prefill=_pool_deployment(d, dis.prefill), decode=_pool_deployment(d, dis.decode),
                 prefill_replicas=dis.prefill.replicas, decode_replicas=dis.decode.replicas,
                 link_bandwidth_bytes_per_s=float(dis.kv_bandwidth_bytes_per_s or 0.0),
                 link_latency_s=dis.kv_latency_s)


def _name(b: Budget, p: PoolDef, dep: Deployment) -> str:
    hw = p.hardware or b.deployment.hardware  # type: ignore[union-attr]
    return f"{p.replicas} x {hw.name if hw else 'device'} of {numbers.count(dep.total_devices, 'device')}"


def evaluate_pools(b: Budget, bound_d: Deployment, real_d: Deployment, wl: Workload, efficiency: Efficiency,
                   queue: float, edge: Edge | None) -> PoolsEvaluation:
    """The flat estimate of both pools at the bound and at the realistic efficiency, and the
    prefill pool's utilisation at the declared arrival rate. ``ValueError``: the physics refused."""
    dis = b.deployment.disaggregated  # type: ignore[union-attr]
    assert dis is not None
    pb, pr = pools_of(bound_d, dis), pools_of(real_d, dis)
    ev = PoolsEvaluation(dis, pb, pr, analyse_pools(pb, wl, Efficiency(1.0, 1.0), queue, edge),
                         analyse_pools(pr, wl, efficiency, queue, edge))
    ev.prefill_name = _name(b, dis.prefill, pr.prefill)
    ev.decode_name = _name(b, dis.decode, pr.decode)
    w = b.workload
    if w is not None and w.arrival_rate_per_s is not None:
        rate = w.arrival_rate_per_s
        ev.arrival_rate_per_s = rate
        s = ev.realistic.prefill.prefill_s
        ev.prefill_utilisation = prefill_utilisation(rate, s, dis.prefill.replicas)
        ev.prefill_replicas_needed = prefill_replicas_needed(rate, s)
    return ev


def simulate_splits(ev: PoolsEvaluation, b: Budget, efficiency: Efficiency, allowance: Any = None) -> None:
    """Simulate every split of the pools' replicas at the declared arrival rate (physics
    ``splits``) and keep them on ``ev``; nothing when no rate or promise is declared."""
    from budgetlint.physics.disaggregated import splits
    from budgetlint.physics.serving_sim import Scheduler, Traffic
    from budgetlint.physics.step_cost import RooflineStepCost, kv_capacity_tokens
    from budgetlint.physics.traffic import Fixed

    wl, pr = b.workload, b.promise
    if wl is None or pr is None or ev.arrival_rate_per_s is None:
        return
    promises = [(f"{m}_s", getattr(pr, f"{m}_s")) for m in ("ttft", "tpot", "e2e") if getattr(pr, f"{m}_s")]
    if not promises:
        return
    pct = _percentile(b)
    pools = ev.pools_realistic
    for dep in (pools.prefill, pools.decode):
        if dep.accelerator.memory_bytes is None:
            ev.notes.append("a pool's hardware declares no memory: the pools are not simulated")
            return
    traffic = Traffic(prompt=Fixed(int(round(wl.prompt_tokens))), output=Fixed(max(1, int(round(wl.output_tokens)))),
                      arrival_rate_per_s=ev.arrival_rate_per_s)
    caps = (kv_capacity_tokens(pools.prefill), kv_capacity_tokens(pools.decode))
    if min(caps) <= 0:
        ev.notes.append("a pool's weights leave no memory for a KV cache: the pools are not simulated")
        return

    def costs() -> tuple[Any, Any]:
        return (RooflineStepCost(pools.prefill, efficiency),
                RooflineStepCost(replace(pools.decode, prefill_interference=False), efficiency))

    def scheds(p: int, d: int) -> tuple[Any, Any]:
        return (Scheduler(kv_capacity_tokens=caps[0], replicas=p), Scheduler(kv_capacity_tokens=caps[1], replicas=d))

    total = ev.definition.prefill.replicas + ev.definition.decode.replicas
    counts = None
    if total - 1 > MAX_SPLITS:  # the declared split and those around the fewest prefill replicas that keep up
        need = ev.prefill_replicas_needed or ev.definition.prefill.replicas
        counts = [ev.definition.prefill.replicas] + list(range(max(1, need - 1), need - 1 + MAX_SPLITS - 1))
    try:
        ev.splits = splits(pools, costs, traffic, scheds, promises, pct, requests=SPLIT_REQUESTS,
                           allowance=allowance, prefill_counts=counts)
    except ValueError as exc:
        ev.notes.append(f"the pools were not simulated: {exc}")
        return
    ev.split_percentile = f"p{numbers.stated(pct)}"


def _percentile(b: Budget) -> float:
    text = (b.percentile or "p50").lstrip("p")
    try:
        value = float(text)
    except ValueError:
        return 50.0
    return value if 0 < value < 100 else 50.0
