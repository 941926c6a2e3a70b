"""Volcano's scheduler test fixtures, for running Volcano v1.14's own test tables against vcore's cycle.

Mirrors three Go packages of volcano-sh/volcano (release-1.14):

* ``pkg/scheduler/util/test_utils.go`` and ``pkg/scheduler/api/test_utils.go``: the object builders (BuildPod,
  BuildNode, BuildPodGroup, BuildQueue, BuildPriorityClass, BuildResourceList, BuildHyperNode ...) with their
  defaults: a pod always carries the ``scheduling.k8s.io/group-name`` annotation, one container with requests only,
  node allocatable == capacity, queues Open;
* ``pkg/scheduler/conf``: a test's ``[]conf.Tier`` of ``PluginOption`` switches. In a Go test an unset switch is a
  nil pointer and Volcano's session reads nil as *disabled*; in a volcano-scheduler.conf an unset switch is
  *enabled* (``plugins.ApplyPluginConfDefaults``). ``scheduler_conf`` writes the conf that means what the Go tiers
  mean: ``key: false`` for each switch that governs a function the plugin registers and that the cycle's actions
  consult, the switches the test sets true left out (true by default);
* ``pkg/scheduler/uthelper``: ``TestCommonStruct`` (``Case`` here) and its checks: bindings (exact map, or only their
  number with ``MinimalBindCheck``), evictions (always exact), pipelined tasks, PodGroup phases, bindings per
  HyperNode.

A case runs the configured actions through ``vcore.Scheduler(cluster, cycle=conf).run_cycle()``. Cases vcore
disagrees with carry an ``xfail`` naming causes from ``causes``; cases outside vcore's scope a ``skip`` reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

import vcore

from .causes import Cause

GROUP_ANNOTATION = "scheduling.k8s.io/group-name"  # schedulingv1beta1.KubeGroupNameAnnotationKey
TASK_SPEC = "volcano.sh/task-spec"
PREEMPTABLE = "volcano.sh/preemptable"  # schedulingv1beta1.PodPreemptable
ALLOCATED_HYPERNODE = "volcano.sh/job-allocated-hypernode"  # api.JobAllocatedHyperNode
VOLCANO_GROUP_API = "scheduling.volcano.sh/v1beta1"

# Pod phases and PodGroup phases, as the Go constants spell them.
PENDING, RUNNING = "Pending", "Running"
PG_PENDING, PG_INQUEUE, PG_RUNNING = "Pending", "Inqueue", "Running"


# ---------------------------------------------------------------------------------------------------------------
# Builders (pkg/scheduler/api/test_utils.go, pkg/scheduler/util/test_utils.go)
# ---------------------------------------------------------------------------------------------------------------
def rl(cpu: str = "", memory: str = "", **scalars: str) -> dict[str, str]:
    """api.BuildResourceList(cpu, memory, scalars...): empty strings leave the resource out. Scalar names with
    characters Python keywords cannot hold go through ``res``."""
    out = {}
    if cpu:
        out["cpu"] = cpu
    if memory:
        out["memory"] = memory
    out.update(scalars)
    return out


def res(cpu: str = "", memory: str = "", scalars: dict[str, str] | None = None) -> dict[str, str]:
    """rl() with scalar resources given as a mapping (``{"nvidia.com/gpu": "1", "pods": "10"}``)."""
    return rl(cpu, memory, **(scalars or {}))


def node_res(cpu: str, memory: str, pods: str = "10", scalars: dict[str, str] | None = None) -> dict[str, str]:
    """The common node allocatable of Volcano's tests: BuildResourceList(cpu, mem, {pods: 10}, ...)."""
    return res(cpu, memory, {**(scalars or {}), "pods": pods})


def build_node(name: str, alloc: dict[str, str], labels: dict[str, str] | None = None) -> dict:
    """util.BuildNode: capacity and allocatable both ``alloc``."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {}), "annotations": {}},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def build_pod(
    namespace: str,
    name: str,
    node: str,
    phase: str,
    req: dict[str, str] | None,
    group: str,
    labels: dict[str, str] | None = None,
    selector: dict[str, str] | None = None,
    *,
    priority: int | None = None,
    preemption_policy: str | None = None,
    affinity: dict | None = None,
    annotations: dict[str, str] | None = None,
) -> dict:
    """util.BuildPod (and BuildPodWithPriority / BuildPodWithPreemptionPolicy / BuildPodWithAffinity): the group
    annotation always set, one container asking ``req``."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": dict(req or {})}}]}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = dict(selector)
    if priority is not None:
        spec["priority"] = priority
    if preemption_policy is not None:
        spec["preemptionPolicy"] = preemption_policy
    if affinity is not None:
        spec["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"{namespace}-{name}",
            "labels": dict(labels or {}),
            "annotations": {GROUP_ANNOTATION: group, **(annotations or {})},
        },
        "spec": spec,
        "status": {"phase": phase},
    }


