"""Run llm-analysis (PyPI ``llm-analysis``) on cross-check configurations.

Imported by ``test_physics_crosscheck_llm_analysis.py`` when llm-analysis is
importable in the test interpreter, or run as a script by an interpreter that
has it (its own virtualenv: ``.venvs/llm-analysis``):
``python llm_analysis_runner.py < configs.json > results.json``.
Stdlib + llm_analysis only: it must not import budgetlint.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


def run(config: dict[str, Any]) -> dict[str, Any]:
    """One inference analysis at 100 % efficiency; the numbers the cross-check needs."""
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import (
        ParallelismConfig,
        get_dtype_config_by_name,
        get_gpu_config_by_name,
        ModelConfig,
    )
    from llm_analysis.logger import logger

    logger.setLevel(logging.ERROR)
    m = config["model"]
    model = ModelConfig(
        name=m["name"], num_layers=m["layers"], n_head=m["heads"], hidden_dim=m["hidden"],
        vocab_size=m["vocab"], num_key_value_heads=m["kv_heads"], ffn_embed_dim=m["ffn"],
    )
    gpu = get_gpu_config_by_name(config["gpu"])
    dtype = get_dtype_config_by_name(config["dtype"])
    analysis = LLMAnalysis(
        model, gpu, dtype, ParallelismConfig(tp_size=config["tp"]),
        flops_efficiency=1.0, hbm_memory_efficiency=1.0,
    )
    summary = analysis.inference(
        batch_size_per_gpu=config["batch"], seq_len=config["seq_len"],
        num_tokens_to_generate=config["generate"],
    )
    keys = (
        "prefill_latency", "prefill_latency_fwd_tp_comm", "prefill_num_flops_fwd_total",
        "decode_latency", "decode_latency_fwd_tp_comm", "kv_cache_latency", "weight_memory_per_gpu",
    )
    out = {k: float(summary[k]) for k in keys}
    out.update(
        total_params=float(analysis.total_num_params),
        gpu_bandwidth_GB_per_s=float(gpu.hbm_bandwidth_in_GB_per_sec),
        gpu_peak_fp16_TFLOPS=float(gpu.peak_fp16_TFLOPS),
        gpu_mem_GB=float(gpu.mem_per_GPU_in_GB),
        weight_bits=float(dtype.weight_bits),
        embedding_bits=float(dtype.embedding_bits),
    )
    return out


if __name__ == "__main__":
    configs = json.load(sys.stdin)
    json.dump([run(c) for c in configs], sys.stdout)
