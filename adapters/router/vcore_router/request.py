"""A client's OpenAI request body: the one place that reads and checks it.

The router reads a few fields of a chat or completion request (the model, the messages or prompt, ``stream``, the
output token bound) and relays the rest to the engine untouched. Every field it reads, and every field it relays
that an engine reads with a fixed type (``stream_options``), is checked here against the OpenAI API's types; a
body that is not strict JSON (NaN, Infinity, numbers out of float range, nesting deeper than ``MAX_DEPTH``) is
refused too, so that whatever passes can be relayed. A bad body is a RequestError whose message says
``"<field>: <problem>"`` and whose ``param`` names the field as OpenAI's errors do (``messages[0].content[0].text``);
the server answers it with 400. The engine simulator checks its requests with the same function, as an OpenAI
server does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vcore.validation import Boolean, Check, Integer, String, join, mapping, type_name

MAX_DEPTH = 100  # nesting of objects and lists; deeper bodies could not be relayed (Python's recursion limit)


class RequestError(ValueError):
    """A malformed request body; ``param`` is the field at fault (None when the body as a whole is)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class ClientRequest:
    """A checked request body and what the router reads of it."""

    body: dict[str, Any]
    model: str
    text: str  # the prompt as one text: chat messages joined with their roles (what prefix affinity hashes)
    stream: bool
    max_tokens: int | None  # max_tokens, else max_completion_tokens; None when the client leaves it to the engine


def _error(path: str) -> Callable[[str], RequestError]:
    """The error class for one field: a RequestError naming it."""
    return lambda message: RequestError(message, path)


def _check(constraint: Check[Any], value: Any, path: str) -> Any:
    return constraint(value, path, _error(path))


_NONEMPTY = String(nonempty=True)
_OUTPUT_TOKENS = Integer(1, 2**31 - 1)


def _refuse_constant(name: str) -> float:
    raise RequestError(f"the body is not valid JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise RequestError(f"the body is not valid JSON: {text} is out of range")
    return number


def _depth_ok(value: Any) -> bool:
    """Whether objects and lists nest at most MAX_DEPTH deep (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_DEPTH:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


def _json_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object (strict JSON, at most MAX_DEPTH deep), or RequestError."""
    try:
        body = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise RequestError(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as e:
        raise RequestError(f"the body is not UTF-8 text: {e.reason} at byte {e.start}") from None
    except ValueError as e:  # JSONDecodeError, and integers longer than Python reads
        if isinstance(e, RequestError):
            raise
        raise RequestError(f"the body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise RequestError(f"the body must be a JSON object, got {type_name(body)}")
    if not _depth_ok(body):
        raise RequestError(f"the body nests deeper than {MAX_DEPTH} levels")
    return body


def _content_text(content: Any, path: str) -> str:
    """The text of a message's content: a string, null, or a list of parts whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise RequestError(f"{path}: must be a string or a list of content parts, got {type_name(content)}", path)
    texts = []
    for i, part in enumerate(content):
        where = join(path, i)
        _check(mapping, part, where)
        kind = _check(_NONEMPTY, part.get("type"), join(where, "type"))
        if kind == "text":
            if "text" not in part:
                raise RequestError(f"{join(where, 'text')}: required in a text part", join(where, "text"))
            texts.append(_check(String(), part["text"], join(where, "text")))
    return "".join(texts)


def _chat_text(messages: Any) -> str:
    if not isinstance(messages, list) or not messages:
        got = "an empty list" if messages == [] else type_name(messages)
        raise RequestError(f"messages: must be a non-empty list of messages, got {got}", "messages")
    parts = []
    for i, message in enumerate(messages):
        where = join("messages", i)
        _check(mapping, message, where)
        if "role" not in message:
            raise RequestError(f"{join(where, 'role')}: required", join(where, "role"))
        role = _check(_NONEMPTY, message["role"], join(where, "role"))
        parts.append(f"<|{role}|>{_content_text(message.get('content'), join(where, 'content'))}")
    return "\n".join(parts)


def _completion_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        for i, p in enumerate(prompt):
            if not isinstance(p, str):
                raise RequestError(
                    f"prompt[{i}]: must be a string (token ids are not routed), got {type_name(p)}", f"prompt[{i}]"
                )
        return "".join(prompt)
    raise RequestError(f"prompt: must be a string or a list of strings, got {type_name(prompt)}", "prompt")


def _optional(body: Mapping[str, Any], key: str, constraint: Check[Any]) -> Any:
    value = body.get(key)
    return None if value is None else _check(constraint, value, key)


def parse_request(raw: bytes, chat: bool, *, kv_transfer: bool = False) -> ClientRequest:
    """The checked body of a /v1/chat/completions (``chat``) or /v1/completions request, or RequestError.

    ``kv_transfer``: whether the body may carry ``kv_transfer_params`` (an engine's view: the router sets them on
    the legs of a prefill/decode pair; a client may not)."""
    body = _json_object(raw)
    if "model" not in body:
        raise RequestError("model: required", "model")
    model = _check(_NONEMPTY, body["model"], "model")
    if chat:
        if "messages" not in body:
            raise RequestError("messages: required", "messages")
        text = _chat_text(body["messages"])
    else:
        if "prompt" not in body:
            raise RequestError("prompt: required", "prompt")
        text = _completion_text(body["prompt"])
    stream = bool(_optional(body, "stream", Boolean()))
    options = _optional(body, "stream_options", mapping)
    if options is not None and options.get("include_usage") is not None:
        _check(Boolean(), options["include_usage"], "stream_options.include_usage")
    max_tokens = _optional(body, "max_tokens", _OUTPUT_TOKENS)
    max_completion = _optional(body, "max_completion_tokens", _OUTPUT_TOKENS)
    if "kv_transfer_params" in body:
        if not kv_transfer:
            raise RequestError(
                "kv_transfer_params: set by the router for prefill/decode pairs, not by clients", "kv_transfer_params"
            )
        _optional(body, "kv_transfer_params", mapping)
    return ClientRequest(body, model, text, stream, max_tokens if max_tokens is not None else max_completion)