def build_podgroup(
    name: str,
    namespace: str,
    queue: str,
    min_member: int,
    min_task: dict[str, int] | None,
    phase: str,
    *,
    min_resources: dict[str, str] | None = None,
    priority_class: str = "",
    annotations: dict[str, str] | None = None,
    topology: dict | None = None,
    sub_groups: list | None = None,
) -> dict:
    """util.BuildPodGroup (and ...WithMinResources, ...WithPrio, ...WithAnno, ...WithNetWorkTopologies)."""
    spec: dict[str, Any] = {"queue": queue, "minMember": min_member}
    if min_task:
        spec["minTaskMember"] = dict(min_task)
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if priority_class:
        spec["priorityClassName"] = priority_class
    if topology is not None:
        spec["networkTopology"] = topology
    if sub_groups is not None:
        spec["subGroupPolicy"] = sub_groups
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": VOLCANO_GROUP_API,
        "kind": "PodGroup",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase} if phase else {},
    }


def topology_pg(
    name: str,
    namespace: str,
    hypernode: str,
    queue: str,
    min_member: int,
    min_task: dict[str, int] | None,
    phase: str,
    mode: str,
    highest_tier: int,
) -> dict:
    """util.BuildPodGroupWithNetWorkTopologies: the allocated-HyperNode annotation and a networkTopology with
    highestTierAllowed (Volcano builds the spec even for mode "", which then means no constraint)."""
    return build_podgroup(
        name,
        namespace,
        queue,
        min_member,
        min_task,
        phase,
        annotations={ALLOCATED_HYPERNODE: hypernode},
        topology={"mode": mode, "highestTierAllowed": highest_tier},
    )


def topology_pg_by_name(
    name: str,
    namespace: str,
    hypernode: str,
    queue: str,
    min_member: int,
    min_task: dict[str, int] | None,
    phase: str,
    mode: str,
    tier_name: str,
) -> dict:
    """util.BuildPodGroupUsingNetWorkTopologiesWithTierName: highestTierName instead of highestTierAllowed."""
    return build_podgroup(
        name,
        namespace,
        queue,
        min_member,
        min_task,
        phase,
        annotations={ALLOCATED_HYPERNODE: hypernode},
        topology={"mode": mode, "highestTierName": tier_name},
    )


def build_queue(
    name: str,
    weight: int,
    capability: dict[str, str] | None = None,
    *,
    state: str = "Open",
    deserved: dict[str, str] | None = None,
    priority: int | None = None,
    parent: str = "",
    guarantee: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict:
    """util.BuildQueue (and ...WithState, ...WithResourcesQuantity, ...WithPriorityAndResourcesQuantity,
    ...WithAnnos): Open unless ``state`` says otherwise. A weight of 0 is written as Go leaves it (the API's
    admission would default it to 1)."""
    spec: dict[str, Any] = {"weight": weight}
    if capability:
        spec["capability"] = dict(capability)
    if deserved:
        spec["deserved"] = dict(deserved)
    if priority is not None:
        spec["priority"] = priority
    if parent:
        spec["parent"] = parent
    if guarantee:
        spec["guarantee"] = {"resource": dict(guarantee)}
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": VOLCANO_GROUP_API,
        "kind": "Queue",
        "metadata": meta,
        "spec": spec,
        "status": {"state": state},
    }


def build_storage_class(name: str, provisioner: str, binding_mode: str) -> dict:
    """util.BuildStorageClass."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "resourceVersion": "1"},
        "provisioner": provisioner,
        "volumeBindingMode": binding_mode,
    }


def build_pv(name: str, storage_class: str, storage: str) -> dict:
    """util.BuildPV: an Available volume of the class, its capacity and nothing else (no access modes, no node
    affinity)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"storageClassName": storage_class, "capacity": {"storage": storage}},
        "status": {"phase": "Available"},
    }


