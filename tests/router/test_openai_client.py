"""The router with the official openai client in front of simulated engines (loopback): chat and completions,
streaming and not, models, LoRA routing, PD pairs, session affinity, 429, retries on a dead endpoint, mid-stream
failure, bad requests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

openai = pytest.importorskip("openai", reason="the openai client (test extra) is not installed")

from tests.router.conftest import refusing_port  # noqa: E402


def route_config(endpoints, **router):
    return {
        "router": {"scrapeIntervalSeconds": 0.1, **router},
        "modelServers": [{"name": "pool", "model": "sim-model", "endpoints": endpoints}],
        "modelRoutes": [
            {
                "modelName": "llama",
                "loraAdapters": ["sql-lora"],
                "rules": [{"targetModels": [{"modelServerName": "pool"}]}],
            }
        ],
    }


@pytest.fixture(scope="module")
def basic(engines, loop):
    urls = [engines.start(f"b{i}") for i in range(3)]
    url, core = loop.start_router(
        route_config([{"name": f"b{i}", "url": u, "maxLoras": 2} for i, u in enumerate(urls)])
    )
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0), url, core


def test_chat_and_completion(basic):
    client, _, _ = basic
    r = client.chat.completions.create(model="llama", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
    assert r.choices[0].message.content.count("tok") == 5 and r.usage.completion_tokens == 5
    c = client.completions.create(model="llama", prompt="Once upon a time", max_tokens=3)
    assert c.choices[0].text.count("tok") == 3
    assert {m.id for m in client.models.list()} == {"llama", "sql-lora"}


def test_streaming_chunks_pass_through(basic):
    client, _, _ = basic
    stream = client.chat.completions.create(
        model="llama", messages=[{"role": "user", "content": "count"}], max_tokens=6, stream=True
    )
    pieces = [ch.choices[0].delta.content for ch in stream if ch.choices and ch.choices[0].delta.content]
    assert len(pieces) == 6
    stream = client.completions.create(model="llama", prompt="abc", max_tokens=4, stream=True)
    assert sum(1 for ch in stream if ch.choices and ch.choices[0].text) == 4


def test_prefix_affinity_and_session(basic):
    client, _, core = basic
    system = "You are a careful assistant. " * 60
    for i in range(4):
        client.chat.completions.create(
            model="llama",
            max_tokens=2,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": f"q{i}"}],
            extra_headers={"X-Session-ID": "agent-7"},
        )
    ep = core.router.session_endpoint("agent-7")
    assert ep is not None
    state = core.router.state()
    assert state["prefix_blocks"][core.router.slot(ep)] > 0


def test_lora_routing(basic):
    client, _, core = basic
    r = client.chat.completions.create(model="sql-lora", messages=[{"role": "user", "content": "select"}], max_tokens=2)
    assert r.model == "sql-lora"


def test_bad_requests(basic):
    client, url, _ = basic
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="llama", messages=[])

    def post(data: bytes) -> int:
        req = urllib.request.Request(
            url + "/v1/chat/completions", data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code

    assert post(b"{not json") == 400
    assert post(json.dumps({"model": "llama", "prompt": "x" * (5 * 2**20)}).encode()) == 413


def test_retry_on_a_dead_endpoint(engines, loop):
    live = engines.start("r-live")
    with refusing_port() as port:
        dead = f"http://127.0.0.1:{port}"
        # One scrape (at start) and no more: scrapes every 0.1 s would mark the dead endpoint unhealthy after two,
        # and on a busy machine before any request reached it (then nothing is retried).
        url, core = loop.start_router(
            route_config(
                [{"name": "dead", "url": dead}, {"name": "live", "url": live}],
                policy="round-robin",
                retries=2,
                scrapeIntervalSeconds=3600,
            )
        )
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        for i in range(4):
            r = client.completions.create(model="llama", prompt=f"p{i}", max_tokens=2)
            assert r.choices[0].text
    assert core.metrics.retries.labels("llama")._value.get() >= 1


def test_mid_stream_failure_ends_with_an_error_event(engines, loop):
    u = engines.start("m0")
    urllib.request.urlopen(
        urllib.request.Request(
            u + "/sim/fault",
            data=json.dumps({"mode": "midstream", "after_tokens": 2}).encode(),
            headers={"Content-Type": "application/json"},
        ),
        timeout=5,
    )
    url, _ = loop.start_router(route_config([{"name": "m0", "url": u}]))
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    got = []
    with pytest.raises(openai.APIError, match="mid-stream|ended the stream"):
        for ch in client.chat.completions.create(
            model="llama", messages=[{"role": "user", "content": "x"}], max_tokens=8, stream=True
        ):
            got.append(ch)
    assert len(got) == 2


def test_rate_limit_429_with_retry_after(engines, loop):
    u = engines.start("l0")
    cfg = route_config([{"name": "l0", "url": u}])
    cfg["modelRoutes"][0]["rateLimit"] = {"inputTokensPerUnit": 100, "unit": "minute"}
    url, _ = loop.start_router(cfg)
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    client.completions.create(model="llama", prompt="x" * 300, max_tokens=1)  # 75 tokens of 100
    with pytest.raises(openai.RateLimitError) as err:
        client.completions.create(model="llama", prompt="x" * 300, max_tokens=1)
    assert int(err.value.response.headers["Retry-After"]) >= 1


def test_pd_pair_passes_kv_transfer_params(engines, loop):
    p = engines.start("pd-prefill", role="prefill")
    d = engines.start("pd-decode", role="decode")
    url, core = loop.start_router(
        route_config(
            [
                {"name": "prefill", "url": p, "role": "prefill", "pdGroup": "g", "domain": "rack-a"},
                {"name": "decode", "url": d, "role": "decode", "pdGroup": "g", "domain": "rack-a"},
            ]
        )
    )
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    r = client.chat.completions.create(
        model="llama", messages=[{"role": "user", "content": "long " * 400}], max_tokens=4
    )
    assert r.choices[0].message.content.count("tok") == 4
    # the decode engine got the prompt's blocks through the transfer: nearly all its prompt tokens were cached
    assert r.usage.prompt_tokens_details.cached_tokens >= r.usage.prompt_tokens - 16
    assert core.metrics.upstream.labels("prefill", "ok")._value.get() == 1
