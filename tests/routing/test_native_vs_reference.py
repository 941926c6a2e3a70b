"""The native router core against the pure-Python reference (hypothesis): prefix index contents and matches,
scorers and complete decisions on random endpoint states, including empty prompts, huge hashes, duplicate
blocks, tiny LRU capacities, unhealthy and overloaded endpoints."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.routing import reference as ref
from vcore._native import _core

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

hash_values = st.sampled_from([0, 1, 2, 3, 5, 8, 13, 2**63, 2**64 - 1, 12345678901234567])
chains = st.lists(hash_values, min_size=0, max_size=12)


@st.composite
def index_ops(draw):
    n_endpoints = draw(st.integers(1, 6))
    capacity = draw(st.integers(1, 8))
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["insert", "insert", "insert", "remove", "clear"]),
                st.integers(0, n_endpoints - 1),
                chains,
            ),
            max_size=25,
        )
    )
    return n_endpoints, capacity, ops


@SETTINGS
@given(index_ops(), chains)
def test_prefix_index_matches_reference(setup, query):
    n_endpoints, capacity, ops = setup
    native = _core.routing.Router(block_tokens=4, prefix_capacity_blocks=capacity)
    for i in range(n_endpoints):
        native.add_endpoint(f"e{i}")
    reference = ref.RefPrefixIndex(capacity)
    for op, e, hashes in ops:
        arr = np.array(hashes, dtype=np.uint64)
        if op == "insert":
            native.record_blocks(e, arr)
            reference.insert(e, hashes)
        elif op == "remove":
            native.remove_blocks(e, arr)
            reference.remove(e, hashes)
        else:
            native.clear_blocks(e)
            reference.clear(e)
    for e in range(n_endpoints):
        assert native.endpoint_blocks(e).tolist() == reference.blocks(e)
    q = np.array(query, dtype=np.uint64)
    assert native.match(q).tolist() == reference.match(query, list(range(n_endpoints)))
    subset = list(range(n_endpoints))[::-1][: max(1, n_endpoints // 2)]
    assert native.match(q, np.array(subset, dtype=np.int32)).tolist() == reference.match(query, subset)


@st.composite
def router_states(draw):
    n = draw(st.integers(1, 7))
    eps = {}
    for s in range(n):
        eps[s] = ref.RefEndpoint(
            healthy=draw(st.booleans()) or s == 0,
            waiting=draw(st.integers(0, 14)),
            running=draw(st.integers(0, 6)),
            kv_usage=draw(st.sampled_from([0.0, 0.1, 0.333, 0.5, 0.99, 1.0])),
            ttft_us=draw(st.sampled_from([0, 1, 1000, 250_000, 10**9])),
            itl_us=draw(st.sampled_from([0, 5, 20_000, 40_000])),
            rate=draw(st.sampled_from([1.0, 2.5, 10000.0])),
            overhead_s=draw(st.sampled_from([0.0, 0.015])),
            attention=draw(st.sampled_from([0.0, 2.3e-9, 1e-4])),
            max_loras=draw(st.integers(0, 2)),
            loras=set(draw(st.lists(st.integers(0, 2), max_size=2))),
        )
    # (endpoint, prompt blocks, prompt tokens, output tokens, seconds since the previous event, answered how)
    served = draw(
        st.lists(
            st.tuples(
                st.integers(0, n - 1),
                chains,
                st.integers(1, 3000),
                st.integers(0, 50),
                st.sampled_from([0.0, 0.001, 0.5, 30.0]),
                st.sampled_from(["no", "first", "finish"]),
            ),
            max_size=8,
        )
    )
    return eps, served


policies = st.one_of(
    st.fixed_dictionaries(
        {
            "w_prefix": st.sampled_from([0.0, 1.0, 2.0]),
            "w_least_request": st.sampled_from([0.0, 1.0]),
            "w_kv_cache": st.sampled_from([0.0, 1.0]),
            "w_latency": st.sampled_from([0.0, 1.0, 0.5]),
            "w_lora": st.sampled_from([0.0, 1.0]),
            "w_prefill_cost": st.sampled_from([0.0, 1.0, 3.0]),
            "max_waiting": st.sampled_from([0, 3, 10]),
            "prefix_max_blocks": st.sampled_from([0, 1, 4]),
            "prefix_top_k": st.sampled_from([0, 1, 5]),
            "latency_ttft_factor": st.sampled_from([0.0, 0.5, 1.0]),
            "queue_weight": st.sampled_from([0.0, 4.0, 100.0]),
            "top_n": st.integers(1, 8),
        }
    ),
    st.fixed_dictionaries(
        {"kind": st.just("dynamo"), "overlap_weight": st.sampled_from([0.0, 1.0, 2.5]), "top_n": st.integers(1, 8)}
    ),
)


@SETTINGS
@given(
    router_states(),
    policies,
    chains,
    st.integers(0, 6000),
    st.integers(0, 2**64 - 1),
    st.integers(-1, 2),
    st.sampled_from([0.0, 0.2, 100.0]),
)
def test_route_matches_reference(state, policy, query, prompt_tokens, seed, lora, route_delay):
    eps, served = state
    block_tokens = 16
    native = _core.routing.Router(block_tokens=block_tokens, prefix_capacity_blocks=6, seed=seed)
    for x in range(3):
        assert native.lora_id(f"lora{x}") == x  # interned in order of first use
    pending: dict[int, int] = {}
    for s, e in eps.items():
        native.add_endpoint(
            f"e{s}",
            max_loras=e.max_loras,
            prefill_tokens_per_s=e.rate,
            prefill_overhead_s=e.overhead_s,
            prefill_attention_s_per_token_pair=e.attention,
        )
        native.set_health(s, e.healthy)
        native.set_loras(s, [f"lora{x}" for x in sorted(e.loras)])
    slots = np.arange(len(eps), dtype=np.int32)
    native.update_metrics(
        slots,
        [e.waiting for e in eps.values()],
        [e.running for e in eps.values()],
        np.array([e.kv_usage for e in eps.values()]),
        [e.ttft_us for e in eps.values()],
        [e.itl_us for e in eps.values()],
    )
    index = ref.RefPrefixIndex(6)
    now = 0.0
    answered = []  # (rid, how): answered out of order, one event later
    for rid, (s, hashes, tokens, out, dt, how) in enumerate(served):
        now += dt
        for old, old_how in answered:  # the previous request's answer comes dt after it was sent
            native.first_token(old, now) if old_how == "first" else native.finish(old, now)
            e_old = eps[served[old][0]]
            e_old.settle(old, now)
            if old_how == "finish":
                e_old.in_flight -= 1
                e_old.active_blocks -= -(-(served[old][2] + served[old][3]) // block_tokens)
            e_old.pending_prefill_tokens -= pending[old]
        answered = [(rid, how)] if how != "no" else []
        arr = np.array(hashes, dtype=np.uint64)
        matched = int(native.match(arr, np.array([s], dtype=np.int32))[0])
        assert matched == index.match(hashes, [s])[0]
        native.dispatch(rid, s, arr, tokens, matched, out, now_s=now)
        index.insert(s, hashes)
        e = eps[s]
        e.in_flight += 1
        pending[rid] = max(tokens - matched * block_tokens, 1)
        e.pending_prefill_tokens += pending[rid]
        e.active_blocks += -(-(tokens + out) // block_tokens)
        e.dispatch(rid, e.prefill_seconds(min(matched * block_tokens, tokens), pending[rid]), now)
    now += route_delay
    native_policy = _core.routing.Policy(**policy)
    got = native.route(native_policy, np.array(query, dtype=np.uint64), prompt_tokens, lora, now_s=now)
    want = ref.rank(policy, eps, index, query, prompt_tokens, block_tokens, seed, native.decisions - 1, lora, now)
    assert list(got[0]) == want[0]
    assert list(got[1]) == want[1]
    assert np.allclose(got[2], want[2], rtol=0, atol=0)
    state_now = native.state()
    assert state_now["in_flight"].tolist() == [e.in_flight for e in eps.values()]
    assert state_now["pending_prefill_tokens"].tolist() == [e.pending_prefill_tokens for e in eps.values()]
    assert state_now["active_blocks"].tolist() == [e.active_blocks for e in eps.values()]
    assert state_now["prefill_backlog_s"].tolist() == [e.backlog_s for e in eps.values()]
    assert state_now["prefill_busy_until_s"].tolist() == [e.busy_until_s for e in eps.values()]


@SETTINGS
@given(st.text(max_size=300), st.integers(1, 70), st.integers(0, 5), st.text(max_size=10))
def test_hash_blocks_chain_prefixes(text, block_bytes, max_blocks, salt):
    hashes = _core.routing.hash_blocks(text, block_bytes, max_blocks, salt).tolist()
    data = text.encode("utf-8")
    n_blocks = -(-len(data) // block_bytes)
    assert len(hashes) == (min(n_blocks, max_blocks) if max_blocks else n_blocks)
    # equal prefix -> equal hashes; the hash of block i depends on every byte before it
    longer = _core.routing.hash_blocks(text + "tail", block_bytes, 0, salt).tolist()
    full = len(data) // block_bytes
    assert longer[: min(full, len(hashes))] == hashes[: min(full, len(hashes))]
    if hashes:
        other_salt = _core.routing.hash_blocks(text, block_bytes, max_blocks, salt + "x").tolist()
        assert other_salt[0] != hashes[0]