def build_pvc(namespace: str, name: str, storage: str, storage_class: str) -> dict:
    """util.BuildPVC: an unbound claim of the class asking ``storage``."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
        "spec": {"resources": {"requests": {"storage": storage}}, "storageClassName": storage_class},
    }


def with_pvc(pod: dict, claim: str) -> dict:
    """util.BuildPodWithPVC: the pod mounts the claim at /data."""
    pod["spec"]["volumes"] = [{"name": claim, "persistentVolumeClaim": {"claimName": claim}}]
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": claim, "mountPath": "/data"}]
    return pod


def build_priority_class(name: str, value: int, preemption_policy: str | None = None) -> dict:
    """util.BuildPriorityClass / BuildPriorityClassWithPreemptionPolicy."""
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if preemption_policy is not None:
        obj["preemptionPolicy"] = preemption_policy
    return obj


def build_hypernode(
    name: str,
    tier: int,
    nodes: tuple[str, ...] | list[str] = (),
    children: tuple[str, ...] | list[str] = (),
    tier_name: str = "",
) -> dict:
    """api.BuildHyperNode / BuildHyperNodeWithTierName with exact-match members."""
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    members += [{"type": "HyperNode", "selector": {"exactMatch": {"name": c}}} for c in children]
    spec: dict[str, Any] = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name}, "spec": spec}


def hypernodes_from_sets(
    by_tier: dict[int, tuple[str, ...]], nodes_of: dict[str, tuple[str, ...]], tier_names: dict[int, str] | None = None
) -> list[dict]:
    """HyperNode objects for a test's ``HyperNodesSetByTier`` and ``HyperNodes`` (the node sets Volcano's session
    reads): a HyperNode's children are the lower-tier HyperNodes whose nodes it contains (the highest such ones), its
    other nodes are direct members. ``tier_names``: tier -> tierName, as the test's HyperNodeInfo objects name them
    (Volcano keeps one name per tier: HyperNodesInfo.HyperNodeTierNameMap)."""
    tier_of = {hn: t for t, names in by_tier.items() for hn in names}
    out = []
    for hn, tier in sorted(tier_of.items(), key=lambda kv: (kv[1], kv[0])):
        mine = set(nodes_of[hn])
        below = [c for c in tier_of if tier_of[c] < tier and set(nodes_of[c]) <= mine]
        children = [
            c
            for c in below
            if not any(d != c and tier_of[d] > tier_of[c] and set(nodes_of[c]) <= set(nodes_of[d]) for d in below)
        ]
        covered = set().union(*(set(nodes_of[c]) for c in children)) if children else set()
        tier_name = (tier_names or {}).get(tier, "")
        out.append(build_hypernode(hn, tier, sorted(mine - covered), sorted(children), tier_name))
    return out


def uniform_nodes(cpu: str, memory: str, *names: str) -> list[dict]:
    """Nodes of one size (BuildNode(name, BuildResourceList(cpu, memory, pods: 10), nil)), as most tables use."""
    return [build_node(n, node_res(cpu, memory)) for n in names]


def sub_group(
    name: str, match_label_keys: list[str], mode: str, highest_tier: int, size: int = 1, min_sub_groups: int = 0
) -> dict:
    """util.BuildSubGroupPolicy / ...WithSubGroupSize / ...WithMinSubGroups: a networkTopology only when ``mode``
    is set."""
    out: dict[str, Any] = {
        "name": name,
        "subGroupSize": size,
        "minSubGroups": min_sub_groups,
        "matchLabelKeys": list(match_label_keys),
    }
    if mode:
        out["networkTopology"] = {"mode": mode, "highestTierAllowed": highest_tier}
    return out


def subgroup_pg(
    name: str,
    namespace: str,
    hypernode: str,
    queue: str,
    min_member: int,
    min_task: dict[str, int] | None,
    phase: str,
    mode: str,
    highest_tier: int,
    policies: list[dict],
) -> dict:
    """util.BuildPodGroupWithSubGroupPolicy: a network topology PodGroup when ``mode`` is set, with the policies."""
    pg = (
        topology_pg(name, namespace, hypernode, queue, min_member, min_task, phase, mode, highest_tier)
        if mode
        else build_podgroup(name, namespace, queue, min_member, min_task, phase)
    )
    pg["spec"]["subGroupPolicy"] = policies
    return pg


# ---------------------------------------------------------------------------------------------------------------
# Tiers: conf.PluginOption with Go's switch fields, written as the volcano-scheduler.conf that means the same
# ---------------------------------------------------------------------------------------------------------------
#: conf.PluginOption field -> its yaml key (pkg/scheduler/conf/scheduler_conf.go).
SWITCH_KEYS = {
    "EnabledJobOrder": "enableJobOrder",
    "EnabledHierarchy": "enableHierarchy",
    "EnabledJobReady": "enableJobReady",
    "EnabledJobPipelined": "enableJobPipelined",
    "EnabledTaskOrder": "enableTaskOrder",
    "EnabledPreemptable": "enablePreemptable",
    "EnabledReclaimable": "enableReclaimable",
    "EnablePreemptive": "enablePreemptive",
    "EnabledQueueOrder": "enableQueueOrder",
    "EnabledClusterOrder": "EnabledClusterOrder",
    "EnabledPredicate": "enablePredicate",
    "EnabledBestNode": "enableBestNode",
    "EnabledNodeOrder": "enableNodeOrder",
    "EnabledTargetJob": "enableTargetJob",
    "EnabledReservedNodes": "enableReservedNodes",
    "EnabledJobEnqueued": "enableJobEnqueued",
    "EnabledVictim": "enabledVictim",
    "EnabledJobStarving": "enableJobStarving",
    "EnabledOverused": "enabledOverused",
    "EnabledAllocatable": "enabledAllocatable",
    "EnabledHyperNodeOrder": "enabledHyperNodeOrder",
    "EnabledSubJobReady": "enabledSubJobReady",
    "EnabledSubJobPipelined": "enabledSubJobPipelined",
    "EnabledSubJobOrder": "enabledSubJobOrder",
    "EnabledHyperNodeGradient": "enabledHyperNodeGradient",
}

#: The switches that govern the functions each plugin registers in OnSessionOpen (ssn.Add*Fn, v1.14). JobValid and
#: VictimQueueOrder have no switch.
PLUGIN_SWITCHES = {
    "gang": (
        "EnabledJobOrder",
        "EnabledJobPipelined",
        "EnabledJobReady",
        "EnabledJobStarving",
        "EnabledPreemptable",
        "EnabledReclaimable",
        "EnabledSubJobOrder",
        "EnabledSubJobPipelined",
        "EnabledSubJobReady",
    ),
    "priority": (
        "EnabledJobOrder",
        "EnabledJobStarving",
        "EnabledPreemptable",
        "EnabledSubJobOrder",
        "EnabledTaskOrder",
    ),
    "drf": ("EnabledJobOrder", "EnabledPreemptable", "EnabledQueueOrder", "EnabledReclaimable"),
    "proportion": (
        "EnabledAllocatable",
        "EnabledJobEnqueued",
        "EnabledOverused",
        "EnabledPredicate",
        "EnablePreemptive",
        "EnabledQueueOrder",
        "EnabledReclaimable",
        "EnabledPreemptable",
    ),
    "capacity": (
        "EnabledAllocatable",
        "EnabledJobEnqueued",
        "EnabledPredicate",
        "EnablePreemptive",
        "EnabledQueueOrder",
        "EnabledReclaimable",
        "EnabledPreemptable",
    ),
    "conformance": ("EnabledPreemptable", "EnabledReclaimable"),
    # enablePreemptable or enabledAllocatable: preempt's dry run tells the plugin of each victim (SimulateRemoveTask)
    "predicates": ("EnabledNodeOrder", "EnabledPredicate", "EnabledPreemptable", "EnabledAllocatable"),
    "nodeorder": ("EnabledNodeOrder",),
    "binpack": ("EnabledNodeOrder",),
    "overcommit": ("EnabledJobEnqueued",),
    "sla": ("EnabledJobEnqueued", "EnabledJobOrder", "EnabledJobPipelined"),
    "network-topology-aware": ("EnabledNodeOrder", "EnabledHyperNodeGradient", "EnabledHyperNodeOrder"),
}

_ALL_ACTIONS = frozenset({"enqueue", "allocate", "backfill", "preempt", "reclaim"})
#: The actions whose code consults each switch's session function (pkg/scheduler/actions, v1.14).
SWITCH_ACTIONS = {
    "EnabledJobOrder": _ALL_ACTIONS,
    "EnabledQueueOrder": _ALL_ACTIONS,
    "EnabledTaskOrder": frozenset({"allocate", "backfill", "preempt", "reclaim"}),
    "EnabledJobEnqueued": frozenset({"enqueue"}),
    "EnabledJobReady": frozenset({"allocate"}),
    "EnabledJobPipelined": frozenset({"allocate", "preempt", "reclaim"}),
    "EnabledJobStarving": frozenset({"preempt", "reclaim"}),
    "EnabledAllocatable": frozenset({"allocate", "preempt"}),
    "EnabledOverused": frozenset({"allocate", "reclaim"}),
    "EnabledPredicate": frozenset({"allocate", "backfill", "preempt", "reclaim"}),
    "EnabledNodeOrder": frozenset({"allocate", "backfill", "preempt"}),
    "EnabledPreemptable": frozenset({"preempt"}),
    "EnabledReclaimable": frozenset({"reclaim"}),
    "EnablePreemptive": frozenset({"reclaim"}),
    "EnabledHyperNodeOrder": frozenset({"allocate"}),
    "EnabledHyperNodeGradient": frozenset({"allocate"}),
    "EnabledSubJobOrder": frozenset({"allocate"}),
    "EnabledSubJobReady": frozenset({"allocate"}),
    "EnabledSubJobPipelined": frozenset({"allocate"}),
}
_TOPOLOGY_SWITCHES = {"EnabledHyperNodeOrder", "EnabledHyperNodeGradient"}
_SUBJOB_SWITCHES = {"EnabledSubJobOrder", "EnabledSubJobReady", "EnabledSubJobPipelined"}


@dataclass(frozen=True)
class Opt:
    """conf.PluginOption: a plugin name, the switches the Go test sets (field name -> bool) and its Arguments."""

    name: str
    switches: dict[str, bool] = field(default_factory=dict)
    arguments: dict[str, Any] = field(default_factory=dict)


def opt(name: str, arguments: dict[str, Any] | None = None, **switches: bool) -> Opt:
    """opt("gang", EnabledJobOrder=True, EnabledJobReady=True): Go's PluginOption literal."""
    unknown = set(switches) - set(SWITCH_KEYS)
    if unknown:
        raise ValueError(f"opt({name}): unknown PluginOption fields {sorted(unknown)}")
    return Opt(name, dict(switches), dict(arguments or {}))


