"""kube-scheduler v1.34.4's InterPodAffinity unit-test tables (pkg/scheduler/framework/plugins/interpodaffinity/
filtering_test.go and scoring_test.go), case by case, run through vcore's public API.

Filter tables: PreFilter + Filter per node becomes the node's filter outcome in vcore (feasible, or the reason text);
a PreFilter Skip means every node is feasible. Score tables: PreScore + Score + NormalizeScore becomes
``Scheduler.score`` with InterPodAffinity alone at weight 1 (a PreScore Skip: every node scores 0). Tables that look
at the plugin's internal state (TestPreFilterStateAddRemovePod, TestGetTPMapMatchingIncomingAffinityAntiAffinity)
become the filter outcomes that state decides, worked out from the table's expected counts with kube's Filter
(``filter_from_counts``), after binding (AddPod) and unbinding (RemovePod) the pod.

Inputs the API server refuses, which kube's tables feed the plugin directly: a term without a topologyKey (vcore
refuses the pod naming the field; the case then runs with a key no node has, which is what "" is to kube: no node
carries the label ""), and label selector values that are not label values (kube's PreFilter fails; vcore refuses
the pod naming the field).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pytest

import vcore
from tests.plugins import interpod_reference as iref
from tests.plugins.kube_builders import (
    REQUIRED,
    Pod,
    affinity,
    affinity_term,
    build_cluster,
    expr,
    filter_per_node,
    incoming,
    make_node,
    named,
    namespace,
    plugin_profile,
    weighted,
)

PLUGIN = "InterPodAffinity"
R_AFFINITY = "node(s) didn't match pod affinity rules"
R_ANTI = "node(s) didn't match pod anti-affinity rules"
R_EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
ABSENT_KEY = "no-node-has-this-key"
NS = ""  # the Go tables' defaultNamespace

NS_T1, NS_T2 = {"team": "team1"}, {"team": "team2"}
SCORING_NAMESPACES = [
    namespace("subteam1.team1", NS_T1),
    namespace("subteam2.team1", NS_T1),
    namespace("subteam1.team2", NS_T2),
    namespace("subteam2.team2", NS_T2),
]


@dataclass
class FilterCase:
    name: str
    pod: dict
    nodes: list[dict]
    want: dict[str, str | None]  # node -> reason (None: feasible)
    pods: list[dict] = field(default_factory=list)
    namespaces: list[dict] = field(default_factory=list)
    invalid: str | None = None  # vcore refuses the pod: a fragment of the error


def _run_filter(case: FilterCase):
    cluster = build_cluster(case.nodes, case.pods, namespaces=case.namespaces)
    scheduler = vcore.Scheduler(cluster, plugin_profile(PLUGIN))
    pod = incoming(case.pod)
    if case.invalid is not None:
        with pytest.raises(ValueError, match=case.invalid):
            scheduler.filter(pod)
        return
    got = filter_per_node(scheduler, pod, [n["metadata"]["name"] for n in case.nodes])
    assert got == case.want


def _has_empty_topology_key(pod: dict) -> bool:
    return any(t.get("topologyKey") == "" for t in _terms(pod))


def _terms(pod: dict):
    aff = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        part = aff.get(kind) or {}
        yield from part.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        for w in part.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            yield w["podAffinityTerm"]


def _with_absent_key(pod: dict) -> dict:
    pod = copy.deepcopy(pod)
    for term in _terms(pod):
        if term.get("topologyKey") == "":
            term["topologyKey"] = ABSENT_KEY
    return pod


def check_filter_case(case: FilterCase):
    if _has_empty_topology_key(case.pod):
        with pytest.raises(ValueError, match=r"topologyKey: required"):
            vcore.Scheduler(
                build_cluster(case.nodes, case.pods, namespaces=case.namespaces), plugin_profile(PLUGIN)
            ).filter(incoming(case.pod))
        case = copy.copy(case)
        case.pod = _with_absent_key(case.pod)
    _run_filter(case)


# ---------------------------------------------------------------------------------------------------------------
# TestRequiredAffinitySingleNode
# ---------------------------------------------------------------------------------------------------------------
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = make_node("node1", {"region": "r1", "zone": "z11"})
EXISTING = Pod().labels(POD_LABEL).node("node1").obj()


def _pod_with_terms(ns: str, labels: dict, aff: list | None, anti: list | None) -> dict:
    """createPodWithAffinityTerms."""
    return Pod().namespace(ns).labels(labels).affinity(affinity(required=aff or [], anti_required=anti or [])).obj()


def _single(name, pod, want, pods=(), invalid=None):
    return FilterCase(name, pod, [NODE1], {"node1": want}, list(pods), SCORING_NAMESPACES, invalid)


SERVICE_IN = expr("service", "In", "securityscan", "value2")
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}

SINGLE_NODE = [
    _single(
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        Pod().obj(),
        None,
    ),
    _single(
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        None,
        [EXISTING],
    ),
    _single(
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
        "operator in labelSelector that matches the existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_not_in("service", "region", ["securityscan3", "value3"], REQUIRED)
        .obj(),
        None,
        [EXISTING],
    ),
    _single(
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        _pod_with_terms(NS, POD_LABEL2, [affinity_term("", SERVICE_IN, namespaces=["DiffNameSpace"])], None),
        R_AFFINITY,
        [Pod().namespace("ns").label("service", "securityscan").node("node1").obj()],
    ),
    _single(
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_in("service", "", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        R_AFFINITY,
        [EXISTING],
    ),
    _single(
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuring"
        "Execution ",
        _pod_with_terms(
            NS,
            POD_LABEL2,
            [
                affinity_term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                affinity_term("region", expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")),
            ],
            None,
        ),
        None,
        [EXISTING],
    ),
    _single(
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
        "node because one of the matchExpression item don't match.",
        _pod_with_terms(
            NS,
            POD_LABEL2,
            [
                affinity_term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                affinity_term("region", expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")),
            ],
            None,
        ),
        R_AFFINITY,
        [EXISTING],
    ),
    _single(
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        None,
        [EXISTING],
    ),
    _single(
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        None,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
            .obj()
        ],
    ),
    _single(
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        R_ANTI,
        [EXISTING],
    ),
    _single(
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        R_EXISTING,
        [
            Pod()
            .namespace(NS)
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
    ),
    _single(
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_not_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        R_AFFINITY,
        # kube's table binds its existing pod to "node2", which is not a node of the snapshot: a pod in no node's
        # topology, which vcore cannot bind. It counts nowhere, so the case runs without it.
        [],
    ),
    _single(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        Pod().labels(POD_LABEL).obj(),
        R_EXISTING,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
    ),
    _single(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
        Pod().labels(POD_LABEL).obj(),
        None,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
    ),
    _single(
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "region", REQUIRED)
        .pod_anti_affinity_exists("security", "region", REQUIRED)
        .obj(),
        R_ANTI,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
    ),
    _single(
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "zone", REQUIRED)
        .pod_anti_affinity_exists("security", "zone", REQUIRED)
        .obj(),
        R_ANTI,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
    ),
    _single(
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        Pod().namespace(NS).labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone", REQUIRED).obj(),
        R_EXISTING,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_exists("service", "zone", REQUIRED)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
    ),
    _single(
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        Pod()
        .namespace(NS)
        .labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED)
        .obj(),
        R_ANTI,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", REQUIRED)
            .pod_anti_affinity_exists("def", "zone", REQUIRED)
            .obj()
        ],
    ),
    _single(
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        Pod()
        .namespace(NS)
        .labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED)
        .obj(),
        R_ANTI,
        [
            Pod()
            .namespace(NS)
            .node("node1")
            .labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", REQUIRED)
            .pod_anti_affinity_exists("def", "zone", REQUIRED)
            .obj()
        ],
    ),
    # kube: PreFilter fails (UnschedulableAndUnresolvable, "parsing pod: requiredAffinityTerms: values[0][service]:
    # Invalid value: "{{.bad-value.}}" ..."); vcore refuses the pod, naming the field.
    _single(
        "PodAffinity fails PreFilter with an invalid affinity label syntax",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["{{.bad-value.}}"], REQUIRED)
        .pod_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        None,
        invalid=r"requiredDuringSchedulingIgnoredDuringExecution\[0\]\.labelSelector\.matchExpressions\[0\]"
        r"\.values\[0\]: '\{\{\.bad-value\.\}\}' is not a valid label value",
    ),
    _single(
        "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        Pod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["foo"], REQUIRED)
        .pod_affinity_in("service", "node", ["{{.bad-value.}}"], REQUIRED)
        .obj(),
        None,
        invalid=r"requiredDuringSchedulingIgnoredDuringExecution\[1\]\.labelSelector\.matchExpressions\[0\]"
        r"\.values\[0\]: '\{\{\.bad-value\.\}\}' is not a valid label value",
    ),
    _single(
        "affinity with NamespaceSelector",
        _pod_with_terms(NS, POD_LABEL2, [affinity_term("region", SERVICE_IN, namespace_selector=TEAM1)], None),
        None,
        [Pod().namespace("subteam1.team1").labels(POD_LABEL).node("node1").obj()],
    ),
    _single(
        "affinity with non-matching NamespaceSelector",
        _pod_with_terms(NS, POD_LABEL2, [affinity_term("region", SERVICE_IN, namespace_selector=TEAM1)], None),
        R_AFFINITY,
        [Pod().namespace("subteam1.team2").labels(POD_LABEL).node("node1").obj()],
    ),
    _single(
        "anti-affinity with matching NamespaceSelector",
        _pod_with_terms(
            "subteam1.team1", POD_LABEL2, None, [affinity_term("zone", SERVICE_IN, namespace_selector=TEAM1)]
        ),
        R_ANTI,
        [Pod().namespace("subteam2.team1").labels(POD_LABEL).node("node1").obj()],
    ),
    _single(
        "anti-affinity with matching all NamespaceSelector",
        _pod_with_terms("subteam1.team1", POD_LABEL2, None, [affinity_term("zone", SERVICE_IN, namespace_selector={})]),
        R_ANTI,
        [Pod().namespace("subteam2.team1").labels(POD_LABEL).node("node1").obj()],
    ),
    _single(
        "anti-affinity with non-matching NamespaceSelector",
        _pod_with_terms(
            "subteam1.team1", POD_LABEL2, None, [affinity_term("zone", SERVICE_IN, namespace_selector=TEAM1)]
        ),
        None,
        [Pod().namespace("subteam1.team2").labels(POD_LABEL).node("node1").obj()],
    ),
]


@pytest.mark.parametrize("case", SINGLE_NODE, ids=[c.name for c in SINGLE_NODE])
def test_required_affinity_single_node(case):
    check_filter_case(case)


# ---------------------------------------------------------------------------------------------------------------
# TestRequiredAffinityMultipleNodes
# ---------------------------------------------------------------------------------------------------------------
RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}
NS1 = [namespace("NS1")]
ABC_NODES = [
    make_node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
    make_node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"}),
]
AB_ZONES = [
    make_node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
    make_node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}),
]


def _multi(name, pod, pods, nodes, want):
    return FilterCase(name, pod, nodes, dict(zip([n["metadata"]["name"] for n in nodes], want)), pods, NS1)


MULTIPLE_NODES = [
    _multi(
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them "
        "has an existing pod that matches the affinity rules",
        Pod().namespace(NS).pod_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
        [Pod().name("p1").node("node1").labels({"foo": "bar"}).obj()],
        [make_node("node1", RG_CHINA), make_node("node2", RG_CHINA_AZ1), make_node("node3", RG_INDIA)],
        [None, None, R_AFFINITY],
    ),
    _multi(
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
        "collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
        "matches the rule anywhere.",
        Pod()
        .namespace(NS)
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [Pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [make_node("nodeA", {"zone": "az1", "hostname": "h1"}), make_node("nodeB", {"zone": "az2", "hostname": "h2"})],
        [None, None],
    ),
    _multi(
        "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        Pod()
        .namespace(NS)
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [Pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [
            make_node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            make_node("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        [R_AFFINITY, R_AFFINITY],
    ),
    _multi(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        Pod().namespace(NS).pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [Pod().node("nodeA").labels({"foo": "abc"}).obj()],
        [
            make_node("nodeA", {"region": "r1", "hostname": "nodeA"}),
            make_node("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        [R_ANTI, R_ANTI],
    ),
    _multi(
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        Pod()
        .namespace(NS)
        .pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [Pod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        [
            make_node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
            make_node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}),
        ],
        [R_ANTI, R_ANTI],
    ),
    _multi(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        Pod().namespace(NS).pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [Pod().node("nodeA").labels({"foo": "abc"}).obj()],
        [make_node("nodeA", RG_CHINA), make_node("nodeB", RG_CHINA_AZ1), make_node("nodeC", RG_INDIA)],
        [R_ANTI, R_ANTI, None],
    ),
    _multi(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC "
        "has an existing pod that match the inter pod affinity rule but in different namespace)",
        Pod().namespace("NS1").labels({"foo": "123"}).pod_anti_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
        [
            Pod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
            Pod().node("nodeC").namespace("NS2").pod_anti_affinity_in("foo", "region", ["123"], REQUIRED).obj(),
        ],
        [make_node("nodeA", RG_CHINA), make_node("nodeB", RG_CHINA_AZ1), make_node("nodeC", RG_INDIA)],
        [R_ANTI, R_ANTI, None],
    ),
    _multi(
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector "
        "of the term is firstly checked, and then topologyKey of the term is also checked",
        Pod().label("foo", "").obj(),
        [Pod().node("nodeA").namespace(NS).pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED).obj()],
        ABC_NODES,
        [None, None],
    ),
    _multi(
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        Pod().node("nodeA").namespace(NS).pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED).obj(),
        [Pod().node("nodeA").labels({"foo": ""}).obj()],
        ABC_NODES,
        [None, None],
    ),
    _multi(
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
        Pod().label("foo", "").label("bar", "").obj(),
        [
            Pod().node("nodeA").namespace(NS).pod_anti_affinity_exists("foo", "zone", REQUIRED).obj(),
            Pod().node("nodeA").namespace(NS).pod_anti_affinity_exists("bar", "region", REQUIRED).obj(),
        ],
        AB_ZONES,
        [R_EXISTING, R_EXISTING],
    ),
    _multi(
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
        "anti-affinity rule of existingPod",
        Pod()
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "zone", REQUIRED)
        .pod_anti_affinity_exists("bar", "region", REQUIRED)
        .obj(),
        [Pod().node("nodeA").labels({"foo": ""}).obj(), Pod().node("nodeB").labels({"bar": ""}).obj()],
        AB_ZONES,
        [R_ANTI, R_ANTI],
    ),
    _multi(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
        Pod().label("foo", "").label("bar", "").obj(),
        [
            Pod()
            .node("nodeA")
            .namespace(NS)
            .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .obj()
        ],
        AB_ZONES,
        [R_EXISTING, None],
    ),
    _multi(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
        Pod()
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [Pod().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        AB_ZONES,
        [R_ANTI, None],
    ),
    _multi(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
        Pod().label("foo", "").label("bar", "").obj(),
        [
            Pod()
            .namespace(NS)
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "region", REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .obj()
        ],
        AB_ZONES,
        [R_EXISTING, R_EXISTING],
    ),
    _multi(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
        Pod()
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "region", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [Pod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        AB_ZONES,
        [R_ANTI, R_ANTI],
    ),
    _multi(
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
        Pod().label("foo", "").label("bar", "").obj(),
        [
            Pod()
            .node("nodeA")
            .namespace(NS)
            .pod_anti_affinity_exists("foo", "zone", REQUIRED)
            .pod_anti_affinity_exists("labelA", "zone", REQUIRED)
            .obj(),
            Pod()
            .node("nodeB")
            .namespace(NS)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .pod_anti_affinity_exists("labelB", "zone", REQUIRED)
            .obj(),
        ],
        AB_ZONES + [make_node("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
        [R_EXISTING, R_EXISTING, None],
    ),
    _multi(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
        "match",
        Pod()
        .namespace(NS)
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [Pod().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        ABC_NODES,
        [None, None],
    ),
    _multi(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
        "match, and the match logic should be satisfied on the same pod",
        Pod()
        .namespace(NS)
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [
            Pod().node("nodeA").name("pod1").namespace(NS).labels({"foo": ""}).obj(),
            Pod().node("nodeB").name("pod2").namespace(NS).labels({"bar": ""}).obj(),
        ],
        AB_ZONES,
        [R_AFFINITY, R_AFFINITY],
    ),
]


@pytest.mark.parametrize("case", MULTIPLE_NODES, ids=[c.name for c in MULTIPLE_NODES])
def test_required_affinity_multiple_nodes(case):
    check_filter_case(case)


# ---------------------------------------------------------------------------------------------------------------
# TestPreFilterStateAddRemovePod and TestGetTPMapMatchingIncomingAffinityAntiAffinity: the state becomes the
# filter outcome kube's Filter draws from it.
# ---------------------------------------------------------------------------------------------------------------
def filter_from_counts(
    node_labels: dict[str, str],
    affinity_keys: list[str],
    anti_keys: list[str],
    affinity_counts: dict,
    anti_counts: dict,
    existing_counts: dict,
    matches_own_terms: bool,
) -> str | None:
    """kube's Filter (satisfyPodAffinity, satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity) on a
    preFilterState given as {(topology key, value): count} maps."""
    pods_exist = True
    for key in affinity_keys:
        if key not in node_labels:
            return R_AFFINITY
        if affinity_counts.get((key, node_labels[key]), 0) <= 0:
            pods_exist = False
    if not pods_exist and not (not affinity_counts and matches_own_terms):
        return R_AFFINITY
    if any(anti_counts.get((key, node_labels[key]), 0) > 0 for key in anti_keys if key in node_labels):
        return R_ANTI
    if any(existing_counts.get(pair, 0) > 0 for pair in node_labels.items()):
        return R_EXISTING
    return None


LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = [affinity_term("region", expr("foo", "In", "bar"))]
COMPLEX_TERMS = [
    affinity_term("region", expr("foo", "In", "bar", "buzz")),
    affinity_term("zone", expr("service", "NotIn", "bar", "security", "test")),
]
ABC3 = [make_node("nodeA", LABEL1), make_node("nodeB", LABEL2), make_node("nodeC", LABEL3)]


@dataclass
class AddRemoveCase:
    name: str
    pending: dict
    existing: list[dict]
    added: dict
    expected_anti: dict
    expected_affinity: dict
    # Not part of kube's table (it compares the whole state to a fresh PreFilter): the existing-pods anti-affinity
    # counts after the add, from the terms of the bound pods that match the pending pod.
    existing_anti: dict


def _affinity_keys(pod: dict, anti: bool) -> list[str]:
    aff = (pod["spec"].get("affinity") or {}).get("podAntiAffinity" if anti else "podAffinity") or {}
    return [t["topologyKey"] for t in aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []]


ADD_REMOVE = [
    AddRemoveCase(
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        Pod().name("pending").labels(SELECTOR1).affinity(affinity(anti_required=ANTI_FOO_BAR)).obj(),
        [
            Pod().name("p1").labels(SELECTOR1).node("nodeA").obj(),
            Pod().name("p2").node("nodeC").affinity(affinity(anti_required=ANTI_FOO_BAR)).obj(),
        ],
        Pod().name("addedPod").labels(SELECTOR1).node("nodeB").affinity(affinity(anti_required=ANTI_FOO_BAR)).obj(),
        {("region", "r1"): 2},
        {},
        {("region", "r2"): 1, ("region", "r1"): 1},
    ),
    AddRemoveCase(
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        Pod().name("pending").labels(SELECTOR1).affinity(affinity(anti_required=COMPLEX_TERMS)).obj(),
        [
            Pod().name("p1").labels(SELECTOR1).node("nodeA").obj(),
            Pod().name("p2").node("nodeC").affinity(affinity(anti_required=ANTI_FOO_BAR)).obj(),
        ],
        Pod().name("addedPod").labels(SELECTOR1).node("nodeA").affinity(affinity(anti_required=COMPLEX_TERMS)).obj(),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        {("region", "r2"): 1, ("region", "r1"): 1, ("zone", "z11"): 1},
    ),
    AddRemoveCase(
        "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
        Pod().name("pending").labels(SELECTOR1).affinity(affinity(required=COMPLEX_TERMS)).obj(),
        [
            Pod().name("p1").labels(SELECTOR1).node("nodeA").obj(),
            Pod().name("p2").node("nodeC").affinity(affinity(anti_required=ANTI_FOO_BAR, required=COMPLEX_TERMS)).obj(),
        ],
        Pod().name("addedPod").labels(SELECTOR1).node("nodeA").affinity(affinity(anti_required=COMPLEX_TERMS)).obj(),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        {("region", "r2"): 1, ("region", "r1"): 1, ("zone", "z11"): 1},
    ),
]


def _own_terms_match(pod: dict) -> bool:
    """Whether the pod matches every one of its required affinity terms (it is always in its own namespace here)."""
    terms = iref.pod_terms(pod)["required_affinity"]
    return bool(terms) and all(iref.term_matches_pod(t, pod, {}) for t in terms)


@pytest.mark.parametrize("case", ADD_REMOVE, ids=[c.name for c in ADD_REMOVE])
def test_prefilter_state_add_remove_pod(case):
    existing = named(case.existing)
    cluster = build_cluster(ABC3, existing)
    scheduler = vcore.Scheduler(cluster, plugin_profile(PLUGIN))
    pod = incoming(case.pending)
    names = [n["metadata"]["name"] for n in ABC3]
    before = filter_per_node(scheduler, pod, names)
    cluster.bind(case.added, case.added["spec"]["nodeName"])  # AddPod
    after = filter_per_node(scheduler, pod, names)
    want = {
        n["metadata"]["name"]: filter_from_counts(
            n["metadata"]["labels"],
            _affinity_keys(pod, False),
            _affinity_keys(pod, True),
            case.expected_affinity,
            case.expected_anti,
            case.existing_anti,
            _own_terms_match(pod),
        )
        for n in ABC3
    }
    assert after == want
    # The state after AddPod equals a fresh PreFilter over every pod (allPodsState).
    fresh = build_cluster(ABC3, existing + [case.added])
    assert filter_per_node(vcore.Scheduler(fresh, plugin_profile(PLUGIN)), pod, names) == after
    cluster.unbind(case.added)  # RemovePod: back to the original state
    assert filter_per_node(scheduler, pod, names) == before


NODE_A_HOST = [make_node("nodeA", {"hostname": "nodeA"})]


def _normal(*labels: str) -> dict:
    pod = Pod().name("normal").node("nodeA")
    for label in labels:
        pod.label(label, "")
    return pod.obj()


def _tp_case(name, existing, pod, want_affinity, want_anti):
    return pytest.param(existing, pod, want_affinity, want_anti, id=name)


TP_MAP = [
    _tp_case("nil test", [], Pod().name("aaa-normal").obj(), {}, {}),
    _tp_case(
        "incoming pod without affinity/anti-affinity causes a no-op",
        [_normal("aaa")],
        Pod().name("aaa-normal").obj(),
        {},
        {},
    ),
    _tp_case(
        "no pod has label that violates incoming pod's affinity and anti-affinity",
        [_normal("bbb")],
        Pod()
        .name("aaa-anti")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .obj(),
        {},
        {},
    ),
    _tp_case(
        "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        [_normal("aaa")],
        Pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .obj(),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
    ),
    _tp_case(
        "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        [_normal("aaa", "bbb")],
        Pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .obj(),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
    ),
    _tp_case(
        "existing pod not match incoming pod's affinity but matches anti-affinity",
        [_normal("aaa")],
        Pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("bbb", "hostname", REQUIRED)
        .obj(),
        {},
        {("hostname", "nodeA"): 1},
    ),
    _tp_case(
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        [_normal("aaa", "bbb")],
        Pod()
        .name("anaffi-antiaffiti")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("ccc", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("ccc", "hostname", REQUIRED)
        .obj(),
        {},
        {("hostname", "nodeA"): 1},
    ),
    _tp_case(
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
        [_normal("bbb")],
        Pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("bbb", "hostname", REQUIRED)
        .obj(),
        {},
        {("hostname", "nodeA"): 1},
    ),
]


@pytest.mark.parametrize("existing,pod,want_affinity,want_anti", TP_MAP)
def test_tp_map_matching_incoming_affinity_anti_affinity(existing, pod, want_affinity, want_anti):
    scheduler = vcore.Scheduler(build_cluster(NODE_A_HOST, existing), plugin_profile(PLUGIN))
    pod = incoming(pod)
    want = filter_from_counts(
        {"hostname": "nodeA"},
        _affinity_keys(pod, False),
        _affinity_keys(pod, True),
        want_affinity,
        want_anti,
        {},
        _own_terms_match(pod),
    )
    assert filter_per_node(scheduler, pod, ["nodea"]) == {"nodea": want}


# ---------------------------------------------------------------------------------------------------------------
# TestPreferredAffinity
# ---------------------------------------------------------------------------------------------------------------
RG_CHINA_NODES = {"region": "China"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
S1, S2 = {"security": "S1"}, {"security": "S2"}


def _pref(weight, key, *exprs, **kw):
    return weighted(weight, affinity_term(key, *exprs, **kw))


STAY_WITH_S1_IN_REGION = affinity(preferred=[_pref(5, "region", expr("security", "In", "S1"))])
STAY_WITH_S2_IN_REGION = affinity(preferred=[_pref(6, "region", expr("security", "In", "S2"))])
AFFINITY3 = affinity(
    preferred=[
        _pref(8, "region", expr("security", "NotIn", "S1"), expr("security", "In", "S2")),
        _pref(2, "region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
    ]
)
HARD_AFFINITY = affinity(
    required=[
        affinity_term("region", expr("security", "In", "S1", "value2")),
        affinity_term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(anti_preferred=[_pref(5, "az", expr("security", "In", "S1"))])
AWAY_FROM_S2_IN_AZ = affinity(anti_preferred=[_pref(5, "az", expr("security", "In", "S2"))])
STAY_WITH_S1_AWAY_FROM_S2 = affinity(
    preferred=[_pref(8, "region", expr("security", "In", "S1"))],
    anti_preferred=[_pref(5, "az", expr("security", "In", "S2"))],
)
AFFINITY_NS_SELECTOR = affinity(
    preferred=[
        _pref(5, "region", expr("security", "In", "S1"), namespaces=["subteam2.team2"], namespace_selector=TEAM1)
    ]
)
ANTI_AFFINITY_NS_SELECTOR = affinity(
    anti_preferred=[
        _pref(5, "region", expr("security", "In", "S1"), namespaces=["subteam2.team2"], namespace_selector=TEAM1)
    ]
)
INVALID_AFFINITY = affinity(preferred=[_pref(8, "region", expr("security", "In", "{{.bad-value.}}"))])
INVALID_ANTI_AFFINITY = affinity(anti_preferred=[_pref(5, "az", expr("security", "In", "{{.bad-value.}}"))])


def _p(labels=None, node=None, aff=None, ns=None) -> dict:
    pod = Pod()
    if labels:
        pod.labels(labels)
    if node:
        pod.node(node)
    if aff:
        pod.affinity(aff)
    if ns is not None:
        pod.namespace(ns)
    return pod.obj()


def _nodes(*specs) -> list[dict]:
    return [make_node(name, labels) for name, labels in specs]


@dataclass
class ScoreCase:
    name: str
    pod: dict
    nodes: list[dict]
    want: dict[str, int]
    pods: list[dict] = field(default_factory=list)
    args: dict = field(default_factory=lambda: {"hardPodAffinityWeight": 1})
    invalid: str | None = None


def _score(name, pod, pods, nodes, want, **kw):
    nodes = _nodes(*nodes)
    names = [n["metadata"]["name"] for n in nodes]
    want = dict(zip(names, want)) if want is not None else {n: 0 for n in names}  # None: PreScore Skip
    return ScoreCase(name, pod, nodes, want, pods, **kw)


N3 = (("node1", RG_CHINA_NODES), ("node2", RG_INDIA), ("node3", AZ1))
PREFERRED_CASES = [
    _score("all nodes are same priority as Affinity is nil", _p(S1), [], N3, None),
    _score(
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich "
        "doesn't match either pods in nodes or in topology key",
        _p(S1, aff=STAY_WITH_S1_IN_REGION),
        [_p(S1, "node1"), _p(S2, "node2"), _p(S1, "node3")],
        N3,
        [100, 0, 0],
    ),
    _score(
        "All the nodes that have the same topology key & label value with one of them has an existing pod that "
        "match the affinity rules, have the same score",
        _p(aff=STAY_WITH_S1_IN_REGION),
        [_p(S1, "node1")],
        (("node1", RG_CHINA_NODES), ("node2", RG_CHINA_AZ1), ("node3", RG_INDIA)),
        [100, 100, 0],
    ),
    _score(
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has "
        "more matches will get high score",
        _p(S1, aff=STAY_WITH_S2_IN_REGION),
        [_p(S2, "node1"), _p(S2, "node1"), _p(S2, "node2"), _p(S2, "node3"), _p(S2, "node4"), _p(S2, "node5")],
        (
            ("node1", RG_CHINA_NODES),
            ("node2", RG_INDIA),
            ("node3", RG_CHINA_NODES),
            ("node4", RG_CHINA_NODES),
            ("node5", RG_INDIA),
        ),
        [100, 0, 100, 100, 0],
    ),
    _score(
        "Affinity: different Label operators and values for pod affinity scheduling preference, including some "
        "match failures ",
        _p(S1, aff=AFFINITY3),
        [_p(S1, "node1"), _p(S2, "node2"), _p(S1, "node3")],
        N3,
        [20, 100, 0],
    ),
    _score(
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
        _p(S2),
        [_p(S1, "node1", STAY_WITH_S1_IN_REGION), _p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        N3,
        [0, 100, 0],
    ),
    _score(
        "Affinity symmetry with namespace selector",
        _p(S1, ns="subteam1.team1"),
        [_p(S1, "node1", AFFINITY_NS_SELECTOR), _p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        N3,
        [100, 0, 0],
    ),
    _score(
        "AntiAffinity symmetry with namespace selector",
        _p(S1, ns="subteam1.team1"),
        [_p(S1, "node1", ANTI_AFFINITY_NS_SELECTOR), _p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        N3,
        [0, 100, 100],
    ),
    _score(
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        _p(S1),
        [_p(S1, "node1", HARD_AFFINITY), _p(S2, "node2", HARD_AFFINITY)],
        N3,
        [100, 100, 0],
    ),
    _score(
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        _p(S1, aff=AWAY_FROM_S1_IN_AZ),
        [_p(S1, "node1"), _p(S2, "node2")],
        (("node1", AZ1), ("node2", RG_CHINA_NODES)),
        [0, 100],
    ),
    _score(
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
        _p(S1, aff=AWAY_FROM_S1_IN_AZ),
        [_p(S1, "node1"), _p(S1, "node2")],
        (("node1", AZ1), ("node2", RG_CHINA_NODES)),
        [0, 100],
    ),
    _score(
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
        _p(S1, aff=AWAY_FROM_S1_IN_AZ),
        [_p(S1, "node1"), _p(S1, "node1"), _p(S2, "node2")],
        (("node1", AZ1), ("node2", RG_INDIA)),
        [0, 100],
    ),
    _score(
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        _p(S2),
        [_p(S1, "node1", AWAY_FROM_S2_IN_AZ), _p(S2, "node2", AWAY_FROM_S1_IN_AZ)],
        (("node1", AZ1), ("node2", AZ2)),
        [0, 100],
    ),
    _score(
        "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
        "affinity & anti affinity",
        _p(S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
        [_p(S1, "node1"), _p(S1, "node2")],
        (("node1", RG_CHINA_NODES), ("node2", AZ1)),
        [100, 0],
    ),
    _score(
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
        "pods have the same labels",
        _p(S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
        [
            _p(S1, "node1"),
            _p(S1, "node1"),
            _p(S1, "node2"),
            _p(S1, "node3"),
            _p(S1, "node3"),
            _p(S1, "node4"),
            _p(S1, "node5"),
        ],
        (
            ("node1", RG_CHINA_AZ1),
            ("node2", RG_INDIA),
            ("node3", RG_CHINA_NODES),
            ("node4", RG_CHINA_NODES),
            ("node5", RG_INDIA),
        ),
        [100, 0, 100, 100, 0],
    ),
    _score(
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution "
        "in both pod affinity & anti affinity & symmetry",
        _p(S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
        [
            _p(S1, "node1"),
            _p(S2, "node2"),
            _p(None, "node3", STAY_WITH_S1_AWAY_FROM_S2),
            _p(None, "node4", AWAY_FROM_S1_IN_AZ),
        ],
        (("node1", RG_CHINA_NODES), ("node2", AZ1), ("node3", RG_INDIA), ("node4", AZ2)),
        [100, 0, 100, 0],
    ),
    _score(
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        _p(S1),
        [_p(S1, "node1"), _p(None, "node2", STAY_WITH_S1_AWAY_FROM_S2)],
        (("node1", RG_CHINA_NODES), ("node2", RG_CHINA_NODES)),
        [0, 0],
    ),
    # kube: PreScore fails with `Invalid value: "{{.bad-value.}}"`; vcore refuses the pod, naming the field.
    _score(
        "invalid Affinity fails PreScore",
        _p(aff=INVALID_AFFINITY),
        [],
        (("node1", RG_CHINA_NODES), ("node2", RG_CHINA_NODES)),
        None,
        invalid=r"preferredDuringSchedulingIgnoredDuringExecution\[0\]\.podAffinityTerm\.labelSelector"
        r"\.matchExpressions\[0\]\.values\[0\]: '\{\{\.bad-value\.\}\}' is not a valid label value",
    ),
    _score(
        "invalid AntiAffinity fails PreScore",
        _p(aff=INVALID_ANTI_AFFINITY),
        [],
        (("node1", RG_CHINA_NODES), ("node2", RG_CHINA_NODES)),
        None,
        invalid=r"podAntiAffinity\.preferredDuringSchedulingIgnoredDuringExecution\[0\]\.podAffinityTerm"
        r"\.labelSelector\.matchExpressions\[0\]\.values\[0\]: '\{\{\.bad-value\.\}\}' is not a valid "
        r"label value",
    ),
    _score(
        "Affinity with pods matching NamespaceSelector",
        _p(S1, aff=AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        [
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam1.team2"),
            _p(S1, "node2", ns="subteam2.team1"),
        ],
        (("node1", RG_CHINA_NODES), ("node2", RG_INDIA)),
        [100, 0],
    ),
    _score(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        _p(S1, aff=AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        [
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam2.team2"),
            _p(S1, "node2", ns="subteam2.team1"),
        ],
        (("node1", RG_CHINA_NODES), ("node2", RG_INDIA)),
        [100, 0],
    ),
    _score(
        "Affinity with pods matching NamespaceSelector",
        _p(S1, aff=ANTI_AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        [
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam1.team2"),
            _p(S1, "node2", ns="subteam2.team1"),
        ],
        (("node1", RG_CHINA_NODES), ("node2", RG_INDIA)),
        [0, 100],
    ),
    _score(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        _p(S1, aff=ANTI_AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        [
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam1.team1"),
            _p(S1, "node1", ns="subteam2.team2"),
            _p(S1, "node2", ns="subteam2.team1"),
        ],
        (("node1", RG_CHINA_NODES), ("node2", RG_INDIA)),
        [0, 100],
    ),
    _score(
        "Ignore preferred terms of existing pods",
        _p(S2),
        [_p(S1, "node1", STAY_WITH_S1_AWAY_FROM_S2), _p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        (("node1", RG_CHINA_NODES), ("node2", RG_INDIA)),
        [0, 0],
        args={"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": True},
    ),
    _score(
        "Do not ignore preferred terms of existing pods",
        _p(S2),
        [_p(S1, "node1", STAY_WITH_S1_AWAY_FROM_S2), _p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        (("node1", RG_CHINA_NODES), ("node2", RG_INDIA)),
        [0, 100],
        args={"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    ),
    _score("No nodes to score", _p(S2), [], (), None),
]


def check_score_case(case: ScoreCase, namespaces=SCORING_NAMESPACES):
    cluster = build_cluster(case.nodes, case.pods, namespaces=namespaces)
    scheduler = vcore.Scheduler(cluster, plugin_profile(PLUGIN, case.args))
    pod = incoming(case.pod)
    if case.invalid is not None:
        with pytest.raises(ValueError, match=case.invalid):
            scheduler.score(pod)
        return
    assert scheduler.score(pod) == case.want


@pytest.mark.parametrize("case", PREFERRED_CASES, ids=[c.name for c in PREFERRED_CASES])
def test_preferred_affinity(case):
    check_score_case(case)


# ---------------------------------------------------------------------------------------------------------------
# TestPreferredAffinityWithHardPodAffinitySymmetricWeight
# ---------------------------------------------------------------------------------------------------------------
# The table lists namespace "", its name for the default namespace (as for every pod it leaves without one); in
# vcore, as in a real cluster, that namespace is "default".
HARD_POD_AFFINITY = affinity(
    required=[
        affinity_term(
            "region", expr("service", "In", "S1"), namespaces=["default", "subteam2.team2"], namespace_selector=TEAM1
        )
    ]
)
SERVICE_S1 = {"service": "S1"}
HARD_NODES = (("node1", RG_CHINA_NODES), ("node2", RG_INDIA), ("node3", AZ1))
HARD_EXISTING = [_p(None, "node1", HARD_POD_AFFINITY), _p(None, "node2", HARD_POD_AFFINITY)]

HARD_WEIGHT_CASES = [
    _score(
        "with default weight",
        _p(SERVICE_S1),
        HARD_EXISTING,
        HARD_NODES,
        [100, 100, 0],
        args={"hardPodAffinityWeight": 1},
    ),
    _score("with zero weight", _p(SERVICE_S1), HARD_EXISTING, HARD_NODES, None, args={"hardPodAffinityWeight": 0}),
    _score(
        "with no matching namespace",
        _p(SERVICE_S1, ns="subteam1.team2"),
        HARD_EXISTING,
        HARD_NODES,
        None,
        args={"hardPodAffinityWeight": 1},
    ),
    _score(
        "with matching NamespaceSelector",
        _p(SERVICE_S1, ns="subteam1.team1"),
        HARD_EXISTING,
        HARD_NODES,
        [100, 100, 0],
        args={"hardPodAffinityWeight": 1},
    ),
    _score(
        "with matching Namespaces",
        _p(SERVICE_S1, ns="subteam2.team2"),
        HARD_EXISTING,
        HARD_NODES,
        [100, 100, 0],
        args={"hardPodAffinityWeight": 1},
    ),
]


@pytest.mark.parametrize("case", HARD_WEIGHT_CASES, ids=[c.name for c in HARD_WEIGHT_CASES])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(case):
    check_score_case(case)
