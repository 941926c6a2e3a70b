"""Builders of HyperNode objects and topology-shaped clusters for the topology tests."""

from __future__ import annotations

import numpy as np

import vcore


def node(name: str, cpu: int = 8, gpus: int = 0, labels: dict | None = None, pods: int = 110) -> dict:
    alloc = {"cpu": str(cpu), "memory": "64Gi", "pods": str(pods)}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": dict(labels or {})}, "status": {"allocatable": alloc}}


def pod(name: str, cpu: int = 1, gpus: int = 0, namespace: str = "default") -> dict:
    req = {"cpu": str(cpu)}
    if gpus:
        req["nvidia.com/gpu"] = str(gpus)
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "resources": {"requests": req, "limits": dict(req)}}]},
    }


def hn(
    name: str,
    tier: int,
    nodes=(),
    children=(),
    regex: str | None = None,
    labels: dict | None = None,
    tier_name: str | None = None,
    bandwidth: float | None = None,
    congestion: float | None = None,
) -> dict:
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    members += [{"type": "HyperNode", "selector": {"exactMatch": {"name": c}}} for c in children]
    if regex is not None:
        members.append({"type": "Node", "selector": {"regexMatch": {"pattern": regex}}})
    if labels is not None:
        members.append({"type": "Node", "selector": {"labelMatch": {"matchLabels": labels}}})
    spec = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    annotations = {}
    if bandwidth is not None:
        annotations["vcore.io/bandwidth-gbps"] = str(bandwidth)
    if congestion is not None:
        annotations["vcore.io/congestion"] = str(congestion)
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name, "annotations": annotations},
        "spec": spec,
    }


def leaf_spine(
    spines: int = 2, leaves: int = 2, nodes: int = 4, cpu: int = 8, core: bool = True, gpus: int = 0
) -> vcore.Cluster:
    """spines x leaves x nodes; node s{i}-l{j}-n{k}; leaves tier 1 (tierName leaf), spines tier 2 (spine), and a
    tier-3 core above them when ``core``."""
    c = vcore.Cluster()
    hns = []
    for i in range(spines):
        leaf_names = []
        for j in range(leaves):
            names = [f"s{i}-l{j}-n{k}" for k in range(nodes)]
            for n in names:
                c.add_node(node(n, cpu=cpu, gpus=gpus))
            hns.append(hn(f"leaf-{i}-{j}", 1, nodes=names, tier_name="leaf"))
            leaf_names.append(f"leaf-{i}-{j}")
        hns.append(hn(f"spine-{i}", 2, children=leaf_names, tier_name="spine"))
    if core:
        hns.append(hn("core", 3, children=[f"spine-{i}" for i in range(spines)], tier_name="core"))
    c.set_hypernodes(hns)
    return c


def fit_of(cluster: vcore.Cluster, per_node: dict[str, int]) -> np.ndarray:
    fit = np.zeros(cluster._state.n_slots, dtype=np.int32)
    for name, v in per_node.items():
        fit[cluster.node_index(name)] = v
    return fit


def by_name(cluster: vcore.Cluster, counts: np.ndarray) -> dict[str, int]:
    names = cluster._state.node_names()
    return {names[s]: int(counts[s]) for s in np.flatnonzero(counts)}