def scheduler_conf(
    tiers: list[list[Opt]],
    actions: list[str],
    registered: set[str] | None = None,
    *,
    configurations: list[dict] | None = None,
    topology: bool = False,
    sub_groups: bool = False,
) -> dict:
    """The volcano-scheduler.conf (as a dict) meaning what the Go test's tiers mean for these actions.

    ``registered``: the plugin builders the test registers (its ``Plugins`` map); Volcano's OpenSession skips a tier's
    plugin without a builder. ``topology`` / ``sub_groups``: whether a PodGroup has a network topology / sub-group
    policy (the HyperNode and SubJob switches only matter then)."""
    out_tiers = []
    for tier in tiers:
        plugins = []
        for o in tier:
            if registered is not None and o.name not in registered:
                continue
            entry: dict[str, Any] = {"name": o.name}
            for sw in PLUGIN_SWITCHES.get(o.name, ()):
                if not SWITCH_ACTIONS[sw] & set(actions):
                    continue
                if sw in _TOPOLOGY_SWITCHES and not topology or sw in _SUBJOB_SWITCHES and not sub_groups:
                    continue
                if not o.switches.get(sw, False):
                    entry[SWITCH_KEYS[sw]] = False
            if o.switches.get("EnabledHierarchy"):
                entry["enableHierarchy"] = True
            if o.arguments:
                entry["arguments"] = dict(o.arguments)
            plugins.append(entry)
        out_tiers.append({"plugins": plugins})
    conf: dict[str, Any] = {"actions": ", ".join(actions), "tiers": out_tiers}
    if configurations:
        conf["configurations"] = [dict(c) for c in configurations]
    return conf


