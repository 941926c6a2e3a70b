"""Seeded random scenarios for the differential test against kube-scheduler (tests/kube/test_differential.py).

A scenario is a small cluster -- namespaces with labels, Services, Nodes, pods already bound to the nodes -- and
probes: pods that are scheduled one at a time against it (each created, scheduled by kube-scheduler, compared with
vcore, then deleted, so they are independent). Everything is drawn from ``random.Random(seed)``: the same seed
gives the same objects.

What a node, a running pod or a probe carries is decided by feature functions, each ``(rng, obj, ctx) -> None``
that fills in one kind of field, listed with the probability it applies in NODE_FEATURES, RUNNING_FEATURES and
PROBE_FEATURES. A new scheduling feature is one such function and one line in a list, as ImageLocality is: a node
feature writing status.images (names and sizeBytes) and a probe feature choosing container images among them. A
probe vcore refuses (a field it does not honor yet) is counted as such by the test, not compared.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Cluster-wide objects every scenario may use (created once by the test).
PRIORITY_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "diff-low"}, "value": 10},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "diff-high"}, "value": 1000},
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "diff-high-never"},
        "value": 1000,
        "preemptionPolicy": "Never",
    },
]

# The kube-scheduler profiles a probe picks from (by schedulerName); vcore reads the very same dicts.
EXTENDED = "example.com/foo"
PROFILES = [
    {"schedulerName": "default-scheduler"},
    {
        "schedulerName": "diff-most-allocated",
        "plugins": {
            "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 4}, {"name": "NodeAffinity", "weight": 1}]}
        },
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [
                            {"name": "cpu", "weight": 2},
                            {"name": "memory", "weight": 1},
                            {"name": EXTENDED, "weight": 3},
                            {"name": "ephemeral-storage", "weight": 1},
                        ],
                    }
                },
            },
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {
                    "resources": [
                        {"name": "cpu", "weight": 1},
                        {"name": "memory", "weight": 1},
                        {"name": EXTENDED, "weight": 1},
                    ]
                },
            },
        ],
    },
    {
        "schedulerName": "diff-requested-to-capacity",
        "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "ignoredResourceGroups": ["example.com"],
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
                        "requestedToCapacityRatio": {
                            "shape": [
                                {"utilization": 0, "score": 2},
                                {"utilization": 60, "score": 10},
                                {"utilization": 100, "score": 0},
                            ]
                        },
                    },
                },
            }
        ],
    },
]

ZONES = ["z1", "z2", "z3"]
REGIONS = ["r1", "r2"]
HOSTNAME, ZONE, REGION = "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
SCENARIO_LABEL = "diff.vcore.dev/scenario"
TOPOLOGY_KEYS = [HOSTNAME, ZONE, REGION, "rack"]
TAINT_KEYS = ["dedicated", "spot", "gpu"]
TAINT_VALUES = ["", "a", "b"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
# Container images nodes may hold (ImageLocality), by the name the kubelet reports, with their size in bytes: below
# kube-scheduler's 23 MB minimum, between, and past its 1000 MB maximum per container.
IMAGES = {
    "registry.invalid/tools:latest": 20 * 2**20,
    "registry.invalid/web:1.0": 300 * 2**20,
    "registry.invalid/db:2": 800 * 2**20,
    "registry.invalid/big:7": 2 * 2**30,
}
# Pod labels: keys and values small enough that selectors match something often.
POD_LABELS = {"app": ["web", "db", "cache"], "tier": ["fe", "be"], "version": ["v1", "v2"]}


@dataclass
class Context:
    """What feature functions may refer to: the scenario's names and nodes (filled while generating)."""

    seed: int
    namespaces: list[str]
    node_names: list[str] = field(default_factory=list)
    nodes: list[dict] = field(default_factory=list)


@dataclass
class Scenario:
    """The objects of one scenario; every name starts with d<seed>, and its nodes carry SCENARIO_LABEL."""

    seed: int
    namespaces: list[dict]
    services: list[dict]
    nodes: list[dict]
    running: list[dict]  # with spec.nodeName
    probes: list[dict]


Feature = Callable[[random.Random, dict, Context], None]


