"""physics/disaggregated.py worked by hand: the pools' refusals, the prompt's cache, the combined
flat estimate field by field, and the two pools simulated with stated linear laws (every time a
sum of the laws' terms, computed in the comments)."""

from __future__ import annotations

import math

import pytest

from budgetlint.physics import Accelerator, Deployment, Edge, ModelShape, Workload
from budgetlint.physics.disaggregated import (
    Pools, PoolsRun, _Replay, analyse_pools, kv_transfer_s, prefill_replicas_needed, prefill_utilisation,
    prompt_kv_bytes, simulate_pools, splits,
)
from budgetlint.physics.serving_sim import Scheduler, Traffic
from budgetlint.physics.step_cost import LinearStepCost
from budgetlint.physics.traffic import Fixed

H100 = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})
H200 = Accelerator(memory_bytes=141e9, bandwidth_bytes_per_s=4.8e12, compute_flop_per_s={"bf16": 989e12})
BW_ONLY = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12)
# K and V x 80 layers x 8 heads x 128 x 2 B = 327,680 B a token
LLAMA70 = ModelShape(total_params=70e9, layers=80, hidden_size=8192, attention_heads=64, kv_heads=8, head_dim=128)
# a draft: K and V x 16 layers x 8 heads x 64 x 2 B = 32,768 B a token
DRAFT = ModelShape(total_params=1e9, layers=16, hidden_size=2048, attention_heads=32, kv_heads=8, head_dim=64)
# MLA: 10 layers x (512 + 64) x 2 B = 11,520 B a token
MLA = ModelShape(total_params=10e9, layers=10, hidden_size=4096, attention_heads=32, head_dim=128,
                 attention="mla", kv_lora_rank=512, qk_rope_head_dim=64)


def pools(**kw: object) -> Pools:
    base = dict(prefill=Deployment(model=LLAMA70, accelerator=H100, devices=8),
                decode=Deployment(model=LLAMA70, accelerator=H200, devices=4),
                link_bandwidth_bytes_per_s=50e9, link_latency_s=1e-3)
    base.update(kw)
    return Pools(**base)  # type: ignore[arg-type]


# ------------------------------------------------------------------ Pools
def test_pools_defaults() -> None:
    p = Pools(prefill=Deployment(model=LLAMA70, accelerator=H100, devices=4),
              decode=Deployment(model=LLAMA70, accelerator=H200, devices=4))
    assert (p.prefill_replicas, p.decode_replicas) == (1, 1)
    assert (p.link_bandwidth_bytes_per_s, p.link_latency_s) == (50e9, 0.0)


@pytest.mark.parametrize("name", ["prefill_replicas", "decode_replicas"])
@pytest.mark.parametrize("bad", [0, -1, 1.0, True, "2"])
def test_pools_refuse_a_replica_count_that_is_not_a_positive_integer(name: str, bad: object) -> None:
    with pytest.raises(ValueError) as e:
        pools(**{name: bad})
    assert str(e.value) == f"{name} must be an integer >= 1, got {bad!r}"


def test_pools_accept_one_replica_and_many() -> None:
    assert pools(prefill_replicas=1, decode_replicas=7).decode_replicas == 7


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan, "50e9"])
def test_pools_refuse_a_link_bandwidth_that_is_not_positive_and_finite(bad: object) -> None:
    with pytest.raises(ValueError) as e:
        pools(link_bandwidth_bytes_per_s=bad)
    assert str(e.value) == f"the KV link's bandwidth must be positive and finite, got {bad!r}"


@pytest.mark.parametrize("bad", [-1e-3, math.inf, math.nan, "1ms"])
def test_pools_refuse_a_link_latency_that_is_negative_or_not_finite(bad: object) -> None:
    with pytest.raises(ValueError) as e:
        pools(link_latency_s=bad)
    assert str(e.value) == f"the KV link's latency must be non-negative and finite, got {bad!r}"


def test_pools_accept_an_integer_bandwidth_and_zero_latency() -> None:
    p = pools(link_bandwidth_bytes_per_s=10**9, link_latency_s=0)
    assert p.link_bandwidth_bytes_per_s == 10**9 and p.link_latency_s == 0


def test_pools_refuse_two_models() -> None:
    with pytest.raises(ValueError) as e:
        pools(decode=Deployment(model=DRAFT, accelerator=H200))
    assert str(e.value) == "the prefill and decode pools must serve one model"