# ---------------------------------------------------------------------------------------------------------------
# TestCommonStruct and its checks (pkg/scheduler/uthelper/helper.go)
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Case:
    """uthelper.TestCommonStruct: the objects, what is checked, and (vcore's side) why vcore differs or is out of
    scope. ``plugins``: the registered builders (None: every plugin the tiers name)."""

    name: str
    pods: list[dict] = field(default_factory=list)
    nodes: list[dict] = field(default_factory=list)
    podgroups: list[dict] = field(default_factory=list)
    queues: list[dict] = field(default_factory=list)
    priority_classes: list[dict] = field(default_factory=list)
    hypernodes: list[dict] = field(default_factory=list)
    storage: list[dict] = field(default_factory=list)  # SCs, PVs and PVCs (any order: added classes first)
    plugins: set[str] | None = None
    tiers: list[list[Opt]] | None = None  # the case's own tiers, for Go tables that carry them per case
    sharding_mode: str = ""  # ShardingMode: "hard" or "soft" (vcore: Scheduler.set_node_scope)
    nodes_in_shard: list[str] = field(default_factory=list)  # NodesInShard
    expect_bind: dict[str, str] | None = None  # ExpectBindMap
    expect_binds_num: int = 0  # ExpectBindsNum
    minimal_bind_check: bool = False  # MinimalBindCheck: only the number of bindings
    expect_evicted: list[str] = field(default_factory=list)  # ExpectEvicted (checked as a multiset, always)
    expect_pipelined: dict[str, list[str]] = field(default_factory=dict)  # ExpectPipeLined: job -> allowed nodes
    expect_status: dict[str, str] = field(default_factory=dict)  # ExpectStatus: job -> PodGroup phase
    expect_binds_per_hypernode: list[int] | None = None  # ExpectBindNumsInHyperNode (CheckBindInHyperNode)
    xfail: tuple[Cause, ...] = ()
    skip: str = ""
    note: str = ""  # how the case was adapted to a cycle, when it was