# -- quantities and containers ------------------------------------------------------------------------------
def _cpu(rng: random.Random) -> str:
    return rng.choice(["100m", "250m", "500m", "1", "1500m", "2", "0.3", "750m", "0"])


def _memory(rng: random.Random) -> str:
    return rng.choice(["64Mi", "256Mi", "512Mi", "1Gi", "1500Mi", "2Gi", "3Gi", "100M", "0"])


def _requests(rng: random.Random, *, extended: bool) -> dict[str, str]:
    """A container's requests: cpu and memory each present or missing (non-zero defaults apply), sometimes
    ephemeral storage and the extended resource."""
    r = {}
    if rng.random() < 0.75:
        r["cpu"] = _cpu(rng)
    if rng.random() < 0.7:
        r["memory"] = _memory(rng)
    if rng.random() < 0.15:
        r["ephemeral-storage"] = rng.choice(["1Gi", "5Gi", "20Gi"])
    if extended and rng.random() < 0.2:
        r[EXTENDED] = str(rng.randint(1, 3))
    return r


def _container(name: str, requests: dict[str, str], rng: random.Random) -> dict:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = dict(requests)
    # A limit equal to the request sometimes; extended resources need one (they cannot be overcommitted).
    limits = {k: v for k, v in requests.items() if k == EXTENDED or rng.random() < 0.2}
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "registry.invalid/pause:3.10", "resources": resources}


def _pod(name: str, namespace: str, rng: random.Random, ctx: Context) -> dict:
    containers = [_container(f"c{i}", _requests(rng, extended=i == 0), rng) for i in range(rng.choice([1, 1, 2, 3]))]
    labels = {k: rng.choice(v) for k, v in POD_LABELS.items() if rng.random() < 0.7}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": containers, "terminationGracePeriodSeconds": 0},
    }


# -- node features ------------------------------------------------------------------------------------------
def node_labels(rng: random.Random, node: dict, ctx: Context) -> None:
    labels = node["metadata"]["labels"]
    if rng.random() < 0.9:
        labels[ZONE] = rng.choice(ZONES)
    if rng.random() < 0.8:
        labels[REGION] = rng.choice(REGIONS)
    if rng.random() < 0.5:
        labels["rack"] = rng.choice(["r1", "r2"])
    if rng.random() < 0.6:
        labels["tier"] = rng.choice(["gold", "silver"])
    if rng.random() < 0.6:
        labels["rank"] = str(rng.randint(0, 20))
    if rng.random() < 0.4:
        labels["disk"] = rng.choice(["ssd", "hdd"])


def node_taints(rng: random.Random, node: dict, ctx: Context) -> None:
    taints, seen = [], set()
    for _ in range(rng.randint(1, 2)):
        key, effect = rng.choice(TAINT_KEYS), rng.choice(EFFECTS)
        if (key, effect) in seen:
            continue
        seen.add((key, effect))
        t = {"key": key, "effect": effect}
        value = rng.choice(TAINT_VALUES)
        if value:
            t["value"] = value
        taints.append(t)
    node["spec"]["taints"] = taints


def node_unschedulable(rng: random.Random, node: dict, ctx: Context) -> None:
    node["spec"]["unschedulable"] = True


def node_extended(rng: random.Random, node: dict, ctx: Context) -> None:
    for section in ("capacity", "allocatable"):
        node["status"][section][EXTENDED] = str(rng.choice([0, 2, 4]))


def node_images(rng: random.Random, node: dict, ctx: Context) -> None:
    """Images the node holds, as the kubelet reports them in status.images (ImageLocality)."""
    held = rng.sample(sorted(IMAGES), rng.randint(1, len(IMAGES)))
    node["status"]["images"] = [{"names": [name], "sizeBytes": IMAGES[name]} for name in held]


NODE_FEATURES: list[tuple[float, Feature]] = [
    (1.0, node_labels),
    (0.3, node_taints),
    (0.12, node_unschedulable),
    (0.4, node_extended),
    (0.6, node_images),
]


