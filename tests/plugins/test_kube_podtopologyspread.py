"""kube-scheduler v1.34.4's PodTopologySpread unit-test tables (pkg/scheduler/framework/plugins/podtopologyspread/
filtering_test.go and scoring_test.go), case by case, run through vcore's public API.

Filter tables: PreFilter + Filter per node becomes the node's filter outcome (feasible, or the reason: Unschedulable
is "node(s) didn't match pod topology spread constraints", UnschedulableAndUnresolvable the "(missing required
label)" one). Tables of PreFilter state (TestPreFilterState, TestPreFilterStateAddPod, TestPreFilterStateRemovePod)
become (1) the filter outcome kube's Filter draws from the expected state on every node (``filter_from_state``),
after binding the added pod or unbinding the removed one, and (2) the expected match counts themselves, read back
through the filter: the pod again with one hard constraint at a given maxSkew and minDomains past any domain count
(so the global minimum is 0) fits a node exactly when its domain's count plus the pod's own match is at most that
maxSkew. Score tables: PreScore + Score + NormalizeScore becomes ``Scheduler.score`` with PodTopologySpread alone at
weight 1; the table's "failedNodes" (in the cluster, not candidates) are nodes with no room for a pod, filtered out
by NodeResourcesFit, which PodTopologySpread does not look at. TestPreScoreStateEmptyNodes becomes the scores kube
draws from the expected state (no pods: every count 0).

Feature gates: kube's tables run many cases with NodeInclusionPolicyInPodTopologySpread or
MatchLabelKeysInPodTopologySpread off. vcore has both on (kube v1.34's defaults; the first is GA and locked on). A
gate-off case whose pod sets no field the gate governs (nodeAffinityPolicy/nodeTaintsPolicy; matchLabelKeys) behaves
the same with the gate on, and runs; one that sets such a field is skipped, saying so.

Inputs the API server refuses, which kube's tables feed the plugin directly (two constraints with the same
topologyKey and whenUnsatisfiable; minDomains with ScheduleAnyway): vcore refuses the pod naming the field.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pytest

import vcore
from tests.plugins import interpod_reference as iref
from tests.plugins.kube_builders import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME,
    IGNORE,
    SCHEDULE_ANYWAY,
    UNSCHEDULABLE_TAINT,
    ZONE,
    Pod,
    Sel,
    build_cluster,
    filter_per_node,
    incoming,
    make_node,
    plugin_profile,
    replica_set,
    service,
)

PLUGIN = "PodTopologySpread"
R_SKEW = "node(s) didn't match pod topology spread constraints"
R_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
LIST = {"defaultingType": "List"}
MAX_INT32 = 2**31 - 1
FOO = Sel().exists("foo").obj()
BAR = Sel().exists("bar").obj()
TAINTS = [UNSCHEDULABLE_TAINT]
NODE_INCLUSION, MATCH_LABEL_KEYS = "NodeInclusionPolicyInPodTopologySpread", "MatchLabelKeysInPodTopologySpread"


def zn(name: str, zone: str | None = None, **extra) -> dict:
    """A node labelled zone=<zone> (if given) and node=<name>, plus ``extra`` labels; taints via ``taints=``."""
    taints = extra.pop("taints", None)
    labels = {} if zone is None else {"zone": zone}
    labels["node"] = name
    labels.update(extra)
    return make_node(name, labels, taints=taints)


def hn(name: str, zone: str | None = None, **extra) -> dict:
    """A node labelled kubernetes.io/hostname=<name> (and zone=<zone> if given)."""
    labels = {HOSTNAME: name}
    if zone is not None:
        labels["zone"] = zone
    labels.update(extra)
    return make_node(name, labels)


STD4 = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def p(name: str, node: str, *labels: str, ns: str | None = None, **valued) -> dict:
    """st.MakePod().Name(name).Node(node).Label(l, "")... .Label(k, v)..."""
    pod = Pod().name(name).node(node)
    for label in labels:
        pod.label(label, "")
    pod.labels(valued)
    if ns is not None:
        pod.namespace(ns)
    return pod.obj()


def foo_pods(*specs: str) -> list[dict]:
    """Pods labelled foo="" from "p-a1@node-a" specs."""
    return [p(s.split("@")[0], s.split("@")[1], "foo") for s in specs]


def gated_fields(pod: dict) -> set[str]:
    """The feature gates whose fields the pod's constraints set."""
    out = set()
    for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
        if "nodeAffinityPolicy" in c or "nodeTaintsPolicy" in c:
            out.add(NODE_INCLUSION)
        if c.get("matchLabelKeys"):
            out.add(MATCH_LABEL_KEYS)
    return out


def skip_if_gated(pod: dict, gates_off: set[str]) -> None:
    hit = sorted(gated_fields(pod) & gates_off)
    if hit:
        pytest.skip(
            f"kube's case runs with feature gate {hit[0]} off and the pod sets a field it governs; vcore "
            "always has the gate on (kube v1.34's default)"
        )


# ---------------------------------------------------------------------------------------------------------------
# Expected PreFilter state, and kube's Filter over it
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class St:
    """One constraint of an expected preFilterState: its key, maxSkew and selector, TpValueToMatchNum and
    CriticalPaths[0].MatchNum (MAX_INT32 for newCriticalPaths())."""

    key: str
    max_skew: int
    selector: dict | None
    counts: dict[str, int]
    critical_min: int
    min_domains: int = 1


def filter_from_state(node_labels: dict[str, str], pod: dict, state: list[St]) -> str | None:
    """kube's Filter on a preFilterState."""
    for c in state:
        if c.key not in node_labels:
            return R_LABEL
        minimum = 0 if len(c.counts) < c.min_domains else c.critical_min
        self_match = 1 if iref.matches(iref.requirements(c.selector), iref.labels_of(pod)) else 0
        if c.counts.get(node_labels[c.key], 0) + self_match - minimum > c.max_skew:
            return R_SKEW
    return None


def _hard_constraints(pod: dict) -> list[int]:
    return [
        i
        for i, c in enumerate(pod["spec"].get("topologySpreadConstraints") or [])
        if c["whenUnsatisfiable"] == DO_NOT_SCHEDULE
    ]


def probe_counts(cluster: vcore.Cluster, profile: dict, pod: dict, state: list[St], nodes: list[dict]) -> None:
    """Read vcore's match count of each hard constraint's domain on every node that has every hard constraint's
    key (those PreFilter counts), and compare with the expected state's TpValueToMatchNum: the pod with constraint i
    at maxSkew m, minDomains past any domain count (the global minimum reads 0) and the other constraints at a
    maxSkew they cannot exceed fits a node exactly when count + self-match <= m."""
    hard = _hard_constraints(pod)
    assert len(hard) == len(state)
    scheduler = vcore.Scheduler(cluster, profile)
    keys = [c.key for c in state]
    names = [n["metadata"]["name"] for n in nodes if all(k in (n["metadata"]["labels"] or {}) for k in keys)]
    for i, (index, want) in enumerate(zip(hard, state)):
        self_match = 1 if iref.matches(iref.requirements(want.selector), iref.labels_of(pod)) else 0
        limit = max(list(want.counts.values()) + [0]) + 2
        for m in range(1, limit + 1):
            probe = copy.deepcopy(pod)
            for j in hard:
                c = probe["spec"]["topologySpreadConstraints"][j]
                c["maxSkew"] = m if j == index else MAX_INT32
                if j == index:
                    c["minDomains"] = MAX_INT32
            got = filter_per_node(scheduler, probe, names)
            for n in nodes:
                name = n["metadata"]["name"]
                if name not in got:
                    continue
                expected = want.counts.get(n["metadata"]["labels"][want.key], 0) + self_match
                assert (got[name] is None) == (expected <= m), (
                    f"constraint {i} ({want.key}) on {name}: expected count+self {expected}, maxSkew {m}, "
                    f"vcore says {got[name]}"
                )


# ---------------------------------------------------------------------------------------------------------------
# TestPreFilterState
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class StateCase:
    name: str
    pod: dict
    nodes: list[dict]
    state: list[St] | None  # None: PreFilter Skip (every node feasible)
    existing: list[dict] = field(default_factory=list)
    defaults: list[dict] | None = None  # List defaulting's defaultConstraints
    services: list[dict] = field(default_factory=list)
    gates_off: set[str] = field(default_factory=lambda: {NODE_INCLUSION, MATCH_LABEL_KEYS})
    invalid: str | None = None


