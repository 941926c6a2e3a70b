"""Builders for the cycle tests: Kubernetes-shaped nodes, Volcano PodGroups and Queues, pods and classes."""

from __future__ import annotations

from typing import Any

import vcore

NS = "ns"
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"


def node(
    name: str, cpu: str = "4", mem: str = "16Gi", *, gpu: int = 0, pods: int = 110, labels: dict | None = None
) -> dict:
    alloc = {"cpu": cpu, "memory": mem, "pods": str(pods)}
    if gpu:
        alloc["nvidia.com/gpu"] = str(gpu)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def queue(
    name: str,
    weight: int = 1,
    *,
    capability: dict | None = None,
    guarantee: dict | None = None,
    deserved: dict | None = None,
    reclaimable: bool | None = None,
    parent: str | None = None,
    state: str | None = None,
) -> dict:
    spec: dict[str, Any] = {"weight": weight}
    if capability is not None:
        spec["capability"] = capability
    if guarantee is not None:
        spec["guarantee"] = {"resource": guarantee}
    if deserved is not None:
        spec["deserved"] = deserved
    if reclaimable is not None:
        spec["reclaimable"] = reclaimable
    if parent is not None:
        spec["parent"] = parent
    obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}
    if state is not None:
        obj["status"] = {"state": state}
    return obj


def podgroup(
    name: str,
    min_member: int = 1,
    *,
    queue: str = "default",
    min_task: dict | None = None,
    min_resources: dict | None = None,
    priority_class: str = "",
    created: str = "",
    topology: dict | None = None,
) -> dict:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_task:
        spec["minTaskMember"] = min_task
    if min_resources is not None:
        spec["minResources"] = min_resources
    if priority_class:
        spec["priorityClassName"] = priority_class
    if topology is not None:
        spec["networkTopology"] = topology
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}


def pod(
    name: str,
    group: str | None = None,
    cpu: str | None = "1",
    mem: str | None = "1Gi",
    *,
    role: str = "",
    priority_class: str = "",
    priority: int | None = None,
    node: str = "",
    phase: str = "",
    queue: str = "",
    gpu: int = 0,
) -> dict:
    annotations = {}
    if group:
        annotations[GROUP_ANNOTATION] = group
    if role:
        annotations["volcano.sh/task-spec"] = role
    if queue:
        annotations["scheduling.volcano.sh/queue-name"] = queue
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if mem is not None:
        requests["memory"] = mem
    if gpu:
        requests["nvidia.com/gpu"] = str(gpu)
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if priority is not None:
        spec["priority"] = priority
    if node:
        spec["nodeName"] = node
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "annotations": annotations},
        "spec": spec,
    }
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def gang(name: str, n: int, min_member: int | None = None, cpu: str = "1", mem: str = "1Gi", **pg_kw) -> list[dict]:
    """A PodGroup and its n identical pods."""
    out = [podgroup(name, n if min_member is None else min_member, **pg_kw)]
    out += [pod(f"{name}-{i}", name, cpu, mem) for i in range(n)]
    return out


def priority_class(name: str, value: int, *, never: bool = False) -> dict:
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if never:
        obj["preemptionPolicy"] = "Never"
    return obj


def build(*objects: dict) -> vcore.Cluster:
    """A cluster holding the objects, each added by its kind (nodes, queues and classes before what uses them)."""
    order = {"Node": 0, "PriorityClass": 1, "Queue": 2, "ClusterQueue": 2, "PodGroup": 3, "Pod": 4}
    cluster = vcore.Cluster()
    for obj in sorted(flatten(*objects), key=lambda o: order[o["kind"]]):
        kind = obj["kind"]
        if kind == "Node":
            cluster.add_node(obj)
        elif kind == "PriorityClass":
            cluster.add_priority_class(obj)
        elif kind in ("Queue", "ClusterQueue"):
            cluster.add_queue(obj)
        elif kind == "PodGroup":
            cluster.add_podgroup(obj)
        else:
            cluster.add_pod(obj)
    return cluster


def flatten(*items) -> list[dict]:
    """The objects of nested lists, in order."""
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(flatten(*item))
        else:
            out.append(item)
    return out


def bound_by_group(cluster: vcore.Cluster) -> dict[str, int]:
    """How many pods of each group (pod name prefix before the last '-') are bound."""
    counts: dict[str, int] = {}
    for n in cluster.node_names:
        for key in cluster.pods_on(n):
            group = key.split("/", 1)[1].rsplit("-", 1)[0]
            counts[group] = counts.get(group, 0) + 1
    return counts
