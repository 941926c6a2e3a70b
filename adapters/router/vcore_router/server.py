"""The OpenAI-compatible HTTP router (aiohttp): routing by vcore's native core, streaming pass-through,
retries, PD disaggregation, rate limits, metrics.

Per request: read and check the body (413 over the size limit, 400 naming the field of a malformed body, see
vcore_router.request; 404 unknown model), admit by the model's token buckets (429 with Retry-After), pick a
ModelServer by the route's weights (canary), hash the prompt, rank the pool's endpoints in one native call, then
send to the best and on a refused connection or a failure before the first byte to the next candidate. Streams are
passed through chunk by chunk; an upstream failure mid-stream ends the stream with an error event, never a silent
truncation. A client that goes away (closes its connection, or is cancelled) ends its request with 499, which
says nothing about the engine's health (vcore_router.health decides what does). Every request is counted once in
``vcore_router_requests_total`` with the status it ended with, and leaves the in-flight gauge and the routing
core's bookkeeping as it found them, however it ends. The router only connects to configured or discovered
endpoints: nothing in a request chooses the upstream.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import logging
import math
import random
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
import numpy as np
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from vcore.routing import Endpoint, Policy, Router, estimate_tokens, hash_prompt
from vcore_router import health
from vcore_router.config import ModelServer, RateLimit, RouterConfig, StaticEndpoint
from vcore_router.health import EndpointHealth
from vcore_router.metrics import RouterMetrics
from vcore_router.ratelimit import RateLimiter
from vcore_router.request import RequestError, parse_request
from vcore_router.scraper import ScrapeState, parse_engine_metrics

if TYPE_CHECKING:
    from redis.asyncio import Redis


log = logging.getLogger("vcore_router")
SESSION_HEADER = "X-Session-ID"
CLIENT_CLOSED = 499  # nginx's status for a request whose client went away before its answer was complete


@dataclass
class Upstream:
    name: str
    url: str
    server: str
    role: str


_COMPLETION_TOKENS = re.compile(rb'"completion_tokens"\s*:\s*(\d+)')


def completion_tokens(body: bytes) -> int:
    """usage.completion_tokens of an OpenAI response body, 0 when absent: found from the end (engines put
    ``usage`` after the choices) without parsing the whole answer on the event loop, else parsed."""
    at = body.rfind(b'"completion_tokens"')
    if at < 0:
        return 0
    m = _COMPLETION_TOKENS.match(body, at)
    if m:
        return int(m.group(1))
    try:
        usage = json.loads(body).get("usage") or {}
        return int(usage.get("completion_tokens", 0))
    except (ValueError, AttributeError, TypeError):
        return 0


def error_response(
    status: int, message: str, kind: str, headers: dict[str, Any] | None = None, param: str | None = None
) -> web.Response:
    """An OpenAI-style error: {"error": {"message", "type", "param" (the field at fault), "code"}}."""
    return web.json_response(
        {"error": {"message": message, "type": kind, "param": param, "code": status}}, status=status, headers=headers
    )


class RouterApp:
    def __init__(self, config: RouterConfig, redis: Redis | None = None, kubeconfig: str | None = None) -> None:
        self.config = config
        self.router = Router(
            config.policy,
            block_tokens=max(1, config.block_bytes // 4),
            prefix_capacity_blocks=config.prefix_capacity_blocks,
            seed=config.seed,
        )
        self.metrics = RouterMetrics()
        self.health = EndpointHealth(self.router, self.metrics, config.unhealthy_after_failures)
        self.limiter = RateLimiter(redis)
        self.upstreams: dict[str, Upstream] = {}
        self.pools: dict[str, list[str]] = {name: [] for name in config.servers}
        self._pool_slots: dict[str, tuple[np.ndarray, bool]] = {}  # server -> (candidate slots, has PD roles)
        self.scrape: dict[str, ScrapeState] = {}
        self.rng = random.Random(config.seed)
        self.ids = itertools.count(1)
        self.http: aiohttp.ClientSession | None = None
        self._tasks: list[asyncio.Task] = []
        for server in config.servers.values():
            for e in server.endpoints:
                self.add_endpoint(server.name, e)
        self.discovery = None
        selectors = {s.name: s.selector for s in config.servers.values() if s.selector is not None}
        if selectors:
            # Imported here: a router with static endpoints only never loads the Kubernetes client.
            from vcore_router.discovery import Discovery

            self.discovery = Discovery(
                selectors,
                kubeconfig,
                on_relist=lambda server, reason: self.metrics.discovery_relists.labels(server, reason).inc(),
            )

    # ----------------------------------------------------------------------------------------- endpoints
    def add_endpoint(self, server: str, e: StaticEndpoint) -> None:
        ms = self.config.servers[server]
        self.router.add_endpoint(
            Endpoint(e.name, e.role, e.pd_group, e.domain, e.max_loras, ms.prefill_tokens_per_s, ms.prefill_overhead_s)
        )
        self.upstreams[e.name] = Upstream(e.name, e.url, server, e.role)
        self.pools[server].append(e.name)
        self._pool_slots.pop(server, None)
        self.scrape[e.name] = ScrapeState()
        self.health.add(e.name)
        log.info("endpoint %s (%s, %s) added to %s", e.name, e.url, e.role, ms.name)

    def remove_endpoint(self, name: str) -> None:
        up = self.upstreams.pop(name)
        self.pools[up.server].remove(name)
        self._pool_slots.pop(up.server, None)
        self.scrape.pop(name, None)
        self.router.remove_endpoint(name)
        self.health.remove(name)

    def apply_discovered(self, server: str, removed: list[str], added: list[StaticEndpoint]) -> None:
        """One change from Kubernetes discovery (on the event loop): endpoints that left, then those that joined.
        Requests in flight to an endpoint that left finish on their connection; they are no longer counted."""
        for name in removed:
            self.remove_endpoint(name)
        for e in added:
            self.add_endpoint(server, e)
        static = len(self.config.servers[server].endpoints)
        self.metrics.discovered.labels(server).set(len(self.pools[server]) - static)

    # ----------------------------------------------------------------------------------------- background
    async def scrape_once(self) -> None:
        async def one(name: str, up: Upstream) -> None:
            engine = self.config.servers[up.server].engine
            state = self.scrape.get(name)
            if state is None or self.upstreams.get(name) is not up:
                return  # the endpoint left (discovery) before its scrape began
            try:
                async with self._session().get(up.url + "/metrics", timeout=aiohttp.ClientTimeout(total=2)) as resp:
                    if resp.status != 200:
                        raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
                    text = await resp.text()
                metrics, loras = parse_engine_metrics(text, engine, state)
            except (TimeoutError, aiohttp.ClientError, ValueError) as e:
                log.debug("scrape %s failed: %s", name, e)
                if self.upstreams.get(name) is up:
                    self.health.scraped(name, False)
                return
            if self.upstreams.get(name) is not up:
                return  # the endpoint left (or left and came back) while it was scraped
            self.health.scraped(name, True)
            self.router.update_metrics({name: metrics})
            if loras is not None:
                self.router.set_loras(name, loras)

        await asyncio.gather(*(one(n, u) for n, u in list(self.upstreams.items())))

    def refresh_gauges(self) -> None:
        """The gauges that describe the present, from the routing core's state now: per model the queue depth
        (its requests sent to an engine and not yet answered), token throughput and recommended replicas; whether
        rate limits run without Redis."""
        in_flight = self.router.state()["in_flight"]
        for route in self.config.routes:
            total_weight = sum(t.weight for t in route.targets)
            shares: dict[str, float] = {}  # ModelServer -> share of the model's traffic (a server may be named twice)
            for t in route.targets:
                shares[t.server] = shares.get(t.server, 0.0) + t.weight / total_weight
            depth = sum(int(in_flight[self.router.slot(name)]) for server in shares for name in self.pools[server])
            self.metrics.update_autoscaling(
                route.model_name,
                depth,
                [
                    (server, share, self.config.servers[server].tokens_per_second_per_replica)
                    for server, share in shares.items()
                ],
            )
        self.metrics.redis_fallback.set(1 if self.limiter.fallback else 0)

    async def _scrape_loop(self) -> None:
        while True:
            try:
                await self.scrape_once()
            except Exception:  # keep scraping whatever one round did
                log.exception("scrape round failed")
            await asyncio.sleep(self.config.scrape_interval_s)

    async def start(self, app: web.Application) -> None:
        # No cookie jar: a proxy must not carry one client's engine cookies to another (and it saves the work).
        self.http = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.config.request_timeout_s),
            connector=aiohttp.TCPConnector(limit=0),
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        self._tasks.append(asyncio.get_running_loop().create_task(self._scrape_loop()))
        if self.discovery is not None:
            self.discovery.start(asyncio.get_running_loop(), self.apply_discovered)

    def _session(self) -> aiohttp.ClientSession:
        """The engines' HTTP session (made by start, when the application starts)."""
        if self.http is None:
            raise RuntimeError("router: not started (the HTTP session is made when the application starts)")
        return self.http

    async def stop(self, app: web.Application) -> None:
        if self.discovery is not None:
            self.discovery.stop()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.http:
            await self.http.close()

    # ----------------------------------------------------------------------------------------- handlers
    async def models(self, request: web.Request) -> web.Response:
        data = []
        for r in self.config.routes:
            data.append({"id": r.model_name, "object": "model", "owned_by": "vcore-router"})
            data += [
                {"id": a, "object": "model", "owned_by": "vcore-router", "parent": r.model_name}
                for a in r.lora_adapters
            ]
        return web.json_response({"object": "list", "data": data})

    async def healthz(self, request: web.Request) -> web.Response:
        state = self.router.state()
        healthy = int((state["healthy"] & state["live"]).sum())
        return web.json_response(
            {
                "status": "ok" if healthy else "no healthy endpoint",
                "healthy": healthy,
                "endpoints": len(self.upstreams),
            },
            status=200 if healthy else 503,
        )

    async def prometheus(self, request: web.Request) -> web.Response:
        self.refresh_gauges()
        return web.Response(body=generate_latest(self.metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self.proxy(request, chat=False)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self.proxy(request, chat=True)

    async def proxy(self, request: web.Request, chat: bool) -> web.StreamResponse:
        """One client request, however it ends: counted once with its status, out of the in-flight gauge after."""
        ctx = _Ctx(time.perf_counter(), chat, "/v1/chat/completions" if chat else "/v1/completions")
        self.metrics.in_flight.inc()
        try:
            return await self._serve(request, ctx)
        except asyncio.CancelledError:  # the client went away (aiohttp's handler cancellation) or the server stops
            await self._client_gone(ctx)
            raise
        except Exception:
            log.exception("%s: the router failed on a request", ctx.path)
            ctx.status = 500
            if ctx.stream is not None:  # the answer has begun: it can only be cut short
                return ctx.stream
            return error_response(500, "the router failed on this request (its log says why)", "internal_error")
        finally:
            self.metrics.in_flight.dec()
            self.metrics.requests.labels(ctx.model, str(ctx.status)).inc()

    def _refuse(
        self,
        ctx: _Ctx,
        status: int,
        message: str,
        kind: str,
        headers: dict[str, Any] | None = None,
        param: str | None = None,
    ) -> web.Response:
        ctx.status = status
        return error_response(status, message, kind, headers, param)

    async def _serve(self, request: web.Request, ctx: _Ctx) -> web.StreamResponse:
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._refuse(
                ctx, 413, f"request body larger than {self.config.max_body_bytes} bytes", "invalid_request_error"
            )
        except HttpProcessingError as e:  # a body that breaks HTTP's framing (chunked encoding, length)
            return self._refuse(ctx, 400, f"the body could not be read: {e.message}", "invalid_request_error")
        except ConnectionError:  # the client left while sending its body
            ctx.status = CLIENT_CLOSED
            return web.Response(status=CLIENT_CLOSED)
        try:
            req = parse_request(raw, ctx.chat)
        except RequestError as e:
            return self._refuse(ctx, 400, str(e), "invalid_request_error", param=e.param)
        found = self.config.route_for(req.model)
        if found is None:
            return self._refuse(ctx, 404, f"model {req.model!r} does not exist", "not_found_error", param="model")
        route, lora = found
        ctx.model, ctx.rate_limit = route.model_name, route.rate_limit
        ctx.tokens = estimate_tokens(req.text)
        verdict = await self.limiter.admit(route.model_name, route.rate_limit, ctx.tokens)
        if self.limiter.redis is not None:
            self.metrics.redis_fallback.set(1 if self.limiter.fallback else 0)
        if not verdict.allowed:
            self.metrics.rate_limited.labels(route.model_name).inc()
            headers = (
                {}
                if math.isinf(verdict.retry_after_s)
                else {"Retry-After": str(max(1, math.ceil(verdict.retry_after_s)))}
            )
            return self._refuse(ctx, 429, f"rate limit exceeded: {verdict.reason}", "rate_limit_error", headers)
        target = (
            route.targets[0]
            if len(route.targets) == 1
            else self.rng.choices(route.targets, [t.weight for t in route.targets])[0]
        )
        server = self.config.servers[target.server]
        upstream_body = dict(req.body)
        upstream_body["model"] = lora or server.model
        ctx.hashes = hash_prompt(req.text, self.config.block_bytes, salt=lora or server.model)
        ctx.session = request.headers.get(SESSION_HEADER)
        ctx.max_tokens = req.max_tokens or 16
        ctx.streaming = req.stream
        candidates, pd = self._candidates(server.name)
        t0 = time.perf_counter()
        if pd:
            pairs = self.router.route_pd(
                ctx.hashes,
                ctx.tokens,
                lora=lora,
                session=ctx.session,
                candidates=candidates,
                policy=self._pd_policy(server),
            )
            attempts = [(d, p, m) for (d, p), m in zip(pairs.pairs, pairs.matched_blocks)]
        else:
            decision = self.router.route(ctx.hashes, ctx.tokens, lora=lora, session=ctx.session, candidates=candidates)
            attempts = [(e, None, m) for e, m in zip(decision.endpoints, decision.matched_blocks)]
        self.metrics.decision.observe(time.perf_counter() - t0)
        if not attempts:
            return self._refuse(
                ctx,
                503,
                f"no endpoint available for {req.model!r}: {decision.message() if not pd else ''}",
                "service_unavailable",
            )
        if ctx.hashes.size:
            self.metrics.prefix_hit.observe(attempts[0][2] / ctx.hashes.size)
        for i, (name, prefill, matched) in enumerate(attempts[: self.config.retries]):
            if i:
                self.metrics.retries.labels(route.model_name).inc()
            result = await self._attempt(request, ctx, upstream_body, name, prefill, matched)
            if result is not None:
                return result
        return self._refuse(ctx, 502, f"every candidate endpoint failed for {req.model!r}", "upstream_error")

    def _candidates(self, server: str) -> tuple[np.ndarray, bool]:
        """The pool's slots and whether it has prefill/decode roles (cached until the pool changes)."""
        found = self._pool_slots.get(server)
        if found is None:
            names = self.pools[server]
            found = self._pool_slots[server] = (
                self.router.slots(names),
                any(self.upstreams[n].role != "both" for n in names),
            )
        return found

    def _pd_policy(self, server: ModelServer) -> Policy | None:
        if not server.pd_min_prompt_tokens:
            return None
        from vcore.routing import make_policy, policy_fields

        fields = policy_fields(self.router.policy)
        fields["pd_min_prompt_tokens"] = server.pd_min_prompt_tokens
        return make_policy(fields)

    async def _prefill(self, ctx: _Ctx, body: dict[str, Any], name: str, matched: int) -> dict[str, Any] | None:
        """The prefill leg (vLLM's disaggregated-serving convention): max_tokens 1, no stream, asking for
        kv_transfer_params to hand to the decode engine. None when the prefill endpoint failed."""
        leg = copy.deepcopy(body)
        leg.update(
            {
                "max_tokens": 1,
                "stream": False,
                "kv_transfer_params": {
                    "do_remote_decode": True,
                    "do_remote_prefill": False,
                    "remote_engine_id": None,
                    "remote_block_ids": None,
                    "remote_host": None,
                    "remote_port": None,
                },
            }
        )
        leg.pop("max_completion_tokens", None)
        leg.pop("stream_options", None)
        rid = next(self.ids)
        self.router.dispatch(rid, name, ctx.hashes, ctx.tokens, matched, 1)
        ctx.endpoint = name
        try:
            async with self._session().post(self.upstreams[name].url + ctx.path, json=leg) as resp:
                if resp.status >= 500:
                    self.health.request_ended(name, health.http_error(resp.status))
                    return None
                data = await resp.json()
            params = data.get("kv_transfer_params") if isinstance(data, dict) else None
            if params is not None and not isinstance(params, dict):
                raise ValueError(f"its kv_transfer_params are {type(params).__name__}, not an object")
            self.health.request_ended(name, health.OK)
            return params or {}
        except (TimeoutError, aiohttp.ClientError, ValueError) as e:
            log.warning("prefill on %s failed: %s", name, e)
            self.health.request_ended(name, health.FAILED)
            return None
        finally:
            self._finish(rid)

    async def _attempt(
        self, request: web.Request, ctx: _Ctx, body: dict[str, Any], name: str, prefill: str | None, matched: int
    ) -> web.StreamResponse | None:
        """One try on one endpoint (or PD pair). None when it failed before the first byte, or when the endpoint
        left the table (discovery) since the decision: try the next."""
        body = dict(body)
        if prefill is not None:
            if prefill not in self.upstreams:
                return None
            params = await self._prefill(ctx, body, prefill, matched)
            if params is None:
                return None
            body["kv_transfer_params"] = params
            matched = int(ctx.hashes.size)  # the decode engine receives the whole prompt's KV
        if name not in self.upstreams:
            return None
        rid = next(self.ids)
        self.router.dispatch(
            rid,
            name,
            ctx.hashes,
            ctx.tokens,
            matched,
            ctx.max_tokens,
            session=ctx.session,
            record_prefix=prefill is None,
        )
        ctx.endpoint = name
        up = self.upstreams[name]
        try:
            try:
                resp_cm = self._session().post(up.url + ctx.path, json=body)
                upstream = await resp_cm.__aenter__()
            except (TimeoutError, aiohttp.ClientError) as e:
                log.warning("endpoint %s refused: %s", name, e)
                self.health.request_ended(name, health.REFUSED)
                return None
            try:
                if upstream.status >= 500:
                    self.health.request_ended(name, health.http_error(upstream.status))
                    return None
                if not ctx.streaming or upstream.status != 200:
                    try:
                        data = await upstream.read()
                    except (TimeoutError, aiohttp.ClientError):
                        self.health.request_ended(name, health.FAILED)
                        return None
                    self.router.first_token(rid)
                    self.health.request_ended(name, health.OK)
                    self.metrics.ttft.labels(ctx.model).observe(time.perf_counter() - ctx.started)
                    ctx.out_tokens = completion_tokens(data) if upstream.status == 200 else 0
                    # Without handler cancellation a client that left is noticed here: the answer has no one to go to.
                    gone = request.transport is None or request.transport.is_closing()
                    ctx.status = CLIENT_CLOSED if gone else upstream.status
                    await self._account(ctx)
                    return web.Response(
                        body=data, status=upstream.status, content_type=upstream.content_type or "application/json"
                    )
                return await self._stream(request, ctx, upstream, rid, name)
            finally:
                await resp_cm.__aexit__(None, None, None)
        finally:
            self._finish(rid)

    def _finish(self, rid: int) -> None:
        try:
            self.router.finish(rid)
        except KeyError:
            pass  # its endpoint left the table (discovery) while the request was in flight: nothing to count

    async def _stream(
        self, request: web.Request, ctx: _Ctx, upstream: aiohttp.ClientResponse, rid: int, name: str
    ) -> web.StreamResponse | None:
        """Pass the engine's events through as they come. Reading the engine and writing to the client fail
        apart: the first is the engine's failure, the second the client's leaving. None when the engine failed
        before its first byte (the next candidate can still serve the request)."""
        tail = b""
        while True:
            try:
                chunk = await upstream.content.readany()
            except (TimeoutError, aiohttp.ClientError) as e:
                if ctx.stream is None:
                    self.health.request_ended(name, health.FAILED)
                    return None
                return await self._abort_stream(ctx, ctx.stream, name, f"upstream {name} failed mid-stream: {e}")
            if not chunk:
                break
            try:
                if ctx.stream is None:
                    self.router.first_token(rid)
                    self.metrics.ttft.labels(ctx.model).observe(time.perf_counter() - ctx.started)
                    resp = web.StreamResponse(
                        status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
                    )
                    await resp.prepare(request)
                    ctx.stream = resp
                await ctx.stream.write(chunk)
            except ConnectionError:  # the client closed its connection (aiohttp's ClientConnectionResetError)
                await self._client_gone(ctx)
                return ctx.stream or web.Response(status=CLIENT_CLOSED)
            ctx.out_tokens += chunk.count(b"data: {")
            tail = (tail + chunk)[-64:]
        if ctx.stream is None:
            self.health.request_ended(name, health.FAILED)
            return None
        if b"[DONE]" not in tail:
            return await self._abort_stream(ctx, ctx.stream, name, f"upstream {name} ended the stream early")
        self.health.request_ended(name, health.OK)
        ctx.status = 200
        await self._account(ctx)
        try:
            await ctx.stream.write_eof()
        except ConnectionError:
            pass  # the client left after the last event: it has its whole answer
        return ctx.stream

    async def _abort_stream(self, ctx: _Ctx, stream: web.StreamResponse, name: str, message: str) -> web.StreamResponse:
        """Cut short the client's stream (``ctx.stream``, begun) with an error event."""
        log.warning(message)
        self.health.request_ended(name, health.FAILED_MID_STREAM)
        ctx.status = 502
        event = {"error": {"message": message, "type": "upstream_error", "param": None, "code": 502}}
        try:
            await stream.write(f"data: {json.dumps(event)}\n\n".encode())
            await stream.write_eof()
        except ConnectionError:
            pass
        await self._account(ctx)
        return stream

    async def _client_gone(self, ctx: _Ctx) -> None:
        """The client left before its answer was complete: 499, and whatever the engine produced for it is
        charged; the engine it was talking to, if any, is not blamed."""
        ctx.status = CLIENT_CLOSED
        if ctx.endpoint is not None:
            self.health.request_ended(ctx.endpoint, health.CLIENT_DISCONNECTED)
            await self._account(ctx)

    async def _account(self, ctx: _Ctx) -> None:
        """The request's tokens, in the throughput window and the model's output token bucket."""
        self.metrics.record_tokens(ctx.model, ctx.tokens, ctx.out_tokens)
        await self.limiter.charge_output(ctx.model, ctx.rate_limit, ctx.out_tokens)


@dataclass
class _Ctx:
    """One client request as it goes: what the router learned of it, and how it ended."""

    started: float
    chat: bool
    path: str
    model: str = ""  # the route's model name once known ("" before: the requests metric's label)
    status: int = 0  # the status the request ended with, as counted
    rate_limit: RateLimit | None = None
    hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # the prompt's block hashes
    tokens: int = 0
    max_tokens: int = 16
    streaming: bool = False
    session: str | None = None
    endpoint: str | None = None  # the endpoint last sent the request (a client leaving is said to it, not blamed)
    stream: web.StreamResponse | None = None  # the client's stream once it has begun
    out_tokens: int = 0


def make_app(
    config: RouterConfig, redis: Redis | None = None, kubeconfig: str | None = None
) -> tuple[web.Application, RouterApp]:
    """The aiohttp application and its router; ``kubeconfig`` (None: the in-cluster service account) is read only
    when a ModelServer has a workloadSelector."""
    core = RouterApp(config, redis, kubeconfig)
    app = web.Application(client_max_size=config.max_body_bytes)
    app.router.add_post("/v1/chat/completions", core.chat)
    app.router.add_post("/v1/completions", core.completions)
    app.router.add_get("/v1/models", core.models)
    app.router.add_get("/metrics", core.prometheus)
    app.router.add_get("/healthz", core.healthz)
    app.on_startup.append(core.start)
    app.on_cleanup.append(core.stop)
    return app, core
