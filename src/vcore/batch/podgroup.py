"""Volcano PodGroups (scheduling.volcano.sh/v1beta1) and how pods join them.

A PodGroup is a gang: ``minMember`` of its pods (and ``minTaskMember[role]`` of each role) must be placed
together or none is. Pods join a group through the annotation ``scheduling.k8s.io/group-name`` (in the pod's
namespace); a pod's role comes from ``volcano.sh/task-spec`` (annotation or label). A pod with no group is a gang
of one. This module parses and validates the objects; the cycle decides what to do with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vcore._native import _convert
from vcore.topology.constraint import PodGroupTopology, podgroup_topology

GROUP_API = "scheduling.volcano.sh"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_KEY = "volcano.sh/task-spec"
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"
DEFAULT_QUEUE = "default"

#: PodGroup phases (status.phase), as Volcano spells them.
PENDING, INQUEUE, RUNNING, UNKNOWN, COMPLETED = "Pending", "Inqueue", "Running", "Unknown", "Completed"


@dataclass(frozen=True)
class PodGroupSpec:
    """A validated PodGroup. ``min_resources`` maps resource names to integer amounts (cpu in millicores, memory
    in bytes, others in units), as pod requests are counted."""

    namespace: str
    name: str
    min_member: int = 1
    min_task_member: Mapping[str, int] = field(default_factory=dict)
    min_resources: Mapping[str, int] | None = None
    queue: str = DEFAULT_QUEUE
    priority_class_name: str = ""
    creation: str = ""
    topology: PodGroupTopology | None = None  # spec.networkTopology and spec.subGroupPolicy; None when neither
    annotations: Mapping[str, str] = field(default_factory=dict)
    status: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def metadata(obj: Mapping[str, Any], what: str) -> tuple[str, str, Mapping[str, Any]]:
    """(namespace, name, metadata) of an API dict; namespace defaults to "default"."""
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        raise TypeError(f"{what}: metadata: expected a mapping, got {type(meta).__name__}")
    namespace = meta.get("namespace") or "default"
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{what} {namespace}/<unnamed>: metadata.name: required")
    if not isinstance(namespace, str):
        raise TypeError(f"{what} {name}: metadata.namespace: expected a string")
    return namespace, name, meta


def string_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"{where}: expected a mapping of strings")
    return dict(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: expected an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{where}: must not be negative, got {value}")
    if value > 2**31 - 1:
        raise ValueError(f"{where}: must fit in int32, got {value}")
    return value


def resource_amounts(value: Any, where: str) -> dict[str, int]:
    """A ResourceList ({name: quantity}) as integer amounts: cpu in millicores (rounded up), others in units."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: expected a mapping of resource quantities, got {type(value).__name__}")
    out: dict[str, int] = {}
    for name, quantity in value.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: resource names must be non-empty strings")
        amount = _convert.parse_quantity(quantity, milli=name == "cpu", obj=where, field=name)
        if amount < 0:
            raise ValueError(f"{where}.{name}: must not be negative, got {quantity!r}")
        out[name] = amount
    return out


def parse_podgroup(obj: Any) -> PodGroupSpec:
    """A PodGroup (API dict or client object) validated; errors name the PodGroup and the field."""
    d = _convert.api_dict(obj, "podgroup")
    api_version = d.get("apiVersion")
    if api_version is not None and not str(api_version).startswith(GROUP_API + "/"):
        raise ValueError(f"podgroup: apiVersion: expected {GROUP_API}/v1beta1, got {api_version!r}")
    namespace, name, meta = metadata(d, "podgroup")
    what = f"podgroup {namespace}/{name}"
    spec = d.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise TypeError(f"{what}: spec: expected a mapping")
    min_member = _count(spec.get("minMember", 1), f"{what}: spec.minMember")
    tasks = spec.get("minTaskMember") or {}
    if not isinstance(tasks, Mapping):
        raise TypeError(f"{what}: spec.minTaskMember: expected a mapping of role to count")
    min_task = {str(role): _count(n, f"{what}: spec.minTaskMember.{role}") for role, n in tasks.items()}
    min_resources = spec.get("minResources")
    queue = spec.get("queue") or DEFAULT_QUEUE
    if not isinstance(queue, str):
        raise TypeError(f"{what}: spec.queue: expected a string")
    priority_class = spec.get("priorityClassName") or ""
    if not isinstance(priority_class, str):
        raise TypeError(f"{what}: spec.priorityClassName: expected a string")
    topology = None
    if spec.get("networkTopology") is not None or spec.get("subGroupPolicy"):
        topology = podgroup_topology(d)  # TopologyError naming the PodGroup and the field
    status = d.get("status") or {}
    return PodGroupSpec(
        namespace=namespace,
        name=name,
        min_member=min_member,
        min_task_member=min_task,
        min_resources=None if min_resources is None else resource_amounts(min_resources, f"{what}: spec.minResources"),
        queue=queue,
        priority_class_name=priority_class,
        creation=str(meta.get("creationTimestamp") or ""),
        topology=topology,
        annotations=string_map(meta.get("annotations"), f"{what}: metadata.annotations"),
        status=dict(status) if isinstance(status, Mapping) else {},
    )


def podgroup_key(obj: Any) -> str:
    """namespace/name of a PodGroup object, or the string itself."""
    if isinstance(obj, str):
        if "/" not in obj:
            raise ValueError(f"podgroup {obj!r}: expected namespace/name")
        return obj
    namespace, name, _ = metadata(_convert.api_dict(obj, "podgroup"), "podgroup")
    return f"{namespace}/{name}"
