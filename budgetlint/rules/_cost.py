"""The words of the cost rules (BL360-BL362): a budget's cost and energy figures, on their basis."""

from __future__ import annotations

from typing import Any

from budgetlint.text import numbers


def owner_words(b: Any) -> str:
    """" (owner @acme/finops)": the cost promise's owner, ``cost_owner`` else the budget's."""
    owner = getattr(b, "cost_owner", None) or b.owner
    return f" (owner {owner})" if owner else ""


def figures(c: Any) -> str:
    """"0.42 USD/Mtok, 8.41e-05 USD per request, 0.42 J/token at the simulated closed loop ... (1652 token/s
    of output on 1 device x 1 replica at 2.5 USD/hour each)"."""
    q = numbers.quantity
    parts = []
    if c.usd_per_token is not None:
        parts.append(q(c.usd_per_token, "USD/token"))
        if c.result.usd_per_request is not None:
            parts.append(f"{q(c.result.usd_per_request, 'USD')} per request")
    if c.joules_per_token is not None:
        parts.append(q(c.joules_per_token, "J/token"))
    each = []
    if c.price_usd_per_s is not None:
        each.append(q(c.price_usd_per_s, "USD/s"))
    if c.power_w is not None:
        each.append(q(c.power_w, "W"))
    fleet = (f"{numbers.count(c.devices, 'device')} x {numbers.count(c.replicas, 'replica')}"
             + (f" at {' and '.join(each)} each" if each else ""))
    return (f"{', '.join(parts)} at {c.throughput_words} ({q(c.output_tokens_per_s, 'token/s')} of output on "
            f"{fleet})")
