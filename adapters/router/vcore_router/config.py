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

Unknown keys are errors naming the path; so are missing or out-of-range values.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

from vcore.routing import DEFAULT_POLICY, POLICY_NAMES, ROLES, Policy, PolicyError, make_policy, named_policy


class ConfigError(ValueError):
    """The router configuration is malformed; the message names the field."""


UNITS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}


@dataclass(frozen=True)
class StaticEndpoint:
    name: str
    url: str
    role: str = "both"
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


def _check_keys(obj: Any, path: str, allowed: set[str], required: set[str] = frozenset()) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(obj).__name__}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")
    missing = sorted(required - set(obj))
    if missing:
        raise ConfigError(f"{path}: missing {', '.join(missing)}")
    return obj


def _int(v: Any, path: str, lo: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ConfigError(f"{path}: expected an integer >= {lo}, got {v!r}")
    return v


def _num(v: Any, path: str, positive: bool = True) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (v <= 0 if positive else v < 0):
        raise ConfigError(f"{path}: expected a number {'>' if positive else '>='} 0, got {v!r}")
    return float(v)


def _str(v: Any, path: str) -> str:
    if not isinstance(v, str) or not v:
        raise ConfigError(f"{path}: expected a non-empty string, got {v!r}")
    return v


def _labels(v: Any, path: str) -> dict[str, str]:
    if not isinstance(v, Mapping) or not all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()):
        raise ConfigError(f"{path}: expected a mapping of strings")
    return dict(v)


# Kubernetes' syntax (k8s.io/apimachinery validation): label keys and values, namespaces, container port names.
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_PORT_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?")  # IANA_SVC_NAME


def _selector_labels(v: Any, path: str) -> dict[str, str]:
    """Labels that go into a labelSelector query: keys and values must be valid Kubernetes label syntax (a
    comma or "=" in a value would change the query)."""
    labels = _labels(v, path)
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        if not _LABEL_NAME.fullmatch(name) or (prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix))):
            raise ConfigError(f"{path}: {key!r} is not a valid label key")
        if value and not _LABEL_NAME.fullmatch(value):
            raise ConfigError(f"{path}.{key}: {value!r} is not a valid label value")
    return labels


def _workload_port(v: Any, path: str) -> int | str:
    """A port number (1-65535) or a container port name."""
    if isinstance(v, str):
        if not _PORT_NAME.fullmatch(v) or "--" in v or not re.search("[a-z]", v):
            raise ConfigError(f"{path}: {v!r} is not a container port name (lowercase letters, digits and '-', "
                              f"at most 15, at least one letter)")
        return v
    port = _int(v, path, 1)
    if port > 65535:
        raise ConfigError(f"{path}: expected a port number 1-65535 or a container port name, got {v!r}")
    return port


def _spec(doc: Any, kind: str, path: str) -> Mapping[str, Any]:
    """A bare spec, or a whole Kubernetes-style document whose spec (with metadata.name) is taken."""
    if isinstance(doc, Mapping) and "kind" in doc:
        if doc["kind"] != kind:
            raise ConfigError(f"{path}.kind: expected {kind}, got {doc['kind']!r}")
        spec = dict(_check_keys(doc.get("spec", {}), f"{path}.spec", _SPEC_KEYS[kind]))
        spec.setdefault("name", (doc.get("metadata") or {}).get("name"))
        return spec
    return doc


_SPEC_KEYS = {
    "ModelServer": {"name", "model", "inferenceEngine", "endpoints", "workloadSelector", "workloadPort",
                    "tokensPerSecondPerReplica", "pdMinPromptTokens", "prefillTokensPerSecond",
                    "prefillOverheadSeconds"},
    "ModelRoute": {"name", "modelName", "loraAdapters", "rules", "rateLimit"},
}