# ------------------------------------------------------------------ the formulas
def test_transfer_utilisation_and_replicas_by_hand() -> None:
    assert kv_transfer_s(1e9, 50e9) == pytest.approx(0.02, rel=1e-12)  # no latency by default
    assert kv_transfer_s(1e9, 50e9, 2e-3) == pytest.approx(0.022, rel=1e-12)
    # 8 prompts a second x 0.30 s over 2 replicas: 1.2 busy each
    assert prefill_utilisation(8.0, 0.30, 2) == pytest.approx(1.2, rel=1e-12)
    # below 50 %: 8 x 0.25 / 0.5 = 4.0 -> 5 replicas (4 would be exactly 50 %); below 80 %: 2.5 -> 3
    assert prefill_replicas_needed(8.0, 0.25, 0.5) == 5
    assert prefill_replicas_needed(8.0, 0.25, 0.8) == 3
    assert prefill_replicas_needed(8.0, 0.1) == 1  # 0.8 busy: one replica
    assert prefill_replicas_needed(0.0, 0.1) == 1  # never fewer than one


def test_prompt_kv_bytes_by_hand() -> None:
    assert prompt_kv_bytes(pools(), 1000) == pytest.approx(327680 * 1000, rel=1e-12)
    # a draft's cache moves too: 1000 x (327,680 + 32,768)
    with_draft = Deployment(model=LLAMA70, accelerator=H200, devices=4, draft=DRAFT, draft_lookahead=3)
    assert prompt_kv_bytes(pools(decode=with_draft), 1000) == pytest.approx(360448 * 1000, rel=1e-12)
    # an MLA latent, counted once however many tensor ranks hold it: 1000 x 11,520
    mla = pools(prefill=Deployment(model=MLA, accelerator=H100, devices=4),
                decode=Deployment(model=MLA, accelerator=H200, devices=4))
    assert prompt_kv_bytes(mla, 1000) == pytest.approx(11520 * 1000, rel=1e-12)


def test_the_combined_estimate_field_by_field() -> None:
    """A 4,096-token prompt prefilled on 8 H100s, decoded on 4 H200s."""
    wl = Workload(prompt_tokens=4096, output_tokens=200, concurrency=16)
    a = analyse_pools(pools(), wl, queue_s=0.05, edge=Edge(connection_setup_s=0.02))
    linear = 2 * 70e9 * 4096
    attention = 4 * 64 * 128 * 80 * (4096 * 4097 / 2)
    assert a.prefill.concurrency == 1 and a.decode.concurrency == 16
    assert a.prefill.devices == 8 and a.decode.devices == 4
    assert a.combined.prefill_linear_flop == pytest.approx(linear, rel=1e-9)
    assert a.combined.prefill_attention_flop == pytest.approx(attention, rel=1e-9)
    assert a.combined.prefill_flop == pytest.approx(linear + attention, rel=1e-9)
    # compute on the prefill pool's 8 devices; its weights read at 3.35 TB/s (140 GB / 8)
    assert a.combined.prefill_compute_s == pytest.approx((linear + attention) / (8 * 989e12), rel=1e-9)
    assert a.combined.prefill_weight_read_s == pytest.approx(140e9 / 8 / 3.35e12, rel=1e-9)
    assert a.combined.prefill_binding == a.prefill.prefill_binding == "compute"
    assert a.combined.draft_prefill_s == 0.0 and a.combined.prefill_alltoall_s == 0.0
    kv = 327680 * 4096
    assert a.kv_bytes == pytest.approx(kv, rel=1e-12)
    assert a.kv_transfer_s == pytest.approx(kv / 50e9 + 1e-3, rel=1e-12)
    first = (linear + attention) / (8 * 989e12) + kv / 50e9 + 1e-3
    assert a.combined.prefill_s == pytest.approx(first, rel=1e-9)
    # TTFT and E2E: the decode pool's with its own prefill replaced by the prefill pool's + transfer;
    # the queue and the connection set-up added once
    assert a.combined.ttft_s == pytest.approx(0.05 + 0.02 + first, rel=1e-6)
    assert a.combined.e2e_s == pytest.approx(0.05 + 0.02 + first + a.decode.decode_after_first_s, rel=1e-9)
    assert a.prefill.ttft_s == pytest.approx(0.05 + 0.02 + a.prefill.prefill_s, rel=1e-6)
    assert a.decode.ttft_s == pytest.approx(0.05 + 0.02 + a.decode.prefill_s, rel=1e-6)
    assert a.combined.compute_known is True
    # the decode pool's: pace, memory
    assert a.combined.pace_token_per_s == a.decode.pace_token_per_s
    assert a.combined.memory_kv_bytes_per_device == a.decode.memory_kv_bytes_per_device


