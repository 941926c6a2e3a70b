"""Scheduler profiles: validation and resolution of one KubeSchedulerConfiguration profile.

This module owns :class:`Profile`, the immutable, fully resolved scheduler profile that
``vcore.Scheduler`` hands to the native engine, and the parsing that produces it:

- input is one profile of a ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration (a dict, or a
  YAML file path), or a whole KubeSchedulerConfiguration holding exactly one profile;
- plugin sets are merged with kube-scheduler's defaults exactly as kube-scheduler v1 does
  (``mergePluginSet`` of the v1 defaulting, then the framework's ``multiPoint`` expansion and score weights);
- ``pluginConfig`` arguments are typed and validated as kube-scheduler's ``Validate*Args`` (and Volcano's
  binpack argument parsing) do; an unknown key, an unknown plugin or a wrong type is a
  :class:`vcore.errors.ProfileError` whose message starts with the path of the offending field;
- :meth:`Profile.native` gives the native profile dict of the internal contract, :meth:`Profile.to_dict`
  the resolved configuration in KubeSchedulerConfiguration shape.

Plugin names, extension points and default weights live in :mod:`vcore.plugins`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from vcore import plugins as P
from vcore.errors import ProfileError
from vcore.gpu.placement_args import GPUPlacementArgs, parse_gpu_placement_args
from vcore.validation import load_yaml_file

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "BinpackArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "Profile",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

_DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))
_MAX_RESOURCE_WEIGHT = 100  # kube-scheduler: resource weight in (0, 100]
_MAX_UTILIZATION = 100
_MAX_CUSTOM_PRIORITY_SCORE = 10  # kube-scheduler config.MaxCustomPriorityScore
_MAX_INT32 = 2**31 - 1

_PROFILE_KEYS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_CONFIG_KEYS = ("apiVersion", "kind", "percentageOfNodesToScore", "profiles")
_PLUGIN_SET_KEYS = ("enabled", "disabled")
_PLUGIN_KEYS = ("name", "weight")
_PLUGIN_CONFIG_KEYS = ("name", "args")
_TYPE_META_KEYS = ("apiVersion", "kind")

_BINPACK_WEIGHT = "binpack.weight"
_BINPACK_CPU = "binpack.cpu"
_BINPACK_MEMORY = "binpack.memory"
_BINPACK_RESOURCES = "binpack.resources"
_BINPACK_RESOURCES_PREFIX = _BINPACK_RESOURCES + "."

# k8s.io/apimachinery IsQualifiedName: optional DNS-1123 subdomain prefix, "/", then a name part.
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


# ----------------------------------------------------------------------------------------------------------
# Resolved argument types
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeResourcesFitArgs:
    """Resolved NodeResourcesFit arguments (kube-scheduler ``NodeResourcesFitArgs`` after defaulting)."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = _DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()  # (utilization, score) points; only for RequestedToCapacityRatio

    def to_dict(self) -> dict[str, Any]:
        """The arguments in KubeSchedulerConfiguration ``args`` shape."""
        strategy: dict[str, Any] = {
            "type": self.strategy,
            "resources": [{"name": n, "weight": w} for n, w in self.resources],
        }
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            strategy["requestedToCapacityRatio"] = {
                "shape": [{"utilization": u, "score": s} for u, s in self.shape]}
        return {
            "ignoredResources": list(self.ignored_resources),
            "ignoredResourceGroups": list(self.ignored_resource_groups),
            "scoringStrategy": strategy,
        }


@dataclass(frozen=True)
class NodeResourcesBalancedAllocationArgs:
    """Resolved NodeResourcesBalancedAllocation arguments (every weight is 1, as kube-scheduler requires)."""

    resources: tuple[tuple[str, int], ...] = _DEFAULT_RESOURCES

    def to_dict(self) -> dict[str, Any]:
        """The arguments in KubeSchedulerConfiguration ``args`` shape."""
        return {"resources": [{"name": n, "weight": w} for n, w in self.resources]}


