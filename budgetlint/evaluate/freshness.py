"""Is a measurement still evidence? Its age and engine version against a budget's policy.

A budget's ``evidence:`` (or the config's ``evidence-*`` keys) may ask for
evidence no older than ``max_age`` and from an ``engine`` and
``engine_version``. The measurement's :class:`Provenance` says what its file
records. Older evidence, or evidence from another engine or version, is a
warning naming both sides; a file that does not record what the policy asks
about is a warning too (the check could not run), never a quiet pass.

Version matching is by dotted components: a declared ``0.11`` accepts
``0.11``, ``0.11.0`` and ``0.11.2``, not ``0.1`` or ``0.12``; a leading ``v``
is ignored.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING
from budgetlint.text import numbers

if TYPE_CHECKING:  # only in annotations: the config's policy needs no benchmark reader
    from budgetlint.bench.measurement import Provenance


@dataclass(frozen=True)
class Policy:
    max_age_days: float | None = None
    engine: str | None = None
    engine_version: str | None = None
    max_age_from: str = "budget"  # who asked: "budget" (evidence.max_age) or "config"
    engine_from: str = "budget"
    version_from: str = "budget"

    @property
    def empty(self) -> bool:
        return self.max_age_days is None and self.engine is None and self.engine_version is None


@dataclass(frozen=True)
class Stale:
    check: str  # age | engine | engine-version
    message: str
    asked_by: str  # "budget" | "config"


def measured_on(prov: Provenance) -> dt.date | None:
    """The measurement's date (the file's local date when it has no zone)."""
    if not prov.date:
        return None
    try:
        return dt.datetime.fromisoformat(prov.date).date()
    except ValueError:
        return None


def age_days(prov: Provenance, today: dt.date) -> int | None:
    day = measured_on(prov)
    return None if day is None else (today - day).days


def _parts(version: str) -> list[str]:
    v = version.strip().lower()
    if v.startswith("v"):
        v = v[1:]
    return [p for p in v.replace("-", ".").replace("+", ".").split(".") if p != ""]


def version_matches(declared: str, found: str) -> bool:
    want, have = _parts(declared), _parts(found)
    return bool(want) and have[: len(want)] == want


def _engine_key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def check(prov: Provenance, policy: Policy, today: dt.date) -> list[Stale]:
    out: list[Stale] = []
    key = f"{prov.sources.get('date', 'date')}"
    if policy.max_age_days is not None:
        age = age_days(prov, today)
        limit = f"{numbers.stated(policy.max_age_days)} days ({_who(policy.max_age_from, 'max_age')})"
        if age is None:
            out.append(Stale("age", f"the file records no date, so its age against the {limit} limit "
                                    "cannot be checked", policy.max_age_from))
        elif age > policy.max_age_days:
            out.append(Stale("age", f"measured on {measured_on(prov).isoformat()} ({key}): {age} days old, "  # type: ignore[union-attr]
                                    f"older than {limit}", policy.max_age_from))
    if policy.engine is not None:
        if prov.engine is None:
            out.append(Stale("engine", f"the file does not say which engine served the run; "
                                       f"{_who(policy.engine_from, 'engine')} asks for {policy.engine}",
                             policy.engine_from))
        elif _engine_key(prov.engine) != _engine_key(policy.engine):
            out.append(Stale("engine", f"engine {prov.engine} ({prov.sources.get('engine', 'engine')}), "
                                       f"{_who(policy.engine_from, 'engine')} asks for {policy.engine}",
                             policy.engine_from))
    if policy.engine_version is not None:
        if prov.engine_version is None:
            out.append(Stale("engine-version", "the file does not record the engine version; "
                                               f"{_who(policy.version_from, 'engine_version')} asks for "
                                               f"{policy.engine_version}", policy.version_from))
        elif not version_matches(policy.engine_version, prov.engine_version):
            out.append(Stale("engine-version",
                             f"engine version {prov.engine_version} "
                             f"({prov.sources.get('engine_version', 'engine_version')}), "
                             f"{_who(policy.version_from, 'engine_version')} asks for {policy.engine_version}",
                             policy.version_from))
    return out


def _who(source: str, key: str) -> str:
    return f"the budget's evidence.{key}" if source == "budget" else f"the config's evidence-{key.replace('_', '-')}"