def test_a_bandwidth_only_pool_makes_compute_unknown() -> None:
    wl = Workload(prompt_tokens=1024, output_tokens=100, concurrency=4)
    pf = analyse_pools(pools(prefill=Deployment(model=LLAMA70, accelerator=BW_ONLY, devices=8)), wl)
    assert pf.prefill.compute_known is False and pf.combined.compute_known is False
    dec = analyse_pools(pools(decode=Deployment(model=LLAMA70, accelerator=BW_ONLY, devices=4)), wl)
    assert dec.decode.compute_known is False and dec.combined.compute_known is False


# ------------------------------------------------------------------ the simulation, with linear laws
PREFILL_LAW = LinearStepCost(0.01, prefill_fixed_s=0.05, prefill_per_token_s=1e-4)  # a 1000-token prompt: 0.15 s
DECODE_LAW = LinearStepCost(0.02, prefill_fixed_s=0.004)  # the recomputed token 4 ms; each decode step 20 ms
ONE_A_SECOND = Traffic(prompt=Fixed(1000), output=Fixed(11), arrival_rate_per_s=1.0, arrival="constant")
# the prompt's cache: 1000 x 327,680 B = 327.68 MB over 50 GB/s = 6.5536 ms, + 1 ms of latency
MOVE = 327.68e6 / 50e9 + 1e-3
TTFT = 0.15 + MOVE  # the prefill, the transfer, and no wait on the decode pool
DECODE = 0.004 + 9 * 0.02  # the recomputed token gives the 2nd token, 9 steps the other 9 of 10
E2E = TTFT + DECODE


def test_two_pools_simulated_one_request_at_a_time() -> None:
    """One 1000-token prompt a second, 11 reply tokens: no request waits anywhere. The decode pool
    warms up on 3 of its 6 (a tenth, at least 50, at most half), so requests 3, 4 and 5 are measured."""
    r = simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, ONE_A_SECOND, Scheduler(), Scheduler(), requests=6)
    assert r.rejected == 0
    assert r.ttft_s == pytest.approx((TTFT,) * 3, rel=1e-9)
    assert r.e2e_s == pytest.approx((E2E,) * 3, rel=1e-9)
    assert r.tpot_s == pytest.approx((DECODE / 11,) * 3, rel=1e-9)  # over all 11 tokens
    assert r.prefill_queue_s == (0.0,) * 3 and r.decode_queue_s == (0.0,) * 3
    assert r.percentile("ttft_s", 50) == pytest.approx(TTFT, rel=1e-9)
    assert r.percentile("e2e_s", 95) == pytest.approx(E2E, rel=1e-9)
    # the prefill pool measures from the first arrival (no warm-up): window 0..5 s holds five
    # 0.15 s prefills (the sixth starts at its end): 0.75 / 5 = 15 % busy
    assert (r.prefill_raw.window_start_s, r.prefill_raw.window_end_s) == (0.0, 5.0)
    assert r.prefill_busy == pytest.approx(0.15, rel=1e-9)
    # the decode pool: window 3..5 s (its arrivals counted from its first), two requests of 0.184 s
    assert (r.decode_raw.window_start_s, r.decode_raw.window_end_s) == (3.0, 5.0)
    assert r.decode_busy == pytest.approx(2 * DECODE / 2, rel=1e-9)
    c = r.combined
    assert (c.window_start_s, c.window_end_s, c.replicas) == (3.0, 5.0, 1)
    assert c.busy_s == pytest.approx(2 * DECODE, rel=1e-9)
    # in the system: the decode pool's 2 x 0.184 + the prefill pool's mean occupancy (0.75 / 5 s)
    # carried over the decode window's 2 s
    assert c.in_system_area == pytest.approx(2 * DECODE + 0.75 / 5 * 2, rel=1e-9)
    assert (c.arrivals_in_window, c.completions_in_window, c.output_tokens_in_window) == (3, 2, 20)
    assert c.batch_time == r.decode_raw.batch_time
    assert [x.index for x in c.records] == [3, 4, 5]
    for x in c.records:
        assert (x.arrival_s, x.queue_s, x.prompt_tokens, x.output_tokens, x.preemptions, x.rejected) == (
            float(x.index), 0.0, 1000, 11, 0, False)
        assert (x.replica, x.cached_tokens) == (0, 0)
        assert (x.ttft_s, x.e2e_s, x.tpot_s) == pytest.approx((TTFT, E2E, DECODE / 11), rel=1e-9)