def mark(
    cases: list[Any], *, xfail: dict[str, tuple[Cause, ...]] | None = None, skip: dict[str, str] | None = None
) -> list[Any]:
    """Give the named cases (anything with ``name``, ``xfail`` and ``skip``) their causes (xfail) or skip reasons;
    every name must be a case of the list."""
    names = {c.name for c in cases}
    unknown = (set(xfail or {}) | set(skip or {})) - names
    if unknown:
        raise KeyError(f"mark: no case named {sorted(unknown)}")
    for c in cases:
        c.xfail = (xfail or {}).get(c.name, c.xfail)
        c.skip = (skip or {}).get(c.name, c.skip)
    return cases


@dataclass
class Suite:
    """One Go test function: its tiers, actions, registered plugin builders, action configurations and cases."""

    go_test: str
    tiers: list[list[Opt]]
    actions: list[str]
    cases: list[Case]
    registered: set[str] | None = None
    configurations: list[dict] | None = None

    def params(self) -> list:
        return [param(c) for c in self.cases]

    def run(self, case: Case) -> Any:
        return run_case(
            case, case.tiers or self.tiers, self.actions, registered=self.registered, configurations=self.configurations
        )


def param(case: Any):
    """The case (anything with ``name``, ``xfail`` and ``skip``) as a pytest parameter: the Go name as its id, and
    its skip / xfail mark."""
    marks = []
    if case.skip:
        marks.append(pytest.mark.skip(reason=case.skip))
    elif case.xfail:
        # Any of the listed causes may be the one that shows (fixing one leaves the next): the xfail accepts the
        # exceptions they raise and nothing else, so a difference no cause names fails the test.
        raises = tuple(dict.fromkeys(c.raises for c in case.xfail))
        reason = "; then ".join(f"{c.name}: {c.summary}" for c in case.xfail)
        marks.append(pytest.mark.xfail(strict=True, raises=raises, reason=reason))
    return pytest.param(case, id=case.name, marks=marks)


def build_cluster(case: Case) -> vcore.Cluster:
    """The case's objects in a vcore Cluster, in the order their references need."""
    cluster = vcore.Cluster()
    for n in case.nodes:
        cluster.add_node(n)
    if case.hypernodes:
        cluster.set_hypernodes(case.hypernodes)
    for pc in case.priority_classes:
        cluster.add_priority_class(pc)
    for q in _parents_first(case.queues):
        if q["metadata"]["name"] in cluster.queues:  # an implicit queue (default, root) the test defines itself
            cluster.update_queue(q)
        else:
            cluster.add_queue(q)
    for kind, add in (
        ("StorageClass", cluster.add_storage_class),
        ("PersistentVolume", cluster.add_persistent_volume),
        ("PersistentVolumeClaim", cluster.add_persistent_volume_claim),
    ):
        for obj in case.storage:
            if obj["kind"] == kind:
                add(obj)
    for pg in case.podgroups:
        cluster.add_podgroup(pg)
    for p in case.pods:
        cluster.add_pod(p)
    return cluster


