"""The scheduling cycle's configuration, in the shape of Volcano's ``volcano-scheduler.conf``.

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]

Actions run in the listed order. Job-level plugins (priority, gang, conformance, drf, overcommit, pdb, and one
queue-share plugin: proportion, capacity, hierarchy or cohort) are vcore's own; ``pdb`` keeps preempt and reclaim
from evicting past a PodDisruptionBudget. Node-level plugins (predicates,
nodeorder, binpack) become a KubeSchedulerConfiguration profile for the native kernels: ``predicates`` turns the
node filters on (without it only resource fit filters, as in Volcano), ``nodeorder``'s weight arguments become
score plugin weights, ``binpack`` keeps Volcano's argument keys. ``network-topology-aware`` takes Volcano's
arguments and vcore's solver arguments (:mod:`vcore.topology.args`); PodGroups' network topology constraints hold
with or without it, the plugin sets how they are placed and scores the nodes of unconstrained pods by their
HyperNodes. ``numa-aware`` is accepted for Volcano configurations: the NUMA policies it enforces are vcore's
GPUDeviceFit alignment (``vcore.gpu.numa``, always on for pods that carry a policy). An unknown action, plugin, key
or argument is a ProfileError naming the field. ``CycleConfig.default()`` is Volcano's default configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import yaml

from vcore.batch.shares import names as share_names
from vcore.errors import ProfileError
from vcore.topology.args import TopologyPlacementArgs, parse_topology_args
from vcore.validation import Integer, Number, load_yaml_file

# Actions, in the order Volcano documents them.
ENQUEUE, ALLOCATE, BACKFILL, PREEMPT, RECLAIM = "enqueue", "allocate", "backfill", "preempt", "reclaim"
ACTIONS = (ENQUEUE, ALLOCATE, BACKFILL, PREEMPT, RECLAIM)

# Job-level plugins.
PRIORITY, GANG, CONFORMANCE, DRF, OVERCOMMIT, PDB = "priority", "gang", "conformance", "drf", "overcommit", "pdb"
SHARE_PLUGINS = (share_names.PROPORTION, share_names.CAPACITY, share_names.HIERARCHY, share_names.COHORT)
# Node-level plugins, mapped onto the KubeSchedulerConfiguration profile.
PREDICATES, NODEORDER, BINPACK = "predicates", "nodeorder", "binpack"
NODE_PLUGINS = (PREDICATES, NODEORDER, BINPACK)
# Topology plugins (Volcano's names).
NETWORK_TOPOLOGY, NUMA_AWARE = "network-topology-aware", "numa-aware"
PLUGINS = (PRIORITY, GANG, CONFORMANCE, DRF, OVERCOMMIT, PDB, *SHARE_PLUGINS, *NODE_PLUGINS, NETWORK_TOPOLOGY,
           NUMA_AWARE)

#: Volcano's PluginOption switches (conf.PluginOption); unset means enabled.
PLUGIN_SWITCHES = (
    "enableJobOrder", "enableNamespaceOrder", "enableHierarchy", "enableJobReady", "enableJobPipelined",
    "enableTaskOrder", "enablePreemptable", "enableReclaimable", "enableQueueOrder", "enablePredicate",
    "enableBestNode", "enableNodeOrder", "enableTargetJob", "enableReservedNodes", "enableJobEnqueued",
    "enableVictim", "enableJobStarving", "enabledOverused", "enabledAllocatable", "enabledClusterOrder",
)
_TOP_KEYS = ("actions", "tiers", "configurations")

DEFAULT_OVERCOMMIT_FACTOR = 1.2  # Volcano's overcommit plugin default
#: Volcano's nodeorder defaults (plugins/nodeorder: calculateWeight).
NODEORDER_DEFAULTS = {
    "leastrequested.weight": 1, "mostrequested.weight": 0, "nodeaffinity.weight": 2, "podaffinity.weight": 2,
    "balancedresource.weight": 1, "tainttoleration.weight": 3, "imagelocality.weight": 1,
    "podtopologyspread.weight": 2,
}
#: predicates switches: those vcore maps to a filter, and those of filters it does not implement.
_PREDICATE_FILTERS = {"predicate.TaintTolerationEnable": "TaintToleration",
                      "predicate.NodeAffinityEnable": "NodeAffinity", "predicate.NodePortsEnable": "NodePorts",
                      "predicate.PodTopologySpreadEnable": "PodTopologySpread",
                      "predicate.PodAffinityEnable": "InterPodAffinity"}
#: The predicates plugin's filters in the order they run (kube-scheduler's default profile order).
_PREDICATES_IN_ORDER = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                        "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "GPUDeviceFit")
_PREDICATE_GPU = ("predicate.GPUSharingEnable", "predicate.GPUNumberEnable")
_PREDICATE_UNIMPLEMENTED = ("predicate.NodeVolumeLimitsEnable", "predicate.VolumeZoneEnable",
                            "predicate.VolumeBindingEnable")
_PREDICATE_ACCEPTED = ("predicate.CacheEnable", "predicate.ProportionalEnable", "predicate.resources")

DEFAULT_CONF = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": PRIORITY}, {"name": GANG}, {"name": CONFORMANCE}]},
        {"plugins": [{"name": OVERCOMMIT}, {"name": DRF}, {"name": PREDICATES}, {"name": share_names.PROPORTION},
                     {"name": NODEORDER}]},
    ],
}


@dataclass(frozen=True)
class PluginOption:
    """One plugin of a tier: its arguments and the Volcano switches given explicitly (unset means enabled)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    switches: Mapping[str, bool] = field(default_factory=dict)
    path: str = ""

    def enabled(self, switch: str) -> bool:
        return self.switches.get(switch, True)


