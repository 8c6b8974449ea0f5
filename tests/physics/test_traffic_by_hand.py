"""physics/traffic.py's samplers and the lognormal's closed form, checked against their definitions
(issue 22: mutation testing against tests/physics). A recording stand-in for ``random.Random``
shows which distribution each sampler asks for, with which parameters."""

from __future__ import annotations

import math
import random

import pytest

from budgetlint.physics import traffic


class Recorder:
    """Returns the arguments each draw was asked with (and fixed numbers for the plain ones)."""

    def __init__(self, uniform: float = 0.5, lognormal: float = 10.0) -> None:
        self.uniform, self.lognormal = uniform, lognormal

    def expovariate(self, lambd):
        return ("exp", lambd)

    def gammavariate(self, alpha, beta):
        return ("gamma", alpha, beta)

    def random(self):
        return self.uniform

    def randint(self, a, b):
        return ("randint", a, b)

    def lognormvariate(self, mu, sigma):
        return self.lognormal


def test_the_lognormal_has_the_stated_mean_and_p95() -> None:
    for mean, p95 in ((100.0, 250.0), (1000.0, 1001.0), (50.0, 190.0)):
        mu, sigma = traffic.lognormal_params(mean, p95)
        assert math.exp(mu + sigma * sigma / 2) == pytest.approx(mean, rel=1e-12)
        assert math.exp(mu + traffic.Z95 * sigma) == pytest.approx(p95, rel=1e-12)
        assert 0 < sigma < traffic.Z95  # the smaller root
    # the largest p95/mean a lognormal has: exp(z^2 / 2) = 3.87
    edge = math.exp(traffic.Z95 ** 2 / 2)
    mu, sigma = traffic.lognormal_params(100.0, 100.0 * edge)
    assert sigma == pytest.approx(traffic.Z95, rel=1e-6)
    with pytest.raises(ValueError, match=r"^no lognormal has p95/mean = 3.9: at most 3.87"):
        traffic.lognormal_params(100.0, 390.0)
    with pytest.raises(ValueError, match=r"^a lognormal's p95 \(100\) must exceed its mean \(100\)"):
        traffic.lognormal_params(100.0, 100.0)
    for bad in ((0.0, 10.0), (10.0, 0.0), (math.inf, 10.0), (10.0, math.nan), (-1.0, 10.0)):
        with pytest.raises(ValueError, match="^lognormal mean and p95 must be positive"):
            traffic.lognormal_params(*bad)


def test_lognormal_samples_are_rounded_and_clipped() -> None:
    d = traffic.LogNormal(100.0, 250.0, minimum=5, maximum=400)
    assert d.mean == 100.0
    assert d.sample(Recorder(lognormal=10.4)) == 10 and d.sample(Recorder(lognormal=10.6)) == 11
    assert d.sample(Recorder(lognormal=2.0)) == 5 and d.sample(Recorder(lognormal=5.0)) == 5
    assert d.sample(Recorder(lognormal=900.0)) == 400 and d.sample(Recorder(lognormal=400.0)) == 400
    assert traffic.LogNormal(100.0, 250.0).sample(Recorder(lognormal=0.2)) == 1
    assert traffic.LogNormal(100.0, 250.0).sample(Recorder(lognormal=1e6)) == 1_000_000
    traffic.LogNormal(100.0, 250.0, minimum=5, maximum=5)
    with pytest.raises(ValueError, match="maximum below its minimum"):
        traffic.LogNormal(100.0, 250.0, minimum=5, maximum=4)
    # a real generator: the sample mean of 5,000 draws is near 100 (sigma 0.56: sd 61, of the mean 0.9)
    rng = random.Random(1)
    draws = [traffic.LogNormal(100.0, 250.0).sample(rng) for _ in range(5_000)]
    assert sum(draws) / len(draws) == pytest.approx(100.0, rel=0.03)