def node_object(
    name: str,
    seed: int,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    ephemeral: str = "100Gi",
    labels: dict[str, str] | None = None,
) -> dict:
    """A Node as a kubelet registers it, labelled with its scenario (the test lists a scenario's nodes by it)."""
    capacity = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": ephemeral}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, SCENARIO_LABEL: str(seed), **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "differential test node"}
            ],
        },
    }


def pod_object(
    name: str, namespace: str, *, labels: dict[str, str] | None = None, requests: dict[str, str] | None = None
) -> dict:
    container = {
        "name": "c0",
        "image": "registry.invalid/pause:3.10",
        "resources": {"requests": dict(requests)} if requests else {},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": {"containers": [container], "terminationGracePeriodSeconds": 0},
    }


def namespace_object(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


def make_node(rng: random.Random, name: str, ctx: Context) -> dict:
    node = node_object(
        name,
        ctx.seed,
        cpu=rng.choice(["2", "4", "8", "3500m"]),
        memory=rng.choice(["4Gi", "8Gi", "16Gi", "6Gi"]),
        pods=rng.choice(["110", "110", "4", "8"]),
        ephemeral=rng.choice(["50Gi", "100Gi"]),
    )
    for p, feature in NODE_FEATURES:
        if rng.random() < p:
            feature(rng, node, ctx)
    return node


# -- pod features (running pods and probes) -------------------------------------------------------------------
def init_containers(rng: random.Random, pod: dict, ctx: Context) -> None:
    inits = []
    for i in range(rng.randint(1, 2)):
        c = _container(f"i{i}", _requests(rng, extended=False), rng)
        if rng.random() < 0.5:
            c["restartPolicy"] = "Always"  # a sidecar
        inits.append(c)
    pod["spec"]["initContainers"] = inits


def pod_level_resources(rng: random.Random, pod: dict, ctx: Context) -> None:
    """spec.resources: pod-level requests (and sometimes limits) of cpu and memory, at least what the containers
    ask for (the API server's validation); a resource the containers do not ask for may be set alone."""
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if rng.random() < 0.7:
        requests["cpu"] = rng.choice(["2", "3", "2500m"])
    if rng.random() < 0.6:
        requests["memory"] = rng.choice(["4Gi", "3Gi", "5Gi"])
    if rng.random() < 0.3:
        limits["memory"] = "6Gi"
        limits["cpu"] = "4"
    if not requests and not limits:
        requests["cpu"] = "2"
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    # Keep the containers within the pod level: small requests, no container limits above it.
    for c in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
        small = {"cpu": rng.choice(["100m", "250m"]), "memory": rng.choice(["128Mi", "256Mi"])}
        for section in ("requests", "limits"):
            values = c["resources"].get(section, {})
            for name, value in small.items():
                if name in values:
                    values[name] = value
    pod["spec"]["resources"] = resources


def priority(rng: random.Random, pod: dict, ctx: Context) -> None:
    pod["spec"]["priorityClassName"] = rng.choice(["diff-low", "diff-high", "diff-high-never"])


def node_selector(rng: random.Random, pod: dict, ctx: Context) -> None:
    choices = [
        (ZONE, rng.choice(ZONES)),
        ("tier", rng.choice(["gold", "silver"])),
        ("disk", "ssd"),
        (REGION, rng.choice(REGIONS)),
    ]
    pod["spec"]["nodeSelector"] = dict(rng.sample(choices, rng.randint(1, 2)))


def _selector_term(rng: random.Random, ctx: Context) -> dict:
    exprs = []
    for _ in range(rng.randint(0, 2)):
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
        if op in ("Gt", "Lt"):
            exprs.append({"key": "rank", "operator": op, "values": [str(rng.randint(0, 20))]})
            continue
        key = rng.choice([ZONE, REGION, "tier", "disk", "rack"])
        e = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            vocab = {
                ZONE: ZONES,
                REGION: REGIONS,
                "tier": ["gold", "silver"],
                "disk": ["ssd", "hdd"],
                "rack": ["r1", "r2"],
            }[key]
            e["values"] = rng.sample(vocab, rng.randint(1, len(vocab) - 1))
        exprs.append(e)
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if not exprs or rng.random() < 0.25:
        names = ctx.node_names + [f"{ctx.node_names[0]}-absent"]
        term["matchFields"] = [
            {"key": "metadata.name", "operator": rng.choice(["In", "In", "NotIn"]), "values": [rng.choice(names)]}
        ]
        if rng.random() < 0.2:  # two name requirements in one term are ANDed
            term["matchFields"].append({"key": "metadata.name", "operator": "In", "values": [rng.choice(names)]})
    return term


def required_node_affinity(rng: random.Random, pod: dict, ctx: Context) -> None:
    terms = [_selector_term(rng, ctx) for _ in range(rng.randint(1, 2))]
    _node_affinity(pod)["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}


def preferred_node_affinity(rng: random.Random, pod: dict, ctx: Context) -> None:
    _node_affinity(pod)["preferredDuringSchedulingIgnoredDuringExecution"] = [
        {"weight": rng.randint(1, 100), "preference": _selector_term(rng, ctx)} for _ in range(rng.randint(1, 3))
    ]


def _node_affinity(pod: dict) -> dict:
    return pod["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})


def tolerations(rng: random.Random, pod: dict, ctx: Context) -> None:
    out = []
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(["Equal", "Exists", "Exists"])
        t: dict[str, Any] = {"operator": op}
        key = rng.choice(TAINT_KEYS + ([""] if op == "Exists" else []))
        if key:
            t["key"] = key
        if op == "Equal":
            value = rng.choice(TAINT_VALUES)
            if value:
                t["value"] = value
        effect = rng.choice(["", *EFFECTS])
        if effect:
            t["effect"] = effect
        out.append(t)
    pod["spec"]["tolerations"] = out


def _label_selector(rng: random.Random) -> dict:
    key = rng.choice(list(POD_LABELS))
    if rng.random() < 0.6:
        return {"matchLabels": {key: rng.choice(POD_LABELS[key])}}
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    e: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        e["values"] = rng.sample(POD_LABELS[key], rng.randint(1, 2))
    return {"matchExpressions": [e]}


def _affinity_term(rng: random.Random, pod: dict, ctx: Context) -> dict:
    term: dict[str, Any] = {"topologyKey": rng.choice(TOPOLOGY_KEYS), "labelSelector": _label_selector(rng)}
    r = rng.random()
    if r < 0.25:
        term["namespaces"] = rng.sample(ctx.namespaces, rng.randint(1, len(ctx.namespaces)))
    elif r < 0.45:
        term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"team": rng.choice(["a", "b"])}}])
    labels = pod["metadata"].get("labels", {})
    used = set(term["labelSelector"].get("matchLabels", {})) | {
        e["key"] for e in term["labelSelector"].get("matchExpressions", [])
    }
    free = [k for k in labels if k not in used]
    if free and rng.random() < 0.3:
        term[rng.choice(["matchLabelKeys", "mismatchLabelKeys"])] = [rng.choice(free)]
    return term


