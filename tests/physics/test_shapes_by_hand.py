"""physics/shapes.py: each refusal's words (field, what was expected, what was found) and each
default filled in, checked one at a time (issue 22: mutation testing against tests/physics).
The messages are what a user reads when a catalog entry or a budget is wrong."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from budgetlint.physics.shapes import (
    MAX_COLLECTIVE_OVERHEAD,
    REALISTIC_EFFICIENCY,
    ROOFLINE,
    Accelerator,
    Deployment,
    Efficiency,
    ModelShape,
    Workload,
)

M = dict(total_params=1e9, layers=4, attention_heads=4, head_dim=64)
MOE = dict(M, experts=8, experts_per_token=2)
ACC = Accelerator(bandwidth_bytes_per_s=1e12, memory_bytes=8e10)
MODEL = ModelShape(**M)

MODEL_REFUSALS = [
    (dict(M, layers=0), r"layers must be a positive finite number, got 0$"),
    (dict(M, attention_heads=-1), r"attention_heads must be a positive finite number, got -1$"),
    (dict(M, hidden_size=0), r"hidden_size must be a positive finite number, got 0$"),
    (dict(M, vocab_size=math.nan), r"vocab_size must be a positive finite number, got nan$"),
    (dict(total_params=1e9, layers=4, attention_heads=4),
     r"head_dim or hidden_size is needed \(head_dim = hidden_size / attention_heads\)$"),
    (dict(M, kv_heads=0), r"kv_heads must be a positive finite number, got 0$"),
    (dict(M, head_dim=-2), r"head_dim must be a positive finite number, got -2$"),
    (dict(M, active_params=0), r"active_params must be a positive finite number, got 0$"),
    (dict(M, vocab_size=100_000, hidden_size=10_000),
     r"the input embedding \(vocab_size 100000 x hidden_size 10000 = 1,000,000,000 parameters\) is not smaller than "
     r"the 1,000,000,000 parameters a token uses: check parameters, vocab_size and hidden_size$"),
    (dict(M, active_params=2e9), r"active_params \(2,000,000,000\) exceeds total_params \(1,000,000,000\)$"),
    (dict(M, attention="sparse"), r"attention must be mha, gqa or mla, got 'sparse'$"),
    (dict(M, attention="mla", kv_lora_rank=512), r"attention 'mla' needs kv_lora_rank and qk_rope_head_dim$"),
    (dict(M, attention="mla", qk_rope_head_dim=64), r"attention 'mla' needs kv_lora_rank and qk_rope_head_dim$"),
    (dict(M, attention="mla", kv_lora_rank=0, qk_rope_head_dim=64), r"kv_lora_rank must be a positive finite "),
    (dict(M, attention="mla", kv_lora_rank=512, qk_rope_head_dim=-1),
     r"qk_rope_head_dim must be a non-negative finite number, got -1$"),
    (dict(M, sliding_window=0), r"sliding_window must be a positive finite number, got 0$"),
    (dict(M, sliding_window_layers=-1), r"sliding_window_layers must be a non-negative finite number, got -1$"),
    (dict(M, sliding_window_layers=2), r"sliding_window_layers given without sliding_window$"),
    (dict(M, sliding_window_layers=1), r"sliding_window_layers given without sliding_window$"),
    (dict(M, sliding_window=8, sliding_window_layers=5), r"sliding_window_layers \(5\) exceeds layers \(4\)$"),
    (dict(M, experts=8), r"experts and experts_per_token go together$"),
    (dict(M, experts_per_token=2), r"experts and experts_per_token go together$"),
    (dict(M, experts=0, experts_per_token=2), r"experts must be a positive finite number, got 0$"),
    (dict(M, experts=8, experts_per_token=0), r"experts_per_token must be a positive finite number, got 0$"),
    (dict(M, experts=8, experts_per_token=9), r"experts_per_token exceeds experts$"),
]


@pytest.mark.parametrize("kw,message", MODEL_REFUSALS)
def test_model_refusals(kw, message) -> None:
    with pytest.raises(ValueError, match="^" + message):
        ModelShape(**kw)


def test_model_defaults_and_edges() -> None:
    m = ModelShape(total_params=1e9, layers=4, attention_heads=4, hidden_size=256)
    assert (m.kv_heads, m.head_dim, m.active_params) == (4, 64.0, 1e9)
    assert m.full_attention_layers == 4
    w = ModelShape(**M, sliding_window=8)
    assert w.sliding_window_layers == 4 and w.full_attention_layers == 0
    assert ModelShape(**M, sliding_window=8, sliding_window_layers=4).full_attention_layers == 0
    assert ModelShape(**M, sliding_window=8, sliding_window_layers=1).full_attention_layers == 3
    assert ModelShape(**M, sliding_window_layers=0).full_attention_layers == 4  # none windowed: allowed
    # the embedding check only with both sizes and untied embeddings, and only at or above active
    assert ModelShape(**M, vocab_size=99_999, hidden_size=10_000).vocab_size == 99_999
    assert ModelShape(**M, vocab_size=100_000, hidden_size=10_000, tie_word_embeddings=True).hidden_size == 10_000
    assert ModelShape(**M, vocab_size=10**9).vocab_size == 10**9
    assert ModelShape(**M, active_params=1e9).active_params == 1e9
    assert ModelShape(**MOE, active_params=3e8).experts_per_token == 2
    assert ModelShape(**dict(M, experts=2, experts_per_token=2)).experts == 2
    assert ModelShape(**M, attention="mla", kv_lora_rank=512, qk_rope_head_dim=0).qk_rope_head_dim == 0
    assert ModelShape(**M, attention="mha").attention == "mha"


DEP_REFUSALS = [
    (dict(devices=0), r"devices must be an integer >= 1, got 0$"),
    (dict(devices=2.0), r"devices must be an integer >= 1, got 2.0$"),
    (dict(data_parallel=0), r"data_parallel must be an integer >= 1, got 0$"),
    (dict(pipeline_parallel=True), r"pipeline_parallel must be an integer >= 1, got True$"),
    (dict(expert_parallel=1.5), r"expert_parallel must be an integer >= 1, got 1.5$"),
    (dict(expert_parallel=2), r"expert_parallel 2 needs a model with routed experts$"),
    (dict(pipeline_parallel=5), r"pipeline_parallel 5 exceeds the model's 4 layers$"),
    (dict(expert_imbalance=0.0), r"expert_imbalance must be a positive finite number, got 0.0$"),
    (dict(expert_imbalance=0.9),
     r"expert_imbalance is the busiest rank's load over the mean: >= 1, got 0.9$"),
    (dict(alltoall_bandwidth_bytes_per_s=0.0), r"alltoall_bandwidth_bytes_per_s must be a positive finite number"),
    (dict(alltoall_latency_s=-1e-6), r"alltoall_latency_s must be a non-negative finite number, got -1e-06$"),
    (dict(moe_layers=5), r"moe_layers must be an integer in \[0, 4\], got 5$"),
    (dict(moe_layers=-1), r"moe_layers must be an integer in \[0, 4\], got -1$"),
    (dict(moe_layers=2.0), r"moe_layers must be an integer in \[0, 4\], got 2.0$"),
    (dict(weight_bytes_per_param=0.0), r"weight_bytes_per_param must be a positive finite number, got 0.0$"),
    (dict(kv_bytes_per_elem=math.inf), r"kv_bytes_per_elem must be a positive finite number, got inf$"),
    (dict(spec_accepted_tokens_per_pass=0.0), r"spec_accepted_tokens_per_pass must be a positive finite number"),
    (dict(spec_accepted_tokens_per_pass=0.5),
     r"spec_accepted_tokens_per_pass must be >= 1 \(1 = no speculative decoding\), got 0.5$"),
    (dict(draft_lookahead=-1), r"draft_lookahead must be an integer >= 0$"),
    (dict(draft_lookahead=1.0), r"draft_lookahead must be an integer >= 0$"),
    (dict(draft_lookahead=1, spec_accepted_tokens_per_pass=2.5),
     r"draft_lookahead 1 cannot deliver 2.5 accepted tokens per pass \(at most lookahead \+ 1\)$"),
    (dict(draft_weight_bytes_per_param=0.0), r"draft_weight_bytes_per_param must be a positive finite number"),
    (dict(collective_overhead=-0.1), r"collective_overhead must be a non-negative finite number, got -0.1$"),
    (dict(collective_overhead=0.6),
     r"collective_overhead must be in \[0, 0.5\] \(a fraction of the decode step\), got 0.6$"),
    (dict(memory_usable_fraction=0.0), r"memory_usable_fraction must be a positive finite number, got 0.0$"),
    (dict(memory_usable_fraction=1.5), r"memory_usable_fraction must be in \(0, 1\]$"),
    (dict(memory_overhead_bytes=-1.0), r"memory_overhead_bytes must be a non-negative finite number, got -1.0$"),
    (dict(iteration_overhead_s=math.nan), r"iteration_overhead_s must be a non-negative finite number, got nan$"),
    (dict(collective_latency_s=-1.0), r"collective_latency_s must be a non-negative finite number, got -1.0$"),
    (dict(overlap=-0.5), r"overlap must be a non-negative finite number, got -0.5$"),
    (dict(overlap=1.5), r"overlap must be in \[0, 1\], got 1.5$"),
]


@pytest.mark.parametrize("kw,message", DEP_REFUSALS)
def test_deployment_refusals(kw, message) -> None:
    with pytest.raises(ValueError, match="^" + message):
        Deployment(model=MODEL, accelerator=ACC, **kw)


def test_expert_parallel_must_divide_tensor_x_data() -> None:
    moe = ModelShape(**MOE)
    with pytest.raises(ValueError, match=r"^expert_parallel 4 must divide tensor x data = 3 x 1 = 3$"):
        Deployment(model=moe, accelerator=ACC, devices=3, expert_parallel=4)
    with pytest.raises(ValueError, match=r"^expert_parallel 4 must divide tensor x data = 1 x 2 = 2$"):
        Deployment(model=moe, accelerator=ACC, data_parallel=2, expert_parallel=4)
    d = Deployment(model=moe, accelerator=ACC, devices=2, data_parallel=2, expert_parallel=4)
    assert d.expert_parallel == 4


def test_deployment_edges_and_derived_counts() -> None:
    d = Deployment(model=MODEL, accelerator=ACC, devices=2, data_parallel=3, pipeline_parallel=4,
                   collective_overhead=MAX_COLLECTIVE_OVERHEAD, memory_usable_fraction=1.0, overlap=0.0,
                   expert_imbalance=1.0, moe_layers=0, alltoall_latency_s=0.0, memory_overhead_bytes=0.0)
    assert d.total_devices == 2 * 3 * 4 and MAX_COLLECTIVE_OVERHEAD == 0.5
    assert Deployment(model=MODEL, accelerator=ACC, moe_layers=4, overlap=1.0).moe_layers == 4
    assert Deployment(model=MODEL, accelerator=ACC, pipeline_parallel=4).pipeline_parallel == 4
    # the lookahead: declared, else the fewest draft tokens that can deliver the acceptance
    assert Deployment(model=MODEL, accelerator=ACC).lookahead == 0
    assert Deployment(model=MODEL, accelerator=ACC, spec_accepted_tokens_per_pass=2.5).lookahead == 2
    assert Deployment(model=MODEL, accelerator=ACC, spec_accepted_tokens_per_pass=3.0).lookahead == 2
    assert Deployment(model=MODEL, accelerator=ACC, spec_accepted_tokens_per_pass=2.0, draft_lookahead=1).lookahead == 1
    assert Deployment(model=MODEL, accelerator=ACC, draft_lookahead=0).lookahead == 0
    assert Deployment(model=MODEL, accelerator=ACC, spec_accepted_tokens_per_pass=1.0).spec_accepted_tokens_per_pass == 1.0


WORKLOAD_REFUSALS = [
    (dict(prompt_tokens=-1, output_tokens=1), r"prompt_tokens must be a non-negative finite number, got -1$"),
    (dict(prompt_tokens=1, output_tokens=0), r"output_tokens must be a positive finite number, got 0$"),
    (dict(prompt_tokens=1, output_tokens=1, concurrency=0), r"concurrency must be an integer >= 1, got 0$"),
    (dict(prompt_tokens=1, output_tokens=1, concurrency=2.0), r"concurrency must be an integer >= 1, got 2.0$"),
    (dict(prompt_tokens=1, output_tokens=1, cached_prompt_tokens=-1),
     r"cached_prompt_tokens must be a non-negative finite number, got -1$"),
    (dict(prompt_tokens=10, output_tokens=1, cached_prompt_tokens=11), r"cached_prompt_tokens exceeds prompt_tokens$"),
]


@pytest.mark.parametrize("kw,message", WORKLOAD_REFUSALS)
def test_workload_refusals(kw, message) -> None:
    with pytest.raises(ValueError, match="^" + message):
        Workload(**kw)


def test_workload_edges() -> None:
    w = Workload(prompt_tokens=10, output_tokens=5, cached_prompt_tokens=10)
    assert w.uncached_prompt_tokens == 0 and w.concurrency == 1
    assert Workload(prompt_tokens=0, output_tokens=1).uncached_prompt_tokens == 0
    assert Workload(prompt_tokens=10, output_tokens=5, cached_prompt_tokens=4).uncached_prompt_tokens == 6


def test_efficiency_refusals_and_edges() -> None:
    for bad, message in ((0.0, r"^efficiency.bandwidth must be a positive finite number, got 0.0$"),
                         (1.5, r"^efficiency.bandwidth must be in \(0, 1\], got 1.5$")):
        with pytest.raises(ValueError, match=message):
            Efficiency(bad, 1.0)
    with pytest.raises(ValueError, match=r"^efficiency.compute must be in \(0, 1\], got 2$"):
        Efficiency(1.0, 2)
    with pytest.raises(ValueError, match=r"^efficiency.compute must be a positive finite number, got nan$"):
        Efficiency(1.0, math.nan)
    assert Efficiency(1.0, 1.0) == ROOFLINE == Efficiency()
    assert (REALISTIC_EFFICIENCY.bandwidth, REALISTIC_EFFICIENCY.compute) == (0.7, 0.5)
    assert replace(ROOFLINE, compute=1e-9).compute == 1e-9


def test_non_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^total_params must be a positive finite number, got '1e9'$"):
        ModelShape(**dict(M, total_params="1e9"))
    with pytest.raises(ValueError, match=r"^prompt_tokens must be a non-negative finite number, got None$"):
        Workload(prompt_tokens=None, output_tokens=1)


def test_the_optional_positive_fields_accept_a_positive_number() -> None:
    d = Deployment(model=MODEL, accelerator=ACC, alltoall_bandwidth_bytes_per_s=4e11, draft_weight_bytes_per_param=1.0)
    assert (d.alltoall_bandwidth_bytes_per_s, d.draft_weight_bytes_per_param) == (4e11, 1.0)
