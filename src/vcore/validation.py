"""Declared constraints for user input, and the one error format vcore reports them in.

Every parser of user-written data (profiles and plugin arguments, the cycle configuration, queues, HyperNodes and
topology arguments, the adapters' configuration files) says what each field must be as a constraint and lets this
module check it, so that every bad value is reported the same way: the parser's error class, with the message
``"<path>: <problem>"`` where the path walks from the object the user wrote to the field
(``profiles[0].pluginConfig[2].args.coverage: must be in [0, 100], got 120``).

Constraints are small immutable objects; calling one checks a value and returns it normalized (a float for a
``Number``, a tuple for a ``ListOf``, a dict for a ``Record``)::

    WEIGHT = Integer(1, 100)
    ARGS = Record({"weight": WEIGHT, "policy": String(choices=("fgd", "vcore"))}, required=("policy",))
    args = ARGS(raw, "pluginConfig[0].args", ProfileError)

Numbers are always finite (``.nan`` and ``.inf`` from YAML are refused); ``true``/``false`` are never numbers.

A value of the wrong type is a TypeError when the caller asks for plain ValueErrors (the convention of the parsers
of Kubernetes objects), and the caller's own error class otherwise (a configuration reports one kind of error).
:func:`optional_mapping` and :func:`optional_list` read a field that Kubernetes leaves out (or writes null).
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import yaml

__all__ = [
    "ANY",
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "LABEL_KEY",
    "PORT",
    "Anything",
    "Boolean",
    "Check",
    "Constraint",
    "Duration",
    "Integer",
    "LabelKey",
    "ListOf",
    "MapOf",
    "NullsAbsent",
    "Number",
    "OneOf",
    "Record",
    "String",
    "fail",
    "fail_type",
    "go_parse_bool",
    "join",
    "load_yaml_file",
    "mapping",
    "optional_list",
    "optional_mapping",
    "type_name",
    "unknown_key",
]

T = TypeVar("T")
ErrorType = Callable[[str], Exception]
E = TypeVar("E", bound=Exception)
#: A check: ``check(value, path, error)`` returns the checked value or raises ``error("<path>: <problem>")``. A
#: Constraint is one; so is a function such as :func:`mapping`.
Check = Callable[[Any, str, ErrorType], T]


def join(path: str, key: str | int) -> str:
    """The path of a child field: ``a.b`` for a key, ``a[3]`` for an index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def type_name(value: Any) -> str:
    """A YAML user's name for a value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    return type(value).__name__


def fail(error: Callable[[str], E], path: str, problem: str) -> E:
    """The error to raise for a field: ``error("<path>: <problem>")``."""
    return error(f"{path}: {problem}" if path else problem)


def fail_type(error: ErrorType, path: str, problem: str) -> Exception:
    """The error for a value of the wrong type: a TypeError where the caller asked for plain ValueErrors (Python's
    convention for objects), else the caller's own error class (a configuration's one kind of error)."""
    return fail(TypeError if error is ValueError else error, path, problem)


class Constraint(Generic[T]):
    """What a field must be. ``constraint(value, path, error)`` returns the checked value or raises."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> T:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Anything(Constraint[Any]):
    """Any value: a key a Record allows whose value the caller checks itself."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> Any:
        return value


ANY = Anything()


@dataclass(frozen=True)
class Integer(Constraint[int]):
    """An integer (never a boolean) in [lo, hi]."""

    lo: int | None = None
    hi: int | None = None

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail_type(error, path, f"must be an integer, got {type_name(value)} {_shown(value)}")
        _check_range(value, self.lo, self.hi, path, error)
        return int(value)


@dataclass(frozen=True)
class Number(Constraint[float]):
    """A finite number (integer or float, never a boolean) in [lo, hi]; ``open_lo`` excludes lo."""

    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail_type(error, path, f"must be a number, got {type_name(value)} {_shown(value)}")
        number = _as_float(value)
        if not math.isfinite(number):
            raise fail(error, path, f"must be a finite number, got {_shown(value)}")
        if self.open_lo and self.lo is not None and number <= self.lo:
            raise fail(error, path, f"must be > {_show(self.lo)}, got {_show(value)}")
        _check_range(number, self.lo, self.hi, path, error)
        return number


@dataclass(frozen=True)
class Boolean(Constraint[bool]):
    """true or false."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> bool:
        if not isinstance(value, bool):
            raise fail_type(error, path, f"must be true or false, got {type_name(value)} {_shown(value)}")
        return value