def _on(*gates: str) -> set[str]:
    """The gates off, given those a case turns on."""
    return {NODE_INCLUSION, MATCH_LABEL_KEYS} - set(gates)


LBL_FOO_BAR = Sel().label("foo", "bar").obj()
PRE_FILTER_STATE = [
    StateCase(
        "clean cluster with one spreadConstraint",
        Pod().name("p").label("foo", "").spread(5, "zone", DO_NOT_SCHEDULE, LBL_FOO_BAR).obj(),
        STD4,
        [St("zone", 5, LBL_FOO_BAR, {"zone1": 0, "zone2": 0}, 0)],
    ),
    StateCase(
        "normal case with one spreadConstraint",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        [St("zone", 1, FOO, {"zone1": 3, "zone2": 2}, 2)],
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y"),
    ),
    StateCase(
        "normal case with null label selector",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, None).obj(),
        STD4,
        [St("zone", 1, None, {"zone1": 0, "zone2": 0}, 0)],
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y"),
    ),
    StateCase(
        "normal case with one spreadConstraint, on a 3-zone cluster",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        STD4 + [zn("node-o", "zone3"), zn("node-p", "zone3")],
        [St("zone", 1, FOO, {"zone1": 3, "zone2": 2, "zone3": 0}, 0)],
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y"),
    ),
    StateCase(
        "namespace mismatch doesn't count",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        [St("zone", 1, FOO, {"zone1": 2, "zone2": 1}, 1)],
        [
            p("p-a1", "node-a", "foo"),
            p("p-a2", "node-a", "foo", ns="ns1"),
            p("p-b1", "node-b", "foo"),
            p("p-y1", "node-y", "foo", ns="ns2"),
            p("p-y2", "node-y", "foo"),
        ],
    ),
    StateCase(
        "normal case with two spreadConstraints",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        [
            St("zone", 1, FOO, {"zone1": 3, "zone2": 4}, 3),
            St("node", 1, FOO, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0),
        ],
        foo_pods(
            "p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y", "p-y3@node-y", "p-y4@node-y"
        ),
    ),
    StateCase(
        "soft spreadConstraints should be bypassed",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", SCHEDULE_ANYWAY, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            St("zone", 1, FOO, {"zone1": 3, "zone2": 4}, 3),
            St("node", 1, FOO, {"node-a": 2, "node-b": 1, "node-y": 4}, 1),
        ],
        foo_pods(
            "p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y", "p-y3@node-y", "p-y4@node-y"
        ),
    ),
    StateCase(
        "different labelSelectors - simple version",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, BAR)
        .obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            St("zone", 1, FOO, {"zone1": 1, "zone2": 0}, 0),
            St("node", 1, BAR, {"node-a": 0, "node-b": 1, "node-y": 0}, 0),
        ],
        [p("p-a", "node-a", "foo"), p("p-b", "node-b", "bar")],
    ),
    StateCase(
        "different labelSelectors - complex pods",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, BAR)
        .obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            St("zone", 1, FOO, {"zone1": 3, "zone2": 4}, 3),
            St("node", 1, BAR, {"node-a": 1, "node-b": 0, "node-y": 2}, 0),
        ],
        [
            p("p-a1", "node-a", "foo"),
            p("p-a2", "node-a", "foo", "bar"),
            p("p-b1", "node-b", "foo"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "foo", "bar"),
            p("p-y3", "node-y", "foo"),
            p("p-y4", "node-y", "foo", "bar"),
        ],
    ),
    StateCase(
        "two spreadConstraints, and with podAffinity",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-x"])
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        [
            St("zone", 1, FOO, {"zone1": 3, "zone2": 4}, 3),
            St("node", 1, FOO, {"node-a": 2, "node-b": 1, "node-y": 4}, 1),
        ],
        foo_pods(
            "p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y", "p-y3@node-y", "p-y4@node-y"
        ),
    ),
    StateCase(
        "default constraints and a service",
        Pod().name("p").label("foo", "bar").label("baz", "kar").obj(),
        [],
        [St("node", 3, LBL_FOO_BAR, {}, MAX_INT32), St("rack", 5, LBL_FOO_BAR, {}, MAX_INT32)],
        defaults=[
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SCHEDULE_ANYWAY},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DO_NOT_SCHEDULE},
        ],
        services=[service("svc", {"foo": "bar"})],
    ),
    StateCase(
        "default constraints and a service that doesn't match",
        Pod().name("p").label("foo", "bar").obj(),
        [],
        None,
        defaults=[{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE}],
        services=[service("svc", {"baz": "kep"})],
    ),
    StateCase(
        "default constraints and a service, but pod has constraints",
        Pod()
        .name("p")
        .label("foo", "bar")
        .label("baz", "tar")
        .spread(1, "zone", DO_NOT_SCHEDULE, Sel().label("baz", "tar").obj())
        .spread(2, "planet", SCHEDULE_ANYWAY, Sel().label("fot", "rok").obj())
        .obj(),
        [],
        [St("zone", 1, Sel().label("baz", "tar").obj(), {}, MAX_INT32)],
        defaults=[{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE}],
        services=[service("svc", {"foo": "bar"})],
    ),
    StateCase(
        "default soft constraints and a service",
        Pod().name("p").label("foo", "bar").obj(),
        [],
        None,
        defaults=[{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SCHEDULE_ANYWAY}],
        services=[service("svc", {"foo": "bar"})],
    ),
    StateCase(
        "TpKeyToDomainsNum is calculated when MinDomains is enabled",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        [
            St("zone", 1, FOO, {"zone1": 3, "zone2": 4}, 3),
            St("node", 1, FOO, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0),
        ],
        foo_pods(
            "p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y", "p-y3@node-y", "p-y4@node-y"
        ),
    ),
    StateCase(
        "feature gate disabled with NodeAffinityPolicy",
        Pod().name("p").label("foo", "").node_selector({"foo": ""}).spread(1, "node", DO_NOT_SCHEDULE, BAR).obj(),
        [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c", bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2}, 1)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
    ),
    StateCase(
        "NodeAffinityPolicy honored with labelSelectors",
        Pod().name("p").label("foo", "").node_selector({"foo": ""}).spread(1, "node", DO_NOT_SCHEDULE, BAR).obj(),
        [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c", bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2}, 1)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "NodeAffinityPolicy ignored with labelSelectors",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "node", DO_NOT_SCHEDULE, BAR, node_affinity_policy=IGNORE)
        .obj(),
        [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c", bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "NodeAffinityPolicy honored with nodeAffinity",
        Pod().name("p").label("foo", "").node_affinity_in("foo", [""]).spread(1, "node", DO_NOT_SCHEDULE, BAR).obj(),
        [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c", bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2}, 1)],
        [p("p-a", "node-a", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-b", "bar"), p("p-e", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "NodeAffinityPolicy ignored with nodeAffinity",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread(1, "node", DO_NOT_SCHEDULE, BAR, node_affinity_policy=IGNORE)
        .obj(),
        [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c", bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "feature gate disabled with NodeTaintsPolicy",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, BAR).obj(),
        [zn("node-a"), zn("node-b"), zn("node-c", taints=TAINTS, bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
    ),
    StateCase(
        "NodeTaintsPolicy ignored",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, BAR).obj(),
        [zn("node-a"), zn("node-b"), zn("node-c", taints=TAINTS, bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "NodeTaintsPolicy honored",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, BAR, node_taints_policy=HONOR).obj(),
        [zn("node-a"), zn("node-b"), zn("node-c", taints=TAINTS, bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2}, 1)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "NodeTaintsPolicy honored with tolerated taints",
        Pod()
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .spread(1, "node", DO_NOT_SCHEDULE, BAR, node_taints_policy=HONOR)
        .obj(),
        [zn("node-a"), zn("node-b"), zn("node-c", taints=TAINTS, bar="")],
        [St("node", 1, BAR, {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
        [p("p-a", "node-a", "bar"), p("p-b", "node-b", "bar"), p("p-c", "node-b", "bar"), p("p-d", "node-c")],
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO, node_affinity_policy=IGNORE)
        .obj(),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        [
            St("zone", 1, FOO, {"zone1": 0, "zone2": 1}, 0),
            St("node", 1, FOO, {"node-a": 0, "node-b": 2, "node-x": 1}, 0),
        ],
        foo_pods("p-b1@node-b", "p-b2@node-b", "p-x1@node-x"),
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO, node_taints_policy=HONOR)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", taints=TAINTS), zn("node-x", "zone2", foo="")],
        [
            St("zone", 1, FOO, {"zone1": 0, "zone2": 1}, 0),
            St("node", 1, FOO, {"node-a": 0, "node-b": 2, "node-x": 1}, 0),
        ],
        foo_pods("p-b1@node-b", "p-b2@node-b", "p-x1@node-x"),
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1", taints=TAINTS, foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        [St("zone", 1, FOO, {"zone1": 0, "zone2": 1}, 0), St("node", 1, FOO, {"node-b": 0, "node-x": 1}, 0)],
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-x1@node-x", "p-y1@node-y"),
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO, node_affinity_policy=IGNORE)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO, node_taints_policy=HONOR)
        .obj(),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1", taints=TAINTS, foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", foo=""),
        ],
        [St("zone", 1, FOO, {"zone1": 2, "zone2": 3}, 2), St("node", 1, FOO, {"node-x": 2, "node-y": 1}, 1)],
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-x1@node-x", "p-x2@node-x", "p-y1@node-y"),
        gates_off=_on(NODE_INCLUSION),
    ),
    StateCase(
        "matchLabelKeys ignored when feature gate disabled",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO, match_label_keys=["bar"])
        .obj(),
        STD4,
        [St("zone", 1, FOO, {"zone1": 3, "zone2": 2}, 2)],
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y"),
    ),
    StateCase(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "a")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO, match_label_keys=["bar"])
        .obj(),
        STD4,
        [St("zone", 1, Sel().exists("foo").label("bar", "a").obj(), {"zone1": 1, "zone2": 1}, 1)],
        [
            p("p-a1", "node-a", "foo"),
            p("p-a2", "node-a", "foo", bar="a"),
            p("p-b1", "node-b", "foo"),
            p("p-y1", "node-y", "foo", bar="a"),
            p("p-y2", "node-y", "bar"),
        ],
        gates_off=_on(MATCH_LABEL_KEYS),
    ),
    StateCase(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        Pod().name("p").label("foo", "a").spread(1, "zone", DO_NOT_SCHEDULE, {}, match_label_keys=["foo"]).obj(),
        STD4,
        [St("zone", 1, Sel().label("foo", "a").obj(), {"zone1": 3, "zone2": 2}, 2)],
        [
            p(n, node, foo="a")
            for n, node in (
                ("p-a1", "node-a"),
                ("p-a2", "node-a"),
                ("p-b1", "node-b"),
                ("p-y1", "node-y"),
                ("p-y2", "node-y"),
            )
        ],
        gates_off=_on(MATCH_LABEL_KEYS),
    ),
    StateCase(
        "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, None, match_label_keys=["bar"]).obj(),
        STD4,
        [St("zone", 1, None, {"zone1": 0, "zone2": 0}, 0)],
        [
            p(n, node, foo="a")
            for n, node in (
                ("p-a1", "node-a"),
                ("p-a2", "node-a"),
                ("p-b1", "node-b"),
                ("p-y1", "node-y"),
                ("p-y2", "node-y"),
            )
        ],
        gates_off=_on(MATCH_LABEL_KEYS),
    ),
    StateCase(
        "no pod is matched when LabelSelector is nil when feature gate disabled",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, None, match_label_keys=["bar"]).obj(),
        STD4,
        [St("zone", 1, None, {"zone1": 0, "zone2": 0}, 0)],
        [
            p(n, node, foo="a")
            for n, node in (
                ("p-a1", "node-a"),
                ("p-a2", "node-a"),
                ("p-b1", "node-b"),
                ("p-y1", "node-y"),
                ("p-y2", "node-y"),
            )
        ],
    ),
    StateCase(
        "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO, match_label_keys=["bar"]).obj(),
        STD4,
        [St("zone", 1, FOO, {"zone1": 3, "zone2": 2}, 2)],
        [
            p(n, node, foo="a")
            for n, node in (
                ("p-a1", "node-a"),
                ("p-a2", "node-a"),
                ("p-b1", "node-b"),
                ("p-y1", "node-y"),
                ("p-y2", "node-y"),
            )
        ],
        gates_off=_on(MATCH_LABEL_KEYS),
    ),
    # The API server refuses two constraints with the same {topologyKey, whenUnsatisfiable}
    # (ValidateTopologySpreadConstraints: "Duplicate value"); so does vcore.
    StateCase(
        "two spreadConstraints with the same topologyKey",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "zone", DO_NOT_SCHEDULE, BAR)
        .obj(),
        STD4,
        None,
        invalid=r"spec\.topologySpreadConstraints\[1\]: duplicate \{'zone', 'DoNotSchedule'\} pair",
    ),
    StateCase("skip if not specified", Pod().name("p").label("foo", "").obj(), [zn("node-a", "zone1")], None),
]