@dataclass(frozen=True)
class BinpackArgs:
    """Resolved Volcano binpack arguments.

    ``weight`` is ``binpack.weight`` (the node score is ``sum(s_r) / sum(w_r) * 100 * weight``; 0 turns the
    score off), ``cpu``/``memory`` the weights of those resources, ``resources`` the extended resources
    listed in ``binpack.resources`` with their ``binpack.resources.<name>`` weights, in listed order.
    """

    weight: int = 1
    cpu: int = 1
    memory: int = 1
    resources: tuple[tuple[str, int], ...] = ()

    @property
    def all_resources(self) -> tuple[tuple[str, int], ...]:
        """(name, weight) of every resource binpack scores: cpu, memory, then the listed ones."""
        return (("cpu", self.cpu), ("memory", self.memory)) + self.resources

    def to_dict(self) -> dict[str, Any]:
        """The arguments with Volcano's keys."""
        out: dict[str, Any] = {_BINPACK_WEIGHT: self.weight, _BINPACK_CPU: self.cpu, _BINPACK_MEMORY: self.memory}
        if self.resources:
            out[_BINPACK_RESOURCES] = ", ".join(n for n, _ in self.resources)
            for name, w in self.resources:
                out[_BINPACK_RESOURCES_PREFIX + name] = w
        return out


