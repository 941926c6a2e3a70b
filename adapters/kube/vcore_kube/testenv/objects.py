"""Synthetic Kubernetes objects for the test control plane, the demo and the benchmarks: Nodes as a kubelet
would register them (capacity, allocatable, a Ready condition, GPU Feature Discovery labels on GPU nodes) and
pods of a given schedulerName, plus fast parallel creation through the API."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcore_kube.kubeclient import Api

GPU_PRODUCT = "NVIDIA-A100-SXM4-80GB"
GPU_MEMORY_MIB = 81920


def node(
    name: str,
    *,
    cpu: str = "32",
    memory: str = "128Gi",
    pods: str = "110",
    gpus: int = 0,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Node with its status, as a kubelet registers it (the create request carries the status)."""
    capacity = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "500Gi"}
    all_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
        # What Volcano's GPU-share device plugin advertises, so volcano.sh/gpu-memory requests fit.
        capacity["volcano.sh/gpu-memory"] = str(gpus * GPU_MEMORY_MIB)
        capacity["volcano.sh/gpu-number"] = str(gpus)
        all_labels.update(
            {
                "nvidia.com/gpu.product": GPU_PRODUCT,
                "nvidia.com/gpu.memory": str(GPU_MEMORY_MIB),
                "nvidia.com/gpu.count": str(gpus),
            }
        )
    all_labels.update(labels or {})
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "synthetic node (vcore testenv)",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kubeletVersion": "v1.34.4",
                "containerRuntimeVersion": "",
                "kernelVersion": "",
                "osImage": "",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
                "kubeProxyVersion": "",
            },
        },
    }
    if taints:
        obj["spec"]["taints"] = taints
    return obj


def synthetic_nodes(n: int, *, gpu_every: int = 0, zones: int = 3, prefix: str = "node") -> list[dict[str, Any]]:
    """n nodes over `zones` zones; every gpu_every-th node (if > 0) has 8 A100 GPUs."""
    width = max(4, len(str(n - 1)))
    return [
        node(
            f"{prefix}-{i:0{width}d}",
            gpus=8 if gpu_every and i % gpu_every == gpu_every - 1 else 0,
            labels={"topology.kubernetes.io/zone": f"zone-{chr(ord('a') + i % zones)}"},
        )
        for i in range(n)
    ]


def pod(
    name: str,
    namespace: str = "default",
    *,
    scheduler: str = "vcore",
    cpu: str = "100m",
    memory: str = "128Mi",
    gpu_memory_mib: int = 0,
    gpus: int = 0,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    node_name: str | None = None,
    priority_class: str | None = None,
) -> dict[str, Any]:
    """A one-container pod requesting cpu/memory (and whole GPUs or a Volcano GPU share)."""
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    limits = {}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    if gpu_memory_mib:
        limits["volcano.sh/gpu-memory"] = str(gpu_memory_mib)
    if limits:
        resources["limits"] = limits
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "main", "image": "registry.invalid/pause:3.10", "resources": resources}],
        "terminationGracePeriodSeconds": 0,
    }
    if node_name:
        spec["nodeName"] = node_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def create_all(api: Api, items: Iterable[tuple[str, dict[str, Any]]], *, workers: int = 8) -> list[dict[str, Any]]:
    """POST (path, object) pairs with a few threads; returns the created objects in order."""
    items = list(items)
    if len(items) <= 1:
        return [api.create(path, obj) for path, obj in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda item: api.create(*item), items))


def create_nodes(api: Api, nodes: list[dict[str, Any]], *, workers: int = 8) -> list[dict[str, Any]]:
    created = create_all(api, [("/api/v1/nodes", n) for n in nodes], workers=workers)
    # A Node's create keeps its status (kubelet registration); should a server drop it, write it as a kubelet does.
    for want, got in zip(nodes, created):
        if not got.get("status", {}).get("allocatable"):
            api.put(f"/api/v1/nodes/{want['metadata']['name']}/status", {**got, "status": want["status"]})
    return created


def create_pods(api: Api, pods: list[dict[str, Any]], *, workers: int = 8) -> list[dict[str, Any]]:
    return create_all(
        api, [(f"/api/v1/namespaces/{p['metadata']['namespace']}/pods", p) for p in pods], workers=workers
    )


def ensure_namespace(api: Api, name: str) -> None:
    from vcore_kube.kubeclient import ApiException

    try:
        api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except ApiException as e:
        if e.status != 409:
            raise
