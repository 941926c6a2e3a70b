"""A small pure-Python reference scheduler that the native core is held to.

It works directly on Kubernetes-shaped dicts (``{"metadata": ..., "spec": ..., "status": ...}``) and follows
kube-scheduler's semantics for the plugins vcore implements, written for readability, not speed:

Filters (first failing plugin wins; NodeResourcesFit reports every insufficient resource):
    NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit.
Scores (weighted sum over enabled plugins, normalization over the feasible nodes):
    NodeResourcesFit (LeastAllocated / MostAllocated / RequestedToCapacityRatio),
    NodeResourcesBalancedAllocation, TaintToleration, NodeAffinity, Volcano "binpack".

Quantities are parsed exactly with ``fractions.Fraction`` and rounded up (ceil) like Quantity.Value() /
MilliValue(): cpu in milli-cores, everything else in base units. A pod's effective request is
resourcehelper.PodRequests: max(sum(containers) + sum(sidecars), each init container + preceding sidecars)
+ overhead, summed exactly per pod and rounded once. The "non-zero" variant counts a container's *missing*
cpu request as 100m and missing memory request as 200Mi (an explicit 0 stays 0).

Everything is recomputed from the bound pods on every call, so the accounting cannot drift: the reference
is the obviously-correct side of every comparison.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"

R_UNSCHEDULABLE = "node(s) were unschedulable"
R_TAINT = "node(s) had untolerated taint(s)"
R_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
R_TOO_MANY_PODS = "Too many pods"
R_PREFILTER = "node(s) didn't satisfy plugin(s) [NodeAffinity]"  # NodeAffinity's PreFilter node names
R_CONFLICT = "pod affinity terms conflict"  # ... when they are disjoint
# kube-scheduler's reasons with the status UnschedulableAndUnresolvable (preemption does not try those nodes)
UNRESOLVABLE = {R_UNSCHEDULABLE, R_TAINT, R_AFFINITY, R_PREFILTER, R_CONFLICT}
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

FILTER_PLUGINS = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit")
SCORE_PLUGINS = ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "binpack")
DEFAULT_SCORE_WEIGHTS = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("NodeResourcesBalancedAllocation", 1),
)

# ---------------------------------------------------------------------------------------------------------------
# Quantities
# ---------------------------------------------------------------------------------------------------------------
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(.*)$")
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")


def parse_quantity(value) -> Fraction:
    """Exact value of a Kubernetes quantity ("100m", "1.5Gi", "1e3", 2, 0.5). Raises ValueError if malformed."""
    if isinstance(value, bool):
        raise ValueError(f"invalid quantity {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(repr(value))
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise ValueError(f"invalid quantity {value!r}")
    sign, number, suffix = m.groups()
    amount = Fraction(number)
    if suffix in _BINARY:
        amount *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        amount *= _DECIMAL[suffix]
    else:
        e = _EXPONENT.match(suffix)
        if not e:
            raise ValueError(f"invalid quantity {value!r}")
        amount *= Fraction(10) ** int(e.group(1))
    return -amount if sign == "-" else amount


def canonical(resource: str, amount: Fraction) -> int:
    """cpu -> ceil(milli-cores) (MilliValue); everything else -> ceil(value) (Value)."""
    return math.ceil(amount * 1000) if resource == CPU else math.ceil(amount)


# ---------------------------------------------------------------------------------------------------------------
# Resource name classes (k8s.io/kubernetes/pkg/apis/core/v1/helper)
# ---------------------------------------------------------------------------------------------------------------
def is_prefixed_native(name: str) -> bool:
    return "kubernetes.io/" in name


def is_native(name: str) -> bool:
    return "/" not in name or is_prefixed_native(name)


def is_extended(name: str) -> bool:
    return not is_native(name) and not name.startswith("requests.")


def is_scalar(name: str) -> bool:
    """ScalarResources of framework.Resource: extended, hugepages-*, attachable-volumes-*, *kubernetes.io/*."""
    return (
        is_extended(name)
        or name.startswith("hugepages-")
        or name.startswith("attachable-volumes-")
        or is_prefixed_native(name)
    )


def is_tracked(name: str) -> bool:
    """Resources that framework.Resource keeps at all (anything else is ignored by kube-scheduler)."""
    return name in (CPU, MEMORY, EPHEMERAL, PODS) or is_scalar(name)


# ---------------------------------------------------------------------------------------------------------------
# Pods
# ---------------------------------------------------------------------------------------------------------------
def _container_requests(container: dict) -> dict[str, Fraction]:
    """A container's requests after API-server defaulting (a missing request defaults to the limit)."""
    res = container.get("resources") or {}
    out = {k: parse_quantity(v) for k, v in (res.get("requests") or {}).items()}
    for k, v in (res.get("limits") or {}).items():
        out.setdefault(k, parse_quantity(v))
    return out


def _add(acc: dict, other: dict) -> None:
    for k, v in other.items():
        acc[k] = acc.get(k, Fraction(0)) + v


def _max_into(acc: dict, other: dict) -> None:
    """maxResourceList: a key it lacks is taken even at zero (a zero request still says the resource is asked)."""
    for k, v in other.items():
        if k not in acc or v > acc[k]:
            acc[k] = v


POD_LEVEL = (CPU, MEMORY)  # resourcehelper.IsSupportedPodLevelResource, hugepages-* too


def _pod_level(name: str) -> bool:
    return name in POD_LEVEL or name.startswith("hugepages-")


def pod_level_requests(pod: dict) -> dict[str, Fraction]:
    """spec.resources.requests of the supported resources, as the API server defaults them from the pod-level
    limits (a limit without a request: the containers' aggregate when some container asks for the resource,
    else the limit)."""
    spec = pod.get("spec") or {}
    res = spec.get("resources") or {}
    out = {k: parse_quantity(v) for k, v in (res.get("requests") or {}).items() if _pod_level(k)}
    aggregate = pod_requests(pod, skip_pod_level=True, overhead=False)
    asked = {
        k for c in (spec.get("containers") or []) + (spec.get("initContainers") or []) for k in _container_requests(c)
    }
    for k, v in (res.get("limits") or {}).items():
        if _pod_level(k) and k not in out:
            out[k] = aggregate.get(k, Fraction(0)) if k in asked else parse_quantity(v)
    return out


def pod_requests(
    pod: dict, non_missing: dict[str, Fraction] | None = None, *, skip_pod_level: bool = False, overhead: bool = True
) -> dict[str, Fraction]:
    """resourcehelper.PodRequests: exact (Fraction) effective request of a pod (keys of zero requests kept)."""
    spec = pod.get("spec") or {}

    def with_defaults(reqs):
        if non_missing:
            reqs = dict(reqs)
            for k, v in non_missing.items():
                reqs.setdefault(k, v)
        return reqs

    reqs: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        _add(reqs, with_defaults(_container_requests(c)))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in spec.get("initContainers") or []:
        creq = with_defaults(_container_requests(c))
        if c.get("restartPolicy") == "Always":
            _add(reqs, creq)
            _add(sidecars, creq)
            effective = dict(sidecars)
        else:
            effective = dict(creq)
            _add(effective, sidecars)
        _max_into(init_max, effective)
    _max_into(reqs, init_max)
    if not skip_pod_level:
        reqs.update(pod_level_requests(pod))
    if overhead:
        _add(reqs, {k: parse_quantity(v) for k, v in (spec.get("overhead") or {}).items()})
    return reqs


def pod_key(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


@dataclass
class RefPod:
    key: str
    requests: dict[str, int]  # canonical, only tracked resources, zeros dropped
    nonzero_cpu: int  # what it adds to its node's NonZeroRequested once bound (CalculateResource)
    nonzero_mem: int
    node_selector: dict[str, str]
    required_terms: list | None  # None: no required node affinity
    preferred: list  # [(weight, term)]
    tolerations: list  # [(key, operator, value, effect)]
    score_cpu: int = 0  # its own as NodeResourcesFit's scorer reads it (pod-level requests left out)
    score_mem: int = 0
    priority: int = 0
    never_preempts: bool = False  # spec.preemptionPolicy Never

    @classmethod
    def from_dict(cls, pod: dict) -> RefPod:
        spec = pod.get("spec") or {}
        real = pod_requests(pod)
        defaults = {CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000), MEMORY: Fraction(DEFAULT_MEMORY_REQUEST)}
        scored = pod_requests(pod, defaults, skip_pod_level=True)
        if pod_level_requests(pod):  # framework.getNonMissingContainerRequests: defaults only for what it never asks
            nz = pod_requests(pod, {k: v for k, v in defaults.items() if k not in real})
        else:
            nz = scored
        requests = {}
        for name, amount in real.items():
            v = canonical(name, amount)
            if v and is_tracked(name):
                requests[name] = v
        na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        required_terms = None if required is None else list(required.get("nodeSelectorTerms") or [])
        preferred = [
            (int(p.get("weight", 0)), p.get("preference") or {})
            for p in na.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        tolerations = [
            (t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")
            for t in spec.get("tolerations") or []
        ]
        return cls(
            key=pod_key(pod),
            requests=requests,
            nonzero_cpu=canonical(CPU, nz.get(CPU, Fraction(0))),
            nonzero_mem=canonical(MEMORY, nz.get(MEMORY, Fraction(0))),
            node_selector=dict(spec.get("nodeSelector") or {}),
            required_terms=required_terms,
            preferred=preferred,
            tolerations=tolerations,
            score_cpu=canonical(CPU, scored.get(CPU, Fraction(0))),
            score_mem=canonical(MEMORY, scored.get(MEMORY, Fraction(0))),
            priority=int(spec.get("priority") or 0),
            never_preempts=spec.get("preemptionPolicy") == "Never",
        )


# ---------------------------------------------------------------------------------------------------------------
# Nodes and the cluster
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class RefNode:
    name: str
    labels: dict[str, str]
    allocatable: dict[str, int]
    taints: list  # [(key, value, effect)]
    unschedulable: bool

    @classmethod
    def from_dict(cls, node: dict) -> RefNode:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        status = node.get("status") or {}
        alloc = {}
        for k, v in (status.get("allocatable") or {}).items():
            if is_tracked(k):
                alloc[k] = canonical(k, parse_quantity(v))
        taints = [(t.get("key") or "", t.get("value") or "", t["effect"]) for t in spec.get("taints") or []]
        return cls(
            name=meta["name"],
            labels=dict(meta.get("labels") or {}),
            allocatable=alloc,
            taints=taints,
            unschedulable=bool(spec.get("unschedulable", False)),
        )

    def alloc(self, resource: str) -> int:
        return self.allocatable.get(resource, 0)


@dataclass
class NodeUsage:
    requested: dict[str, int] = field(default_factory=dict)  # real requests (sum of bound pods)
    nonzero_cpu: int = 0
    nonzero_mem: int = 0
    n_pods: int = 0

    def get(self, resource: str) -> int:
        return self.requested.get(resource, 0)


class ReferenceCluster:
    """Nodes (in insertion order) and bound pods; usage is recomputed from the bound pods on demand."""

    def __init__(self):
        self.nodes: dict[str, RefNode] = {}
        self.bound: dict[str, tuple[str, RefPod]] = {}  # pod key -> (node name, pod)

    # nodes ---------------------------------------------------------------------------------------------------
    def add_node(self, node: dict) -> None:
        n = RefNode.from_dict(node)
        if n.name in self.nodes:
            raise ValueError(f"node {n.name} already exists")
        self.nodes[n.name] = n

    def update_node(self, node: dict) -> None:
        n = RefNode.from_dict(node)
        if n.name not in self.nodes:
            raise KeyError(n.name)
        self.nodes[n.name] = n

    def remove_node(self, name: str, evict: bool = False) -> list[str]:
        if name not in self.nodes:
            raise KeyError(name)
        keys = [k for k, (n, _) in self.bound.items() if n == name]
        if keys and not evict:
            raise ValueError(f"node {name} has bound pods")
        for k in keys:
            del self.bound[k]
        del self.nodes[name]
        return keys

    # pods ----------------------------------------------------------------------------------------------------
    def bind(self, pod: dict | RefPod, node_name: str) -> None:
        p = pod if isinstance(pod, RefPod) else RefPod.from_dict(pod)
        if node_name not in self.nodes:
            raise KeyError(node_name)
        if p.key in self.bound:
            raise ValueError(f"pod {p.key} already bound")
        self.bound[p.key] = (node_name, p)

    def unbind(self, pod_or_key) -> str:
        key = pod_or_key if isinstance(pod_or_key, str) else pod_key(pod_or_key)
        node_name, _ = self.bound.pop(key)
        return node_name

    def pods_on(self, node_name: str) -> list[RefPod]:
        return [p for n, p in self.bound.values() if n == node_name]

    def usage(self, node_name: str) -> NodeUsage:
        u = NodeUsage()
        for p in self.pods_on(node_name):
            for r, v in p.requests.items():
                u.requested[r] = u.requested.get(r, 0) + v
            u.nonzero_cpu += p.nonzero_cpu
            u.nonzero_mem += p.nonzero_mem
            u.n_pods += 1
        return u


# ---------------------------------------------------------------------------------------------------------------
# Profiles: KubeSchedulerConfiguration-shaped profile dict -> the contract's native profile dict
# ---------------------------------------------------------------------------------------------------------------
def _merge(default: list[tuple[str, int]], section: dict | None) -> list[tuple[str, int]]:
    """kube-scheduler's plugin-set merge: defaults minus disabled (or "*"), custom weights override in place,
    remaining enabled plugins appended in order."""
    section = section or {}
    disabled = {p["name"] for p in section.get("disabled") or []}
    enabled = [(p["name"], int(p.get("weight") or 0)) for p in section.get("enabled") or []]
    custom = dict(enabled)
    out = []
    if "*" not in disabled:
        for name, w in default:
            if name in disabled:
                continue
            if name in custom:
                out.append((name, custom.pop(name) or 1))  # re-configured: custom entry replaces the default
            else:
                out.append((name, w))
    seen = {n for n, _ in out}
    for name, w in enabled:
        if name not in seen:
            out.append((name, w or 1))
            seen.add(name)
    return out


def profile_to_native(profile: dict | None) -> dict:
    """An independent reading of a profile dict (the subset vcore supports) into the native profile dict."""
    profile = profile or {}
    plugins = profile.get("plugins") or {}
    filters = [n for n, _ in _merge([(n, 0) for n in FILTER_PLUGINS], plugins.get("filter"))]
    scores = [(n, w) for n, w in _merge(list(DEFAULT_SCORE_WEIGHTS), plugins.get("score"))]
    args = {pc["name"]: (pc.get("args") or {}) for pc in profile.get("pluginConfig") or []}

    fit_args = args.get("NodeResourcesFit", {})
    strategy = fit_args.get("scoringStrategy") or {}
    fit = {
        "ignored_resources": list(fit_args.get("ignoredResources") or []),
        "ignored_resource_groups": list(fit_args.get("ignoredResourceGroups") or []),
        "strategy": strategy.get("type") or "LeastAllocated",
        "resources": [
            (r["name"], int(r.get("weight") or 1))
            for r in (strategy.get("resources") or [{"name": CPU, "weight": 1}, {"name": MEMORY, "weight": 1}])
        ],
        "shape": [
            (int(p["utilization"]), int(p["score"]))
            for p in ((strategy.get("requestedToCapacityRatio") or {}).get("shape") or [])
        ],
    }
    bal_args = args.get("NodeResourcesBalancedAllocation", {})
    bal_resources = bal_args.get("resources") or [{"name": CPU, "weight": 1}, {"name": MEMORY, "weight": 1}]
    balanced = {"resources": [(r["name"], int(r.get("weight") or 1)) for r in bal_resources]}
    bp = args.get("binpack", {})
    bp_resources = [(CPU, int(bp.get("binpack.cpu", 1))), (MEMORY, int(bp.get("binpack.memory", 1)))]
    extra = [r.strip() for r in str(bp.get("binpack.resources", "") or "").split(",") if r.strip()]
    for r in extra:
        if r not in (CPU, MEMORY):
            bp_resources.append((r, int(bp.get(f"binpack.resources.{r}", 1))))
    binpack = {"weight": int(bp.get("binpack.weight", 1)), "resources": bp_resources}
    return {
        "filters": filters,
        "scores": scores,
        "fit": fit,
        "balanced": balanced,
        "binpack": binpack,
        "percentage_of_nodes_to_score": int(profile.get("percentageOfNodesToScore") or 0),
    }


# ---------------------------------------------------------------------------------------------------------------
# Matching helpers
# ---------------------------------------------------------------------------------------------------------------
def toleration_tolerates(tol: tuple, taint: tuple) -> bool:
    """v1.Toleration.ToleratesTaint."""
    t_key, t_op, t_value, t_effect = tol
    key, value, effect = taint
    if t_effect and t_effect != effect:
        return False
    if t_key and t_key != key:
        return False
    if t_op in ("", "Equal"):
        return t_value == value
    if t_op == "Exists":
        return True
    return False


def tolerated(tolerations: Iterable[tuple], taint: tuple) -> bool:
    return any(toleration_tolerates(t, taint) for t in tolerations)


_GO_INT = re.compile(r"^[+-]?[0-9]+$")


def parse_go_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64); None on error."""
    if not _GO_INT.match(s):
        return None
    v = int(s)
    if not -(2**63) <= v < 2**63:
        return None
    return v


def requirement_matches(labels: dict[str, str], key: str, op: str, values: list[str]) -> bool:
    """labels.Requirement.Matches for the node selector operators."""
    has = key in labels
    if op == "In":
        return has and labels[key] in values
    if op == "NotIn":
        return not has or labels[key] not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        if not has or len(values) != 1:
            return False
        lv, rv = parse_go_int64(labels[key]), parse_go_int64(values[0])
        if lv is None or rv is None:
            return False
        return lv > rv if op == "Gt" else lv < rv
    raise ValueError(f"unknown operator {op}")


def term_matches(term: dict, node: RefNode) -> bool:
    """A nodeSelectorTerm: all expressions and fields must match; an empty term matches nothing."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    for e in exprs:
        if not requirement_matches(node.labels, e["key"], e["operator"], list(e.get("values") or [])):
            return False
    for f in fields:
        # only metadata.name with In/NotIn and exactly one value passes validation
        values = list(f.get("values") or [])
        assert f["key"] == "metadata.name" and len(values) == 1, f
        if f["operator"] == "In" and node.name != values[0]:
            return False
        if f["operator"] == "NotIn" and node.name == values[0]:
            return False
    return True


def node_affinity_matches(pod: RefPod, node: RefNode) -> bool:
    for k, v in pod.node_selector.items():
        if node.labels.get(k) != v:
            return False
    if pod.required_terms is not None:
        return any(term_matches(t, node) for t in pod.required_terms)
    return True


# ---------------------------------------------------------------------------------------------------------------
# Filter
# ---------------------------------------------------------------------------------------------------------------
def fit_reasons(
    pod: RefPod, node: RefNode, usage: NodeUsage, ignored: Iterable[str] = (), ignored_groups: Iterable[str] = ()
) -> list[str]:
    """NodeResourcesFit.Filter (fitsRequest): every insufficient resource."""
    ignored, ignored_groups = set(ignored), set(ignored_groups)
    reasons = []
    if usage.n_pods + 1 > node.alloc(PODS):
        reasons.append(R_TOO_MANY_PODS)
    req = {r: v for r, v in pod.requests.items() if r != PODS and v}
    if not req:
        return reasons
    for r in (CPU, MEMORY, EPHEMERAL):
        v = req.get(r, 0)
        if v > 0 and v > node.alloc(r) - usage.get(r):
            reasons.append(f"Insufficient {r}")
    for r in sorted(req):
        if r in (CPU, MEMORY, EPHEMERAL) or not is_scalar(r):
            continue
        if is_extended(r) and (r in ignored or r.split("/")[0] in ignored_groups):
            continue
        if req[r] > node.alloc(r) - usage.get(r):
            reasons.append(f"Insufficient {r}")
    return reasons


def filter_node(cluster: ReferenceCluster, pod: RefPod, node: RefNode, profile: dict) -> list[str]:
    """Reasons of the first failing filter plugin, [] if the node is feasible."""
    for plugin in profile["filters"]:
        if plugin == "NodeUnschedulable":
            if node.unschedulable and not tolerated(pod.tolerations, (TAINT_UNSCHEDULABLE, "", "NoSchedule")):
                return [R_UNSCHEDULABLE]
        elif plugin == "TaintToleration":
            for taint in node.taints:
                if taint[2] in ("NoSchedule", "NoExecute") and not tolerated(pod.tolerations, taint):
                    return [R_TAINT]
        elif plugin == "NodeAffinity":
            if not node_affinity_matches(pod, node):
                return [R_AFFINITY]
        elif plugin == "NodeResourcesFit":
            fit = profile["fit"]
            reasons = fit_reasons(
                pod,
                node,
                cluster.usage(node.name),
                fit.get("ignored_resources", ()),
                fit.get("ignored_resource_groups", ()),
            )
            if reasons:
                return reasons
        else:
            raise ValueError(f"unknown filter plugin {plugin}")
    return []


def _as_pod(pod) -> RefPod:
    return pod if isinstance(pod, RefPod) else RefPod.from_dict(pod)


def prefilter_names(pod: RefPod) -> set[str] | None:
    """NodeAffinity.PreFilter: when every required term has matchFields metadata.name In (ANDed within a term),
    the union of those names; None when some term has none."""
    if not pod.required_terms:
        return None
    names: set[str] = set()
    for term in pod.required_terms:
        ins = [set(f.get("values") or []) for f in term.get("matchFields") or [] if f["operator"] == "In"]
        if not ins:
            return None
        names |= set.intersection(*ins)
    return names


def node_reasons(cluster: ReferenceCluster, pod: RefPod, profile: dict) -> dict[str, list[str]]:
    """Per node (cluster order), the reasons it is filtered out for ([] if feasible): the PreFilter's, else the
    first failing filter's."""
    names = prefilter_names(pod) if "NodeAffinity" in profile["filters"] else None
    out = {}
    for node in cluster.nodes.values():
        if names is not None and not names:
            out[node.name] = [R_CONFLICT]
        elif names is not None and node.name not in names:
            out[node.name] = [R_PREFILTER]
        else:
            out[node.name] = filter_node(cluster, pod, node, profile)
    return out


def reference_filter(cluster: ReferenceCluster, pod, profile_native: dict) -> tuple[list[str], dict[str, int]]:
    """(feasible node names in cluster order, {reason: number of nodes})."""
    feasible, counts = [], {}
    for name, reasons in node_reasons(cluster, _as_pod(pod), profile_native).items():
        if not reasons:
            feasible.append(name)
        for r in reasons:
            counts[r] = counts.get(r, 0) + 1
    return feasible, counts


def fit_error_message(n_nodes: int, counts: dict[str, int], post_filter: str = "") -> str:
    """framework.FitError.Error(): the PreFilter rejection or the reasons' histogram, then the PostFilter's text."""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    message = f"0/{n_nodes} nodes are available:"
    if R_CONFLICT in counts:
        message += f" {R_CONFLICT}."
    elif counts:
        message += " " + ", ".join(sorted(f"{c} {r}" for r, c in counts.items())) + "."
    return f"{message} {post_filter}" if post_filter else message


def failure_message(cluster: ReferenceCluster, pod, profile: dict) -> str:
    """The whole FailedScheduling text of a pod no node fits, kube-scheduler v1.34's default PostFilter plugins
    included: DynamicResources ("no new claims to deallocate"), then DefaultPreemption's dry run -- nodes that
    failed for resolvable reasons only are tried without every pod of lower priority (none: "No preemption victims
    found"), the rest are "Preemption is not helpful"; a node that fits then would be preempted on (no text)."""
    p = _as_pod(pod)
    per_node = node_reasons(cluster, p, profile)
    counts: dict[str, int] = {}
    for reasons in per_node.values():
        for r in reasons:
            counts[r] = counts.get(r, 0) + 1
    n = len(cluster.nodes)
    if n == 0:
        return fit_error_message(0, counts)
    if R_CONFLICT in counts:  # rejected at PreFilter: DynamicResources' PostFilter finds no state of its own
        return fit_error_message(n, counts, "not found")
    if p.never_preempts:
        return fit_error_message(
            n, counts, "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
        )
    dry_run: dict[str, int] = {}

    def add(reason: str) -> None:
        dry_run[reason] = dry_run.get(reason, 0) + 1

    for name, reasons in per_node.items():
        node = cluster.nodes[name]
        too_big = any(
            r.startswith("Insufficient ")
            and p.requests.get(r[len("Insufficient ") :], 0) > node.alloc(r[len("Insufficient ") :])
            for r in reasons
        )
        if any(r in UNRESOLVABLE for r in reasons) or too_big:
            add("Preemption is not helpful for scheduling")
            continue
        victims = [q.key for q in cluster.pods_on(name) if q.priority < p.priority]
        if not victims:
            add("No preemption victims found for incoming pod")
            continue
        without = ReferenceCluster()
        without.nodes = cluster.nodes
        without.bound = {k: v for k, v in cluster.bound.items() if k not in victims}
        after = filter_node(without, p, node, profile)
        if not after:
            return fit_error_message(n, counts)  # DefaultPreemption would evict there: its PostFilter says nothing
        for r in after:
            add(r)
    return fit_error_message(n, counts, "no new claims to deallocate, preemption: " + fit_error_message(n, dry_run))


def filter_part(message: str) -> str:
    """A FailedScheduling message without the PostFilter plugins' text (DynamicResources', then preemption's, which
    tests/plugins/preemption_reference.py checks; "not found" after a PreFilter rejection)."""
    for post_filter in (" no new claims to deallocate", " not found"):
        message = message.split(post_filter, 1)[0]
    return message


# ---------------------------------------------------------------------------------------------------------------
# Score functions (one node, one plugin)
# ---------------------------------------------------------------------------------------------------------------
def go_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def broken_linear(shape: list[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction over (utilization, score) points, as given (no scaling here)."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + go_div((s - s0) * (p - u0), u - u0)
    return shape[-1][1]


def least_requested(req: int, cap: int) -> int:
    if cap == 0 or req > cap:
        return 0
    return (cap - req) * MAX_NODE_SCORE // cap


def most_requested(req: int, cap: int) -> int:
    if cap == 0:
        return 0
    return min(req, cap) * MAX_NODE_SCORE // cap


def rtcr_resource_score(shape_scaled: list[tuple[int, int]], req: int, cap: int) -> int:
    if cap == 0 or req > cap:
        return broken_linear(shape_scaled, 100)
    util = 0 if req <= 0 else (100 if req >= cap else req * 100 // cap)
    return broken_linear(shape_scaled, util)


def _round_half_away(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2)) if x >= 0 else -math.floor(-x + Fraction(1, 2))


def _alloc_req_pairs(pod: RefPod, node: RefNode, usage: NodeUsage, resources, use_requested: bool):
    """resourceAllocationScorer: [(weight, requested, allocatable)] of the resources that count."""
    out = []
    for name, weight in resources:
        if name == CPU:
            pod_req = pod.requests.get(CPU, 0) if use_requested else pod.score_cpu
        elif name == MEMORY:
            pod_req = pod.requests.get(MEMORY, 0) if use_requested else pod.score_mem
        else:
            pod_req = pod.requests.get(name, 0)
        if pod_req == 0 and is_scalar(name):
            continue  # extended resource the pod does not request
        if name == CPU:
            alloc, req = node.alloc(CPU), (usage.get(CPU) if use_requested else usage.nonzero_cpu) + pod_req
        elif name == MEMORY:
            alloc, req = node.alloc(MEMORY), (usage.get(MEMORY) if use_requested else usage.nonzero_mem) + pod_req
        elif name == EPHEMERAL:
            alloc, req = node.alloc(EPHEMERAL), usage.get(EPHEMERAL) + pod_req
        elif is_scalar(name) and name in node.allocatable:
            alloc, req = node.alloc(name), usage.get(name) + pod_req
        else:
            continue
        if alloc == 0:
            continue
        out.append((weight, req, alloc))
    return out


# requested_to_capacity_ratio.go: a resource whose shape score is 0 adds neither score nor weight
# ("if resourceScore > 0 { nodeScore += resourceScore * weight; weightSum += weight }").
RTCR_COUNT_ONLY_POSITIVE = True


def fit_score(pod: RefPod, node: RefNode, usage: NodeUsage, fit: dict) -> int:
    pairs = _alloc_req_pairs(pod, node, usage, fit["resources"], use_requested=False)
    strategy = fit["strategy"]
    if strategy in ("LeastAllocated", "MostAllocated"):
        fn = least_requested if strategy == "LeastAllocated" else most_requested
        total = sum(w * fn(req, cap) for w, req, cap in pairs)
        wsum = sum(w for w, _, _ in pairs)
        return total // wsum if wsum else 0
    if strategy == "RequestedToCapacityRatio":
        shape = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in fit["shape"]]
        total = wsum = 0
        for w, req, cap in pairs:
            s = rtcr_resource_score(shape, req, cap)
            if s > 0 or not RTCR_COUNT_ONLY_POSITIVE:
                total += s * w
                wsum += w
        return _round_half_away(Fraction(total, wsum)) if wsum else 0
    raise ValueError(f"unknown strategy {strategy}")


def balanced_score(pod: RefPod, node: RefNode, usage: NodeUsage, balanced: dict) -> int:
    pairs = _alloc_req_pairs(pod, node, usage, balanced["resources"], use_requested=True)
    fractions = []
    total = 0.0
    for _, req, cap in pairs:
        f = float(req) / float(cap)
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


# kube-scheduler >= v1.33 (kubernetes#129138): BalancedAllocation's PreScore returns Skip for a pod whose
# requests of every configured resource are 0, so the plugin contributes 0 to every node.
BALANCED_SKIP_BEST_EFFORT = True


def balanced_skipped(pod: RefPod, balanced: dict) -> bool:
    """PreScore Skip for best-effort pods: every configured resource's (real) request is 0."""
    return BALANCED_SKIP_BEST_EFFORT and all(pod.requests.get(name, 0) == 0 for name, _ in balanced["resources"])


def binpack_score(pod: RefPod, node: RefNode, usage: NodeUsage, binpack: dict) -> int:
    """Volcano binpack, float arithmetic as Volcano computes it, floored to an integer."""
    score = 0.0
    wsum = 0
    for name, weight in binpack["resources"]:
        request = pod.requests.get(name, 0)
        if request == 0:
            continue
        capacity = node.alloc(name)
        if capacity == 0 or weight == 0:
            wsum += weight
            continue
        used_finally = float(request) + float(usage.get(name))
        if used_finally > capacity:
            return 0
        score += used_finally * float(weight) / float(capacity)
        wsum += weight
    if wsum > 0:
        score /= float(wsum)
    score *= float(MAX_NODE_SCORE * binpack["weight"])
    return math.floor(score)


def taint_prefer_count(pod: RefPod, node: RefNode) -> int:
    tols = [t for t in pod.tolerations if t[3] in ("", "PreferNoSchedule")]
    return sum(1 for taint in node.taints if taint[2] == "PreferNoSchedule" and not tolerated(tols, taint))


def affinity_preferred_sum(pod: RefPod, node: RefNode) -> int:
    return sum(w for w, term in pod.preferred if w != 0 and term_matches(term, node))


def default_normalize(scores: dict[str, int], reverse: bool) -> dict[str, int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    max_count = max(scores.values(), default=0)
    if max_count <= 0:
        return {n: (MAX_NODE_SCORE if reverse else s) for n, s in scores.items()}
    out = {}
    for n, s in scores.items():
        s = MAX_NODE_SCORE * s // max_count
        out[n] = MAX_NODE_SCORE - s if reverse else s
    return out


# ---------------------------------------------------------------------------------------------------------------
# Score over nodes and schedule
# ---------------------------------------------------------------------------------------------------------------
def plugin_scores(cluster: ReferenceCluster, pod, profile_native: dict, nodes: list[str]) -> dict[str, dict[str, int]]:
    """{plugin: {node: normalized, unweighted score}} over the given (feasible) nodes."""
    p = _as_pod(pod)
    out = {}
    for plugin, _ in profile_native["scores"]:
        raw = {}
        for name in nodes:
            node, usage = cluster.nodes[name], cluster.usage(name)
            if plugin == "NodeResourcesFit":
                raw[name] = fit_score(p, node, usage, profile_native["fit"])
            elif plugin == "NodeResourcesBalancedAllocation":
                raw[name] = (
                    0
                    if balanced_skipped(p, profile_native["balanced"])
                    else balanced_score(p, node, usage, profile_native["balanced"])
                )
            elif plugin == "TaintToleration":
                raw[name] = taint_prefer_count(p, node)
            elif plugin == "NodeAffinity":
                raw[name] = affinity_preferred_sum(p, node)
            elif plugin == "binpack":
                raw[name] = binpack_score(p, node, usage, profile_native["binpack"])
            else:
                raise ValueError(f"unknown score plugin {plugin}")
        if plugin == "TaintToleration":
            raw = default_normalize(raw, reverse=True)
        elif plugin == "NodeAffinity":
            raw = default_normalize(raw, reverse=False)
        out[plugin] = raw
    return out


def reference_score(
    cluster: ReferenceCluster, pod, profile_native: dict, nodes: list[str] | None = None
) -> dict[str, int]:
    """Final weighted score of each feasible node (nodes default to the filter's feasible set)."""
    p = _as_pod(pod)
    if nodes is None:
        nodes, _ = reference_filter(cluster, p, profile_native)
    per_plugin = plugin_scores(cluster, p, profile_native, nodes)
    total = {n: 0 for n in nodes}
    for plugin, weight in profile_native["scores"]:
        for n, s in per_plugin[plugin].items():
            total[n] += weight * s
    return total


@dataclass
class ScheduleStep:
    pod: str
    best: set[str]  # tied best nodes ({} if unschedulable)
    node: str | None  # the node the pod was bound to
    reasons: dict[str, int]
    scores: dict[str, int]
    message: str = ""  # the FailedScheduling text, made when the pod was tried


def reference_schedule(
    cluster: ReferenceCluster, pods: list, profile_native: dict, choose: Callable[[str, set[str]], str] | None = None
) -> list[ScheduleStep]:
    """Schedule pods in order over all feasible nodes (percentageOfNodesToScore = 100 semantics).

    The highest total score wins; ``choose(pod_key, tied_best)`` picks among ties (default: smallest name),
    so a test can follow the native tie-break and keep both clusters identical. The pod is bound.
    """
    steps = []
    for pod in pods:
        p = _as_pod(pod)
        feasible, counts = reference_filter(cluster, p, profile_native)
        if not feasible:
            steps.append(ScheduleStep(p.key, set(), None, counts, {}, failure_message(cluster, p, profile_native)))
            continue
        scores = reference_score(cluster, p, profile_native, feasible)
        top = max(scores.values())
        best = {n for n, s in scores.items() if s == top}
        chosen = choose(p.key, best) if choose else min(best)
        cluster.bind(p, chosen)
        steps.append(ScheduleStep(p.key, best, chosen, counts, scores))
    return steps