# ----------------------------------------------------------------------------------------------------------
# Profile
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """A validated, fully resolved scheduler profile. Build it with :meth:`from_config`.

    ``filters`` and ``scores`` are the plugins vcore runs at those extension points, in kube-scheduler's
    resolved order; ``pre_filters``/``pre_scores`` are the resolved pre-phases (vcore fuses them into the
    filter and score kernels). kube-scheduler plugins that vcore does not implement are not listed.
    """

    scheduler_name: str
    percentage_of_nodes_to_score: int  # 0 = adaptive
    pre_filters: tuple[str, ...]
    filters: tuple[str, ...]
    pre_scores: tuple[str, ...]
    scores: tuple[tuple[str, int], ...]  # (plugin, weight >= 1)
    fit: NodeResourcesFitArgs
    balanced: NodeResourcesBalancedAllocationArgs
    binpack: BinpackArgs
    gpu: GPUPlacementArgs = GPUPlacementArgs()

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str | os.PathLike[str] | Profile | None = None) -> Profile:
        """Validate and resolve a profile.

        ``config`` is None (kube-scheduler's default profile), a dict in the shape of one
        KubeSchedulerConfiguration profile, a whole KubeSchedulerConfiguration dict with exactly one
        profile, a path (str or os.PathLike) to a YAML file holding either, or a Profile (returned as is).
        Raises ProfileError (a ValueError) naming the offending field; TypeError when ``config`` itself is
        of none of these types; ProfileError too when the file cannot be read.
        """
        if isinstance(config, Profile):
            return config
        if config is None:
            return _resolve({}, "", None)
        if isinstance(config, (str, os.PathLike)):
            path = os.fspath(config)
            data = load_yaml_file(path, ProfileError)
            if data is None:
                raise ProfileError(f"{path}: empty YAML document; expected a profile or a {KIND}")
            return _from_data(data, path)
        if isinstance(config, Mapping):
            return _from_data(config, "")
        raise TypeError(
            f"profile: expected a dict, a YAML file path or None, got {type(config).__name__}")

    def native(self) -> dict[str, Any]:
        """The native profile dict the engine consumes (see the internal contract); a fresh copy per call."""
        return {
            "filters": list(self.filters),
            "scores": list(self.scores),
            "fit": {
                "ignored_resources": list(self.fit.ignored_resources),
                "ignored_resource_groups": list(self.fit.ignored_resource_groups),
                "strategy": self.fit.strategy,
                "resources": list(self.fit.resources),
                "shape": list(self.fit.shape),
            },
            "balanced": {"resources": list(self.balanced.resources)},
            "binpack": {"weight": self.binpack.weight, "resources": list(self.binpack.all_resources)},
            "gpu": self.gpu.native(),
            "percentage_of_nodes_to_score": self.percentage_of_nodes_to_score,
        }

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as a KubeSchedulerConfiguration with this one profile.

        Every extension point vcore runs (preFilter, filter, preScore, score) is spelled out as
        ``disabled: [{name: "*"}]`` plus the resolved ``enabled`` list (with weights at ``score``), and every
        argument is defaulted, so the result shows exactly what runs and loads back into an equal Profile.
        ``multiPoint`` is left at its default, so the other extension points (queueSort, bind, ...) keep
        kube-scheduler's plugins, which vcore does not run.
        """
        def point(names: tuple[str, ...]) -> dict[str, Any]:
            return {"enabled": [{"name": n} for n in names], "disabled": [{"name": "*"}]}

        plugins: dict[str, Any] = {
            P.PRE_FILTER: point(self.pre_filters),
            P.FILTER: point(self.filters),
            P.PRE_SCORE: point(self.pre_scores),
            P.SCORE: {"enabled": [{"name": n, "weight": w} for n, w in self.scores], "disabled": [{"name": "*"}]},
        }
        running = set(self.filters) | {n for n, _ in self.scores}
        plugin_config = []
        for name, args, default in (
            (P.NODE_RESOURCES_FIT, self.fit, NodeResourcesFitArgs()),
            (P.NODE_RESOURCES_BALANCED_ALLOCATION, self.balanced, NodeResourcesBalancedAllocationArgs()),
            (P.BINPACK, self.binpack, BinpackArgs()),
            (P.GPU_PLACEMENT, self.gpu, GPUPlacementArgs()),
        ):
            if name in running or args != default:
                plugin_config.append({"name": name, "args": args.to_dict()})
        profile = {
            "schedulerName": self.scheduler_name,
            "percentageOfNodesToScore": self.percentage_of_nodes_to_score,
            "plugins": plugins,
            "pluginConfig": plugin_config,
        }
        return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}


# ----------------------------------------------------------------------------------------------------------
# Parsing helpers. Paths are built as strings; every error message starts with the field's path.
# ----------------------------------------------------------------------------------------------------------

def _fail(path: str, message: str) -> ProfileError:
    return ProfileError(f"{path}: {message}" if path else message)


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _as_mapping(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(path, f"must be a mapping, got {_type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            raise _fail(path, f"keys must be strings, got {key!r}")
    return value


def _check_keys(value: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    for key in value:
        if key not in allowed:
            raise _unknown_key(_child(path, key), key, allowed)


def _unknown_key(path: str, key: str, allowed: tuple[str, ...]) -> ProfileError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (expected one of: {', '.join(allowed)})"
    return _fail(path, "unknown key" + hint)


def _as_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise _fail(path, f"must be a list, got {_type_name(value)}")
    return list(value)


def _as_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"must be a string, got {_type_name(value)}")
    return value


def _as_int(value: Any, path: str, lo: int, hi: int) -> int:
    # bool is a subclass of int in Python; a YAML `true` is not a number.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"must be an integer, got {_type_name(value)}")
    if value < lo or value > hi:
        raise _fail(path, f"{value} not in valid range [{lo}, {hi}]")
    return int(value)


def _is_qualified_name(name: str) -> bool:
    """k8s.io/apimachinery validation.IsQualifiedName."""
    parts = name.split("/")
    if len(parts) == 1:
        prefix, short = "", parts[0]
    elif len(parts) == 2:
        prefix, short = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return False
    else:
        return False
    return 0 < len(short) <= 63 and bool(_QUALIFIED_NAME_RE.match(short))


def _suggest_plugin(name: str) -> str:
    close = difflib.get_close_matches(name, sorted(P.KNOWN_PLUGINS), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# ----------------------------------------------------------------------------------------------------------
# Top level
# ----------------------------------------------------------------------------------------------------------

def _from_data(data: Any, origin: str) -> Profile:
    """Resolve a profile or a whole configuration; ``origin`` (a file path or "") prefixes error messages."""
    try:
        data = _as_mapping(data, "profile")
        if "profiles" in data or "kind" in data or "apiVersion" in data:
            return _from_configuration(data)
        return _resolve(data, "", None)
    except ProfileError as exc:
        if origin:
            raise ProfileError(f"{origin}: {exc}") from None
        raise


def _from_configuration(data: Mapping[str, Any]) -> Profile:
    for key in data:
        if key not in _CONFIG_KEYS:
            raise _fail(key, f"not a profile setting; vcore reads only {', '.join(_CONFIG_KEYS)} of a {KIND}")
    if data.get("apiVersion") != API_VERSION:
        raise _fail("apiVersion", f"must be {API_VERSION!r}, got {data.get('apiVersion')!r}")
    if data.get("kind") != KIND:
        raise _fail("kind", f"must be {KIND!r}, got {data.get('kind')!r}")
    global_pct = None
    if data.get("percentageOfNodesToScore") is not None:
        global_pct = _as_int(data["percentageOfNodesToScore"], "percentageOfNodesToScore", 0, 100)
    if data.get("profiles") is None:
        return _resolve({}, "profiles[0]", global_pct)  # kube-scheduler defaults a single profile
    profiles = _as_list(data["profiles"], "profiles")
    if len(profiles) != 1:
        raise _fail("profiles", f"must hold exactly one profile, got {len(profiles)} (a vcore Profile is one profile)")
    return _resolve(profiles[0], "profiles[0]", global_pct)


def _resolve(data: Any, root: str, global_pct: int | None) -> Profile:
    """Resolve one profile; ``root`` is the profile's own path ("" or "profiles[0]")."""
    data = _as_mapping(data, root or "profile")
    _check_keys(data, _PROFILE_KEYS, root)

    scheduler_name = DEFAULT_SCHEDULER_NAME
    if data.get("schedulerName") is not None:
        scheduler_name = _as_str(data["schedulerName"], _child(root, "schedulerName"))
        if not scheduler_name:
            raise _fail(_child(root, "schedulerName"), "required (must not be empty)")

    pct = global_pct if global_pct is not None else 0  # kube-scheduler's default: 0 = adaptive
    if data.get("percentageOfNodesToScore") is not None:
        pct = _as_int(data["percentageOfNodesToScore"], _child(root, "percentageOfNodesToScore"), 0, 100)

    args = _parse_plugin_config(data.get("pluginConfig"), _child(root, "pluginConfig"))
    fit = args.get(P.NODE_RESOURCES_FIT, NodeResourcesFitArgs())
    balanced = args.get(P.NODE_RESOURCES_BALANCED_ALLOCATION, NodeResourcesBalancedAllocationArgs())
    binpack = args.get(P.BINPACK, BinpackArgs())
    gpu = args.get(P.GPU_PLACEMENT, GPUPlacementArgs())

    points = _resolve_plugins(data.get("plugins"), _child(root, "plugins"), binpack, gpu)
    return Profile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=pct,
        pre_filters=points[P.PRE_FILTER],
        filters=points[P.FILTER],
        pre_scores=points[P.PRE_SCORE],
        scores=points[P.SCORE],
        fit=fit,
        balanced=balanced,
        binpack=binpack,
        gpu=gpu,
    )


