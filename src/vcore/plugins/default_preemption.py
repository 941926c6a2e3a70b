"""DefaultPreemption: when a pod without a gang fits no node, which lower-priority pods to evict and where
(postFilter), as kube-scheduler v1.34 does it; its kernel is the native dry run ``Engine.preempt``
(core/src/preemption.cpp), and :meth:`vcore.Scheduler.preempt` its entry point.

Arguments as kube-scheduler's ``DefaultPreemptionArgs``: ``minCandidateNodesPercentage`` (0..100, default 10) and
``minCandidateNodesAbsolute`` (>= 0, default 100), not both 0: how many nodes the dry run looks for candidates on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import POST_FILTER, TYPE_META_KEYS, NodePlugin, check_type_meta
from vcore.validation import ANY, Integer, NullsAbsent, Record, fail, join

NAME = "DefaultPreemption"


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    def to_dict(self) -> dict[str, Any]:
        return {
            "minCandidateNodesPercentage": self.min_candidate_nodes_percentage,
            "minCandidateNodesAbsolute": self.min_candidate_nodes_absolute,
        }


_ARGS = NullsAbsent(
    Record(
        {
            **{key: ANY for key in TYPE_META_KEYS},
            "minCandidateNodesPercentage": Integer(0, 100),
            "minCandidateNodesAbsolute": Integer(0, 2**31 - 1),
        }
    )
)


def parse_args(args: Mapping[str, Any], path: str) -> DefaultPreemptionArgs:
    """kube-scheduler's SetDefaults_/ValidateDefaultPreemptionArgs."""
    checked = _ARGS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    out = DefaultPreemptionArgs(
        checked.get("minCandidateNodesPercentage", 10), checked.get("minCandidateNodesAbsolute", 100)
    )
    if out.min_candidate_nodes_percentage == 0 and out.min_candidate_nodes_absolute == 0:
        raise fail(
            ProfileError,
            join(path, "minCandidateNodesPercentage"),
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        )
    return out


PLUGIN = NodePlugin(
    NAME, frozenset({POST_FILTER}), parse_args, DefaultPreemptionArgs(), to_args=DefaultPreemptionArgs.to_dict
)