@dataclass(frozen=True)
class CycleConfig:
    """A validated cycle configuration."""

    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    action_arguments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def default(cls) -> CycleConfig:
        return parse_cycle(DEFAULT_CONF)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str | os.PathLike[str] | CycleConfig | None) -> CycleConfig:
        """None (Volcano's default), a dict, a CycleConfig, or the path of a YAML file holding the
        volcano-scheduler.conf document (or a ConfigMap whose data has a ``volcano-scheduler.conf`` entry)."""
        if isinstance(config, CycleConfig):
            return config
        if config is None:
            return cls.default()
        if isinstance(config, (str, os.PathLike)):
            path = os.fspath(config)
            data = load_yaml_file(path, ProfileError)
            try:
                return parse_cycle(_unwrap_configmap(data))
            except ProfileError as exc:
                raise ProfileError(f"{path}: {exc}") from None
        if isinstance(config, Mapping):
            return parse_cycle(_unwrap_configmap(config))
        raise TypeError(f"cycle: expected a dict, a YAML file path or None, got {type(config).__name__}")

    def plugins(self) -> list[PluginOption]:
        return [p for tier in self.tiers for p in tier]

    def plugin(self, name: str) -> PluginOption | None:
        return next((p for p in self.plugins() if p.name == name), None)

    def has(self, name: str) -> bool:
        return self.plugin(name) is not None

    def share_plugin(self) -> PluginOption | None:
        return next((p for p in self.plugins() if p.name in SHARE_PLUGINS), None)

    @property
    def overcommit_factor(self) -> float:
        option = self.plugin(OVERCOMMIT)
        return option.arguments.get("overcommit-factor", DEFAULT_OVERCOMMIT_FACTOR) if option else 0.0

    @cached_property
    def topology(self) -> TopologyPlacementArgs | None:
        """The network-topology-aware plugin's arguments, None when it is not configured."""
        option = self.plugin(NETWORK_TOPOLOGY)
        return None if option is None else parse_topology_args(option.arguments, f"{option.path}.arguments")

    def has_node_settings(self) -> bool:
        """Whether node-level plugins carry arguments (then they, not a separate profile, set node scoring)."""
        return any(p.arguments for p in self.plugins() if p.name in NODE_PLUGINS)

    def node_profile(self) -> dict[str, Any]:
        """The KubeSchedulerConfiguration profile (dict) that the node-level plugins describe."""
        filters = ["NodeResourcesFit", "GPUDeviceFit"]
        predicates = self.plugin(PREDICATES)
        if predicates is not None:
            switched = {plugin for key, plugin in _PREDICATE_FILTERS.items() if predicates.arguments.get(key, True)}
            filters = [p for p in _PREDICATES_IN_ORDER if p in switched or p not in _PREDICATE_FILTERS.values()]
            if not all(predicates.arguments.get(k, True) for k in _PREDICATE_GPU):
                filters.remove("GPUDeviceFit")
        scores: list[dict[str, Any]] = []
        plugin_config: list[dict[str, Any]] = []
        nodeorder = self.plugin(NODEORDER)
        if nodeorder is not None:
            w = {**NODEORDER_DEFAULTS, **nodeorder.arguments}
            least, most = w["leastrequested.weight"], w["mostrequested.weight"]
            if least and most:
                raise ProfileError(f"{nodeorder.path}.arguments: leastrequested.weight and mostrequested.weight are "
                                   "both set; vcore's NodeResourcesFit scores with one strategy")
            if least or most:
                scores.append({"name": "NodeResourcesFit", "weight": least or most})
                plugin_config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                    "type": "LeastAllocated" if least else "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}})
            for key, plugin in (("balancedresource.weight", "NodeResourcesBalancedAllocation"),
                                ("nodeaffinity.weight", "NodeAffinity"), ("tainttoleration.weight", "TaintToleration"),
                                ("podaffinity.weight", "InterPodAffinity"),
                                ("podtopologyspread.weight", "PodTopologySpread"),
                                ("imagelocality.weight", "ImageLocality")):
                if w[key]:
                    scores.append({"name": plugin, "weight": w[key]})
        binpack = self.plugin(BINPACK)
        if binpack is not None:
            weight = binpack.arguments.get("binpack.weight", 1)
            if weight:
                scores.append({"name": "binpack", "weight": 1})
                plugin_config.append({"name": "binpack", "args": dict(binpack.arguments)})
        return {
            "plugins": {
                "filter": {"disabled": [{"name": "*"}], "enabled": [{"name": n} for n in filters]},
                "score": {"disabled": [{"name": "*"}], "enabled": scores},
            },
            "pluginConfig": plugin_config,
        }