def test_a_prompt_the_prefill_pool_cannot_hold_is_a_rejection() -> None:
    """The second prompt (5000 tokens) does not fit the prefill pool's 2000-token cache: rejected
    there, recorded with its own lengths and NaN times, among the measured requests."""
    traffic = Traffic(prompt=_Replay((1000, 5000, 1000, 1000, 1000, 1000)), output=Fixed(11),
                      arrival_rate_per_s=1.0, arrival="constant")
    r = simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, traffic, Scheduler(kv_capacity_tokens=2000), Scheduler(),
                       requests=6)
    assert r.rejected == 1
    assert r.ttft_s == pytest.approx((TTFT,) * 3, rel=1e-9)
    first = r.combined.records[0]
    assert (first.index, first.arrival_s, first.prompt_tokens, first.output_tokens, first.rejected) == (
        1, 1.0, 5000, 11, True)
    assert all(math.isnan(v) for v in (first.queue_s, first.ttft_s, first.e2e_s, first.tpot_s))
    assert [x.index for x in r.combined.records] == [1, 3, 4, 5]


def test_a_prompt_the_decode_pool_cannot_hold_is_a_rejection() -> None:
    r = simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, ONE_A_SECOND, Scheduler(),
                       Scheduler(kv_capacity_tokens=500), requests=6)
    # the decode pool's measured three, rejected: no times, NaN records
    assert r.rejected == 3
    assert r.ttft_s == () and r.e2e_s == () and r.tpot_s == ()
    assert [(x.index, x.rejected, x.prompt_tokens, x.output_tokens) for x in r.combined.records] == [
        (3, True, 1000, 11), (4, True, 1000, 11), (5, True, 1000, 11)]
    assert all(math.isnan(x.ttft_s) for x in r.combined.records)


def test_too_few_requests_leaving_the_prefill_pool() -> None:
    with pytest.raises(ValueError) as e:
        simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, ONE_A_SECOND, Scheduler(kv_capacity_tokens=500),
                       Scheduler(), requests=6)
    assert str(e.value) == "too few requests left the prefill pool to simulate the decode pool"


def test_a_replay_gives_its_lengths_in_order() -> None:
    r = _Replay((3, 1, 2))
    assert [r.sample(None), r.sample(None), r.sample(None)] == [3, 1, 2]  # type: ignore[arg-type]
    assert r.mean == 2.0
    assert _Replay(()).mean == 0.0


def test_pools_run_percentile_interpolates() -> None:
    run = PoolsRun(ttft_s=(0.3, 0.1, 0.2), e2e_s=(1.0, 2.0), tpot_s=(), prefill_queue_s=(), decode_queue_s=(),
                   prefill_busy=0.0, decode_busy=0.0, rejected=0)
    assert run.percentile("ttft_s", 50) == pytest.approx(0.2)
    assert run.percentile("ttft_s", 75) == pytest.approx(0.25)  # between 0.2 and 0.3
    assert run.percentile("e2e_s", 100) == pytest.approx(2.0)
    assert run.combined is None and run.prefill_raw is None and run.decode_raw is None


