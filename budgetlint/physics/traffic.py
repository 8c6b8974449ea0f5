"""Traffic for the serving simulator: length distributions and arrival processes.

Pure and seeded: every sampler draws from a ``random.Random`` it is given, so
a simulation with the same seed is the same simulation.

Lengths (tokens, integers >= 0 for prompts, >= 1 for replies):

* :class:`Fixed` ``n``.
* :class:`Uniform` ``lo..hi`` inclusive.
* :class:`LogNormal` by ``mean`` and ``p95``: with ``ln X ~ N(mu, s^2)``,
  ``mean = exp(mu + s^2 / 2)`` and ``p95 = exp(mu + z s)``, ``z = 1.6449``, so
  ``s^2 / 2 - z s + ln(p95 / mean) = 0`` and ``s = z - sqrt(z^2 - 2 ln(p95 / mean))``
  (the smaller root; the larger one puts the mean above the p95's tail).
  A lognormal needs ``mean < p95 <= mean x exp(z^2 / 2)`` (about 3.87 x the
  mean). Samples are rounded to the nearest integer and clipped to ``max``
  when one is given.
* :class:`Empirical`: the per-request lengths of a benchmark run, drawn with
  replacement.

Arrivals (open loop, seconds between requests for a rate ``lam``):

* ``poisson``: exponential gaps of mean ``1 / lam``;
* ``constant``: every ``1 / lam``;
* ``gamma``: gamma gaps with mean ``1 / lam`` and coefficient of variation
  ``cv`` (shape ``1 / cv^2``, scale ``cv^2 / lam``); ``cv = 1`` is Poisson,
  ``cv > 1`` bursts.

A closed loop (``concurrency`` users, each sending its next request when the
previous one ends) has no arrival process: see
:class:`~budgetlint.physics.serving_sim.Traffic`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Union
from budgetlint.text import numbers

#: Standard normal 95th percentile.
Z95 = 1.6448536269514722

ARRIVAL_KINDS = ("poisson", "constant", "gamma")


def _check_count(name: str, value: float, minimum: int) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= minimum):
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class Fixed:
    """Every request has ``n`` tokens."""

    n: int

    def __post_init__(self) -> None:
        _check_count("fixed length", self.n, 0)

    def sample(self, rng: random.Random) -> int:
        return int(self.n)

    @property
    def mean(self) -> float:
        return float(self.n)


@dataclass(frozen=True)
class Uniform:
    """Lengths uniform on ``lo..hi`` (inclusive integers)."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        _check_count("uniform lo", self.lo, 0)
        _check_count("uniform hi", self.hi, 0)
        if self.hi < self.lo:
            raise ValueError(f"uniform range is empty: hi {self.hi} < lo {self.lo}")

    def sample(self, rng: random.Random) -> int:
        return rng.randint(int(self.lo), int(self.hi))

    @property
    def mean(self) -> float:
        return (int(self.lo) + int(self.hi)) / 2.0


def lognormal_params(mean: float, p95: float) -> tuple[float, float]:
    """``(mu, sigma)`` of the lognormal with this mean and 95th percentile (module doc)."""
    if not (math.isfinite(mean) and mean > 0 and math.isfinite(p95) and p95 > 0):
        raise ValueError(f"lognormal mean and p95 must be positive, got {mean!r}, {p95!r}")
    if p95 <= mean:
        raise ValueError(f"a lognormal's p95 ({numbers.stated(p95)}) must exceed its mean ({numbers.stated(mean)})")
    r = math.log(p95 / mean)
    disc = Z95 * Z95 - 2.0 * r
    if disc < 0:
        raise ValueError(
            f"no lognormal has p95/mean = {numbers.number(p95 / mean)}: at most {numbers.number(math.exp(Z95 * Z95 / 2))}"
        )
    sigma = Z95 - math.sqrt(disc)
    mu = math.log(mean) - sigma * sigma / 2.0
    return mu, sigma


@dataclass(frozen=True)
class LogNormal:
    """Lengths lognormal with this ``mean`` and ``p95`` (rounded, at least ``minimum``)."""

    mean_tokens: float
    p95_tokens: float
    minimum: int = 1
    maximum: Union[int, None] = None

    def __post_init__(self) -> None:
        mu, sigma = lognormal_params(self.mean_tokens, self.p95_tokens)
        object.__setattr__(self, "_mu", mu)
        object.__setattr__(self, "_sigma", sigma)
        if self.maximum is not None and self.maximum < self.minimum:
            raise ValueError("lognormal maximum below its minimum")

    def sample(self, rng: random.Random) -> int:
        x = int(round(rng.lognormvariate(self._mu, self._sigma)))  # type: ignore[attr-defined]
        if x < self.minimum:
            x = self.minimum
        if self.maximum is not None and x > self.maximum:
            x = self.maximum
        return x

    @property
    def mean(self) -> float:
        return float(self.mean_tokens)


@dataclass(frozen=True)
class Empirical:
    """Lengths drawn with replacement from measured per-request lengths."""

    values: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("empirical lengths need at least one value")
        for v in self.values:
            _check_count("empirical length", v, 0)
        object.__setattr__(self, "values", tuple(int(v) for v in self.values))

    def sample(self, rng: random.Random) -> int:
        return self.values[int(rng.random() * len(self.values))]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)


LengthDist = Union[Fixed, Uniform, LogNormal, Empirical]


def unit_gap_sampler(kind: str, cv: float = 1.0):  # type: ignore[no-untyped-def]
    """A function ``rng -> gap`` of mean 1 for an open-loop arrival process (module
    doc); divide by the rate for seconds. Drawing unit gaps keeps the same random
    numbers at every rate, so a capacity search compares like with like."""
    if kind == "poisson":
        return lambda rng: rng.expovariate(1.0)
    if kind == "constant":
        return lambda rng: 1.0
    if kind == "gamma":
        if not (isinstance(cv, (int, float)) and math.isfinite(cv) and cv > 0):
            raise ValueError(f"gamma arrivals need a positive cv, got {cv!r}")
        shape = 1.0 / (cv * cv)
        scale = 1.0 / shape
        return lambda rng: rng.gammavariate(shape, scale)
    raise ValueError(f"arrival must be one of {', '.join(ARRIVAL_KINDS)}, got {kind!r}")
