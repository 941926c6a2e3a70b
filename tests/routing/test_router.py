"""vcore.routing.Router: endpoints by name, sessions, LoRA, PD pairing, bookkeeping, determinism, bad input."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import vcore.routing as vr
from vcore.routing import Endpoint, EngineMetrics, Router


def router_with(n=4, policy="vcore", **kw):
    r = Router(policy, **kw)
    for i in range(n):
        r.add_endpoint(Endpoint(f"e{i}"))
    return r


def test_prefix_affinity_and_bookkeeping():
    r = router_with()
    prompt = "system: you are helpful. " * 40
    h = vr.hash_prompt(prompt, salt="m")
    tokens = vr.estimate_tokens(prompt)
    d = r.route(h, tokens)
    r.dispatch(1, d.best, h, tokens, d.matched_blocks[0], 10)
    r.first_token(1)
    r.finish(1)
    again = r.route(h, tokens)
    assert again.best == d.best and again.matched_blocks[0] == len(h)
    assert r.n_in_flight == 0 and r.state()["pending_prefill_tokens"].sum() == 0
    with pytest.raises(KeyError, match="not in flight"):
        r.finish(1)


def test_load_moves_requests_away_from_a_busy_endpoint():
    r = router_with(2)
    for rid in range(3):
        r.dispatch(rid, "e0", [], 5000, 0)
    assert r.route([], 100).best == "e1"


def test_expected_wait_counts_the_head_progress():
    """1000 tokens/s, no overhead: each 1000-token prefill is estimated at 1 s; the router's clock tells how far the
    head of an endpoint's queue has gone (at most its estimate), the rest of the queue counts in full."""
    r = Router(vr.named_policy("vcore", w_lora=0.0))  # the prefill cost alone: score = 100 x best cost / cost
    for name in ("a", "b"):
        r.add_endpoint(Endpoint(name, prefill_tokens_per_s=1000.0))
    r.dispatch(1, "a", [], 1000, 0, now_s=0.0)
    r.dispatch(2, "b", [], 1000, 0, now_s=0.0)
    r.dispatch(3, "b", [], 1000, 0, now_s=0.0)
    state = r.state()
    assert state["prefill_backlog_s"][:2].tolist() == [1.0, 2.0]
    assert state["prefill_busy_until_s"][:2].tolist() == [1.0, 2.0]
    d = r.route([], 500, now_s=0.6)  # cost a: 0.4 s wait + 0.5 s, b: 1.4 s + 0.5 s
    assert d.endpoints == ("a", "b") and d.scores[1] == pytest.approx(100 * 0.9 / 1.9)
    d = r.route([], 500, now_s=7.0)  # both heads overdue: a is free, b still has request 3 to prefill
    assert d.endpoints == ("a", "b") and d.scores[1] == pytest.approx(100 * 0.5 / 1.5)
    r.first_token(2, now_s=1.5)  # b's head answered late: request 3 starts now
    assert r.state()["prefill_busy_until_s"][1] == 2.5
    r.finish(3, now_s=1.6)  # abandoned before its first token: b has nothing left to prefill
    state = r.state()
    assert state["prefill_backlog_s"][1] == 0 and state["pending_prefill_tokens"][1] == 0


def test_a_cached_prefix_is_worth_a_wait_shorter_than_its_prefill():
    r = Router("vcore", block_tokens=512)
    for name in ("holder", "idle"):  # about a 70B model on 8 GPUs: 8 k tokens/s, 15 ms per prefill, attention
        r.add_endpoint(
            Endpoint(
                name, prefill_tokens_per_s=8000.0, prefill_overhead_s=0.015, prefill_attention_s_per_token_pair=2.3e-9
            )
        )
    prefix = np.arange(1, 33, dtype=np.uint64)  # 32 blocks = 16 k tokens: ~2.4 s to prefill
    r.dispatch(1, "holder", prefix, 16384, 0, now_s=0.0)
    r.dispatch(2, "holder", [], 8000, 0, now_s=0.0)  # ~1.2 s more
    request = np.append(prefix, np.uint64(99))
    assert r.route(request, 16384 + 512, now_s=0.0).best == "idle"  # 3.6 s of wait > 2.5 s of prefill
    assert r.route(request, 16384 + 512, now_s=3.0).best == "holder"  # 1.2 s left + 0.1 s for the new block


def test_session_sticks_while_healthy():
    r = router_with(3, policy="least-request")
    r.dispatch(1, "e2", [], 10, 0, session="chat-1")
    r.dispatch(2, "e2", [], 10, 0)
    assert r.route([], 10, session="chat-1").best == "e2"  # loaded, but the session stays
    assert r.route([], 10).best != "e2"
    r.set_health("e2", False)
    assert r.route([], 10, session="chat-1").best != "e2"
    assert r.session_endpoint("chat-1") == "e2"


def test_lora_filter_and_affinity():
    r = Router("vcore")
    r.add_endpoint(Endpoint("full", max_loras=1))
    r.add_endpoint(Endpoint("loaded", max_loras=1))
    r.add_endpoint(Endpoint("room", max_loras=2))
    r.set_loras("full", ["other"])
    r.set_loras("loaded", ["sql"])
    d = r.route([], 10, lora="sql")
    assert d.endpoints[0] == "loaded" and "full" not in d.endpoints and d.filtered["lora"] == 1


