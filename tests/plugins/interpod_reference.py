"""A pure-Python reference for kube-scheduler v1.34's InterPodAffinity and PodTopologySpread, written straight from
the plugins' semantics: every filter and score walks every bound pod on every node, nothing is indexed or kept
between calls, so it is the obviously-correct side of the comparison with vcore's pod index.

It works on API-shaped dicts. Pod label selectors are metav1.LabelSelector semantics (nil matches nothing, {} every
pod); matchLabelKeys / mismatchLabelKeys are merged into the selector as the API server does on pod creation. The
namespaces of a term follow kube: listed names, or those whose labels its namespaceSelector matches; for the
incoming pod's own terms a non-empty namespaceSelector is resolved against the namespaces that exist (kube lists
them), for the bound pods' terms it is matched against the incoming pod's namespace labels (none if it does not
exist). Node affinity and taints for the node inclusion policies come from tests/reference.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import reference as ref

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
MAX_NODE_SCORE = 100
R_AFFINITY = "node(s) didn't match pod affinity rules"
R_ANTI = "node(s) didn't match pod anti-affinity rules"
R_EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
R_SPREAD = "node(s) didn't match pod topology spread constraints"
R_SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
SYSTEM_DEFAULTS = (
    {"maxSkew": 3, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
    {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
)
_CONTROLLERS = {
    ("v1", "ReplicationController"): "rc",
    ("apps/v1", "ReplicaSet"): "rs",
    ("apps/v1", "StatefulSet"): "ss",
}

Requirement = tuple[str, str, tuple[str, ...]]


# ---------------------------------------------------------------------------------------------------------------
# Label selectors
# ---------------------------------------------------------------------------------------------------------------
def requirements(selector: dict | None) -> list[Requirement] | None:
    """A metav1.LabelSelector as requirements (matchLabels as In of one value); None for a nil selector."""
    if selector is None:
        return None
    out: list[Requirement] = [(k, "In", (v,)) for k, v in (selector.get("matchLabels") or {}).items()]
    for e in selector.get("matchExpressions") or []:
        out.append((e["key"], e["operator"], tuple(e.get("values") or ())))
    return out


def matches(reqs: list[Requirement] | None, labels: dict[str, str]) -> bool:
    if reqs is None:
        return False
    for key, op, values in reqs:
        has = key in labels
        if op == "In" and not (has and labels[key] in values):
            return False
        if op == "NotIn" and has and labels[key] in values:
            return False
        if op == "Exists" and not has:
            return False
        if op == "DoesNotExist" and has:
            return False
    return True


def merge_label_keys(reqs: list[Requirement] | None, keys, op: str, labels: dict[str, str]) -> list | None:
    """The API server's matchLabelKeys (In) / mismatchLabelKeys (NotIn) merge; a nil selector stays nil."""
    if reqs is None:
        return None
    return reqs + [(k, op, (labels[k],)) for k in keys or () if k in labels]


# ---------------------------------------------------------------------------------------------------------------
# Pods and their terms
# ---------------------------------------------------------------------------------------------------------------
def namespace_of(pod: dict) -> str:
    return (pod.get("metadata") or {}).get("namespace") or "default"


def labels_of(pod: dict) -> dict[str, str]:
    return dict((pod.get("metadata") or {}).get("labels") or {})


def is_terminating(pod: dict) -> bool:
    return (pod.get("metadata") or {}).get("deletionTimestamp") is not None


@dataclass(frozen=True)
class Term:
    """A processed v1.PodAffinityTerm (fwk.AffinityTerm)."""

    selector: list | None
    namespaces: frozenset[str]
    namespace_selector: list | None  # None: nil (matches no namespace)
    topology_key: str
    weight: int = 0


