"""The OpenAI-compatible HTTP router (aiohttp): routing by vcore's native core, streaming pass-through,
retries, PD disaggregation, rate limits, metrics.

Per request: parse and validate (413 over the size limit, 400 malformed JSON, 404 unknown model), admit by the
model's token buckets (429 with Retry-After), pick a ModelServer by the route's weights (canary), hash the prompt,
rank the pool's endpoints in one native call, then send to the best and on a refused connection or a failure
before the first byte to the next candidate. Streams are passed through chunk by chunk; an upstream failure
mid-stream ends the stream with an error event, never a silent truncation. The router only connects to
configured or discovered endpoints: nothing in a request chooses the upstream.
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
from dataclasses import dataclass

import aiohttp
from aiohttp import web
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from vcore.routing import Endpoint, Router, estimate_tokens, hash_prompt

from vcore_router.config import ModelServer, RateLimit, RouterConfig, StaticEndpoint
from vcore_router.metrics import RouterMetrics
from vcore_router.prompt import prompt_text
from vcore_router.ratelimit import RateLimiter
from vcore_router.scraper import ScrapeState, parse_engine_metrics

log = logging.getLogger("vcore_router")
SESSION_HEADER = "X-Session-ID"


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


def error_response(status: int, message: str, kind: str, headers: dict | None = None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status,
                             headers=headers)


class RouterApp:
    def __init__(self, config: RouterConfig, redis=None, kubeconfig: str | None = None):
        self.config = config
        self.router = Router(config.policy, block_tokens=max(1, config.block_bytes // 4),
                             prefix_capacity_blocks=config.prefix_capacity_blocks, seed=config.seed)
        self.metrics = RouterMetrics()
        self.limiter = RateLimiter(redis)
        self.upstreams: dict[str, Upstream] = {}
        self.pools: dict[str, list[str]] = {name: [] for name in config.servers}
        self._pool_slots: dict[str, tuple[object, bool]] = {}  # server -> (candidate slots, has PD roles)
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
            self.discovery = Discovery(selectors, kubeconfig,
                                       on_relist=lambda server, reason:
                                       self.metrics.discovery_relists.labels(server, reason).inc())

    # ----------------------------------------------------------------------------------------- endpoints
    def add_endpoint(self, server: str, e: StaticEndpoint) -> None:
        ms = self.config.servers[server]
        self.router.add_endpoint(Endpoint(e.name, e.role, e.pd_group, e.domain, e.max_loras,
                                          ms.prefill_tokens_per_s, ms.prefill_overhead_s))
        self.upstreams[e.name] = Upstream(e.name, e.url, server, e.role)
        self.pools[server].append(e.name)
        self._pool_slots.pop(server, None)
        self.scrape[e.name] = ScrapeState()
        self.metrics.healthy.labels(e.name).set(1)
        log.info("endpoint %s (%s, %s) added to %s", e.name, e.url, e.role, ms.name)

    def remove_endpoint(self, name: str) -> None:
        up = self.upstreams.pop(name)
        self.pools[up.server].remove(name)
        self._pool_slots.pop(up.server, None)
        self.scrape.pop(name, None)
        self.router.remove_endpoint(name)
        self.metrics.healthy.remove(name)

    def apply_discovered(self, server: str, removed: list[str], added: list[StaticEndpoint]) -> None:
        """One change from Kubernetes discovery (on the event loop): endpoints that left, then those that joined.
        Requests in flight to an endpoint that left finish on their connection; they are no longer counted."""
        for name in removed:
            self.remove_endpoint(name)
        for e in added:
            self.add_endpoint(server, e)
        static = len(self.config.servers[server].endpoints)
        self.metrics.discovered.labels(server).set(len(self.pools[server]) - static)

    def _failure(self, name: str) -> None:
        state = self.scrape.get(name)
        if state is None:
            return
        state.failures += 1
        if state.failures >= self.config.unhealthy_after_failures:
            self.router.set_health(name, False)
            self.metrics.healthy.labels(name).set(0)

    def _success(self, name: str) -> None:
        state = self.scrape.get(name)
        if state is not None and state.failures:
            state.failures = 0
            self.router.set_health(name, True)
            self.metrics.healthy.labels(name).set(1)

    # ----------------------------------------------------------------------------------------- background
    async def scrape_once(self) -> None:
        async def one(name: str, up: Upstream) -> None:
            engine = self.config.servers[up.server].engine
            state = self.scrape.get(name)
            if state is None or self.upstreams.get(name) is not up:
                return  # the endpoint left (discovery) before its scrape began
            try:
                async with self.http.get(up.url + "/metrics", timeout=aiohttp.ClientTimeout(total=2)) as resp:
                    if resp.status != 200:
                        raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
                    text = await resp.text()
                metrics, loras = parse_engine_metrics(text, engine, state)
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as e:
                log.debug("scrape %s failed: %s", name, e)
                if self.upstreams.get(name) is up:
                    self._failure(name)
                return
            if self.upstreams.get(name) is not up:
                return  # the endpoint left (or left and came back) while it was scraped
            self._success(name)
            self.router.update_metrics({name: metrics})
            if loras is not None:
                self.router.set_loras(name, loras)

        await asyncio.gather(*(one(n, u) for n, u in list(self.upstreams.items())))
        state = self.router.state()
        for route in self.config.routes:
            depth = 0
            total_weight = sum(t.weight for t in route.targets)
            servers = []
            for t in route.targets:
                for name in self.pools[t.server]:
                    slot = self.router.slot(name)
                    depth += int(state["in_flight"][slot]) + int(state["waiting"][slot])
                servers.append((t.server, t.weight / total_weight,
                                self.config.servers[t.server].tokens_per_second_per_replica))
            self.metrics.update_autoscaling(route.model_name, depth, servers)
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
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.config.request_timeout_s),
                                          connector=aiohttp.TCPConnector(limit=0),
                                          cookie_jar=aiohttp.DummyCookieJar())
        self._tasks.append(asyncio.get_running_loop().create_task(self._scrape_loop()))
        if self.discovery is not None:
            self.discovery.start(asyncio.get_running_loop(), self.apply_discovered)

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
            data += [{"id": a, "object": "model", "owned_by": "vcore-router", "parent": r.model_name}
                     for a in r.lora_adapters]
        return web.json_response({"object": "list", "data": data})

    async def healthz(self, request: web.Request) -> web.Response:
        state = self.router.state()
        healthy = int((state["healthy"] & state["live"]).sum())
        return web.json_response({"status": "ok" if healthy else "no healthy endpoint", "healthy": healthy,
                                  "endpoints": len(self.upstreams)}, status=200 if healthy else 503)

    async def prometheus(self, request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(self.metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self.proxy(request, chat=False)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self.proxy(request, chat=True)

    async def proxy(self, request: web.Request, chat: bool) -> web.StreamResponse:
        started = time.perf_counter()
        path = "/v1/chat/completions" if chat else "/v1/completions"
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            self.metrics.requests.labels("", "413").inc()
            return error_response(413, f"request body larger than {self.config.max_body_bytes} bytes",
                                  "invalid_request_error")
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
            model = body.get("model")
            if not isinstance(model, str) or not model:
                raise ValueError("model: expected a non-empty string")
            text = prompt_text(body, chat)
        except (ValueError, UnicodeDecodeError) as e:
            self.metrics.requests.labels("", "400").inc()
            return error_response(400, f"malformed request: {e}", "invalid_request_error")
        found = self.config.route_for(model)
        if found is None:
            self.metrics.requests.labels("", "404").inc()
            return error_response(404, f"model {model!r} does not exist", "not_found_error")
        route, lora = found
        tokens = estimate_tokens(text)
        verdict = await self.limiter.admit(route.model_name, route.rate_limit, tokens)
        if self.limiter.redis is not None:
            self.metrics.redis_fallback.set(1 if self.limiter.fallback else 0)
        if not verdict.allowed:
            self.metrics.rate_limited.labels(route.model_name).inc()
            self.metrics.requests.labels(route.model_name, "429").inc()
            headers = {} if math.isinf(verdict.retry_after_s) else {"Retry-After": str(max(1, math.ceil(verdict.retry_after_s)))}
            return error_response(429, f"rate limit exceeded: {verdict.reason}", "rate_limit_error", headers)
        target = (route.targets[0] if len(route.targets) == 1
                  else self.rng.choices(route.targets, [t.weight for t in route.targets])[0])
        server = self.config.servers[target.server]
        upstream_body = dict(body)
        upstream_body["model"] = lora or server.model
        hashes = hash_prompt(text, self.config.block_bytes, salt=lora or server.model)
        session = request.headers.get(SESSION_HEADER)
        candidates, pd = self._candidates(server.name)
        t0 = time.perf_counter()
        if pd:
            decision = self.router.route_pd(hashes, tokens, lora=lora, session=session, candidates=candidates,
                                            policy=self._pd_policy(server))
            attempts = [(d, p, m) for (d, p), m in zip(decision.pairs, decision.matched_blocks)]
        else:
            decision = self.router.route(hashes, tokens, lora=lora, session=session, candidates=candidates)
            attempts = [(e, None, m) for e, m in zip(decision.endpoints, decision.matched_blocks)]
        self.metrics.decision.observe(time.perf_counter() - t0)
        if not attempts:
            self.metrics.requests.labels(route.model_name, "503").inc()
            return error_response(503, f"no endpoint available for {model!r}: {decision.message() if not pd else ''}",
                                  "service_unavailable")
        if hashes.size:
            self.metrics.prefix_hit.observe(attempts[0][2] / hashes.size)
        ctx = _Ctx(route.model_name, route.rate_limit, server, hashes, tokens, session, started, chat, path)
        for i, (name, prefill, matched) in enumerate(attempts[: self.config.retries]):
            if i:
                self.metrics.retries.labels(route.model_name).inc()
            result = await self._attempt(request, ctx, upstream_body, name, prefill, matched)
            if result is not None:
                return result
        self.metrics.requests.labels(route.model_name, "502").inc()
        return error_response(502, f"every candidate endpoint failed for {model!r}", "upstream_error")

    def _candidates(self, server: str) -> tuple[object, bool]:
        """The pool's slots and whether it has prefill/decode roles (cached until the pool changes)."""
        found = self._pool_slots.get(server)
        if found is None:
            names = self.pools[server]
            found = self._pool_slots[server] = (self.router.slots(names),
                                                any(self.upstreams[n].role != "both" for n in names))
        return found

    def _pd_policy(self, server: ModelServer):
        if not server.pd_min_prompt_tokens:
            return None
        from vcore.routing import make_policy, policy_fields
        fields = policy_fields(self.router.policy)
        fields["pd_min_prompt_tokens"] = server.pd_min_prompt_tokens
        return make_policy(fields)

    async def _prefill(self, ctx: "_Ctx", body: dict, name: str, matched: int) -> dict | None:
        """The prefill leg (vLLM's disaggregated-serving convention): max_tokens 1, no stream, asking for
        kv_transfer_params to hand to the decode engine. None when the prefill endpoint failed."""
        leg = copy.deepcopy(body)
        leg.update({"max_tokens": 1, "stream": False,
                    "kv_transfer_params": {"do_remote_decode": True, "do_remote_prefill": False,
                                           "remote_engine_id": None, "remote_block_ids": None,
                                           "remote_host": None, "remote_port": None}})
        leg.pop("max_completion_tokens", None)
        leg.pop("stream_options", None)
        rid = next(self.ids)
        self.router.dispatch(rid, name, ctx.hashes, ctx.tokens, matched, 1)
        try:
            async with self.http.post(self.upstreams[name].url + ctx.path, json=leg) as resp:
                if resp.status >= 500:
                    raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
                data = await resp.json()
            self._success(name)
            self.metrics.upstream.labels(name, "ok").inc()
            return data.get("kv_transfer_params") or {}
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as e:
            log.warning("prefill on %s failed: %s", name, e)
            self.metrics.upstream.labels(name, "failed").inc()
            self._failure(name)
            return None
        finally:
            self._finish(rid)

    async def _attempt(self, request: web.Request, ctx: "_Ctx", body: dict, name: str, prefill: str | None,
                       matched: int) -> web.StreamResponse | None:
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
        max_out = body.get("max_tokens") or body.get("max_completion_tokens") or 16
        self.router.dispatch(rid, name, ctx.hashes, ctx.tokens, matched, max_out if isinstance(max_out, int) else 16,
                             session=ctx.session, record_prefix=prefill is None)
        up = self.upstreams[name]
        stream = bool(body.get("stream"))
        try:
            try:
                resp_cm = self.http.post(up.url + ctx.path, json=body)
                upstream = await resp_cm.__aenter__()
            except (aiohttp.ClientError, asyncio.TimeoutError) as e:
                log.warning("endpoint %s refused: %s", name, e)
                self.metrics.upstream.labels(name, "refused").inc()
                self._failure(name)
                return None
            try:
                if upstream.status >= 500:
                    self.metrics.upstream.labels(name, f"http_{upstream.status}").inc()
                    self._failure(name)
                    return None
                if not stream or upstream.status != 200:
                    try:
                        data = await upstream.read()
                    except (aiohttp.ClientError, asyncio.TimeoutError):
                        self.metrics.upstream.labels(name, "failed").inc()
                        self._failure(name)
                        return None
                    self.router.first_token(rid)
                    self._success(name)
                    self.metrics.upstream.labels(name, "ok").inc()
                    self.metrics.ttft.labels(ctx.model).observe(time.perf_counter() - ctx.started)
                    out_tokens = completion_tokens(data) if upstream.status == 200 else 0
                    await self._done(ctx, out_tokens, upstream.status)
                    return web.Response(body=data, status=upstream.status,
                                        content_type=upstream.content_type or "application/json")
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

    async def _stream(self, request: web.Request, ctx: "_Ctx", upstream: aiohttp.ClientResponse, rid: int,
                      name: str) -> web.StreamResponse | None:
        first = True
        resp: web.StreamResponse | None = None
        out_tokens = 0
        tail = b""
        try:
            async for chunk in upstream.content.iter_any():
                if first:
                    first = False
                    self.router.first_token(rid)
                    self.metrics.ttft.labels(ctx.model).observe(time.perf_counter() - ctx.started)
                    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                                   "Cache-Control": "no-cache"})
                    await resp.prepare(request)
                await resp.write(chunk)
                out_tokens += chunk.count(b"data: {")
                tail = (tail + chunk)[-64:]
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            if resp is None:  # nothing sent yet: the next candidate can still serve it
                self.metrics.upstream.labels(name, "failed").inc()
                self._failure(name)
                return None
            return await self._abort_stream(ctx, resp, name, f"upstream {name} failed mid-stream: {e}", out_tokens)
        if resp is None:
            self.metrics.upstream.labels(name, "failed").inc()
            self._failure(name)
            return None
        if b"[DONE]" not in tail:
            return await self._abort_stream(ctx, resp, name, f"upstream {name} ended the stream early", out_tokens)
        self._success(name)
        self.metrics.upstream.labels(name, "ok").inc()
        await self._done(ctx, out_tokens, 200)
        await resp.write_eof()
        return resp

    async def _abort_stream(self, ctx: "_Ctx", resp: web.StreamResponse, name: str, message: str,
                            out_tokens: int) -> web.StreamResponse:
        log.warning(message)
        self.metrics.upstream.labels(name, "failed_mid_stream").inc()
        self._failure(name)
        event = {"error": {"message": message, "type": "upstream_error", "code": 502}}
        try:
            await resp.write(f"data: {json.dumps(event)}\n\n".encode())
            await resp.write_eof()
        except ConnectionError:
            pass
        await self._done(ctx, out_tokens, 502)
        return resp

    async def _done(self, ctx: "_Ctx", out_tokens: int, status: int) -> None:
        self.metrics.requests.labels(ctx.model, str(status)).inc()
        self.metrics.record_tokens(ctx.model, ctx.tokens, out_tokens)
        await self.limiter.charge_output(ctx.model, ctx.rate_limit, out_tokens)


@dataclass
class _Ctx:
    model: str
    rate_limit: RateLimit | None
    server: ModelServer
    hashes: object
    tokens: int
    session: str | None
    started: float
    chat: bool
    path: str


def make_app(config: RouterConfig, redis=None, kubeconfig: str | None = None) -> tuple[web.Application, RouterApp]:
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