# ----------------------------------------------------------------------------------------------------------
# plugins: parsing and kube-scheduler v1 merge
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _PluginSet:
    enabled: tuple[tuple[str, int | None], ...]  # (name, weight or None when absent/0)
    disabled: frozenset[str]


def _parse_plugin_set(value: Any, point: str, path: str) -> _PluginSet:
    if value is None:
        return _PluginSet((), frozenset())
    value = _as_mapping(value, path)
    _check_keys(value, _PLUGIN_SET_KEYS, path)

    disabled: set[str] = set()
    raw_disabled = value.get("disabled")
    raw_disabled = [] if raw_disabled is None else _as_list(raw_disabled, _child(path, "disabled"))
    for i, entry in enumerate(raw_disabled):
        epath = f"{path}.disabled[{i}]"
        name, _ = _parse_plugin_entry(entry, epath)
        if name != "*" and name not in P.KNOWN_PLUGINS:
            raise _fail(f"{epath}.name", f"unknown plugin {name!r}{_suggest_plugin(name)}")
        disabled.add(name)  # disabling a plugin vcore does not run is a no-op

    enabled: list[tuple[str, int | None]] = []
    seen: dict[str, int] = {}
    raw_enabled = value.get("enabled")
    raw_enabled = [] if raw_enabled is None else _as_list(raw_enabled, _child(path, "enabled"))
    for i, entry in enumerate(raw_enabled):
        epath = f"{path}.enabled[{i}]"
        name, weight = _parse_plugin_entry(entry, epath)
        npath = f"{epath}.name"
        if name == "*":
            raise _fail(npath, "'*' is only valid in a disabled list")
        if name in P.REMOVED_PLUGINS:
            raise _fail(npath, f"plugin {name!r} was removed from kube-scheduler "
                               f"(invalid in {API_VERSION}); vcore does not implement it")
        if name in P.UNIMPLEMENTED_PLUGINS:
            raise _fail(npath, f"vcore does not implement plugin {name!r}; disable it or leave it out")
        if not P.is_implemented(name):
            raise _fail(npath, f"unknown plugin {name!r}{_suggest_plugin(name)}")
        if point != P.MULTI_POINT and not P.implements(name, point):
            points = ", ".join(p for p in P.SPECIFIC_POINTS if P.implements(name, p))
            raise _fail(npath, f"plugin {name!r} does not implement the {point} extension point "
                               f"(it implements: {points})")
        if name in seen:
            raise _fail(npath, f"plugin {name!r} is enabled twice (also at {path}.enabled[{seen[name]}])")
        seen[name] = i
        enabled.append((name, weight))
    return _PluginSet(tuple(enabled), frozenset(disabled))