@dataclass(frozen=True)
class String(Constraint[str]):
    """A string of valid Unicode text (never a lone surrogate, which UTF-8, and so the native core, cannot hold): one
    of ``choices`` (when given), non-empty (``nonempty``), at most ``max_len`` characters, matching ``pattern`` in full
    (``what`` names the syntax in the error, e.g. "a label key")."""

    choices: tuple[str, ...] | None = None
    nonempty: bool = False
    max_len: int | None = None
    pattern: str | None = None
    what: str = ""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> str:
        if not isinstance(value, str):
            raise fail_type(error, path, f"must be a string, got {type_name(value)} {_shown(value)}")
        if not value.isascii() and not _is_unicode_text(value):
            raise fail(error, path, f"{_shown(value)} is not valid Unicode text (it holds a lone surrogate)")
        if self.choices is not None and value not in self.choices:
            close = difflib.get_close_matches(value, self.choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise fail(error, path, f"must be one of {', '.join(self.choices)}; got {_shown(value)}{hint}")
        if self.nonempty and not value:
            raise fail(error, path, "must not be empty")
        if self.max_len is not None and len(value) > self.max_len:
            raise fail(error, path, f"must be at most {self.max_len} characters, got {len(value)}")
        if self.pattern is not None and not _compiled(self.pattern).fullmatch(value):
            raise fail(error, path, f"{_shown(value)} is not {self.what or 'valid'}")
        return value


@dataclass(frozen=True)
class ListOf(Constraint[tuple[Any, ...]]):
    """A list (or tuple) whose every item meets ``item``; at least ``min_len`` items."""

    item: Check[Any]
    min_len: int = 0

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> tuple[Any, ...]:
        if not isinstance(value, (list, tuple)):
            raise fail_type(error, path, f"must be a list, got {type_name(value)}")
        if len(value) < self.min_len:
            raise fail(error, path, f"must have at least {self.min_len} item(s)")
        return tuple(self.item(v, join(path, i), error) for i, v in enumerate(value))


@dataclass(frozen=True)
class MapOf(Constraint[dict[str, Any]]):
    """A mapping with string keys (meeting ``key``) and values meeting ``value``."""

    value: Check[Any]
    key: Check[str] = field(default_factory=String)

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> dict[str, Any]:
        mapping = _mapping(value, path, error)
        return {self.key(k, join(path, str(k)), error): self.value(v, join(path, k), error) for k, v in mapping.items()}


@dataclass(frozen=True)
class Record(Constraint[dict[str, Any]]):
    """A mapping with known keys: each key's value meets its constraint, ``required`` keys are present, any other
    key is an error (with a did-you-mean hint). Returns a dict of the keys present, checked."""

    fields: Mapping[str, Check[Any]]
    required: tuple[str, ...] = ()

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> dict[str, Any]:
        mapping = _mapping(value, path, error)
        for key in mapping:
            if key not in self.fields:
                raise unknown_key(join(path, key), key, tuple(self.fields), error)
        for key in self.required:
            if key not in mapping:
                raise fail(error, join(path, key), "required")
        return {k: self.fields[k](v, join(path, k), error) for k, v in mapping.items()}


@dataclass(frozen=True)
class OneOf(Constraint[Any]):
    """The first of several constraints that accepts the value (e.g. a port number or a port name)."""

    options: tuple[Check[Any], ...]
    what: str

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> Any:
        for option in self.options:
            try:
                return option(value, path, _Rejected)
            except _Rejected:
                continue
        raise fail(error, path, f"must be {self.what}, got {type_name(value)} {_shown(value)}")


@dataclass(frozen=True)
class NullsAbsent(Constraint[Any]):
    """A mapping whose null fields count as absent (Kubernetes objects leave an unset field out or write it null),
    then checked by ``inner`` (usually a Record)."""

    inner: Check[Any]

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> Any:
        if isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if v is not None}
        return self.inner(value, path, error)


_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_GO_DURATION_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Duration(Constraint[float]):
    """Seconds: a Go duration string ("1m30s", "250ms") or a finite number of seconds, > 0 (or >= 0 with
    ``allow_zero``) and at most ``max_seconds``."""

    allow_zero: bool = False
    max_seconds: float = 365 * 24 * 3600.0

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> float:
        if isinstance(value, bool):
            raise fail(error, path, f"must be a duration like '100ms' or '15s', got {_shown(value)}")
        if isinstance(value, (int, float)):
            seconds = _as_float(value)
        elif isinstance(value, str) and value and _GO_DURATION_PART.sub("", value) == "":
            seconds = sum(float(n) * _GO_DURATION_UNIT[u] for n, u in _GO_DURATION_PART.findall(value))
        else:
            raise fail(error, path, f"must be a duration like '100ms' or '15s', got {type_name(value)} {_shown(value)}")
        if not math.isfinite(seconds):
            raise fail(error, path, f"must be a finite duration, got {_shown(value)}")
        if seconds < 0 or (seconds == 0 and not self.allow_zero):
            raise fail(error, path, f"must be {'>=' if self.allow_zero else '>'} 0, got {_shown(value)}")
        if seconds > self.max_seconds:
            raise fail(error, path, f"must be at most {_show(self.max_seconds)} s, got {_shown(value)}")
        return seconds


