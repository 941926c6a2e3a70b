"""The topology scenario: a stream of mixed gangs (8 to 1024 pods of 1, 2, 4 or 8 GPUs) arriving at and leaving a
leaf / spine / core tree of GPU nodes, each placed by ``Scheduler.run_cycle`` with one policy; it reports the
domains each gang spans and the GPUs stranded on partly used nodes.

Policies: ``native`` (the network-topology-aware plugin with ``solver: native``), ``cpsat-<seconds>`` (``solver:
cpsat`` with that time limit, one worker: the native placement improved by CP-SAT), ``unaware`` (the same cycle
without the plugin and without constraints on the PodGroups: Volcano's default node order, least requested). Gangs
are PodGroups of identical pods with a soft ``networkTopology`` (the closer the better, never refused for
topology), so every policy places the same gangs whenever capacity allows and the spans compare like for like.

Used by ``vcore simulate --scenario topology`` and the benchmarks (bench/test_topology_bench.py).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import vcore

__all__ = [
    "POLICIES",
    "Gang",
    "GangOutcome",
    "StreamResult",
    "build_tree_cluster",
    "gang_stream",
    "plot",
    "run_scenario",
    "run_stream",
]

NAMESPACE = "sim"

POLICIES = ("native", "cpsat-0.1", "cpsat-1", "unaware")
GPU = "nvidia.com/gpu"


def build_tree_cluster(
    spines: int = 8, leaves: int = 16, nodes: int = 32, gpus: int = 8, cpu: int = 128
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
                c.add_node(
                    {
                        "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
                        "status": {"allocatable": {"cpu": str(cpu), "memory": "2Ti", "pods": "110", GPU: str(gpus)}},
                    }
                )
            leaf = f"leaf-{i}-{j}"
            hns.append(_hypernode(leaf, 1, "leaf", [("Node", n) for n in names]))
            leaf_names.append(leaf)
        hns.append(_hypernode(f"spine-{i}", 2, "spine", [("HyperNode", name) for name in leaf_names]))
    hns.append(_hypernode("core", 3, "core", [("HyperNode", f"spine-{i}") for i in range(spines)]))
    c.set_hypernodes(hns)
    return c


def _hypernode(name: str, tier: int, tier_name: str, members: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "tierName": tier_name,
            "members": [{"type": t, "selector": {"exactMatch": {"name": m}}} for t, m in members],
        },
    }


@dataclass(frozen=True)
class Gang:
    name: str
    pods: int
    gpus_per_pod: int
    duration: int  # steps it runs once placed

    @property
    def gpus(self) -> int:
        return self.pods * self.gpus_per_pod

    def podgroup(self, topology_aware: bool) -> dict[str, Any]:
        spec: dict[str, Any] = {"minMember": self.pods}
        if topology_aware:
            spec["networkTopology"] = {"mode": "soft"}
        return {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": self.name, "namespace": NAMESPACE},
            "spec": spec,
        }

    def pod(self, i: int) -> dict[str, Any]:
        g = self.gpus_per_pod
        req = {"cpu": str(8 * g), "memory": f"{64 * g}Gi", GPU: str(g)}
        return {
            "metadata": {
                "name": f"{self.name}-{i}",
                "namespace": NAMESPACE,
                "annotations": {"scheduling.k8s.io/group-name": self.name},
            },
            "spec": {"containers": [{"name": "w", "resources": {"requests": req, "limits": dict(req)}}]},
        }


def gang_stream(
    n_gangs: int,
    seed: int = 0,
    *,
    min_pods: int = 8,
    max_pods: int = 1024,
    max_gpus: int = 4096,
    min_duration: int = 20,
    max_duration: int = 100,
) -> list[Gang]:
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
    leaves: int = 0  # tier-1 domains spanned
    spines: int = 0  # tier-2 domains spanned
    nodes: int = 0
    seconds: float = 0.0  # placement wall time


@dataclass
class StreamResult:
    policy: str
    outcomes: list[GangOutcome] = field(default_factory=list)
    stranded: list[int] = field(default_factory=list)  # free GPUs on partly used nodes, after each step
    used: list[int] = field(default_factory=list)  # GPUs in use, after each step

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


def _cycle(policy: str) -> dict[str, Any]:
    """The cycle configuration of a policy: one gang placed per cycle, Volcano's gang and node order plugins."""
    plugins: list[dict[str, Any]] = [{"name": "predicates"}, {"name": "nodeorder"}]
    if policy == "native":
        plugins.append({"name": "network-topology-aware", "arguments": {"solver": "native"}})
    elif policy.startswith("cpsat-"):
        try:
            limit = float(policy.split("-", 1)[1])
        except ValueError:
            raise ValueError(f"topology scenario: bad policy {policy!r} (cpsat-<seconds>)") from None
        plugins.append(
            {
                "name": "network-topology-aware",
                "arguments": {"solver": "cpsat", "timeLimitSeconds": limit, "workers": 1},
            }
        )
    elif policy != "unaware":
        raise ValueError(f"topology scenario: unknown policy {policy!r} (native, cpsat-<seconds>, unaware)")
    return {
        "actions": "allocate",
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]}, {"plugins": plugins}],
    }


