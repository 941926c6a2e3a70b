"""Builders for kube-scheduler's InterPodAffinity and PodTopologySpread test tables, and the harness that runs a
table case through vcore's public API.

The builders mirror kube-scheduler's ``pkg/scheduler/testing`` wrappers (``st.MakePod()``, ``st.MakeNode()``,
``st.MakeLabelSelector()``) closely enough that a Go table case reads the same in Python; they produce API-shaped
dicts. The harness builds a ``vcore.Cluster`` (nodes, bound pods, namespaces, Services and controllers), a profile
that runs only the plugin under test (plus the filters a case needs), and reads per-node filter outcomes: one
``Scheduler.filter`` per node with a hard node scope, which restricts what is filtered but not what the plugins
count (their PreFilter still sees every node and every bound pod).
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import vcore

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"

# st.PodAffinityKind
REQUIRED, PREFERRED, REQUIRED_AND_PREFERRED = "required", "preferred", "required+preferred"

# The taint the Go tables put on nodes (v1.TaintNodeUnschedulable, NoSchedule).
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class Sel:
    """st.MakeLabelSelector(): a metav1.LabelSelector."""

    def __init__(self) -> None:
        self._sel: dict[str, Any] = {}

    def label(self, key: str, value: str) -> Sel:
        self._sel.setdefault("matchLabels", {})[key] = value
        return self

    def _expr(self, key: str, op: str, values: list[str] | None = None) -> Sel:
        e: dict[str, Any] = {"key": key, "operator": op}
        if values is not None:
            e["values"] = list(values)
        self._sel.setdefault("matchExpressions", []).append(e)
        return self

    def in_(self, key: str, values: list[str]) -> Sel:
        return self._expr(key, "In", values)

    def not_in(self, key: str, values: list[str]) -> Sel:
        return self._expr(key, "NotIn", values)

    def exists(self, key: str) -> Sel:
        return self._expr(key, "Exists")

    def not_exist(self, key: str) -> Sel:
        return self._expr(key, "DoesNotExist")

    def obj(self) -> dict:
        return copy.deepcopy(self._sel)


def expr(key: str, op: str, *values: str) -> dict:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def affinity_term(
    topology_key: str,
    *exprs: dict,
    namespaces: list[str] | None = None,
    namespace_selector: dict | None = None,
    labels: dict | None = None,
) -> dict:
    """A v1.PodAffinityTerm whose labelSelector holds ``exprs`` (and ``labels`` as matchLabels)."""
    sel: dict[str, Any] = {}
    if exprs:
        sel["matchExpressions"] = list(exprs)
    if labels:
        sel["matchLabels"] = dict(labels)
    term: dict[str, Any] = {"labelSelector": sel, "topologyKey": topology_key}
    if namespaces is not None:
        term["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        term["namespaceSelector"] = namespace_selector
    return term


def weighted(weight: int, term: dict) -> dict:
    return {"weight": weight, "podAffinityTerm": term}


def affinity(
    *,
    required: list | None = None,
    preferred: list | None = None,
    anti_required: list | None = None,
    anti_preferred: list | None = None,
) -> dict:
    """A v1.Affinity with pod affinity / anti-affinity term lists (preferred ones as ``weighted(...)``)."""
    out: dict[str, Any] = {}
    for kind, req, pref in (("podAffinity", required, preferred), ("podAntiAffinity", anti_required, anti_preferred)):
        part: dict[str, Any] = {}
        if req is not None:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = list(req)
        if pref is not None:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = list(pref)
        if part:
            out[kind] = part
    return out


class Pod:
    """st.MakePod(): a v1.Pod as a dict (one container requesting nothing)."""

    def __init__(self) -> None:
        self._meta: dict[str, Any] = {}
        self._spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}

    def name(self, name: str) -> Pod:
        self._meta["name"] = name
        return self

    def namespace(self, namespace: str) -> Pod:
        self._meta["namespace"] = namespace
        return self

    def label(self, key: str, value: str) -> Pod:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: dict[str, str]) -> Pod:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def node(self, node_name: str) -> Pod:
        self._spec["nodeName"] = node_name_of(node_name)
        return self

    def terminating(self) -> Pod:
        self._meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def owner_reference(self, name: str, api_version: str, kind: str) -> Pod:
        self._meta["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": name, "controller": True, "uid": f"uid-{name}"}
        ]
        return self

    def node_selector(self, selector: dict[str, str]) -> Pod:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def _node_affinity(self) -> dict:
        return self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})

    def node_affinity_in(self, key: str, values: list[str]) -> Pod:
        self._node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": [expr(key, "In", *values)]}]
        }
        return self

    def node_affinity_not_in(self, key: str, values: list[str]) -> Pod:
        self._node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": [expr(key, "NotIn", *values)]}]
        }
        return self

    def toleration(self, key: str) -> Pod:
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def affinity(self, value: dict) -> Pod:
        """Set spec.affinity as a whole (the Go tables' hand-built v1.Affinity values)."""
        self._spec["affinity"] = copy.deepcopy(value)
        return self

    def _pod_term(self, anti: bool, topology_key: str, selector: dict | None, kind: str) -> Pod:
        part = self._spec.setdefault("affinity", {}).setdefault("podAntiAffinity" if anti else "podAffinity", {})
        term: dict[str, Any] = {"topologyKey": topology_key}
        if selector is not None:
            term["labelSelector"] = selector
        if kind in (REQUIRED, REQUIRED_AND_PREFERRED):
            part.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(copy.deepcopy(term))
        if kind in (PREFERRED, REQUIRED_AND_PREFERRED):
            part.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": 1, "podAffinityTerm": copy.deepcopy(term)}
            )
        return self

    def pod_affinity(self, topology_key: str, selector: dict | None, kind: str) -> Pod:
        return self._pod_term(False, topology_key, selector, kind)

    def pod_anti_affinity(self, topology_key: str, selector: dict | None, kind: str) -> Pod:
        return self._pod_term(True, topology_key, selector, kind)

    def pod_affinity_in(self, key: str, topology_key: str, values: list[str], kind: str) -> Pod:
        return self.pod_affinity(topology_key, Sel().in_(key, values).obj(), kind)

    def pod_anti_affinity_in(self, key: str, topology_key: str, values: list[str], kind: str) -> Pod:
        return self.pod_anti_affinity(topology_key, Sel().in_(key, values).obj(), kind)

    def pod_affinity_not_in(self, key: str, topology_key: str, values: list[str], kind: str) -> Pod:
        return self.pod_affinity(topology_key, Sel().not_in(key, values).obj(), kind)

    def pod_anti_affinity_not_in(self, key: str, topology_key: str, values: list[str], kind: str) -> Pod:
        return self.pod_anti_affinity(topology_key, Sel().not_in(key, values).obj(), kind)

    def pod_affinity_exists(self, key: str, topology_key: str, kind: str) -> Pod:
        return self.pod_affinity(topology_key, Sel().exists(key).obj(), kind)

    def pod_anti_affinity_exists(self, key: str, topology_key: str, kind: str) -> Pod:
        return self.pod_anti_affinity(topology_key, Sel().exists(key).obj(), kind)

    def spread(
        self,
        max_skew: int,
        topology_key: str,
        when: str,
        selector: dict | None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> Pod:
        """st.PodWrapper.SpreadConstraint (None: the field is unset)."""
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = copy.deepcopy(selector)
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def obj(self) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": copy.deepcopy(self._meta),
            "spec": copy.deepcopy(self._spec),
        }


