"""Fuzzing the router's two inputs with hypothesis: its configuration and its clients' request bodies.

Configurations are mutations of valid ones (a value replaced by one of the wrong type, NaN or infinity, a huge or
negative number, garbage nested in lists and mappings; a key deleted or added; a value wrapped in a list): the
parser returns a configuration the router can be built from, or raises ConfigError -- never anything else.

Bodies go to a running router (on loopback, in front of the simulated engine): valid chat and completion
requests get a 2xx; one field the router reads made invalid gets a 400 naming that field; an output bound the
engine cannot give gets the engine's 400; random JSON, random bytes and cut-off JSON get a 4xx. Never a 5xx, never
a dropped connection; and afterwards the router is as it was: every request counted, nothing in flight, the
engine healthy.

Deterministic (derandomized) and bounded, for CI: about a quarter of a minute on a shared 2-core machine.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import time

import aiohttp
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from tests.router.conftest import read_metrics
from vcore_router.config import ConfigError, parse_config
from vcore_router.server import RouterApp

FUZZ = settings(
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

# ------------------------------------------------------------------------------------------------ values
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
NASTY = st.one_of(
    st.none(),
    st.booleans(),
    st.just(0),
    st.just(-1),
    st.just(2**31),
    st.just(2**64),
    st.just(10**30),
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.just(1e308),
    st.just(-0.0),
    st.just(""),
    st.just("http://127.0.0.1:99999"),
    st.just("redis://:0/x"),
    st.just("1m30s"),
    st.just("ä/b/c"),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
)
GARBAGE = st.recursive(
    NASTY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


def _paths(tree, prefix: tuple = ()) -> list[tuple]:
    """Every position in a JSON tree (keys and indexes from the root)."""
    out = []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for key, child in items:
        out.append(prefix + (key,))
        out += _paths(child, prefix + (key,))
    return out


def _at(tree, path: tuple):
    for key in path:
        tree = tree[key]
    return tree


@st.composite
def mutated(draw, base: dict) -> dict:
    """``base`` with one to three mutations, each at a position drawn from the tree as it is by then."""
    tree = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(tree)))
        parent, key = _at(tree, path[:-1]), path[-1]
        kind = draw(st.sampled_from(["replace", "replace", "delete", "extra", "wrap"]))
        if kind == "replace":
            parent[key] = draw(GARBAGE)
        elif kind == "delete":
            del parent[key]
        elif kind == "extra" and isinstance(parent[key], dict):
            parent[key][draw(st.text(min_size=1, max_size=8))] = draw(GARBAGE)
        else:
            parent[key] = [parent[key]]
    return tree


# ---------------------------------------------------------------------------------------------- configs
STATIC = {
    "router": {
        "policy": "vcore",
        "scrapeIntervalSeconds": 0.5,
        "unhealthyAfterFailures": 2,
        "maxBodyBytes": 65536,
        "retries": 2,
        "blockBytes": 64,
        "prefixCapacityBlocks": 1000,
        "requestTimeoutSeconds": 600,
        "seed": 7,
    },
    "redis": {"url": "redis://127.0.0.1:6379/0"},
    "modelServers": [
        {
            "name": "p",
            "model": "m",
            "inferenceEngine": "vLLM",
            "tokensPerSecondPerReplica": 20000,
            "prefillTokensPerSecond": 10000,
            "prefillOverheadSeconds": 0.01,
            "pdMinPromptTokens": 0,
            "endpoints": [
                {"name": "e0", "url": "http://127.0.0.1:8001", "role": "both", "maxLoras": 4},
                {"name": "e1", "url": "https://10.0.0.2:8443/engine"},
            ],
        }
    ],
    "modelRoutes": [
        {
            "modelName": "llama",
            "loraAdapters": ["sql-lora"],
            "rules": [{"name": "r", "targetModels": [{"modelServerName": "p", "weight": 100}]}],
            "rateLimit": {"inputTokensPerUnit": 1000, "outputTokensPerUnit": 100, "unit": "minute"},
        }
    ],
}
DOCUMENTS = {
    "router": {"policy": {"name": "kthena", "max_waiting": 5, "w_prefix": 2.0}},
    "modelServers": [
        {
            "apiVersion": "networking.serving.volcano.sh/v1alpha1",
            "kind": "ModelServer",
            "metadata": {"name": "pd", "namespace": "default"},
            "spec": {
                "model": "m",
                "inferenceEngine": "SGLang",
                "endpoints": [
                    {
                        "name": "pre",
                        "url": "http://127.0.0.1:8001",
                        "role": "prefill",
                        "pdGroup": "g",
                        "domain": "rack-a",
                    },
                    {
                        "name": "dec",
                        "url": "http://127.0.0.1:8002",
                        "role": "decode",
                        "pdGroup": "g",
                        "domain": "rack-a",
                    },
                ],
            },
        }
    ],
    "modelRoutes": [
        {
            "kind": "ModelRoute",
            "metadata": {"name": "route"},
            "spec": {"modelName": "m", "rules": [{"targetModels": [{"modelServerName": "pd"}]}]},
        }
    ],
}
SELECTOR = {
    "modelServers": [
        {
            "name": "s",
            "model": "m",
            "workloadPort": {"port": 8000, "protocol": "http"},
            "workloadSelector": {
                "namespace": "llm",
                "matchLabels": {"app": "llm"},
                "maxLoras": 2,
                "domainLabel": "topology.kubernetes.io/zone",
                "pdGroup": {"groupKey": "pd", "prefillLabels": {"role": "prefill"}, "decodeLabels": {"role": "decode"}},
            },
        }
    ],
    "modelRoutes": [{"modelName": "m", "rules": [{"targetModels": [{"modelServerName": "s"}]}]}],
}


def test_the_fuzzed_configurations_are_valid_before_mutation():
    for base in (STATIC, DOCUMENTS, SELECTOR):
        parse_config(copy.deepcopy(base))


def test_fuzzed_configurations_are_accepted_or_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # discovery finds no credentials: a ConfigError
    missing_kubeconfig = str(tmp_path / "missing.kubeconfig")
    outcomes = {"accepted": 0, "refused": 0}

    @settings(FUZZ, max_examples=1000)
    @given(raw=st.sampled_from([STATIC, DOCUMENTS, SELECTOR]).flatmap(mutated))
    def one(raw):
        try:
            config = parse_config(raw)
            RouterApp(config, kubeconfig=missing_kubeconfig)  # the routing core takes every value it was given
        except ConfigError as e:
            assert ": " in str(e), str(e)  # "<path>: <problem>"
            outcomes["refused"] += 1
            return
        outcomes["accepted"] += 1
        assert math.isfinite(config.scrape_interval_s) and 0 < config.scrape_interval_s <= 3600
        assert math.isfinite(config.request_timeout_s) and 0 < config.request_timeout_s <= 86400

    one()
    assert outcomes["accepted"] and outcomes["refused"]  # the mutations reach both sides


# ------------------------------------------------------------------------------------------------ bodies
ROLES = ("system", "user", "assistant")
TEXT = st.text(max_size=40)


def _content():
    parts = st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, TEXT),
            st.just({"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}),
        ),
        max_size=3,
    )
    return st.one_of(TEXT, parts, st.none())


def _extras():
    """Fields the router relays untouched (an engine ignores what it does not know)."""
    names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).map(lambda n: "x_" + n)
    return st.dictionaries(names, JSON, max_size=2)


@st.composite
def valid_body(draw) -> dict:
    chat = draw(st.booleans())
    body: dict = {"model": "llama"}
    if chat:
        body["messages"] = draw(
            st.lists(
                st.fixed_dictionaries({"role": st.sampled_from(ROLES), "content": _content()}), min_size=1, max_size=3
            )
        )
    else:
        body["prompt"] = draw(TEXT | st.lists(TEXT, max_size=3))
    if draw(st.booleans()):
        body["stream"] = draw(st.booleans())
        if body["stream"] and draw(st.booleans()):
            body["stream_options"] = {"include_usage": draw(st.booleans())}
    bound = draw(st.sampled_from(["max_tokens", "max_completion_tokens", None]))
    if bound:
        body[bound] = draw(st.integers(1, 3))
    else:
        body["max_tokens"] = None  # null: the engine's default (16)
    if draw(st.booleans()):
        body["temperature"] = draw(st.floats(0, 2))
    body.update(draw(_extras()))
    return body


NOT_STRING = JSON.filter(lambda v: not isinstance(v, str))
NOT_NONEMPTY_STRING = JSON.filter(lambda v: not (isinstance(v, str) and v))
NOT_LIST_OR_STRING = JSON.filter(lambda v: not isinstance(v, (list, str)) and v is not None)
NOT_OBJECT = JSON.filter(lambda v: not isinstance(v, dict))
NOT_BOOL = JSON.filter(lambda v: not isinstance(v, bool) and v is not None)
NOT_OBJECT_OR_NULL = JSON.filter(lambda v: not isinstance(v, dict) and v is not None)
BAD_BOUND = st.one_of(
    st.integers(max_value=0),
    st.integers(min_value=2**31),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.booleans(),
    st.lists(SCALARS, max_size=2),
)


@st.composite
def invalid_body(draw) -> tuple[dict, str]:
    """A valid body with one field the router reads made invalid, and that field's path."""
    body = draw(valid_body())
    chat = "messages" in body
    fields = ["model", "model-missing", "stream", "bound", "stream_options"]
    fields += (
        ["messages", "messages-empty", "message", "role", "content", "part", "type", "text"]
        if chat
        else ["prompt", "prompt-item"]
    )
    field = draw(st.sampled_from(fields))
    i = draw(st.integers(0, len(body["messages"]) - 1)) if chat else 0
    message = body["messages"][i] if chat else None
    if field == "model":
        body["model"] = draw(NOT_NONEMPTY_STRING)
        return body, "model"
    if field == "model-missing":
        del body["model"]
        return body, "model"
    if field == "stream":
        body["stream"] = draw(NOT_BOOL)
        return body, "stream"
    if field == "bound":
        key = draw(st.sampled_from(["max_tokens", "max_completion_tokens"]))
        body.pop("max_tokens", None), body.pop("max_completion_tokens", None)
        body[key] = draw(BAD_BOUND)
        return body, key
    if field == "stream_options":
        options = draw(NOT_OBJECT_OR_NULL | st.builds(lambda v: {"include_usage": v}, NOT_BOOL))
        body["stream_options"] = options
        return body, "stream_options.include_usage" if isinstance(options, dict) else "stream_options"
    if field == "prompt":
        body["prompt"] = draw(NOT_LIST_OR_STRING)
        return body, "prompt"
    if field == "prompt-item":
        items = draw(st.lists(TEXT, max_size=2))
        at = draw(st.integers(0, len(items)))
        body["prompt"] = items[:at] + [draw(NOT_STRING)] + items[at:]
        return body, f"prompt[{at}]"
    if field == "messages":
        body["messages"] = draw(JSON.filter(lambda v: not isinstance(v, list)))
        return body, "messages"
    if field == "messages-empty":
        body["messages"] = []
        return body, "messages"
    if field == "message":
        body["messages"][i] = draw(NOT_OBJECT)
        return body, f"messages[{i}]"
    if field == "role":
        if draw(st.booleans()):
            del message["role"]
        else:
            message["role"] = draw(NOT_NONEMPTY_STRING)
        return body, f"messages[{i}].role"
    if field == "content":
        message["content"] = draw(NOT_LIST_OR_STRING)
        return body, f"messages[{i}].content"
    parts = message["content"] = [
        {"type": "text", "text": "x"},
        *draw(st.lists(st.builds(lambda t: {"type": "text", "text": t}, TEXT), max_size=2)),
    ]
    j = draw(st.integers(0, len(parts) - 1))
    if field == "part":
        parts[j] = draw(NOT_OBJECT)
        return body, f"messages[{i}].content[{j}]"
    if field == "type":
        parts[j]["type"] = draw(NOT_NONEMPTY_STRING)
        return body, f"messages[{i}].content[{j}].type"
    if draw(st.booleans()):
        del parts[j]["text"]
    else:
        parts[j]["text"] = draw(NOT_STRING)
    return body, f"messages[{i}].content[{j}].text"