def _server(doc: Any, path: str) -> ModelServer:
    s = _check_keys(_spec(doc, "ModelServer", path), path, _SPEC_KEYS["ModelServer"] | {"apiVersion"},
                    {"name", "model"})
    engine = str(s.get("inferenceEngine", "vLLM")).lower()
    if engine not in ("vllm", "sglang"):
        raise ConfigError(f"{path}.inferenceEngine: expected vLLM or SGLang, got {s.get('inferenceEngine')!r}")
    endpoints = []
    for i, e in enumerate(s.get("endpoints") or []):
        p = f"{path}.endpoints[{i}]"
        _check_keys(e, p, {"name", "url", "role", "pdGroup", "domain", "maxLoras"}, {"name", "url"})
        url = _str(e["url"], f"{p}.url")
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError(f"{p}.url: expected http(s)://host:port, got {url!r}")
        role = e.get("role", "both")
        if role not in ROLES:
            raise ConfigError(f"{p}.role: expected one of {', '.join(ROLES)}, got {role!r}")
        endpoints.append(StaticEndpoint(_str(e["name"], f"{p}.name"), url.rstrip("/"), role, e.get("pdGroup"),
                                        e.get("domain"), _int(e.get("maxLoras", 0), f"{p}.maxLoras")))
    selector = None
    if s.get("workloadSelector") is not None:
        p = f"{path}.workloadSelector"
        w = _check_keys(s["workloadSelector"], p, {"namespace", "matchLabels", "port", "pdGroup", "domainLabel",
                                                   "maxLoras"}, {"matchLabels"})
        pd = None
        if w.get("pdGroup") is not None:
            g = _check_keys(w["pdGroup"], f"{p}.pdGroup", {"groupKey", "prefillLabels", "decodeLabels"},
                            {"groupKey", "prefillLabels", "decodeLabels"})
            pd = PdGroupSelector(_str(g["groupKey"], f"{p}.pdGroup.groupKey"),
                                 _labels(g["prefillLabels"], f"{p}.pdGroup.prefillLabels"),
                                 _labels(g["decodeLabels"], f"{p}.pdGroup.decodeLabels"))
        wp = _check_keys(s.get("workloadPort") or {}, f"{path}.workloadPort", {"port", "protocol"})
        if "port" in w and "port" in wp:
            raise ConfigError(f"{p}.port: the port is also given as {path}.workloadPort.port; give it once")
        port = _workload_port(w["port"], f"{p}.port") if "port" in w else \
            _workload_port(wp.get("port", 8000), f"{path}.workloadPort.port")
        protocol = wp.get("protocol", "http")
        if protocol not in ("http", "https"):
            raise ConfigError(f"{path}.workloadPort.protocol: expected http or https, got {protocol!r}")
        namespace = w.get("namespace", "default")
        if not isinstance(namespace, str) or not _DNS_LABEL.fullmatch(namespace):
            raise ConfigError(f"{p}.namespace: {namespace!r} is not a valid namespace name")
        selector = WorkloadSelector(namespace, _selector_labels(w["matchLabels"], f"{p}.matchLabels"), port, pd,
                                    _str(w.get("domainLabel", "topology.kubernetes.io/zone"), f"{p}.domainLabel"),
                                    _int(w.get("maxLoras", 0), f"{p}.maxLoras"), protocol)
    if not endpoints and selector is None:
        raise ConfigError(f"{path}: needs endpoints or a workloadSelector")
    names = [e.name for e in endpoints]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}.endpoints: duplicate endpoint names")
    return ModelServer(_str(s["name"], f"{path}.name"), _str(s["model"], f"{path}.model"), engine, tuple(endpoints),
                       selector, _num(s.get("tokensPerSecondPerReplica", 0), f"{path}.tokensPerSecondPerReplica", False),
                       _int(s.get("pdMinPromptTokens", 0), f"{path}.pdMinPromptTokens"),
                       _num(s.get("prefillTokensPerSecond", 1.0), f"{path}.prefillTokensPerSecond"),
                       _num(s.get("prefillOverheadSeconds", 0.0), f"{path}.prefillOverheadSeconds", False))


