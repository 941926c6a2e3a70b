"""The router's configuration, in the shape of Kthena's ModelRoute and ModelServer resources.

A YAML file (or dict) with a ``router`` section and lists of ModelServer and ModelRoute specs (or whole
``kind: ModelServer`` / ``kind: ModelRoute`` documents, as kubectl shows them):

    router: {policy: vcore, scrapeIntervalSeconds: 0.5, maxBodyBytes: 4194304, retries: 3}
    redis: {url: "redis://127.0.0.1:6379/0"}          # optional: shared rate limits
    modelServers:
      - name: llama-8b
        model: meta-llama/Llama-3.1-8B-Instruct        # the name the engines serve
        inferenceEngine: vLLM                          # vLLM | SGLang: metric names
        tokensPerSecondPerReplica: 20000               # autoscaling signal
        prefillTokensPerSecond: 10000                  # the engines' prefill speed and fixed cost per prefill: vcore's
        prefillOverheadSeconds: 0.01                   # cost in seconds (unset: ranked by prompt tokens)
        endpoints:                                     # static endpoints ...
          - {name: e0, url: "http://10.0.0.1:8000", role: both, maxLoras: 4}
        workloadSelector:                              # ... or pods found by label selector (discovery)
          namespace: default
          matchLabels: {app: llama}
          port: http                                   # a number, or the name of a container port of the pod
          pdGroup: {groupKey: pd-group, prefillLabels: {role: prefill}, decodeLabels: {role: decode}}
        # or, instead of workloadSelector.port, Kthena's: workloadPort: {port: 8000, protocol: http}
    modelRoutes:
      - modelName: llama                               # what clients ask for
        loraAdapters: [sql-lora]
        rules: [{targetModels: [{modelServerName: llama-8b, weight: 90}, {modelServerName: canary, weight: 10}]}]
        rateLimit: {inputTokensPerUnit: 100000, outputTokensPerUnit: 20000, unit: minute}

Every field is declared as a ``vcore.validation`` constraint: a bad value, an unknown or missing key is a
ConfigError ``"<path>: <problem>"`` naming the field (``modelServers[0].endpoints[1].url: ...``). Numbers are
finite, ports in 1..65535, durations finite and bounded, counts within what the routing core holds. An optional
key given as ``null`` (an empty YAML value) is absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yarl import URL

from vcore.routing import DEFAULT_POLICY, ROLES, Policy, PolicyError, Role, make_policy, named_policy
from vcore.validation import (
    DNS1123_LABEL,
    LABEL_KEY,
    PORT,
    Check,
    Constraint,
    Duration,
    ErrorType,
    Integer,
    ListOf,
    MapOf,
    Number,
    OneOf,
    Record,
    String,
    fail,
    join,
    mapping,
)


class ConfigError(ValueError):
    """The router configuration is malformed; the message names the field."""


UNITS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}


@dataclass(frozen=True)
class StaticEndpoint:
    name: str
    url: str
    role: Role = "both"
    pd_group: str | None = None
    domain: str | None = None
    max_loras: int = 0


@dataclass(frozen=True)
class PdGroupSelector:
    group_key: str
    prefill_labels: Mapping[str, str]
    decode_labels: Mapping[str, str]


@dataclass(frozen=True)
class WorkloadSelector:
    namespace: str
    match_labels: Mapping[str, str]
    port: int | str  # a port number, or the name of a container port (as a Service's targetPort)
    pd_group: PdGroupSelector | None = None
    domain_label: str = "topology.kubernetes.io/zone"
    max_loras: int = 0
    protocol: str = "http"  # http | https

    @property
    def label_selector(self) -> str:
        """matchLabels as the API server's labelSelector query ("k1=v1,k2=v2"; empty selects every pod)."""
        return ",".join(f"{k}={v}" for k, v in sorted(self.match_labels.items()))


@dataclass(frozen=True)
class ModelServer:
    name: str
    model: str
    engine: str = "vllm"  # vllm | sglang
    endpoints: tuple[StaticEndpoint, ...] = ()
    selector: WorkloadSelector | None = None
    tokens_per_second_per_replica: float = 0.0
    pd_min_prompt_tokens: int = 0
    prefill_tokens_per_s: float = 1.0
    prefill_overhead_s: float = 0.0