def _not_a_route(raw: bytes) -> bool:
    """Random input that happens to be a valid request would be answered: keep only what names no route."""
    try:
        value = json.loads(raw)
    except ValueError:
        return True
    return not (isinstance(value, dict) and value.get("model") == "llama")


GARBAGE_BODY = st.one_of(
    JSON.map(lambda v: json.dumps(v).encode()),
    GARBAGE.map(lambda v: json.dumps(v).encode()),  # NaN and Infinity as JavaScript writes them
    st.binary(max_size=64),
    st.builds(lambda body, cut: json.dumps(body).encode()[:cut], valid_body(), st.integers(0, 40)),
).filter(_not_a_route)

# (what to send, the answer's class: "ok" | "bad" (the router's 400 naming param) | "refused" (a 4xx), param)
CASES = st.one_of(
    valid_body().map(lambda b: (json.dumps(b).encode(), "chat" if "messages" in b else "completion", "ok", None)),
    invalid_body().map(
        lambda bp: (json.dumps(bp[0]).encode(), "chat" if "messages" in bp[0] else "completion", "bad", bp[1])
    ),
    st.builds(
        lambda b, n: (
            json.dumps({**b, "max_tokens": n, "max_completion_tokens": None}).encode(),
            "chat" if "messages" in b else "completion",
            "refused",
            None,
        ),
        valid_body(),
        st.integers(200_000, 2**31 - 1),
    ),  # beyond the engine's context: its 400
    st.builds(lambda raw, chat: (raw, "chat" if chat else "completion", "refused", None), GARBAGE_BODY, st.booleans()),
)


