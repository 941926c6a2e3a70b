"""PodTopologySpread: a pod's topologySpreadConstraints (DoNotSchedule filters, ScheduleAnyway scores), and for a pod
without any the profile's default constraints over the pods selected with it by its Services, ReplicationControllers,
ReplicaSets and StatefulSets, as kube-scheduler v1.34 has them.

Arguments as kube-scheduler's ``PodTopologySpreadArgs``: ``defaultingType`` System (kube-scheduler's system defaults:
ScheduleAnyway, maxSkew 3 per hostname and 5 per zone) or List (``defaultConstraints``, which then must not carry a
selector). Its kernel is the native node plugin core/src/plugins/pod_topology_spread.cpp.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import FILTER, PRE_FILTER, PRE_SCORE, SCORE, TYPE_META_KEYS, NodePlugin, check_type_meta
from vcore.validation import ANY, LABEL_KEY, Integer, ListOf, NullsAbsent, Record, String, fail, join

NAME = "PodTopologySpread"
SYSTEM, LIST = "System", "List"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
_POLICIES = ("Honor", "Ignore")


@dataclass(frozen=True)
class DefaultConstraint:
    """One of the defaultConstraints (a v1.TopologySpreadConstraint without a selector), defaults resolved."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "maxSkew": self.max_skew,
            "topologyKey": self.topology_key,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "nodeAffinityPolicy": self.node_affinity_policy,
            "nodeTaintsPolicy": self.node_taints_policy,
        }
        if self.min_domains != 1:
            out["minDomains"] = self.min_domains
        return out


@dataclass(frozen=True)
class PodTopologySpreadArgs:
    defaulting_type: str = SYSTEM
    default_constraints: tuple[DefaultConstraint, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "defaultingType": self.defaulting_type,
            "defaultConstraints": [c.to_dict() for c in self.default_constraints],
        }

    def native(self) -> dict[str, Any]:
        cs = self.default_constraints
        return {
            "system_defaulting": self.defaulting_type == SYSTEM,
            "default_keys": [c.topology_key for c in cs],
            "default_max_skews": [c.max_skew for c in cs],
            "default_hard": [int(c.when_unsatisfiable == DO_NOT_SCHEDULE) for c in cs],
            "default_min_domains": [c.min_domains for c in cs],
            "default_honor_node_affinity": [int(c.node_affinity_policy == "Honor") for c in cs],
            "default_honor_taints": [int(c.node_taints_policy == "Honor") for c in cs],
        }


_CONSTRAINT = NullsAbsent(
    Record(
        {
            "maxSkew": Integer(1, 2**31 - 1),
            "topologyKey": LABEL_KEY,
            "whenUnsatisfiable": String(choices=(DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)),
            "labelSelector": ANY,
            "minDomains": Integer(1, 2**31 - 1),
            "nodeAffinityPolicy": String(choices=_POLICIES),
            "nodeTaintsPolicy": String(choices=_POLICIES),
            "matchLabelKeys": ListOf(String()),
        },
        required=("maxSkew", "topologyKey", "whenUnsatisfiable"),
    )
)
_ARGS = NullsAbsent(
    Record(
        {
            **{key: ANY for key in TYPE_META_KEYS},
            "defaultingType": String(choices=(SYSTEM, LIST)),
            "defaultConstraints": ListOf(_CONSTRAINT),
        }
    )
)


def parse_args(args: Mapping[str, Any], path: str) -> PodTopologySpreadArgs:
    """kube-scheduler's SetDefaults_/ValidatePodTopologySpreadArgs."""
    checked = _ARGS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    defaulting = checked.get("defaultingType", SYSTEM)
    items = checked.get("defaultConstraints", ())
    if defaulting == SYSTEM and items:
        raise fail(
            ProfileError,
            join(path, "defaultingType"),
            "must be List when defaultConstraints are given (System uses kube-scheduler's own)",
        )
    constraints: list[DefaultConstraint] = []
    seen: dict[tuple[str, str], int] = {}
    for i, item in enumerate(items):
        ipath = join(join(path, "defaultConstraints"), i)
        if "labelSelector" in item:
            raise fail(
                ProfileError,
                join(ipath, "labelSelector"),
                "a default constraint must not define a selector: it is deduced for each pod",
            )
        pair = (item["topologyKey"], item["whenUnsatisfiable"])
        if pair in seen:
            raise fail(ProfileError, ipath, f"duplicate {{{pair[0]}, {pair[1]}}} (also at index {seen[pair]})")
        seen[pair] = i
        if "minDomains" in item and item["whenUnsatisfiable"] != DO_NOT_SCHEDULE:
            raise fail(ProfileError, join(ipath, "minDomains"), "can only be set with whenUnsatisfiable DoNotSchedule")
        constraints.append(
            DefaultConstraint(
                item["maxSkew"],
                item["topologyKey"],
                item["whenUnsatisfiable"],
                item.get("minDomains", 1),
                item.get("nodeAffinityPolicy", "Honor"),
                item.get("nodeTaintsPolicy", "Ignore"),
            )
        )
    return PodTopologySpreadArgs(defaulting, tuple(constraints))


PLUGIN = NodePlugin(
    NAME,
    frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    parse_args,
    PodTopologySpreadArgs(),
    native_args=PodTopologySpreadArgs.native,
    to_args=PodTopologySpreadArgs.to_dict,
)
