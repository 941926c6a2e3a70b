"""kube-scheduler v1.34's DefaultPreemption tables (plugins/defaultpreemption/default_preemption_test.go and
framework/preemption/preemption_test.go) through vcore's public API: ``vcore.Scheduler(cluster, profile).preempt``.

Each case keeps its Go name as its id. kube's tables hand the plugin a NodeToStatus; here the filters compute it
(a node the Go case marks UnschedulableAndUnresolvable fails an unresolvable filter: a taint or a cordon). Where kube
draws the walk's offset at random (the tables seed it with 4), vcore's offset is pinned to the same value. Cases that
exercise only a Go-internal seam (fake filter plugins, extenders, custom PreemptionInterface hooks, PreFilter
extensions that fail) are listed at the end, skipped with the reason.
"""

from __future__ import annotations

import pytest

import vcore
from tests.plugins.preemption_builders import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    ONE_POD,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    Pod,
    cluster,
    epoch,
    node,
    pdb,
    profile,
)

FIT = "NodeResourcesFit"
NODE_RES = {"cpu": "200m", "memory": "400"}
NO_SCHEDULE = {"key": "dedicated", "value": "other", "effect": "NoSchedule"}
VIOLATING = "test.kubernetes.io/is-violating-pdb"


def P(name: str) -> Pod:  # noqa: N802 (st.MakePod().Name(name))
    return Pod().name(name)


def victims_by_node(result: vcore.types.Preemption) -> dict[str, tuple[tuple[str, ...], int]]:
    """The candidates as the Go tables compare them: by node name, victims sorted by name, with PDB violations."""
    return {c.node: (tuple(sorted(k.split("/", 1)[1] for k in c.victims)), c.pdb_violations) for c in result.candidates}


