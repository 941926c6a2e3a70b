"""The engine model, the KV cache, Mooncake traces and the router replay: logic on small synthetic traces, the
quality target on the shared Mooncake trace (skipped without ../shared/data) and on seeded synthetic traces."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest

from vcore.sim.llm import (
    LLAMA3_8B_A100,
    KVCache,
    SimRequest,
    SimulatedEngine,
    load_trace,
    parse_trace,
    prompt_load,
    replay,
    synthetic_trace,
    ttft_lower_bound,
    write_trace,
)

# ../shared, beside the repository
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mooncake" / "synthetic_trace.jsonl"


def test_kv_cache_lru_pins_and_tail_first_eviction():
    evicted = []
    kv = KVCache(4, on_evict=evicted.extend)
    kv.allocate([1, 2, 3], 0)
    assert kv.used_blocks == 3 and not kv.can_allocate([7, 8], 0)
    kv.release([1, 2, 3], 0)
    assert kv.used_blocks == 0 and kv.cached_prefix([1, 2, 9]) == 2
    kv.allocate([1, 5], 0)  # block 1 reused, 5 new: no eviction yet (4 slots)
    kv.allocate([6], 0)  # evicts the deepest unused block of the old prompt first: 3
    assert evicted == [3] and kv.cached_prefix([1, 2]) == 2


def test_engine_prefill_and_cache_hit_timing():
    e = SimulatedEngine(LLAMA3_8B_A100, 512)
    a = SimRequest(0, 0.0, 8192, 2, list(range(16)))
    e.submit(a, 0.0)
    e.advance(100.0)
    assert math.isclose(a.ttft, LLAMA3_8B_A100.prefill_seconds(0, 8192), rel_tol=1e-6)
    b = SimRequest(1, 100.0, 8192, 2, list(range(16)))  # same prompt: all cached, one token recomputed
    e.submit(b, 100.0)
    e.advance(200.0)
    assert b.cached_tokens == 8192 and b.ttft < 0.05 and a.ttft > 0.5
    assert e.n_running == 0 and e.kv.used_blocks == 0


def test_engine_queues_fcfs_and_decode_slows_with_batch():
    e = SimulatedEngine(LLAMA3_8B_A100, 512)
    reqs = [SimRequest(i, 0.0, 4096, 50, [100 * i + k for k in range(8)]) for i in range(3)]
    for r in reqs:
        e.submit(r, 0.0)
    e.advance(1000.0)
    assert reqs[0].first_token < reqs[1].first_token < reqs[2].first_token
    assert reqs[1].admitted == pytest.approx(reqs[0].first_token)
    assert all(r.finished > r.first_token for r in reqs)


def test_engine_refuses_a_request_larger_than_its_cache_and_stays_usable():
    """A prompt needing more KV blocks than the whole cache could never be admitted: submit refuses it before
    queueing it (queued, it would block every request behind it and leave the engine reporting one waiting)."""
    e = SimulatedEngine(LLAMA3_8B_A100, 512)
    blocks = e.kv.capacity_blocks + 1
    with pytest.raises(ValueError, match=f"needs {blocks} KV blocks, the cache has {blocks - 1}"):
        e.submit(SimRequest(0, 0.0, blocks * 512, 1, list(range(blocks))), 0.0)
    assert e.n_waiting == 0 and e.n_running == 0
    r = SimRequest(1, 0.0, 1024, 2, [1, 2])
    e.submit(r, 0.0)
    e.advance(100.0)
    assert r.finished > 0 and e.n_waiting == 0


def test_engine_makes_progress_on_a_late_clock():
    """At 2.7e6 s (the HTTP simulator's clock after 5 minutes at time scale 1e-4) a float ulp is ~5e-10 s, and
    a prefill at ~10 k tokens/s with 2e-6 tokens left cannot move the clock: it completes instead of stalling the
    event loop (as it once did)."""
    e = SimulatedEngine(LLAMA3_8B_A100, 512)
    t = 2743975.463409109
    r = SimRequest(0, t, 75, 1, [1])
    e.submit(r, t)
    e._prefill_left = 2e-6  # what float rounding left of the prefill: 1.9e-10 s, under half an ulp
    worker = threading.Thread(target=e.advance, args=(t + 1.0,), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and r.finished >= r.first_token >= t and e.n_running == 0


def test_trace_round_trip_and_validation(tmp_path):
    trace = synthetic_trace(50, 5.0, seed=3)
    path = tmp_path / "t.jsonl"
    write_trace(path, trace)
    assert load_trace(path) == trace
    assert synthetic_trace(50, 5.0, seed=3) == trace and synthetic_trace(50, 5.0, seed=4) != trace
    with pytest.raises(ValueError, match="t:1: hash_ids has 1 blocks"):
        parse_trace(['{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1]}'], "t")
    with pytest.raises(ValueError, match="missing field 'hash_ids'"):
        parse_trace(['{"timestamp": 0, "input_length": 6, "output_length": 1}'])
    with pytest.raises(ValueError, match="not JSON"):
        parse_trace(["{"])


def test_replay_is_deterministic_and_prefix_aware_beats_random():
    trace = synthetic_trace(400, 3.0, seed=11)
    a = replay(trace, "vcore", engines=4)
    assert a == replay(trace, "vcore", engines=4)
    r = replay(trace, "random", engines=4)
    assert a.requests == r.requests == 400
    assert a.hit_rate > r.hit_rate and a.mean_ttft_s < r.mean_ttft_s
    with pytest.raises(ValueError, match="unknown preset"):
        replay(trace, "vcore", params="gpt-5")


def test_lower_bound_is_below_every_policy():
    trace = synthetic_trace(300, 3.0, seed=5)
    bound = ttft_lower_bound(trace)
    assert 0 < bound < min(replay(trace, p, engines=4).mean_ttft_s for p in ("vcore", "kthena", "random"))
    assert math.isnan(ttft_lower_bound([])) and prompt_load(trace, 4) > 0


def compare(trace, engines=8) -> dict:
    out = {p: replay(trace, p, engines=engines).mean_ttft_s for p in ("vcore", "kthena", "random")}
    out["bound"] = ttft_lower_bound(trace)
    return out


@pytest.mark.skipif(
    not SHARED.exists(), reason=f"shared Mooncake trace not present ({SHARED}); CI may not have ../shared/data"
)
def test_vcore_beats_kthena_and_random_on_the_shared_mooncake_trace():
    t = compare(load_trace(SHARED))  # measured: vcore 1.68 s, kthena 4.10 s (-59 %), random 74 s, bound 0.87 s
    assert t["vcore"] <= 0.75 * t["kthena"] and 2 * t["vcore"] <= t["random"], t


def family(rates: tuple[float, ...], first_seed: int) -> list:
    """Synthetic traces at each rate with little, medium and much prefix sharing (share, multi-turn), one seed each."""
    mixes = ((0.4, 0.5), (0.6, 0.3), (0.8, 0.1))
    grid = [(rate, share, turns) for rate in rates for share, turns in mixes]
    return [
        pytest.param(first_seed + i, rate, share, turns, id=f"rate{rate:g}-share{share:g}-turns{turns:g}")
        for i, (rate, share, turns) in enumerate(grid)
    ]


def family_trace(seed: int, rate: float, share: float, multi_turn: float) -> list:
    return synthetic_trace(1500, rate, seed=seed, prefix_share=share, multi_turn=multi_turn)


# The routing target (vcore's mean TTFT at most 75 % of Kthena's and half of random's) on other traces of the
# Mooncake format: seeded synthetic traces in the shared trace's load regime (4-6 requests/s on 8 engines:
# 6,400-10,000 prompt tokens/s per engine, the shared trace has 7,500), with little, medium and much prefix
# sharing. The seeds were held out: the policy was developed on others.
# Measured: vcore 33-43 % below Kthena, 3.5-14x below random.
@pytest.mark.parametrize("seed, rate, share, multi_turn", family((4.0, 5.0, 6.0), 21))
def test_vcore_target_on_loaded_synthetic_traces(seed, rate, share, multi_turn):
    trace = family_trace(seed, rate, share, multi_turn)
    assert prompt_load(trace, 8) > 6000
    t = compare(trace)
    assert t["vcore"] <= 0.75 * t["kthena"] and 2 * t["vcore"] <= t["random"], t


# Lighter traces (1.5-3 requests/s: 2,000-4,600 prompt tokens/s per engine) leave little queueing to avoid: TTFT
# is then mostly the prefill of the never-seen part of each prompt, which no router can avoid, so the lower bound
# sits 20-38 % below Kthena and a 25 % cut is out of reach for any policy on some of them (measured: vcore
# 14-29 % below Kthena). What a router can be asked for is to take most of what the bound leaves: vcore takes
# 69-83 % of the gap between Kthena and the bound (held-out seeds).
@pytest.mark.parametrize("seed, rate, share, multi_turn", family((1.5, 2.0, 3.0), 31))
def test_vcore_takes_most_of_the_reachable_gain_on_light_synthetic_traces(seed, rate, share, multi_turn):
    t = compare(family_trace(seed, rate, share, multi_turn))
    assert t["bound"] < t["vcore"] < t["kthena"], t
    assert t["kthena"] - t["vcore"] >= 0.6 * (t["kthena"] - t["bound"]), t