@dataclass(frozen=True)
class RateLimit:
    input_tokens_per_unit: int = 0  # 0 = unlimited
    output_tokens_per_unit: int = 0
    unit_seconds: float = 60.0


@dataclass(frozen=True)
class Target:
    server: str
    weight: int


@dataclass(frozen=True)
class ModelRoute:
    model_name: str
    lora_adapters: tuple[str, ...]
    targets: tuple[Target, ...]
    rate_limit: RateLimit | None = None


@dataclass(frozen=True)
class RouterConfig:
    policy: Policy
    policy_name: str
    servers: Mapping[str, ModelServer]
    routes: tuple[ModelRoute, ...]
    scrape_interval_s: float = 0.5
    unhealthy_after_failures: int = 2
    max_body_bytes: int = 4 * 2**20
    retries: int = 3
    block_bytes: int = 64
    prefix_capacity_blocks: int = 50_000
    request_timeout_s: float = 600.0
    redis_url: str | None = None
    seed: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def route_for(self, model: str) -> tuple[ModelRoute, str | None] | None:
        """(route, LoRA adapter or None) serving a client's model name, or None."""
        for r in self.routes:
            if r.model_name == model:
                return r, None
        for r in self.routes:
            if model in r.lora_adapters:
                return r, model
        return None


# ---------------------------------------------------------------------------------------------- constraints
@dataclass(frozen=True)
class _OrNull(Constraint[Any]):
    """An optional key: ``null`` means absent (None), anything else must meet ``inner``."""

    inner: Check[Any]

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> Any:
        return None if value is None else self.inner(value, path, error)


def _record(fields: Mapping[str, Check[Any]], required: tuple[str, ...] = ()) -> Record:
    """A Record whose optional keys may be null."""
    return Record({k: c if k in required else _OrNull(c) for k, c in fields.items()}, required)