def node_name_of(name: str) -> str:
    """Some of kube's tables name nodes "nodeA": not a DNS-1123 subdomain, so the API server (and vcore) refuse it;
    the tables' node names are lowercased here (label values, such as a hostname label, stay as they are)."""
    return name.lower()


def make_node(name: str, labels: dict[str, str] | None = None, *, taints: list | None = None, pods: int = 110) -> dict:
    """st.MakeNode().Name(name).Label(...)...: room for ``pods`` pods and nothing else asked of it."""
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name_of(name), "labels": dict(labels or {})},
        "spec": {},
        "status": {"allocatable": {"pods": str(pods)}, "capacity": {"pods": str(pods)}},
    }
    if taints:
        node["spec"]["taints"] = [dict(t) for t in taints]
    return node


def namespace(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


def service(name: str, selector: dict[str, str] | None, namespace_name: str = "") -> dict:
    spec = {} if selector is None else {"selector": dict(selector)}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace_name},
        "spec": spec,
    }


def replica_set(name: str, selector: dict | None, namespace_name: str = "default") -> dict:
    spec = {} if selector is None else {"selector": copy.deepcopy(selector)}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace_name},
        "spec": spec,
    }


# ---------------------------------------------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------------------------------------------
def named(pods: list[dict], prefix: str = "pod") -> list[dict]:
    """The pods with a name each: kube's tables leave most existing pods unnamed (its snapshot keys them by UID);
    vcore keys pods by namespace/name, so an unnamed or repeated name gets a unique one."""
    out, seen = [], set()
    for i, pod in enumerate(pods):
        pod = copy.deepcopy(pod)
        meta = pod.setdefault("metadata", {})
        ns = meta.get("namespace") or "default"
        if not meta.get("name") or (ns, meta["name"]) in seen:
            meta["name"] = f"{meta.get('name') or prefix}-{i}"
        seen.add((ns, meta["name"]))
        out.append(pod)
    return out


