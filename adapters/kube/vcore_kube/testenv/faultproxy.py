"""A fault-injecting HTTP proxy on loopback in front of the test API server (aiohttp, in its own thread).

It forwards every request (watch streams chunk by chunk) and, by rule, answers with an error status, delays a
request, or drops the connection; it can cut every open stream and refuse new connections for a while
(`hold`), and counts requests per method and path so a test can tell one binding from a retry storm. Clients
reach it over plain HTTP (a kubeconfig it writes); it speaks HTTPS to the API server.
"""

from __future__ import annotations

import asyncio
import random
import re
import ssl
import threading
from collections import Counter
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from vcore_kube.testenv.control_plane import free_port, write_kubeconfig

HOP_BY_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}


@dataclass
class Fault:
    """Requests whose method matches and whose path (with query) matches `path` (a regex, searched) get
    `action`: "error" (answer `status`), "delay" (wait `seconds`, then forward) or "sever" (close the connection).
    `probability` picks a share of the matching requests; `times` limits how many (None: unlimited)."""

    action: str
    path: str = ""
    method: str = ""
    status: int = 503
    seconds: float = 0.0
    probability: float = 1.0
    times: int | None = None

    def matches(self, method: str, path: str, rng: random.Random) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        if self.method and self.method != method:
            return False
        if self.path and not re.search(self.path, path):
            return False
        if rng.random() >= self.probability:
            return False
        if self.times is not None:
            self.times -= 1
        return True


class FaultProxy:
    def __init__(self, upstream: str, ca_file: str, *, seed: int = 0) -> None:
        self.upstream, self.ca_file = upstream.rstrip("/"), ca_file
        self.faults: list[Fault] = []
        self.counts: Counter = Counter()  # (method, path without query) -> requests seen
        self.injected: Counter = Counter()  # action -> requests it applied to
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._rng = random.Random(seed)
        self._held = False
        self._lock = threading.Lock()
        self._streams: set = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fault-proxy", daemon=True)

    # -- control (any thread) -----------------------------------------------------------------------------
    def start(self) -> FaultProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fault proxy did not start")
        return self

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()

    def hold(self) -> None:
        """Cut every open connection (watches drop mid-stream) and refuse new requests until release()."""
        self._held = True
        asyncio.run_coroutine_threadsafe(self._sever_all(), self._loop).result(10)

    def release(self) -> None:
        self._held = False

    def requests_to(self, method: str, path_regex: str) -> int:
        return sum(n for (m, p), n in list(self.counts.items()) if m == method and re.search(path_regex, p))

    def write_kubeconfig(self, path: str, user: str, token: str) -> str:
        write_kubeconfig(path, self.url, None, user, token)
        return path

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    # -- the server ---------------------------------------------------------------------------------------
    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._cleanup())
        self._loop.close()

    async def _start(self) -> None:
        context = ssl.create_default_context(cafile=self.ca_file)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=context, limit=0),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
            auto_decompress=False,
        )
        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)  # watches never end by themselves
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def _cleanup(self) -> None:
        await self._sever_all()
        await self._session.close()
        await self._runner.cleanup()

    async def _sever_all(self) -> None:
        for transport in list(self._streams):
            transport.close()
        self._streams.clear()

    def _fault_for(self, method: str, path_qs: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.matches(method, path_qs, self._rng):
                    return fault
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method, path_qs = request.method, request.path_qs
        self.counts[(method, request.path)] += 1
        if self._held:
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=503)
        fault = self._fault_for(method, path_qs)
        if fault is not None:
            self.injected[fault.action] += 1
            if fault.action == "error":
                return web.json_response(
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "message": "injected by the fault proxy",
                        "code": fault.status,
                    },
                    status=fault.status,
                )
            if fault.action == "sever":
                if request.transport is not None:
                    request.transport.close()
                return web.Response(status=503)
            await asyncio.sleep(fault.seconds)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        body = await request.read()
        transport = request.transport
        self._streams.add(transport)
        try:
            async with self._session.request(
                method, self.upstream + path_qs, headers=headers, data=body or None
            ) as upstream:
                response = web.StreamResponse(
                    status=upstream.status,
                    headers={k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP},
                )
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response
        except (aiohttp.ClientError, ConnectionError) as e:
            if request.transport is None or request.transport.is_closing():
                raise  # the client side is gone (severed): nothing to answer
            return web.json_response(
                {"kind": "Status", "status": "Failure", "code": 502, "message": f"proxy: upstream: {e}"}, status=502
            )
        finally:
            self._streams.discard(transport)
