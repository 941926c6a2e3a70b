"""However a request ends -- answered, failed by the engine, given up by its client before the answer, or cut off by
its client mid-stream -- the router counts it once with that status, leaves its gauges at their idle values and
blames the engine only for what the engine did: a client that disconnects cannot take a model down.

Real aiohttp clients disconnect from a router in front of the simulated engine (a subprocess on loopback), with
aiohttp's handler cancellation on (as vcore-router runs) and off (aiohttp's default, e.g. an embedding app)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import aiohttp
import pytest

from tests.router.conftest import read_metrics

MODEL = "llama"


def config(engine: str) -> dict:
    return {
        "router": {"scrapeIntervalSeconds": 3600},  # one scrape at start; the tests run the others
        "modelServers": [{"name": "pool", "model": "sim-model", "endpoints": [{"name": "e0", "url": engine}]}],
        "modelRoutes": [{"modelName": MODEL, "rules": [{"targetModels": [{"modelServerName": "pool"}]}]}],
    }


def body(max_tokens: int, stream: bool) -> dict:
    return {
        "model": MODEL,
        "max_tokens": max_tokens,
        "stream": stream,
        "messages": [{"role": "user", "content": "tell me a long story"}],
    }


def set_fault(engine: str, **fault) -> None:
    req = urllib.request.Request(
        engine + "/sim/fault", data=json.dumps(fault).encode(), headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=10).close()


async def disconnect_mid_stream(url: str) -> None:
    """Read the first event of a long stream, then close the connection."""
    async with aiohttp.ClientSession() as session:
        resp = await session.post(url + "/v1/chat/completions", json=body(400, stream=True))
        assert resp.status == 200
        assert (await resp.content.readline()).startswith(b"data: {")
        resp.close()


async def give_up_before_the_answer(url: str) -> None:
    """A whole (not streamed) answer that takes seconds; the client stops waiting after 0.3 s."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=0.3)) as session:
        with pytest.raises(asyncio.TimeoutError):
            async with session.post(url + "/v1/chat/completions", json=body(300, stream=False)) as resp:
                await resp.read()


async def whole_answer(url: str, stream: bool, status: int = 200) -> bytes:
    async with aiohttp.ClientSession() as session:
        async with session.post(url + "/v1/chat/completions", json=body(3, stream)) as resp:
            assert resp.status == status
            return await resp.read()


def statuses(core) -> dict[str, float]:
    """vcore_router_requests_total of the model, by status."""
    return {
        s.labels["status"]: s.value
        for metric in core.metrics.requests.collect()
        for s in metric.samples
        if s.name == "vcore_router_requests_total" and s.labels["model"] == MODEL
    }


def finished(core, n: int, timeout: float = 30.0) -> None:
    """Wait until the router has counted n requests of the model (it may still be finishing one whose client left:
    without handler cancellation it notices when the engine's answer is in)."""
    deadline = time.monotonic() + timeout
    while sum(statuses(core).values()) < n:
        assert time.monotonic() < deadline, f"the router never counted {n} requests"
        time.sleep(0.02)


def healthy(core, name: str = "e0") -> bool:
    return bool(core.router.state()["healthy"][core.router.slot(name)])


@pytest.mark.parametrize("cancellation", [True, False], ids=["handler-cancellation", "no-cancellation"])
def test_client_disconnects_are_not_engine_failures(engines, loop, cancellation):
    engine = engines.start(f"disconnects-{cancellation}", time_scale=1.0)  # real-time decoding: 400 tokens ~ 4 s
    url, core = loop.start_router(config(engine), handler_cancellation=cancellation)
    try:
        for i in range(3):  # unhealthyAfterFailures is 2: were these failures, e0 would be out after the second
            loop.run(disconnect_mid_stream(url))
            finished(core, i + 1)
        assert healthy(core)
        assert b"tok2" in loop.run(whole_answer(url, stream=False))  # the model still serves everyone
        assert statuses(core) == {"499": 3, "200": 1}
        metrics = read_metrics(url)
        assert metrics["vcore_router_endpoint_healthy", (("endpoint", "e0"),)] == 1
        assert (
            metrics["vcore_router_upstream_requests_total", (("endpoint", "e0"), ("outcome", "client_disconnected"))]
            == 3
        )
        assert (
            "vcore_router_upstream_requests_total",
            (("endpoint", "e0"), ("outcome", "failed_mid_stream")),
        ) not in metrics
    finally:
        loop.stop_router(url)


@pytest.mark.parametrize("cancellation", [True, False], ids=["handler-cancellation", "no-cancellation"])
def test_gauges_return_to_idle_however_requests_end(engines, loop, cancellation):
    engine = engines.start(f"gauges-{cancellation}", time_scale=1.0)
    url, core = loop.start_router(config(engine), handler_cancellation=cancellation)
    try:
        # answered, whole and streamed
        loop.run(whole_answer(url, stream=False))
        loop.run(whole_answer(url, stream=True))

        # failed by the engine: refused (503), then cut off mid-stream; e0 is unhealthy after these two
        set_fault(engine, mode="refuse")
        loop.run(whole_answer(url, stream=False, status=502))
        set_fault(engine, mode="midstream", after_tokens=1)
        assert b"upstream_error" in loop.run(whole_answer(url, stream=True))
        set_fault(engine, mode="none")
        assert not healthy(core)
        loop.run(core.scrape_once())  # the engine answers its scrape: healthy again
        assert healthy(core)

        # given up by the client before the answer, and cut off by the client mid-stream
        loop.run(give_up_before_the_answer(url))
        finished(core, 5)
        loop.run(disconnect_mid_stream(url))
        finished(core, 6)

        # answered, with the engines scraped while it was in flight (the last scrape: no later one
        # refreshes what it saw)
        async def scraped_mid_request() -> None:
            async with aiohttp.ClientSession() as session:
                async with session.post(url + "/v1/chat/completions", json=body(20, stream=True)) as resp:
                    await resp.content.readline()
                    await core.scrape_once()
                    assert core.router.n_in_flight == 1
                    assert b"[DONE]" in await resp.read()

        loop.run(scraped_mid_request())
        finished(core, 7)

        metrics = read_metrics(url)
        assert core.router.n_in_flight == 0
        assert metrics["vcore_router_queue_depth", (("model", MODEL),)] == 0
        assert metrics["vcore_router_requests_in_flight", ()] == 0
        assert metrics["vcore_router_endpoint_healthy", (("endpoint", "e0"),)] == 1
        assert metrics["vcore_router_ratelimit_redis_fallback", ()] == 0
        assert statuses(core) == {"200": 3, "502": 2, "499": 2}
    finally:
        loop.stop_router(url)
