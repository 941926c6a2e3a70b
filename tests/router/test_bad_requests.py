"""Malformed request bodies against a router in front of a simulated engine: each is a 400 whose OpenAI-style error
names the field at fault, never a 500; every request is counted in vcore_router_requests_total with the status it
got; the engine never sees a body the router refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.router.conftest import read_metrics

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def chat(*messages, **fields) -> dict:
    return {
        "model": "llama",
        "messages": list(messages) or [{"role": "user", "content": "hi"}],
        "max_tokens": 2,
        **fields,
    }


def user(content) -> dict:
    return {"role": "user", "content": content}


def post(url: str, data: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture(scope="module")
def router(engines, loop):
    engine = engines.start("bad-requests")
    url, core = loop.start_router(
        {
            "router": {"scrapeIntervalSeconds": 3600},
            "modelServers": [{"name": "pool", "model": "sim-model", "endpoints": [{"name": "e0", "url": engine}]}],
            "modelRoutes": [{"modelName": "llama", "rules": [{"targetModels": [{"modelServerName": "pool"}]}]}],
        }
    )
    return url, core


BAD_BODIES = [
    (
        "text-part-not-a-string",
        CHAT,
        chat(user([{"type": "text", "text": 5}])),
        "messages[0].content[0].text",
        "messages[0].content[0].text: must be a string, got an integer 5",
    ),
    ("text-part-without-text", CHAT, chat(user([{"type": "text"}])), "messages[0].content[0].text", "required"),
    ("part-not-an-object", CHAT, chat(user(["hi"])), "messages[0].content[0]", "must be a mapping"),
    ("part-without-type", CHAT, chat(user([{"text": "hi"}])), "messages[0].content[0].type", "must be a string"),
    ("content-a-number", CHAT, chat(user(7)), "messages[0].content", "must be a string or a list of content parts"),
    ("second-message-not-an-object", CHAT, chat(user("a"), "b"), "messages[1]", "must be a mapping"),
    ("message-without-role", CHAT, chat({"content": "hi"}), "messages[0].role", "required"),
    ("role-a-list", CHAT, chat({"role": ["user"], "content": "hi"}), "messages[0].role", "must be a string"),
    ("messages-empty", CHAT, {"model": "llama", "messages": []}, "messages", "must be a non-empty list"),
    ("messages-missing", CHAT, {"model": "llama"}, "messages", "required"),
    ("model-a-number", CHAT, {**chat(), "model": 3}, "model", "must be a string"),
    ("model-missing", COMPLETIONS, {"prompt": "x"}, "model", "required"),
    ("stream-a-string", CHAT, chat(stream="yes"), "stream", "must be true or false"),
    ("stream-options-a-number", CHAT, chat(stream=True, stream_options=1), "stream_options", "must be a mapping"),
    (
        "include-usage-a-string",
        CHAT,
        chat(stream=True, stream_options={"include_usage": "y"}),
        "stream_options.include_usage",
        "must be true or false",
    ),
    ("max-tokens-zero", CHAT, chat(max_tokens=0), "max_tokens", "must be in [1, 2147483647], got 0"),
    ("max-tokens-huge", CHAT, chat(max_tokens=10**30), "max_tokens", "must be in [1, 2147483647]"),
    (
        "max-tokens-a-float",
        COMPLETIONS,
        {"model": "llama", "prompt": "x", "max_tokens": 2.5},
        "max_tokens",
        "must be an integer",
    ),
    ("max-completion-tokens-negative", CHAT, chat(max_completion_tokens=-1), "max_completion_tokens", "must be in"),
    (
        "kv-transfer-from-a-client",
        CHAT,
        chat(kv_transfer_params={"do_remote_prefill": True}),
        "kv_transfer_params",
        "set by the router",
    ),
    ("prompt-token-ids", COMPLETIONS, {"model": "llama", "prompt": [1, 2]}, "prompt[0]", "must be a string"),
    ("prompt-an-object", COMPLETIONS, {"model": "llama", "prompt": {"text": "x"}}, "prompt", "must be a string"),
]


@pytest.mark.parametrize("path, body, param, message", [b[1:] for b in BAD_BODIES], ids=[b[0] for b in BAD_BODIES])
def test_a_malformed_body_is_a_400_naming_the_field(router, path, body, param, message):
    url, core = router
    before = core.metrics.requests.labels("", "400")._value.get()
    status, answer = post(url + path, json.dumps(body).encode())
    assert status == 400, answer
    error = answer["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error" and error["code"] == 400
    assert error["message"].startswith(f"{param}: ") and message in error["message"], error["message"]
    assert core.metrics.requests.labels("", "400")._value.get() == before + 1


NOT_JSON = [
    ("not-json", b"{not json", "the body is not valid JSON"),
    ("nan", b'{"model": "llama", "prompt": "x", "temperature": NaN}', "NaN is not a JSON number"),
    ("float-overflow", b'{"model": "llama", "prompt": "x", "temperature": 1e999}', "1e999 is out of range"),
    ("an-array", b'[{"model": "llama"}]', "the body must be a JSON object, got a list"),
    (
        "deeply-nested",
        b'{"model": "llama", "prompt": "x", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "the body nests deeper than",
    ),
    ("not-utf8", b'{"model": "llama", "prompt": "\xff"}', "not UTF-8"),
]


@pytest.mark.parametrize("data, message", [b[1:] for b in NOT_JSON], ids=[b[0] for b in NOT_JSON])
def test_a_body_that_is_not_strict_json_is_a_400(router, data, message):
    url, _ = router
    status, answer = post(url + COMPLETIONS, data)
    assert status == 400 and answer["error"]["param"] is None and message in answer["error"]["message"], answer


def test_every_request_is_counted_with_its_status(router):
    url, core = router

    def total() -> float:
        return sum(v for (name, _), v in read_metrics(url).items() if name == "vcore_router_requests_total")

    before = total()
    statuses = [
        post(url + CHAT, json.dumps(chat()).encode())[0],
        post(url + CHAT, json.dumps(chat(user([{"type": "text", "text": 5}]))).encode())[0],
        post(url + CHAT, json.dumps({**chat(), "model": "nope"}).encode())[0],
        post(url + COMPLETIONS, json.dumps({"model": "llama", "prompt": "x" * (5 * 2**20)}).encode())[0],
        post(url + COMPLETIONS, b"[]")[0],
    ]
    assert statuses == [200, 400, 404, 413, 400]
    assert total() == before + len(statuses)
    assert core.metrics.in_flight._value.get() == 0 and core.router.n_in_flight == 0


def test_a_prompt_beyond_the_engines_context_is_the_engines_400_not_its_failure(router):
    """425 k tokens: more than the simulated engine's context (and its whole KV cache). The engine refuses it as
    vLLM does, the router passes the 400 on, and the engine stays healthy and serving."""
    url, core = router
    status, answer = post(url + COMPLETIONS, json.dumps({"model": "llama", "prompt": "x" * 1_700_000}).encode())
    assert status == 400 and "maximum context length is 131072 tokens" in answer["error"]["message"], answer
    assert core.router.state()["healthy"].all()
    assert post(url + CHAT, json.dumps(chat()).encode())[0] == 200
