"""The topology scenario: a stream of mixed gangs (8 to 1024 pods of 1, 2, 4 or 8 GPUs) arriving at and leaving a
leaf / spine / core tree of GPU nodes, placed by one policy; it reports the domains each gang spans and the GPUs
stranded on partly used nodes.

Policies: ``native`` (vcore's native gang search), ``cpsat-<seconds>`` (the native placement improved by CP-SAT
within that time limit), ``unaware`` (vcore's topology-unaware Scheduler: kube-scheduler's default profile, pod by
pod, all-or-nothing per gang). Gangs are soft-constrained (the closer the better, never refused for topology), so
every policy places the same gangs whenever capacity allows and the spans compare like for like.

Used by the benchmarks (bench/bench_topology.py) and, later, ``vcore simulate --scenario topology``.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field

import numpy as np

import vcore
from vcore.topology import TopologyConstraint, TopologyPlacementArgs, fit_counts, place_gang

__all__ = ["Gang", "GangOutcome", "StreamResult", "build_tree_cluster", "gang_stream", "run_stream", "POLICIES"]

POLICIES = ("native", "cpsat-0.1", "cpsat-1", "unaware")
GPU = "nvidia.com/gpu"


def build_tree_cluster(spines: int = 8, leaves: int = 16, nodes: int = 32, gpus: int = 8, cpu: int = 128
                       ) -> vcore.Cluster:
    """spines x leaves x nodes GPU nodes (``s{i}-l{j}-n{k}``) under HyperNodes: leaves (tier 1), spines (tier 2)
    and one core (tier 3)."""
    c = vcore.Cluster()
    hns = []
    for i in range(spines):
        leaf_names = []
        for j in range(leaves):
            names = [f"s{i}-l{j}-n{k}" for k in range(nodes)]
            for name in names:
                c.add_node({"metadata": {"name": name, "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
                            "status": {"allocatable": {"cpu": str(cpu), "memory": "2Ti", "pods": "110",
                                                       GPU: str(gpus)}}})
            leaf = f"leaf-{i}-{j}"
            hns.append(_hypernode(leaf, 1, "leaf", [("Node", n) for n in names]))
            leaf_names.append(leaf)
        hns.append(_hypernode(f"spine-{i}", 2, "spine", [("HyperNode", name) for name in leaf_names]))
    hns.append(_hypernode("core", 3, "core", [("HyperNode", f"spine-{i}") for i in range(spines)]))
    c.set_hypernodes(hns)
    return c


def _hypernode(name: str, tier: int, tier_name: str, members: list[tuple[str, str]]) -> dict:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "tierName": tier_name,
                     "members": [{"type": t, "selector": {"exactMatch": {"name": m}}} for t, m in members]}}


@dataclass(frozen=True)
class Gang:
    name: str
    pods: int
    gpus_per_pod: int
    duration: int  # steps it runs once placed

    @property
    def gpus(self) -> int:
        return self.pods * self.gpus_per_pod

    def pod(self, i: int) -> dict:
        g = self.gpus_per_pod
        req = {"cpu": str(8 * g), "memory": f"{64 * g}Gi", GPU: str(g)}
        return {"metadata": {"name": f"{self.name}-{i}", "namespace": "sim",
                             "annotations": {"scheduling.k8s.io/group-name": self.name}},
                "spec": {"containers": [{"name": "w", "resources": {"requests": req, "limits": dict(req)}}]}}


def gang_stream(n_gangs: int, seed: int = 0, *, min_pods: int = 8, max_pods: int = 1024, max_gpus: int = 4096,
                min_duration: int = 20, max_duration: int = 100) -> list[Gang]:
    """A seeded stream: pods log-uniform in [min_pods, max_pods], 1/2/4/8 GPUs per pod, at most ``max_gpus`` GPUs
    a gang (one spine of the default tree), durations uniform in steps."""
    rng = random.Random(seed)
    out = []
    for i in range(n_gangs):
        g = rng.choice((1, 2, 4, 8))
        pods = int(round(math.exp(rng.uniform(math.log(min_pods), math.log(max_pods)))))
        pods = max(min_pods, min(pods, max_gpus // g))
        out.append(Gang(f"gang-{i:03d}", pods, g, rng.randint(min_duration, max_duration)))
    return out


@dataclass
class GangOutcome:
    gang: Gang
    placed: bool
    leaves: int = 0       # tier-1 domains spanned
    spines: int = 0       # tier-2 domains spanned
    nodes: int = 0
    seconds: float = 0.0  # placement wall time


@dataclass
class StreamResult:
    policy: str
    outcomes: list[GangOutcome] = field(default_factory=list)
    stranded: list[int] = field(default_factory=list)  # free GPUs on partly used nodes, after each step
    used: list[int] = field(default_factory=list)      # GPUs in use, after each step

    def summary(self) -> dict[str, float]:
        placed = [o for o in self.outcomes if o.placed]
        multi = [o for o in placed if o.gang.gpus > 1]
        return {
            "gangs": len(self.outcomes),
            "placed": len(placed),
            "leaves_per_gang": float(np.mean([o.leaves for o in placed])) if placed else 0.0,
            "spines_per_gang": float(np.mean([o.spines for o in placed])) if placed else 0.0,
            "multi_spine_gangs": sum(1 for o in multi if o.spines > 1),
            "stranded_gpus_mean": float(np.mean(self.stranded)) if self.stranded else 0.0,
            "stranded_gpus_max": max(self.stranded, default=0),
            "gpu_use_mean": float(np.mean(self.used)) if self.used else 0.0,
            "seconds_per_gang": float(np.mean([o.seconds for o in self.outcomes])) if self.outcomes else 0.0,
        }


def _policy_args(policy: str) -> TopologyPlacementArgs:
    if policy == "native":
        return TopologyPlacementArgs(solver="native")
    if policy.startswith("cpsat-"):
        return TopologyPlacementArgs(solver="cpsat", time_limit_seconds=float(policy.split("-", 1)[1]), workers=1)
    raise ValueError(f"topology scenario: unknown policy {policy!r} (native, cpsat-<seconds>, unaware)")


def _gpu_state(cluster: vcore.Cluster) -> tuple[int, int]:
    alloc = cluster.allocatable(GPU)
    req = cluster.requested(GPU)
    live = cluster.live_mask
    partly = live & (req > 0) & (req < alloc)
    return int((alloc - req)[partly].sum()), int(req[live].sum())


def _spans(cluster: vcore.Cluster, slots: np.ndarray) -> tuple[int, int]:
    topo = cluster.topology.node_topo
    return len(set(topo[0, slots].tolist())), len(set(topo[1, slots].tolist()))


def run_stream(cluster: vcore.Cluster, stream: list[Gang], policy: str) -> StreamResult:
    """Play the stream on ``cluster`` (mutated: pods are bound and unbound) with one policy. Each step: gangs whose
    time is up leave, then the next gang arrives and is placed whole or dropped."""
    result = StreamResult(policy)
    running: list[tuple[int, Gang, list[str]]] = []  # (end step, gang, pod keys)
    unaware = vcore.Scheduler(cluster) if policy == "unaware" else None
    args = None if unaware else _policy_args(policy)
    soft = TopologyConstraint("soft", owner="topology scenario")
    for step, gang in enumerate(stream):
        for item in [r for r in running if r[0] <= step]:
            running.remove(item)
            for key in item[2]:
                cluster.unbind(key)
        pods = [gang.pod(i) for i in range(gang.pods)]
        began = time.perf_counter()
        if unaware is not None:
            slots = _place_unaware(cluster, unaware, pods)
        else:
            p = place_gang(cluster, fit_counts(cluster, pods[0]), gang.pods, soft, args=args)
            slots = None
            if p.placed:
                names = cluster._state.node_names()
                slots = []
                i = 0
                for s in np.flatnonzero(p.counts):
                    for _ in range(int(p.counts[s])):
                        cluster.bind(pods[i], names[s])
                        slots.append(int(s))
                        i += 1
        seconds = time.perf_counter() - began
        if slots:
            slot_array = np.asarray(slots)
            leaves, spines = _spans(cluster, slot_array)
            result.outcomes.append(GangOutcome(gang, True, leaves, spines, len(set(slots)), seconds))
            running.append((step + gang.duration, gang, [f"sim/{pod['metadata']['name']}" for pod in pods]))
        else:
            result.outcomes.append(GangOutcome(gang, False, seconds=seconds))
        stranded, used = _gpu_state(cluster)
        result.stranded.append(stranded)
        result.used.append(used)
    for _, _, keys in running:
        for key in keys:
            cluster.unbind(key)
    return result


def _place_unaware(cluster: vcore.Cluster, scheduler: vcore.Scheduler, pods: list[dict]) -> list[int] | None:
    placements = scheduler.schedule(pods)
    if all(p.node is not None for p in placements):
        return [cluster.node_index(p.node) for p in placements]
    for p in placements:  # all or nothing: a gang is never left holding part of its resources
        if p.node is not None:
            cluster.unbind(p.pod)
    return None
