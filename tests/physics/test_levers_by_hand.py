"""physics/levers.py by hand: which levers are tried, on what deployment, with what words, found
by which search (issue 22: mutation testing against tests/physics).

The predicates below read one field of the analysis each (its devices, its concurrency, its proxy
delay, its accelerator's bandwidth), so the lever that meets is known from the predicate alone,
without any physics: e.g. ``a.concurrency <= 6`` met first at 6 by the bisection over 1..9.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from budgetlint.physics.analysis import analyse
from budgetlint.physics.levers import (
    DEFAULT_MAX_DEVICES,
    DEFAULT_SPEC_ACCEPTANCE,
    Lever,
    _rank,
    evaluate_levers,
    flat_tokens_per_s,
    with_cost_ratio,
)
from budgetlint.physics.shapes import Accelerator, Deployment, Edge, Efficiency, ModelShape, Workload

MODEL = ModelShape(total_params=1e9, layers=4, attention_heads=4, kv_heads=2, head_dim=64)
DRAFT = ModelShape(total_params=1e8, layers=2, attention_heads=4, kv_heads=2, head_dim=64)
ACC = Accelerator(bandwidth_bytes_per_s=1e12, memory_bytes=80e9, compute_flop_per_s={"bf16": 1e15})
DEP = Deployment(model=MODEL, accelerator=ACC)
WL = Workload(prompt_tokens=100, output_tokens=50)
NEVER = lambda a: False  # noqa: E731
SAME = lambda a: 0.0  # noqa: E731  (a stable sort keeps the order the levers are tried in)


def _names(levers: list[Lever]) -> list[str]:
    return [lv.name for lv in levers]


def test_defaults() -> None:
    assert DEFAULT_SPEC_ACCEPTANCE == 2.5 and DEFAULT_MAX_DEVICES == 64


def test_every_lever_tried_in_order_with_its_change_and_words() -> None:
    levers = evaluate_levers(DEP, WL, NEVER, shared_prefix_tokens=150, max_devices=4, effect=SAME)
    # 3 does not divide 4 heads: 2 and 4 tried, none meets, the most tried (4) is reported
    assert _names(levers) == ["weights-8bit", "weights-4bit", "kv-8bit", "prefix-cache", "speculative",
                              "more-devices"]
    w8, w4, kv, prefix, spec, more = levers
    assert (w8.description, w8.deployment.weight_bytes_per_param) == ("8-bit weights", 1.0)
    assert (w4.description, w4.deployment.weight_bytes_per_param) == ("4-bit weights", 0.5)
    assert (kv.description, kv.deployment.kv_bytes_per_elem) == ("8-bit KV cache", 1.0)
    # a shared prefix longer than the prompt caches the whole prompt
    assert prefix.description == "prefix cache hitting 100 of 100 prompt tokens"
    assert prefix.workload.cached_prompt_tokens == 100 and prefix.deployment == DEP
    assert spec.description == "speculative decoding accepting 2.5 tokens per pass (draft not charged)"
    assert spec.deployment.spec_accepted_tokens_per_pass == 2.5 and spec.deployment.draft is None
    assert spec.deployment.draft_lookahead is None
    assert more.description == "4 tensor-parallel devices (the most tried)" and more.deployment.devices == 4
    assert all(not lv.meets for lv in levers) and all(lv.cost_ratio is None for lv in levers)
    # each lever's analysis is of its own deployment and workload
    for lv in levers:
        assert lv.analysis == analyse(lv.deployment, lv.workload)
        assert lv.workload == (WL if lv.name != "prefix-cache" else replace(WL, cached_prompt_tokens=100))


def test_levers_that_change_nothing_are_left_out() -> None:
    # 8-bit weights already: only 4-bit; 4-bit weights and 8-bit KV: neither; the prefix already cached
    dep = replace(DEP, weight_bytes_per_param=1.0, kv_bytes_per_elem=1.0)
    wl = replace(WL, cached_prompt_tokens=30)
    assert _names(evaluate_levers(dep, wl, NEVER, shared_prefix_tokens=30, spec_acceptance=1.0,
                                  max_devices=1, effect=SAME)) == ["weights-4bit"]
    dep = replace(DEP, weight_bytes_per_param=0.5, kv_bytes_per_elem=1.0, spec_accepted_tokens_per_pass=2.5)
    assert evaluate_levers(dep, wl, NEVER, shared_prefix_tokens=20, max_devices=1) == []
    # a prefix of 31 > 30 cached is a lever
    assert _names(evaluate_levers(dep, wl, NEVER, shared_prefix_tokens=31, max_devices=1)) == ["prefix-cache"]


def test_speculative_lever_keeps_a_lookahead_that_can_deliver_it_and_charges_a_given_draft() -> None:
    def spec(dep: Deployment, **kw) -> Lever:
        (lv,) = [lv for lv in evaluate_levers(dep, WL, NEVER, max_devices=1, **kw) if lv.name == "speculative"]
        return lv

    # lookahead 1 delivers at most 2 tokens: 2.0 keeps it, 2.5 drops it (derived again: 2)
    assert spec(replace(DEP, draft_lookahead=1), spec_acceptance=2.0).deployment.draft_lookahead == 1
    assert spec(replace(DEP, draft_lookahead=1), spec_acceptance=2.5).deployment.draft_lookahead is None
    assert spec(replace(DEP, draft_lookahead=3)).deployment.draft_lookahead == 3
    lv = spec(DEP, draft=DRAFT)
    assert lv.deployment.draft == DRAFT
    assert lv.description == "speculative decoding accepting 2.5 tokens per pass"
    # the deployment's own draft is charged when none is given
    lv = spec(replace(DEP, draft=DRAFT), spec_acceptance=3.0)
    assert lv.deployment.draft == DRAFT and lv.description == "speculative decoding accepting 3 tokens per pass"
    # no lever at the acceptance the deployment already has
    dep = replace(DEP, spec_accepted_tokens_per_pass=2.5)
    assert "speculative" not in _names(evaluate_levers(dep, WL, NEVER, max_devices=1))


def test_more_devices_the_smallest_degree_that_meets() -> None:
    at_least_4 = lambda a: a.devices >= 4  # noqa: E731
    dep = replace(DEP, model=replace(MODEL, attention_heads=12))
    (more,) = [lv for lv in evaluate_levers(dep, WL, at_least_4, max_devices=12) if lv.name == "more-devices"]
    assert (more.description, more.deployment.devices, more.meets) == ("4 tensor-parallel devices", 4, True)
    # the limit itself is tried
    (more,) = [lv for lv in evaluate_levers(dep, WL, at_least_4, max_devices=4) if lv.name == "more-devices"]
    assert more.deployment.devices == 4 and more.meets
    # never met: the largest that divides the heads, below the limit (12 heads, limit 10: 6)
    (more,) = [lv for lv in evaluate_levers(dep, WL, NEVER, max_devices=10) if lv.name == "more-devices"]
    assert more.description == "6 tensor-parallel devices (the most tried)" and not more.meets
    # nothing above the current degree fits: no lever
    assert "more-devices" not in _names(evaluate_levers(replace(dep, devices=12), WL, NEVER, max_devices=16))


def test_more_devices_tries_up_to_the_limit_and_no_further() -> None:
    dep = replace(DEP, model=replace(MODEL, attention_heads=12), devices=4)
    at_least_6 = lambda a: a.devices >= 6  # noqa: E731
    # 5 does not divide 12 heads and 6 is over the limit of 5: no lever
    assert "more-devices" not in _names(evaluate_levers(dep, WL, at_least_6, max_devices=5))
    # only one degree above the current one fits (2 above 1, limit 2): it is the most tried
    (more,) = [lv for lv in evaluate_levers(replace(dep, devices=1), WL, NEVER, max_devices=2)
               if lv.name == "more-devices"]
    assert more.description == "2 tensor-parallel devices (the most tried)"


def test_more_devices_split_the_experts_over_tensor_x_data() -> None:
    moe = replace(MODEL, attention_heads=8, experts=8, experts_per_token=2)
    dep = replace(DEP, model=moe, devices=2, data_parallel=2, expert_parallel=4)
    # tensor 4 x data 2 = 8 ranks hold the 4 expert groups evenly (8 % 4 = 0); 3 does not divide 8 heads
    (more,) = [lv for lv in evaluate_levers(dep, WL, NEVER, max_devices=4) if lv.name == "more-devices"]
    assert more.deployment.devices == 4
    assert more.description == "tensor 4 x data 2 x pipeline 1 = 8 devices (the most tried)"


def test_more_devices_with_data_parallel_words_and_the_assumed_efficiency_at_n() -> None:
    seen = []

    def at_devices(n: int) -> tuple[Efficiency, float]:
        seen.append(n)
        return Efficiency(0.5, 0.25), 0.1

    dep = replace(DEP, data_parallel=2)
    levers = evaluate_levers(dep, WL, lambda a: a.devices >= 8, max_devices=4, at_devices=at_devices)
    (more,) = [lv for lv in levers if lv.name == "more-devices"]
    # tensor 2 x data 2 = 4 devices does not meet, tensor 4 x data 2 = 8 does (3 does not divide 4 heads)
    assert seen == [2, 4]
    assert more.description == "tensor 4 x data 2 x pipeline 1 = 8 devices"
    assert more.deployment.devices == 4 and more.deployment.collective_overhead == 0.1
    assert (more.analysis.efficiency_bandwidth, more.analysis.efficiency_compute) == (0.5, 0.25)
    assert more.analysis == analyse(more.deployment, WL, Efficiency(0.5, 0.25))
    # the most tried, when none meets, is judged at its own efficiency too
    (most,) = [lv for lv in evaluate_levers(dep, WL, NEVER, max_devices=4, at_devices=at_devices)
               if lv.name == "more-devices"]
    assert most.analysis.efficiency_bandwidth == 0.5 and most.deployment.collective_overhead == 0.1
    # the other levers keep the efficiency they were given
    assert all(lv.analysis.efficiency_bandwidth == 1.0 for lv in levers if lv.name != "more-devices")


def test_fewer_sequences_the_largest_concurrency_that_meets() -> None:
    wl = replace(WL, concurrency=10)

    def fewer(meets) -> Lever:
        (lv,) = [lv for lv in evaluate_levers(DEP, wl, meets, max_devices=1) if lv.name == "fewer-sequences"]
        return lv

    lv = fewer(lambda a: a.concurrency <= 6)
    assert (lv.description, lv.workload.concurrency, lv.meets) == ("6 concurrent sequences", 6, True)
    assert lv.analysis.concurrency == 6
    assert fewer(lambda a: True).workload.concurrency == 9
    assert fewer(lambda a: a.concurrency <= 1).workload.concurrency == 1
    lv = fewer(NEVER)
    assert (lv.description, lv.workload.concurrency, lv.meets) == ("1 concurrent sequence", 1, False)
    # one sequence already: no lever
    assert "fewer-sequences" not in _names(evaluate_levers(DEP, WL, NEVER, max_devices=1))
    # two sequences: only 1 is tried
    (lv,) = [lv for lv in evaluate_levers(DEP, replace(WL, concurrency=2), lambda a: True, max_devices=1)
             if lv.name == "fewer-sequences"]
    assert (lv.description, lv.workload.concurrency) == ("1 concurrent sequence", 1)  # one: singular (was "1 concurrent sequences")


def test_proxy_flush_the_largest_chunk_that_meets() -> None:
    edge = Edge(connection_setup_s=0.0, proxy_flush_tokens=8)

    def flush(meets, e: Edge = edge) -> Lever:
        (lv,) = [lv for lv in evaluate_levers(DEP, WL, meets, edge=e, max_devices=1) if lv.name == "proxy-flush"]
        return lv

    # a k-token buffer shows the first token (k - 1) / pace late: a delay of at most 2.5 token
    # times holds for k <= 3
    lv = flush(lambda a: a.proxy_delay_s <= 2.5 / a.pace_token_per_s)
    assert (lv.description, lv.meets) == ("a proxy flushing every 3 tokens", True)
    assert lv.analysis.proxy_delay_s == pytest.approx(2 / lv.analysis.pace_token_per_s)
    assert lv.analysis == analyse(DEP, WL, edge=Edge(0.0, 3.0))
    assert (lv.deployment, lv.workload) == (DEP, WL)
    assert flush(lambda a: True).description == "a proxy flushing every 7 tokens"
    lv = flush(lambda a: a.proxy_delay_s == 0)
    assert (lv.description, lv.meets) == ("a proxy flushing every token", True)
    lv = flush(NEVER)
    assert (lv.description, lv.meets, lv.analysis.proxy_delay_s) == ("a proxy flushing every token", False, 0.0)
    assert lv.deployment == DEP and lv.workload == WL
    # the fallback is analysed at the same edge, flushing every token: its connection setup kept,
    # and judged by the caller's predicate on that analysis
    lv = flush(lambda a: a.proxy_delay_s < 0, Edge(0.5, 8.0))
    assert lv.analysis == analyse(DEP, WL, edge=Edge(0.5, 1.0)) and lv.analysis.connection_setup_s == 0.5
    assert not lv.meets
    # a 2-token buffer: only 1 is tried
    assert flush(lambda a: True, Edge(0.0, 2.0)).description == "a proxy flushing every token"
    # a one-token buffer (or none) has nothing to fix
    for tokens in (1.0, 0.0):
        assert "proxy-flush" not in _names(evaluate_levers(DEP, WL, NEVER, edge=Edge(0.0, tokens), max_devices=1))


def test_faster_accelerator_the_least_capable_that_meets() -> None:
    b = Accelerator(bandwidth_bytes_per_s=2e12, memory_bytes=80e9, compute_flop_per_s={"bf16": 1e15})
    a = Accelerator(bandwidth_bytes_per_s=2e12, compute_flop_per_s={"bf16": 1e15})  # memory unknown
    c = Accelerator(bandwidth_bytes_per_s=3e12, memory_bytes=40e9, compute_flop_per_s={"bf16": 1e15})
    fp8_only = Accelerator(bandwidth_bytes_per_s=1.5e12, compute_flop_per_s={"fp8": 1e15})
    catalog = [("c", c), ("b", b), ("same", ACC), ("a", a), ("fp8-only", fp8_only)]
    fast = lambda an: an.bandwidth_peak_bytes_per_s >= 2e12  # noqa: E731

    def chosen(meets, accs=catalog):
        return [lv for lv in evaluate_levers(DEP, WL, meets, max_devices=1, accelerators=accs)
                if lv.name == "faster-accelerator"]

    # at 2e12 B/s unknown memory ranks first: "a"; the fp8-only device cannot run bf16 and is skipped
    (lv,) = chosen(fast)
    assert (lv.description, lv.deployment.accelerator, lv.meets) == ("a", a, True)
    (lv,) = chosen(lambda an: an.bandwidth_peak_bytes_per_s >= 3e12)
    assert lv.description == "c"
    # the current accelerator is never its own lever, and nothing that meets: no lever
    assert chosen(lambda an: an.bandwidth_peak_bytes_per_s == 1e12) == []
    assert chosen(NEVER) == []
    # same bandwidth and memory: by name
    twin = Accelerator(bandwidth_bytes_per_s=2e12, memory_bytes=80e9, compute_flop_per_s={"bf16": 1e15})
    (lv,) = chosen(fast, [("y", b), ("x", twin)])
    assert lv.description == "x"
    # at one bandwidth, less memory first
    big = Accelerator(bandwidth_bytes_per_s=2e12, memory_bytes=160e9, compute_flop_per_s={"bf16": 1e15})
    (lv,) = chosen(fast, [("big", big), ("b", b)])
    assert lv.description == "b"
    # by the rank, not by the name: "z" (2e12 B/s) before "a" (3e12 B/s)
    (lv,) = chosen(fast, [("a", c), ("z", b)])
    assert lv.description == "z"
    # an accelerator the analysis refuses (1e-300 B/s and 1e-300 FLOP/s: an infinite time less an
    # infinite one, NaN, met where a count is needed) is passed over, and the search goes on
    broken = Accelerator(bandwidth_bytes_per_s=1e-300, memory_bytes=80e9, compute_flop_per_s={"bf16": 1e-300})
    with pytest.raises(ValueError):
        analyse(replace(DEP, accelerator=broken), WL)
    (lv,) = chosen(fast, [("broken", broken), ("b", b)])
    assert lv.description == "b"
    assert _rank("a", a) == (2e12, False, 0.0, "a") and _rank("b", b) == (2e12, True, 80e9, "b")


def test_levers_that_meet_come_first_then_by_effect() -> None:
    wl = replace(WL, concurrency=4)
    meets = lambda a: a.concurrency <= 2  # noqa: E731  (only fewer-sequences changes the concurrency)
    effect = lambda a: -a.weight_bytes  # noqa: E731  (more weight bytes first, among those that do not meet)
    names = _names(evaluate_levers(DEP, wl, meets, max_devices=1, effect=effect))
    # fewer-sequences meets; the others by weight bytes, largest first: kv-8bit and speculative
    # keep 2 bytes per parameter (stable: tried in that order), then 1, then 0.5
    assert names == ["fewer-sequences", "kv-8bit", "speculative", "weights-8bit", "weights-4bit"]
    # by default by E2E time, shortest first
    levers = evaluate_levers(DEP, WL, NEVER, max_devices=1)
    assert [lv.analysis.e2e_s for lv in levers] == sorted(lv.analysis.e2e_s for lv in levers)


def test_flat_rate_and_cost_ratio() -> None:
    base = analyse(DEP, replace(WL, concurrency=4))
    # 4 sequences of 50 tokens each over one request's prefill + decode time
    assert flat_tokens_per_s(base) == pytest.approx(4 * 50 / (base.prefill_s + base.decode_s), rel=1e-12)
    lv = Lever("more-devices", "2", analyse(replace(DEP, devices=2), replace(WL, concurrency=4)), True,
               replace(DEP, devices=2), replace(WL, concurrency=4))
    assert with_cost_ratio(lv, base, 1.0, None) is lv
    priced = with_cost_ratio(lv, base, 2.0, 3.0)
    expected = (3.0 * 2 / flat_tokens_per_s(lv.analysis)) / (2.0 * 1 / flat_tokens_per_s(base))
    assert priced.cost_ratio == pytest.approx(expected, rel=1e-12)
    assert replace(priced, cost_ratio=None) == lv
    # a zero base price cannot be divided by: the lever unchanged
    assert with_cost_ratio(lv, base, 0.0, 3.0) is lv


def test_every_lever_is_analysed_at_the_client_edge_and_queue_it_was_given() -> None:
    edge = Edge(connection_setup_s=0.5, proxy_flush_tokens=0.0)
    levers = evaluate_levers(DEP, replace(WL, concurrency=2), NEVER, edge=edge, queue_s=0.25, max_devices=2,
                             accelerators=[("fast", replace(ACC, bandwidth_bytes_per_s=2e12))],
                             shared_prefix_tokens=50)
    assert {lv.name for lv in levers} == {"weights-8bit", "weights-4bit", "kv-8bit", "prefix-cache", "speculative",
                                          "more-devices", "fewer-sequences"}
    for lv in levers:
        assert (lv.analysis.connection_setup_s, lv.analysis.queue_s) == (0.5, 0.25)
        assert lv.analysis.ttft_s == pytest.approx(0.25 + lv.analysis.prefill_s + 0.5, rel=1e-12)


def test_cost_ratio_with_the_tokens_fixed_by_the_arrivals() -> None:
    base = analyse(DEP, WL)
    lv = Lever("more-devices", "2", analyse(replace(DEP, devices=2), WL), True, replace(DEP, devices=2), WL)
    # the same tokens either way: 2 devices at 3 USD/s over 1 device at 2 USD/s = 3
    fixed = with_cost_ratio(lv, base, 2.0, 3.0, tokens_fixed=True)
    assert fixed.cost_ratio == pytest.approx(3.0, rel=1e-12) and fixed.cost_basis == "declared traffic"
    assert with_cost_ratio(lv, base, 2.0, 3.0).cost_basis == "flat estimate" and lv.cost_basis == "flat estimate"
