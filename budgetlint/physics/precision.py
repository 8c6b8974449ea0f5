"""Precision names -> bytes per element, and which compute peak a precision uses.

Pure functions, stdlib only.

Bytes per element
-----------------
``fp32`` 4, ``tf32`` 4, ``bf16``/``fp16`` 2, ``fp8``/``int8`` 1, ``int4``/``fp4`` 0.5
(aliases such as ``float16``, ``e4m3``, ``nf4``, ``mxfp4`` are accepted), and a
bit count written ``"4.5 bit"``, ``"4.5bit"``, ``"6 bits"`` -> bits / 8.

Compute peak key
----------------
A precision computes on one of the peaks of an accelerator's
``compute_flop_per_s`` mapping (keys such as ``bf16``, ``fp8``, ``int8``,
``fp4``). :func:`compute_key` gives the preferred key:

==============  ===========
precision       key
==============  ===========
fp32            fp32
tf32            tf32
bf16, fp16      bf16
fp8             fp8
int8            int8
int4, fp4       fp4
N bit           fp32 if N > 16, bf16 if N > 8, fp8 if N > 4, else fp4
==============  ===========

When the accelerator lacks the preferred key, :func:`compute_peak` walks a
documented fallback chain (:data:`FALLBACK`). Going *down* the chain
(fp4 -> fp8 -> bf16) models what really happens on hardware without the
narrow units: 4-bit weights are dequantised and the matmuls run at fp8/int8 or
at bf16, so the slower, real peak is used. ``fp32`` is the one case that may
fall back to a *faster* peak (tf32, then bf16) when a catalog lists no fp32
figure: that can only make the bound more optimistic, never call a feasible
budget impossible.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_BYTES: dict[str, float] = {
    "fp64": 8.0,
    "float64": 8.0,
    "fp32": 4.0,
    "float32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "bfloat16": 2.0,
    "fp16": 2.0,
    "float16": 2.0,
    "half": 2.0,
    "fp8": 1.0,
    "e4m3": 1.0,
    "e5m2": 1.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "int8": 1.0,
    "uint8": 1.0,
    "int4": 0.5,
    "uint4": 0.5,
    "fp4": 0.5,
    "nf4": 0.5,
    "mxfp4": 0.5,
    "nvfp4": 0.5,
}

_KEY: dict[str, str] = {
    "fp64": "fp32",
    "float64": "fp32",
    "fp32": "fp32",
    "float32": "fp32",
    "tf32": "tf32",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "bf16",
    "float16": "bf16",
    "half": "bf16",
    "fp8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "int8": "int8",
    "uint8": "int8",
    "int4": "fp4",
    "uint4": "fp4",
    "fp4": "fp4",
    "nf4": "fp4",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
}

#: Compute-peak keys tried in order for each preferred key.
FALLBACK: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32", "tf32", "bf16", "fp16"),
    "tf32": ("tf32", "bf16", "fp16"),
    "bf16": ("bf16", "fp16"),
    "fp16": ("fp16", "bf16"),
    "fp8": ("fp8", "int8", "bf16", "fp16"),
    "int8": ("int8", "fp8", "bf16", "fp16"),
    "fp4": ("fp4", "int4", "fp8", "int8", "bf16", "fp16"),
    "int4": ("int4", "fp4", "int8", "fp8", "bf16", "fp16"),
}

_BITS = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*-?\s*bits?\s*$", re.I)


def _bits(precision: str) -> float | None:
    m = _BITS.match(precision)
    if m is None:
        return None
    bits = float(m.group(1))
    if not bits > 0:
        raise ValueError(f"precision {precision!r}: bit count must be positive")
    return bits


def bytes_per_element(precision: str) -> float:
    """Bytes per stored element for a precision name or a bit count.

    ``bytes = {fp32: 4, bf16/fp16: 2, fp8/int8: 1, int4/fp4: 0.5}[name]``,
    or ``N / 8`` for ``"N bit"``.  Raises ``ValueError`` for unknown names.
    """
    name = precision.strip().lower()
    if name in _BYTES:
        return _BYTES[name]
    bits = _bits(name)
    if bits is not None:
        return bits / 8.0
    raise ValueError(
        f"unknown precision {precision!r}: expected one of "
        f"{', '.join(sorted(set(_KEY)))} or a bit count such as '4.5 bit'"
    )


def compute_key(precision: str) -> str:
    """Preferred compute-peak key for a precision (see the module table)."""
    name = precision.strip().lower()
    if name in _KEY:
        return _KEY[name]
    bits = _bits(name)
    if bits is None:
        raise ValueError(f"unknown compute precision {precision!r}")
    if bits > 16:
        return "fp32"
    if bits > 8:
        return "bf16"
    if bits > 4:
        return "fp8"
    return "fp4"


def compute_peak(compute_flop_per_s: Mapping[str, float], precision: str) -> tuple[str, float]:
    """``(key, FLOP/s)``: the first key of ``FALLBACK[compute_key(precision)]``
    present in the accelerator's dense-peak mapping.

    Raises ``ValueError`` naming the keys tried when none is present.
    """
    preferred = compute_key(precision)
    chain = FALLBACK.get(preferred, (preferred,))
    lowered = {k.strip().lower(): float(v) for k, v in compute_flop_per_s.items()}
    for key in chain:
        if key in lowered and lowered[key] > 0:
            return key, lowered[key]
    raise ValueError(
        f"no compute peak for precision {precision!r}: tried {', '.join(chain)}; "
        f"the accelerator lists {', '.join(sorted(lowered)) or 'none'}"
    )