def test_splits_simulated_by_hand() -> None:
    """Every split of 3 replicas meets TTFT <= 0.2 s and E2E <= 0.35 s (one request a second: no
    queue, TTFT 0.1575 s, E2E 0.3416 s); an E2E promise of 0.3 s is met by none."""
    def costs() -> tuple[LinearStepCost, LinearStepCost]:
        return PREFILL_LAW, DECODE_LAW

    seen = []

    def scheds(p: int, d: int) -> tuple[Scheduler, Scheduler]:
        seen.append((p, d))
        return Scheduler(replicas=p), Scheduler(replicas=d)

    out = splits(pools(), costs, ONE_A_SECOND, scheds, [("ttft_s", 0.2), ("e2e_s", 0.35)], 50, total=3,
                 requests=6)
    assert seen == [(1, 2), (2, 1)]
    assert [(s.prefill_replicas, s.decode_replicas, s.meets) for s in out] == [(1, 2, True), (2, 1, True)]
    for s in out:
        assert [m for m, _ in s.values] == ["ttft_s", "e2e_s"]
        assert [v for _, v in s.values] == pytest.approx([TTFT, E2E], rel=1e-9)
    # just at the promise is met; below it not
    at = splits(pools(), costs, ONE_A_SECOND, scheds, [("e2e_s", E2E + 1e-12)], 50, total=2, requests=6)
    assert [s.meets for s in at] == [True]
    tight = splits(pools(), costs, ONE_A_SECOND, scheds, [("ttft_s", 0.2), ("e2e_s", 0.3)], 50, total=3,
                   requests=6)
    assert [s.meets for s in tight] == [False, False]
    # the pools' own replicas by default (1 + 2: P = 1, 2); given counts kept in range, once, in order
    seen.clear()
    dflt = splits(pools(prefill_replicas=1, decode_replicas=2), costs, ONE_A_SECOND, scheds,
                  [("ttft_s", 0.2)], 50, requests=6)
    assert [(s.prefill_replicas, s.decode_replicas) for s in dflt] == [(1, 2), (2, 1)]
    seen.clear()
    some = splits(pools(), costs, ONE_A_SECOND, scheds, [("ttft_s", 0.2)], 50, total=4, requests=6,
                  prefill_counts=[5, 3, 0, 3, 4, 1])
    assert seen == [(1, 3), (3, 1)]
    assert [(s.prefill_replicas, s.decode_replicas) for s in some] == [(1, 3), (3, 1)]


def test_a_split_that_rejects_does_not_meet_and_one_that_cannot_run_is_left_out() -> None:
    def costs() -> tuple[LinearStepCost, LinearStepCost]:
        return PREFILL_LAW, DECODE_LAW

    # the decode pool's cache holds no prompt: rejections, so no split meets, whatever the times
    rej = splits(pools(), costs, ONE_A_SECOND, lambda p, d: (Scheduler(replicas=p),
                                                             Scheduler(replicas=d, kv_capacity_tokens=500)),
                 [], 50, total=2, requests=6)
    assert [s.meets for s in rej] == [False]
    # the prefill pool's cache holds no prompt: simulate_pools refuses, the split is left out
    none = splits(pools(), costs, ONE_A_SECOND, lambda p, d: (Scheduler(replicas=p, kv_capacity_tokens=500),
                                                              Scheduler(replicas=d)),
                  [("ttft_s", 0.2)], 50, total=3, requests=6)
    assert none == ()


# ------------------------------------------------------------------ queues, replicas, lengths, seeds
FAST_PREFILL = LinearStepCost(0.01, prefill_fixed_s=0.01, prefill_per_token_s=4e-5)  # 1000 tokens: 0.05 s


def test_a_queue_on_the_decode_pool_is_in_the_ttft() -> None:
    """Ten prompts a second (0.1 s apart), a 0.05 s prefill each (no prefill queue), a decode pool
    of one sequence at a time serving 0.184 s each: request k waits k x (0.184 - 0.1) = 0.084 k s
    there. TTFT = prefill + transfer + that wait; E2E = TTFT + 0.184."""
    traffic = Traffic(prompt=Fixed(1000), output=Fixed(11), arrival_rate_per_s=10.0, arrival="constant")
    r = simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, traffic, Scheduler(), Scheduler(max_num_seqs=1),
                       requests=6)
    waits = [0.084 * k for k in (3, 4, 5)]
    assert r.decode_queue_s == pytest.approx(waits, rel=1e-9)
    assert r.prefill_queue_s == (0.0,) * 3
    assert r.ttft_s == pytest.approx([0.05 + MOVE + w for w in waits], rel=1e-9)
    assert r.e2e_s == pytest.approx([0.05 + MOVE + w + DECODE for w in waits], rel=1e-9)
    assert [x.queue_s for x in r.combined.records] == pytest.approx(waits, rel=1e-9)  # both pools' waits
    assert [x.tpot_s for x in r.combined.records] == pytest.approx([DECODE / 11] * 3, rel=1e-9)
    # the prefill pool: window 0..0.5 s, five 0.05 s prefills: 50 % busy; the decode pool's window
    # 0.3..0.5 s is all busy
    assert r.prefill_busy == pytest.approx(0.5, rel=1e-9)
    assert r.decode_busy == pytest.approx(1.0, rel=1e-9)
    # in the system: the decode pool's own area + the prefill pool's 0.25 / 0.5 s over 0.2 s
    assert r.combined.in_system_area == pytest.approx(r.decode_raw.in_system_area + 0.25 / 0.5 * 0.2, rel=1e-9)


