"""``vcore-router --demo``: start simulated engines and a router on loopback, route a synthetic workload.

Four engine simulators (``python -m vcore_router.engine_sim``, one process each, the engine model running
``--time-scale`` times faster than real time) behind one router; clients send chat requests that share a few
long system prompts, as agents do; the summary shows where requests went, the router's prefix match and TTFT.
"""

from __future__ import annotations

import asyncio
import random
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import aiohttp
from aiohttp import web

from vcore_router.config import parse_config
from vcore_router.server import make_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_engines(n: int, model: str, time_scale: float) -> tuple[list[subprocess.Popen], list[int]]:
    ports = [free_port() for _ in range(n)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vcore_router.engine_sim",
                "--port",
                str(p),
                "--model",
                model,
                "--time-scale",
                str(time_scale),
                "--name",
                f"engine-{i}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i, p in enumerate(ports)
    ]
    deadline = time.monotonic() + 30
    for p in ports:
        while True:
            try:
                socket.create_connection(("127.0.0.1", p), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"engine simulator on port {p} did not start") from None
                time.sleep(0.05)
    return procs, ports


async def run_demo(
    n_engines: int = 4, n_requests: int = 200, policy: str = "vcore", time_scale: float = 0.05, seed: int = 0
) -> dict[str, Any]:
    model = "sim-model"
    procs, ports = start_engines(n_engines, model, time_scale)
    try:
        config = parse_config(
            {
                "router": {"policy": policy, "scrapeIntervalSeconds": 0.2, "seed": seed},
                "modelServers": [
                    {
                        "name": "pool",
                        "model": model,
                        "endpoints": [
                            {"name": f"engine-{i}", "url": f"http://127.0.0.1:{p}"} for i, p in enumerate(ports)
                        ],
                    }
                ],
                "modelRoutes": [{"modelName": "demo", "rules": [{"targetModels": [{"modelServerName": "pool"}]}]}],
            }
        )
        app, core = make_app(config)
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        rng = random.Random(seed)
        systems = [f"System prompt {k}: " + " ".join(f"rule{k}-{i}" for i in range(600)) for k in range(6)]
        ttfb: list[float] = []

        async def one(session: aiohttp.ClientSession, i: int) -> None:
            body = {
                "model": "demo",
                "max_tokens": 8,
                "messages": [
                    {"role": "system", "content": systems[rng.randrange(len(systems))]},
                    {"role": "user", "content": f"question {i}"},
                ],
            }
            t0 = time.perf_counter()
            async with session.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body) as resp:
                await resp.read()
            ttfb.append(time.perf_counter() - t0)

        async with aiohttp.ClientSession() as session:
            tasks = []
            for i in range(n_requests):
                tasks.append(asyncio.create_task(one(session, i)))
                await asyncio.sleep(rng.expovariate(50.0))
            await asyncio.gather(*tasks)
        state = core.router.state()
        summary = {
            "requests": n_requests,
            "policy": policy,
            "mean_latency_s": statistics.fmean(ttfb),
            "p90_latency_s": sorted(ttfb)[int(0.9 * len(ttfb))],
            "prefix_blocks_per_endpoint": {n: int(state["prefix_blocks"][core.router.slot(n)]) for n in core.upstreams},
        }
        await runner.cleanup()
        return summary
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)


def main(n_engines: int = 4, n_requests: int = 200) -> int:
    for policy in ("random", "vcore"):
        s = asyncio.run(run_demo(n_engines, n_requests, policy))
        print(
            f"{policy:>8}: {s['requests']} requests, mean {s['mean_latency_s'] * 1e3:.0f} ms, "
            f"p90 {s['p90_latency_s'] * 1e3:.0f} ms; prefix blocks per endpoint {s['prefix_blocks_per_endpoint']}"
        )
    return 0
