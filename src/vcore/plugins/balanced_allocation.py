"""NodeResourcesBalancedAllocation: prefer nodes whose resources stay balanced once the pod is on them (score).

Arguments as kube-scheduler's ``NodeResourcesBalancedAllocationArgs``: ``resources`` (default cpu and memory),
every weight 1. Fused into the native kernel; the profile hands its arguments over as ``balanced``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import (
    DEFAULT_RESOURCES,
    PRE_SCORE,
    SCORE,
    TYPE_META_KEYS,
    NodePlugin,
    check_type_meta,
    resource_specs,
)
from vcore.validation import ANY, Record, join

NAME = "NodeResourcesBalancedAllocation"


@dataclass(frozen=True)
class NodeResourcesBalancedAllocationArgs:
    """Resolved NodeResourcesBalancedAllocation arguments (every weight is 1, as kube-scheduler requires)."""

    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES

    def to_dict(self) -> dict[str, Any]:
        """The arguments in KubeSchedulerConfiguration ``args`` shape."""
        return {"resources": [{"name": n, "weight": w} for n, w in self.resources]}


_KEYS = Record({key: ANY for key in (*TYPE_META_KEYS, "resources")})


def parse_args(args: Mapping[str, Any], path: str) -> NodeResourcesBalancedAllocationArgs:
    """kube-scheduler SetDefaults_/ValidateNodeResourcesBalancedAllocationArgs (weights must be 1)."""
    _KEYS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    return NodeResourcesBalancedAllocationArgs(
        resource_specs(args.get("resources"), join(path, "resources"), exactly_one=True)
    )


PLUGIN = NodePlugin(
    NAME,
    frozenset({PRE_SCORE, SCORE}),
    parse_args,
    NodeResourcesBalancedAllocationArgs(),
    to_args=NodeResourcesBalancedAllocationArgs.to_dict,
)