def test_fixed_uniform_and_empirical_lengths() -> None:
    assert traffic.Fixed(7).sample(Recorder()) == 7 and traffic.Fixed(7).mean == 7.0
    assert traffic.Fixed(0).mean == 0.0
    u = traffic.Uniform(3, 9)
    assert u.sample(Recorder()) == ("randint", 3, 9) and u.mean == 6.0
    assert traffic.Uniform(4, 4).mean == 4.0
    e = traffic.Empirical((10, 20, 30, 41))
    assert e.mean == pytest.approx(25.25)
    # index = int(u x 4): 0.0 -> 10, 0.49 -> 20, 0.5 -> 30, 0.999 -> 41
    assert [e.sample(Recorder(uniform=x)) for x in (0.0, 0.49, 0.5, 0.999)] == [10, 20, 30, 41]
    assert traffic.Empirical((3.0, 4.0)).values == (3, 4)


@pytest.mark.parametrize("make", [
    lambda: traffic.Fixed(-1), lambda: traffic.Fixed(math.inf), lambda: traffic.Fixed(math.nan),
    lambda: traffic.Uniform(-1, 3), lambda: traffic.Uniform(1, -3), lambda: traffic.Empirical((3, -1)),
])
def test_negative_or_infinite_counts_are_refused(make) -> None:
    with pytest.raises(ValueError, match=r"must be a finite number >= 0, got"):
        make()


def test_other_bad_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^uniform range is empty: hi 2 < lo 3"):
        traffic.Uniform(3, 2)
    with pytest.raises(ValueError, match="^empirical lengths need at least one value"):
        traffic.Empirical(())
    with pytest.raises(ValueError, match="^fixed length must be a finite number >= 0, got 'x'"):
        traffic.Fixed("x")  # type: ignore[arg-type]


def test_unit_gaps_have_mean_one() -> None:
    assert traffic.unit_gap_sampler("constant")(Recorder()) == 1.0
    assert traffic.unit_gap_sampler("poisson")(Recorder()) == ("exp", 1.0)
    # gamma of mean 1 and coefficient of variation cv: shape 1 / cv^2, scale cv^2 (mean shape x scale = 1,
    # variance shape x scale^2 = cv^2)
    assert traffic.unit_gap_sampler("gamma", 2.0)(Recorder()) == ("gamma", 0.25, 4.0)
    assert traffic.unit_gap_sampler("gamma", 0.5)(Recorder()) == ("gamma", 4.0, 0.25)
    assert traffic.unit_gap_sampler("gamma")(Recorder()) == ("gamma", 1.0, 1.0)
    for cv in (0.0, -1.0, math.inf, "1"):
        with pytest.raises(ValueError, match="^gamma arrivals need a positive cv"):
            traffic.unit_gap_sampler("gamma", cv)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^arrival must be one of poisson, constant, gamma, got 'burst'"):
        traffic.unit_gap_sampler("burst")


def test_empirical_lengths_become_integers_and_name_themselves_when_refused() -> None:
    e = traffic.Empirical((3.0, 4.0))
    assert all(type(v) is int for v in e.values)
    with pytest.raises(ValueError, match=r"^empirical length must be a finite number >= 0, got -1"):
        traffic.Empirical((3, -1))


def test_lognormal_of_less_than_one_token_and_its_refusal_words() -> None:
    # the parameters are defined for any positive mean and p95 (tokens are rounded only when drawn)
    mu, sigma = traffic.lognormal_params(0.5, 0.9)
    assert math.isfinite(mu) and sigma > 0
    mu, sigma = traffic.lognormal_params(0.25, 0.5)
    assert math.exp(mu + sigma * sigma / 2) == pytest.approx(0.25, rel=1e-12)
    with pytest.raises(ValueError, match=r"^lognormal maximum below its minimum$"):
        traffic.LogNormal(100, 200, minimum=10, maximum=9)


def test_uniform_refusals_name_their_end() -> None:
    with pytest.raises(ValueError, match=r"^uniform lo must be a finite number >= 0, got -1$"):
        traffic.Uniform(-1, 3)
    with pytest.raises(ValueError, match=r"^uniform hi must be a finite number >= 0, got -3$"):
        traffic.Uniform(1, -3)
    with pytest.raises(ValueError, match=r"^uniform range is empty: hi 2 < lo 3$"):
        traffic.Uniform(3, 2)
