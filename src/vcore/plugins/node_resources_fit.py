"""NodeResourcesFit: the pod's requests fit the node's free allocatable (filter), scored by a strategy (score).

Arguments as kube-scheduler's ``NodeResourcesFitArgs`` after its defaulting and validation: ``ignoredResources``,
``ignoredResourceGroups`` and a ``scoringStrategy`` of type LeastAllocated (default), MostAllocated or
RequestedToCapacityRatio (with a ``shape`` of utilization/score points), over weighted ``resources``. Fused into
the native kernel (pod_kernel.h, block_kernels.h); the profile hands its arguments over as ``fit``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import (
    DEFAULT_RESOURCES,
    FILTER,
    PRE_FILTER,
    PRE_SCORE,
    SCORE,
    TYPE_META_KEYS,
    NodePlugin,
    check_type_meta,
    qualified_names,
    resource_specs,
)
from vcore.validation import ANY, Integer, ListOf, Record, String, fail, join

NAME = "NodeResourcesFit"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10  # kube-scheduler config.MaxCustomPriorityScore


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    """Resolved NodeResourcesFit arguments (kube-scheduler ``NodeResourcesFitArgs`` after defaulting)."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()  # (utilization, score) points; only for RequestedToCapacityRatio

    def to_dict(self) -> dict[str, Any]:
        """The arguments in KubeSchedulerConfiguration ``args`` shape."""
        strategy: dict[str, Any] = {
            "type": self.strategy,
            "resources": [{"name": n, "weight": w} for n, w in self.resources],
        }
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in self.shape]}
        return {
            "ignoredResources": list(self.ignored_resources),
            "ignoredResourceGroups": list(self.ignored_resource_groups),
            "scoringStrategy": strategy,
        }

    def native(self) -> dict[str, Any]:
        return {
            "ignored_resources": list(self.ignored_resources),
            "ignored_resource_groups": list(self.ignored_resource_groups),
            "strategy": self.strategy,
            "resources": list(self.resources),
            "shape": list(self.shape),
        }


_KEYS = Record({key: ANY for key in (*TYPE_META_KEYS, "ignoredResources", "ignoredResourceGroups", "scoringStrategy")})
_STRATEGY = Record({"type": String(), "resources": ANY, "requestedToCapacityRatio": ANY})
_POINT = Record({"utilization": Integer(0, MAX_UTILIZATION), "score": Integer(0, MAX_CUSTOM_PRIORITY_SCORE)})


def _shape(value: Any, path: str) -> tuple[tuple[int, int], ...]:
    points = ListOf(_POINT)(value, path, ProfileError) if value is not None else ()
    if not points:
        raise fail(ProfileError, path, "required: at least one point must be specified")
    out: list[tuple[int, int]] = []
    for i, point in enumerate(points):
        util, score = point.get("utilization", 0), point.get("score", 0)  # int32 fields: absent is 0
        if out and util <= out[-1][0]:
            raise fail(
                ProfileError,
                join(join(path, i), "utilization"),
                f"{util}: values must be sorted in strictly increasing order",
            )
        out.append((util, score))
    return tuple(out)


def parse_args(args: Mapping[str, Any], path: str) -> NodeResourcesFitArgs:
    """kube-scheduler SetDefaults_NodeResourcesFitArgs + ValidateNodeResourcesFitArgs."""
    _KEYS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    ignored = qualified_names(args.get("ignoredResources"), join(path, "ignoredResources"), group=False)
    groups = qualified_names(args.get("ignoredResourceGroups"), join(path, "ignoredResourceGroups"), group=True)
    raw = args.get("scoringStrategy")
    if raw is None:
        return NodeResourcesFitArgs(ignored, groups)
    spath = join(path, "scoringStrategy")
    strategy = _STRATEGY(raw, spath, ProfileError)
    kind = LEAST_ALLOCATED
    if strategy.get("type") is not None:
        kind = strategy["type"]
        if kind not in SCORING_STRATEGY_TYPES:
            raise fail(
                ProfileError,
                join(spath, "type"),
                f"unsupported value {kind!r}: supported values: " + ", ".join(repr(t) for t in SCORING_STRATEGY_TYPES),
            )
    resources = resource_specs(strategy.get("resources"), join(spath, "resources"), exactly_one=False)
    rpath = join(spath, "requestedToCapacityRatio")
    ratio = strategy.get("requestedToCapacityRatio")
    shape: tuple[tuple[int, int], ...] = ()
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if ratio is None:
            raise fail(ProfileError, rpath, "required when type is RequestedToCapacityRatio")
        ratio = Record({"shape": ANY})(ratio, rpath, ProfileError)
        shape = _shape(ratio.get("shape"), join(rpath, "shape"))
    elif ratio is not None:
        raise fail(ProfileError, rpath, "forbidden: must be absent when type is not RequestedToCapacityRatio")
    return NodeResourcesFitArgs(ignored, groups, kind, resources, shape)


PLUGIN = NodePlugin(
    NAME,
    frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    parse_args,
    NodeResourcesFitArgs(),
    to_args=NodeResourcesFitArgs.to_dict,
)