def _filter_profile(defaults: list[dict] | None) -> dict:
    args = dict(LIST)
    if defaults:
        args["defaultConstraints"] = defaults
    return plugin_profile(PLUGIN, args)


@pytest.mark.parametrize("case", PRE_FILTER_STATE, ids=[c.name for c in PRE_FILTER_STATE])
def test_prefilter_state(case):
    skip_if_gated(case.pod, case.gates_off)
    cluster = build_cluster(case.nodes, case.existing, services=case.services)
    profile = _filter_profile(case.defaults)
    scheduler = vcore.Scheduler(cluster, profile)
    pod = incoming(case.pod)
    if case.invalid is not None:
        with pytest.raises(ValueError, match=case.invalid):
            scheduler.filter(pod)
        return
    names = [n["metadata"]["name"] for n in case.nodes]
    want = {
        n["metadata"]["name"]: filter_from_state(n["metadata"]["labels"], pod, case.state or []) for n in case.nodes
    }
    assert filter_per_node(scheduler, pod, names) == want
    if case.state and not case.defaults:
        probe_counts(cluster, profile, pod, case.state, case.nodes)


# ---------------------------------------------------------------------------------------------------------------
# TestPreFilterStateAddPod: AddPod becomes binding the pod
# ---------------------------------------------------------------------------------------------------------------
def node_c(key: str, counts: dict, critical_min: int, selector: dict | None = FOO) -> St:
    return St(key, 1, selector, counts, critical_min)


@dataclass
class AddCase:
    name: str
    preemptor: dict
    added: dict
    existing: list[dict]
    nodes: list[dict]
    state: list[St]
    gates_off: set[str] = field(default_factory=lambda: {NODE_INCLUSION, MATCH_LABEL_KEYS})


AB = [zn("node-a", "zone1"), zn("node-b", "zone1")]
AX = [zn("node-a", "zone1"), zn("node-x", "zone2")]
ABX = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
NODE_ONE = Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, FOO).obj()
ZONE_NODE = (
    Pod()
    .name("p")
    .label("foo", "")
    .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
    .spread(1, "node", DO_NOT_SCHEDULE, FOO)
    .obj()
)
ZONE_NODE_BAR = (
    Pod()
    .name("p")
    .label("foo", "")
    .label("bar", "")
    .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
    .spread(1, "node", DO_NOT_SCHEDULE, BAR)
    .obj()
)
ZONE_ONE = Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj()
ZONE_ONE_NOT_BAR = (
    Pod().name("p").label("foo", "").node_affinity_not_in("foo", ["bar"]).spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj()
)
AB_FOO = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
AB_TAINTED = [zn("node-a", "zone1", taints=TAINTS), zn("node-b", "zone2")]

