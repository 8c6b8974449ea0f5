"""Whether a measurement speaks for a budget: the run's conditions and the reasons it does not."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from budgetlint.model.types import Budget
from budgetlint.text import numbers

if TYPE_CHECKING:
    from budgetlint.bench import Measurement


#: relative tolerance on mean prompt and output lengths (0.25 = within ±25 %)
LENGTH_TOLERANCE = 0.25


def _norm(name: str) -> str:
    text = name.strip().lower()
    text = text.rsplit("/", 1)[-1]  # org prefix or path
    text = re.sub(r"^(nvidia|amd|google|meta)[ _-]+", "", text)
    return re.sub(r"[^a-z0-9.]+", "", text)


def _names(entry: Any) -> set[str]:
    return {_norm(n) for n in (entry.name, *entry.aliases)}


def _same_entry(measured: str, ours: Any, table: dict[str, Any]) -> bool | None:
    """True/False when the measured name resolves; None when it cannot be told."""
    found = table.get(measured.strip().lower())
    if found is None:
        key = _norm(measured)
        for entry in {id(e): e for e in table.values()}.values():
            if key in _names(entry):
                found = entry
                break
    if found is not None:
        return found is ours or found.name == ours.name
    key = _norm(measured)
    ours_names = _names(ours)
    if key in ours_names or any(n and (n in key or key in n) for n in ours_names if len(n) >= 4):
        return True
    return False


def effective_conditions(m: Measurement, b: Budget) -> dict[str, tuple[Any, str]]:
    """Conditions of a run: (value, origin) where origin is read | inferred | budget."""
    c = m.conditions
    out: dict[str, tuple[Any, str]] = {}
    for name in ("model", "hardware", "devices", "concurrency", "request_rate", "prompt_tokens",
                 "output_tokens", "measured_at"):
        value = getattr(c, name)
        if value is not None:
            out[name] = (value, c.status(name))
    wl, dep = b.workload, b.deployment
    fill: dict[str, Any] = {}
    if wl is not None:
        try:
            fill.update(concurrency=float(wl.concurrency), prompt_tokens=float(wl.prompt_tokens),
                        output_tokens=float(wl.output_tokens))
        except OverflowError:  # absurd counts: nothing to fill from
            pass
        fill["measured_at"] = wl.measured_at
    if dep is not None:
        if dep.model is not None:
            fill["model"] = dep.model.name
        if dep.hardware is not None:
            fill["hardware"] = dep.hardware.name
        fill["devices"] = dep.devices
    for name, value in fill.items():
        if name == "concurrency" and "request_rate" in out and "concurrency" not in out:
            rate = out["request_rate"][0]
            if isinstance(rate, float) and math.isfinite(rate):
                continue  # an open-loop run: its concurrency is not the budget's to assume
        out.setdefault(name, (value, "budget"))
    return out


def mismatches(m: Measurement, b: Budget, catalog: Any) -> list[tuple[str, str]]:
    """Why a measurement does not speak for a budget's promises (empty: it does)."""
    c = m.conditions
    wl, dep = b.workload, b.deployment
    out: list[tuple[str, str]] = []
    if dep is not None and dep.model is not None and c.model:
        if _same_entry(c.model, dep.model, catalog.models) is False:
            out.append(("deployment.model", f"model {c.model!r}, the budget's is {dep.model.name}"))
    if dep is not None and dep.hardware is not None and c.hardware:
        if _same_entry(c.hardware, dep.hardware, catalog.hardware) is False:
            out.append(("deployment.hardware", f"hardware {c.hardware!r}, the budget's is {dep.hardware.name}"))
    if dep is not None and c.devices is not None and c.devices != dep.devices:
        out.append(("deployment.devices", f"{numbers.count(c.devices, 'device')}, the budget's deployment has {dep.devices}"))
    if wl is not None:
        if c.concurrency is not None and c.concurrency < wl.concurrency:
            out.append(("workload.concurrency",
                        f"concurrency {numbers.stated(c.concurrency)}, lower than the budget's {wl.concurrency}"))
        for key, mine, word in (("prompt_tokens", c.prompt_tokens, "prompts"),
                                ("output_tokens", c.output_tokens, "outputs")):
            try:
                ours = float(getattr(wl, key))
            except OverflowError:
                continue
            if mine is None or ours <= 0 or not math.isfinite(ours):
                continue
            if abs(mine - ours) > LENGTH_TOLERANCE * ours:
                rel = "shorter" if mine < ours else "longer"
                out.append((f"workload.{key}",
                            f"{numbers.stated(mine)}-token {word}, {numbers.percent(abs(mine / ours - 1))} {rel} than the budget's "
                            f"{numbers.stated(ours)} (tolerance ±{numbers.percent(LENGTH_TOLERANCE)})"))
        if wl.measured_at == "client" and c.measured_at == "server":
            out.append(("workload.measured_at",
                        "measured at the server, the promise is at the client edge (network, "
                        "connection setup and proxies are not in it)"))
    return out
