"""Kthena's scorer formulas with the cases of its own unit tests (volcano-sh/kthena,
pkg/kthena-router/scheduler/plugins/*_test.go) and worked cases of its published formulas, one endpoint state
per row; the score of each endpoint is read from a single-scorer policy."""

from __future__ import annotations

import numpy as np
import pytest

from vcore.routing import Endpoint, EngineMetrics, Router, make_policy, named_policy


def scores(policy_fields, rows, hashes=(), prompt_tokens=1, served=()):
    router = Router(make_policy({"top_n": 64, **policy_fields}), block_tokens=16)
    for i in range(len(rows)):
        router.add_endpoint(Endpoint(f"p{i}"))
    router.update_metrics({f"p{i}": m for i, (m, _) in enumerate(rows)})
    rid = 0
    for i, (_, in_flight) in enumerate(rows):
        for _ in range(in_flight):
            router.dispatch(rid, f"p{i}", [], 1, 0, record_prefix=False)
            rid += 1
    for name, chain in served:
        router.record_blocks(name, chain)
    d = router.route(np.array(hashes, dtype=np.uint64), prompt_tokens)
    return {e: s for e, s in zip(d.endpoints, d.scores)}


# least-latency: the table of least_latency_test.go (TTFT, TPOT per pod, weight factor, expected scores)
@pytest.mark.parametrize(
    "factor, latencies, expected",
    [
        (0.5, [(10, 20)], [100]),
        (0.5, [(10, 20), (10, 20)], [100, 100]),
        (0.0, [(100, 10), (1, 20)], [100, 0]),
        (1.0, [(100, 10), (1, 20)], [0, 100]),
        (0.5, [(100, 10), (1, 20)], [50, 50]),
        (0.5, [(0, 20), (10, 20), (30, 40)], [100, 100, 0]),  # no observation yet -> 100 (cold pods share the top)
        (0.5, [(10, 20), (20, 30), (40, 40)], [100, 58, 0]),  # int(0.5*66.67 + 0.5*50)
    ],
    ids=["single", "identical", "only-tpot", "only-ttft", "blend", "uninitialised", "truncation"],
)
def test_least_latency(factor, latencies, expected):
    rows = [(EngineMetrics(ttft_us=t, itl_us=p), 0) for t, p in latencies]
    got = scores({"w_latency": 1.0, "latency_ttft_factor": factor}, rows)
    assert [got[f"p{i}"] for i in range(len(rows))] == expected


# least-request: base = in_flight + 100 * max(in_flight - running, 0), score = int((max - base) / max * 100)
@pytest.mark.parametrize(
    "rows, expected",
    [
        ([(0, 0), (0, 0)], [100, 100]),  # max base 0 -> everyone 100
        ([(2, 2), (1, 1)], [0, 50]),  # bases 2, 1
        ([(3, 1), (3, 3)], [0, 98]),  # bases 3 + 200 = 203, 3 -> int(200/203*100) = 98
        ([(1, 5), (0, 0), (4, 4)], [75, 100, 0]),  # running above in-flight (other routers) does not go negative
    ],
    ids=["idle", "running-only", "queued-x100", "running-over-inflight"],
)
def test_least_request(rows, expected):
    table = [(EngineMetrics(running=running), in_flight) for in_flight, running in rows]
    got = scores({"w_least_request": 1.0}, table)
    assert [got[f"p{i}"] for i in range(len(rows))] == expected


@pytest.mark.parametrize(
    "usage, expected",
    [(0.0, 100), (0.5, 50), (0.333, 66), (0.999, 0), (1.0, 0)],
    ids=["empty", "half", "truncates", "almost-full", "full"],
)
def test_gpu_usage(usage, expected):
    got = scores({"w_kv_cache": 1.0}, [(EngineMetrics(kv_usage=usage), 0)])
    assert got["p0"] == expected


def test_prefix_cache_share_topk_and_cap():
    chain = list(range(1, 11))
    served = [("p0", chain[:10]), ("p1", chain[:5]), ("p2", chain[:3]), ("p3", chain[:1])]
    rows = [(EngineMetrics(), 0)] * 5
    got = scores({"w_prefix": 1.0}, rows, chain, served=served)
    assert [got[f"p{i}"] for i in range(5)] == [100, 50, 30, 10, 0]
    got = scores({"w_prefix": 1.0, "prefix_top_k": 2}, rows, chain, served=served)
    assert [got[f"p{i}"] for i in range(5)] == [100, 50, 0, 0, 0]  # only the 2 longest matches score
    got = scores({"w_prefix": 1.0, "prefix_max_blocks": 4}, rows, chain, served=served)
    assert [got[f"p{i}"] for i in range(5)] == [100, 100, 75, 25, 0]  # Kthena looks at the first blocks only


def test_kthena_default_set_filters_and_sums():
    policy = named_policy("kthena", block_tokens=16)
    assert (policy.max_waiting, policy.prefix_max_blocks, policy.prefix_top_k) == (10, 128, 5)
    assert (policy.w_least_request, policy.w_kv_cache, policy.w_latency, policy.w_prefix) == (1, 1, 1, 1)
    assert named_policy("kthena", block_tokens=512).prefix_max_blocks == 4  # 8 KiB of text = 4 blocks of 512 tokens
    router = Router(policy)
    for i in range(3):
        router.add_endpoint(Endpoint(f"p{i}"))
    router.update_metrics(
        {
            "p0": EngineMetrics(waiting=10, kv_usage=0.0),
            "p1": EngineMetrics(waiting=9, kv_usage=0.5),
            "p2": EngineMetrics(kv_usage=0.2),
        }
    )
    d = router.route([], 1)
    assert d.endpoints == ("p2", "p1") and d.filtered["waiting"] == 1  # 10 waiting is filtered out
    assert d.scores == (280.0, 250.0)  # 100 (least-request) + kv (80, 50) + 100 (latency) + 0 (no blocks)
    router.update_metrics({"p1": EngineMetrics(waiting=12), "p2": EngineMetrics(waiting=11)})
    d = router.route([], 1)
    assert d.waiting_relaxed and set(d.endpoints) == {"p0", "p1", "p2"}
