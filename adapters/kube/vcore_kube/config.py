"""vcore-scheduler's configuration: a YAML file (or dict) validated into frozen dataclasses.

Keys follow Kubernetes' spelling where kube-scheduler has the same idea (leaderElection's fields,
podInitialBackoffSeconds, a KubeSchedulerConfiguration profile) and Volcano's for the cycle. Durations are Go
duration strings ("100ms", "15s", "1m30s") or numbers of seconds. An unknown key is an error naming its path,
never a silent default.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key."""


@dataclass(frozen=True)
class LeaderElection:
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = "vcore-scheduler"
    resource_namespace: str = "vcore-system"


@dataclass(frozen=True)
class FastPath:
    """Agent pods placed on arrival (see fastpath.py): those of `schedulerName`, and this scheduler's pods of the
    `priorityClassNames` or with the annotation vcore.io/fast-path: "true"."""

    enabled: bool = False
    scheduler_name: str = ""
    priority_class_names: tuple[str, ...] = ()
    window: float = 0.001  # a micro-batch takes the pods that arrive within this of its first
    max_batch: int = 256
    bind_concurrency: int = 32  # bindings in flight for agent pods and placeholders (their own workers)
    profile: dict | None = None  # the agent profile (None: the scheduler's profile)


@dataclass(frozen=True)
class Sharding:
    """Which of a sharded cluster's nodes this instance places on (Volcano's NodeShard; see membership.py)."""

    mode: str = "none"  # none | soft | hard
    shard: str = ""  # the NodeShard's name


@dataclass(frozen=True)
class WarmPools:
    """Warm pools (vcore.io/v1alpha1 WarmPool objects naming this scheduler; see warmpool.py)."""

    enabled: bool = True
    placeholder_priority_class: str = "vcore-warm-placeholder"
    placeholder_image: str = "registry.k8s.io/pause:3.10"


