"""The token-bucket limit shared by two router instances through a real redis-server; Redis down -> local
limits, said in a metric, never fail open."""

from __future__ import annotations

import pytest

openai = pytest.importorskip("openai", reason="the openai client (test extra) is not installed")
aioredis = pytest.importorskip("redis.asyncio", reason="the redis client (router extra) is not installed")


def config(url, limit):
    return {
        "router": {"scrapeIntervalSeconds": 0.2},
        "modelServers": [{"name": "pool", "model": "sim-model", "endpoints": [{"name": "e", "url": url}]}],
        "modelRoutes": [
            {
                "modelName": "llama",
                "rules": [{"targetModels": [{"modelServerName": "pool"}]}],
                "rateLimit": {"inputTokensPerUnit": limit, "unit": "hour"},
            }
        ],
    }


def test_limit_is_shared_across_two_routers_and_falls_back_when_redis_dies(engines, loop, redis_server):
    port, proc = redis_server
    engine = engines.start("rl0")

    def client_factory():
        return aioredis.Redis(host="127.0.0.1", port=port, socket_timeout=0.5, socket_connect_timeout=0.5)

    url_a, core_a = loop.start_router(config(engine, 1000), redis=client_factory)
    url_b, core_b = loop.start_router(config(engine, 1000), redis=client_factory)
    clients = [openai.OpenAI(base_url=u + "/v1", api_key="unused", max_retries=0) for u in (url_a, url_b)]
    admitted = limited = 0
    for i in range(12):  # 200 estimated tokens each, alternating routers: 5 fit in the shared 1000
        try:
            clients[i % 2].completions.create(model="llama", prompt="y" * 800, max_tokens=1)
            admitted += 1
        except openai.RateLimitError:
            limited += 1
    assert admitted == 5 and limited == 7  # each router alone would have admitted 5 (10 in total)

    proc.terminate()
    proc.wait(10)
    # Redis gone: each router falls back to its own bucket (fresh: 1000 tokens), reports it, still limits
    admitted = 0
    for _ in range(8):
        try:
            clients[0].completions.create(model="llama", prompt="y" * 800, max_tokens=1)
            admitted += 1
        except openai.RateLimitError:
            pass
    assert admitted == 5
    assert core_a.limiter.fallback and core_a.metrics.redis_fallback._value.get() == 1