def pod_affinity(rng: random.Random, pod: dict, ctx: Context) -> None:
    kinds = [k for k in ("podAffinity", "podAntiAffinity") if rng.random() < 0.6] or ["podAntiAffinity"]
    for kind in kinds:
        part = pod["spec"].setdefault("affinity", {}).setdefault(kind, {})
        if rng.random() < 0.5:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _affinity_term(rng, pod, ctx) for _ in range(rng.randint(1, 2))
            ]
        if rng.random() < 0.6 or not part:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _affinity_term(rng, pod, ctx)}
                for _ in range(rng.randint(1, 2))
            ]


def host_port(rng: random.Random, pod: dict, ctx: Context) -> None:
    """A container port taken on the node (NodePorts)."""
    pod["spec"]["containers"][0]["ports"] = [
        {"containerPort": 8080, "hostPort": rng.choice([8080, 9090]), "protocol": rng.choice(["TCP", "TCP", "UDP"])}
    ]


def topology_spread(rng: random.Random, pod: dict, ctx: Context) -> None:
    constraints, seen = [], set()
    for _ in range(rng.randint(1, 2)):
        key = rng.choice([ZONE, HOSTNAME, REGION])
        hard = rng.random() < 0.6
        if (key, hard) in seen:
            continue
        seen.add((key, hard))
        c: dict[str, Any] = {
            "maxSkew": rng.randint(1, 3),
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": _label_selector(rng),
        }
        if hard and rng.random() < 0.3:
            c["minDomains"] = rng.randint(1, 4)
        if rng.random() < 0.3:
            c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.3:
            c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        labels = pod["metadata"].get("labels", {})
        free = [
            k
            for k in labels
            if k not in c["labelSelector"].get("matchLabels", {})
            and all(e["key"] != k for e in c["labelSelector"].get("matchExpressions", []))
        ]
        if free and rng.random() < 0.3:
            c["matchLabelKeys"] = [rng.choice(free)]
        constraints.append(c)
    pod["spec"]["topologySpreadConstraints"] = constraints


