"""What the evidence is made of: a reading, a statistic faster than physics, a link, a budget's evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from budgetlint.findings import Location
from budgetlint.model.types import Budget

if TYPE_CHECKING:
    from budgetlint.bench import Measurement

    from .store import BenchFile


@dataclass
class Reading:
    """One promise held against one measurement."""

    promise: str  # ttft | tpot | e2e
    percentile: str  # the label compared at ("p95")
    status: str  # compared | not-measured | refused
    measured_s: float | None = None  # in budgetlint's definition (tpot over N tokens)
    promised_s: float | None = None
    how: str = ""  # conversion note
    reason: str = ""  # why not measured / refused

    @property
    def margin(self) -> float | None:
        """(promise - measured) / promise on the time scale: < 0 is a miss."""
        if self.measured_s is None or not self.promised_s:
            return None
        return (self.promised_s - self.measured_s) / self.promised_s


@dataclass
class Faster:
    """A measured value faster than the pure roofline of the budget's deployment."""

    promise: str  # ttft | tpot | e2e | throughput (then the *_s fields are seconds per token)
    measured_s: float
    bound_s: float
    statistic: str  # the label(s) the value was read at: "p50" or "p50 (also mean, p90)"
    concurrency: float = 1.0  # the concurrency the bound was computed at
    #: what makes it possible (facts; rules/_messages.faster_words says them): how many times
    #: beyond the bound; at UNIT_ERROR_RATIO or more it is a unit or key error, not a configuration
    ratio: float = 1.0
    unit_error: bool = False
    #: TTFT: the share of each prompt a prefix cache must have served, and whether the prompt
    #: length is the file's own or the budget's ("budget": the file does not say)
    cache_share_needed: float = 0.0
    prompt_origin: str = ""
    #: TPOT/E2E: lower-precision weights whose TPOT bound (s, concurrency 1) is at or under the
    #: measured value, and whether the budget already declares speculative decoding
    lower_precision: tuple[str, float] | None = None
    speculative_declared: bool = False


@dataclass
class Link:
    """One measurement linked to one budget."""

    budget: Budget
    measurement: Measurement
    file: str
    via: str  # "bench: 'runs/*.json'" or "--bench runs/x.json"
    where: Location  # the budget's `bench:` entry, or the bench file
    conditions: dict[str, tuple[Any, str]] = field(default_factory=dict)  # field -> (value, origin)
    mismatches: list[tuple[str, str]] = field(default_factory=list)  # (workload/deployment key, reason)
    readings: dict[str, Reading] = field(default_factory=dict)
    faster: list[Faster] = field(default_factory=list)
    bound: Any = None  # physics Analysis at the pure roofline, measurement's conditions
    bound_concurrency_one: Any = None  # the same at concurrency 1 (the fastest per sequence)
    sufficiency: dict[str, Any] = field(default_factory=dict)  # promise -> sufficiency.Sufficiency
    quality: list[Any] = field(default_factory=list)  # run_quality.QualityProblem
    age_days: int | None = None  # today - the file's date
    stale: list[Any] = field(default_factory=list)  # freshness.Stale
    expires: str | None = None  # the `bench:` entry's expires (YYYY-MM-DD)
    expired_days: int | None = None  # days past it (> 0: the file no longer counts)

    @property
    def name(self) -> str:
        label = self.measurement.label
        return f"{self.file} ({label})" if label else self.file

    @property
    def counts(self) -> bool:
        """Does the measurement speak for the budget's promises? (not when its entry expired)"""
        return not self.mismatches and not self.expired

    @property
    def expired(self) -> bool:
        return self.expired_days is not None and self.expired_days > 0

    def shown(self, promise: str) -> bool:
        """Does the evidence show the reading at 95 % (see evaluate.sufficiency)?"""
        s = self.sufficiency.get(promise)
        return s is None or s.shown

    @property
    def inferred(self) -> list[str]:
        """Conditions taken from the budget because the file lacks them."""
        return [k for k, (_, origin) in self.conditions.items() if origin == "budget"]


@dataclass(frozen=True)
class BudgetEvidence:
    """One budget's evidence, as the evaluation stage found it."""

    links: tuple[Link, ...] = ()
    files: tuple[BenchFile, ...] = ()  # the budget's own `bench:` files, as read
    unmatched_globs: tuple[tuple[int, str], ...] = ()  # (index in `bench:`, pattern)
    declined: tuple[tuple[str, int, str], ...] = ()  # --bench (file, measurement index, why not this budget)
    capped_globs: tuple[tuple[int, str, int], ...] = ()  # (index in `bench:`, pattern, files kept) cut by the limit
    #: (index in `bench:`, pattern, why): entries refused, outside the run's roots (errors)
    refused: tuple[tuple[int, str, str], ...] = ()
    #: (index in `bench:`, pattern, why): globs whose walk an entry or time limit cut (warnings)
    cut: tuple[tuple[int, str, str], ...] = ()
    #: links to production evidence (the engine's Prometheus histograms, bench/prometheus.py): judged
    #: by evaluate/production.py, never as a benchmark run (the BL4xx rules do not see them)
    production: tuple[Link, ...] = ()