# ---------------------------------------------------------------------------------------------------------------
# TestPostFilter
# ---------------------------------------------------------------------------------------------------------------
# The last three Go cases hand PostFilter a NodeToStatus of Unschedulable for nodes whose allocatable is below the
# pod's request (largeRes 300m on 200m, or on a node with no cpu at all); vcore works the statuses out with its
# filters, as kube-scheduler's findNodesThatFitPod does, and there NodeResourcesFit's status is
# UnschedulableAndUnresolvable (fit.go: InsufficientResource.Unresolvable): every node is "not helpful", which is
# what the real kube-scheduler v1.34 writes for these clusters (tests/test_messages.py,
# tests/kube/test_differential.py).
NOT_HELPFUL_PAST_ALLOCATABLE = "Preemption is not helpful for scheduling."
POST_FILTER = [
    pytest.param(
        [P("p1").node("node1").obj()],
        [node("node1", ONE_POD)],
        P("p").priority(HIGH).obj(),
        (),
        "node1",
        "",
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        [P("p1").node("node1").obj()],
        [node("node1", ONE_POD)],
        P("p").obj(),
        (),
        None,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        id="pod with tied priority is still unschedulable",
    ),
    # The Go case marks node1 UnschedulableAndUnresolvable: here a taint the pod does not tolerate does.
    pytest.param(
        [P("p1").node("node1").obj()],
        [node("node1", ONE_POD, taints=[NO_SCHEDULE])],
        P("p").priority(HIGH).obj(),
        (),
        None,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="preemption should respect filteredNodesStatuses",
    ),
    # An absent NodeToStatus entry means UnschedulableAndUnresolvable: a cordoned node here.
    pytest.param(
        [P("p1").node("node1").obj()],
        [node("node1", ONE_POD, unschedulable=True)],
        P("p").priority(HIGH).obj(),
        (),
        None,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="preemption should respect absent NodeToStatusMap entry meaning UnschedulableAndUnresolvable",
    ),
    pytest.param(
        [P("p1").priority(HIGH).node("node1").obj(), P("p2").priority(LOW).node("node2").obj()],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        P("p").priority(MID).obj(),
        (),
        "node2",
        "",
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        [
            P("p1").label(VIOLATING, "non-violating").priority(HIGH).node("node1").obj(),
            P("p2").label(VIOLATING, "violating").priority(LOW).node("node1").obj(),
            P("p3").label(VIOLATING, "violating").priority(MID).node("node2").obj(),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        P("p").priority(VERY_HIGH).obj(),
        (
            pdb("violating-pdb", {VIOLATING: "violating"}, 0),  # minAvailable 100%: no disruption allowed
            pdb("non-violating-pdb", {VIOLATING: "non-violating"}, 2**31 - 1),
        ),
        "node2",
        "",
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        [P("p1").node("node1").obj(), P("p2").node("node2").obj()],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        P("p").priority(HIGH).req(LARGE).obj(),
        (),
        None,
        "preemption: 0/2 nodes are available: 2 " + NOT_HELPFUL_PAST_ALLOCATABLE,
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        [
            P("p1").node("node1").priority(HIGH).obj(),
            P("p2").node("node2").obj(),
            P("p3").node("node3").priority(HIGH).obj(),
        ],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        P("p").priority(HIGH).req(LARGE).obj(),
        (),
        None,
        "preemption: 0/3 nodes are available: 3 " + NOT_HELPFUL_PAST_ALLOCATABLE,
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    # node3 (absent from the Go NodeToStatus) and node4 (UnschedulableAndUnresolvable) carry a taint here.
    pytest.param(
        [P("p1").node("node1").obj(), P("p2").node("node2").obj()],
        [
            node("node1", NODE_RES),
            node("node2", NODE_RES),
            node("node3", NODE_RES, taints=[NO_SCHEDULE]),
            node("node4", NODE_RES, taints=[NO_SCHEDULE]),
        ],
        P("p").priority(HIGH).req(LARGE).obj(),
        (),
        None,
        "preemption: 0/4 nodes are available: 4 " + NOT_HELPFUL_PAST_ALLOCATABLE,
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
        "enough CPU resource",
    ),
]


@pytest.mark.parametrize("pods, nodes, pod, pdbs, want_node, want_message", POST_FILTER)
def test_post_filter(pods, nodes, pod, pdbs, want_node, want_message):
    c = cluster(nodes, pods, pdbs)
    sched = vcore.Scheduler(c, profile("NodeUnschedulable", "TaintToleration", FIT))  # kube's order
    result = sched.preempt(pod)
    assert (result.node, result.message) == (want_node, want_message)
    # The FailedScheduling text carries the PostFilter's after the filters'.
    filtered = sched.filter(pod)
    assert filtered.feasible == [] and filtered.preemption is not None
    assert (filtered.preemption.node, filtered.preemption.message) == (want_node, want_message)
    assert filtered.message.endswith(" " + want_message if want_message else ".")


# ---------------------------------------------------------------------------------------------------------------
# TestDryRunPreemption (defaultpreemption): the candidates, victims per node and PDB violations
# ---------------------------------------------------------------------------------------------------------------
IPA = "InterPodAffinity"
PTS = "PodTopologySpread"
APP_FOO = {"app": "foo"}


def _spread(pod: Pod) -> Pod:
    exists_foo = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    return pod.spread(1, "zone", "DoNotSchedule", exists_foo).spread(1, "hostname", "DoNotSchedule", exists_foo)


DRY_RUN = [
    pytest.param(
        ["node1", "node2"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [P("p1").node("node1").priority(MID).req(LARGE).obj(), P("p2").node("node2").priority(MID).req(LARGE).obj()],
        (FIT,),
        None,
        (),
        [4],
        [{"node1": (("p1",), 0), "node2": (("p2",), 0)}],
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        [P("p").priority(LOW).req(LARGE).obj()],
        [P("p1").node("node1").priority(MID).req(LARGE).obj(), P("p2").node("node2").priority(MID).req(LARGE).obj()],
        (FIT,),
        None,
        (),
        [4],
        [{}],
        id="a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
    ),
    pytest.param(
        ["node1", "node2"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [
            P("p1.1").node("node1").priority(LOW).req(SMALL).obj(),
            P("p1.2").node("node1").priority(MID).req(LARGE).obj(),
            P("p2").node("node2").priority(MID).req(LARGE).obj(),
        ],
        (FIT,),
        None,
        (),
        [4],
        [{"node1": (("p1.2",), 0), "node2": (("p2",), 0)}],
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        ["node1", "node2"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [
            P("p1.1").node("node1").priority(MID).req(SMALL).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).obj(),
            P("p1.3").node("node1").priority(MID).req(MEDIUM).obj(),
            P("p1.4").node("node1").priority(HIGH).req(SMALL).obj(),
            P("p2").node("node2").priority(HIGH).req(LARGE).obj(),
        ],
        (FIT,),
        None,
        (),
        [4],
        [{"node1": (("p1.2", "p1.3"), 0)}],
        id="mixed priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [
            P("p1.1").node("node1").priority(LOW).req(SMALL).start_time(epoch(5)).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).start_time(epoch(4)).obj(),
            P("p1.3").node("node1").priority(MID).req(MEDIUM).start_time(epoch(3)).obj(),
            P("p1.4").node("node1").priority(HIGH).req(SMALL).start_time(epoch(2)).obj(),
            P("p2").node("node2").priority(HIGH).req(LARGE).start_time(epoch(1)).obj(),
        ],
        (FIT,),
        None,
        (),
        [4],
        [{"node1": (("p1.1", "p1.3"), 0)}],
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        ["node1", "node2"],
        [P("p").label("foo", "").priority(HIGH).req(SMALL).obj()],
        [
            P("p1.1")
            .node("node1")
            .label("foo", "")
            .priority(LOW)
            .req(SMALL)
            .pod_anti_affinity_exists("foo", "hostname", "required")
            .obj(),
            P("p1.2").node("node1").priority(MID).req(SMALL).obj(),
            P("p1.3").node("node1").priority(HIGH).req(SMALL).obj(),
            P("p2").node("node2").priority(HIGH).req(SMALL).obj(),
        ],
        (FIT, IPA),
        None,
        (),
        [4],
        [{"node1": (("p1.1",), 0)}],
        id="pod with anti-affinity is preempted",
    ),
    pytest.param(
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [_spread(P("p").label("foo", "").priority(HIGH)).obj()],
        [
            P("pod-a1").node("node-a").label("foo", "").priority(MID).obj(),
            P("pod-a2").node("node-a").label("foo", "").priority(LOW).obj(),
            P("pod-b1").node("node-b").label("foo", "").priority(LOW).obj(),
            P("pod-x1").node("node-x").label("foo", "").priority(HIGH).obj(),
            P("pod-x2").node("node-x").label("foo", "").priority(HIGH).obj(),
        ],
        (PTS,),
        None,
        (),
        [4],
        [{"node-a": (("pod-a2",), 0), "node-b": (("pod-b1",), 0)}],
        id="preemption to resolve pod topology spread filter failure",
    ),
    pytest.param(
        ["node1"],
        [P("p").priority(HIGH).req(VERY_LARGE).obj()],
        [
            P("p1.1").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
            P("p1.2").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
        ],
        (FIT,),
        None,
        (pdb("pdb", APP_FOO, 1),),
        [0],
        [{"node1": (("p1.1", "p1.2"), 1)}],
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        ["node1"],
        [P("p").priority(HIGH).req(VERY_LARGE).obj()],
        [
            P("p1.1").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
            P("p1.2").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
        ],
        (FIT,),
        None,
        (pdb("pdb", APP_FOO, 1, disrupted=("p2",)),),
        [0],
        [{"node1": (("p1.1", "p1.2"), 1)}],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to "
        "DisruptedPods",
    ),
    pytest.param(
        ["node1"],
        [P("p").priority(HIGH).req(VERY_LARGE).obj()],
        [
            P("p1.1").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
            P("p1.2").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
        ],
        (FIT,),
        None,
        (pdb("pdb", APP_FOO, 1, disrupted=("p1.2",)),),
        [0],
        [{"node1": (("p1.1", "p1.2"), 0)}],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
        "DisruptedPods",
    ),
    pytest.param(
        ["node1"],
        [P("p").priority(HIGH).req(VERY_LARGE).obj()],
        [
            P("p1.1").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
            P("p1.2").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
            P("p1.3").node("node1").labels(APP_FOO).priority(MID).req(MEDIUM).obj(),
        ],
        (FIT,),
        None,
        (pdb("pdb", APP_FOO, 1, disrupted=("p1.3",)),),
        [0],
        [{"node1": (("p1.1", "p1.2", "p1.3"), 1)}],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to "
        "DisruptedPods is treated as 'nonViolating'",
    ),
    # rand.New(rand.NewSource(4)).Int31n(5) draws 4, then 1, then 3: the offsets pinned below.
    pytest.param(
        ["node1", "node2", "node3", "node4", "node5"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [P(f"p{i}").node(f"node{i}").priority(MID).req(LARGE).obj() for i in range(1, 6)],
        (FIT,),
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        (),
        [4],
        [{"node1": (("p1",), 0), "node5": (("p5",), 0)}],
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4", "node5"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [P(f"p{i}").node(f"node{i}").priority(VERY_HIGH if i in (2, 5) else MID).req(LARGE).obj() for i in range(1, 6)],
        (FIT,),
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        (),
        [4],
        [{"node1": (("p1",), 0), "node3": (("p3",), 0)}],
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4", "node5"],
        [P(f"tp{i}").priority(HIGH).req(LARGE).obj() for i in range(1, 4)],
        [P(f"p{i}").node(f"node{i}").priority(MID).req(LARGE).obj() for i in range(1, 6)],
        (FIT,),
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        (),
        [4, 1, 3],
        [
            {"node1": (("p1",), 0), "node5": (("p5",), 0)},
            {"node2": (("p2",), 0), "node3": (("p3",), 0)},
            {"node4": (("p4",), 0), "node5": (("p5",), 0)},
        ],
        id="preemption offset across multiple scheduling cycles and wrap around",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4", "node5"],
        [P("p").priority(HIGH).req(LARGE).obj()],
        [
            P(f"p{i}").node(f"node{i}").labels(APP_FOO if i in (1, 2, 5) else {}).priority(MID).req(LARGE).obj()
            for i in range(1, 6)
        ],
        (FIT,),
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        (pdb("pdb", APP_FOO, 0),),
        [4],
        [{"node1": (("p1",), 1), "node3": (("p3",), 0), "node5": (("p5",), 1)}],
        id="preemption looks past numCandidates until a non-PDB violating node is found",
    ),
]


@pytest.mark.parametrize("node_names, pods, existing, filters, args, pdbs, offsets, expected", DRY_RUN)
def test_dry_run_preemption(node_names, pods, existing, filters, args, pdbs, offsets, expected):
    c = cluster([node(n, VERY_LARGE) for n in node_names], existing, pdbs)
    sched = vcore.Scheduler(c, profile(*filters, args=args))
    for pod, offset, want in zip(pods, offsets, expected, strict=True):
        result = sched.preempt(pod, offset=offset)
        assert victims_by_node(result) == want
        assert (result.node is None) == (not want)
        if result.node is not None:  # the chosen one is among them, victims most important first
            chosen = next(cand for cand in result.candidates if cand.node == result.node)
            assert (result.victims, result.pdb_violations) == (chosen.victims, chosen.pdb_violations)


def test_dry_run_lists_candidates_without_violations_first():
    """DryRunPreemption's list: non-violating candidates, then violating ones, each in walk order (the last case
    above: offset 4 walks node5, node1, node2 (dropped: the violating list holds 2 already), node3)."""
    _, pods, existing, filters, args, pdbs, offsets, _ = DRY_RUN[-1].values
    c = cluster([node(n, VERY_LARGE) for n in ["node1", "node2", "node3", "node4", "node5"]], existing, pdbs)
    result = vcore.Scheduler(c, profile(*filters, args=args)).preempt(pods[0], offset=offsets[0])
    assert [cand.node for cand in result.candidates] == ["node3", "node5", "node1"]
    assert result.node == "node3" and result.pdb_violations == 0


# ---------------------------------------------------------------------------------------------------------------
# TestSelectBestCandidate
# ---------------------------------------------------------------------------------------------------------------
def _pods(*rows: tuple[str, str, int, dict, int]) -> list[dict]:
    return [
        P(name).node(n).priority(prio).req(res).start_time(epoch(start)).obj() for name, n, prio, res, start in rows
    ]


SELECT_BEST = [
    pytest.param(
        ["node1", "node2"],
        P("p").priority(HIGH).req(LARGE).obj(),
        _pods(("p1", "node1", MID, LARGE, 0), ("p2", "node2", MID, LARGE, 0)),
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, MEDIUM, 0),
            ("p1.2", "node1", MID, LARGE, 0),
            ("p2.1", "node2", MID, MEDIUM, 0),
            ("p2.2", "node2", LOW, MEDIUM, 0),
            ("p3.1", "node3", LOW, MEDIUM, 0),
            ("p3.2", "node3", LOW, MEDIUM, 0),
        ),
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, MEDIUM, 0),
            ("p1.2", "node1", MID, LARGE, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", LOW, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", MID, MEDIUM, 0),
        ),
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", NEG, SMALL, 0),
            ("p1.3", "node1", MID, SMALL, 0),
            ("p1.4", "node1", NEG, SMALL, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", NEG, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", NEG, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
        ),
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", NEG, SMALL, 0),
            ("p1.3", "node1", NEG, SMALL, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", NEG, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", NEG, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
        ),
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        P("p").priority(VERY_HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", LOW, SMALL, 0),
            ("p1.3", "node1", LOW, SMALL, 0),
            ("p2.1", "node2", HIGH, LARGE, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", LOW, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
            ("p3.4", "node3", LOW, MEDIUM, 0),
            ("p4.1", "node4", MID, MEDIUM, 0),
            ("p4.2", "node4", MID, SMALL, 0),
            ("p4.3", "node4", MID, SMALL, 0),
            ("p4.4", "node4", NEG, SMALL, 0),
        ),
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, MEDIUM, 2),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 3),
            ("p2.2", "node2", MID, MEDIUM, 3),
            ("p3.1", "node3", MID, MEDIUM, 1),
            ("p3.2", "node3", MID, MEDIUM, 1),
        ),
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", MID, MEDIUM, 4),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 5),
            ("p2.2", "node2", MID, MEDIUM, 1),
            ("p3.1", "node3", MID, MEDIUM, 3),
            ("p3.2", "node3", MID, MEDIUM, 6),
        ),
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        _pods(
            ("p1.1", "node1", LOW, MEDIUM, 4),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 6),
            ("p2.2", "node2", LOW, MEDIUM, 1),
            ("p3.1", "node3", LOW, MEDIUM, 3),
            ("p3.2", "node3", MID, MEDIUM, 5),
        ),
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize("node_names, pod, pods, expected", SELECT_BEST)
def test_select_best_candidate(node_names, pod, pods, expected):
    c = cluster([node(n, VERY_LARGE) for n in node_names], pods)
    for offset in range(len(node_names)):  # every node is examined (minCandidateNodesAbsolute 100): any offset
        assert vcore.Scheduler(c, profile(FIT)).preempt(pod, offset=offset).node in expected