def incoming(pod: dict) -> dict:
    """The pod to schedule, named if the table left it unnamed, without spec.nodeName: kube's tables call the
    plugin directly, so a nodeName some of them carry plays no part."""
    pod = copy.deepcopy(pod)
    pod.setdefault("metadata", {}).setdefault("name", "incoming")
    if not pod["metadata"]["name"]:
        pod["metadata"]["name"] = "incoming"
    (pod.get("spec") or {}).pop("nodeName", None)
    return pod


def build_cluster(
    nodes: list[dict],
    existing: list[dict] = (),
    *,
    namespaces: list[dict] = (),
    services: list[dict] = (),
    replica_sets: list[dict] = (),
) -> vcore.Cluster:
    """A cluster with the nodes, the namespaces and selecting objects, and the existing pods bound to their
    spec.nodeName."""
    cluster = vcore.Cluster()
    for ns in namespaces:
        cluster.add_namespace(ns)
    for svc in services:
        cluster.add_service(svc)
    for rs in replica_sets:
        cluster.add_replica_set(rs)
    for node in nodes:
        cluster.add_node(node)
    for pod in named(list(existing)):
        cluster.bind(pod, pod["spec"]["nodeName"])
    return cluster


def plugin_profile(plugin: str, args: dict | None = None, *, filters: tuple[str, ...] = ()) -> dict:
    """A profile that runs ``plugin`` alone (weight 1), plus the extra ``filters``."""
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": plugin, "weight": 1}]}}
    if filters:
        plugins["filter"] = {"enabled": [{"name": f} for f in filters]}
    profile: dict[str, Any] = {"plugins": plugins}
    if args is not None:
        profile["pluginConfig"] = [{"name": plugin, "args": dict(args)}]
    return profile


def filter_per_node(scheduler: vcore.Scheduler, pod: dict, node_names: list[str]) -> dict[str, str | None]:
    """{node: the reason it was filtered out, or None} for each node. Each node is filtered alone (hard scope);
    the unscoped result must agree with the per-node ones (feasible set and reason counts)."""
    whole = scheduler.filter(pod)
    out: dict[str, str | None] = {}
    try:
        for name in node_names:
            scheduler.set_node_scope([name])
            got = scheduler.filter(pod)
            assert sum(got.reasons.values()) <= 1, (name, got.reasons)
            out[name] = next(iter(got.reasons), None) if not got.feasible else None
            assert (out[name] is None) == (got.feasible == [name]), (name, got)
    finally:
        scheduler.set_node_scope(None)
    assert whole.feasible == [n for n in node_names if out[n] is None]
    assert whole.reasons == dict(Counter(r for r in out.values() if r is not None))
    return out
