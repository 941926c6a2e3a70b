"""Deterministic synthetic clusters and workloads, as Kubernetes-shaped dicts.

Everything here is generated in memory from a seeded ``numpy.random.Generator``: the same arguments give the same
objects on every machine, so ``vcore simulate``, the tests and the benchmarks can share one workload without any
data file. The objects have the shape the API server returns (``metadata``/``spec``/``status``, quantities as
strings), so they go through the same conversion path as real objects.

Two generators:

- :func:`synthetic_cluster` -- a heterogeneous AI cluster (CPU pools, 8-GPU pools, an infra pool, spot nodes, a
  few cordoned nodes, three zones) and a workload mix (web services with sidecars, batch jobs, best-effort pods,
  GPU training, infra daemons, zonal pods, and a tail of pods that cannot fit anywhere), so that a simulation
  ends with a meaningful summary of why pods stayed pending.
- :func:`scheduling_basic` -- kube-scheduler's ``SchedulingBasic`` performance test shape (scheduler_perf):
  identical nodes of 4 cpu / 32Gi / 110 pods, pods of 100m cpu / 500Mi memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "GPU_RESOURCE",
    "NODE_POOLS",
    "ZONES",
    "Workload",
    "scheduling_basic",
    "synthetic_cluster",
    "synthetic_nodes",
    "synthetic_pods",
]

GPU_RESOURCE = "nvidia.com/gpu"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
POOL_LABEL = "vcore.dev/pool"
ZONE_LABEL = "topology.kubernetes.io/zone"
INSTANCE_LABEL = "node.kubernetes.io/instance-type"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"

Obj = dict[str, Any]


@dataclass(frozen=True)
class _Pool:
    name: str
    share: float  # expected fraction of the nodes
    instance_type: str
    cpu_cores: int
    memory_gib: int
    gpus: int = 0
    gpu_product: str = ""
    taints: tuple[tuple[str, str, str], ...] = ()


# Shapes follow common cloud instance types; allocatable is derived from capacity the way kubelet's
# kube-reserved / system-reserved defaults do on managed Kubernetes (a little cpu and memory held back).
NODE_POOLS: tuple[_Pool, ...] = (
    _Pool("cpu-general", 0.40, "m6i.4xlarge", 16, 64),
    _Pool("cpu-large", 0.15, "m6i.8xlarge", 32, 128),
    _Pool("cpu-highmem", 0.15, "r6i.8xlarge", 32, 256),
    _Pool(
        "gpu-a100",
        0.10,
        "p4d.24xlarge",
        96,
        1152,
        8,
        "NVIDIA-A100-SXM4-80GB",
        ((GPU_RESOURCE, "present", "NoSchedule"),),
    ),
    _Pool(
        "gpu-h100",
        0.05,
        "p5.48xlarge",
        192,
        2048,
        8,
        "NVIDIA-H100-80GB-HBM3",
        ((GPU_RESOURCE, "present", "NoSchedule"),),
    ),
    _Pool("infra", 0.05, "m6i.2xlarge", 8, 32, taints=(("dedicated", "infra", "NoSchedule"),)),
    _Pool("spot", 0.10, "m6i.4xlarge", 16, 64, taints=(("spot", "true", "PreferNoSchedule"),)),
)

# Share of nodes cordoned (kubectl cordon: spec.unschedulable plus the taint the node controller adds).
CORDONED_SHARE = 0.01


@dataclass(frozen=True)
class Workload:
    """A generated cluster: nodes, pods to place first (``init_pods``), then the pods to measure (``pods``)."""

    name: str
    nodes: list[Obj]
    pods: list[Obj]
    init_pods: list[Obj] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_pods(self) -> int:
        return len(self.pods)


def _check_count(name: str, value: Any, minimum: int = 0) -> int:
    # bool is an int subclass; True nodes is a caller bug, not 1 node.
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _cpu(milli: int) -> str:
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def _mem_mib(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def _node(name: str, pool: _Pool, zone: str, cordoned: bool) -> Obj:
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        INSTANCE_LABEL: pool.instance_type,
        ZONE_LABEL: zone,
        POOL_LABEL: pool.name,
    }
    capacity = {
        "cpu": str(pool.cpu_cores),
        "memory": f"{pool.memory_gib}Gi",
        "ephemeral-storage": "200Gi",
        "pods": "110",
    }
    # kube-reserved grows with the machine; a flat 2% cpu and 6% memory is close to the managed-service defaults.
    allocatable = {
        "cpu": f"{pool.cpu_cores * 1000 - max(100, pool.cpu_cores * 20)}m",
        "memory": f"{pool.memory_gib * 1024 * 1024 * 94 // 100}Ki",
        "ephemeral-storage": "180Gi",
        "pods": "110",
    }
    if pool.gpus:
        labels[GPU_PRODUCT_LABEL] = pool.gpu_product
        labels["nvidia.com/gpu.count"] = str(pool.gpus)
        capacity[GPU_RESOURCE] = str(pool.gpus)
        allocatable[GPU_RESOURCE] = str(pool.gpus)
    taints = [{"key": k, "value": v, "effect": e} for k, v, e in pool.taints]
    spec: Obj = {}
    if cordoned:
        spec["unschedulable"] = True
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"capacity": capacity, "allocatable": allocatable},
    }


def _cumulative(shares: list[float]) -> np.ndarray:
    """Upper bounds of each category in [0, 1) for inverse-CDF sampling; the last bound is pinned below 1."""
    bounds = np.cumsum(np.asarray(shares, dtype=np.float64) / sum(shares))
    bounds[-1] = np.inf  # rounding must never push a draw past the last category
    return bounds[:-1]


def synthetic_nodes(n_nodes: int, seed: int = 0) -> list[Obj]:
    """``n_nodes`` Node dicts drawn from :data:`NODE_POOLS`, spread over :data:`ZONES`; about 1% cordoned."""
    n_nodes = _check_count("n_nodes", n_nodes)
    seed = _check_count("seed", seed)
    rng = np.random.default_rng([seed, 1])
    # One row of draws per node (row-major fill), so a larger cluster extends a smaller one with the same seed.
    draws = rng.random((n_nodes, 3))
    pool_idx = np.searchsorted(_cumulative([p.share for p in NODE_POOLS]), draws[:, 0], side="right")
    zone_idx = (draws[:, 1] * len(ZONES)).astype(np.int64)
    cordoned = draws[:, 2] < CORDONED_SHARE
    return [
        _node(f"node-{i:06d}", NODE_POOLS[int(pool_idx[i])], ZONES[int(zone_idx[i])], bool(cordoned[i]))
        for i in range(n_nodes)
    ]


def _container(name: str, requests: dict[str, str] | None, limits: dict[str, str] | None = None) -> Obj:
    c: Obj = {"name": name, "image": f"registry.example.com/{name}:1.0"}
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    if resources:
        c["resources"] = resources
    return c


def _pod(name: str, namespace: str, containers: list[Obj], **spec: Any) -> Obj:
    body: Obj = {"containers": containers, "schedulerName": "default-scheduler"}
    body.update({k: v for k, v in spec.items() if v is not None})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name.rsplit("-", 1)[0]}},
        "spec": body,
    }


def _affinity(required: list[Obj] | None = None, preferred: list[Obj] | None = None) -> Obj:
    na: Obj = {}
    if required:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"nodeAffinity": na}


_GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
_GPU_PRODUCTS = tuple(p.gpu_product for p in NODE_POOLS if p.gpus)

# Workload classes and their share of the pods. "misfit" pods are the tail that real clusters always have:
# requests larger than any node, selectors naming a pool that does not exist, GPU pods without the toleration.
_POD_CLASSES = (
    ("web", 0.42),
    ("batch", 0.18),
    ("besteffort", 0.05),
    ("train", 0.14),
    ("infra", 0.05),
    ("zonal", 0.06),
    ("spot", 0.06),
    ("misfit", 0.04),
)


def _make_pod(kind: str, i: int, r: np.ndarray) -> Obj:
    """One pod of class ``kind``; ``r`` is a row of uniform draws in [0, 1) consumed by position."""
    name = f"{kind}-{i:06d}"
    if kind == "web":
        cpu = int(100 + 100 * int(r[0] * 5))  # 100m..500m
        mem = int(128 * (1 + int(r[1] * 8)))  # 128Mi..1Gi
        containers = [_container("app", {"cpu": _cpu(cpu), "memory": _mem_mib(mem)})]
        init = None
        if r[2] < 0.5:  # a service-mesh proxy as a native sidecar (init container with restartPolicy Always)
            sidecar = _container("proxy", {"cpu": "50m", "memory": "64Mi"})
            sidecar["restartPolicy"] = "Always"
            init = [sidecar]
        affinity = None
        if r[3] < 0.3:
            affinity = _affinity(
                preferred=[
                    {
                        "weight": 50,
                        "preference": {
                            "matchExpressions": [
                                {"key": ZONE_LABEL, "operator": "In", "values": [ZONES[int(r[4] * len(ZONES))]]}
                            ]
                        },
                    }
                ]
            )
        return _pod(name, f"team-{'abcd'[int(r[5] * 4)]}", containers, initContainers=init, affinity=affinity)
    if kind == "batch":
        cpu = 1000 * (1 + int(r[0] * 8))  # 1..8 cores
        mem = 2048 * (1 + int(r[1] * 16))  # 2..32Gi
        containers = [_container("job", {"cpu": _cpu(cpu), "memory": _mem_mib(mem), "ephemeral-storage": "10Gi"})]
        # A data-loading init container larger than the main container: the effective request is the max.
        init = [_container("fetch", {"cpu": _cpu(cpu * 2), "memory": "1Gi"})] if r[2] < 0.2 else None
        selector = {POOL_LABEL: "cpu-highmem"} if mem >= 16384 and r[3] < 0.5 else None
        return _pod(name, "batch", containers, initContainers=init, nodeSelector=selector)
    if kind == "besteffort":
        return _pod(name, f"team-{'abcd'[int(r[0] * 4)]}", [_container("worker", None)])
    if kind == "train":
        gpus = (1, 2, 4, 8)[int(r[0] * 4)]
        # GPU extended resources are usually given as limits only; the API server copies them into requests.
        containers = [
            _container(
                "trainer",
                {"cpu": _cpu(10000 * gpus), "memory": _mem_mib(98304 * gpus)},
                {GPU_RESOURCE: str(gpus)},
            )
        ]
        affinity = None
        selector = None
        if r[1] < 0.4:
            selector = {GPU_PRODUCT_LABEL: _GPU_PRODUCTS[int(r[2] * len(_GPU_PRODUCTS))]}
        else:
            affinity = _affinity(
                required=[
                    {"matchExpressions": [{"key": GPU_PRODUCT_LABEL, "operator": "In", "values": list(_GPU_PRODUCTS)}]}
                ],
                preferred=[
                    {
                        "weight": 80,
                        "preference": {
                            "matchExpressions": [
                                {"key": GPU_PRODUCT_LABEL, "operator": "In", "values": [_GPU_PRODUCTS[-1]]}
                            ]
                        },
                    }
                ],
            )
        return _pod(
            name,
            "ml",
            containers,
            nodeSelector=selector,
            affinity=affinity,
            tolerations=[dict(_GPU_TOLERATION)],
            priority=1000 if r[3] < 0.3 else 0,
        )
    if kind == "infra":
        containers = [_container("agent", {"cpu": "200m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"})]
        return _pod(
            name,
            "infra",
            containers,
            nodeSelector={POOL_LABEL: "infra"},
            tolerations=[{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}],
            priority=2000,
        )
    if kind == "zonal":
        zone = ZONES[int(r[0] * len(ZONES))]
        containers = [_container("db", {"cpu": _cpu(1000 * (1 + int(r[1] * 4))), "memory": "8Gi"})]
        affinity = _affinity(
            required=[
                {
                    "matchExpressions": [
                        {"key": ZONE_LABEL, "operator": "In", "values": [zone]},
                        {"key": POOL_LABEL, "operator": "NotIn", "values": ["spot", "infra"]},
                    ]
                }
            ]
        )
        return _pod(name, "data", containers, affinity=affinity)
    if kind == "spot":
        containers = [_container("task", {"cpu": _cpu(500 * (1 + int(r[0] * 4))), "memory": "2Gi"})]
        return _pod(
            name,
            "batch",
            containers,
            tolerations=[{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}],
            affinity=_affinity(
                preferred=[
                    {
                        "weight": 100,
                        "preference": {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": ["spot"]}]},
                    }
                ]
            ),
        )
    # misfit
    variant = int(r[0] * 4)
    if variant == 0:  # larger than the largest node
        containers = [_container("giant", {"cpu": "256", "memory": "64Gi"})]
        return _pod(name, "batch", containers)
    if variant == 1:  # a pool nobody provisioned
        containers = [_container("tpu-job", {"cpu": "4", "memory": "16Gi"})]
        return _pod(name, "ml", containers, nodeSelector={POOL_LABEL: "tpu-v5"})
    if variant == 2:  # a GPU pod that forgot the toleration
        containers = [_container("notebook", {"cpu": "4", "memory": "32Gi"}, {GPU_RESOURCE: "1"})]
        return _pod(name, "ml", containers)
    containers = [_container("trainer", {"cpu": "32", "memory": "256Gi"}, {GPU_RESOURCE: "16"})]
    return _pod(name, "ml", containers, tolerations=[dict(_GPU_TOLERATION)])


def synthetic_pods(n_pods: int, seed: int = 0) -> list[Obj]:
    """``n_pods`` Pod dicts of the workload mix in ``_POD_CLASSES``; classes are interleaved, not grouped."""
    n_pods = _check_count("n_pods", n_pods)
    seed = _check_count("seed", seed)
    rng = np.random.default_rng([seed, 2])
    # Column 0 picks the class, the rest parameterize the pod; per-row draws keep prefixes stable (see nodes).
    draws = rng.random((n_pods, 7))
    kinds = np.searchsorted(_cumulative([s for _, s in _POD_CLASSES]), draws[:, 0], side="right")
    return [_make_pod(_POD_CLASSES[int(kinds[i])][0], i, draws[i, 1:]) for i in range(n_pods)]


def synthetic_cluster(n_nodes: int = 1000, n_pods: int = 5000, seed: int = 0) -> Workload:
    """A heterogeneous cluster of ``n_nodes`` nodes and ``n_pods`` pending pods, fully determined by ``seed``."""
    return Workload(
        name=f"synthetic(n_nodes={n_nodes}, n_pods={n_pods}, seed={seed})",
        nodes=synthetic_nodes(n_nodes, seed),
        pods=synthetic_pods(n_pods, seed),
    )


def _basic_pod(name: str, namespace: str) -> Obj:
    # scheduler_perf's pod-default.yaml: one container requesting 100m cpu and 500Mi memory.
    return _pod(name, namespace, [_container("pause", {"cpu": "100m", "memory": "500Mi"})])


def scheduling_basic(n_nodes: int = 5000, n_init: int = 1000, n_pods: int = 10000) -> Workload:
    """kube-scheduler's SchedulingBasic: ``n_nodes`` identical nodes, ``n_init`` pods placed first, ``n_pods`` measured.

    Nodes follow scheduler_perf's node-default.yaml (4 cpu, 32Gi memory, 110 pods); pods pod-default.yaml
    (100m cpu, 500Mi memory). Initial pods live in namespace ``sched-setup``, measured ones in ``sched-test``, as in
    the upstream test. Nothing is random here, so there is no seed.
    """
    n_nodes = _check_count("n_nodes", n_nodes)
    n_init = _check_count("n_init", n_init)
    n_pods = _check_count("n_pods", n_pods)
    nodes = []
    for i in range(n_nodes):
        name = f"scheduler-perf-{i:06d}"
        resources = {"cpu": "4", "memory": "32Gi", "pods": "110"}
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "spec": {},
                "status": {"capacity": dict(resources), "allocatable": resources},
            }
        )
    return Workload(
        name=f"SchedulingBasic(n_nodes={n_nodes}, n_init={n_init}, n_pods={n_pods})",
        nodes=nodes,
        pods=[_basic_pod(f"pod-{i:06d}", "sched-test") for i in range(n_pods)],
        init_pods=[_basic_pod(f"init-pod-{i:06d}", "sched-setup") for i in range(n_init)],
    )