def _unwrap_configmap(data: Any) -> Any:
    if isinstance(data, Mapping) and data.get("kind") == "ConfigMap":
        conf = data.get("data")
        conf = conf.get("volcano-scheduler.conf") if isinstance(conf, Mapping) else None
        if not isinstance(conf, str):
            raise ProfileError("data.volcano-scheduler.conf: the ConfigMap has no scheduler configuration")
        try:
            return yaml.safe_load(conf)
        except yaml.YAMLError as e:
            raise ProfileError(f"data.volcano-scheduler.conf: not valid YAML: {e}") from None
    return data


def parse_cycle(data: Any) -> CycleConfig:
    if not isinstance(data, Mapping):
        raise ProfileError(f"cycle: expected a mapping with actions and tiers, got {type(data).__name__}")
    for key in data:
        if key not in _TOP_KEYS:
            raise ProfileError(f"{key}: unknown key (a volcano-scheduler.conf has {', '.join(_TOP_KEYS)})")
    actions = _parse_actions(data.get("actions"))
    raw_tiers = data.get("tiers")
    if not isinstance(raw_tiers, list):
        raise ProfileError("tiers: expected a list of {plugins: [...]}")
    tiers = []
    seen: dict[str, str] = {}
    for t, tier in enumerate(raw_tiers):
        path = f"tiers[{t}]"
        if not isinstance(tier, Mapping) or set(tier) - {"plugins"}:
            raise ProfileError(f"{path}: expected a mapping with only 'plugins'")
        plugins = tier.get("plugins") or []
        if not isinstance(plugins, list):
            raise ProfileError(f"{path}.plugins: expected a list")
        options = []
        for i, entry in enumerate(plugins):
            option = _parse_plugin(entry, f"{path}.plugins[{i}]")
            if option.name in seen:
                raise ProfileError(
                    f"{option.path}.name: {option.name} is configured twice (also at {seen[option.name]})")
            seen[option.name] = option.path
            options.append(option)
        tiers.append(tuple(options))
    shares = [p for tier in tiers for p in tier if p.name in SHARE_PLUGINS]
    if len(shares) > 1:
        raise ProfileError(f"{shares[1].path}.name: {shares[1].name} and {shares[0].name} are both queue-share "
                           "plugins; configure one")
    action_args = _parse_configurations(data.get("configurations"), actions)
    return CycleConfig(tuple(actions), tuple(tiers), action_args)


