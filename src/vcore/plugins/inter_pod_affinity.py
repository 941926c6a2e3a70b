"""InterPodAffinity: required pod affinity and anti-affinity, the bound pods' anti-affinity against the pod (filter),
and the preferred terms of the pod and of the bound pods (score), as kube-scheduler v1.34 has them.

Arguments as kube-scheduler's ``InterPodAffinityArgs``: ``hardPodAffinityWeight`` (0..100, default 1: the weight of
a bound pod's required affinity term that the incoming pod matches) and ``ignorePreferredTermsOfExistingPods``.
Its kernel is the native node plugin core/src/plugins/inter_pod_affinity.cpp, reading the pod index of bound pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import FILTER, PRE_FILTER, PRE_SCORE, SCORE, TYPE_META_KEYS, NodePlugin, check_type_meta
from vcore.validation import ANY, Boolean, Integer, NullsAbsent, Record

NAME = "InterPodAffinity"


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardPodAffinityWeight": self.hard_pod_affinity_weight,
            "ignorePreferredTermsOfExistingPods": self.ignore_preferred_terms_of_existing_pods,
        }

    def native(self) -> dict[str, Any]:
        return {
            "hard_pod_affinity_weight": self.hard_pod_affinity_weight,
            "ignore_preferred_terms_of_existing_pods": self.ignore_preferred_terms_of_existing_pods,
        }


_ARGS = NullsAbsent(
    Record(
        {
            **{key: ANY for key in TYPE_META_KEYS},
            "hardPodAffinityWeight": Integer(0, 100),
            "ignorePreferredTermsOfExistingPods": Boolean(),
        }
    )
)


def parse_args(args: Mapping[str, Any], path: str) -> InterPodAffinityArgs:
    """kube-scheduler's SetDefaults_/ValidateInterPodAffinityArgs."""
    checked = _ARGS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    return InterPodAffinityArgs(
        checked.get("hardPodAffinityWeight", 1), checked.get("ignorePreferredTermsOfExistingPods", False)
    )


PLUGIN = NodePlugin(
    NAME,
    frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    parse_args,
    InterPodAffinityArgs(),
    native_args=InterPodAffinityArgs.native,
    to_args=InterPodAffinityArgs.to_dict,
)