def test_pd_pairs_prefer_same_domain_and_skip_short_prompts():
    policy = vr.named_policy("vcore", pd_min_prompt_tokens=64)
    r = Router(policy)
    r.add_endpoint(Endpoint("d0", role="decode", pd_group="g0", domain="rack-a"))
    r.add_endpoint(Endpoint("p-far", role="prefill", pd_group="g0", domain="rack-b"))
    r.add_endpoint(Endpoint("p-near", role="prefill", pd_group="g0", domain="rack-a"))
    r.add_endpoint(Endpoint("p-other", role="prefill", pd_group="g1", domain="rack-a"))
    d = r.route_pd([], 1000)
    assert d.pairs == (("d0", "p-near"),)
    r.dispatch(7, "p-near", [], 10**6, 0)  # near prefill is very busy: still preferred (same domain first)
    assert r.route_pd([], 1000).pairs == (("d0", "p-near"),)
    r.set_health("p-near", False)
    assert r.route_pd([], 1000).pairs == (("d0", "p-far"),)
    assert r.route_pd([], 10).pairs == (("d0", None),)
    assert r.route([], 1000).endpoints == ()  # no 'both' endpoint for a plain route
    assert "role" in r.route([], 1000).message()


def test_named_policies_all_route():
    for name in vr.POLICY_NAMES:
        r = router_with(5, policy=name)
        r.update_metrics({"e1": EngineMetrics(waiting=1, running=2, kv_usage=0.5, ttft_us=1000, itl_us=20)})
        d = r.route([1, 2, 3], 48)
        assert len(d.endpoints) == 5 and len(set(d.endpoints)) == 5, name


def test_round_robin_rotates_and_random_is_seeded():
    r = router_with(3, policy="round-robin")
    assert [r.route([], 1).best for _ in range(6)] == ["e0", "e1", "e2", "e0", "e1", "e2"]
    a = [router_with(6, policy="random", seed=3).route([], 1).best for _ in range(3)]
    assert len(set(a)) == 1  # same seed, same first decision
    r = router_with(6, policy="random", seed=3)
    assert len({r.route([], 1).best for _ in range(40)}) > 1


def test_remove_and_reuse_slots():
    r = router_with(3)
    r.dispatch(1, "e1", [5, 6], 32, 0)
    r.remove_endpoint("e1")
    assert r.n_in_flight == 0 and "e1" not in r.endpoints
    slot = r.add_endpoint(Endpoint("e9"))
    assert slot == 1 and r.match([5, 6]).tolist() == [0, 0, 0]
    with pytest.raises(vr.EndpointNotFoundError):
        r.route([], 1, candidates=r.slots(["e1"]))


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda r: r.add_endpoint(Endpoint("e0")), ValueError),
        (lambda r: r.add_endpoint(Endpoint("x", role="leader")), ValueError),
        (lambda r: r.add_endpoint(Endpoint("x", max_loras=-1)), ValueError),
        (lambda r: r.add_endpoint(Endpoint("x", prefill_tokens_per_s=0)), ValueError),
        (lambda r: r.add_endpoint("x"), TypeError),
        (lambda r: r.route([1.5], 1), TypeError),
        (lambda r: r.route([[1]], 1), ValueError),
        (lambda r: r.route([], -1), ValueError),
        (lambda r: r.route([], 1, candidates=np.array([0, 0], dtype=np.int32)), ValueError),
        (lambda r: r.route([], 1, candidates=np.array([17], dtype=np.int32)), KeyError),
        (lambda r: r.dispatch(1, "nope", [], 1, 0), KeyError),
        (lambda r: r.update_metrics({"e0": EngineMetrics(kv_usage=1.5)}), ValueError),
        (lambda r: r.update_metrics({"e0": EngineMetrics(), "zz": EngineMetrics()}), KeyError),
        (lambda r: vr.named_policy("fastest"), vr.PolicyError),
        (lambda r: vr.make_policy({"w_prefix": -1}), vr.PolicyError),
        (lambda r: vr.make_policy({"top_n": 0}), vr.PolicyError),
        (lambda r: vr.make_policy({"weight": 1}), vr.PolicyError),
        (lambda r: vr.hash_prompt(b"bytes"), TypeError),
        (lambda r: vr.hash_prompt("x", block_bytes=0), ValueError),
        (lambda r: Router(block_tokens=0), ValueError),
    ],
    ids=[
        "duplicate",
        "role",
        "loras",
        "rate",
        "not-endpoint",
        "float-hash",
        "2d-hash",
        "negative-tokens",
        "duplicate-candidate",
        "unknown-slot",
        "dispatch-unknown",
        "kv-range",
        "metrics-unknown",
        "policy-name",
        "negative-weight",
        "top-n",
        "unknown-field",
        "bytes-prompt",
        "block-bytes",
        "block-tokens",
    ],
)
def test_bad_input_raises_and_leaves_state(call, error):
    r = router_with(2)
    r.update_metrics({"e0": EngineMetrics(waiting=3)})
    before = {k: v.copy() for k, v in r.state().items()}
    with pytest.raises(error):
        call(r)
    after = r.state()
    for key in before:
        assert np.array_equal(before[key], after[key]), key


def test_route_releases_the_gil_and_is_deterministic():
    r = router_with(64, prefix_capacity_blocks=100_000)
    chain = np.arange(4000, dtype=np.uint64)
    for i in range(64):
        r.record_blocks(f"e{i}", chain[: 60 * i])
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=spin)
    t.start()
    try:
        for _ in range(200):
            r.match(chain)
    finally:
        stop.set()
        t.join()
    assert ticks  # the other thread ran while the native calls were in progress
    a, b = router_with(8, seed=5), router_with(8, seed=5)
    assert [a.route([1, 2], 40).endpoints for _ in range(5)] == [b.route([1, 2], 40).endpoints for _ in range(5)]