@pytest.fixture(scope="module")
def fuzzed_router(engines, loop):
    engine = engines.start("fuzz", time_scale=0.001)
    url, core = loop.start_router(
        {
            "router": {"scrapeIntervalSeconds": 3600, "maxBodyBytes": 65536},
            "modelServers": [{"name": "pool", "model": "sim-model", "endpoints": [{"name": "e0", "url": engine}]}],
            "modelRoutes": [{"modelName": "llama", "rules": [{"targetModels": [{"modelServerName": "pool"}]}]}],
        },
        handler_cancellation=True,
    )
    yield url, core
    loop.stop_router(url)


def test_fuzzed_bodies_get_a_2xx_or_a_4xx_and_leave_the_router_as_it_was(fuzzed_router, loop):
    url, core = fuzzed_router
    counted_before = sum(v for (name, _), v in read_metrics(url).items() if name == "vcore_router_requests_total")
    sent = {"ok": 0, "bad": 0, "refused": 0}

    async def send(raw: bytes, kind: str) -> tuple[int, bytes]:
        # A new connection each time: a dropped one is the router's doing, never a stale keep-alive.
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
            path = "/v1/chat/completions" if kind == "chat" else "/v1/completions"
            async with session.post(
                url + path,
                data=raw,
                headers={"Content-Type": "application/json"},
                timeout=aiohttp.ClientTimeout(total=30),
            ) as resp:
                return resp.status, await resp.read()

    async def settled() -> bool:
        # The client may have the last byte of a stream before the router's handler has returned.
        for _ in range(500):
            if core.router.n_in_flight == 0:
                return True
            await asyncio.sleep(0.01)
        return False

    @settings(FUZZ, max_examples=500)
    @given(case=CASES)
    def one(case):
        raw, kind, expected, param = case
        status, answer = loop.run(send(raw, kind))
        sent[expected] += 1
        if expected == "ok":
            assert 200 <= status < 300, (status, answer)
            if json.loads(raw).get("stream"):
                assert answer.rstrip().endswith(b"data: [DONE]"), answer[-200:]
            else:
                assert json.loads(answer)["choices"], answer
        else:
            assert 400 <= status < 500, (status, answer)
            error = json.loads(answer)["error"]
            if expected == "bad":
                assert status == 400 and error["param"] == param, (param, error)
                assert error["message"].startswith(f"{param}: "), error["message"]
        assert loop.run(settled()), "a request is still counted in flight"
        assert core.router.state()["healthy"].all()

    started = time.monotonic()
    one()
    assert all(sent.values()), sent  # every class of body was sent
    metrics = read_metrics(url)
    counted = sum(v for (name, _), v in metrics.items() if name == "vcore_router_requests_total")
    assert counted - counted_before == sum(sent.values())
    assert core.health.failures("e0") == 0
    assert metrics["vcore_router_requests_in_flight", ()] == 0
    assert metrics["vcore_router_queue_depth", (("model", "llama"),)] == 0
    assert metrics["vcore_router_endpoint_healthy", (("endpoint", "e0"),)] == 1
    assert not any(
        name == "vcore_router_requests_total" and dict(labels)["status"].startswith("5") for (name, labels) in metrics
    )
    assert time.monotonic() - started < 120  # generous: the budget is ~15 s, a loaded machine is slower