def _parse_actions(value: Any) -> list[str]:
    if not isinstance(value, str) or not value.strip():
        raise ProfileError('actions: expected a comma-separated string such as "enqueue, allocate, backfill"')
    actions = [a.strip() for a in value.split(",") if a.strip()]
    for a in actions:
        if a not in ACTIONS:
            raise ProfileError(f"actions: unknown action {a!r} (vcore runs {', '.join(ACTIONS)})")
    if len(set(actions)) != len(actions):
        raise ProfileError("actions: an action is listed twice")
    return actions


def _parse_plugin(entry: Any, path: str) -> PluginOption:
    if not isinstance(entry, Mapping):
        raise ProfileError(f"{path}: expected a mapping with a name")
    name = entry.get("name")
    if name not in PLUGINS:
        raise ProfileError(f"{path}.name: unknown plugin {name!r} (vcore has {', '.join(PLUGINS)})")
    switches = {}
    for key, value in entry.items():
        if key in ("name", "arguments"):
            continue
        if key not in PLUGIN_SWITCHES:
            raise ProfileError(f"{path}.{key}: unknown plugin option")
        if not isinstance(value, bool):
            raise ProfileError(f"{path}.{key}: expected true or false")
        switches[key] = value
    arguments = entry.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise ProfileError(f"{path}.arguments: expected a mapping")
    return PluginOption(name, _check_arguments(name, dict(arguments), f"{path}.arguments"), switches, path)


def _number(value: Any, path: str, *, lo: float | None = None, integer: bool = False) -> Any:
    if integer:
        return Integer(None if lo is None else int(lo))(value, path, ProfileError)
    return Number(lo)(value, path, ProfileError)


def _check_arguments(name: str, args: dict[str, Any], path: str) -> dict[str, Any]:
    """Validate a plugin's arguments; share plugins validate their own when the cycle builds them."""
    if name in SHARE_PLUGINS or name == BINPACK:  # parsed by their owners (shares, vcore.profile's binpack)
        return args
    allowed: tuple[str, ...] = ()
    if name == NETWORK_TOPOLOGY:
        parse_topology_args(args, path)  # every key is its own; the cycle reads them back through .topology
        return args
    if name == NUMA_AWARE:
        allowed = ("weight",)
        if "weight" in args and _number(args["weight"], f"{path}.weight", lo=0, integer=True):
            raise ProfileError(f"{path}.weight: vcore does not implement numa-aware's node score (NUMA nodes the "
                               "pod's pinned CPUs span); set it to 0 or leave it out")
    elif name == OVERCOMMIT:
        allowed = ("overcommit-factor",)
        if "overcommit-factor" in args:
            _number(args["overcommit-factor"], f"{path}.overcommit-factor", lo=1.0)
    elif name == NODEORDER:
        allowed = tuple(NODEORDER_DEFAULTS)
        for key, value in args.items():
            if key in NODEORDER_DEFAULTS:
                _number(value, f"{path}.{key}", lo=0, integer=True)
    elif name == PREDICATES:
        allowed = (*_PREDICATE_FILTERS, *_PREDICATE_GPU, *_PREDICATE_UNIMPLEMENTED, *_PREDICATE_ACCEPTED)
        for key, value in args.items():
            if key in allowed and key != "predicate.resources" and not isinstance(value, bool):
                raise ProfileError(f"{path}.{key}: expected true or false")
            if key in _PREDICATE_UNIMPLEMENTED and value:
                raise ProfileError(
                    f"{path}.{key}: vcore does not implement this filter; set it to false or leave it out")
    for key in args:
        if key not in allowed:
            accepted = ", ".join(allowed) or "none"
            raise ProfileError(f"{path}.{key}: unknown argument of {name} (accepted: {accepted})")
    return args


def _parse_configurations(value: Any, actions: list[str]) -> dict[str, Mapping[str, Any]]:
    """``configurations``: per-action arguments; vcore has none yet, so only an empty list is valid."""
    if value in (None, []):
        return {}
    if not isinstance(value, list):
        raise ProfileError("configurations: expected a list of {name, arguments}")
    out: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(value):
        if not isinstance(entry, Mapping) or entry.get("name") not in actions:
            raise ProfileError(f"configurations[{i}].name: expected one of the configured actions")
        if entry.get("arguments"):
            raise ProfileError(f"configurations[{i}].arguments: vcore's {entry['name']} action takes no arguments")
        out[entry["name"]] = {}
    return out