def _given(checked: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a checked Record that have a value (null ones are absent)."""
    return {k: v for k, v in checked.items() if v is not None}


@dataclass(frozen=True)
class _EngineUrl(Constraint[str]):
    """An engine's base URL, as aiohttp will read it (yarl): http(s)://host[:port][/path], port in 1..65535, no
    query or fragment (the router appends /v1/... and /metrics). Returned without a trailing '/'."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> str:
        text = String(nonempty=True)(value, path, error)
        try:
            url = URL(text)
        except ValueError as e:
            raise fail(error, path, f"{text!r} is not a valid URL: {e}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise fail(error, path, f"must be http(s)://host[:port], got {text!r}")
        if url.explicit_port is not None:
            PORT(url.explicit_port, join(path, "port"), error)
        if url.query_string or url.fragment:
            raise fail(error, path, f"must not have a query or fragment, got {text!r}")
        return text.rstrip("/")


@dataclass(frozen=True)
class _RedisUrl(Constraint[str]):
    """A Redis URL (redis://, rediss://, unix://) checked by building the connection redis-py's client would open
    (without connecting), plus what its parser lets through silently: a port of 0, a database that is not a
    number (both would be dropped for the defaults)."""

    def __call__(self, value: Any, path: str, error: ErrorType = ValueError) -> str:
        text = String(nonempty=True)(value, path, error)
        try:
            from redis.asyncio import ConnectionPool
            from redis.exceptions import RedisError
        except ImportError:
            raise fail(error, path, "needs the redis package (pip install 'vcore[router]')") from None
        try:
            url = URL(text)
            pool = ConnectionPool.from_url(text)
            pool.connection_class(**pool.connection_kwargs)
        except TypeError as e:  # a query parameter that no connection takes
            raise fail(error, path, f"{text!r}: an option redis-py does not know ({e})") from None
        except (ValueError, RedisError) as e:
            raise fail(error, path, f"{text!r}: {e}") from None
        if url.scheme in ("redis", "rediss"):
            if url.explicit_port is not None:
                PORT(url.explicit_port, join(path, "port"), error)
            db = url.path.strip("/")
            if db and not db.isdigit():
                raise fail(error, path, f"{text!r}: the database {db!r} is not a number")
        return text


INT32_MAX = 2**31 - 1
_NAME = String(nonempty=True)
_COUNT = Integer(0, INT32_MAX)  # counts the routing core holds in 32 bits
_TOKENS = Integer(0, 2**53)  # token budgets (the Redis buckets are Lua numbers: exact up to 2^53)
# Discovered endpoints are named <ModelServer>/<namespace>/<pod>: a static name without '/' never collides.
_ENDPOINT_NAME = String(
    nonempty=True,
    pattern=r"[^/]+",
    what="a static endpoint name (no '/': discovered endpoints are <ModelServer>/<namespace>/<pod>)",
)
_LABEL_VALUE = String(
    max_len=63,
    pattern=r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?",
    what="a label value (alphanumerics, '-', '_' and '.', alphanumeric at both ends)",
)
_LABELS = MapOf(_LABEL_VALUE, key=LABEL_KEY)
_PORT_NAME = String(
    nonempty=True,
    max_len=15,
    pattern=r"(?=[^a-z]*[a-z])(?!.*--)[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    what="a container port name (lowercase letters, digits and '-', at least one letter)",
)
_WORKLOAD_PORT = OneOf(
    (PORT, _PORT_NAME),
    "a port number 1-65535 or a container port name (lowercase letters, "
    "digits and '-', at most 15, at least one letter)",
)
_ENGINES = ("vllm", "sglang")

_ENDPOINT = _record(
    {
        "name": _ENDPOINT_NAME,
        "url": _EngineUrl(),
        "role": String(choices=ROLES),
        "pdGroup": _NAME,
        "domain": _NAME,
        "maxLoras": _COUNT,
    },
    required=("name", "url"),
)
_PD_GROUP = _record(
    {"groupKey": LABEL_KEY, "prefillLabels": _LABELS, "decodeLabels": _LABELS},
    required=("groupKey", "prefillLabels", "decodeLabels"),
)
_WORKLOAD_SELECTOR = _record(
    {
        "namespace": DNS1123_LABEL,
        "matchLabels": _LABELS,
        "port": _WORKLOAD_PORT,
        "pdGroup": _PD_GROUP,
        "domainLabel": LABEL_KEY,
        "maxLoras": _COUNT,
    },
    required=("matchLabels",),
)
_SERVER = _record(
    {
        "apiVersion": String(),
        "name": _NAME,
        "model": _NAME,
        "inferenceEngine": _NAME,
        "endpoints": ListOf(_ENDPOINT),
        "workloadSelector": _WORKLOAD_SELECTOR,
        "workloadPort": _record({"port": _WORKLOAD_PORT, "protocol": String(choices=("http", "https"))}),
        "tokensPerSecondPerReplica": Number(0),
        "pdMinPromptTokens": _COUNT,
        "prefillTokensPerSecond": Number(0, open_lo=True),
        "prefillOverheadSeconds": Duration(allow_zero=True, max_seconds=3600.0),
    },
    required=("name", "model"),
)
_TARGET = _record({"modelServerName": _NAME, "weight": _COUNT}, required=("modelServerName",))
_RULE = _record(
    {"name": String(), "modelMatch": mapping, "targetModels": ListOf(_TARGET, min_len=1)}, required=("targetModels",)
)
_RATE_LIMIT = _record(
    {
        "inputTokensPerUnit": _TOKENS,
        "outputTokensPerUnit": _TOKENS,
        "unit": String(choices=tuple(UNITS)),
        "global": mapping,
    }
)
_ROUTE = _record(
    {
        "apiVersion": String(),
        "name": String(),
        "modelName": _NAME,
        "loraAdapters": ListOf(_NAME),
        "rules": ListOf(_RULE, min_len=1),
        "rateLimit": _RATE_LIMIT,
    },
    required=("modelName", "rules"),
)
# status (what kubectl shows of a resource's observed state) is not configuration: accepted, not read.
_DOCUMENT = _record(
    {"apiVersion": String(), "kind": String(), "metadata": mapping, "spec": mapping, "status": mapping},
    required=("kind", "spec"),
)
_ROUTER = _record(
    {
        "policy": OneOf((_NAME, mapping), "a policy name or a mapping of policy fields"),
        "scrapeIntervalSeconds": Duration(max_seconds=3600.0),
        "unhealthyAfterFailures": Integer(1, 1000),
        "maxBodyBytes": Integer(1, 2**30),
        "retries": Integer(1, 100),
        "blockBytes": Integer(1, 2**20),
        "prefixCapacityBlocks": Integer(1, 10**8),
        "requestTimeoutSeconds": Duration(max_seconds=86400.0),
        "seed": Integer(0, 2**64 - 1),
    }
)
_TOP = _record(
    {
        "router": _ROUTER,
        "redis": _record({"url": _RedisUrl()}),
        "modelServers": ListOf(mapping, min_len=1),
        "modelRoutes": ListOf(mapping, min_len=1),
    },
    required=("modelServers", "modelRoutes"),
)


# ------------------------------------------------------------------------------------------------- parsing
def _spec(doc: Any, kind: str, path: str) -> tuple[Any, str]:
    """(the spec, its path): a bare spec, or a whole Kubernetes-style document's spec named by metadata.name."""
    if not (isinstance(doc, Mapping) and "kind" in doc):
        return doc, path
    d = _given(_DOCUMENT(doc, path, ConfigError))
    if d["kind"] != kind:
        raise fail(ConfigError, join(path, "kind"), f"must be {kind}, got {d['kind']!r}")
    spec = dict(d["spec"])
    if "name" not in spec:
        meta = d.get("metadata", {})
        if meta.get("name") is None:
            raise fail(ConfigError, join(path, "metadata.name"), "required (or spec.name)")
        spec["name"] = _NAME(meta["name"], join(path, "metadata.name"), ConfigError)
    return spec, join(path, "spec")


def _server(doc: Any, path: str) -> ModelServer:
    raw, path = _spec(doc, "ModelServer", path)
    s = _given(_SERVER(raw, path, ConfigError))
    engine = s.get("inferenceEngine", "vLLM").lower()
    if engine not in _ENGINES:
        raise fail(ConfigError, join(path, "inferenceEngine"), f"must be vLLM or SGLang, got {s['inferenceEngine']!r}")
    endpoints = []
    seen: dict[str, int] = {}
    for i, e in enumerate(_given(x) for x in s.get("endpoints", ())):
        if e["name"] in seen:
            raise fail(
                ConfigError,
                join(join(join(path, "endpoints"), i), "name"),
                f"duplicate {e['name']!r} (also endpoints[{seen[e['name']]}])",
            )
        seen[e["name"]] = i
        endpoints.append(
            StaticEndpoint(
                e["name"], e["url"], e.get("role", "both"), e.get("pdGroup"), e.get("domain"), e.get("maxLoras", 0)
            )
        )
    selector = None
    if "workloadSelector" in s:
        selector = _selector(_given(s["workloadSelector"]), _given(s.get("workloadPort", {})), path)
    if not endpoints and selector is None:
        raise fail(ConfigError, path, "needs endpoints or a workloadSelector")
    return ModelServer(
        s["name"],
        s["model"],
        engine,
        tuple(endpoints),
        selector,
        s.get("tokensPerSecondPerReplica", 0.0),
        s.get("pdMinPromptTokens", 0),
        s.get("prefillTokensPerSecond", 1.0),
        s.get("prefillOverheadSeconds", 0.0),
    )


def _selector(w: dict[str, Any], workload_port: dict[str, Any], path: str) -> WorkloadSelector:
    p = join(path, "workloadSelector")
    if "port" in w and "port" in workload_port:
        raise fail(ConfigError, join(p, "port"), f"the port is also given as {path}.workloadPort.port; give it once")
    pd = None
    if "pdGroup" in w:
        g = w["pdGroup"]
        pd = PdGroupSelector(g["groupKey"], g["prefillLabels"], g["decodeLabels"])
    port = w.get("port", workload_port.get("port", 8000))
    return WorkloadSelector(
        w.get("namespace", "default"),
        w["matchLabels"],
        port,
        pd,
        w.get("domainLabel", "topology.kubernetes.io/zone"),
        w.get("maxLoras", 0),
        workload_port.get("protocol", "http"),
    )


def _route(doc: Any, path: str, servers: Mapping[str, ModelServer]) -> ModelRoute:
    raw, path = _spec(doc, "ModelRoute", path)
    r = _given(_ROUTE(raw, path, ConfigError))
    targets = []
    for i, rule in enumerate(r["rules"]):
        for j, t in enumerate(_given(x) for x in rule["targetModels"]):
            if t["modelServerName"] not in servers:
                raise fail(
                    ConfigError,
                    f"{path}.rules[{i}].targetModels[{j}].modelServerName",
                    f"no ModelServer named {t['modelServerName']!r}",
                )
            targets.append(Target(t["modelServerName"], t.get("weight", 100)))
    if sum(t.weight for t in targets) <= 0:
        raise fail(ConfigError, join(path, "rules"), "the target weights sum to 0")
    limit = None
    if "rateLimit" in r:
        rl = _given(r["rateLimit"])
        limit = RateLimit(
            rl.get("inputTokensPerUnit", 0), rl.get("outputTokensPerUnit", 0), UNITS[rl.get("unit", "minute")]
        )
    return ModelRoute(r["modelName"], r.get("loraAdapters", ()), tuple(targets), limit)


def _policy(raw: Any, block_bytes: int) -> tuple[Policy, str]:
    try:
        if isinstance(raw, str):
            return named_policy(raw, max(1, block_bytes // 4)), raw
        fields = dict(raw)
        base = fields.pop("name", None)
        policy = named_policy(base, max(1, block_bytes // 4), **fields) if base else make_policy(fields)
        return policy, base or "custom"
    except PolicyError as e:
        raise ConfigError(f"router.{e}") from None


def parse_config(raw: Any) -> RouterConfig:
    """The router configuration from its YAML data; ConfigError naming the field path on any bad value."""
    top = _given(_TOP(mapping(raw, "config", ConfigError), "", ConfigError))
    rt = _given(top.get("router", {}))
    block_bytes = rt.get("blockBytes", 64)
    policy, policy_name = _policy(rt.get("policy", DEFAULT_POLICY), block_bytes)
    servers: dict[str, ModelServer] = {}
    endpoint_at: dict[str, str] = {}  # endpoint name -> its path: the router's endpoint table is keyed by name
    for i, doc in enumerate(top["modelServers"]):
        path = f"modelServers[{i}]"
        s = _server(doc, path)
        if s.name in servers:
            raise fail(ConfigError, join(path, "name"), f"duplicate {s.name!r}")
        for j, e in enumerate(s.endpoints):
            if e.name in endpoint_at:
                raise fail(
                    ConfigError,
                    f"{path}.endpoints[{j}].name",
                    f"duplicate endpoint {e.name!r} (also {endpoint_at[e.name]})",
                )
            endpoint_at[e.name] = f"{path}.endpoints[{j}]"
        servers[s.name] = s
    routes: list[ModelRoute] = []
    served: dict[str, str] = {}  # a name clients ask for -> where it is declared
    for i, doc in enumerate(top["modelRoutes"]):
        path = f"modelRoutes[{i}]"
        route = _route(doc, path, servers)
        for name, where in [(route.model_name, "modelName")] + [
            (a, f"loraAdapters[{k}]") for k, a in enumerate(route.lora_adapters)
        ]:
            if name in served:
                raise fail(ConfigError, join(path, where), f"{name!r} is already served by {served[name]}")
            served[name] = join(path, where)
        routes.append(route)
    return RouterConfig(
        policy=policy,
        policy_name=policy_name,
        servers=servers,
        routes=tuple(routes),
        scrape_interval_s=rt.get("scrapeIntervalSeconds", 0.5),
        unhealthy_after_failures=rt.get("unhealthyAfterFailures", 2),
        max_body_bytes=rt.get("maxBodyBytes", 4 * 2**20),
        retries=rt.get("retries", 3),
        block_bytes=block_bytes,
        prefix_capacity_blocks=rt.get("prefixCapacityBlocks", 50_000),
        request_timeout_s=rt.get("requestTimeoutSeconds", 600.0),
        redis_url=_given(top.get("redis", {})).get("url"),
        seed=rt.get("seed", 0),
    )


def load_config(path: str | Path) -> RouterConfig:
    """The configuration in a YAML file; ConfigError (the file's name first) when it is unreadable as YAML or
    malformed, OSError when it cannot be read."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid YAML ({e})") from None
    try:
        return parse_config(raw if raw is not None else {})
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