ADD_POD = [
    AddCase(
        "node a and b both impact current min match",
        NODE_ONE,
        p("p-a1", "node-a", "foo"),
        [],
        AB,
        [node_c("node", {"node-a": 1, "node-b": 0}, 0)],
    ),
    AddCase(
        "only node a impacts current min match",
        NODE_ONE,
        p("p-a1", "node-a", "foo"),
        [p("p-b1", "node-b", "foo")],
        AB,
        [node_c("node", {"node-a": 1, "node-b": 1}, 1)],
    ),
    AddCase(
        "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        NODE_ONE,
        p("p-a1", "node-a", "foo", ns="ns1"),
        [p("p-b1", "node-b", "foo")],
        AB,
        [node_c("node", {"node-a": 0, "node-b": 1}, 0)],
    ),
    AddCase(
        "add pod on non-critical node won't trigger re-calculation",
        NODE_ONE,
        p("p-b2", "node-b", "foo"),
        [p("p-b1", "node-b", "foo")],
        AB,
        [node_c("node", {"node-a": 0, "node-b": 2}, 0)],
    ),
    AddCase(
        "node a and x both impact topologyKeyToMinPodsMap on zone and node",
        ZONE_NODE,
        p("p-a1", "node-a", "foo"),
        [],
        AX,
        [node_c("zone", {"zone1": 1, "zone2": 0}, 0), node_c("node", {"node-a": 1, "node-x": 0}, 0)],
    ),
    AddCase(
        "only node a impacts topologyKeyToMinPodsMap on zone and node",
        ZONE_NODE,
        p("p-a1", "node-a", "foo"),
        [p("p-x1", "node-x", "foo")],
        AX,
        [node_c("zone", {"zone1": 1, "zone2": 1}, 1), node_c("node", {"node-a": 1, "node-x": 1}, 1)],
    ),
    AddCase(
        "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
        ZONE_NODE,
        p("p-a1", "node-a", "foo"),
        [p("p-b1", "node-b", "foo"), p("p-b2", "node-b", "foo"), p("p-x1", "node-x", "foo")],
        ABX,
        [node_c("zone", {"zone1": 3, "zone2": 1}, 1), node_c("node", {"node-a": 1, "node-b": 2, "node-x": 1}, 1)],
    ),
    AddCase(
        "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
        ZONE_NODE_BAR,
        p("p-a1", "node-a", "foo"),
        [p("p-b1", "node-b", "foo", "bar"), p("p-x1", "node-x", "foo", "bar"), p("p-x2", "node-x", "bar")],
        ABX,
        [node_c("zone", {"zone1": 2, "zone2": 1}, 1), node_c("node", {"node-a": 0, "node-b": 1, "node-x": 2}, 0, BAR)],
    ),
    AddCase(
        "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
        ZONE_NODE_BAR,
        p("p-a1", "node-a", "foo", "bar"),
        [p("p-b1", "node-b", "bar"), p("p-x1", "node-x", "foo", "bar"), p("p-x2", "node-x", "bar")],
        ABX,
        [node_c("zone", {"zone1": 1, "zone2": 1}, 1), node_c("node", {"node-a": 1, "node-b": 1, "node-x": 2}, 1, BAR)],
    ),
    AddCase(
        "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
        ZONE_ONE_NOT_BAR,
        p("p-a1", "node-a", "foo", zone="zone1"),
        [p("p-a2", "node-a", "foo", zone="zone1"), p("p-b1", "node-b", "foo", zone="zone2")],
        AB_FOO,
        [node_c("zone", {"zone2": 1}, 1)],
    ),
    AddCase(
        "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        ZONE_ONE_NOT_BAR,
        p("p-a1", "node-a", "foo", zone="zone1"),
        [p("p-a2", "node-a", "foo", zone="zone1"), p("p-b1", "node-b", "foo", zone="zone2")],
        AB_FOO,
        [node_c("zone", {"zone2": 1}, 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    AddCase(
        "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
        ZONE_ONE,
        p("p-b1", "node-b", "foo", zone="zone2"),
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        AB_FOO,
        [node_c("zone", {"zone1": 1, "zone2": 2}, 1)],
    ),
    AddCase(
        "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        ZONE_ONE,
        p("p-b1", "node-b", "foo", zone="zone2"),
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        AB_FOO,
        [node_c("zone", {"zone1": 1, "zone2": 2}, 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    AddCase(
        "add a label selector not matched pod when with NodeInclusionPolicy enabled",
        ZONE_ONE,
        p("p-b1", "node-b", zone="zone2"),
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        AB_FOO,
        [node_c("zone", {"zone1": 1, "zone2": 1}, 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    AddCase(
        "add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
        ZONE_ONE,
        p("p-b1", "node-b", "foo", zone="zone2"),
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        AB_TAINTED,
        [node_c("zone", {"zone1": 1, "zone2": 2}, 1)],
    ),
    AddCase(
        "add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
        Pod()
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .obj(),
        p("p-b1", "node-b", "foo", zone="zone2"),
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        AB_TAINTED,
        [node_c("zone", {"zone1": 1, "zone2": 2}, 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
]


def _check_state(cluster, pod, nodes, state):
    profile = _filter_profile(None)
    scheduler = vcore.Scheduler(cluster, profile)
    want = {n["metadata"]["name"]: filter_from_state(n["metadata"]["labels"], pod, state) for n in nodes}
    assert filter_per_node(scheduler, pod, [n["metadata"]["name"] for n in nodes]) == want
    probe_counts(cluster, profile, pod, state, nodes)


@pytest.mark.parametrize("case", ADD_POD, ids=[c.name for c in ADD_POD])
def test_prefilter_state_add_pod(case):
    skip_if_gated(case.preemptor, case.gates_off)
    cluster = build_cluster(case.nodes, case.existing)
    cluster.bind(case.added, case.added["spec"]["nodeName"])
    _check_state(cluster, incoming(case.preemptor), case.nodes, case.state)


# ---------------------------------------------------------------------------------------------------------------
# TestPreFilterStateRemovePod: RemovePod becomes unbinding the pod
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class RemoveCase:
    name: str
    preemptor: dict
    nodes: list[dict]
    existing: list[dict]
    removed: str | None  # the bound pod to unbind (None: a pod that is not bound)
    state: list[St]
    gates_off: set[str] = field(default_factory=lambda: {NODE_INCLUSION, MATCH_LABEL_KEYS})


ABXY = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
# kube's last two cases leave deletedPodIdx at 0, so RemovePod gets existingPods[0] (p-a1, bound on node-a) with
# node-b's NodeInfo; RemovePod reads only the pod's namespace and labels and the node given, so that is a pod which
# the selector sees as p-b2 leaving node-b: the observable translation unbinds p-b2.
REMOVE_POD = [
    RemoveCase(
        "one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        ZONE_ONE,
        ABX,
        foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x"),
        "p-a1",
        [node_c("zone", {"zone1": 1, "zone2": 1}, 1)],
    ),
    RemoveCase(
        "one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        ZONE_ONE,
        ABXY,
        foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
        "p-a1",
        [node_c("zone", {"zone1": 1, "zone2": 2}, 1)],
    ),
    RemoveCase(
        "delete an irrelevant pod won't help",
        ZONE_ONE,
        ABXY,
        [p("p-a0", "node-a", "bar")] + foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
        "p-a0",
        [node_c("zone", {"zone1": 2, "zone2": 2}, 2)],
    ),
    RemoveCase(
        "delete a non-existing pod won't help",
        ZONE_ONE,
        ABXY,
        foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
        None,
        [node_c("zone", {"zone1": 2, "zone2": 2}, 2)],
    ),
    RemoveCase(
        "two spreadConstraints",
        ZONE_NODE,
        ABX,
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-x1@node-x", "p-x2@node-x"),
        "p-x1",
        [node_c("zone", {"zone1": 3, "zone2": 1}, 1), node_c("node", {"node-a": 2, "node-b": 1, "node-x": 1}, 1)],
    ),
    RemoveCase(
        "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
        ZONE_ONE_NOT_BAR,
        AB_FOO,
        [p("p-a2", "node-a", "foo", zone="zone1"), p("p-b1", "node-b", "foo", zone="zone2")],
        "p-a2",
        [node_c("zone", {"zone2": 1}, 1)],
    ),
    RemoveCase(
        "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        ZONE_ONE_NOT_BAR,
        AB_FOO,
        [p("p-a2", "node-a", "foo", zone="zone1"), p("p-b1", "node-b", "foo", zone="zone2")],
        "p-a2",
        [node_c("zone", {"zone2": 1}, 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    RemoveCase(
        "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
        ZONE_ONE,
        AB_FOO,
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        "p-b2",
        [node_c("zone", {"zone2": 0, "zone1": 1}, 0)],
    ),
    RemoveCase(
        "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        ZONE_ONE,
        AB_FOO,
        [p("p-a1", "node-a", "foo", zone="zone1"), p("p-b2", "node-b", "foo", zone="zone2")],
        "p-b2",
        [node_c("zone", {"zone2": 0, "zone1": 1}, 0)],
        gates_off=_on(NODE_INCLUSION),
    ),
]


@pytest.mark.parametrize("case", REMOVE_POD, ids=[c.name for c in REMOVE_POD])
def test_prefilter_state_remove_pod(case):
    skip_if_gated(case.preemptor, case.gates_off)
    cluster = build_cluster(case.nodes, case.existing)
    if case.removed is None:
        with pytest.raises(vcore.PodNotFoundError):
            cluster.unbind("default/p-a0")
    else:
        cluster.unbind(f"default/{case.removed}")
    _check_state(cluster, incoming(case.preemptor), case.nodes, case.state)


# ---------------------------------------------------------------------------------------------------------------
# TestSingleConstraint, TestMultipleConstraints
# ---------------------------------------------------------------------------------------------------------------
OK, SKEW, LABEL = None, R_SKEW, R_LABEL  # fwk.Success, Unschedulable, UnschedulableAndUnresolvable


def _codes(nodes, *codes):
    return dict(zip([n["metadata"]["name"] for n in nodes], codes))


@dataclass
class CodeCase:
    name: str
    pod: dict
    nodes: list[dict]
    existing: list[dict]
    want: dict[str, str | None]
    gates_off: set[str] = field(default_factory=lambda: {NODE_INCLUSION, MATCH_LABEL_KEYS})
    invalid: str | None = None


def _cc(name, pod, nodes, existing, *codes, gates_off=None, invalid=None):
    return CodeCase(
        name,
        pod,
        nodes,
        existing,
        _codes(nodes, *codes),
        {NODE_INCLUSION, MATCH_LABEL_KEYS} if gates_off is None else gates_off,
        invalid,
    )


N3 = [zn("node-a"), zn("node-b"), zn("node-c")]
FOO4 = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-x", foo=""), zn("node-y")]
FOO4_TAINTED = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-x", foo=""), zn("node-y", taints=TAINTS)]
B1_B2_Y1 = [p("p-b1", "node-a", "foo"), p("p-b2", "node-b", "foo"), p("p-y1", "node-y", "foo")]
SPREAD_2103 = foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-y1@node-y", "p-y2@node-y", "p-y3@node-y")
SINGLE = [
    _cc(
        "no existing pods",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        [],
        OK,
        OK,
        OK,
        OK,
    ),
    _cc(
        "no existing pods, incoming pod doesn't match itself",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, BAR).obj(),
        STD4,
        [],
        OK,
        OK,
        OK,
        OK,
    ),
    _cc(
        "existing pods in a different namespace do not count",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        [
            p("p-a1", "node-a", "foo", ns="ns1"),
            p("p-b1", "node-a", "foo", ns="ns2"),
            p("p-x1", "node-x", "foo"),
            p("p-y1", "node-y", "foo"),
        ],
        OK,
        OK,
        SKEW,
        SKEW,
    ),
    _cc(
        "existing pods do not match null selector",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, None).obj(),
        STD4,
        foo_pods("p-x1@node-x", "p-y1@node-y"),
        OK,
        OK,
        OK,
        OK,
    ),
    _cc(
        "pods spread across zones as 3/3, all nodes fit",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        SPREAD_2103,
        OK,
        OK,
        OK,
        OK,
    ),
    _cc(
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        Pod().name("p").label("foo", "").spread(1, "zone", DO_NOT_SCHEDULE, FOO).obj(),
        [
            zn("node-a", "zone1"),
            make_node("node-b", {"zon": "zone1", "node": "node-b"}),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        foo_pods("p-a1@node-a", "p-b1@node-b", "p-x1@node-x", "p-y1@node-y"),
        OK,
        LABEL,
        SKEW,
        SKEW,
    ),
    _cc(
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        Pod().name("p").label("foo", "").spread(1, "rack", DO_NOT_SCHEDULE, FOO).obj(),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        LABEL,
        LABEL,
    ),
    _cc(
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        SPREAD_2103,
        SKEW,
        SKEW,
        OK,
        SKEW,
    ),
    _cc(
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        Pod().name("p").label("foo", "").spread(2, "node", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        SPREAD_2103,
        SKEW,
        OK,
        OK,
        SKEW,
    ),
    _cc(
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        Pod().name("p").label("bar", "").spread(1, "node", DO_NOT_SCHEDULE, FOO).obj(),
        STD4,
        SPREAD_2103,
        SKEW,
        OK,
        OK,
        SKEW,
    ),
    _cc(
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("node", ["node-a", "node-y"])
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        SPREAD_2103,
        OK,
        OK,
        OK,
        SKEW,
    ),
    _cc(
        "terminating Pods should be excluded",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, FOO).obj(),
        [zn("node-a"), zn("node-b")],
        [Pod().name("p-a").node("node-a").label("foo", "").terminating().obj(), p("p-b", "node-b", "foo")],
        OK,
        SKEW,
    ),
    _cc(
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-b"])
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        foo_pods("p-b1@node-b", "p-b2@node-b", "p-y1@node-y"),
        OK,
        OK,
        SKEW,
        SKEW,
    ),
    _cc(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third "
        "node fits",
        Pod().name("p").label("foo", "").spread(2, "node", DO_NOT_SCHEDULE, FOO, min_domains=4).obj(),
        N3,
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-b2@node-b", "p-c1@node-c"),
        SKEW,
        SKEW,
        OK,
    ),
    _cc(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes "
        "fit",
        Pod().name("p").label("foo", "").spread(2, "node", DO_NOT_SCHEDULE, FOO, min_domains=2).obj(),
        N3,
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-b2@node-b", "p-c1@node-c"),
        OK,
        OK,
        OK,
    ),
    _cc(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and "
        "fourth nodes fit",
        Pod().name("p").label("foo", "").spread(2, "zone", DO_NOT_SCHEDULE, FOO, min_domains=3).obj(),
        STD4,
        foo_pods("p-b1@node-a", "p-b2@node-b", "p-y1@node-y"),
        SKEW,
        SKEW,
        OK,
        OK,
    ),
    _cc(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        Pod().name("p").label("foo", "").spread(2, "zone", DO_NOT_SCHEDULE, FOO, min_domains=1).obj(),
        STD4,
        foo_pods("p-b1@node-a", "p-b2@node-b", "p-y1@node-y"),
        OK,
        OK,
        OK,
        OK,
    ),
    _cc(
        "NodeAffinityPolicy honored with labelSelectors",
        Pod().name("p").label("foo", "").node_selector({"foo": ""}).spread(1, "node", DO_NOT_SCHEDULE, FOO).obj(),
        FOO4,
        B1_B2_Y1,
        SKEW,
        SKEW,
        OK,
        OK,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "NodeAffinityPolicy ignored with labelSelectors",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "node", DO_NOT_SCHEDULE, FOO, node_affinity_policy=IGNORE)
        .obj(),
        FOO4,
        B1_B2_Y1,
        SKEW,
        SKEW,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "NodeAffinityPolicy honored with nodeAffinity",
        Pod().name("p").label("foo", "").node_affinity_in("foo", [""]).spread(1, "node", DO_NOT_SCHEDULE, FOO).obj(),
        FOO4,
        B1_B2_Y1,
        SKEW,
        SKEW,
        OK,
        OK,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "NodeAffinityPolicy ignored with labelSelectors",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread(1, "node", DO_NOT_SCHEDULE, FOO, node_affinity_policy=IGNORE)
        .obj(),
        FOO4,
        B1_B2_Y1,
        SKEW,
        SKEW,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "NodeTaintsPolicy honored",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, FOO, node_taints_policy=HONOR).obj(),
        FOO4_TAINTED,
        B1_B2_Y1,
        SKEW,
        SKEW,
        OK,
        OK,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "NodeTaintsPolicy ignored",
        Pod().name("p").label("foo", "").spread(1, "node", DO_NOT_SCHEDULE, FOO).obj(),
        FOO4_TAINTED,
        B1_B2_Y1,
        SKEW,
        SKEW,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
]

ZONE_NODE_FOO4 = [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo="")]
A1_B1_Y1 = foo_pods("p-a1@node-a", "p-b1@node-b", "p-y1@node-y")
MULTIPLE = [
    _cc(
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", ZONE_NODE, STD4, SPREAD_2103, SKEW, SKEW, OK, SKEW
    ),
    _cc(
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        ZONE_NODE,
        STD4,
        SPREAD_2103 + foo_pods("p-y4@node-y"),
        SKEW,
        SKEW,
        SKEW,
        SKEW,
    ),
    _cc(
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        ZONE_NODE_BAR,
        STD4,
        [p("p-a1", "node-a", "foo"), p("p-y1", "node-y", "bar")],
        SKEW,
        SKEW,
        OK,
        SKEW,
    ),
    _cc(
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        ZONE_NODE_BAR,
        STD4,
        [p("p-a1", "node-a", "foo"), p("p-x1", "node-x", "bar"), p("p-y1", "node-y", "bar")],
        SKEW,
        SKEW,
        SKEW,
        SKEW,
    ),
    _cc(
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        ZONE_NODE_BAR,
        STD4,
        [
            p("p-a1", "node-a", "foo"),
            p("p-a2", "node-a", "foo", "bar"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "foo", "bar"),
            p("p-y3", "node-y", "foo"),
        ],
        SKEW,
        OK,
        SKEW,
        SKEW,
    ),
    _cc(
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        Pod()
        .name("p")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, BAR)
        .obj(),
        STD4,
        [p("p-a1", "node-a", "foo"), p("p-x1", "node-x", "bar"), p("p-y1", "node-y", "bar")],
        OK,
        OK,
        SKEW,
        SKEW,
    ),
    _cc(
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        ZONE_NODE,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), make_node("node-x", {"zone": "zone2"}), zn("node-y", "zone2")],
        foo_pods("p-a1@node-a", "p-y3@node-y"),
        SKEW,
        OK,
        LABEL,
        SKEW,
    ),
    _cc(
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO, node_affinity_policy=IGNORE)
        .obj(),
        ZONE_NODE_FOO4 + [zn("node-y", "zone2")],
        A1_B1_Y1,
        SKEW,
        SKEW,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO, node_taints_policy=HONOR)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        ZONE_NODE_FOO4 + [zn("node-y", "zone2", taints=TAINTS)],
        A1_B1_Y1,
        SKEW,
        SKEW,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO)
        .obj(),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", taints=TAINTS, foo=""),
        ],
        A1_B1_Y1,
        SKEW,
        OK,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
    _cc(
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO, node_taints_policy=HONOR)
        .spread(1, "node", DO_NOT_SCHEDULE, FOO, node_affinity_policy=IGNORE)
        .obj(),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", taints=TAINTS, foo=""),
        ],
        A1_B1_Y1,
        SKEW,
        SKEW,
        OK,
        SKEW,
        gates_off=_on(NODE_INCLUSION),
    ),
    # The API server refuses two constraints with the same {topologyKey, whenUnsatisfiable}; so does vcore.
    _cc(
        "two Constraints on zone, spreads = [3/3, 2/1]",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, BAR)
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        [],
        OK,
        OK,
        OK,
        OK,
        invalid=r"spec\.topologySpreadConstraints\[1\]: duplicate \{'zone', 'DoNotSchedule'\} pair",
    ),
    _cc(
        "two Constraints on zone, spreads = [3/4, 2/1]",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", DO_NOT_SCHEDULE, BAR)
        .spread(1, "zone", DO_NOT_SCHEDULE, FOO)
        .obj(),
        STD4,
        [],
        OK,
        OK,
        OK,
        OK,
        invalid=r"spec\.topologySpreadConstraints\[1\]: duplicate \{'zone', 'DoNotSchedule'\} pair",
    ),
]


def _check_codes(case: CodeCase):
    skip_if_gated(case.pod, case.gates_off)
    scheduler = vcore.Scheduler(build_cluster(case.nodes, case.existing), _filter_profile(None))
    pod = incoming(case.pod)
    if case.invalid is not None:
        with pytest.raises(ValueError, match=case.invalid):
            scheduler.filter(pod)
        return
    assert filter_per_node(scheduler, pod, [n["metadata"]["name"] for n in case.nodes]) == case.want


@pytest.mark.parametrize("case", SINGLE, ids=[c.name for c in SINGLE])
def test_single_constraint(case):
    _check_codes(case)


@pytest.mark.parametrize("case", MULTIPLE, ids=[c.name for c in MULTIPLE])
def test_multiple_constraints(case):
    _check_codes(case)


# ---------------------------------------------------------------------------------------------------------------
# TestPreScoreSkip, TestPreScoreStateEmptyNodes
# ---------------------------------------------------------------------------------------------------------------
def _score_profile(args: dict | None, *, failed: bool = False) -> dict:
    return plugin_profile(PLUGIN, args, filters=("NodeResourcesFit",) if failed else ())


@pytest.mark.parametrize(
    "pod,args,nodes,replica_sets",
    [
        pytest.param(
            Pod().name("p").namespace("default").obj(),
            LIST,
            [hn("node-a"), hn("node-b")],
            [],
            id="the pod doesn't have soft topology spread Constraints",
        ),
        pytest.param(
            Pod()
            .name("p")
            .namespace("default")
            .label("foo", "bar")
            .label("baz", "sup")
            .owner_reference("rs2", "apps/v1", "ReplicaSet")
            .obj(),
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SCHEDULE_ANYWAY}],
            },
            [make_node("node-a", {"planet": "mars"})],
            [replica_set("rs1", Sel().exists("tar").obj())],
            id="default constraints and a replicaset that doesn't match",
        ),
    ],
)
def test_prescore_skip(pod, args, nodes, replica_sets):
    cluster = build_cluster(nodes, replica_sets=replica_sets)
    got = vcore.Scheduler(cluster, _score_profile(args)).score(incoming(pod))
    assert got == {n["metadata"]["name"]: 0 for n in nodes}


