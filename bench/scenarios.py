"""Scenario definitions shared by the benchmarks: the populated clusters and the pods they evaluate.

Clusters come from vcore.sim.synthetic (deterministic), with one background pod bound per node so that requested
amounts differ from node to node (otherwise every score would tie and the comparison would prove little).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vcore import Cluster, Scheduler
from vcore.sim.synthetic import GPU_RESOURCE, INSTANCE_LABEL, POOL_LABEL, ZONE_LABEL, synthetic_nodes

# A service pod exercising every default plugin: a hard toleration (infra nodes become feasible), a nodeSelector,
# two required terms (OR), two weighted preferred terms; it does not tolerate spot's PreferNoSchedule taint.
SERVICE_POD: dict[str, Any] = {
    "metadata": {"name": "bench-service", "namespace": "bench"},
    "spec": {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1500m", "memory": "3Gi"}}}],
        "nodeSelector": {"kubernetes.io/arch": "amd64"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE_LABEL, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}
                            ]
                        },
                        {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": ["infra"]}]},
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 30,
                        "preference": {
                            "matchExpressions": [
                                {"key": INSTANCE_LABEL, "operator": "In", "values": ["m6i.8xlarge", "r6i.8xlarge"]}
                            ]
                        },
                    },
                    {
                        "weight": 70,
                        "preference": {
                            "matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["us-east-1a"]}]
                        },
                    },
                ],
            }
        },
    },
}

# A 4-GPU training pod: extended resource fit on GPU nodes only, preferring H100.
GPU_POD: dict[str, Any] = {
    "metadata": {"name": "bench-train", "namespace": "bench"},
    "spec": {
        "containers": [
            {
                "name": "trainer",
                "resources": {"requests": {"cpu": "40", "memory": "384Gi"}, "limits": {GPU_RESOURCE: "4"}},
            }
        ],
        "tolerations": [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 80,
                        "preference": {
                            "matchExpressions": [
                                {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100-80GB-HBM3"]}
                            ]
                        },
                    }
                ]
            }
        },
    },
}

BENCH_PODS = {"service": SERVICE_POD, "gpu": GPU_POD}


def background_pod(i: int, gpus: int = 0) -> dict[str, Any]:
    """The i-th already-running pod; sizes cycle so neighbouring nodes differ. Some omit requests (non-zero path)."""
    requests: dict[str, str] = {"cpu": f"{100 * (1 + i % 20)}m", "memory": f"{256 * (1 + i % 16)}Mi"}
    if i % 10 == 0:
        requests = {}  # best effort: counts 100m / 200Mi in the non-zero rows only
    resources: dict[str, Any] = {"requests": requests} if requests else {}
    if gpus:
        resources["limits"] = {GPU_RESOURCE: str(gpus)}
    return {
        "metadata": {"name": f"running-{i:07d}", "namespace": "load"},
        "spec": {"containers": [{"name": "c", "resources": resources}]},
    }


@dataclass
class PopulatedCluster:
    n_nodes: int
    nodes: list[dict[str, Any]]
    cluster: Cluster
    scheduler: Scheduler


def background_bindings(nodes: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """One (pod, node name) per node (GPU nodes: 1..4 GPUs in use)."""
    n = len(nodes)
    out = []
    # 7919 is prime and coprime to the bench sizes, so i -> i*7919 mod n is a permutation: one pod per node,
    # scattered rather than in node order.
    for i in range(n):
        node = nodes[(i * 7919) % n]
        gpus = 1 + i % 4 if GPU_RESOURCE in node["status"]["allocatable"] else 0
        out.append((background_pod(i, gpus), node["metadata"]["name"]))
    return out


def ingest(nodes: list[dict[str, Any]], bindings: list[tuple[dict[str, Any], str]]) -> Cluster:
    cluster = Cluster()
    for node in nodes:
        cluster.add_node(node)
    for pod, node_name in bindings:
        cluster.bind(pod, node_name)
    return cluster


def populated_cluster(n_nodes: int, seed: int = 0) -> PopulatedCluster:
    """``n_nodes`` synthetic nodes, each with exactly one background pod."""
    nodes = synthetic_nodes(n_nodes, seed)
    cluster = ingest(nodes, background_bindings(nodes))
    return PopulatedCluster(n_nodes, nodes, cluster, Scheduler(cluster, seed=seed))