# ---------------------------------------------------------------------------------------------------------------
# TestPodEligibleToPreemptOthers: observed as the PostFilter's text
# ---------------------------------------------------------------------------------------------------------------
NEVER = "preemption: not eligible due to preemptionPolicy=Never."
TERMINATING = "preemption: not eligible due to a terminating pod on the nominated node."
PREEMPTED = ("DisruptionTarget", "True", "PreemptionByScheduler")


def _terminating(pod: Pod) -> Pod:
    pod._meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return pod


ELIGIBLE = [
    # The nominated node is UnschedulableAndUnresolvable (TaintToleration in the Go case): eligible again.
    pytest.param(
        P("p_with_nominated_node").priority(HIGH).nominated_node_name("node1").obj(),
        [_terminating(P("p1").priority(LOW).node("node1")).obj()],
        [node("node1", taints=[NO_SCHEDULE])],
        True,
        id="Pod with nominated node",
    ),
    pytest.param(
        P("p_without_nominated_node").priority(HIGH).obj(),
        [],
        [node("node1", ONE_POD)],
        True,
        id="Pod without nominated node",
    ),
    pytest.param(
        P("p_with_preempt_never_policy").priority(HIGH).preemption_policy("Never").obj(),
        [],
        [node("node1", ONE_POD)],
        False,
        id="Pod with 'PreemptNever' preemption policy",
    ),
    pytest.param(
        P("p_with_nominated_node").priority(HIGH).nominated_node_name("node1").obj(),
        [_terminating(P("p1").priority(LOW).node("node1")).condition(*PREEMPTED).obj()],
        [node("node1")],
        False,
        id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
    ),
    pytest.param(
        P("p_with_nominated_node").priority(HIGH).nominated_node_name("node1").obj(),
        [_terminating(P("p1").priority(LOW).node("node1")).obj()],
        [node("node1")],
        True,
        id="non-victim Pods terminating",
    ),
]


