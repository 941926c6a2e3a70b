"""The objects that select pods for PodTopologySpread's default constraints, and the selector they give a pod.

A pod without topologySpreadConstraints of its own is spread by the profile's default constraints over the pods
that the same Services, ReplicationController, ReplicaSet or StatefulSet select (kube-scheduler's
``helper.DefaultSelector``): the selectors of the Services in its namespace that select it, merged, and the
selector of its controller (an ownerReference with ``controller: true`` of kind ``v1/ReplicationController``,
``apps/v1/ReplicaSet`` or ``apps/v1/StatefulSet``). Without any, the defaults do not apply to the pod.

:class:`PodSelectors` keeps those objects (by namespace and name) and works out that selector for a converted pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vcore._native import _convert
from vcore.validation import MapOf, String, mapping, optional_mapping

if TYPE_CHECKING:
    from vcore._native._convert import Requirement

SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET = (
    "service",
    "replicationcontroller",
    "replicaset",
    "statefulset",
)
KINDS = (SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET)
# The controller kinds kube-scheduler follows from a pod's owner reference, by (apiVersion, kind).
_CONTROLLERS = {
    ("v1", "ReplicationController"): REPLICATION_CONTROLLER,
    ("apps/v1", "ReplicaSet"): REPLICA_SET,
    ("apps/v1", "StatefulSet"): STATEFUL_SET,
}
_LABEL_MAP = MapOf(String())


@dataclass(frozen=True)
class Selecting:
    """One object that selects pods: a label map (Services, ReplicationControllers; None for a nil one) or a
    LabelSelector's requirements (ReplicaSets, StatefulSets; None for a nil selector)."""

    key: str  # namespace/name
    labels: Mapping[str, str] | None = None
    requirements: tuple[Requirement, ...] | None = None


def parse(kind: str, obj: Any) -> Selecting:
    """A Service, ReplicationController, ReplicaSet or StatefulSet (dict or client model) as the selector it holds."""
    d = mapping(_convert.api_dict(obj, kind), kind)
    meta = optional_mapping(d.get("metadata"), f"{kind}: metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{kind} <unnamed>: metadata.name: required")
    key = f"{meta.get('namespace') or 'default'}/{name}"
    spec = optional_mapping(d.get("spec"), f"{kind} {key}: spec")
    selector = spec.get("selector")
    if kind in (SERVICE, REPLICATION_CONTROLLER):
        labels = None if selector is None else _LABEL_MAP(selector, f"{kind} {key}: spec.selector")
        return Selecting(key, labels=labels)
    parsed = _convert.label_selector(selector, f"{kind} {key}", "spec.selector")
    return Selecting(key, requirements=None if parsed is None else tuple(parsed["requirements"]))


def name_of(kind: str, obj: Any) -> str:
    """namespace/name of an object, or the string itself."""
    return obj if isinstance(obj, str) else parse(kind, obj).key


class PodSelectors:
    """The Services, ReplicationControllers, ReplicaSets and StatefulSets a cluster holds, by kind and key."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Selecting]] = {kind: {} for kind in KINDS}

    def __bool__(self) -> bool:
        return any(self._objects.values())

    def has(self, kind: str, key: str) -> bool:
        return key in self._objects[kind]

    def put(self, kind: str, obj: Selecting) -> None:
        self._objects[kind][obj.key] = obj

    def remove(self, kind: str, key: str) -> None:
        del self._objects[kind][key]

    def default_selector(self, spec: Mapping[str, Any]) -> list[Requirement] | None:
        """The default spread selector of a converted pod (vcore._native._convert.pod_spec), or None when nothing
        selects it (kube-scheduler then leaves the default constraints out for the pod)."""
        namespace = spec["key"].split("/", 1)[0]
        pod_labels = dict(spec.get("labels", ()))
        merged: dict[str, str] = {}
        for service in self._objects[SERVICE].values():
            # A nil selector selects nothing, an empty one every pod.
            if (
                service.key.startswith(namespace + "/")
                and service.labels is not None
                and all(pod_labels.get(k) == v for k, v in service.labels.items())
            ):
                merged.update(service.labels)
        requirements: list[Requirement] = [(k, "In", [v]) for k, v in merged.items()]
        controller = spec.get("controller")
        kind = _CONTROLLERS.get(controller[:2]) if controller else None
        owner = self._objects[kind].get(f"{namespace}/{controller[2]}") if kind and controller else None
        if owner is not None and owner.labels is not None:  # ReplicationController: its map merged in
            merged.update(owner.labels)
            requirements = [(k, "In", [v]) for k, v in merged.items()]
        elif owner is not None and owner.requirements:  # ReplicaSet, StatefulSet: requirements added
            requirements += owner.requirements
        return requirements or None
