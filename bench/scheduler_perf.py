"""kube-scheduler's scheduler_perf workloads for inter-pod constraints, as vcore replays them in process, and a numpy
baseline that checks every placement.

The workloads follow test/integration/scheduler_perf in k8s.io/kubernetes v1.34 (affinity/ and
topology_spreading/ performance-config.yaml, templates/): nodes of 4 cpu, 32Gi, 110 pods with a hostname label (and
a zone label where the workload prepares one), initial pods placed first, then the measured pods. The pod shapes:

    anti-affinity        color=green, required anti-affinity to green per hostname (namespaces sched-0, sched-1)
    affinity             color=blue, required affinity to blue per zone (namespaces sched-0, sched-1)
    preferred-affinity   color=red, preferred affinity (weight 1) to red per hostname
    preferred-anti       color=yellow, preferred anti-affinity (weight 1) to yellow per hostname
    spreading            color=blue, maxSkew 5 per zone, DoNotSchedule
    default              no labels, no constraints

every one requesting 100m cpu and 500Mi memory with container port 80 (not a host port).

The baseline (:class:`Baseline`) schedules nothing itself: for each pod vcore placed, it works out with numpy what
kube-scheduler's default profile would consider (the rotating start and adaptive percentageOfNodesToScore, the fit
filter, the pod's inter-pod filter, NodeResourcesFit LeastAllocated + BalancedAllocation and InterPodAffinity's
normalized preferred score) and checks that vcore's node is one of the best-scoring ones; then it takes vcore's
placement into its own state. Agreement means every vcore placement is one kube-scheduler could have made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NAMESPACES = ["sched-1", "sched-0"]
CPU_MILLI, MEMORY = 100, 500 * 2**20
NODE_CPU, NODE_MEMORY, NODE_PODS = 4000, 32 * 2**30, 110
MAX_NODE_SCORE = 100


def node(i: int, zones: tuple[str, ...] = ()) -> dict[str, Any]:
    labels = {HOSTNAME: f"scheduler-perf-{i}"}
    if zones:
        labels[ZONE] = zones[i % len(zones)]
    return {
        "metadata": {"name": f"scheduler-perf-{i}", "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }


def _term(color: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key, "namespaces": NAMESPACES}


SHAPES: dict[str, tuple[str | None, dict[str, Any]]] = {  # shape -> (color label, spec additions)
    "anti-affinity": (
        "green",
        {
            "affinity": {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOSTNAME)]}
            }
        },
    ),
    "affinity": (
        "blue",
        {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}}},
    ),
    "preferred-affinity": (
        "red",
        {
            "affinity": {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": _term("red", HOSTNAME), "weight": 1}
                    ]
                }
            }
        },
    ),
    "preferred-anti": (
        "yellow",
        {
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": _term("yellow", HOSTNAME), "weight": 1}
                    ]
                }
            }
        },
    ),
    "spreading": (
        "blue",
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 5,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"color": "blue"}},
                }
            ]
        },
    ),
    "default": (None, {}),
}


def pod(shape: str, name: str, namespace: str) -> dict[str, Any]:
    color, extra = SHAPES[shape]
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if color:
        meta["labels"] = {"color": color}
    container = {
        "name": "pause",
        "image": "registry.k8s.io/pause:3.10.1",
        "ports": [{"containerPort": 80}],
        "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
    }
    return {"metadata": meta, "spec": {"containers": [container], **extra}}


@dataclass(frozen=True)
class Workload:
    """One scheduler_perf workload: nodes, the pods placed before the clock starts, the measured pods."""

    name: str
    floor: int  # kube-scheduler CI's threshold (pods/s) for the 5000-node workload
    nodes: list[dict[str, Any]]
    init_pods: list[dict[str, Any]]
    pods: list[dict[str, Any]]


def _pods(shape: str, n: int, prefix: str, namespace: str) -> list[dict[str, Any]]:
    return [pod(shape, f"{prefix}-{i}", namespace) for i in range(n)]


def workload(name: str, n_nodes: int = 5000, scale: float = 1.0) -> Workload:
    """The 5000-node variant of a scheduler_perf workload (``scale`` shrinks every count, for the baseline)."""

    def count(n: int) -> int:
        return max(1, int(n * scale))

    nodes_n = count(n_nodes)
    if name == "SchedulingPodAntiAffinity":  # 5000Nodes_2000Pods, threshold 60
        return Workload(
            name,
            60,
            [node(i) for i in range(nodes_n)],
            _pods("anti-affinity", count(1000), "init", "sched-0"),
            _pods("anti-affinity", count(2000), "measure", "sched-1"),
        )
    if name == "SchedulingPodAffinity":  # 5000Nodes_5000Pods, threshold 35; nodes in one zone
        return Workload(
            name,
            35,
            [node(i, ("zone1",)) for i in range(nodes_n)],
            _pods("affinity", count(5000), "init", "sched-0"),
            _pods("affinity", count(5000), "measure", "sched-1"),
        )
    if name == "SchedulingPreferredPodAffinity":  # 5000Nodes_5000Pods, threshold 90
        return Workload(
            name,
            90,
            [node(i) for i in range(nodes_n)],
            _pods("preferred-affinity", count(5000), "init", "sched-0"),
            _pods("preferred-affinity", count(5000), "measure", "sched-1"),
        )
    if name == "SchedulingPreferredPodAntiAffinity":  # 5000Nodes_5000Pods, threshold 90
        return Workload(
            name,
            90,
            [node(i) for i in range(nodes_n)],
            _pods("preferred-anti", count(5000), "init", "sched-0"),
            _pods("preferred-anti", count(5000), "measure", "sched-1"),
        )
    if name == "TopologySpreading":  # 5000Nodes_5000Pods, threshold 85; three zones
        return Workload(
            name,
            85,
            [node(i, ("moon-1", "moon-2", "moon-3")) for i in range(nodes_n)],
            _pods("default", count(5000), "init", "default"),
            _pods("spreading", count(5000), "measure", "default"),
        )
    if name == "MixedSchedulingBasePod":  # 5000Nodes_5000Pods, threshold 140; nodes in one zone
        init = []
        for shape in ("default", "affinity", "anti-affinity", "preferred-affinity", "preferred-anti"):
            init += _pods(shape, count(2000), f"init-{shape}", "sched-0")
        return Workload(
            name,
            140,
            [node(i, ("zone1",)) for i in range(nodes_n)],
            init,
            _pods("default", count(5000), "measure", "default"),
        )
    raise ValueError(f"unknown workload {name!r}")


WORKLOADS = (
    "SchedulingPodAntiAffinity",
    "SchedulingPodAffinity",
    "SchedulingPreferredPodAffinity",
    "SchedulingPreferredPodAntiAffinity",
    "TopologySpreading",
    "MixedSchedulingBasePod",
)


def adaptive_nodes_to_find(n_nodes: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind with percentageOfNodesToScore 0 (adaptive)."""
    if n_nodes < 100:
        return n_nodes
    percentage = max(50 - n_nodes // 125, 5)
    return max(n_nodes * percentage // 100, 100)


class Baseline:
    """numpy state of one workload's cluster: per node the requests and, per color and namespace group, the pods
    bound; :meth:`check` says whether a placement is one kube-scheduler's default profile could make."""

    COLORS = ("green", "blue", "red", "yellow")

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        n = len(nodes)
        self.names = [nd["metadata"]["name"] for nd in nodes]
        self.index = {name: i for i, name in enumerate(self.names)}
        zones = [nd["metadata"]["labels"].get(ZONE) for nd in nodes]
        self.has_zone = np.array([z is not None for z in zones])
        values = sorted({z for z in zones if z is not None})
        self.zone = np.array([values.index(z) if z is not None else -1 for z in zones])
        self.n_zones = len(values)
        self.cpu = np.zeros(n, np.int64)
        self.mem = np.zeros(n, np.int64)
        self.pods = np.zeros(n, np.int64)
        # Per color: pods bound in sched-0/sched-1 (what the affinity terms select), and in "default" (spreading).
        self.in_sched = {c: np.zeros(n, np.int64) for c in self.COLORS}
        self.in_default = {c: np.zeros(n, np.int64) for c in self.COLORS}
        self.start = 0
        self.to_find = adaptive_nodes_to_find(n)

    def bind(self, p: dict[str, Any], node_name: str) -> None:
        i = self.index[node_name]
        self.cpu[i] += CPU_MILLI
        self.mem[i] += MEMORY
        self.pods[i] += 1
        color = (p["metadata"].get("labels") or {}).get("color")
        if color:
            group = self.in_sched if p["metadata"]["namespace"] in NAMESPACES else self.in_default
            group[color][i] += 1

    def _feasible(self, shape: str) -> np.ndarray:
        ok = (self.cpu + CPU_MILLI <= NODE_CPU) & (self.mem + MEMORY <= NODE_MEMORY) & (self.pods + 1 <= NODE_PODS)
        if shape == "anti-affinity":  # its own term, and the bound green pods' identical terms
            ok &= self.in_sched["green"] == 0
        elif shape == "affinity":
            blue = self.in_sched["blue"]
            per_zone = np.bincount(self.zone[self.has_zone], weights=blue[self.has_zone], minlength=self.n_zones)
            if per_zone.sum() > 0:
                ok &= self.has_zone & (per_zone[np.maximum(self.zone, 0)] > 0)
            else:  # the first pod of the group: it matches its own term
                ok &= self.has_zone
        elif shape == "spreading":
            ok &= self.has_zone
            blue = self.in_default["blue"]
            per_zone = np.bincount(self.zone[self.has_zone], weights=blue[self.has_zone], minlength=self.n_zones)
            minimum = per_zone.min() if self.n_zones else 0
            ok &= per_zone[np.maximum(self.zone, 0)] + 1 - minimum <= 5
        return ok

    def _scores(self, shape: str, idx: np.ndarray) -> np.ndarray:
        cu, mu = self.cpu[idx] + CPU_MILLI, self.mem[idx] + MEMORY
        fit = ((NODE_CPU - cu) * MAX_NODE_SCORE // NODE_CPU + (NODE_MEMORY - mu) * MAX_NODE_SCORE // NODE_MEMORY) // 2
        std = np.abs((np.minimum(cu / NODE_CPU, 1.0) - np.minimum(mu / NODE_MEMORY, 1.0)) / 2)
        score = fit + ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        # InterPodAffinity's preferred terms: the pod's own and the bound pods' identical ones, per hostname.
        raw = None
        if shape == "preferred-affinity":
            raw = 2 * self.in_sched["red"][idx]
        elif shape == "preferred-anti":
            raw = -2 * self.in_sched["yellow"][idx]
        if raw is not None and raw.size:
            lo, hi = raw.min(), raw.max()
            if hi > lo:
                score = score + 2 * (MAX_NODE_SCORE * ((raw - lo) / (hi - lo))).astype(np.int64)
        return score

    def check(self, shape: str, p: dict[str, Any], node_name: str | None) -> bool:
        """Whether vcore's placement of ``p`` (None: unschedulable) is one kube-scheduler could make now; the
        placement is then taken into the baseline's state and its rotating start."""
        n = len(self.names)
        order = np.roll(np.arange(n), -self.start)
        ok = self._feasible(shape)[order]
        feasible_pos = np.flatnonzero(ok)
        if feasible_pos.size == 0:
            return node_name is None
        chosen = feasible_pos[: self.to_find]
        self.start = (self.start + (int(chosen[-1]) + 1 if feasible_pos.size >= self.to_find else n)) % n
        idx = order[chosen]
        score = self._scores(shape, idx)
        best = {self.names[i] for i in idx[score == score.max()]}
        if node_name is None or node_name not in best:
            return False
        self.bind(p, node_name)
        return True
