"""kube-scheduler's SchedulingCSIPVs (test/integration/scheduler_perf/volumes/performance-config.yaml) as objects for
vcore, and its numpy baseline.

The workload, as scheduler_perf builds it (node-default.yaml, pv-csi.yaml, pvc.yaml, testutils
CreatePodWithPersistentVolume with bindVolume): nodes of 4 cpu, 32Gi, 110 pods with the allocatable
``attachable-volumes-csi-ebs.csi.aws.com`` and a CSINode whose ebs.csi.aws.com driver allows ``limit`` volumes
(39 upstream); per pod a claim ``pvc-<i>`` bound to its own CSI PV (ebs.csi.aws.com, ReadOnlyMany, 1Gi, handle = the
PV's name, claimRef to the claim, both phase Bound, the claim annotated bind-completed) and the pod (100m cpu, 500Mi
memory) mounting it. Initial pods in namespace ``sched-setup``, measured ones in ``sched-test``.

The baseline is ``numpy_schedule_basic``'s loop (fit filter from a rotating start, adaptive
percentageOfNodesToScore, LeastAllocated + BalancedAllocation, seeded random tie-break) with NodeVolumeLimits'
filter added: a node takes the pod only while its count of distinct attached CSI volumes of the driver stays within
the CSINode's limit. VolumeRestrictions, VolumeZone and VolumeBinding pass every node on this workload (the claims are
bound to PVs without node affinity or zone labels, ReadOnlyMany), so the loop leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from baselines import MAX_NODE_SCORE, adaptive_nodes_to_find

DRIVER = "ebs.csi.aws.com"
LIMIT_RESOURCE = f"attachable-volumes-csi-{DRIVER}"


@dataclass
class CSIPVsWorkload:
    name: str
    limit: int
    nodes: list[dict[str, Any]]
    csi_nodes: list[dict[str, Any]]
    pvs: list[dict[str, Any]] = field(default_factory=list)
    pvcs: list[dict[str, Any]] = field(default_factory=list)
    init_pods: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)


def _pod_with_claim(i: int, namespace: str, workload: CSIPVsWorkload) -> dict[str, Any]:
    claim, pv = f"pvc-{i}", f"{namespace}-pv-{i}"
    workload.pvcs.append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": claim,
                "namespace": namespace,
                "uid": f"{namespace}-uid-{i}",
                "annotations": {"pv.kubernetes.io/bind-completed": "true"},
            },
            "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}, "volumeName": pv},
            "status": {"phase": "Bound"},
        }
    )
    workload.pvs.append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv},
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "capacity": {"storage": "1Gi"},
                "csi": {"driver": DRIVER, "volumeHandle": pv},
                "persistentVolumeReclaimPolicy": "Retain",
                "claimRef": {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "namespace": namespace,
                    "name": claim,
                },
            },
            "status": {"phase": "Bound"},
        }
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i:06d}", "namespace": namespace, "uid": f"{namespace}-pod-{i}"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                }
            ],
            "volumes": [{"name": "vol", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


def scheduling_csi_pvs(n_nodes: int, n_init: int, n_pods: int, limit: int = 39) -> CSIPVsWorkload:
    nodes, csi_nodes = [], []
    for i in range(n_nodes):
        name = f"scheduler-perf-{i:06d}"
        resources = {"cpu": "4", "memory": "32Gi", "pods": "110", LIMIT_RESOURCE: str(limit)}
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "spec": {},
                "status": {"capacity": dict(resources), "allocatable": resources},
            }
        )
        csi_nodes.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": {"name": name},
                "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": limit}}]},
            }
        )
    w = CSIPVsWorkload(
        f"SchedulingCSIPVs(n_nodes={n_nodes}, n_init={n_init}, n_pods={n_pods}, limit={limit})", limit, nodes, csi_nodes
    )
    w.init_pods = [_pod_with_claim(i, "sched-setup", w) for i in range(n_init)]
    w.pods = [_pod_with_claim(i, "sched-test", w) for i in range(n_pods)]
    return w


def numpy_schedule_csi_pvs(
    alloc: dict[str, np.ndarray],
    req: dict[str, np.ndarray],
    volumes: np.ndarray,
    limits: np.ndarray,
    pod_requests: dict[str, int],
    n_pods: int,
    seed: int = 0,
) -> int:
    """Place ``n_pods`` pods of one new CSI volume each; ``req`` and ``volumes`` (the distinct volumes of the driver
    attached to each node) are updated in place. Returns the number placed."""
    rng = np.random.default_rng(seed)
    n = len(alloc["cpu"])
    to_find = adaptive_nodes_to_find(n)
    start = 0
    placed = 0
    cpu, mem = pod_requests.get("cpu", 0), pod_requests.get("memory", 0)
    for _ in range(n_pods):
        order = np.roll(np.arange(n), -start)
        fits = req["pods"][order] + 1 <= alloc["pods"][order]
        for r, amount in pod_requests.items():
            fits &= req[r][order] + amount <= alloc[r][order]
        fits &= volumes[order] + 1 <= limits[order]  # NodeVolumeLimits: one more volume of the driver
        feasible_pos = np.flatnonzero(fits)
        if feasible_pos.size == 0:
            continue
        chosen_pos = feasible_pos[:to_find]
        processed = int(chosen_pos[-1]) + 1 if feasible_pos.size >= to_find else n
        start = (start + processed) % n
        idx = order[chosen_pos]
        ca, ma = alloc["cpu"][idx], alloc["memory"][idx]
        cu, mu = req["cpu"][idx] + cpu, req["memory"][idx] + mem
        fit = (
            np.where(cu <= ca, (ca - cu) * MAX_NODE_SCORE // ca, 0)
            + np.where(mu <= ma, (ma - mu) * MAX_NODE_SCORE // ma, 0)
        ) // 2
        std = np.abs((np.minimum(cu / ca, 1.0) - np.minimum(mu / ma, 1.0)) / 2)
        score = fit + ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        best = np.flatnonzero(score == score.max())
        node = idx[best[rng.integers(best.size)]]
        for r, amount in pod_requests.items():
            req[r][node] += amount
        req["pods"][node] += 1
        volumes[node] += 1
        placed += 1
    return placed


def volume_limit_mask(volumes: np.ndarray, limits: np.ndarray, new_volumes: int = 1) -> np.ndarray:
    """NodeVolumeLimits' filter for a pod bringing ``new_volumes`` volumes of the driver none of the nodes has."""
    return volumes + new_volumes <= limits


def python_volume_limit_mask(volumes: list[int], limits: list[int], new_volumes: int = 1) -> list[bool]:
    """The same, one Python loop over nodes."""
    return [v + new_volumes <= lim for v, lim in zip(volumes, limits)]
