"""Builders for kube-scheduler's DefaultPreemption test tables (st.MakePod() with priority, requests, start time,
preemption policy, nominated node and conditions; st.MakeNode().Capacity(); st.MakePDB()), as API-shaped dicts,
and the profile and cluster such a case runs on."""

from __future__ import annotations

import copy
from typing import Any

import vcore
from tests.plugins import kube_builders as kb

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000  # negPriority ... veryHighPriority
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
LABEL_KEYS = ("hostname", "zone", "region")  # the Go tables' node names "name/zone/region" become these labels
PREEMPTION = "DefaultPreemption"


def epoch(n: int) -> str:
    """epochTimeN. The Go tables space start times by nanoseconds; the API carries whole seconds (metav1.Time is
    RFC 3339), so here they are N seconds after the epoch: the same order."""
    return f"1970-01-01T00:00:{n:02d}Z"


class Pod(kb.Pod):
    """st.MakePod() with what preemption reads."""

    def __init__(self) -> None:
        super().__init__()
        self._status: dict[str, Any] = {}

    def priority(self, value: int) -> Pod:
        self._spec["priority"] = value
        return self

    def req(self, requests: dict[str, str]) -> Pod:
        """st.PodWrapper.Req: a container requesting ``requests``."""
        n = len(self._spec["containers"])
        container = {"name": f"con{n}", "image": "pause", "resources": {"requests": dict(requests)}}
        self._spec["containers"].append(container)
        return self

    def host_port(self, port: int, protocol: str = "TCP") -> Pod:
        self._spec["containers"][0].setdefault("ports", []).append(
            {"containerPort": port, "hostPort": port, "protocol": protocol}
        )
        return self

    def start_time(self, when: str) -> Pod:
        self._status["startTime"] = when
        return self

    def preemption_policy(self, policy: str) -> Pod:
        self._spec["preemptionPolicy"] = policy
        return self

    def nominated_node_name(self, node: str) -> Pod:
        self._status["nominatedNodeName"] = node
        return self

    def condition(self, kind: str, status: str, reason: str) -> Pod:
        self._status.setdefault("conditions", []).append({"type": kind, "status": status, "reason": reason})
        return self

    def obj(self) -> dict:
        out = super().obj()
        if self._status:
            out["status"] = copy.deepcopy(self._status)
        return out


def node(
    name: str,
    capacity: dict[str, str] | None = None,
    *,
    taints: list | None = None,
    unschedulable: bool = False,
    labels: dict[str, str] | None = None,
) -> dict:
    """st.MakeNode().Name(name).Capacity(capacity): room for 32 pods unless ``capacity`` says otherwise. A name
    "a/zone1" names node "a" labelled hostname=a, zone=zone1 (as the Go tables split it)."""
    parts = name.split("/")
    allocatable = {"pods": "32", **(capacity or {})}
    out = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": parts[0], "labels": {**dict(zip(LABEL_KEYS, parts)), **(labels or {})}},
        "spec": {},
        "status": {"allocatable": dict(allocatable), "capacity": dict(allocatable)},
    }
    if taints:
        out["spec"]["taints"] = list(taints)
    if unschedulable:
        out["spec"]["unschedulable"] = True
    return out


def pdb(
    name: str,
    match_labels: dict[str, str],
    allowed: int,
    *,
    disrupted: tuple[str, ...] = (),
    namespace: str = "default",
) -> dict:
    """st.MakePDB(): a policy/v1 PodDisruptionBudget whose status allows ``allowed`` disruptions."""
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2025-01-01T00:00:00Z" for p in disrupted}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": dict(match_labels)}},
        "status": status,
    }


def profile(*filters: str, args: dict[str, int] | None = None) -> dict:
    """A profile with only the given filter plugins and DefaultPreemption (the Go tables register just the plugins
    a case needs)."""
    enabled = [{"name": f} for f in filters] + [{"name": PREEMPTION}]
    out: dict[str, Any] = {"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": enabled}}}
    if args:
        out["pluginConfig"] = [{"name": PREEMPTION, "args": dict(args)}]
    return out


def cluster(nodes: list[dict], pods: list[dict] = (), pdbs: list[dict] = ()) -> vcore.Cluster:
    """The nodes, the pods (bound where spec.nodeName says, pending otherwise) and the budgets."""
    c = vcore.Cluster()
    for n in nodes:
        c.add_node(n)
    for p in pods:
        c.add_pod(p)
    for b in pdbs:
        c.add_pod_disruption_budget(b)
    return c
