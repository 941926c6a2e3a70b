"""VolumeBinding: the pod's claims can be bound on the node: bound claims' PVs allow it, unbound WaitForFirstConsumer
claims find a static PV there or can be provisioned there (filter); no claim is missing, lost, being deleted or an
unbound Immediate one (PreFilter); the chosen PVs and the claims to provision are assumed for the node (Reserve) and
written by the adapter before the pod is bound (PreBind), as kube-scheduler v1.34 has it.

Arguments as kube-scheduler's ``VolumeBindingArgs``: ``bindTimeoutSeconds`` (>= 0, default 600: how long PreBind
waits for the claims to be bound; 0 does not wait) and ``shape``, which kube-scheduler rejects while its
StorageCapacityScoring feature gate is off, as it is by default in v1.34, so VolumeBinding never scores. Its kernel is
the native node plugin core/src/plugins/volume_binding.cpp, reading the cluster's volume store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore.errors import ProfileError
from vcore.plugins.base import (
    FILTER,
    PRE_BIND,
    PRE_FILTER,
    PRE_SCORE,
    RESERVE,
    SCORE,
    TYPE_META_KEYS,
    NodePlugin,
    check_type_meta,
)
from vcore.validation import ANY, Integer, NullsAbsent, Record, fail, join

NAME = "VolumeBinding"
DEFAULT_BIND_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS

    def to_dict(self) -> dict[str, Any]:
        return {"bindTimeoutSeconds": self.bind_timeout_seconds}


_ARGS = NullsAbsent(
    Record({**{key: ANY for key in TYPE_META_KEYS}, "bindTimeoutSeconds": Integer(hi=2**63 - 1), "shape": ANY})
)


def parse_args(args: Mapping[str, Any], path: str) -> VolumeBindingArgs:
    """kube-scheduler's SetDefaults_/ValidateVolumeBindingArgs with StorageCapacityScoring off."""
    checked = _ARGS(args, path, ProfileError)
    check_type_meta(args, NAME, path)
    timeout = checked.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
    if timeout < 0:
        raise fail(
            ProfileError,
            join(path, "bindTimeoutSeconds"),
            f"invalid BindTimeoutSeconds, should not be a negative value, got {timeout}",
        )
    if "shape" in checked:
        raise fail(
            ProfileError,
            join(path, "shape"),
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
        )
    return VolumeBindingArgs(timeout)


PLUGIN = NodePlugin(
    NAME,
    frozenset({PRE_FILTER, FILTER, RESERVE, PRE_BIND, PRE_SCORE, SCORE}),
    parse_args,
    VolumeBindingArgs(),
    native_args=lambda args: {},
    to_args=VolumeBindingArgs.to_dict,
)
