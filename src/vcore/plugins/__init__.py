"""Scheduler plugins: the registry of every node plugin vcore implements, and the names it knows.

Each module of this package declares one plugin (``PLUGIN``, a :class:`vcore.plugins.base.NodePlugin`: its
extension points and its arguments); this module collects them by name (``PLUGINS``) and owns:

- the plugin names in kube-scheduler's spelling (``NodeResourcesFit``, ...) plus Volcano's ``binpack``;
- kube-scheduler's default ``multiPoint`` plugin list (``kubescheduler.config.k8s.io/v1``), in its order;
- the other kube-scheduler in-tree plugins, which vcore does not implement (disabling one is a no-op,
  enabling one is a :class:`vcore.errors.ProfileError`), and the plugins kube-scheduler itself removed.

Adding a node plugin is one module here plus its native kernel (``core/src/plugins/<name>.cpp``). The native
engine runs the ``filter`` and ``score`` points; ``preFilter`` and ``preScore`` are accepted because
kube-scheduler's plugins implement them, and vcore fuses them into its filter and score kernels.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

from vcore.plugins.base import (
    BIND,
    FILTER,
    MULTI_POINT,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_ENQUEUE,
    PRE_FILTER,
    PRE_SCORE,
    QUEUE_SORT,
    RESERVE,
    SCORE,
    NodePlugin,
)

#: Every extension point a profile's ``plugins`` may name, ``multiPoint`` first.
EXTENSION_POINTS: tuple[str, ...] = (
    MULTI_POINT,
    PRE_ENQUEUE,
    QUEUE_SORT,
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    PRE_SCORE,
    SCORE,
    RESERVE,
    PERMIT,
    PRE_BIND,
    BIND,
    POST_BIND,
)

#: The concrete extension points (all but ``multiPoint``), which ``multiPoint`` expands into.
SPECIFIC_POINTS: tuple[str, ...] = EXTENSION_POINTS[1:]

# --- Plugins vcore implements ---
NODE_UNSCHEDULABLE = "NodeUnschedulable"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_RESOURCES_FIT = "NodeResourcesFit"
NODE_RESOURCES_BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
BINPACK = "binpack"  # Volcano's plugin name (lower case), with Volcano's argument keys
GPU_DEVICE_FIT = "GPUDeviceFit"  # vcore: device-level GPU fit (whole, shared slices, MIG), on by default
GPU_PLACEMENT = "GPUPlacement"  # vcore: GPU placement policy (FGD, vcore, binpack, ...), scores node + GPUs

NODE_NAME = "NodeName"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
NODE_PORTS = "NodePorts"
IMAGE_LOCALITY = "ImageLocality"
SCHEDULING_GATES = "SchedulingGates"
DEFAULT_PREEMPTION = "DefaultPreemption"
VOLUME_RESTRICTIONS = "VolumeRestrictions"
NODE_VOLUME_LIMITS = "NodeVolumeLimits"
VOLUME_BINDING = "VolumeBinding"
VOLUME_ZONE = "VolumeZone"

#: Every plugin vcore implements, by name: one module of this package each.
PLUGINS: Mapping[str, NodePlugin] = MappingProxyType(
    {
        module.PLUGIN.name: module.PLUGIN
        for module in (
            importlib.import_module(f"{__name__}.{info.name}")
            for info in pkgutil.iter_modules(__path__)
            if info.name != "base"
        )
    }
)

#: Extension points each implemented plugin implements, as kube-scheduler's (and Volcano's) plugins do.
IMPLEMENTED_POINTS: Mapping[str, frozenset[str]] = MappingProxyType({n: p.points for n, p in PLUGINS.items()})

# --- kube-scheduler in-tree plugins vcore does not implement ---
PRIORITY_SORT = "PrioritySort"

DYNAMIC_RESOURCES = "DynamicResources"
DEFAULT_BINDER = "DefaultBinder"

#: In-tree kube-scheduler plugins vcore does not implement: disabling them is a no-op, enabling them
#: (or giving them pluginConfig) is a ProfileError.
UNIMPLEMENTED_PLUGINS: tuple[str, ...] = (
    PRIORITY_SORT,
    DYNAMIC_RESOURCES,
    DEFAULT_BINDER,
)

#: Plugins kube-scheduler removed before or in config v1 (its validation rejects enabling them);
#: disabling them stays a no-op so that old configurations still load.
REMOVED_PLUGINS: tuple[str, ...] = (
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "GCEPDLimits",
    "SelectorSpread",
    "ServiceAffinity",
)

#: kube-scheduler's default ``multiPoint`` list (pkg/scheduler/apis/config/v1/default_plugins.go, with the
#: DynamicResourceAllocation feature on as it is by default): (name, score weight or None), in order.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    (SCHEDULING_GATES, None),
    (PRIORITY_SORT, None),
    (NODE_UNSCHEDULABLE, None),
    (NODE_NAME, None),
    (TAINT_TOLERATION, 3),
    (NODE_AFFINITY, 2),
    (NODE_PORTS, None),
    (NODE_RESOURCES_FIT, 1),
    (VOLUME_RESTRICTIONS, None),
    (NODE_VOLUME_LIMITS, None),
    (VOLUME_BINDING, None),
    (VOLUME_ZONE, None),
    (POD_TOPOLOGY_SPREAD, 2),
    (INTER_POD_AFFINITY, 2),
    (DYNAMIC_RESOURCES, None),
    (DEFAULT_PREEMPTION, None),
    (NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (IMAGE_LOCALITY, 1),
    (DEFAULT_BINDER, None),
)

#: vcore's default multiPoint: kube-scheduler's, plus the device-level GPU fit (without it a GPU pod would get a
#: node with enough ``nvidia.com/gpu`` but no devices). GPUPlacement is opt-in: it changes where pods go.
VCORE_DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = DEFAULT_MULTI_POINT + ((GPU_DEVICE_FIT, None),)

#: The implemented plugins, in the order kube-scheduler's default profile runs them (the others after, by name).
IMPLEMENTED_PLUGINS: tuple[str, ...] = tuple(
    [n for n, _ in VCORE_DEFAULT_MULTI_POINT if n in PLUGINS]
    + sorted(n for n in PLUGINS if n not in dict(VCORE_DEFAULT_MULTI_POINT))
)

#: Plugins whose filter the native engine runs, and those whose score it runs.
FILTER_PLUGINS: tuple[str, ...] = tuple(p for p in IMPLEMENTED_PLUGINS if FILTER in IMPLEMENTED_POINTS[p])
SCORE_PLUGINS: tuple[str, ...] = tuple(p for p in IMPLEMENTED_PLUGINS if SCORE in IMPLEMENTED_POINTS[p])

#: Every plugin name a profile may mention.
KNOWN_PLUGINS: frozenset[str] = frozenset(IMPLEMENTED_PLUGINS + UNIMPLEMENTED_PLUGINS + REMOVED_PLUGINS)

#: Default score weight of each implemented score plugin: its weight in the default profile, else 1
#: (kube-scheduler gives an enabled score plugin without a weight the weight 1).
DEFAULT_WEIGHTS: Mapping[str, int] = MappingProxyType(
    {
        **{p: 1 for p in SCORE_PLUGINS},
        **{name: w for name, w in DEFAULT_MULTI_POINT if w is not None and name in IMPLEMENTED_POINTS},
    }
)

#: Largest score weight the v1 API type (int32) holds.
MAX_WEIGHT = 2**31 - 1
#: kube-scheduler's MaxTotalScore (math.MaxInt64), used for its overflow check (MAX_NODE_SCORE: vcore.plugins.base).
MAX_TOTAL_SCORE = 2**63 - 1


def is_implemented(name: str) -> bool:
    """True when vcore implements plugin ``name``."""
    return name in IMPLEMENTED_POINTS


def implements(name: str, point: str) -> bool:
    """True when implemented plugin ``name`` implements extension ``point``."""
    return point in IMPLEMENTED_POINTS.get(name, frozenset())
