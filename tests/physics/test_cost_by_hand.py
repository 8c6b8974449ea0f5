"""physics/cost.py worked by hand (docs/cost.md's formulas, numbers chosen to divide exactly).

A fleet of 2 replicas x 4 devices at 0.001 USD/s and 700 W each, completing 2,000 output
tokens/s and 4 requests/s:
fleet = 8 devices; fleet price = 0.008 USD/s; USD/token = 0.008 / 2000 = 4e-6;
USD/Mtok = 4; USD/request = 0.008 / 4 = 0.002; fleet power = 5,600 W; J/token = 2.8.
"""

from __future__ import annotations

import math

import pytest

from budgetlint.physics.cost import MTOK, Cost, cost, cost_ratio, flat_output_tokens_per_s


def test_the_worked_fleet() -> None:
    c = cost(2000.0, 4.0, devices=4, replicas=2, price_usd_per_s=0.001, power_w=700.0)
    assert c == Cost(2000.0, 4.0, 8, pytest.approx(0.008), pytest.approx(4e-6), pytest.approx(0.002),
                     pytest.approx(5600.0), pytest.approx(2.8))
    assert c.fleet_devices == 8
    assert c.fleet_usd_per_s == pytest.approx(0.008, rel=1e-12)
    assert c.usd_per_token == pytest.approx(4e-6, rel=1e-12)
    assert c.usd_per_mtok == pytest.approx(4.0, rel=1e-12)
    assert c.usd_per_request == pytest.approx(0.002, rel=1e-12)
    assert c.fleet_power_w == pytest.approx(5600.0, rel=1e-12)
    assert c.joules_per_token == pytest.approx(2.8, rel=1e-12)
    assert MTOK == 1e6


def test_absent_or_unusable_inputs_give_none_not_a_number() -> None:
    c = cost(2000.0, None, devices=1, replicas=1)
    assert (c.requests_per_s, c.fleet_usd_per_s, c.usd_per_token, c.usd_per_mtok, c.usd_per_request,
            c.fleet_power_w, c.joules_per_token) == (None,) * 7
    assert c.fleet_devices == 1 and c.output_tokens_per_s == 2000.0
    # a price but no request rate: per token yes, per request no (and a zero or NaN rate is none)
    for rate in (None, 0.0, -1.0, math.nan, math.inf):
        c = cost(1000.0, rate, devices=2, replicas=1, price_usd_per_s=0.5)
        assert c.usd_per_token == pytest.approx(1e-3, rel=1e-12)  # 0.5 x 2 / 1000
        assert c.usd_per_request is None and c.requests_per_s is None
    # a zero, negative, NaN or infinite price or power is treated as absent
    for bad in (0.0, -0.001, math.nan, math.inf):
        c = cost(1000.0, 1.0, devices=1, replicas=1, price_usd_per_s=bad, power_w=bad)
        assert (c.fleet_usd_per_s, c.usd_per_token, c.usd_per_request, c.fleet_power_w,
                c.joules_per_token) == (None,) * 5
        assert c.requests_per_s == 1.0
    # power alone: energy but no money
    c = cost(500.0, 2.0, devices=1, replicas=3, power_w=400.0)
    assert c.fleet_power_w == pytest.approx(1200.0) and c.joules_per_token == pytest.approx(2.4)
    assert c.usd_per_token is None and c.usd_per_request is None


@pytest.mark.parametrize("tokens", [0.0, -5.0, math.nan, math.inf, None])
def test_refuses_a_rate_that_is_not_a_positive_number(tokens) -> None:
    with pytest.raises(ValueError, match=r"^output tokens per second must be a positive number, not "):
        cost(tokens, 1.0, devices=1, replicas=1)


@pytest.mark.parametrize("devices,replicas", [(0, 1), (1, 0), (-1, 2)])
def test_refuses_fewer_than_one_device_or_replica(devices, replicas) -> None:
    with pytest.raises(ValueError, match=r"^devices and replicas must be at least 1, not "):
        cost(100.0, 1.0, devices=devices, replicas=replicas)
    assert cost(100.0, 1.0, devices=1, replicas=1).fleet_devices == 1


def test_flat_closed_loop_rate() -> None:
    # 8 requests in flight, each 200 tokens over 4 s busy: 8 x 200 / 4 = 400 tokens/s
    assert flat_output_tokens_per_s(8, 200, 4.0) == pytest.approx(400.0, rel=1e-12)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^a request's busy time must be a positive number, not "):
            flat_output_tokens_per_s(8, 200, bad)


def test_cost_ratio_by_hand() -> None:
    # base: 1 device at 2 USD/s, 100 tokens/s -> 0.02 USD/token; change: 2 devices at 3 USD/s,
    # 400 tokens/s -> 0.015 USD/token; ratio 0.015 / 0.02 = 0.75
    assert cost_ratio(1, 100.0, 2.0, 2, 400.0, 3.0) == pytest.approx(0.75, rel=1e-12)
    # the same price cancels: 2 devices at twice the rate cost the same per token
    assert cost_ratio(1, 100.0, 7.0, 2, 200.0, 7.0) == pytest.approx(1.0, rel=1e-12)
    assert cost_ratio(4, 100.0, 1.0, 1, 50.0, 1.0) == pytest.approx(0.5, rel=1e-12)
