"""vcore-scheduler's configuration: a YAML file (or dict) validated into frozen dataclasses.

Keys follow Kubernetes' spelling where kube-scheduler has the same idea (leaderElection's fields,
podInitialBackoffSeconds, a KubeSchedulerConfiguration profile) and Volcano's for the cycle. Durations are Go
duration strings ("100ms", "15s", "1m30s") or numbers of seconds.

Every field is a declared constraint of ``vcore.validation`` (one per dataclass field), so each bad value is a
``ConfigError`` in vcore's one format, ``"<path>: <problem>"``; an unknown key is an error naming its path, never
a silent default. The profiles and the cycle are checked by vcore itself, as the running scheduler will build
them, and reported under their key.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

import vcore
from vcore.validation import (
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    Boolean,
    Constraint,
    Duration,
    Integer,
    ListOf,
    Number,
    Record,
    String,
    fail,
    mapping,
)

if TYPE_CHECKING:
    from collections.abc import Callable


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
class FastPathConfig:
    """Agent pods placed on arrival (see fastpath.py): those of `schedulerName`, and this scheduler's pods of the
    `priorityClassNames` or with the annotation vcore.io/fast-path: "true"."""

    enabled: bool = False
    scheduler_name: str = ""
    priority_class_names: tuple[str, ...] = ()
    window: float = 0.001  # a micro-batch takes the pods that arrive within this of its first
    max_batch: int = 256
    bind_concurrency: int = 32  # bindings in flight for agent pods and placeholders (their own workers)
    profile: dict[str, Any] | None = None  # the agent profile (None: the scheduler's profile)


@dataclass(frozen=True)
class Sharding:
    """Which of a sharded cluster's nodes this instance places on (Volcano's NodeShard; see membership.py)."""

    mode: str = "none"  # none | soft | hard
    shard: str = ""  # the NodeShard's name


@dataclass(frozen=True)
class WarmPoolsConfig:
    """Warm pools (vcore.io/v1alpha1 WarmPool objects naming this scheduler; see warmpool.py)."""

    enabled: bool = True
    placeholder_priority_class: str = "vcore-warm-placeholder"
    placeholder_image: str = "registry.k8s.io/pause:3.10"


@dataclass(frozen=True)
class Config:
    scheduler_name: str = "vcore"
    profile: dict[str, Any] | None = None  # one KubeSchedulerConfiguration profile (vcore.Profile validates it)
    cycle: dict[str, Any] | None = None  # a volcano-scheduler.conf shape (actions, tiers), for the gang cycle
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
    fast_path: FastPathConfig = field(default_factory=FastPathConfig)
    sharding: Sharding = field(default_factory=Sharding)
    warm_pools: WarmPoolsConfig = field(default_factory=WarmPoolsConfig)


# -- constraints the adapter's configurations share (the sharding controller's too) ---------------------------
# vcore.validation's Duration and Number convert an integer with float(), which raises OverflowError beyond 1e308:
# these refuse an integer out of their range first, as out of range.
@dataclass(frozen=True)
class Seconds(Duration):
    """A Duration (> 0, at most a year); an integer of any size beyond that is out of range."""

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> float:
        if isinstance(value, int) and not isinstance(value, bool):
            if value > self.max_seconds:
                raise fail(error, path, f"must be at most {self.max_seconds:.0f} s, got {_digits(value)}")
            if value < 0:
                raise fail(error, path, f"must be {'>=' if self.allow_zero else '>'} 0, got {_digits(value)}")
        return super().__call__(value, path, error)


@dataclass(frozen=True)
class Real(Number):
    """A Number in [lo, hi]; an integer of any size outside it is out of range."""

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> float:
        if isinstance(value, int) and not isinstance(value, bool):
            if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
                raise fail(
                    error,
                    path,
                    f"must be in [{_bound(self.lo, '-inf')}, {_bound(self.hi, 'inf')}], got {_digits(value)}",
                )
            if abs(value) > sys.float_info.max:
                raise fail(error, path, f"must be a finite number, got {_digits(value)}")
        return super().__call__(value, path, error)


def _digits(value: int) -> str:
    digits = str(value)
    return digits if len(digits) <= 20 else f"{digits[:6]}... ({len(digits)} digits)"


def _bound(bound: float | None, unbounded: str) -> str:
    return unbounded if bound is None else f"{bound:g}"


@dataclass(frozen=True)
class Nullable(Constraint[Any]):
    """null, or a value meeting `inner`."""

    inner: Constraint[Any]

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> Any:
        return None if value is None else self.inner(value, path, error)


@dataclass(frozen=True)
class EmptyOr(Constraint[str]):
    """The empty string (the field is unset), or a string meeting `inner`."""

    inner: Constraint[str]

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> str:
        return "" if isinstance(value, str) and value == "" else self.inner(value, path, error)


@dataclass(frozen=True)
class Document(Constraint[dict]):
    """A mapping with string keys whose content another parser checks (a profile, a cycle)."""

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> dict[str, Any]:
        return dict(mapping(value, path, error))


_PORT = Integer(0, 65535)  # 0: any free port (the tests and the demo take one)
_DIGITS = re.compile(r"[0-9]{1,5}")  # ASCII only: str.isdigit() would take other scripts' digits
_HOST_NAME = re.compile(DNS1123_SUBDOMAIN.pattern or "")


@dataclass(frozen=True)
class ListenAddress(Constraint[str]):
    """``host:port`` to serve HTTP on: an IPv4 address or a host name (empty: every interface), and a port in
    [0, 65535]; the empty string disables the endpoint."""

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> str:
        address = String()(value, path, error)
        if not address:
            return address
        host, sep, port = address.rpartition(":")
        if not sep or not _DIGITS.fullmatch(port):
            raise fail(error, path, f"must be host:port (e.g. 0.0.0.0:10261), got {address!r}")
        _PORT(int(port), path, error)
        if host and not _ipv4(host) and not _HOST_NAME.fullmatch(host.lower()):
            raise fail(error, path, f"host {host!r} is not an IPv4 address or a host name")
        return address


def _ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
        return True
    except ValueError:
        return False


@dataclass(frozen=True)
class Section(Constraint[Any]):
    """A mapping whose keys are a dataclass's fields in camelCase, each with its constraint; builds the dataclass
    (defaults for the keys left out)."""

    cls: type
    constraints: Mapping[str, Constraint[Any]]  # by field name
    required: tuple[str, ...] = ()  # field names without a default
    record: Record = field(init=False, repr=False)

    def __post_init__(self) -> None:
        declared, known = set(self.constraints), {f.name for f in fields(self.cls)}
        if declared != known:  # a field added without its constraint, or the reverse
            raise TypeError(f"{self.cls.__name__}: constraints for {sorted(declared ^ known)} do not match its fields")
        record = Record(
            {camel(name): c for name, c in self.constraints.items()},
            required=tuple(camel(name) for name in self.required),
        )
        object.__setattr__(self, "record", record)

    def __call__(self, value: Any, path: str, error: Any = ValueError) -> Any:
        checked = self.record(value, path, error)
        return self.cls(**{name: checked[camel(name)] for name in self.constraints if camel(name) in checked})


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


NAME = DNS1123_SUBDOMAIN  # scheduler, Lease, PriorityClass and NodeShard names
SHARDING_MODE = String(choices=("none", "soft", "hard"))
SHARD_NAME = EmptyOr(NAME)

CONFIG = Section(
    Config,
    {
        "scheduler_name": NAME,
        "profile": Nullable(Document()),
        "cycle": Nullable(Document()),
        "cycle_period": Seconds(),
        "bind_concurrency": Integer(1, 1024),
        "pod_initial_backoff_seconds": Seconds(),
        "pod_max_backoff_seconds": Seconds(),
        "pod_max_in_unschedulable_seconds": Seconds(),
        "emit_events": Boolean(),
        "leader_election": Section(
            LeaderElection,
            {
                "leader_elect": Boolean(),
                "lease_duration": Seconds(),
                "renew_deadline": Seconds(),
                "retry_period": Seconds(),
                "resource_name": NAME,
                "resource_namespace": DNS1123_LABEL,
            },
        ),
        "metrics_address": ListenAddress(),
        "seed": Integer(0, 2**64 - 1),
        "fast_path": Section(
            FastPathConfig,
            {
                "enabled": Boolean(),
                "scheduler_name": EmptyOr(NAME),
                "priority_class_names": ListOf(NAME),
                "window": Seconds(),
                "max_batch": Integer(1, 100_000),
                "bind_concurrency": Integer(1, 1024),
                "profile": Nullable(Document()),
            },
        ),
        "sharding": Section(Sharding, {"mode": SHARDING_MODE, "shard": SHARD_NAME}),
        "warm_pools": Section(
            WarmPoolsConfig,
            {
                "enabled": Boolean(),
                "placeholder_priority_class": NAME,
                "placeholder_image": String(nonempty=True),
            },
        ),
    },
)

CYCLE_CONFIGMAP_KEY = "volcano-scheduler.conf"  # where Volcano's ConfigMap holds the cycle's YAML


def read_yaml(source: str | os.PathLike) -> Any:
    """The YAML document in a file; ConfigError (one line, naming the file) when it cannot be read or parsed."""
    try:
        data = yaml.safe_load(Path(source).read_bytes())  # bytes: PyYAML reports bad encodings as YAML errors
    except OSError as e:
        raise ConfigError(f"{source}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{source}: not valid YAML: {yaml_problem(e)}") from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid YAML: nested too deeply") from None
    return data if data is not None else {}


def yaml_problem(e: yaml.YAMLError) -> str:
    """A YAML error in one line: where, and what."""
    if isinstance(e, yaml.MarkedYAMLError) and e.problem_mark is not None:
        mark = e.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {e.problem}"
    return " ".join(str(e).split())


def load_config(source: str | os.PathLike | dict[str, Any] | None) -> Config:
    """A Config from a YAML file path, a dict, or None (all defaults)."""
    if source is None:
        return Config()
    if isinstance(source, dict):
        return _parse(source)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"load_config: expected a file path, a dict or None, got {type(source).__name__}")
    try:
        return _parse(read_yaml(source))
    except ConfigError as e:
        if str(e).startswith(f"{source}: "):
            raise
        raise ConfigError(f"{source}: {e}") from None


def _parse(data: Any) -> Config:
    config = CONFIG(data, "", ConfigError)
    if config.cycle is not None:
        config = replace(config, cycle=_cycle_document(config.cycle))
    validate(config)
    _check_with_vcore(config)
    return config


def _cycle_document(cycle: dict[str, Any]) -> dict[str, Any]:
    """The volcano-scheduler.conf document; a ConfigMap holding it (as Volcano deploys it) gives the YAML inside."""
    if cycle.get("kind") != "ConfigMap":
        return cycle
    data = mapping(cycle.get("data"), "cycle.data", ConfigError)
    path = f"cycle.data.{CYCLE_CONFIGMAP_KEY}"
    if CYCLE_CONFIGMAP_KEY not in data:
        raise ConfigError(f"{path}: required (the ConfigMap's volcano-scheduler.conf)")
    text = String()(data[CYCLE_CONFIGMAP_KEY], path, ConfigError)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {yaml_problem(e)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None
    return Document()(document, path, ConfigError)


def _check_with_vcore(c: Config) -> None:
    """The profiles and the cycle, checked by vcore as the process will use them."""
    for path, profile in (("profile", c.profile), ("fastPath.profile", c.fast_path.profile)):
        if profile is not None:
            _vcore_check(path, functools.partial(vcore.Profile.from_config, profile))
    if c.cycle is not None:
        _vcore_check("cycle", lambda: vcore.CycleConfig.from_config(c.cycle))
        # Together: a cycle without a profile gives the node scoring its plugins describe; with a profile, the two
        # must not both configure it.
        _vcore_check("cycle", lambda: vcore.Scheduler(vcore.Cluster(), c.profile, cycle=c.cycle, seed=c.seed))


def _vcore_check(path: str, check: Callable[[], object]) -> None:
    try:
        check()
    except vcore.VCoreError as e:
        message = str(e)
        raise ConfigError(message if message.startswith(f"{path}:") else f"{path}: {message}") from None


def validate(c: Config) -> None:
    """Raise ConfigError for values that are each fine alone but wrong together."""
    if c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds:
        raise ConfigError("podMaxBackoffSeconds: must be >= podInitialBackoffSeconds")
    le = c.leader_election
    if le.leader_elect and not le.lease_duration > le.renew_deadline > le.retry_period:
        raise ConfigError("leaderElection: needs leaseDuration > renewDeadline > retryPeriod")
    fp = c.fast_path
    if fp.enabled and fp.scheduler_name and fp.scheduler_name == c.scheduler_name:
        raise ConfigError(
            "fastPath.schedulerName: must differ from schedulerName (use priorityClassNames or "
            "the vcore.io/fast-path annotation for the scheduler's own pods)"
        )
    if c.sharding.mode != "none" and not c.sharding.shard:
        raise ConfigError("sharding.shard: required with sharding.mode soft or hard (the NodeShard's name)")


# A message quotes what the user wrote (a key, a value): its control characters are shown escaped, so an error
# stays one line of a log.
_ESCAPES = {c: f"\\x{c:02x}" for c in range(32)} | {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def one_line(message: str) -> str:
    return message.translate(_ESCAPES)


def with_sharding(c: Config, mode: str | None = None, shard: str | None = None) -> Config:
    """The configuration with its sharding overridden (the command line's --sharding-mode and --shard)."""
    sharding = c.sharding
    if mode is not None:
        sharding = replace(sharding, mode=SHARDING_MODE(mode, "--sharding-mode", ConfigError))
    if shard is not None:
        sharding = replace(sharding, shard=SHARD_NAME(shard, "--shard", ConfigError))
    c = replace(c, sharding=sharding)
    validate(c)
    return c