def _gpu_state(cluster: vcore.Cluster) -> tuple[int, int]:
    alloc = cluster.allocatable(GPU)
    req = cluster.requested(GPU)
    live = cluster.live_mask
    partly = live & (req > 0) & (req < alloc)
    return int((alloc - req)[partly].sum()), int(req[live].sum())


def _spans(cluster: vcore.Cluster, slots: np.ndarray) -> tuple[int, int]:
    topo = cluster.topology.node_topo
    return len(set(topo[0, slots].tolist())), len(set(topo[1, slots].tolist()))


def _remove(cluster: vcore.Cluster, gang: Gang) -> None:
    for i in range(gang.pods):
        cluster.remove_pod(f"{NAMESPACE}/{gang.name}-{i}")
    cluster.remove_podgroup(f"{NAMESPACE}/{gang.name}")


def run_stream(cluster: vcore.Cluster, stream: list[Gang], policy: str) -> StreamResult:
    """Play the stream on ``cluster`` (mutated: PodGroups and pods are added and removed) with one policy. Each
    step: gangs whose time is up leave, then the next gang arrives, one scheduling cycle runs, and the gang is
    running whole or dropped."""
    scheduler = vcore.Scheduler(cluster, cycle=_cycle(policy))
    aware = policy != "unaware"
    result = StreamResult(policy)
    running: list[tuple[int, Gang]] = []  # (end step, gang)
    for step, gang in enumerate(stream):
        for item in [r for r in running if r[0] <= step]:
            running.remove(item)
            _remove(cluster, item[1])
        cluster.add_podgroup(gang.podgroup(aware))
        for i in range(gang.pods):
            cluster.add_pod(gang.pod(i))
        began = time.perf_counter()
        cycle = scheduler.run_cycle()
        seconds = time.perf_counter() - began
        if cycle.podgroups[f"{NAMESPACE}/{gang.name}"].phase == "Running":
            slots = np.array([cluster.node_index(b.node) for b in cycle.bindings], dtype=np.int64)
            leaves, spines = _spans(cluster, slots)
            result.outcomes.append(GangOutcome(gang, True, leaves, spines, len(set(slots.tolist())), seconds))
            running.append((step + gang.duration, gang))
        else:
            _remove(cluster, gang)
            result.outcomes.append(GangOutcome(gang, False, seconds=seconds))
        stranded, used = _gpu_state(cluster)
        result.stranded.append(stranded)
        result.used.append(used)
    for _, gang in running:
        _remove(cluster, gang)
    return result


def run_scenario(
    n_gangs: int = 100,
    seed: int = 1,
    policies: tuple[str, ...] = POLICIES,
    progress: Callable[[str], object] | None = None,
) -> dict[str, StreamResult]:
    """The stream of ``n_gangs`` seeded gangs on the default 4096-node tree (8 spines x 16 leaves x 32 nodes of 8
    GPUs), once per policy, each on a fresh cluster. ``progress(policy)`` is called before each policy runs."""
    stream = gang_stream(n_gangs, seed=seed)
    out = {}
    for policy in policies:
        _cycle(policy)  # a bad policy name fails before any run
    for policy in policies:
        if progress is not None:
            progress(policy)
        out[policy] = run_stream(build_tree_cluster(), stream, policy)
    return out


def plot(results: dict[str, StreamResult], path: str) -> None:
    """Two panels: leaves spanned by each placed gang against its GPUs, and GPUs stranded after each step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (spans, stranded) = plt.subplots(1, 2, figsize=(12, 4.5))
    for policy, r in results.items():
        placed = [o for o in r.outcomes if o.placed]
        s = r.summary()
        spans.scatter(
            [o.gang.gpus for o in placed],
            [o.leaves for o in placed],
            s=14,
            alpha=0.7,
            label=f"{policy} ({s['leaves_per_gang']:.1f} leaves, {s['spines_per_gang']:.2f} spines/gang)",
        )
        stranded.plot(range(1, len(r.stranded) + 1), r.stranded, label=f"{policy} (mean {s['stranded_gpus_mean']:.0f})")
    spans.set_xscale("log", base=2)
    spans.set_yscale("log", base=2)
    spans.set_xlabel("GPUs of the gang")
    spans.set_ylabel("leaf switches spanned")
    spans.set_title("domains spanned per gang")
    stranded.set_yscale("symlog", linthresh=100)
    stranded.set_xlabel("step (one gang arrives per step)")
    stranded.set_ylabel("free GPUs on partly used nodes")
    stranded.set_title("GPUs stranded")
    for ax in (spans, stranded):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
