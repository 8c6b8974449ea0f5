"""What serving costs: money and energy per output token at one operating point (docs/cost.md).

Pure: SI floats in, SI floats out (USD, USD/s, W = J/s, tokens/s, seconds).

The deployment runs ``devices`` accelerators per replica (tensor x pipeline
x data-parallel degree; a disaggregated deployment: every device of both
pools as one replica) and ``replicas`` replicas; each device costs ``price`` USD/s and draws
``power`` W. At an operating point where the service completes
``output_tokens_per_s`` output tokens per second (and ``requests_per_s``
requests), every second of the fleet's time is paid for and every second of its
power is spent on those tokens:

    fleet price      = price x devices x replicas                     (USD/s)
    USD per token    = fleet price / output_tokens_per_s
    USD per Mtok     = USD per token x 1e6
    USD per request  = fleet price / requests_per_s
    J per token      = power x devices x replicas / output_tokens_per_s

(per replica the same: a replica's devices over a replica's tokens). Idle time
is charged: a fleet at half its capacity pays twice per token what it pays at
capacity, as a cloud bill does. Power is the device's alone (TDP or measured
board power), not the host, network or cooling (PUE): docs/cost.md says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

#: output tokens in the "M" of USD/Mtok
MTOK = 1e6


@dataclass(frozen=True)
class Cost:
    """Cost and energy at one operating point (None where an input was absent)."""

    output_tokens_per_s: float  # the service's, at the operating point
    requests_per_s: Optional[float]
    fleet_devices: int  # devices x replicas
    fleet_usd_per_s: Optional[float]  # price x devices x replicas
    usd_per_token: Optional[float]
    usd_per_request: Optional[float]
    fleet_power_w: Optional[float]
    joules_per_token: Optional[float]

    @property
    def usd_per_mtok(self) -> Optional[float]:
        return None if self.usd_per_token is None else self.usd_per_token * MTOK


def _positive(x: Optional[float]) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def cost(output_tokens_per_s: float, requests_per_s: Optional[float], *, devices: int, replicas: int,
         price_usd_per_s: Optional[float] = None, power_w: Optional[float] = None) -> Cost:
    """The :class:`Cost` of serving ``output_tokens_per_s`` (and ``requests_per_s``) on ``replicas`` x
    ``devices`` devices at ``price_usd_per_s`` and ``power_w`` each (either may be None)."""
    if not _positive(output_tokens_per_s):
        raise ValueError(f"output tokens per second must be a positive number, not {output_tokens_per_s!r}")
    if devices < 1 or replicas < 1:
        raise ValueError(f"devices and replicas must be at least 1, not {devices!r} and {replicas!r}")
    fleet = devices * replicas
    fleet_usd = price_usd_per_s * fleet if _positive(price_usd_per_s) else None
    fleet_w = power_w * fleet if _positive(power_w) else None
    per_token = fleet_usd / output_tokens_per_s if fleet_usd is not None else None
    per_request = fleet_usd / requests_per_s if fleet_usd is not None and _positive(requests_per_s) else None
    joules = fleet_w / output_tokens_per_s if fleet_w is not None else None
    return Cost(output_tokens_per_s, requests_per_s if _positive(requests_per_s) else None, fleet, fleet_usd,
                per_token, per_request, fleet_w, joules)


def flat_output_tokens_per_s(concurrency: float, output_tokens: float, busy_s: float) -> float:
    """A flat estimate's closed loop on one replica: ``concurrency`` requests in flight, each
    ``busy_s`` of prefill and decode on an idle engine and ``output_tokens`` long:
    ``concurrency x output_tokens / busy_s``."""
    if not (busy_s > 0 and math.isfinite(busy_s)):
        raise ValueError(f"a request's busy time must be a positive number, not {busy_s!r}")
    return concurrency * output_tokens / busy_s


def cost_ratio(base_devices: int, base_tokens_per_s: float, base_price: float,
               devices: int, tokens_per_s: float, price: float) -> float:
    """A change's cost per output token over the current one's, per replica:
    ``(price x devices / tokens_per_s) / (base_price x base_devices / base_tokens_per_s)``;
    the same price cancels (a lever on the same hardware needs no price at all)."""
    return (price * devices / tokens_per_s) / (base_price * base_devices / base_tokens_per_s)