def _parse_plugin_entry(entry: Any, path: str) -> tuple[str, int | None]:
    entry = _as_mapping(entry, path)
    _check_keys(entry, _PLUGIN_KEYS, path)
    if entry.get("name") is None:
        raise _fail(f"{path}.name", "required")
    name = _as_str(entry["name"], f"{path}.name")
    if not name:
        raise _fail(f"{path}.name", "required (must not be empty)")
    if entry.get("weight") is None:
        return name, None
    raw = entry["weight"]
    if isinstance(raw, int) and not isinstance(raw, bool) and raw < 0:
        raise _fail(f"{path}.weight", f"{raw} must be positive (0 or absent means unset, i.e. 1)")
    return name, _as_int(raw, f"{path}.weight", 0, P.MAX_WEIGHT) or None  # 0 means unset, as in kube-scheduler


def _merge_plugin_set(defaults: tuple[tuple[str, int | None], ...], custom: _PluginSet) -> list[tuple[str, int | None]]:
    """kube-scheduler v1 mergePluginSet: defaults minus disabled, re-configured in place, then the rest appended."""
    merged: list[tuple[str, int | None]] = []
    replaced: set[str] = set()
    custom_by_name = dict(custom.enabled)
    if "*" not in custom.disabled:
        for name, weight in defaults:
            if name in custom.disabled:
                continue
            if name in custom_by_name:
                weight = custom_by_name[name]
                replaced.add(name)
            merged.append((name, weight))
    merged.extend((n, w) for n, w in custom.enabled if n not in replaced)
    return merged


def _resolve_plugins(value: Any, path: str, binpack: BinpackArgs, gpu: GPUPlacementArgs) -> dict[str, Any]:
    """Resolve every extension point vcore runs, as kube-scheduler v1 defaulting + framework do."""
    if value is None:
        value = {}
    value = _as_mapping(value, path)
    _check_keys(value, P.EXTENSION_POINTS, path)
    sets = {point: _parse_plugin_set(value.get(point), point, _child(path, point)) for point in P.EXTENSION_POINTS}

    # v1 defaulting: the defaults all come through multiPoint; every other point's default set is empty.
    multi_point = _merge_plugin_set(P.VCORE_DEFAULT_MULTI_POINT, sets[P.MULTI_POINT])

    resolved: dict[str, Any] = {}
    for point in (P.PRE_FILTER, P.FILTER, P.PRE_SCORE, P.SCORE):
        specific = sets[point]
        specific_names = [n for n, _ in specific.enabled]
        if "*" in specific.disabled:
            resolved[point] = tuple(specific_names)  # framework: "*" skips the multiPoint expansion
            continue
        overrides: set[str] = set()
        expanded: list[str] = []
        for name, _ in multi_point:
            if not P.implements(name, point) or name in specific.disabled:
                continue  # also drops the in-tree defaults vcore does not implement
            if name in specific_names:
                overrides.add(name)  # explicitly configured at this point: that entry wins
                continue
            expanded.append(name)
        # framework order: overridden plugins (in their specific order), multiPoint ones, the other specific ones
        resolved[point] = tuple(
            [n for n in specific_names if n in overrides] + expanded
            + [n for n in specific_names if n not in overrides])

    # framework getScoreWeights: the score point's own entry wins over multiPoint; 0/absent -> 1.
    weights: dict[str, int] = {}
    for name, weight in list(sets[P.SCORE].enabled) + multi_point:
        if P.implements(name, P.SCORE) and name not in weights:
            weights[name] = weight or 1
    total = 0
    for name in weights:
        # binpack's own score reaches 100 * binpack.weight (Volcano), GPUPlacement's is in tenths of a point.
        top = weights[name] * P.MAX_NODE_SCORE * (max(binpack.weight, 1) if name == P.BINPACK else 1)
        if name == P.GPU_PLACEMENT:
            top = weights[name] * gpu.max_score
        if top > P.MAX_TOTAL_SCORE - total:
            raise _fail(_child(path, P.SCORE), "total score of Score plugins could overflow")
        total += top
    resolved[P.SCORE] = tuple((n, weights[n]) for n in resolved[P.SCORE])
    return resolved


