"""Pure roofline physics on SI floats (seconds, bytes, bytes/s, FLOP, FLOP/s, tokens).

No YAML, pint, click or file I/O here; stdlib only. See ``docs/physics.md``.
"""

from __future__ import annotations

from .analysis import Analysis, analyse
from .decode import (
    DecodeStep,
    aggregate_throughput,
    collective_factor,
    decode_step,
    per_user_pace,
)
from .step import PrefillLoad, StepInputs, StepTerms, iteration, steps_sum
from .latency import (
    decode_budget_s,
    e2e_s,
    proxy_delay_s,
    required_pace,
    tpot_from_vllm,
    ttft_s,
)
from .levers import DEFAULT_SPEC_ACCEPTANCE, Lever, evaluate_levers
from .memory import (
    MemoryFit,
    expected_experts_touched,
    kv_bytes_for_context,
    kv_bytes_per_token,
    kv_bytes_summed_over_contexts,
    memory_fit,
    moe_params_touched,
    weight_bytes,
)
from .precision import bytes_per_element, compute_key, compute_peak
from .prefill import PrefillTime, attention_flop, linear_flop, prefill_flop, prefill_time
from .shapes import (
    REALISTIC_EFFICIENCY,
    ROOFLINE,
    Accelerator,
    Deployment,
    Edge,
    Efficiency,
    ModelShape,
    Workload,
)

__all__ = [
    "Accelerator", "Analysis", "DEFAULT_SPEC_ACCEPTANCE", "DecodeStep", "Deployment", "Edge",
    "Efficiency", "Lever", "MemoryFit", "ModelShape", "PrefillTime", "REALISTIC_EFFICIENCY",
    "ROOFLINE", "PrefillLoad", "StepInputs", "StepTerms", "Workload", "iteration", "steps_sum", "aggregate_throughput", "analyse", "attention_flop",
    "bytes_per_element", "collective_factor", "compute_key", "compute_peak", "decode_budget_s",
    "decode_step", "e2e_s", "evaluate_levers",
    "expected_experts_touched", "kv_bytes_for_context", "kv_bytes_per_token",
    "kv_bytes_summed_over_contexts", "linear_flop", "memory_fit", "moe_params_touched",
    "per_user_pace", "prefill_flop", "prefill_time", "proxy_delay_s",
    "required_pace", "tpot_from_vllm", "ttft_s", "weight_bytes",
]