@dataclass(frozen=True)
class Config:
    scheduler_name: str = "vcore"
    profile: dict | None = None  # one KubeSchedulerConfiguration profile (vcore.Profile validates it)
    cycle: dict | None = None  # a volcano-scheduler.conf shape (actions, tiers), for the gang cycle
    cycle_period: float = 0.1
    bind_concurrency: int = 16
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    # kube-scheduler flushes pods from its unschedulable set after 5 minutes even without a cluster event.
    pod_max_in_unschedulable_seconds: float = 300.0
    emit_events: bool = True
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    metrics_address: str = "0.0.0.0:10261"  # "" disables the HTTP endpoint (/metrics, /healthz, /readyz)
    seed: int = 0
    fast_path: FastPath = field(default_factory=FastPath)
    sharding: Sharding = field(default_factory=Sharding)
    warm_pools: WarmPools = field(default_factory=WarmPools)


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any, where: str) -> float:
    """Seconds of a Go duration string ("1m30s", "250ms") or a number of seconds; must be > 0."""
    if isinstance(value, bool):
        raise ConfigError(f"{where}: expected a duration, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and re.fullmatch(rf"(?:{_DURATION.pattern})+", value):
        seconds = sum(float(n) * _UNIT[u] for n, u in _DURATION.findall(value))
    else:
        raise ConfigError(f"{where}: expected a duration like '100ms' or '15s', got {value!r}")
    if not seconds > 0:
        raise ConfigError(f"{where}: must be > 0, got {value!r}")
    return seconds


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


_KEYS = {_camel(f.name): f.name for f in fields(Config)}
_SECTIONS = {"leader_election": LeaderElection, "fast_path": FastPath, "sharding": Sharding,
             "warm_pools": WarmPools}
_SECTION_KEYS = {cls: {_camel(f.name): f.name for f in fields(cls)} for cls in _SECTIONS.values()}
_DURATIONS = {"cycle_period", "pod_initial_backoff_seconds", "pod_max_backoff_seconds",
              "pod_max_in_unschedulable_seconds", "lease_duration", "renew_deadline", "retry_period", "window"}


def check_type(value: Any, kind: type, where: str) -> Any:
    """The value, if it is of the kind (bool, int, str, dict); else ConfigError naming `where`."""
    if kind is bool and not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    if kind is dict and not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _section(data: Any, keys: dict[str, str], cls: type, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'config'}: expected a mapping, got {type(data).__name__}")
    out = {}
    types = {f.name: f.type for f in fields(cls)}
    for key, value in data.items():
        path = f"{where}.{key}" if where else str(key)
        if key not in keys:
            raise ConfigError(f"{path}: unknown key (known: {', '.join(sorted(keys))})")
        name = keys[key]
        if name in _DURATIONS:
            out[name] = parse_duration(value, path)
        elif name in _SECTIONS and cls is Config:
            section = _SECTIONS[name]
            out[name] = section(**_section(value, _SECTION_KEYS[section], section, path))
        elif value is None and types[name] == "dict | None":
            out[name] = None
        elif types[name] == "tuple[str, ...]":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{path}: expected a list of strings, got {value!r}")
            out[name] = tuple(value)
        else:
            kind = {"bool": bool, "int": int, "str": str, "dict | None": dict}[types[name]]
            out[name] = check_type(value, kind, path)
    return out


def load_config(source: str | os.PathLike | dict | None) -> Config:
    """A Config from a YAML file path, a dict, or None (all defaults)."""
    if source is None:
        return Config()
    if isinstance(source, dict):
        data = source
    else:
        try:
            data = yaml.safe_load(Path(source).read_text())
        except OSError as e:
            raise ConfigError(f"{source}: {e.strerror}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{source}: not valid YAML: {e}") from None
        data = data if data is not None else {}
    config = Config(**_section(data, _KEYS, Config, ""))
    validate(config)
    return config


def validate(c: Config) -> None:
    """Raise ConfigError for values that are each fine alone but wrong together (or out of range)."""
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", c.scheduler_name):
        raise ConfigError(f"schedulerName: {c.scheduler_name!r} is not a valid scheduler name")
    if not 1 <= c.bind_concurrency <= 1024:
        raise ConfigError(f"bindConcurrency: must be in [1, 1024], got {c.bind_concurrency}")
    if c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds:
        raise ConfigError("podMaxBackoffSeconds: must be >= podInitialBackoffSeconds")
    if not 0 <= c.seed < 2**64:
        raise ConfigError(f"seed: must be in [0, 2**64), got {c.seed}")
    le = c.leader_election
    if le.leader_elect and not le.lease_duration > le.renew_deadline > le.retry_period:
        raise ConfigError("leaderElection: needs leaseDuration > renewDeadline > retryPeriod")
    fp = c.fast_path
    if fp.enabled and fp.scheduler_name and fp.scheduler_name == c.scheduler_name:
        raise ConfigError("fastPath.schedulerName: must differ from schedulerName (use priorityClassNames or "
                          "the vcore.io/fast-path annotation for the scheduler's own pods)")
    if not 1 <= fp.bind_concurrency <= 1024:
        raise ConfigError(f"fastPath.bindConcurrency: must be in [1, 1024], got {fp.bind_concurrency}")
    if not 1 <= fp.max_batch <= 100_000:
        raise ConfigError(f"fastPath.maxBatch: must be in [1, 100000], got {fp.max_batch}")
    if c.sharding.mode not in ("none", "soft", "hard"):
        raise ConfigError(f"sharding.mode: expected none, soft or hard, got {c.sharding.mode!r}")
    if c.sharding.mode != "none" and not c.sharding.shard:
        raise ConfigError("sharding.shard: required with sharding.mode soft or hard (the NodeShard's name)")
    if c.metrics_address:
        host, sep, port = c.metrics_address.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
            raise ConfigError(f"metricsAddress: expected host:port, got {c.metrics_address!r}")
