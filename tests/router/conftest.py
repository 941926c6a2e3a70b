"""Fixtures for the router adapter tests: engine simulators (subprocesses on loopback), routers run in a
background event loop, a real redis-server started on a free port; the router's /metrics read as numbers."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

pytest.importorskip("aiohttp", reason="the router extra (aiohttp) is not installed")
from aiohttp import web  # noqa: E402

from vcore_router.config import parse_config  # noqa: E402
from vcore_router.server import make_app  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port that refuses connections while the block runs: bound, never listening. A port merely found
    free may be handed to the next server the test starts (the router itself), which then answers there."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port}") from None
            time.sleep(0.05)


class Engines:
    def __init__(self):
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports: dict[str, int] = {}

    def start(self, name: str, role: str = "both", max_loras: int = 2, time_scale: float = 0.01) -> str:
        port = free_port()
        self.procs[name] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vcore_router.engine_sim",
                "--port",
                str(port),
                "--model",
                "sim-model",
                "--time-scale",
                str(time_scale),
                "--role",
                role,
                "--max-loras",
                str(max_loras),
                "--lora-load-ms",
                "10",
                "--name",
                name,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.ports[name] = port
        wait_port(port)
        return f"http://127.0.0.1:{port}"

    def stop_all(self) -> None:
        for p in self.procs.values():
            p.terminate()
        for p in self.procs.values():
            p.wait(10)


@pytest.fixture(scope="module")
def engines():
    e = Engines()
    yield e
    e.stop_all()


class Loop:
    """An asyncio loop in a thread that hosts routers while the test thread uses blocking clients."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runners: dict[str, web.AppRunner] = {}  # router url -> its runner

    def run(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start_router(
        self, raw_config: dict, redis=None, kubeconfig: str | None = None, handler_cancellation: bool = False
    ):
        """A router on loopback; ``handler_cancellation`` as vcore-router runs it (True) or aiohttp's default."""
        config = parse_config(raw_config)
        port = free_port()

        async def go():
            app, core = make_app(config, redis() if callable(redis) else redis, kubeconfig)
            runner = web.AppRunner(app, handler_cancellation=handler_cancellation)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            self.runners[f"http://127.0.0.1:{port}"] = runner
            return core

        core = self.run(go())
        return f"http://127.0.0.1:{port}", core

    def stop_router(self, url: str) -> None:
        self.run(self.runners.pop(url).cleanup())

    def close(self):
        for r in self.runners.values():
            self.run(r.cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def read_metrics(url: str) -> dict[tuple[str, tuple], float]:
    """The samples of a /metrics page: (sample name, sorted label items) -> value."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture(scope="module")
def loop():
    lp = Loop()
    yield lp
    lp.close()


@pytest.fixture(scope="module")
def redis_server():
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; .ci/run installs it)")
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port)
    yield port, proc
    if proc.poll() is None:
        proc.terminate()
        proc.wait(10)