def test_a_two_token_reply_and_a_one_token_reply() -> None:
    """Two tokens: the prefill pool makes the first, the decode pool's recomputed token the second,
    no decode step: E2E = TTFT + 0.004. One token: the decode pool still emits one (at least 1)."""
    for out in (2, 1):
        traffic = Traffic(prompt=Fixed(1000), output=Fixed(out), arrival_rate_per_s=1.0, arrival="constant")
        r = simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, traffic, Scheduler(), Scheduler(), requests=6)
        assert r.e2e_s == pytest.approx([0.05 + MOVE + 0.004] * 3, rel=1e-9)
        assert [x.output_tokens for x in r.combined.records] == [out] * 3
        assert [x.tpot_s for x in r.combined.records] == pytest.approx([0.004 / out] * 3, rel=1e-9)


def test_busy_shares_are_per_replica() -> None:
    """Two decode replicas: two measured requests of 0.004 s in a 2 s window: 0.008 / (2 s x 2)."""
    traffic = Traffic(prompt=Fixed(1000), output=Fixed(2), arrival_rate_per_s=1.0, arrival="constant")
    r = simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, traffic, Scheduler(replicas=2), Scheduler(replicas=2),
                       requests=6)
    assert r.decode_busy == pytest.approx(0.008 / 4, rel=1e-9)
    # the prefill pool: five 0.05 s prefills in its 5 s window over 2 replicas
    assert r.prefill_busy == pytest.approx(0.25 / 10, rel=1e-9)
    assert r.combined.replicas == 2


def test_the_lengths_and_arrivals_are_the_seeds() -> None:
    """The lengths both pools see are drawn from ``random.Random("budgetlint:<seed>:lengths")``,
    a prompt then a reply per request; the prefill pool's arrivals are the seed's Poisson stream
    (those of any one-pool run at the seed)."""
    from budgetlint.physics.serving_sim import run
    from budgetlint.physics.traffic import Uniform
    import random

    traffic = Traffic(prompt=Uniform(500, 1500), output=Uniform(2, 20), arrival_rate_per_s=0.5)
    for seed, kw in ((0, {}), (3, {"seed": 3})):
        rng = random.Random(f"budgetlint:{seed}:lengths")
        want = [(rng.randint(500, 1500), rng.randint(2, 20)) for _ in range(6)]
        r = simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, traffic, Scheduler(), Scheduler(), requests=6, **kw)
        assert [x.prompt_tokens for x in r.prefill_raw.records] == [p for p, _ in want]
        assert [x.prompt_tokens for x in r.combined.records] == [want[x.index][0] for x in r.combined.records]
        assert [x.output_tokens for x in r.combined.records] == [want[x.index][1] for x in r.combined.records]
        # the decode pool makes all but the first token
        assert sorted(x.output_tokens for x in r.decode_raw.records) == sorted(
            want[x.index][1] - 1 for x in r.combined.records)
        one_pool = run(FAST_PREFILL, Traffic(prompt=Fixed(1), output=Fixed(1), arrival_rate_per_s=0.5), Scheduler(),
                       requests=6, warmup=0, seed=seed)
        assert [x.arrival_s for x in r.prefill_raw.records] == [x.arrival_s for x in one_pool.records]


def test_the_work_allowance_reaches_both_pools() -> None:
    """A small run calls the allowance once at the end of each pool's simulation."""
    calls: list[int] = []

    def allowance(events: int) -> bool:
        calls.append(events)
        return True

    simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, ONE_A_SECOND, Scheduler(), Scheduler(), requests=6,
                   allowance=allowance)
    assert len(calls) == 2
    calls.clear()
    splits(pools(), lambda: (PREFILL_LAW, DECODE_LAW), ONE_A_SECOND,
           lambda p, d: (Scheduler(replicas=p), Scheduler(replicas=d)), [("ttft_s", 1.0)], 50, total=2,
           requests=6, allowance=allowance)
    assert len(calls) == 2