def _route(doc: Any, path: str, servers: Mapping[str, ModelServer]) -> ModelRoute:
    r = _check_keys(_spec(doc, "ModelRoute", path), path, _SPEC_KEYS["ModelRoute"] | {"apiVersion"},
                    {"modelName", "rules"})
    targets = []
    rules = r["rules"]
    if not isinstance(rules, list) or not rules:
        raise ConfigError(f"{path}.rules: expected a non-empty list")
    for i, rule in enumerate(rules):
        _check_keys(rule, f"{path}.rules[{i}]", {"name", "modelMatch", "targetModels"}, {"targetModels"})
        for j, t in enumerate(rule["targetModels"]):
            p = f"{path}.rules[{i}].targetModels[{j}]"
            _check_keys(t, p, {"modelServerName", "weight"}, {"modelServerName"})
            if t["modelServerName"] not in servers:
                raise ConfigError(f"{p}.modelServerName: no ModelServer named {t['modelServerName']!r}")
            targets.append(Target(t["modelServerName"], _int(t.get("weight", 100), f"{p}.weight")))
    if sum(t.weight for t in targets) <= 0:
        raise ConfigError(f"{path}.rules: the target weights sum to 0")
    limit = None
    if r.get("rateLimit") is not None:
        p = f"{path}.rateLimit"
        rl = _check_keys(r["rateLimit"], p, {"inputTokensPerUnit", "outputTokensPerUnit", "unit", "global"})
        unit = rl.get("unit", "minute")
        if unit not in UNITS:
            raise ConfigError(f"{p}.unit: expected one of {', '.join(UNITS)}, got {unit!r}")
        limit = RateLimit(_int(rl.get("inputTokensPerUnit", 0), f"{p}.inputTokensPerUnit"),
                          _int(rl.get("outputTokensPerUnit", 0), f"{p}.outputTokensPerUnit"), UNITS[unit])
    loras = r.get("loraAdapters") or []
    if not isinstance(loras, list) or not all(isinstance(x, str) and x for x in loras):
        raise ConfigError(f"{path}.loraAdapters: expected a list of names")
    return ModelRoute(_str(r["modelName"], f"{path}.modelName"), tuple(loras), tuple(targets), limit)


def parse_config(raw: Mapping[str, Any]) -> RouterConfig:
    top = _check_keys(raw, "config", {"router", "redis", "modelServers", "modelRoutes"},
                      {"modelServers", "modelRoutes"})
    rt = _check_keys(top.get("router") or {}, "router",
                     {"policy", "scrapeIntervalSeconds", "unhealthyAfterFailures", "maxBodyBytes", "retries",
                      "blockBytes", "prefixCapacityBlocks", "requestTimeoutSeconds", "seed"})
    block_bytes = _int(rt.get("blockBytes", 64), "router.blockBytes", 1)
    raw_policy = rt.get("policy", DEFAULT_POLICY)
    try:
        if isinstance(raw_policy, str):
            policy, name = named_policy(raw_policy, max(1, block_bytes // 4)), raw_policy
        elif isinstance(raw_policy, Mapping):
            fields = dict(raw_policy)
            base = fields.pop("name", None)
            policy = named_policy(base, max(1, block_bytes // 4), **fields) if base else make_policy(fields)
            name = base or "custom"
        else:
            raise ConfigError(f"router.policy: expected one of {', '.join(POLICY_NAMES)} or a mapping")
    except PolicyError as e:
        raise ConfigError(f"router.{e}") from None
    servers: dict[str, ModelServer] = {}
    for i, doc in enumerate(top["modelServers"] or []):
        s = _server(doc, f"modelServers[{i}]")
        if s.name in servers:
            raise ConfigError(f"modelServers[{i}].name: duplicate {s.name!r}")
        servers[s.name] = s
    routes = tuple(_route(doc, f"modelRoutes[{i}]", servers) for i, doc in enumerate(top["modelRoutes"] or []))
    if not routes:
        raise ConfigError("modelRoutes: at least one route is needed")
    names = [r.model_name for r in routes]
    if len(set(names)) != len(names):
        raise ConfigError("modelRoutes: duplicate modelName")
    redis = _check_keys(top.get("redis") or {}, "redis", {"url"})
    return RouterConfig(
        policy=policy, policy_name=name, servers=servers, routes=routes,
        scrape_interval_s=_num(rt.get("scrapeIntervalSeconds", 0.5), "router.scrapeIntervalSeconds"),
        unhealthy_after_failures=_int(rt.get("unhealthyAfterFailures", 2), "router.unhealthyAfterFailures", 1),
        max_body_bytes=_int(rt.get("maxBodyBytes", 4 * 2**20), "router.maxBodyBytes", 1),
        retries=_int(rt.get("retries", 3), "router.retries", 1), block_bytes=block_bytes,
        prefix_capacity_blocks=_int(rt.get("prefixCapacityBlocks", 50_000), "router.prefixCapacityBlocks", 1),
        request_timeout_s=_num(rt.get("requestTimeoutSeconds", 600), "router.requestTimeoutSeconds"),
        redis_url=redis.get("url"), seed=_int(rt.get("seed", 0), "router.seed"))


def load_config(path: str | Path) -> RouterConfig:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({e})") from None
    return parse_config(raw or {})