@dataclass
class ScoreState:
    """One constraint of an expected preScoreState, as Score reads it with no pods bound."""

    key: str
    max_skew: int


def scores_from_state(nodes: list[dict], state: list[ScoreState], ignored: set[str]) -> dict[str, int]:
    """kube's Score + NormalizeScore on a preScoreState whose counts are all 0."""
    raw = {}
    for n in nodes:
        name, labels = n["metadata"]["name"], n["metadata"]["labels"]
        raw[name] = 0 if name in ignored else sum(c.max_skew - 1 for c in state if c.key in labels)
    scored = [raw[n] for n in raw if n not in ignored]
    lo, hi = (min(scored) if scored else 0), max(scored + [0])
    return {n: 0 if n in ignored else 100 if hi == 0 else 100 * (hi + lo - s) // hi for n, s in raw.items()}


ZH3 = [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")]
ZH3_FOO = [hn("node-a", "zone1", foo=""), hn("node-b", "zone1", foo=""), hn("node-x", "zone2")]
ZH3_TAINT = [
    hn("node-a", "zone1", foo=""),
    hn("node-b", "zone1", foo=""),
    make_node("node-x", {"zone": "zone2", HOSTNAME: "node-x"}, taints=TAINTS),
]
RS1_FOO = [replica_set("rs1", FOO)]


def _es(name, pod, nodes, args, state, ignored=(), replica_sets=(), gates_off=None):
    return pytest.param(
        pod,
        nodes,
        args,
        state,
        set(ignored),
        list(replica_sets),
        {MATCH_LABEL_KEYS, NODE_INCLUSION} if gates_off is None else gates_off,
        id=name,
    )


EMPTY_NODES = [
    _es(
        "normal case",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
        .spread(1, HOSTNAME, SCHEDULE_ANYWAY, FOO)
        .obj(),
        ZH3,
        LIST,
        [ScoreState("zone", 1), ScoreState(HOSTNAME, 1)],
    ),
    _es(
        "null selector",
        Pod().name("p").label("foo", "").spread(1, "zone", SCHEDULE_ANYWAY, None).obj(),
        ZH3,
        LIST,
        [ScoreState("zone", 1)],
    ),
    _es(
        "node-x doesn't have label zone",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
        .spread(1, HOSTNAME, SCHEDULE_ANYWAY, BAR)
        .obj(),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x")],
        LIST,
        [ScoreState("zone", 1), ScoreState(HOSTNAME, 1)],
        ignored={"node-x"},
    ),
    _es(
        "system default constraints and a replicaset",
        Pod()
        .name("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner_reference("rs1", "apps/v1", "ReplicaSet")
        .obj(),
        [
            make_node("node-a", {HOSTNAME: "node-a", ZONE: "mars"}),
            make_node("node-b", {HOSTNAME: "node-b", ZONE: "mars"}),
            make_node("node-c", {HOSTNAME: "node-c"}),
            make_node("node-d", {HOSTNAME: "node-d"}),
        ],
        {"defaultingType": "System"},
        [ScoreState(HOSTNAME, 3), ScoreState(ZONE, 5)],
        replica_sets=RS1_FOO,
    ),
    _es(
        "default constraints and a replicaset",
        Pod()
        .name("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner_reference("rs1", "apps/v1", "ReplicaSet")
        .obj(),
        [make_node("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DO_NOT_SCHEDULE},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SCHEDULE_ANYWAY},
            ],
        },
        [ScoreState(HOSTNAME, 1), ScoreState("planet", 2)],
        replica_sets=RS1_FOO,
    ),
    _es(
        "default constraints and a replicaset, but pod has constraints",
        Pod()
        .name("p")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "sup")
        .owner_reference("rs1", "apps/v1", "ReplicaSet")
        .spread(1, "zone", DO_NOT_SCHEDULE, BAR)
        .spread(2, "planet", SCHEDULE_ANYWAY, Sel().label("baz", "sup").obj())
        .obj(),
        [make_node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SCHEDULE_ANYWAY}],
        },
        [ScoreState("planet", 2)],
        replica_sets=RS1_FOO,
    ),
    _es(
        "NodeAffinityPolicy honored with labelSelectors",
        Pod().name("p").label("foo", "").node_selector({"foo": ""}).spread(1, "zone", SCHEDULE_ANYWAY, BAR).obj(),
        ZH3_FOO,
        LIST,
        [ScoreState("zone", 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    _es(
        "NodeAffinityPolicy ignored with labelSelectors",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "zone", SCHEDULE_ANYWAY, BAR, node_affinity_policy=IGNORE)
        .obj(),
        ZH3_FOO,
        LIST,
        [ScoreState("zone", 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    _es(
        "NodeAffinityPolicy honored with nodeAffinity",
        Pod().name("p").label("foo", "").node_affinity_in("foo", [""]).spread(1, "zone", SCHEDULE_ANYWAY, BAR).obj(),
        ZH3_FOO,
        LIST,
        [ScoreState("zone", 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    _es(
        "NodeAffinityPolicy ignored with nodeAffinity",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread(1, "zone", SCHEDULE_ANYWAY, BAR, node_affinity_policy=IGNORE)
        .obj(),
        ZH3_FOO,
        LIST,
        [ScoreState("zone", 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    _es(
        "NodeTaintsPolicy honored",
        Pod().name("p").label("foo", "").spread(1, "zone", SCHEDULE_ANYWAY, BAR, node_taints_policy=HONOR).obj(),
        ZH3_TAINT,
        LIST,
        [ScoreState("zone", 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
    _es(
        "NodeTaintsPolicy ignored",
        Pod().name("p").label("foo", "").spread(1, "zone", SCHEDULE_ANYWAY, BAR).obj(),
        ZH3_TAINT,
        LIST,
        [ScoreState("zone", 1)],
        gates_off=_on(NODE_INCLUSION),
    ),
]


def _score_only_profile(args: dict) -> dict:
    """PodTopologySpread at PreScore and Score only: kube's PreScore table hands every node to PreScore, those its
    own Filter would refuse included (a DoNotSchedule constraint whose key a node lacks)."""
    one = [{"name": PLUGIN, "weight": 1}]
    return {
        "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "preScore": {"enabled": one[:1]},
            "score": {"enabled": one},
        },
        "pluginConfig": [{"name": PLUGIN, "args": dict(args)}],
    }


@pytest.mark.parametrize("pod,nodes,args,state,ignored,replica_sets,gates_off", EMPTY_NODES)
def test_prescore_state_empty_nodes(pod, nodes, args, state, ignored, replica_sets, gates_off):
    skip_if_gated(pod, gates_off)
    cluster = build_cluster(nodes, replica_sets=replica_sets)
    got = vcore.Scheduler(cluster, _score_only_profile(args)).score(incoming(pod))
    assert got == scores_from_state(nodes, state, ignored)


# ---------------------------------------------------------------------------------------------------------------
# TestPodTopologySpreadScore
# ---------------------------------------------------------------------------------------------------------------
def _sc(name, pod, existing, nodes, want, failed=(), services=(), gates_off=None, invalid=None):
    return pytest.param(
        pod,
        existing,
        list(nodes),
        list(failed),
        want,
        list(services),
        {NODE_INCLUSION, MATCH_LABEL_KEYS} if gates_off is None else gates_off,
        invalid,
        id=name,
    )


def failed_node(node: dict) -> dict:
    """A node of kube's failedNodes: in the cluster, but no candidate (no room for a pod)."""
    node = copy.deepcopy(node)
    node["status"]["allocatable"]["pods"] = node["status"]["capacity"]["pods"] = "0"
    return node


HOST1 = Pod().name("p").label("foo", "").spread(1, HOSTNAME, SCHEDULE_ANYWAY, FOO).obj()
H4 = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
SPREAD_2013 = foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-d1@node-d", "p-d2@node-d", "p-d3@node-d")
SPREAD_4321 = foo_pods(
    "p-a1@node-a",
    "p-a2@node-a",
    "p-a3@node-a",
    "p-a4@node-a",
    "p-b1@node-b",
    "p-b2@node-b",
    "p-b3@node-b",
    "p-c1@node-c",
    "p-c2@node-c",
    "p-d1@node-d",
)
SPREAD_4213 = foo_pods(
    "p-a1@node-a",
    "p-a2@node-a",
    "p-a3@node-a",
    "p-a4@node-a",
    "p-b1@node-b",
    "p-b2@node-b",
    "p-x1@node-x",
    "p-y1@node-y",
    "p-y2@node-y",
    "p-y3@node-y",
)
ZH4 = [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2"), hn("node-y", "zone2")]
ZONE_HOST_BAR = (
    Pod()
    .name("p")
    .label("foo", "")
    .label("bar", "")
    .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
    .spread(1, HOSTNAME, SCHEDULE_ANYWAY, BAR)
    .obj()
)
ABC_NODE = [zn("node-a"), zn("node-b"), zn("node-c")]
ABC_NODE_FOO = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c")]
ABC_NODE_TAINT = [zn("node-a"), zn("node-b"), zn("node-c", taints=TAINTS)]
A2_B1_C1 = foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-c1@node-c")
ZH4_AC = [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-c", "zone2"), hn("node-d", "zone2")]

SCORE = [
    _sc(
        "one constraint on node, no existing pods",
        HOST1,
        [],
        [hn("node-a"), hn("node-b")],
        {"node-a": 100, "node-b": 100},
    ),
    _sc(
        "one constraint on node, only one node is candidate",
        HOST1,
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b"),
        [hn("node-a")],
        {"node-a": 100},
        failed=[hn("node-b")],
    ),
    _sc(
        "one constraint on node, all nodes have the same number of matching pods",
        HOST1,
        foo_pods("p-a1@node-a", "p-b1@node-b"),
        [hn("node-a"), hn("node-b")],
        {"node-a": 100, "node-b": 100},
    ),
    _sc(
        "one constraint on node, all 4 nodes are candidates",
        HOST1,
        SPREAD_2013,
        H4,
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    _sc(
        "one constraint on node, null selector",
        Pod().name("p").label("foo", "").spread(1, HOSTNAME, SCHEDULE_ANYWAY, None).obj(),
        SPREAD_2013,
        H4,
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    _sc(
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        Pod().name("p").label("foo", "").spread(2, HOSTNAME, SCHEDULE_ANYWAY, FOO).obj(),
        SPREAD_2013,
        H4,
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    _sc(
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        Pod().name("p").label("foo", "").spread(3, HOSTNAME, SCHEDULE_ANYWAY, FOO).obj(),
        SPREAD_4321,
        H4,
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    _sc(
        "system defaulting, nodes don't have zone, pods match service",
        Pod().name("p").label("foo", "").obj(),
        SPREAD_4321,
        H4,
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        services=[service("svc", {"foo": ""})],
    ),
    _sc(
        "one constraint on node, 3 out of 4 nodes are candidates",
        HOST1,
        SPREAD_4213,
        [hn("node-a"), hn("node-b"), hn("node-x")],
        {"node-a": 33, "node-b": 83, "node-x": 100},
        failed=[hn("node-y")],
    ),
    _sc(
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        HOST1,
        SPREAD_4213,
        [hn("node-a"), make_node("node-b", {"n": "node-b"}), hn("node-x")],
        {"node-a": 16, "node-b": 0, "node-x": 100},
        failed=[hn("node-y")],
    ),
    _sc(
        "one constraint on zone, 3 out of 4 nodes are candidates",
        Pod().name("p").label("foo", "").spread(1, "zone", SCHEDULE_ANYWAY, FOO).obj(),
        SPREAD_4213,
        ZH4[:3],
        {"node-a": 75, "node-b": 75, "node-x": 100},
        failed=[ZH4[3]],
    ),
    _sc(
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        Pod()
        .name("p")
        .label("foo", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
        .spread(1, HOSTNAME, SCHEDULE_ANYWAY, FOO)
        .obj(),
        foo_pods(
            "p-a1@node-a",
            "p-a2@node-a",
            "p-b1@node-b",
            "p-x1@node-x",
            "p-x2@node-x",
            "p-y1@node-y",
            "p-y2@node-y",
            "p-y3@node-y",
            "p-y4@node-y",
        ),
        [ZH4[0], ZH4[2]],
        {"node-a": 100, "node-x": 63},
        failed=[ZH4[1], ZH4[3]],
    ),
    # The API server refuses two constraints with the same {topologyKey, whenUnsatisfiable}; so does vcore.
    _sc(
        "two Constraints on zone, 2 out of 4 nodes are candidates",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
        .spread(1, "zone", SCHEDULE_ANYWAY, BAR)
        .obj(),
        [],
        [make_node("node-a", {"zone": "zone1"})],
        None,
        invalid=r"spec\.topologySpreadConstraints\[1\]: duplicate \{'zone', 'ScheduleAnyway'\} pair",
    ),
    _sc(
        "two Constraints on zone and node, with different labelSelectors",
        ZONE_HOST_BAR,
        [
            p("p-a1", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "bar"),
        ],
        ZH4,
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    _sc(
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        ZONE_HOST_BAR,
        [p("p-b1", "node-b", "bar"), p("p-x1", "node-x", "foo"), p("p-y1", "node-y", "foo", "bar")],
        ZH4,
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    _sc(
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        ZONE_HOST_BAR,
        [
            p("p-a1", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "bar"),
        ],
        ZH4[:3],
        {"node-a": 50, "node-b": 25, "node-x": 100},
        failed=[ZH4[3]],
    ),
    _sc(
        "existing pods in a different namespace do not count",
        HOST1,
        [
            p("p-a1", "node-a", "foo", ns="ns1"),
            p("p-a2", "node-a", "foo"),
            p("p-b1", "node-b", "foo"),
            p("p-b2", "node-b", "foo"),
        ],
        [hn("node-a"), hn("node-b")],
        {"node-a": 100, "node-b": 33},
    ),
    _sc(
        "terminating Pods should be excluded",
        HOST1,
        [Pod().name("p-a").node("node-a").label("foo", "").terminating().obj(), p("p-b", "node-b", "foo")],
        [hn("node-a"), hn("node-b")],
        {"node-a": 100, "node-b": 0},
    ),
    # The API server refuses minDomains with ScheduleAnyway (kube's table says so: "This test is artificial"); so
    # does vcore.
    _sc(
        "minDomains has no effect when ScheduleAnyway",
        Pod().name("p").label("foo", "").spread(2, "node", SCHEDULE_ANYWAY, FOO, min_domains=10).obj(),
        foo_pods("p-a1@node-a", "p-a2@node-a", "p-b1@node-b", "p-b2@node-b", "p-c1@node-c"),
        ABC_NODE,
        None,
        invalid=r"spec\.topologySpreadConstraints\[0\]\.minDomains: can only be set when whenUnsatisfiable is "
        r"DoNotSchedule",
    ),
    _sc(
        "NodeAffinityPolicy honoed with labelSelectors",
        Pod().name("p").label("foo", "").node_selector({"foo": ""}).spread(1, "node", SCHEDULE_ANYWAY, FOO).obj(),
        A2_B1_C1,
        ABC_NODE_FOO,
        {"node-a": 0, "node-b": 33, "node-c": 100},
        gates_off=_on(NODE_INCLUSION),
    ),
    _sc(
        "NodeAffinityPolicy ignored with labelSelectors",
        Pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread(1, "node", SCHEDULE_ANYWAY, FOO, node_affinity_policy=IGNORE)
        .obj(),
        A2_B1_C1,
        ABC_NODE_FOO,
        {"node-a": 66, "node-b": 100, "node-c": 100},
        gates_off=_on(NODE_INCLUSION),
    ),
    _sc(
        "NodeAffinityPolicy honoed with nodeAffinity",
        Pod().name("p").label("foo", "").node_affinity_in("foo", [""]).spread(1, "node", SCHEDULE_ANYWAY, FOO).obj(),
        A2_B1_C1,
        ABC_NODE_FOO,
        {"node-a": 0, "node-b": 33, "node-c": 100},
        gates_off=_on(NODE_INCLUSION),
    ),
    _sc(
        "NodeAffinityPolicy ignored with nodeAffinity",
        Pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread(1, "node", SCHEDULE_ANYWAY, FOO, node_affinity_policy=IGNORE)
        .obj(),
        A2_B1_C1,
        ABC_NODE_FOO,
        {"node-a": 66, "node-b": 100, "node-c": 100},
        gates_off=_on(NODE_INCLUSION),
    ),
    _sc(
        "NodeTaintsPolicy honored",
        Pod().name("p").label("foo", "").spread(1, "node", SCHEDULE_ANYWAY, FOO, node_taints_policy=HONOR).obj(),
        A2_B1_C1,
        ABC_NODE_TAINT,
        {"node-a": 0, "node-b": 33, "node-c": 100},
        gates_off=_on(NODE_INCLUSION),
    ),
    _sc(
        "NodeTaintsPolicy ignored",
        Pod().name("p").label("foo", "").spread(1, "node", SCHEDULE_ANYWAY, FOO).obj(),
        A2_B1_C1,
        ABC_NODE_TAINT,
        {"node-a": 66, "node-b": 100, "node-c": 100},
        gates_off=_on(NODE_INCLUSION),
    ),
    _sc(
        "matchLabelKeys ignored when feature gate disabled",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO, match_label_keys=["baz"])
        .spread(1, HOSTNAME, SCHEDULE_ANYWAY, BAR, match_label_keys=["baz"])
        .obj(),
        [
            p("p-a1", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar"),
            p("p-y1", "node-c", "foo"),
            p("p-y2", "node-c", "bar"),
        ],
        ZH4_AC,
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    _sc(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, {}, match_label_keys=["foo"])
        .spread(1, HOSTNAME, SCHEDULE_ANYWAY, {}, match_label_keys=["bar"])
        .obj(),
        [
            p("p-a1", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar"),
            p("p-y1", "node-c", "foo"),
            p("p-y2", "node-c", "bar"),
        ],
        ZH4_AC,
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        gates_off=_on(MATCH_LABEL_KEYS),
    ),
    _sc(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        Pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread(1, "zone", SCHEDULE_ANYWAY, FOO)
        .spread(1, HOSTNAME, SCHEDULE_ANYWAY, BAR, match_label_keys=["baz"])
        .obj(),
        [
            p("p-a1", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar", "baz"),
            p("p-c1", "node-c", "foo"),
            p("p-c2", "node-c", "bar"),
            p("p-d3", "node-c", "bar", "baz"),
        ],
        ZH4_AC,
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        gates_off=_on(MATCH_LABEL_KEYS),
    ),
]


@pytest.mark.parametrize("pod,existing,nodes,failed,want,services,gates_off,invalid", SCORE)
def test_pod_topology_spread_score(pod, existing, nodes, failed, want, services, gates_off, invalid):
    skip_if_gated(pod, gates_off)
    cluster = build_cluster(nodes + [failed_node(n) for n in failed], existing, services=services)
    scheduler = vcore.Scheduler(cluster, _score_profile(None, failed=bool(failed)))
    if invalid is not None:
        with pytest.raises(ValueError, match=invalid):
            scheduler.score(incoming(pod))
        return
    assert scheduler.score(incoming(pod)) == want
