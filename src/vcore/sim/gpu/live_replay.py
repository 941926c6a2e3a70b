"""The openb trace through the live scheduler: Kubernetes objects in, ``vcore.Scheduler`` placing them.

:mod:`vcore.sim.gpu.replay` replays a trace over a bare GPU inventory; this module runs the same protocol
through the path a real cluster uses (Node and Pod objects, the converter, the device table, GPUDeviceFit and the
GPUPlacement plugin), so the two can be compared pod by pod and the live path measured on real data.

Nodes carry GPU feature discovery labels (product = the trace's model name, no device memory: openb shares GPUs
by compute only) and ``nvidia.com/gpu`` allocatable; pods ask for ``nvidia.com/gpu: n`` (whole GPUs) or KAI's
``gpu-fraction`` annotation (a share of one GPU), with the trace's allowed models in ``vcore.io/gpu-models``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from vcore import Cluster, Scheduler
from vcore.gpu.policies import native_policy_name
from vcore.sim.gpu.replay import TargetWorkload, policy_target, tune_workload
from vcore.sim.gpu.trace import NodeList, PodList

__all__ = ["node_objects", "pod_objects", "profile_for", "LiveRun", "run_protocol_live"]


def node_objects(nodes: NodeList) -> list[dict[str, Any]]:
    """One v1 Node dict per trace node."""
    out = []
    for name, cpu, mem, gpus, model in zip(
        nodes.names, nodes.cpu_milli.tolist(), nodes.memory_mib.tolist(), nodes.gpu_count.tolist(), nodes.model
    ):
        labels = {"kubernetes.io/hostname": name}
        alloc = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": "100000"}
        if gpus:
            labels.update({"nvidia.com/gpu.product": model, "nvidia.com/gpu.count": str(gpus)})
            alloc["nvidia.com/gpu"] = str(gpus)
        out.append({"metadata": {"name": name, "labels": labels}, "status": {"allocatable": alloc}})
    return out


def pod_objects(pods: PodList, namespace: str = "trace") -> list[dict[str, Any]]:
    """One v1 Pod dict per trace pod, named by position (a tuned workload repeats trace names)."""
    out = []
    specs = pods.gpu_spec or [()] * pods.n_pods
    for i, (cpu, mem, num, milli, allowed) in enumerate(
        zip(pods.cpu_milli.tolist(), pods.memory_mib.tolist(), pods.num_gpu.tolist(), pods.gpu_milli.tolist(), specs)
    ):
        resources: dict[str, Any] = {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}
        annotations = {}
        if num and milli:
            if milli >= 1000:
                resources["limits"] = {"nvidia.com/gpu": str(num)}
            else:
                annotations["gpu-fraction"] = f"0.{milli:03d}"
            if allowed:
                annotations["vcore.io/gpu-models"] = ",".join(allowed)
        meta: dict[str, Any] = {"name": f"p{i}", "namespace": namespace}
        if annotations:
            meta["annotations"] = annotations
        out.append({"metadata": meta, "spec": {"containers": [{"name": "main", "resources": resources}]}})
    return out


def _target_args(target: TargetWorkload) -> list[dict[str, Any]]:
    return [
        {"cpuMilli": int(c), "gpuMilli": int(g), "numGpu": int(n), "models": list(m), "weight": float(w)}
        for c, g, n, m, w in zip(target.cpu_milli, target.gpu_milli, target.num_gpu, target.models, target.weight)
        if w > 0
    ]


def profile_for(policy: str, target: TargetWorkload | None = None, tie_break: str = "NodeName") -> dict[str, Any]:
    """A profile that scores with GPUPlacement alone over every node, as the published protocol does.

    Filters: NodeResourcesFit (cpu, memory, GPU count) and GPUDeviceFit. ``target`` None lets the plugin learn
    the target workload from the pods it sees.
    """
    args: dict[str, Any] = {"policy": policy, "tieBreak": tie_break}
    if target is not None:
        args["targetWorkload"] = _target_args(target)
    return {
        "percentageOfNodesToScore": 100,
        "plugins": {
            "filter": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "NodeResourcesFit"}, {"name": "GPUDeviceFit"}],
            },
            "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "GPUPlacement", "weight": 1}]},
        },
        "pluginConfig": [{"name": "GPUPlacement", "args": args}],
    }


@dataclass
class LiveRun:
    """Per-pod outcome of a live run: the node index per pod (-1 = not placed) and the GPU allocation ratio."""

    policy: str
    seed: int
    node_idx: np.ndarray
    capacity_milli: int
    allocated_milli: int
    seconds: float

    @property
    def final_alloc_ratio(self) -> float:
        return self.allocated_milli / self.capacity_milli


def run_protocol_live(
    nodes: NodeList,
    pods: PodList,
    policy: str,
    seed: int,
    ratio: float = 1.3,
    learn: bool = False,
    tie_break: str = "NodeName",
) -> LiveRun:
    """The FGD protocol (shuffle/tune with ``seed``, one pass) through ``vcore.Scheduler``: one schedule() call.

    The target workload is the one :func:`vcore.sim.gpu.replay.run_protocol` uses, given to GPUPlacement, unless
    ``learn`` lets the plugin learn it from the pods as they arrive.
    """
    name = native_policy_name(policy)
    target = policy_target(pods, name) if not learn and name in ("fgd", "vcore") else None
    idx = tune_workload(pods, nodes.gpu_capacity_milli, seed, ratio)
    tuned = pods.take(idx)
    cluster = Cluster()
    for node in node_objects(nodes):
        cluster.add_node(node)
    scheduler = Scheduler(cluster, profile_for(name, target, tie_break), seed=seed)
    objects = pod_objects(tuned)
    start = time.perf_counter()
    placements = scheduler.schedule(objects)
    seconds = time.perf_counter() - start
    index = {n: i for i, n in enumerate(nodes.names)}
    node_idx = np.array([index[p.node] if p.node is not None else -1 for p in placements], dtype=np.int32)
    demand = tuned.gpu_demand_milli
    return LiveRun(name, seed, node_idx, nodes.gpu_capacity_milli, int(demand[node_idx >= 0].sum()), seconds)
