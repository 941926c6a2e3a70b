"""The scheduling cycle's configuration, in the shape of Volcano's ``volcano-scheduler.conf``.

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]

Actions run in the listed order. Job-level plugins (priority, gang, conformance, drf, overcommit, pdb, sla, and the
queue-share plugins proportion, capacity, hierarchy and cohort) are vcore's own (:mod:`vcore.batch.plugins`); each
plugin's PluginOption switches (Volcano's keys, unset meaning enabled) decide when it votes, tier by tier, as in
Volcano's framework. Node-level plugins (predicates, nodeorder, binpack) become a KubeSchedulerConfiguration profile
for the native kernels: ``predicates`` turns the node filters on, the volume ones included (without it only resource
fit filters, as in Volcano), ``nodeorder``'s weight arguments become score plugin weights (its balanced allocation
over cpu, memory and nvidia.com/gpu, as Volcano configures it), ``binpack`` keeps Volcano's argument keys.
``network-topology-aware`` takes Volcano's arguments and vcore's solver arguments (:mod:`vcore.topology.args`);
PodGroups' network topology constraints hold with or without it, the plugin sets how they are placed and scores the
nodes of unconstrained pods by their HyperNodes. ``numa-aware`` is accepted for Volcano configurations: the NUMA
policies it enforces are vcore's GPUDeviceFit alignment (``vcore.gpu.numa``, always on for pods that carry a
policy). ``deviceshare`` is accepted with GPU sharing, which is GPUDeviceFit's per-device fit of
``volcano.sh/gpu-memory``; its switches for protocols vcore lacks (GPU number, vGPU, Ascend) are refused when on.
``configurations`` gives actions their arguments (Volcano's keys: allocate, backfill and reclaim
``predicateErrorCacheEnable``; preempt also ``enableTopologyAwarePreemption`` and its candidate-node bounds). An
unknown action, plugin, key or argument is a ProfileError naming the field; a value Volcano's plugins replace by
their default (an overcommit-factor below 1, an sla-waiting-time that is not a duration, a negative binpack resource
weight) is a ProfileWarning and the default; so is predicates' DRA switch on (vcore has no DRA: a pod with
resourceClaims stays pending). ``CycleConfig.default()`` is Volcano's default configuration.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import yaml

from vcore.batch.shares import names as share_names
from vcore.errors import ProfileError, ProfileWarning
from vcore.plugins import binpack as binpack_plugin
from vcore.topology.args import TopologyPlacementArgs, parse_topology_args, with_volcano_defaults
from vcore.validation import (
    Boolean,
    Integer,
    Number,
    String,
    join,
    load_yaml_file,
    mapping,
    optional_list,
    optional_mapping,
    unknown_key,
)

# Actions, in the order Volcano documents them.
ENQUEUE, ALLOCATE, BACKFILL, PREEMPT, RECLAIM = "enqueue", "allocate", "backfill", "preempt", "reclaim"
ACTIONS = (ENQUEUE, ALLOCATE, BACKFILL, PREEMPT, RECLAIM)

# Job-level plugins.
PRIORITY, GANG, CONFORMANCE, DRF, OVERCOMMIT, PDB, SLA, CDP, RESOURCEQUOTA = (
    "priority",
    "gang",
    "conformance",
    "drf",
    "overcommit",
    "pdb",
    "sla",
    "cdp",
    "resourcequota",
)
SHARE_PLUGINS = (share_names.PROPORTION, share_names.CAPACITY, share_names.HIERARCHY, share_names.COHORT)
# Node-level plugins, mapped onto the KubeSchedulerConfiguration profile.
PREDICATES, NODEORDER, BINPACK = "predicates", "nodeorder", "binpack"
NODEORDER_BALANCED = [{"name": name, "weight": 1} for name in ("cpu", "memory", "nvidia.com/gpu")]  # InitPlugin's
NODE_PLUGINS = (PREDICATES, NODEORDER, BINPACK)
# Topology plugins (Volcano's names).
NETWORK_TOPOLOGY, NUMA_AWARE = "network-topology-aware", "numa-aware"
DEVICESHARE = "deviceshare"  # Volcano's GPU sharing switches since v1.9
NODEGROUP, NODEGROUP_STRICT = "nodegroup", "strict"  # a queue's affinity to node groups (vcore.batch.nodegroups)
PLUGINS = (
    PRIORITY,
    GANG,
    CONFORMANCE,
    DRF,
    OVERCOMMIT,
    PDB,
    SLA,
    CDP,
    RESOURCEQUOTA,
    *SHARE_PLUGINS,
    *NODE_PLUGINS,
    NODEGROUP,
    NETWORK_TOPOLOGY,
    NUMA_AWARE,
    DEVICESHARE,
)

#: Volcano's PluginOption switches: conf.PluginOption's yaml keys, spelled as Volcano spells them.
ENABLE_HIERARCHY = "enableHierarchy"
PLUGIN_SWITCHES = (
    "enableJobOrder",
    ENABLE_HIERARCHY,
    "enableJobReady",
    "enableJobPipelined",
    "enableTaskOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enableQueueOrder",
    "EnabledClusterOrder",
    "enablePredicate",
    "enableBestNode",
    "enableNodeOrder",
    "enableTargetJob",
    "enableReservedNodes",
    "enableJobEnqueued",
    "enabledVictim",
    "enableJobStarving",
    "enabledOverused",
    "enabledAllocatable",
    "enabledHyperNodeOrder",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
    "enabledHyperNodeGradient",
)
_TOP_KEYS = ("actions", "tiers", "configurations")

DEFAULT_OVERCOMMIT_FACTOR = 1.2  # Volcano's overcommit plugin default
#: The sla plugin's argument and PodGroup annotations (Volcano reads volcano.sh/sla-waiting-time first).
SLA_WAITING_TIME = "sla-waiting-time"
#: Per action, the arguments Volcano's action reads from ``configurations`` and their types.
PREDICATE_ERROR_CACHE = "predicateErrorCacheEnable"
TOPOLOGY_AWARE_PREEMPTION = "enableTopologyAwarePreemption"
ACTION_ARGUMENTS: dict[str, dict[str, Any]] = {
    ENQUEUE: {},
    ALLOCATE: {PREDICATE_ERROR_CACHE: Boolean()},
    BACKFILL: {PREDICATE_ERROR_CACHE: Boolean()},
    RECLAIM: {PREDICATE_ERROR_CACHE: Boolean()},
    PREEMPT: {
        PREDICATE_ERROR_CACHE: Boolean(),
        TOPOLOGY_AWARE_PREEMPTION: Boolean(),
        "topologyAwarePreemptWorkerNum": Integer(1),
        "minCandidateNodesPercentage": Integer(0, 100),
        "minCandidateNodesAbsolute": Integer(0),
        "maxCandidateNodesAbsolute": Integer(0),
    },
}
#: preempt's defaults (actions/preempt: New).
PREEMPT_DEFAULTS = {
    PREDICATE_ERROR_CACHE: True,
    TOPOLOGY_AWARE_PREEMPTION: False,
    "topologyAwarePreemptWorkerNum": 16,
    "minCandidateNodesPercentage": 10,
    "minCandidateNodesAbsolute": 1,
    "maxCandidateNodesAbsolute": 100,
}
#: Volcano's nodeorder defaults (plugins/nodeorder: calculateWeight).
NODEORDER_DEFAULTS = {
    "leastrequested.weight": 1,
    "mostrequested.weight": 0,
    "nodeaffinity.weight": 2,
    "podaffinity.weight": 2,
    "balancedresource.weight": 1,
    "tainttoleration.weight": 3,
    "imagelocality.weight": 1,
    "podtopologyspread.weight": 2,
}
#: predicates switches (each on unless set false, as in Volcano): those vcore maps to a filter, and the one of a
#: filter it does not implement (Volcano's default leaves it off; on, it is a ProfileWarning).
_PREDICATE_FILTERS = {
    "predicate.TaintTolerationEnable": "TaintToleration",
    "predicate.NodeAffinityEnable": "NodeAffinity",
    "predicate.NodePortsEnable": "NodePorts",
    "predicate.PodTopologySpreadEnable": "PodTopologySpread",
    "predicate.PodAffinityEnable": "InterPodAffinity",
    "predicate.NodeVolumeLimitsEnable": "NodeVolumeLimits",
    "predicate.VolumeZoneEnable": "VolumeZone",
    "predicate.VolumeBindingEnable": "VolumeBinding",
}
#: The predicates plugin's filters in the order they run (kube-scheduler's default profile order). Volcano's
#: predicates have no VolumeRestrictions; vcore keeps it (a pod it refuses could not start on the node anyway).
_PREDICATES_IN_ORDER = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "GPUDeviceFit",
)
_PREDICATE_GPU = ("predicate.GPUSharingEnable", "predicate.GPUNumberEnable")
_PREDICATE_UNIMPLEMENTED = ("predicate.DynamicResourceAllocationEnable",)
_PREDICATE_ACCEPTED = ("predicate.CacheEnable", "predicate.ProportionalEnable", "predicate.resources")
#: deviceshare's switches: GPU sharing is what vcore's GPUDeviceFit always does for volcano.sh/gpu-memory (per
#: device, with the volcano.sh/gpu-index annotation the adapter writes; its device score is 0 in Volcano); the
#: others need device protocols vcore does not speak, so turning them on is refused.
_DEVICESHARE_SHARING = "deviceshare.GPUSharingEnable"
_DEVICESHARE_REFUSED = {
    "deviceshare.GPUNumberEnable": "volcano.sh/gpu-number requests are not placed per device by vcore",
    "deviceshare.VGPUEnable": "vcore-scheduler does not write the vGPU device plugin's assignment annotations",
    "deviceshare.AscendMindClusterVNPUEnable": "vcore has no Ascend NPU devices",
    "deviceshare.AscendHAMiVNPUEnable": "vcore has no Ascend NPU devices",
}
_DEVICESHARE_NODE_LOCK = "deviceshare.NodeLockEnable"
_DEVICESHARE_SWITCHES = (_DEVICESHARE_SHARING, *_DEVICESHARE_REFUSED, _DEVICESHARE_NODE_LOCK)
_DEVICESHARE_OTHERS = (
    "deviceshare.SchedulePolicy",
    "deviceshare.ScheduleWeight",
    "deviceshare.KnownGeometriesCMName",
    "deviceshare.KnownGeometriesCMNamespace",
)

DEFAULT_CONF = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": PRIORITY}, {"name": GANG}, {"name": CONFORMANCE}]},
        {
            "plugins": [
                {"name": OVERCOMMIT},
                {"name": DRF},
                {"name": PREDICATES},
                {"name": share_names.PROPORTION},
                {"name": NODEORDER},
            ]
        },
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
        """Whether the switch is on: unset means on (plugins.ApplyPluginConfDefaults), but for enableHierarchy."""
        return self.switches.get(switch, switch != ENABLE_HIERARCHY)


@dataclass(frozen=True)
class CycleConfig:
    """A validated cycle configuration."""

    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    action_arguments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: what the configuration asks that Volcano replaces by a default (each also raised as a ProfileWarning)
    notes: tuple[str, ...] = field(default=(), compare=False)

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

    def share_plugins(self) -> list[PluginOption]:
        return [p for p in self.plugins() if p.name in SHARE_PLUGINS]

    def action_argument(self, action: str, key: str) -> Any:
        """An action's argument as configured, else Volcano's default for it."""
        return self.action_arguments.get(action, {}).get(key, PREEMPT_DEFAULTS.get(key))

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
        if predicates is not None and predicates.enabled("enablePredicate"):  # off: Volcano asks it nothing
            switched = {plugin for key, plugin in _PREDICATE_FILTERS.items() if predicates.arguments.get(key, True)}
            filters = [p for p in _PREDICATES_IN_ORDER if p in switched or p not in _PREDICATE_FILTERS.values()]
            if not all(predicates.arguments.get(k, True) for k in _PREDICATE_GPU):
                filters.remove("GPUDeviceFit")
        nodegroup = self.plugin(NODEGROUP)
        if nodegroup is not None and nodegroup.enabled("enablePredicate") and "NodeAffinity" not in filters:
            # nodegroup's filter is a node-affinity expression compiled into each task (vcore.batch.nodegroups);
            # without predicates the pod's own node affinity is then checked too, as its kubelet would check it
            filters.append("NodeAffinity")
        scores: list[dict[str, Any]] = []
        plugin_config: list[dict[str, Any]] = []
        nodeorder = self.plugin(NODEORDER)
        if nodeorder is not None and nodeorder.enabled("enableNodeOrder"):
            w = {**NODEORDER_DEFAULTS, **nodeorder.arguments}
            least, most = w["leastrequested.weight"], w["mostrequested.weight"]
            if least and most:
                raise ProfileError(
                    f"{nodeorder.path}.arguments: leastrequested.weight and mostrequested.weight are "
                    "both set; vcore's NodeResourcesFit scores with one strategy"
                )
            if least or most:
                scores.append({"name": "NodeResourcesFit", "weight": least or most})
                plugin_config.append(
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "LeastAllocated" if least else "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                            }
                        },
                    }
                )
            for key, plugin in (
                ("balancedresource.weight", "NodeResourcesBalancedAllocation"),
                ("nodeaffinity.weight", "NodeAffinity"),
                ("tainttoleration.weight", "TaintToleration"),
                ("podaffinity.weight", "InterPodAffinity"),
                ("podtopologyspread.weight", "PodTopologySpread"),
                ("imagelocality.weight", "ImageLocality"),
            ):
                if w[key]:
                    scores.append({"name": plugin, "weight": w[key]})
            if w["balancedresource.weight"]:  # Volcano's nodeorder balances GPUs too
                balanced = {"resources": NODEORDER_BALANCED}
                plugin_config.append({"name": "NodeResourcesBalancedAllocation", "args": balanced})
        binpack = self.plugin(BINPACK)
        if binpack is not None and binpack.enabled("enableNodeOrder"):
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
    data = mapping(data, "cycle", ProfileError)
    for key in data:
        if key not in _TOP_KEYS:
            raise unknown_key(str(key), key, _TOP_KEYS, ProfileError)
    actions = _parse_actions(data.get("actions"))
    if data.get("tiers") is None:
        raise ProfileError("tiers: expected a list of {plugins: [...]}")
    raw_tiers = optional_list(data["tiers"], "tiers", ProfileError)
    tiers = []
    seen: dict[str, str] = {}
    notes: list[str] = []
    for t, tier in enumerate(raw_tiers):
        path = f"tiers[{t}]"
        for key in mapping(tier, path, ProfileError):
            if key != "plugins":
                raise unknown_key(join(path, key), key, ("plugins",), ProfileError)
        plugins = optional_list(tier.get("plugins"), f"{path}.plugins", ProfileError)
        options = []
        for i, entry in enumerate(plugins):
            option = _parse_plugin(entry, f"{path}.plugins[{i}]", notes)
            if option.name in seen:
                raise ProfileError(
                    f"{option.path}.name: {option.name} is configured twice (also at {seen[option.name]})"
                )
            seen[option.name] = option.path
            options.append(option)
        tiers.append(tuple(options))
    for tier in tiers:  # Volcano's loader: hierarchical DRF and proportion share queues in conflicting ways
        hdrf = next((p for p in tier if p.name == DRF and p.enabled(ENABLE_HIERARCHY)), None)
        if hdrf is not None and any(p.name == share_names.PROPORTION for p in tier):
            raise ProfileError(
                f"{hdrf.path}.{ENABLE_HIERARCHY}: proportion and drf with hierarchy enabled conflict "
                "(as Volcano's loader says)"
            )
    action_args = _parse_configurations(data.get("configurations"), actions)
    for note in notes:
        warnings.warn(note, ProfileWarning, stacklevel=3)
    return CycleConfig(tuple(actions), tuple(tiers), action_args, tuple(notes))


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


def _parse_plugin(entry: Any, path: str, notes: list[str]) -> PluginOption:
    entry = mapping(entry, path, ProfileError)
    name = entry.get("name")
    if name not in PLUGINS:
        raise ProfileError(f"{path}.name: unknown plugin {name!r} (vcore has {', '.join(PLUGINS)})")
    switches = {}
    for key, value in entry.items():
        if key in ("name", "arguments"):
            continue
        if key not in PLUGIN_SWITCHES:
            raise unknown_key(join(path, key), key, PLUGIN_SWITCHES, ProfileError, what="plugin option")
        switches[key] = Boolean()(value, join(path, key), ProfileError)
    arguments = optional_mapping(entry.get("arguments"), f"{path}.arguments", ProfileError)
    return PluginOption(name, _check_arguments(name, dict(arguments), f"{path}.arguments", notes), switches, path)


def _number(value: Any, path: str, *, lo: float | None = None, integer: bool = False) -> Any:
    if integer:
        return Integer(None if lo is None else int(lo))(value, path, ProfileError)
    return Number(lo)(value, path, ProfileError)


def _check_arguments(name: str, args: dict[str, Any], path: str, notes: list[str]) -> dict[str, Any]:
    """Validate a plugin's arguments; share plugins validate their own when the cycle builds them."""
    if name in SHARE_PLUGINS:  # parsed by their owners when the cycle builds them
        return args
    if name == BINPACK:
        args, defaulted = binpack_plugin.volcano_arguments(args, path)  # what Volcano replaces or ignores, noted once
        notes.extend(defaulted)
        binpack_plugin.parse_args(args, path)  # the profile parses them again, under pluginConfig's path
        return args
    allowed: tuple[str, ...] = ()
    if name == NETWORK_TOPOLOGY:
        args, defaulted = with_volcano_defaults(args, path)  # what Volcano replaces by its defaults, noted once
        notes.extend(defaulted)
        parse_topology_args(args, path)  # every key is its own; the cycle reads them back through .topology
        return args
    if name == NUMA_AWARE:
        allowed = ("weight",)
        if "weight" in args and _number(args["weight"], f"{path}.weight", lo=0, integer=True):
            raise ProfileError(
                f"{path}.weight: vcore does not implement numa-aware's node score (NUMA nodes the "
                "pod's pinned CPUs span); set it to 0 or leave it out"
            )
    elif name == DEVICESHARE:
        allowed = (*_DEVICESHARE_SWITCHES, *_DEVICESHARE_OTHERS)
        for key, value in args.items():
            if key in _DEVICESHARE_SWITCHES:
                if not Boolean()(value, f"{path}.{key}", ProfileError):
                    continue
                if key in _DEVICESHARE_REFUSED:
                    raise ProfileError(f"{path}.{key}: {_DEVICESHARE_REFUSED[key]}; set it to false or leave it out")
                if key == _DEVICESHARE_NODE_LOCK:
                    notes.append(
                        f"{path}.{key}: vcore-scheduler takes no node lock; a GPU-share pod gets its "
                        "volcano.sh/gpu-index annotation, then its binding"
                    )
            elif key == "deviceshare.ScheduleWeight":
                _number(value, f"{path}.{key}", integer=True)
            elif key in _DEVICESHARE_OTHERS:
                String()(value, f"{path}.{key}", ProfileError)
    elif name == NODEGROUP:
        allowed = (NODEGROUP_STRICT,)
        if NODEGROUP_STRICT in args:
            args[NODEGROUP_STRICT] = Boolean()(args[NODEGROUP_STRICT], f"{path}.{NODEGROUP_STRICT}", ProfileError)
    elif name == OVERCOMMIT:
        allowed = ("overcommit-factor",)
        if "overcommit-factor" in args:
            factor = _number(args["overcommit-factor"], f"{path}.overcommit-factor")
            if factor < 1.0:  # overcommitPlugin.OnSessionOpen: a warning, and its default
                notes.append(
                    f"{path}.overcommit-factor: {factor} is below 1; the overcommit plugin uses its default "
                    f"{DEFAULT_OVERCOMMIT_FACTOR}"
                )
                args["overcommit-factor"] = DEFAULT_OVERCOMMIT_FACTOR
    elif name == SLA:
        allowed = (SLA_WAITING_TIME,)
        if SLA_WAITING_TIME in args:
            seconds = go_duration(args[SLA_WAITING_TIME])
            if seconds is None or seconds <= 0:  # slaPlugin.OnSessionOpen: logged, and no global waiting time
                notes.append(
                    f"{path}.{SLA_WAITING_TIME}: {args[SLA_WAITING_TIME]!r} is not a positive duration "
                    "string (such as '1h2m'); the sla plugin sets no global waiting time"
                )
                del args[SLA_WAITING_TIME]
            else:
                args[SLA_WAITING_TIME] = seconds
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
            if key in _PREDICATE_UNIMPLEMENTED and value:  # safe to accept: such pods are never placed
                notes.append(
                    f"{path}.{key}: vcore has no Dynamic Resource Allocation; a pod with resourceClaims stays "
                    "pending (Volcano's DRA filter would place it)"
                )
    for key in args:
        if key not in allowed:
            raise unknown_key(f"{path}.{key}", key, allowed, ProfileError, what=f"argument of {name}")
    return args