@pytest.mark.parametrize("pod, pods, nodes, eligible", ELIGIBLE)
def test_pod_eligible_to_preempt_others(pod, pods, nodes, eligible):
    # The Go cases with no node at all are given one full node: vcore (as kube-scheduler) runs no PostFilter on an
    # empty cluster, and eligibility is what is observed here.
    c = cluster(nodes, [*pods, pod])
    message = vcore.Scheduler(c, profile("TaintToleration", FIT)).preempt(pod).message
    assert (message not in (NEVER, TERMINATING)) == eligible, message
    if not eligible:
        assert message == (NEVER if "preemptionPolicy" in pod["spec"] else TERMINATING)


def test_terminating_victim_of_equal_priority_does_not_block():
    """isPreemptionAllowed: only a lower-priority pod terminating by preemption makes the preemptor wait."""
    pod = P("p").priority(HIGH).nominated_node_name("node1").obj()
    c = cluster(
        [node("node1", ONE_POD)], [_terminating(P("p1").priority(HIGH).node("node1")).condition(*PREEMPTED).obj(), pod]
    )
    assert vcore.Scheduler(c, profile(FIT)).preempt(pod).message == (
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


# ---------------------------------------------------------------------------------------------------------------
# TestPreempt: the victims, the nominated node, and no second preemption while they terminate
# ---------------------------------------------------------------------------------------------------------------
PREEMPT = [
    pytest.param(
        P("p").priority(HIGH).req(VERY_LARGE).preemption_policy("PreemptLowerPriority").obj(),
        [
            P("p1.1").node("node1").priority(LOW).req(SMALL).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).obj(),
            P("p2.1").node("node2").priority(HIGH).req(LARGE).obj(),
            P("p3.1").node("node3").priority(MID).req(MEDIUM).obj(),
        ],
        ["node1", "node2", "node3"],
        (FIT,),
        "node1",
        ["p1.1", "p1.2"],
        id="basic preemption logic",
    ),
    pytest.param(
        _spread(P("p").label("foo", "").priority(HIGH)).obj(),
        [
            P("p-a1").node("node-a").label("foo", "").priority(HIGH).obj(),
            P("p-a2").node("node-a").label("foo", "").priority(HIGH).obj(),
            P("p-b1").node("node-b").label("foo", "").priority(LOW).obj(),
            P("p-x1").node("node-x").label("foo", "").priority(HIGH).obj(),
            P("p-x2").node("node-x").label("foo", "").priority(HIGH).obj(),
        ],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        (PTS,),
        "node-b",
        ["p-b1"],
        id="preemption for topology spread constraints",
    ),
    # The Go case's extenders only narrow the candidates; without them, its name says, node3 is chosen.
    pytest.param(
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        [
            P("p1.1").node("node1").priority(MID).req(SMALL).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).obj(),
            P("p2.1").node("node3").priority(MID).req(LARGE).obj(),
        ],
        ["node1", "node2", "node3"],
        (FIT,),
        "node3",
        ["p2.1"],
        id="Scheduler extenders allow only node1, otherwise node3 would have been chosen",
    ),
    # Its extenders are one not interested in the pod and one that allows every node: the outcome is vcore's.
    pytest.param(
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        [
            P("p1.1").node("node1").priority(MID).req(SMALL).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).obj(),
            P("p2.1").node("node2").priority(MID).req(LARGE).obj(),
        ],
        ["node1", "node2"],
        (FIT,),
        "node2",
        ["p2.1"],
        id="One scheduler extender allows only node1, but it is not interested in given pod, otherwise node1 "
        "would have been chosen",
    ),
    pytest.param(
        P("p").priority(HIGH).req(VERY_LARGE).preemption_policy("Never").obj(),
        [
            P("p1.1").node("node1").priority(LOW).req(SMALL).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).obj(),
            P("p2.1").node("node2").priority(HIGH).req(LARGE).obj(),
            P("p3.1").node("node3").priority(MID).req(MEDIUM).obj(),
        ],
        ["node1", "node2", "node3"],
        (FIT,),
        None,
        [],
        id="no preempting in pod",
    ),
    pytest.param(
        P("p").priority(HIGH).req(VERY_LARGE).obj(),
        [
            P("p1.1").node("node1").priority(LOW).req(SMALL).obj(),
            P("p1.2").node("node1").priority(LOW).req(SMALL).obj(),
            P("p2.1").node("node2").priority(HIGH).req(LARGE).obj(),
            P("p3.1").node("node3").priority(MID).req(MEDIUM).obj(),
        ],
        ["node1", "node2", "node3"],
        (FIT,),
        "node1",
        ["p1.1", "p1.2"],
        id="PreemptionPolicy is nil",
    ),
]


