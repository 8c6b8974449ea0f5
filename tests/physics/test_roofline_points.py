"""The roofline picture in the analysis (the HTML report's roofline chart
plots these): arithmetic intensity of a decode step and of the prefill, and
the rate the roofline allows at each, checked against a hand calculation.

Llama-3-8B-like dense model (8e9 parameters, 32 layers, 32 heads of 128,
8 KV heads: 128 KiB of bf16 KV cache per token) on an H100 SXM (3.35 TB/s,
989 TFLOP/s dense bf16), batch 4, 1000-token prompt, 201-token reply.
"""

from __future__ import annotations

import pytest

from budgetlint.physics import Accelerator, Deployment, Efficiency, ModelShape, Workload, analyse

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
LLAMA8 = ModelShape(total_params=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128)
WL = Workload(prompt_tokens=1000, output_tokens=201, concurrency=4)

# decode at the mean context 1000 + (201 - 1) / 2 = 1100 tokens
DEC_FLOP = 4 * 2 * 8e9  # B x 2 x P per step
DEC_BYTES = 8e9 * 2 + 4 * 1100 * (2 * 32 * 8 * 128 * 2)  # weights + B x KV(1100)
# prefill: 2 P U + 4 heads head_dim layers U(U+1)/2 FLOP; one read of the weights
PF_FLOP = 2 * 8e9 * 1000 + 4 * 32 * 128 * 32 * (1000 * 1001 / 2)
PF_BYTES = 16e9


def test_intensities_and_attainable_rates_one_device() -> None:
    a = analyse(Deployment(model=LLAMA8, accelerator=H100), WL)
    assert a.bandwidth_peak_bytes_per_s == 3.35e12
    assert a.ridge_intensity_flop_per_byte == pytest.approx(989e12 / 3.35e12)  # ~295 FLOP/B
    assert a.decode_flop_per_step == pytest.approx(DEC_FLOP)
    assert a.decode_bytes_per_step == pytest.approx(DEC_BYTES)
    assert a.decode_intensity_flop_per_byte == pytest.approx(DEC_FLOP / DEC_BYTES)  # ~3.9: bandwidth-bound
    assert a.decode_attainable_flop_per_s == pytest.approx(DEC_FLOP / DEC_BYTES * 3.35e12)
    assert a.prefill_bytes == pytest.approx(PF_BYTES)
    assert a.prefill_intensity_flop_per_byte == pytest.approx(PF_FLOP / PF_BYTES)  # ~1016: compute-bound
    assert a.prefill_attainable_flop_per_s == pytest.approx(989e12)


def test_tensor_parallel_halves_the_work_per_device_not_the_intensity() -> None:
    a = analyse(Deployment(model=LLAMA8, accelerator=H100, devices=2), WL)
    assert a.decode_flop_per_step == pytest.approx(DEC_FLOP / 2)
    assert a.decode_bytes_per_step == pytest.approx(DEC_BYTES / 2)
    assert a.decode_intensity_flop_per_byte == pytest.approx(DEC_FLOP / DEC_BYTES)
    assert a.prefill_intensity_flop_per_byte == pytest.approx(PF_FLOP / PF_BYTES)


def test_realistic_roof_is_lower_by_the_efficiencies() -> None:
    a = analyse(Deployment(model=LLAMA8, accelerator=H100), WL, Efficiency(0.7, 0.5))
    assert a.bandwidth_peak_bytes_per_s == 3.35e12  # the peak stays the peak
    assert a.ridge_intensity_flop_per_byte == pytest.approx(0.5 * 989e12 / (0.7 * 3.35e12))
    assert a.decode_attainable_flop_per_s == pytest.approx(DEC_FLOP / DEC_BYTES * 0.7 * 3.35e12)
    assert a.prefill_attainable_flop_per_s == pytest.approx(0.5 * 989e12)