def _parents_first(queues: list[dict]) -> list[dict]:
    by_name = {q["metadata"]["name"]: q for q in queues}
    out: list[dict] = []

    def visit(q: dict) -> None:
        if q in out:
            return
        parent = q["spec"].get("parent")
        if parent in by_name:
            visit(by_name[parent])
        out.append(q)

    for q in queues:
        visit(q)
    return out


def run_case(
    case: Case,
    tiers: list[list[Opt]],
    actions: list[str],
    *,
    registered: set[str] | None = None,
    configurations: list[dict] | None = None,
) -> Any:
    """Build the cluster, run one cycle with the conf the Go tiers mean, and check what the Go test checks.
    ``registered``: the test's plugin builders (a case's own ``plugins`` wins)."""
    cluster = build_cluster(case)
    plugins = case.plugins if case.plugins is not None else registered
    conf = scheduler_conf(
        tiers,
        actions,
        plugins,
        configurations=configurations,
        topology=any("networkTopology" in pg["spec"] for pg in case.podgroups),
        sub_groups=any("subGroupPolicy" in pg["spec"] for pg in case.podgroups),
    )
    scheduler = vcore.Scheduler(cluster, cycle=conf)
    if case.nodes_in_shard:
        scheduler.set_node_scope(case.nodes_in_shard, soft=case.sharding_mode == "soft")
    result = scheduler.run_cycle()
    check(case, cluster, result)
    return result


def check(case: Case, cluster: vcore.Cluster, result: Any) -> None:
    """uthelper's CheckAll (CheckBind, CheckEvict, CheckPipelined, CheckPGStatus) and CheckBindInHyperNode."""
    binds = {b.pod: b.node for b in result.bindings if b.node is not None}
    if case.minimal_bind_check or case.expect_binds_per_hypernode is not None:
        assert len(binds) == case.expect_binds_num, f"bindings: want {case.expect_binds_num}, got {binds}"
    else:
        want = dict(case.expect_bind or {})
        assert len(want) == case.expect_binds_num, "the Go case sets ExpectBindsNum != len(ExpectBindMap)"
        assert binds == want, f"bindings: want {want}, got {binds}"
    evicted = Counter(e.victim for e in result.evictions)
    assert evicted == Counter(case.expect_evicted), (
        f"evictions: want {sorted(case.expect_evicted)}, got {sorted(evicted.elements())}"
    )
    for job, nodes in case.expect_pipelined.items():
        members = {
            f"{job.split('/')[0]}/{p['metadata']['name']}"
            for p in case.pods
            if p["metadata"]["namespace"] == job.split("/")[0]
            and p["metadata"]["annotations"].get(GROUP_ANNOTATION) == job.split("/")[1]
        }
        piped = {k: n for k, n in result.nominated.items() if k in members}
        assert piped, f"pipelined: want tasks of {job} on {nodes}, got none (nominated: {result.nominated})"
        assert all(n in nodes for n in piped.values()), f"pipelined: want {job} on {nodes}, got {piped}"
    for job, phase in case.expect_status.items():
        got = result.podgroups.get(job)
        assert got is not None, f"status: podgroup {job} is not in the cycle's result"
        assert got.phase == phase, f"status of {job}: want {phase}, got {got.phase} ({got.message})"
    if case.expect_binds_per_hypernode is not None:
        leaf = _leaf_hypernode(case.hypernodes)
        per: Counter = Counter(leaf.get(n, "") for n in binds.values())
        assert sorted(per.values()) == sorted(case.expect_binds_per_hypernode), f"bindings per HyperNode: {dict(per)}"


def _leaf_hypernode(hypernodes: list[dict]) -> dict[str, str]:
    """node -> the lowest-tier HyperNode that lists it directly (util.FindHyperNodeForNode)."""
    out: dict[str, tuple[int, str]] = {}
    for hn in hypernodes:
        tier = hn["spec"]["tier"]
        for m in hn["spec"]["members"]:
            if m["type"] == "Node":
                n = m["selector"]["exactMatch"]["name"]
                if n not in out or tier < out[n][0]:
                    out[n] = (tier, hn["metadata"]["name"])
    return {n: name for n, (_, name) in out.items()}