@pytest.mark.parametrize("pod, pods, node_names, filters, want_node, want_victims", PREEMPT)
def test_preempt(pod, pods, node_names, filters, want_node, want_victims):
    c = cluster([node(n, VERY_LARGE) for n in node_names], [*pods, pod])
    sched = vcore.Scheduler(c, profile(*filters))
    result = sched.preempt(pod)
    assert result.node == want_node
    assert sorted(k.split("/", 1)[1] for k in result.victims) == want_victims
    if want_node is None:
        return
    # Carry it out as kube-scheduler does: the victims get the DisruptionTarget condition and a deletion timestamp,
    # the preemptor its nominated node. Preempting again finds it must wait for them.
    by_name = {p["metadata"]["name"]: p for p in pods}
    for key in result.victims:
        victim = by_name[key.split("/", 1)[1]]
        victim["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        victim.setdefault("status", {})["conditions"] = [dict(zip(("type", "status", "reason"), PREEMPTED))]
        c.update_pod(victim)
    pod.setdefault("status", {})["nominatedNodeName"] = result.node
    c.update_pod(pod)
    assert sched.preempt(pod).message == TERMINATING
    # Once they are gone the pod fits its nominated node.
    for key in result.victims:
        c.remove_pod(key)
    assert result.node in sched.filter(pod).feasible


# ---------------------------------------------------------------------------------------------------------------
# RunFilterPluginsWithNominatedPods: a preemption leaves room for pods nominated before it
# ---------------------------------------------------------------------------------------------------------------
def test_preemption_leaves_room_for_a_nominated_pod_of_equal_priority():
    """A pod nominated to node1 (whose victim is still terminating) counts as there: a second preemptor of the same
    priority takes node2's victim rather than the room A waits for."""
    a = P("a").priority(HIGH).req(LARGE).nominated_node_name("node1").obj()
    b = P("b").priority(HIGH).req(LARGE).obj()
    pods = [
        _terminating(P("v1").node("node1").priority(LOW).req(LARGE)).condition(*PREEMPTED).obj(),
        P("v2").node("node2").priority(MID).req(LARGE).obj(),
        a,
    ]
    c = cluster([node("node1", VERY_LARGE), node("node2", VERY_LARGE)], pods)
    sched = vcore.Scheduler(c, profile(FIT))
    # Without A's nomination node1 (lowest-priority victim) would win.
    assert (
        vcore.Scheduler(cluster([node("node1", VERY_LARGE), node("node2", VERY_LARGE)], pods[:2]), profile(FIT))
        .preempt(b)
        .node
        == "node1"
    )
    result = sched.preempt(b)
    assert (result.node, result.victims) == ("node2", ("default/v2",))
    # A pod of higher priority than A does not have to leave it room; one of lower priority does.
    assert sched.preempt(P("higher").priority(VERY_HIGH).req(LARGE).obj()).node == "node1"
    assert sched.preempt(P("lower").priority(MID + 1).req(LARGE).obj()).node == "node2"


def test_nominated_pod_must_fit_without_its_nominated_peers_too():
    """The second pass of RunFilterPluginsWithNominatedPods: fitting only thanks to a nominated pod (anti-affinity
    is unaffected, pod count here) is not fitting: with A assumed on node1 the pod needs both of node1's victims."""
    a = P("a").priority(HIGH).nominated_node_name("node1").obj()
    pods = [P("v1").node("node1").priority(LOW).obj(), P("v2").node("node1").priority(LOW).obj(), a]
    c = cluster([node("node1", {"pods": "2"})], pods)
    result = vcore.Scheduler(c, profile(FIT)).preempt(P("b").priority(HIGH).obj())
    assert (result.node, result.victims) == ("node1", ("default/v1", "default/v2"))


# ---------------------------------------------------------------------------------------------------------------
# Cases of the Go tables that exercise only Go-internal seams
# ---------------------------------------------------------------------------------------------------------------
FAKE_FILTER = (
    "uses the test-only FalseFilter/TrueFilter/MatchFilter/FakeFilter plugins, which fail nodes by name "
    "or a configured code; vcore runs only real filters"
)
EXTENDER = "scheduler extenders narrow the candidates; vcore has no extender interface"
PREFILTER_ERROR = (
    "a PreFilter extension (TestPlugin) fails AddPod/RemovePod with an error; no vcore plugin's pod removal can fail"
)
CUSTOM_INTERFACE = (
    "replaces the PreemptionInterface (SelectVictimsOnNode, OrderedScoreFuncs, IsEligiblePod, "
    "MoreImportantPod) with Go test hooks; vcore's DefaultPreemption has no such hooks"
)
API_CALLS = (
    "the API calls of prepareCandidate (condition patch, delete, nomination cleared) are the kube adapter's: "
    "tests/kube/test_preemption.py"
)

SKIPPED = [
    ("TestPostFilter", "preemption result filtered out by extenders", EXTENDER),
    ("TestPostFilter", "only one node but failed with TestPlugin", PREFILTER_ERROR),
    ("TestPostFilter", "one failed with TestPlugin and the other pass", PREFILTER_ERROR),
    ("TestDryRunPreemption", "a pod that does not fit on any node", FAKE_FILTER),
    ("TestDryRunPreemption", "a pod that fits with no preemption", FAKE_FILTER),
    ("TestDryRunPreemption", "a pod that fits on one node with no preemption", FAKE_FILTER),
    (
        "TestDryRunPreemption",
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        FAKE_FILTER,
    ),
    ("TestCustomSelection", "*", CUSTOM_INTERFACE),
    ("TestCustomOrdering", "*", CUSTOM_INTERFACE),
    ("TestPreempt", "Scheduler extenders do not allow any preemption", EXTENDER),
    (
        "TestPreempt",
        "One scheduler extender allows only node1, the other returns error but ignorable. Only node1 would be chosen",
        EXTENDER,
    ),
    ("preemption.TestDryRunPreemption", "no pdb violation", CUSTOM_INTERFACE),
    ("preemption.TestDryRunPreemption", "pdb violation on each node", CUSTOM_INTERFACE),
    ("preemption.TestSelectCandidate", "pod has different number of containers on each node", CUSTOM_INTERFACE),
    ("preemption.TestCallExtenders", "*", EXTENDER),
    ("preemption.TestPrepareCandidate", "*", API_CALLS),
    ("preemption.TestRemoveNominatedNodeName", "*", API_CALLS),
]


@pytest.mark.parametrize("table, case, reason", SKIPPED, ids=[f"{t}/{c}" for t, c, _ in SKIPPED])
def test_go_internal_case(table, case, reason):
    pytest.skip(reason)


def test_a_start_time_reported_after_binding_orders_the_victims():
    """The kubelet reports status.startTime after the pod is bound: Cluster.update_pod carries it to the native
    record, so MoreImportantPod (the earlier start is more important, reprieved first) sees it."""
    pods = [P(name).node("node1").priority(LOW).req(LARGE).obj() for name in ("v-a", "v-b")]
    c = cluster([node("node1", {"cpu": "600m", "memory": "600"})], pods)
    sched = vcore.Scheduler(c, profile(FIT))
    pod = P("p").priority(HIGH).req(LARGE).obj()
    assert sched.preempt(pod).victims == ("default/v-b",)  # start times unknown: the key decides
    for name, second in (("v-b", 1), ("v-a", 2)):  # v-b started first: it is the more important one now
        started = next(p for p in pods if p["metadata"]["name"] == name)
        started["status"] = {"startTime": epoch(second)}
        c.update_pod(started)
    assert sched.preempt(pod).victims == ("default/v-a",)