# ----------------------------------------------------------------------------------------------------------
# pluginConfig
# ----------------------------------------------------------------------------------------------------------

def _parse_plugin_config(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for i, entry in enumerate(_as_list(value, path)):
        epath = f"{path}[{i}]"
        entry = _as_mapping(entry, epath)
        _check_keys(entry, _PLUGIN_CONFIG_KEYS, epath)
        if entry.get("name") is None:
            raise _fail(f"{epath}.name", "required")
        name = _as_str(entry["name"], f"{epath}.name")
        if name in P.REMOVED_PLUGINS:
            raise _fail(f"{epath}.name", f"plugin {name!r} was removed from kube-scheduler (invalid in {API_VERSION})")
        if name in P.UNIMPLEMENTED_PLUGINS:
            raise _fail(f"{epath}.name", f"vcore does not implement plugin {name!r}, so it takes no arguments")
        if not P.is_implemented(name):
            raise _fail(f"{epath}.name", f"unknown plugin {name!r}{_suggest_plugin(name)}")
        if name in seen:
            raise _fail(f"{epath}.name", f"duplicate entry for plugin {name!r} (first at {path}[{seen[name]}])")
        seen[name] = i
        apath = f"{epath} ({name}).args"
        args = entry.get("args")
        args = {} if args is None else _as_mapping(args, apath)
        parsed = _ARG_PARSERS[name](args, apath)
        if parsed is not None:
            out[name] = parsed
    return out


def _check_type_meta(args: Mapping[str, Any], plugin: str, path: str) -> None:
    """kube-scheduler args may carry apiVersion/kind (e.g. kind: NodeResourcesFitArgs); check them."""
    if "apiVersion" in args and args["apiVersion"] != API_VERSION:
        raise _fail(f"{path}.apiVersion", f"must be {API_VERSION!r}, got {args['apiVersion']!r}")
    if "kind" in args and args["kind"] != f"{plugin}Args":
        raise _fail(f"{path}.kind", f"must be {plugin + 'Args'!r}, got {args['kind']!r}")


def _parse_resource_specs(value: Any, path: str, *, exactly_one: bool) -> tuple[tuple[str, int], ...]:
    """A [{name, weight}] list; empty/absent -> cpu 1, memory 1; weight 0/absent -> 1 (kube-scheduler defaulting)."""
    if value is None:
        return _DEFAULT_RESOURCES
    items = _as_list(value, path)
    if not items:
        return _DEFAULT_RESOURCES
    out: list[tuple[str, int]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        ipath = f"{path}[{i}]"
        item = _as_mapping(item, ipath)
        _check_keys(item, ("name", "weight"), ipath)
        if item.get("name") is None:
            raise _fail(f"{ipath}.name", "required")
        name = _as_str(item["name"], f"{ipath}.name")
        if not name:
            raise _fail(f"{ipath}.name", "required (must not be empty)")
        if name in seen:
            raise _fail(f"{ipath}.name", f"duplicate resource {name!r} (also at {path}[{seen[name]}])")
        seen[name] = i
        raw = item.get("weight")
        weight = 1 if raw is None else _as_int(raw, f"{ipath}.weight", -(2**63), 2**63 - 1) or 1
        if exactly_one and weight != 1:
            raise _fail(f"{ipath}.weight", f"{weight} must be 1")
        if not 0 < weight <= _MAX_RESOURCE_WEIGHT:
            raise _fail(f"{ipath}.weight",
                        f"resource weight of {name} not in valid range (0, {_MAX_RESOURCE_WEIGHT}]: {weight}")
        out.append((name, weight))
    return tuple(out)


def _parse_names(value: Any, path: str, *, group: bool) -> tuple[str, ...]:
    if value is None:
        return ()
    out = []
    for i, item in enumerate(_as_list(value, path)):
        ipath = f"{path}[{i}]"
        name = _as_str(item, ipath)
        if group and "/" in name:
            raise _fail(ipath, f"resource group name can't contain '/': {name!r}")
        if not _is_qualified_name(name):
            raise _fail(ipath, f"{name!r} is not a valid qualified name ([prefix/]name, name of at most 63 "
                               "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric)")
        out.append(name)
    return tuple(out)


def _parse_shape(value: Any, path: str) -> tuple[tuple[int, int], ...]:
    points = _as_list(value, path) if value is not None else []
    if not points:
        raise _fail(path, "required: at least one point must be specified")
    out: list[tuple[int, int]] = []
    for i, point in enumerate(points):
        ppath = f"{path}[{i}]"
        point = _as_mapping(point, ppath)
        _check_keys(point, ("utilization", "score"), ppath)
        # int32 fields: absent is 0, as in kube-scheduler
        util = _as_int(point.get("utilization", 0), f"{ppath}.utilization", 0, _MAX_UTILIZATION)
        score = _as_int(point.get("score", 0), f"{ppath}.score", 0, _MAX_CUSTOM_PRIORITY_SCORE)
        if out and util <= out[-1][0]:
            raise _fail(f"{ppath}.utilization", f"{util}: values must be sorted in strictly increasing order")
        out.append((util, score))
    return tuple(out)


def _parse_fit_args(args: Mapping[str, Any], path: str) -> NodeResourcesFitArgs:
    """kube-scheduler SetDefaults_NodeResourcesFitArgs + ValidateNodeResourcesFitArgs."""
    _check_keys(args, _TYPE_META_KEYS + ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"), path)
    _check_type_meta(args, P.NODE_RESOURCES_FIT, path)
    ignored = _parse_names(args.get("ignoredResources"), _child(path, "ignoredResources"), group=False)
    groups = _parse_names(args.get("ignoredResourceGroups"), _child(path, "ignoredResourceGroups"), group=True)
    raw = args.get("scoringStrategy")
    if raw is None:
        return NodeResourcesFitArgs(ignored, groups)
    spath = _child(path, "scoringStrategy")
    strategy = _as_mapping(raw, spath)
    _check_keys(strategy, ("type", "resources", "requestedToCapacityRatio"), spath)
    kind = LEAST_ALLOCATED
    if strategy.get("type") is not None:
        kind = _as_str(strategy["type"], f"{spath}.type")
        if kind not in SCORING_STRATEGY_TYPES:
            raise _fail(f"{spath}.type", f"unsupported value {kind!r}: supported values: "
                                         + ", ".join(repr(t) for t in SCORING_STRATEGY_TYPES))
    resources = _parse_resource_specs(strategy.get("resources"), f"{spath}.resources", exactly_one=False)
    rpath = f"{spath}.requestedToCapacityRatio"
    ratio = strategy.get("requestedToCapacityRatio")
    shape: tuple[tuple[int, int], ...] = ()
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if ratio is None:
            raise _fail(rpath, "required when type is RequestedToCapacityRatio")
        ratio = _as_mapping(ratio, rpath)
        _check_keys(ratio, ("shape",), rpath)
        shape = _parse_shape(ratio.get("shape"), f"{rpath}.shape")
    elif ratio is not None:
        raise _fail(rpath, "forbidden: must be absent when type is not RequestedToCapacityRatio")
    return NodeResourcesFitArgs(ignored, groups, kind, resources, shape)


def _parse_balanced_args(args: Mapping[str, Any], path: str) -> NodeResourcesBalancedAllocationArgs:
    """kube-scheduler SetDefaults_/ValidateNodeResourcesBalancedAllocationArgs (weights must be 1)."""
    _check_keys(args, _TYPE_META_KEYS + ("resources",), path)
    _check_type_meta(args, P.NODE_RESOURCES_BALANCED_ALLOCATION, path)
    return NodeResourcesBalancedAllocationArgs(
        _parse_resource_specs(args.get("resources"), _child(path, "resources"), exactly_one=True))


def _parse_node_affinity_args(args: Mapping[str, Any], path: str) -> None:
    _check_keys(args, _TYPE_META_KEYS + ("addedAffinity",), path)
    _check_type_meta(args, P.NODE_AFFINITY, path)
    if args.get("addedAffinity") is not None:
        raise _fail(_child(path, "addedAffinity"), "not supported by vcore yet")
    return None


def _parse_no_args(args: Mapping[str, Any], path: str) -> None:
    """TaintToleration and NodeUnschedulable take no arguments."""
    _check_keys(args, (), path)
    return None


def _parse_binpack_args(args: Mapping[str, Any], path: str) -> BinpackArgs:
    """Volcano binpack arguments ("binpack.weight", "binpack.cpu", ...), validated strictly.

    Volcano falls back to 1 for a negative cpu/memory/resource weight and ignores keys it does not read;
    vcore rejects both, so that a typo or a wrong value never silently becomes a default.
    """
    def weight_of(key: str, default: int) -> int:
        return default if args.get(key) is None else _as_int(args[key], _child(path, key), 0, _MAX_INT32)

    weight = weight_of(_BINPACK_WEIGHT, 1)
    cpu = weight_of(_BINPACK_CPU, 1)
    memory = weight_of(_BINPACK_MEMORY, 1)
    listed: list[str] = []
    if args.get(_BINPACK_RESOURCES) is not None:
        rpath = _child(path, _BINPACK_RESOURCES)
        for item in _as_str(args[_BINPACK_RESOURCES], rpath).split(","):
            name = item.strip()
            if not name:
                continue
            if name in ("cpu", "memory"):
                raise _fail(rpath, f"{name!r} is weighted by binpack.{name}, not listed here")
            if not _is_qualified_name(name):
                raise _fail(rpath, f"{name!r} is not a valid resource name")
            if name in listed:
                raise _fail(rpath, f"resource {name!r} listed twice")
            listed.append(name)
    known = (_BINPACK_WEIGHT, _BINPACK_CPU, _BINPACK_MEMORY, _BINPACK_RESOURCES)
    for key in args:
        if key in known:
            continue
        if key.startswith(_BINPACK_RESOURCES_PREFIX) and key[len(_BINPACK_RESOURCES_PREFIX):] not in listed:
            raise _fail(_child(path, key), "unknown key: resource "
                        f"{key[len(_BINPACK_RESOURCES_PREFIX):]!r} is not listed in binpack.resources")
        if not key.startswith(_BINPACK_RESOURCES_PREFIX):
            raise _unknown_key(_child(path, key), key, known + (_BINPACK_RESOURCES_PREFIX + "<name>",))
    resources = tuple((name, weight_of(_BINPACK_RESOURCES_PREFIX + name, 1)) for name in listed)
    return BinpackArgs(weight, cpu, memory, resources)


_ARG_PARSERS = {
    P.NODE_RESOURCES_FIT: _parse_fit_args,
    P.NODE_RESOURCES_BALANCED_ALLOCATION: _parse_balanced_args,
    P.NODE_AFFINITY: _parse_node_affinity_args,
    P.TAINT_TOLERATION: _parse_no_args,
    P.NODE_UNSCHEDULABLE: _parse_no_args,
    P.BINPACK: _parse_binpack_args,
    P.GPU_DEVICE_FIT: _parse_no_args,
    P.GPU_PLACEMENT: parse_gpu_placement_args,
}