def _term(pod: dict, t: dict, weight: int = 0) -> Term:
    labels = labels_of(pod)
    sel = requirements(t.get("labelSelector"))
    if t.get("labelSelector") is not None:  # the API server merges only into a non-nil selector
        sel = merge_label_keys(sel, t.get("matchLabelKeys"), "In", labels)
        sel = merge_label_keys(sel, t.get("mismatchLabelKeys"), "NotIn", labels)
    names = t.get("namespaces") or []
    ns_sel = t.get("namespaceSelector")
    namespaces = frozenset(names) if names or ns_sel is not None else frozenset([namespace_of(pod)])
    return Term(sel, namespaces, requirements(ns_sel), t["topologyKey"], weight)


def pod_terms(pod: dict) -> dict[str, list[Term]]:
    aff = (pod.get("spec") or {}).get("affinity") or {}
    out: dict[str, list[Term]] = {}
    for kind, name in (("podAffinity", "affinity"), ("podAntiAffinity", "anti_affinity")):
        part = aff.get(kind) or {}
        out["required_" + name] = [
            _term(pod, t) for t in part.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        ]
        out["preferred_" + name] = [
            _term(pod, w["podAffinityTerm"], w["weight"])
            for w in part.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
    return out


def term_matches_pod(term: Term, pod: dict, namespace_labels: dict[str, str] | None) -> bool:
    """fwk.AffinityTerm.Matches(pod, nsLabels): the pod's namespace is listed, or the namespace selector matches
    ``namespace_labels`` (None: the namespace does not exist, which kube reads as no labels)."""
    in_ns = namespace_of(pod) in term.namespaces or matches(term.namespace_selector, namespace_labels or {})
    return in_ns and matches(term.selector, labels_of(pod))


# ---------------------------------------------------------------------------------------------------------------
# The cluster
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Cluster:
    nodes: dict[str, dict] = field(default_factory=dict)  # in insertion order
    bound: dict[str, tuple[dict, str]] = field(default_factory=dict)  # pod key -> (pod, node name)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    services: list[dict] = field(default_factory=list)
    replica_sets: list[dict] = field(default_factory=list)
    stateful_sets: list[dict] = field(default_factory=list)
    replication_controllers: list[dict] = field(default_factory=list)

    def add_node(self, node: dict) -> None:
        self.nodes[node["metadata"]["name"]] = node

    def bind(self, pod: dict, node_name: str) -> None:
        key = ref.pod_key(pod)
        assert key not in self.bound and node_name in self.nodes
        self.bound[key] = (pod, node_name)

    def unbind(self, key: str) -> None:
        del self.bound[key]

    def pods_on(self, node_name: str) -> list[dict]:
        return [p for p, n in self.bound.values() if n == node_name]

    def node_labels(self, name: str) -> dict[str, str]:
        return dict(self.nodes[name]["metadata"].get("labels") or {})

    def own_term_matches(self, term: Term, pod: dict) -> bool:
        """The incoming pod's term against a bound pod: kube merges a non-empty namespaceSelector into the
        namespaces that exist, and an empty one stays "every namespace"."""
        ns = namespace_of(pod)
        sel = term.namespace_selector
        in_ns = (
            ns in term.namespaces
            or (sel is not None and sel == [])
            or (bool(sel) and ns in self.namespaces and matches(sel, self.namespaces[ns]))
        )
        return in_ns and matches(term.selector, labels_of(pod))

    def carried_term_matches(self, term: Term, incoming: dict) -> bool:
        """A bound pod's term against the incoming pod, with the incoming pod's namespace labels."""
        return term_matches_pod(term, incoming, self.namespaces.get(namespace_of(incoming)))


# ---------------------------------------------------------------------------------------------------------------
# InterPodAffinity
# ---------------------------------------------------------------------------------------------------------------
def ipa_filter(cluster: Cluster, pod: dict) -> dict[str, str | None]:
    """{node: reason or None} for every node (PreFilter + Filter)."""
    own = pod_terms(pod)
    aff, anti = own["required_affinity"], own["required_anti_affinity"]
    existing: dict[tuple[str, str], int] = {}
    aff_counts: dict[tuple[str, str], int] = {}
    anti_counts: dict[tuple[str, str], int] = {}
    for other, node_name in cluster.bound.values():
        labels = cluster.node_labels(node_name)
        for t in pod_terms(other)["required_anti_affinity"]:
            if cluster.carried_term_matches(t, pod) and t.topology_key in labels:
                pair = (t.topology_key, labels[t.topology_key])
                existing[pair] = existing.get(pair, 0) + 1
        if aff and all(cluster.own_term_matches(t, other) for t in aff):
            for t in aff:
                if t.topology_key in labels:
                    pair = (t.topology_key, labels[t.topology_key])
                    aff_counts[pair] = aff_counts.get(pair, 0) + 1
        for t in anti:
            if cluster.own_term_matches(t, other) and t.topology_key in labels:
                pair = (t.topology_key, labels[t.topology_key])
                anti_counts[pair] = anti_counts.get(pair, 0) + 1
    out: dict[str, str | None] = {}
    if not existing and not aff and not anti:  # PreFilter Skip
        return {name: None for name in cluster.nodes}
    own_match = bool(aff) and all(cluster.own_term_matches(t, pod) for t in aff)
    for name in cluster.nodes:
        labels = cluster.node_labels(name)
        out[name] = None
        pods_exist = True
        missing = False
        for t in aff:
            if t.topology_key not in labels:
                missing = True
                break
            if aff_counts.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
                pods_exist = False
        if missing or (not pods_exist and not (not aff_counts and own_match)):
            out[name] = R_AFFINITY
        elif any(
            anti_counts.get((t.topology_key, labels[t.topology_key]), 0) > 0 for t in anti if t.topology_key in labels
        ):
            out[name] = R_ANTI
        elif any(existing.get(pair, 0) > 0 for pair in labels.items()):
            out[name] = R_EXISTING
    return out


def _has_affinity(pod: dict) -> bool:
    aff = (pod.get("spec") or {}).get("affinity") or {}
    return aff.get("podAffinity") is not None or aff.get("podAntiAffinity") is not None


def ipa_score(
    cluster: Cluster, pod: dict, feasible: list[str], hard_weight: int = 1, ignore_existing_preferred: bool = False
) -> dict[str, int]:
    """{node: normalized score} over the feasible nodes (PreScore + Score + NormalizeScore); all 0 when skipped."""
    own = pod_terms(pod)
    has_preferred = bool(own["preferred_affinity"] or own["preferred_anti_affinity"])
    zeros = {n: 0 for n in feasible}
    if ignore_existing_preferred and not has_preferred:
        return zeros
    topo: dict[str, dict[str, int]] = {}

    def add(key: str, labels: dict, amount: int) -> None:
        if key in labels:
            topo.setdefault(key, {}).setdefault(labels[key], 0)
            topo[key][labels[key]] += amount

    for other, node_name in cluster.bound.values():
        labels = cluster.node_labels(node_name)
        if not labels or not (has_preferred or _has_affinity(other)):
            continue
        for t in own["preferred_affinity"]:
            if cluster.own_term_matches(t, other):
                add(t.topology_key, labels, t.weight)
        for t in own["preferred_anti_affinity"]:
            if cluster.own_term_matches(t, other):
                add(t.topology_key, labels, -t.weight)
        theirs = pod_terms(other)
        if hard_weight > 0:
            for t in theirs["required_affinity"]:
                if cluster.carried_term_matches(t, pod):
                    add(t.topology_key, labels, hard_weight)
        for t in theirs["preferred_affinity"]:
            if cluster.carried_term_matches(t, pod):
                add(t.topology_key, labels, t.weight)
        for t in theirs["preferred_anti_affinity"]:
            if cluster.carried_term_matches(t, pod):
                add(t.topology_key, labels, -t.weight)
    if not topo:
        return zeros
    raw = {}
    for name in feasible:
        labels = cluster.node_labels(name)
        raw[name] = sum(values.get(labels[key], 0) for key, values in topo.items() if key in labels)
    if not raw:
        return raw
    lo, hi = min(raw.values()), max(raw.values())
    return {n: int(MAX_NODE_SCORE * ((s - lo) / (hi - lo))) if hi > lo else 0 for n, s in raw.items()}


# ---------------------------------------------------------------------------------------------------------------
# PodTopologySpread
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: list | None
    min_domains: int = 1
    honor_affinity: bool = True
    honor_taints: bool = False


@dataclass(frozen=True)
class SpreadArgs:
    """PodTopologySpreadArgs: System defaulting, or List with these default constraints (dicts)."""

    system: bool = True
    defaults: tuple[dict, ...] = ()


def default_selector(cluster: Cluster, pod: dict) -> list[Requirement]:
    """helper.DefaultSelector: the Services of the pod's namespace that select it, merged, then its controller."""
    ns, labels = namespace_of(pod), labels_of(pod)
    merged: dict[str, str] = {}
    for svc in cluster.services:
        sel = (svc.get("spec") or {}).get("selector")
        if (
            (svc["metadata"].get("namespace") or "default") == ns
            and sel is not None
            and all(labels.get(k) == v for k, v in sel.items())
        ):
            merged.update(sel)
    reqs: list[Requirement] = [(k, "In", (v,)) for k, v in merged.items()]
    owner = next((o for o in (pod.get("metadata") or {}).get("ownerReferences") or [] if o.get("controller")), None)
    if owner is None:
        return reqs
    kind = _CONTROLLERS.get((owner.get("apiVersion"), owner.get("kind")))
    pools = {"rc": cluster.replication_controllers, "rs": cluster.replica_sets, "ss": cluster.stateful_sets}
    pool = pools.get(kind, [])
    found = next(
        (
            o
            for o in pool
            if (o["metadata"].get("namespace") or "default") == ns and o["metadata"]["name"] == owner.get("name")
        ),
        None,
    )
    if found is None:
        return reqs
    sel = (found.get("spec") or {}).get("selector")
    if kind == "rc":
        merged.update(sel or {})
        return [(k, "In", (v,)) for k, v in merged.items()]
    return reqs + (requirements(sel) or [])


def _constraint(c: dict, selector: list | None) -> Constraint:
    return Constraint(
        c["maxSkew"],
        c["topologyKey"],
        selector,
        c.get("minDomains") or 1,
        (c.get("nodeAffinityPolicy") or "Honor") == "Honor",
        (c.get("nodeTaintsPolicy") or "Ignore") == "Honor",
    )


def constraints(cluster: Cluster, pod: dict, args: SpreadArgs, when: str) -> list[Constraint]:
    """The pod's constraints of one whenUnsatisfiable, or the defaults with the default selector."""
    own = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
    labels = labels_of(pod)
    if own:
        out = []
        for c in own:
            if c["whenUnsatisfiable"] != when:
                continue
            sel = requirements(c.get("labelSelector"))
            if c.get("labelSelector") is not None:
                sel = merge_label_keys(sel, c.get("matchLabelKeys"), "In", labels)
            out.append(_constraint(c, sel))
        return out
    defaults = [c for c in (SYSTEM_DEFAULTS if args.system else args.defaults) if c["whenUnsatisfiable"] == when]
    if not defaults:
        return []
    sel = default_selector(cluster, pod)
    if not sel:  # selector.Empty(): the defaults do not apply
        return []
    return [_constraint(c, sel) for c in defaults]


def _count(cluster: Cluster, node_name: str, selector: list | None, namespace: str) -> int:
    """countPodsMatchSelector: not terminating, same namespace; an empty selector counts nothing."""
    if selector is not None and not selector:
        return 0
    return sum(
        1
        for p in cluster.pods_on(node_name)
        if not is_terminating(p) and namespace_of(p) == namespace and matches(selector, labels_of(p))
    )


def _included(c: Constraint, pod: dict, node: dict) -> bool:
    if c.honor_affinity and not ref.node_affinity_matches(ref.RefPod.from_dict(pod), ref.RefNode.from_dict(node)):
        return False
    if c.honor_taints:
        tolerations = ref.RefPod.from_dict(pod).tolerations
        for taint in ref.RefNode.from_dict(node).taints:
            if taint[2] in ("NoSchedule", "NoExecute") and not ref.tolerated(tolerations, taint):
                return False
    return True


def spread_filter(cluster: Cluster, pod: dict, args: SpreadArgs = SpreadArgs()) -> dict[str, str | None]:
    cs = constraints(cluster, pod, args, "DoNotSchedule")
    if not cs:
        return {name: None for name in cluster.nodes}
    ns = namespace_of(pod)
    counts: list[dict[str, int]] = [{} for _ in cs]
    for name, node in cluster.nodes.items():
        labels = cluster.node_labels(name)
        if any(c.topology_key not in labels for c in cs):
            continue
        for i, c in enumerate(cs):
            if not _included(c, pod, node):
                continue
            value = labels[c.topology_key]
            counts[i][value] = counts[i].get(value, 0) + _count(cluster, name, c.selector, ns)
    minimum = []
    for i, c in enumerate(cs):
        m = min(counts[i].values()) if counts[i] else 2**31 - 1
        minimum.append(0 if len(counts[i]) < c.min_domains else m)
    pod_labels = labels_of(pod)
    out: dict[str, str | None] = {}
    for name in cluster.nodes:
        labels = cluster.node_labels(name)
        out[name] = None
        for i, c in enumerate(cs):
            if c.topology_key not in labels:
                out[name] = R_SPREAD_LABEL
                break
            self_match = 1 if matches(c.selector, pod_labels) else 0
            if counts[i].get(labels[c.topology_key], 0) + self_match - minimum[i] > c.max_skew:
                out[name] = R_SPREAD
                break
    return out


def spread_score(cluster: Cluster, pod: dict, feasible: list[str], args: SpreadArgs = SpreadArgs()) -> dict[str, int]:
    cs = constraints(cluster, pod, args, "ScheduleAnyway")
    if not cs or not cluster.nodes:
        return {n: 0 for n in feasible}
    ns = namespace_of(pod)
    require_all = bool((pod.get("spec") or {}).get("topologySpreadConstraints")) or not args.system

    def has_all(labels):
        return all(c.topology_key in labels for c in cs)

    ignored = {n for n in feasible if require_all and not has_all(cluster.node_labels(n))}
    counts: list[dict[str, int]] = [{} for _ in cs]
    for name in feasible:
        if name in ignored:
            continue
        labels = cluster.node_labels(name)
        for i, c in enumerate(cs):
            if c.topology_key != HOSTNAME:
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    weights = []
    for i, c in enumerate(cs):
        size = len(feasible) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])
        weights.append(math.log(size + 2))
    for name, node in cluster.nodes.items():
        labels = cluster.node_labels(name)
        if require_all and not has_all(labels):
            continue
        for i, c in enumerate(cs):
            if not _included(c, pod, node):
                continue
            value = labels.get(c.topology_key, "")
            if value in counts[i]:
                counts[i][value] += _count(cluster, name, c.selector, ns)
    raw: dict[str, int] = {}
    for name in feasible:
        if name in ignored:
            raw[name] = 0
            continue
        labels = cluster.node_labels(name)
        score = 0.0
        for i, c in enumerate(cs):
            if c.topology_key not in labels:
                continue
            cnt = (
                _count(cluster, name, c.selector, ns)
                if c.topology_key == HOSTNAME
                else counts[i][labels[c.topology_key]]
            )
            score += cnt * weights[i] + (c.max_skew - 1)
        raw[name] = math.floor(score + 0.5)  # math.Round of a non-negative float
    scored = [raw[n] for n in feasible if n not in ignored]
    lo = min(scored) if scored else 2**63 - 1
    hi = max(scored + [0])
    out = {}
    for name in feasible:
        if name in ignored:
            out[name] = 0
        elif hi == 0:
            out[name] = MAX_NODE_SCORE
        else:
            out[name] = MAX_NODE_SCORE * (hi + lo - raw[name]) // hi
    return out