def test_exactly_three_requests_leaving_the_prefill_pool_are_enough() -> None:
    traffic = Traffic(prompt=_Replay((1000, 5000, 5000, 5000, 1000, 1000)), output=Fixed(11),
                      arrival_rate_per_s=1.0, arrival="constant")
    r = simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, traffic, Scheduler(kv_capacity_tokens=2000), Scheduler(),
                       requests=6)
    assert r.rejected == 3
    rejected = [x for x in r.combined.records if x.rejected]
    assert [(x.index, x.replica, x.cached_tokens, x.preemptions) for x in rejected] == [
        (1, 0, 0, 0), (2, 0, 0, 0), (3, 0, 0, 0)]


def test_decode_pool_rejections_keep_the_request_s_fields() -> None:
    traffic = Traffic(prompt=Fixed(1000), output=Fixed(11), arrival_rate_per_s=1.0, arrival="constant")
    r = simulate_pools(pools(), PREFILL_LAW, DECODE_LAW, traffic, Scheduler(), Scheduler(kv_capacity_tokens=500),
                       requests=6)
    for x in r.combined.records:
        assert (x.replica, x.arrival_s, x.cached_tokens, x.preemptions) == (0, float(x.index), 0, 0)
        assert all(isinstance(v, float) and math.isnan(v) for v in (x.queue_s, x.ttft_s, x.e2e_s, x.tpot_s))


def test_splits_hand_simulate_pools_their_arguments() -> None:
    """What ``splits`` reports for a split is what ``simulate_pools`` gives for it at the same
    requests and seed (400 and 0 by default); a split that cannot run does not stop the others."""
    traffic = Traffic(prompt=Uniform_(), output=Fixed(11), arrival_rate_per_s=4.0)

    def scheds(p: int, d: int) -> tuple[Scheduler, Scheduler]:
        return Scheduler(replicas=p), Scheduler(replicas=d)

    def direct(p: int, d: int, **kw: object) -> float:
        return simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, traffic, *scheds(p, d), **kw).percentile("e2e_s", 90)

    got = splits(pools(), lambda: (FAST_PREFILL, DECODE_LAW), traffic, scheds, [("e2e_s", 10.0)], 90, total=3,
                 requests=40, seed=5)
    assert [s.values[0][1] for s in got] == [direct(1, 2, requests=40, seed=5), direct(2, 1, requests=40, seed=5)]
    dflt = splits(pools(), lambda: (FAST_PREFILL, DECODE_LAW), traffic, scheds, [("e2e_s", 10.0)], 90, total=2)
    assert dflt[0].values[0][1] == direct(1, 1, requests=400, seed=0)
    # a promise exactly at the simulated figure is met
    at = splits(pools(), lambda: (FAST_PREFILL, DECODE_LAW), traffic, scheds, [("e2e_s", got[0].values[0][1])], 90,
                total=3, requests=40, seed=5)
    assert at[0].meets is True
    # the first split's prefill pool holds no prompt: left out, the second still simulated
    odd = splits(pools(), lambda: (FAST_PREFILL, DECODE_LAW), traffic,
                 lambda p, d: (Scheduler(replicas=p, kv_capacity_tokens=500 if p == 1 else math.inf),
                               Scheduler(replicas=d)), [("e2e_s", 10.0)], 90, total=3, requests=40, seed=5)
    assert [(s.prefill_replicas, s.decode_replicas) for s in odd] == [(2, 1)]


def Uniform_():  # type: ignore[no-untyped-def]
    from budgetlint.physics.traffic import Uniform

    return Uniform(500, 1500)


