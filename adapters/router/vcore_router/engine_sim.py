"""An OpenAI-compatible inference engine simulator: vcore's engine model run in real time behind HTTP.

    python -m vcore_router.engine_sim --port 8001 [--preset llama3-8b-a100] [--role both] [--max-loras 4]

Serves /v1/completions and /v1/chat/completions (streaming as server-sent events or not), /v1/models, /health
and /metrics with vLLM's metric names (``vllm:num_requests_running``, ``vllm:num_requests_waiting``,
``vllm:kv_cache_usage_perc``, ``vllm:time_to_first_token_seconds``, ``vllm:inter_token_latency_seconds``,
``vllm:lora_requests_info``, prompt/generation token counters). Latency and caching come from
``vcore.sim.llm.SimulatedEngine`` (the model the trace replay uses), advanced by the wall clock: a prompt's uncached
tokens cost prefill time, cached prefix blocks (64-byte text blocks, LRU) do not, decode steps slow down with the
batch. ``--time-scale`` divides every modelled duration (tests run the same model faster).

LoRA: ``--max-loras`` slots; a request naming an adapter loads it (``--lora-load-ms``) into a free slot or
evicts the least recently used idle adapter. PD disaggregation (vLLM's ``kv_transfer_params``): a ``prefill``
engine answers with the parameters a decode engine needs; a ``decode`` engine given them skips the prefill of
the transferred blocks. Faults for tests: POST /sim/fault {"mode": "refuse" | "midstream" | "none", ...}.

Bad requests are answered 400 as an OpenAI server does: a body the router's own check refuses
(vcore_router.request), or one whose prompt and output exceed ``--max-model-len`` tokens (vLLM's context check).
A client that goes away mid-stream ends the handler quietly (the modelled request runs to its end: the model has
no abort).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import time
import uuid
from collections import OrderedDict
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from vcore.routing import estimate_tokens, hash_prompt
from vcore.sim.llm import DEFAULT_PRESET, FIRST_TOKEN, PRESETS, EngineEvent, SimRequest, SimulatedEngine
from vcore_router.request import RequestError, parse_request

BLOCK_BYTES = 64  # 16 tokens of text: vLLM's default KV block
TTFT_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
ITL_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.015,
    0.02,
    0.025,
    0.03,
    0.04,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
)
MAX_MODEL_LEN = 131072  # Llama 3.1's context, in tokens


def bad_request(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(
        text=json.dumps({"error": {"message": message, "type": "BadRequestError", "code": 400}}),
        content_type="application/json",
    )


class EngineSim:
    def __init__(
        self,
        model: str = "sim-model",
        preset: str = DEFAULT_PRESET,
        role: str = "both",
        max_loras: int = 4,
        lora_load_ms: float = 200.0,
        time_scale: float = 1.0,
        name: str = "engine",
        default_max_tokens: int = 16,
        max_model_len: int = MAX_MODEL_LEN,
    ):
        if preset not in PRESETS:
            raise ValueError(f"preset: unknown {preset!r}; expected one of {', '.join(PRESETS)}")
        if not time_scale > 0:
            raise ValueError("time_scale: must be > 0")
        self.model = model
        self.role = role
        self.name = name
        self.engine = SimulatedEngine(PRESETS[preset], BLOCK_BYTES // 4, name)
        self.time_scale = time_scale
        self.max_loras = max_loras
        self.lora_load_s = lora_load_ms / 1000.0
        self.loras: OrderedDict[str, int] = OrderedDict()  # loaded adapter -> requests using it
        self.default_max_tokens = default_max_tokens
        self.max_model_len = max_model_len
        self.fault: dict[str, Any] = {"mode": "none"}
        self._t0 = time.monotonic()
        self._ids = itertools.count()
        self._wake = asyncio.Event()
        self._waiters: dict[int, asyncio.Future] = {}
        self._task: asyncio.Task | None = None
        reg = self.registry = CollectorRegistry()
        label = ["model_name"]
        self.m_running = Gauge("vllm:num_requests_running", "Requests in model execution batches.", label, registry=reg)
        self.m_waiting = Gauge("vllm:num_requests_waiting", "Requests waiting to be processed.", label, registry=reg)
        self.m_kv = Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", label, registry=reg)
        self.m_ttft = Histogram(
            "vllm:time_to_first_token_seconds", "Time to first token.", label, buckets=TTFT_BUCKETS, registry=reg
        )
        self.m_itl = Histogram(
            "vllm:inter_token_latency_seconds", "Inter-token latency.", label, buckets=ITL_BUCKETS, registry=reg
        )
        self.m_prompt = Counter("vllm:prompt_tokens", "Prefill tokens processed.", label, registry=reg)
        self.m_gen = Counter("vllm:generation_tokens", "Generation tokens processed.", label, registry=reg)
        self.m_hits = Counter("vllm:prefix_cache_hits", "Prefix cache hits, in tokens.", label, registry=reg)
        self.m_queries = Counter("vllm:prefix_cache_queries", "Prefix cache queries, in tokens.", label, registry=reg)
        self.m_lora = Gauge(
            "vllm:lora_requests_info",
            "Running stats on lora requests.",
            ["running_lora_adapters", "max_lora", "waiting_lora_adapters"],
            registry=reg,
        )

    # ------------------------------------------------------------------------------------------ model clock
    def now(self) -> float:
        return (time.monotonic() - self._t0) / self.time_scale

    def _wall_delay(self, model_seconds: float) -> float:
        return max(model_seconds, 0.0) * self.time_scale

    def _deliver(self, events: list[EngineEvent]) -> None:
        """Every event the model produced, whoever advanced it, resolves the waiting handler's future."""
        for ev in events:
            fut = self._waiters.get(ev.request.rid)
            if ev.kind == FIRST_TOKEN:
                self.m_ttft.labels(self.model).observe(ev.request.ttft)
            if fut is not None and not fut.done():
                fut.set_result(ev.kind)

    def advance(self) -> None:
        self._deliver(self.engine.advance(self.now()))

    async def run(self) -> None:
        """Advance the model with the wall clock; resolve first-token / finish futures as events happen."""
        while True:
            self.advance()
            nxt = self.engine.next_event_time()
            self._wake.clear()
            timeout = None if math.isinf(nxt) else self._wall_delay(nxt - self.now())
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _wait(self, request: SimRequest, kind: str) -> None:
        while True:
            done = request.first_token if kind == FIRST_TOKEN else request.finished
            if not math.isnan(done):
                return
            fut = asyncio.get_running_loop().create_future()
            self._waiters[request.rid] = fut
            try:
                await fut
            finally:
                self._waiters.pop(request.rid, None)

    # ------------------------------------------------------------------------------------------------ LoRA
    async def _use_lora(self, name: str) -> None:
        if name in self.loras:
            self.loras.move_to_end(name)
            self.loras[name] += 1
            return
        if len(self.loras) >= self.max_loras:
            idle = next((a for a, n in self.loras.items() if n == 0), None)
            if idle is None:
                raise web.HTTPServiceUnavailable(
                    text=json.dumps({"error": {"message": "no free LoRA slot"}}), content_type="application/json"
                )
            del self.loras[idle]
        self.loras[name] = 1
        await asyncio.sleep(self._wall_delay(self.lora_load_s))

    def _lora_metric(self) -> None:
        self.m_lora.clear()
        running = ",".join(a for a, n in self.loras.items() if n > 0)
        self.m_lora.labels(running, str(self.max_loras), "").set(time.time())

    # -------------------------------------------------------------------------------------------- handlers
    async def models(self, request: web.Request) -> web.Response:
        data = [{"id": self.model, "object": "model", "owned_by": "vcore-sim"}]
        data += [{"id": a, "object": "model", "owned_by": "vcore-sim", "parent": self.model} for a in self.loras]
        return web.json_response({"object": "list", "data": data})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def metrics(self, request: web.Request) -> web.Response:
        self.advance()
        self.m_running.labels(self.model).set(self.engine.n_running)
        self.m_waiting.labels(self.model).set(self.engine.n_waiting)
        self.m_kv.labels(self.model).set(min(self.engine.kv.usage, 1.0))
        self._lora_metric()
        return web.Response(body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def set_fault(self, request: web.Request) -> web.Response:
        self.fault = await request.json()
        return web.json_response(self.fault)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def _generate(self, request: web.Request, chat: bool) -> web.StreamResponse:
        if self.fault.get("mode") == "refuse":
            raise web.HTTPServiceUnavailable(text="engine refusing requests (fault injection)")
        try:
            req = parse_request(await request.read(), chat, kv_transfer=True)
        except RequestError as e:
            raise bad_request(str(e)) from None
        body, text, model = req.body, req.text, req.model
        lora = None if model == self.model else model
        if lora is not None:
            if self.max_loras <= 0:
                raise web.HTTPNotFound(
                    text=json.dumps({"error": {"message": f"model {model!r} not served"}}),
                    content_type="application/json",
                )
            await self._use_lora(lora)
        try:
            return await self._serve(request, body, text, chat, model, lora)
        finally:
            if lora is not None and lora in self.loras:
                self.loras[lora] -= 1

    async def _serve(
        self, request: web.Request, body: dict[str, Any], text: str, chat: bool, model: str, lora: str | None
    ) -> web.StreamResponse:
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or self.default_max_tokens
        kv_params = body.get("kv_transfer_params") or {}
        prompt_tokens = estimate_tokens(text)
        if prompt_tokens + max_tokens > self.max_model_len:
            raise bad_request(
                f"This model's maximum context length is {self.max_model_len} tokens. However, you "
                f"requested {prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
                f"{max_tokens} in the completion). Please reduce the length of the messages or "
                f"completion."
            )
        hashes = [int(h) for h in hash_prompt(text, BLOCK_BYTES, salt=lora or self.model)]
        if self.role == "prefill":
            max_tokens = 1
        rid = next(self._ids)
        sim = SimRequest(rid, self.now(), prompt_tokens, max_tokens, hashes)
        if self.role == "decode" and kv_params.get("do_remote_prefill"):
            # The prefill engine computed these blocks; here they arrive over the KV transfer and count as cached
            # (when the cache has room for them now).
            received = kv_params.get("remote_block_ids") or []
            if not isinstance(received, list) or not all(
                isinstance(h, int) and not isinstance(h, bool) for h in received
            ):
                raise bad_request("kv_transfer_params.remote_block_ids: must be a list of block ids")
            if self.engine.kv.can_allocate(received, 0):
                self.engine.kv.allocate(received, 0)
                self.engine.kv.release(received, 0)
        self._deliver(self.engine.submit(sim, self.now()))
        self._wake.set()
        self.m_queries.labels(self.model).inc(prompt_tokens)
        stream = bool(body.get("stream"))
        created = int(time.time())
        cid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        obj = "chat.completion" if chat else "text_completion"
        await self._wait(sim, FIRST_TOKEN)
        self.m_hits.labels(self.model).inc(sim.cached_tokens)
        self.m_prompt.labels(self.model).inc(max(prompt_tokens - sim.cached_tokens, 0))

        def piece(i: int) -> str:
            return f" tok{i}"

        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": max_tokens,
            "total_tokens": prompt_tokens + max_tokens,
            "prompt_tokens_details": {"cached_tokens": sim.cached_tokens},
        }
        transfer = None
        if self.role == "prefill":
            transfer = {
                "do_remote_prefill": True,
                "do_remote_decode": False,
                "remote_block_ids": hashes,
                "remote_engine_id": self.name,
                "remote_host": request.host,
                "remote_port": None,
            }
        if not stream:
            await self._wait(sim, "finished")
            self.m_gen.labels(self.model).inc(max_tokens)
            self._observe_itl(sim)
            content = "".join(piece(i) for i in range(max_tokens))
            choice = (
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}
                if chat
                else {"index": 0, "text": content, "finish_reason": "length", "logprobs": None}
            )
            out = {"id": cid, "object": obj, "created": created, "model": model, "choices": [choice], "usage": usage}
            if transfer is not None:
                out["kv_transfer_params"] = transfer
            return web.json_response(out)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        try:  # the client may go away at any write: the handler ends quietly
            await resp.prepare(request)
            sent = 0
            fail_after = self.fault.get("after_tokens", 2) if self.fault.get("mode") == "midstream" else None
            chunk_obj = "chat.completion.chunk" if chat else "text_completion"
            while sent < max_tokens:
                self.advance()
                produced = self.engine.tokens_generated(sim)
                while sent < produced:
                    if fail_after is not None and sent >= fail_after:
                        if request.transport is not None:  # the engine dies mid-stream: no final chunk, no [DONE]
                            request.transport.close()
                        return resp
                    delta = {"content": piece(sent)} if chat else None
                    choice = (
                        {"index": 0, "delta": delta, "finish_reason": None}
                        if chat
                        else {"index": 0, "text": piece(sent), "finish_reason": None}
                    )
                    if sent == max_tokens - 1:
                        choice["finish_reason"] = "length"
                    chunk = {"id": cid, "object": chunk_obj, "created": created, "model": model, "choices": [choice]}
                    await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    sent += 1
                if sent < max_tokens:
                    await asyncio.sleep(self._wall_delay(max(self.engine.step_seconds(), 1e-4)))
            await self._wait(sim, "finished")
            self.m_gen.labels(self.model).inc(max_tokens)
            self._observe_itl(sim)
            if (body.get("stream_options") or {}).get("include_usage"):
                tail = {
                    "id": cid,
                    "object": chunk_obj,
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
                await resp.write(f"data: {json.dumps(tail)}\n\n".encode())
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
            return resp
        except ConnectionError:
            return resp

    def _observe_itl(self, sim: SimRequest) -> None:
        if sim.output_tokens > 1:
            self.m_itl.labels(self.model).observe((sim.finished - sim.first_token) / (sim.output_tokens - 1))


def make_app(sim: EngineSim) -> web.Application:
    app = web.Application(client_max_size=64 * 2**20)
    app.router.add_post("/v1/completions", sim.completions)
    app.router.add_post("/v1/chat/completions", sim.chat)
    app.router.add_get("/v1/models", sim.models)
    app.router.add_get("/health", sim.health)
    app.router.add_get("/metrics", sim.metrics)
    app.router.add_post("/sim/fault", sim.set_fault)

    async def on_startup(app: web.Application) -> None:
        sim.start()

    async def on_cleanup(app: web.Application) -> None:
        await sim.stop()

    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m vcore_router.engine_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--model", default="sim-model")
    ap.add_argument("--preset", default=DEFAULT_PRESET, choices=sorted(PRESETS))
    ap.add_argument("--role", default="both", choices=["both", "prefill", "decode"])
    ap.add_argument("--max-loras", type=int, default=4)
    ap.add_argument("--lora-load-ms", type=float, default=200.0)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--max-model-len", type=int, default=MAX_MODEL_LEN)
    ap.add_argument("--name", default=None)
    args = ap.parse_args(argv)
    sim = EngineSim(
        args.model,
        args.preset,
        args.role,
        args.max_loras,
        args.lora_load_ms,
        args.time_scale,
        args.name or f"engine-{args.port}",
        max_model_len=args.max_model_len,
    )
    web.run_app(make_app(sim), host=args.host, port=args.port, print=None)


if __name__ == "__main__":
    main()
