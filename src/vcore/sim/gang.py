"""A synthetic batch workload of gangs and queues, and one scheduling cycle over it (``vcore simulate --scenario
gang``, the cycle benchmark).

The cluster is :func:`vcore.sim.synthetic.synthetic_nodes`. The workload is ``n_jobs`` Volcano PodGroups of 1 to
``max_gang`` pods spread over ``n_queues`` weighted queues and three priority classes: single-role jobs (CPU
batch, 1-GPU and 8-GPU training) and parameter-server jobs with a per-role minimum, a share of them elastic
(minMember below the pod count); minResources are the minimum tasks' requests, as Volcano's job controller sets
them. Everything comes from one seeded generator, so equal arguments give equal objects.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from vcore.sim.synthetic import GPU_RESOURCE, synthetic_nodes

if TYPE_CHECKING:
    from vcore.batch.config import CycleConfig
    from vcore.cluster import Cluster

#: What Scheduler's ``cycle`` takes: a cycle configuration as a dict, a YAML path or a CycleConfig; None: Volcano's.
CycleSource: TypeAlias = "dict[str, Any] | str | os.PathLike[str] | CycleConfig | None"

Obj = dict[str, Any]
NAMESPACE = "batch"
PRIORITY_CLASSES = (("batch-low", 100), ("batch-normal", 1000), ("batch-high", 10000))
# (name, cpu milli, memory MiB, GPUs) of one task of each job kind.
_KINDS = (
    ("cpu", 2000, 4096, 0),
    ("train-1gpu", 8000, 32768, 1),
    ("train-8gpu", 32000, 131072, 8),
    ("small", 500, 1024, 0),
)
_KIND_SHARES = (0.45, 0.2, 0.05, 0.3)


@dataclass(frozen=True)
class GangWorkload:
    nodes: list[Obj]
    queues: list[Obj]
    priority_classes: list[Obj]
    podgroups: list[Obj]
    pods: list[Obj]


def _resources(cpu: int, mem_mib: int, gpus: int) -> dict[str, str]:
    r = {"cpu": f"{cpu}m", "memory": f"{mem_mib}Mi"}
    if gpus:
        r[GPU_RESOURCE] = str(gpus)
    return r


def _pod(name: str, group: str, role: str, resources: dict[str, str], priority_class: str) -> Obj:
    spec: Obj = {
        "schedulerName": "vcore",
        "priorityClassName": priority_class,
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": resources, "limits": resources}}],
    }
    if GPU_RESOURCE in resources:  # the GPU pools are tainted, as GPU node groups usually are
        spec["tolerations"] = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "annotations": {"scheduling.k8s.io/group-name": group, "volcano.sh/task-spec": role},
        },
        "spec": spec,
    }


def gang_workload(
    n_nodes: int = 5000, n_jobs: int = 2000, n_queues: int = 4, max_gang: int = 64, seed: int = 0
) -> GangWorkload:
    rng = np.random.default_rng(seed)
    queues = [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": f"q{i}"},
            "spec": {"weight": i + 1, "reclaimable": True},
        }
        for i in range(n_queues)
    ]
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
        for name, value in PRIORITY_CLASSES
    ]
    podgroups, pods = [], []
    sizes = rng.integers(1, max_gang + 1, size=n_jobs)
    kinds = rng.choice(len(_KINDS), size=n_jobs, p=_KIND_SHARES)
    for j in range(n_jobs):
        size, (kind, cpu, mem, gpus) = int(sizes[j]), _KINDS[kinds[j]]
        name = f"job-{j:05d}"
        priority_class = PRIORITY_CLASSES[int(rng.integers(0, len(PRIORITY_CLASSES)))][0]
        elastic = rng.random() < 0.2
        min_member = max(1, size // 2) if elastic else size
        roles: list[tuple[str, int, dict[str, str]]] = []
        min_task: dict[str, int] = {}
        if size >= 4 and kind == "cpu" and rng.random() < 0.3:  # parameter servers and workers
            n_ps = max(1, size // 8)
            roles.append(("ps", n_ps, _resources(4000, 8192, 0)))
            roles.append(("worker", size - n_ps, _resources(cpu, mem, gpus)))
            min_task = {"ps": n_ps}
        else:
            roles.append(("worker", size, _resources(cpu, mem, gpus)))
        # minResources: the requests of the tasks the minimum needs (role minimums first), as vcjob sets them.
        total: Counter[str] = Counter()
        left = min_member
        for role, count, res in roles:
            take = min(count, min_task.get(role, 0) or left)
            left -= take
            for r, q in res.items():
                total[r] += take * (int(q[:-1]) if q.endswith("m") else int(q[:-2]) if q.endswith("Mi") else int(q))
        min_resources = {
            r: (f"{v}m" if r == "cpu" else f"{v}Mi" if r == "memory" else str(v)) for r, v in total.items()
        }
        podgroups.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {
                    "name": name,
                    "namespace": NAMESPACE,
                    "creationTimestamp": f"2026-01-01T00:{j // 60 % 60:02d}:{j % 60:02d}Z",
                },
                "spec": {
                    "minMember": min_member,
                    "minTaskMember": min_task,
                    "minResources": min_resources,
                    "queue": f"q{j % n_queues}",
                    "priorityClassName": priority_class,
                },
            }
        )
        for role, count, res in roles:
            for i in range(count):
                pods.append(_pod(f"{name}-{role}-{i}", name, role, res, priority_class))
    return GangWorkload(synthetic_nodes(n_nodes, seed), queues, classes, podgroups, pods)


@dataclass(frozen=True)
class GangScenarioResult:
    nodes: int
    jobs: int
    pods: int
    jobs_running: int
    pods_placed: int
    ingest_seconds: float
    cycle_seconds: float
    phases: dict[str, int] = field(default_factory=dict)
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load(cluster: Cluster, workload: GangWorkload) -> None:
    for node in workload.nodes:
        cluster.add_node(node)
    for q in workload.queues:
        cluster.add_queue(q)
    for pc in workload.priority_classes:
        cluster.add_priority_class(pc)
    for pg in workload.podgroups:
        cluster.add_podgroup(pg)
    for pod in workload.pods:
        cluster.add_pod(pod)


def run_gang_scenario(
    n_nodes: int = 5000, n_jobs: int = 2000, n_queues: int = 4, seed: int = 0, cycle: CycleSource = None
) -> GangScenarioResult:
    """Generate the workload, load it, run one cycle and summarize it."""
    from vcore import Cluster, Scheduler

    workload = gang_workload(n_nodes, n_jobs, n_queues, seed=seed)
    t0 = time.perf_counter()
    cluster = Cluster()
    load(cluster, workload)
    ingest = time.perf_counter() - t0
    scheduler = Scheduler(cluster, cycle=cycle, seed=seed)
    t0 = time.perf_counter()
    result = scheduler.run_cycle()
    seconds = time.perf_counter() - t0
    phases = Counter(s.phase for s in result.podgroups.values())
    queues = {
        name: {
            "share": round(q.share, 4),
            "allocated": q.allocated,
            "deserved": q.deserved,
            "jobs_running": q.running,
            "jobs_pending": q.pending,
        }
        for name, q in result.queues.items()
        if q.running or q.pending
    }
    return GangScenarioResult(
        len(workload.nodes),
        len(workload.podgroups),
        len(workload.pods),
        phases.get("Running", 0),
        len(result.bindings),
        ingest,
        seconds,
        dict(sorted(phases.items())),
        queues,
    )