def test_the_combined_prefill_is_the_prefill_pool_s_where_the_pools_differ() -> None:
    wl = Workload(prompt_tokens=4096, output_tokens=200, concurrency=16)
    # a draft on the prefill pool only: its prefill, 2 x 1e9 x 4096 + 4 x 32 x 64 x 16 x 4096 x 4097 / 2
    # = 9.2918e12 FLOP on 8 x 989 TFLOP/s = 1.1744 ms, is the combined estimate's
    a = analyse_pools(pools(prefill=Deployment(model=LLAMA70, accelerator=H100, devices=8, draft=DRAFT,
                                               draft_lookahead=3)), wl)
    draft = (2 * 1e9 * 4096 + 4 * 32 * 64 * 16 * 4096 * 4097 / 2) / (8 * 989e12)
    assert a.combined.draft_prefill_s == pytest.approx(draft, rel=1e-6)
    assert a.decode.draft_prefill_s == 0.0
    # a decode pool a thousand times faster in compute: its own prefill would be bandwidth-bound,
    # the combined one is the prefill pool's, compute-bound
    fast = Accelerator(memory_bytes=141e9, bandwidth_bytes_per_s=4.8e12, compute_flop_per_s={"bf16": 989e15})
    b = analyse_pools(pools(decode=Deployment(model=LLAMA70, accelerator=fast, devices=4)), wl)
    assert (b.combined.prefill_binding, b.decode.prefill_binding) == ("compute", "bandwidth")
    # expert parallelism on the prefill pool only: its all-to-all latency, 32 MoE layers x 2 x 10 us
    moe = ModelShape(total_params=47e9, active_params=13e9, layers=32, hidden_size=4096, attention_heads=32,
                     kv_heads=8, head_dim=128, experts=8, experts_per_token=2)
    c = analyse_pools(pools(prefill=Deployment(model=moe, accelerator=H100, devices=1, data_parallel=2,
                                               expert_parallel=2, alltoall_latency_s=1e-5),
                            decode=Deployment(model=moe, accelerator=H200, devices=2)), wl)
    assert c.combined.prefill_alltoall_s == pytest.approx(32 * 2 * 1e-5, rel=1e-12)
    assert c.decode.prefill_alltoall_s == 0.0


def test_pools_accept_a_link_slower_than_a_byte_a_second() -> None:
    assert pools(link_bandwidth_bytes_per_s=0.5).link_bandwidth_bytes_per_s == 0.5


def test_six_hundred_requests_by_default() -> None:
    r = simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, ONE_A_SECOND, Scheduler(), Scheduler())
    assert len(r.prefill_raw.records) == 600


def test_a_preemption_on_the_decode_pool_is_in_the_request_s_record() -> None:
    """A decode pool that preempts (mut3's survivors: the records' preemptions were the prefill
    pool's minus the decode pool's). Arrivals 0, 1, 2 (the decode pool's warm-up), 3.0, 3.1 and 5 s;
    a 0.05 s prefill each (FAST_PREFILL, no prefill queue), so the decode pool sees request k at
    a_k + 0.05 + MOVE (3.0575536 and 3.1575536 s for 3 and 4). Its cache: 2,009 tokens.

    Request 3 (10 tokens on the decode pool: the 1-token prefill of its cached prompt, 4 ms, then
    9 steps of 20 ms) holds 1,000 + 1 + g tokens after g steps. Request 4 arrives during step 5,
    is admitted at its end (3.1615536 s: queue 4 ms) since the cache has 2,009 - (1,006 + 1) =
    1,002 >= 999 + 1 free; the mixed iteration (20 ms, a decode beside the chunk) ends at
    3.1815536 s with 1,007 + 1,001 tokens held, and the next one would need 2 more: 2,010 > 2,009,
    so the newest, request 4, is preempted (once: it waits for request 3 to finish, 3.2415536 s,
    then recomputes its 1,001 tokens alone, 4 ms, whose last position samples its next token, as
    vLLM's recompute does, and decodes its 8 other tokens, 0.16 s: it ends at 3.4055536 s, 0.248 s
    after it arrived). Requests 3 and 5 are never preempted and are
    served as alone (E2E = 0.05 + MOVE + 0.184). The prefill pool (no cache limit) preempts
    nothing: each record's count is the decode pool's, 0, 1, 0."""
    traffic = Traffic(prompt=Fixed(1000), output=Fixed(11), arrival_times_s=(0.0, 1.0, 2.0, 3.0, 3.1, 5.0))
    r = simulate_pools(pools(), FAST_PREFILL, DECODE_LAW, traffic, Scheduler(),
                       Scheduler(kv_capacity_tokens=2009), requests=6)
    assert r.rejected == 0
    assert [(x.index, x.preemptions) for x in r.combined.records] == [(3, 0), (4, 1), (5, 0)]
    assert [x.preemptions for x in r.prefill_raw.records] == [0] * 6
    assert r.decode_queue_s == pytest.approx([0.0, 0.004, 0.0], abs=1e-9)
    assert r.e2e_s == pytest.approx([0.05 + MOVE + 0.184, 0.05 + MOVE + 0.248, 0.05 + MOVE + 0.184], rel=1e-9)
    # the TTFT: the prefill, the transfer and the decode pool's queue
    assert r.ttft_s == pytest.approx([0.05 + MOVE, 0.05 + MOVE + 0.004, 0.05 + MOVE], rel=1e-9)