def images(rng: random.Random, pod: dict, ctx: Context) -> None:
    """Container images among those the nodes may hold, or one none holds (ImageLocality); an image without a tag
    is the node's ":latest"."""
    for c in pod["spec"]["containers"]:
        c["image"] = rng.choice([*sorted(IMAGES), "registry.invalid/pause:3.10"]).removesuffix(":latest")


RUNNING_FEATURES: list[tuple[float, Feature]] = [
    (0.2, init_containers),
    (0.15, pod_level_resources),
    (0.5, priority),
    (0.3, pod_affinity),
    (0.1, host_port),
]

PROBE_FEATURES: list[tuple[float, Feature]] = [
    (0.2, init_containers),
    (0.25, pod_level_resources),
    (0.3, priority),
    (0.25, node_selector),
    (0.25, required_node_affinity),
    (0.35, preferred_node_affinity),
    (0.45, tolerations),
    (0.45, pod_affinity),
    (0.4, topology_spread),
    (0.05, host_port),
    (0.4, images),
]


def _apply(features: list[tuple[float, Feature]], rng: random.Random, obj: dict, ctx: Context) -> None:
    for p, feature in features:
        if rng.random() < p:
            feature(rng, obj, ctx)


# -- scenarios ------------------------------------------------------------------------------------------------
def scenario(seed: int, *, probes: int = 10, nodes: tuple[int, int] = (3, 7)) -> Scenario:
    """The scenario of `seed`: between nodes[0] and nodes[1] nodes, up to two running pods per node."""
    rng = random.Random(seed)
    label = f"d{seed}"
    names = [f"{label}-a", f"{label}-b"]
    ns_labels = {name: {"team": rng.choice(["a", "b"])} for name in names}
    namespaces = [namespace_object(n, ns_labels[n]) for n in names]
    ctx = Context(seed, names)
    ctx.node_names = [f"{label}-n{i}" for i in range(rng.randint(*nodes))]
    ctx.nodes = [make_node(rng, name, ctx) for name in ctx.node_names]
    running = []
    for i in range(rng.randint(0, 2 * len(ctx.nodes))):
        pod = _pod(f"{label}-r{i}", rng.choice(names), rng, ctx)
        _apply(RUNNING_FEATURES, rng, pod, ctx)
        pod["spec"]["nodeName"] = rng.choice(ctx.node_names)
        running.append(pod)
    services = []
    if rng.random() < 0.4:  # a Service gives the pods it selects the default topology spread constraints
        key = rng.choice(list(POD_LABELS))
        services.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"{label}-svc", "namespace": names[0]},
                "spec": {"selector": {key: rng.choice(POD_LABELS[key])}, "ports": [{"port": 80, "targetPort": 8080}]},
            }
        )
    probe_pods = []
    for i in range(probes):
        pod = _pod(f"{label}-p{i}", rng.choice(names), rng, ctx)
        _apply(PROBE_FEATURES, rng, pod, ctx)
        pod["spec"]["schedulerName"] = (
            rng.choice(PROFILES)["schedulerName"] if rng.random() < 0.4 else "default-scheduler"
        )
        probe_pods.append(pod)
    return Scenario(seed, namespaces, services, ctx.nodes, running, probe_pods)


def profile(scheduler_name: str) -> dict:
    return next(p for p in PROFILES if p["schedulerName"] == scheduler_name)