_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def go_parse_bool(text: str) -> bool | None:
    """Go's strconv.ParseBool, which Kubernetes and Volcano read boolean strings with: None where it fails."""
    return _GO_BOOLS.get(text)


def load_yaml_file(path: str | os.PathLike[str], error: ErrorType = ValueError) -> Any:
    """The YAML document in a file; a file that cannot be read or parsed is ``error("<path>: <why>")``."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError) as e:
        raise fail(error, name, f"cannot read the file: {getattr(e, 'strerror', None) or e}") from None
    except yaml.YAMLError as e:
        raise fail(error, name, f"invalid YAML: {e}") from None


def unknown_key(
    path: str, key: Any, allowed: Sequence[str], error: ErrorType = ValueError, *, what: str = "key"
) -> Exception:
    """The error for a key a mapping may not have (``what`` it is: "key", "argument of gang", ...), with the closest
    allowed key as a hint."""
    if not allowed:
        return fail(error, path, f"unknown {what} (none is accepted)")
    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (expected one of: {', '.join(allowed)})"
    return fail(error, path, f"unknown {what}{hint}")


def mapping(value: Any, path: str, error: ErrorType = ValueError) -> Mapping[str, Any]:
    """The value if it is a mapping with string keys."""
    return _mapping(value, path, error)


def optional_mapping(value: Any, path: str, error: ErrorType = ValueError) -> Mapping[str, Any]:
    """The value if it is a mapping with string keys; an empty mapping for None (a field left out or null)."""
    if value is None:
        return {}
    return _mapping(value, path, error)


def optional_list(value: Any, path: str, error: ErrorType = ValueError) -> Sequence[Any]:
    """The value if it is a list (or tuple); an empty tuple for None (a field left out or null)."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise fail_type(error, path, f"must be a list, got {type_name(value)}")
    return value


class _Rejected(Exception):
    """An option of OneOf refused the value (never escapes this module)."""


def _mapping(value: Any, path: str, error: ErrorType) -> Mapping[str, Any]:
    # The exact type first: isinstance on an ABC is slow, and parsers of Kubernetes objects check many mappings.
    if type(value) is not dict and not isinstance(value, Mapping):
        raise fail_type(error, path, f"must be a mapping, got {type_name(value)}")
    for key in value:
        if type(key) is not str and not isinstance(key, str):
            raise fail_type(error, path, f"keys must be strings, got {type_name(key)} {key!r}")
    return value


def _is_unicode_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short when long (a 10,000-character name)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_float(value: int | float) -> float:
    """A number as a float; an integer too large for one reads as infinite (and is then refused as such)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _check_range(value: float, lo: float | None, hi: float | None, path: str, error: ErrorType) -> None:
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        if lo is not None and hi is not None:
            bound = f"in [{_show(lo)}, {_show(hi)}]"
        elif lo is not None:
            bound = f">= {_show(lo)}"
        else:
            bound = f"<= {_show(hi if hi is not None else value)}"
        raise fail(error, path, f"must be {bound}, got {_show(value)}")


def _show(x: float) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() and abs(x) < 1e15 else str(x)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    # vcore's own fixed patterns (Kubernetes name syntax), never a user's: the stdlib engine is fine here.
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = re.compile(pattern)
    return compiled


#: Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation).
DNS1123_LABEL = String(
    nonempty=True,
    max_len=63,
    pattern=r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    what="a DNS-1123 label (lowercase letters, digits and '-')",
)
DNS1123_SUBDOMAIN = String(
    nonempty=True,
    max_len=253,
    pattern=r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    what="a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')",
)
PORT = Integer(1, 65535)


@dataclass(frozen=True)
class LabelKey(Constraint[str]):
    """A label or annotation key: an optional DNS-1123 subdomain prefix and '/', then a name of at most 63
    characters (alphanumerics, '-', '_', '.'; alphanumeric at both ends): IsQualifiedName."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> str:
        key = String(nonempty=True)(value, path, error)
        prefix, slash, name = key.rpartition("/")
        ok = bool(_compiled(_QUALIFIED_NAME).fullmatch(name)) and len(name) <= 63
        if slash:
            ok = ok and 0 < len(prefix) <= 253 and bool(_compiled(DNS1123_SUBDOMAIN.pattern or "").fullmatch(prefix))
        if not ok:
            raise fail(
                error,
                path,
                f"{key!r} is not a valid label key (an optional DNS subdomain prefix and '/', "
                "then at most 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends)",
            )
        return key


_QUALIFIED_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
LABEL_KEY = LabelKey()