def _parse_configurations(value: Any, actions: list[str]) -> dict[str, Mapping[str, Any]]:
    """``configurations``: per-action arguments (framework.GetArgOfActionFromConf: the first entry of a name)."""
    if value is None:
        return {}
    out: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(optional_list(value, "configurations", ProfileError)):
        path = f"configurations[{i}]"
        entry = mapping(entry, path, ProfileError)
        if entry.get("name") not in ACTIONS:
            raise ProfileError(f"{path}.name: expected one of the actions ({', '.join(ACTIONS)})")
        for key in entry:
            if key not in ("name", "arguments"):
                raise unknown_key(join(path, key), key, ("name", "arguments"), ProfileError)
        name = entry["name"]
        arguments = optional_mapping(entry.get("arguments"), f"{path}.arguments", ProfileError)
        accepted = ACTION_ARGUMENTS[name]
        parsed = {}
        for key, raw in arguments.items():
            if key not in accepted:
                raise unknown_key(
                    f"{path}.arguments.{key}", key, tuple(accepted), ProfileError, what=f"argument of the {name} action"
                )
            parsed[key] = accepted[key](raw, f"{path}.arguments.{key}", ProfileError)
        out.setdefault(name, parsed)
    return out


def go_duration(value: Any) -> float | None:
    """Seconds of a Go duration string (time.ParseDuration: "1h2m3s4ms5us6ns", "-1.5h", "0"), None when ``value``
    is not a string or not a duration."""
    if not isinstance(value, str) or not value:
        return None
    text, sign = value, 1.0
    if text[0] in "+-":
        sign, text = (-1.0 if text[0] == "-" else 1.0), text[1:]
    if text == "0":
        return 0.0
    total, i = 0.0, 0
    if not text:
        return None
    while i < len(text):
        start = i
        while i < len(text) and (text[i].isdigit() or text[i] == "."):
            i += 1
        number = text[start:i]
        unit_start = i
        while i < len(text) and not (text[i].isdigit() or text[i] == "."):
            i += 1
        unit = text[unit_start:i]
        if number in ("", ".") or number.count(".") > 1 or unit not in _GO_UNITS:
            return None
        total += float(number) * _GO_UNITS[unit]
    return sign * total


def epoch_seconds(timestamp: str) -> float | None:
    """An RFC 3339 timestamp (as the API server writes creationTimestamp) in epoch seconds; None when unset."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
