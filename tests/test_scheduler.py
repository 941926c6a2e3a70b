"""vcore.Scheduler through the public API: filter, score and schedule as kube-scheduler would.

Covers: filter() reasons counted per reason over all nodes and the FitError message ("0/3 nodes are available:
1 Insufficient cpu, 2 node(s) had untolerated taint(s).", then what kube-scheduler's PostFilter plugins add);
score() returning only feasible nodes; schedule() giving
one Placement per pod in order, binding placed pods, reporting reasons for unschedulable ones, and rejecting a
batch with a bound or duplicate pod without binding anything; percentageOfNodesToScore (kube-scheduler's
numFeasibleNodesToFind and the rotating start, derived here from the rule and observed through placements);
seeded tie-breaks; a profile given as a YAML path; bad constructor arguments; the default profile's weights
(TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1) in a hand-computed score.
"""

from __future__ import annotations

import pytest
import yaml

import vcore
from conftest import GIB, container, expr, make_node, make_pod, make_profile, req_pod, taint, term, toleration
from vcore import Placement, PodAlreadyBoundError

MI = 2**20
TAINTED = "node(s) had untolerated taint(s)"
# kube-scheduler v1.34's default PostFilter plugins for a pod without resource claims: DynamicResources, then
# DefaultPreemption (pkg/scheduler/framework/plugins/dynamicresources, .../defaultpreemption).
NOT_HELPFUL = (
    "no new claims to deallocate, preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
)
UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"


def cluster_of(*nodes: dict) -> vcore.Cluster:
    c = vcore.Cluster()
    for n in nodes:
        c.add_node(n)
    return c


def identical_cluster(n: int, cpu: int = 4000, mem: int = 8 * GIB, prefix: str = "n") -> vcore.Cluster:
    return cluster_of(*(make_node(f"{prefix}{i:04d}", cpu, mem) for i in range(n)))


# -------------------------------------------------------------------------------------------------------------
# kube-scheduler's sampling rule, written from its source (schedule_one.go numFeasibleNodesToFind)
# -------------------------------------------------------------------------------------------------------------
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def nodes_to_find(n_all: int, percentage: int) -> int:
    if n_all < MIN_FEASIBLE_NODES_TO_FIND:
        return n_all
    if percentage == 0:  # adaptive
        percentage = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - n_all // 125)
    if percentage >= 100:
        return n_all
    return max(MIN_FEASIBLE_NODES_TO_FIND, n_all * percentage // 100)


@pytest.mark.parametrize(
    "n_all, pct, expected",
    [
        (1, 10, 1),
        (99, 1, 99),
        (100, 1, 100),
        (1000, 10, 100),
        (1000, 50, 500),
        (1000, 100, 1000),
        (1000, 0, 420),
        (5000, 0, 500),
        (6000, 0, 300),
        (10_000, 0, 500),
        (100_000, 0, 5000),
        (250, 0, 120),
    ],
)
def test_nodes_to_find_rule(n_all, pct, expected):
    """Self-check of the test's own rule against hand-computed kube-scheduler values."""
    assert nodes_to_find(n_all, pct) == expected


# -------------------------------------------------------------------------------------------------------------
# filter
# -------------------------------------------------------------------------------------------------------------
def test_filter_counts_reasons_in_fit_error_form():
    c = cluster_of(
        make_node("small", 500, 8 * GIB),
        make_node("tainted-a", 8000, 8 * GIB, taints=[taint("dedicated", "infra")]),
        make_node("tainted-b", 8000, 8 * GIB, taints=[taint("gpu", "", "NoExecute")]),
    )
    result = vcore.Scheduler(c).filter(req_pod("p", 1000, GIB))
    assert result.feasible == []
    assert result.reasons == {"Insufficient cpu": 1, TAINTED: 2}
    # The small node's 500m are less than the 1000m asked for, a taint is not lifted by evicting: preemption cannot
    # help anywhere.
    assert result.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). " + NOT_HELPFUL.format(n=3)
    )


def test_filter_counts_every_insufficient_resource_of_a_node():
    c = cluster_of(
        make_node("tiny", 100, MI, pods=1, labels={"zone": "a"}),
        make_node("full", 8000, 8 * GIB, pods=1, labels={"zone": "a"}),
        make_node("cordoned", 8000, 8 * GIB, unschedulable=True, labels={"zone": "a"}),
        make_node("zone-b", 8000, 8 * GIB, labels={"zone": "b"}),
    )
    c.bind(req_pod("occupant", 10, 10), "full")
    sched = vcore.Scheduler(c)
    # NodeResourcesFit reports every insufficient resource of a node together (tiny counts for cpu and memory);
    # the filters before it stop at their own reason.
    result = sched.filter(req_pod("p", 1000, GIB, node_selector={"zone": "a"}))
    assert result.feasible == []
    assert result.reasons == {
        UNSCHEDULABLE: 1,
        AFFINITY: 1,
        "Too many pods": 1,
        "Insufficient cpu": 1,
        "Insufficient memory": 1,
    }
    # Only the full node might take the pod once pods are evicted (tiny is too small for it), but its occupant's
    # priority is not lower than the pod's.
    assert result.message == (
        "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods, "
        "1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: 1 No preemption "
        "victims found for incoming pod, 3 Preemption is not helpful for scheduling."
    )
    # A pod that fits somewhere still gets the reasons of the other nodes, but no FitError message.
    result = sched.filter(req_pod("q", 1000, GIB))
    assert result.feasible == ["zone-b"]
    assert result.reasons == {UNSCHEDULABLE: 1, "Too many pods": 1, "Insufficient cpu": 1, "Insufficient memory": 1}
    assert result.message == ""


def test_filter_lists_feasible_nodes_in_index_order_and_ignores_removed_nodes():
    c = identical_cluster(5)
    c.remove_node("n0002")
    c.add_node(make_node("late", 4000, 8 * GIB, taints=[taint("x")]))  # reuses index 2
    result = vcore.Scheduler(c).filter(req_pod("p", 100, MI))
    assert result.feasible == ["n0000", "n0001", "n0003", "n0004"]
    assert result.reasons == {TAINTED: 1}
    c.remove_node("late")
    result = vcore.Scheduler(c).filter(req_pod("p", 100, MI, tolerations=[toleration("x", "Exists")]))
    assert result.feasible == ["n0000", "n0001", "n0003", "n0004"] and result.reasons == {}


def test_filter_extended_resource_reason():
    c = cluster_of(make_node("cpu", 8000, 8 * GIB), make_node("gpu", 8000, 8 * GIB, extra={"nvidia.com/gpu": 1}))
    result = vcore.Scheduler(c).filter(req_pod("p", 100, MI, extra={"nvidia.com/gpu": 2}))
    assert result.reasons == {"Insufficient nvidia.com/gpu": 2}
    # Neither node has 2 GPUs at all: evicting cannot help.
    assert result.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. " + NOT_HELPFUL.format(n=2)


def test_filter_on_empty_cluster():
    result = vcore.Scheduler(vcore.Cluster()).filter(req_pod("p", 100, MI))
    assert result.feasible == [] and result.reasons == {}
    assert result.message == "no nodes available to schedule pods"  # kube-scheduler's ErrNoNodesAvailable


# -------------------------------------------------------------------------------------------------------------
# score
# -------------------------------------------------------------------------------------------------------------
def test_score_has_only_feasible_nodes():
    c = cluster_of(
        make_node("a", 4000, 8 * GIB),
        make_node("b", 500, 8 * GIB),
        make_node("c", 8000, 8 * GIB, taints=[taint("t")]),
        make_node("d", 8000, 16 * GIB),
    )
    sched = vcore.Scheduler(c)
    pod = req_pod("p", 1000, GIB)
    scores = sched.score(pod)
    assert set(scores) == set(sched.filter(pod).feasible) == {"a", "d"}
    assert all(isinstance(v, int) for v in scores.values())
    assert scores["d"] > scores["a"]  # LeastAllocated: more room scores higher
    assert sched.score(req_pod("huge", 64_000, GIB)) == {}


# The default profile's weights, by hand: na and nb differ in every plugin's raw score.
#   pod: 1 cpu, 2Gi; preferred affinity weight 10 on zone=a.
#   na: 4 cpu, 8Gi, zone=a, one PreferNoSchedule taint (untolerated)
#       NodeResourcesFit LeastAllocated: cpu 3000*100/4000 = 75, memory 6Gi*100/8Gi = 75 -> (75 + 75) / 2 = 75
#       BalancedAllocation: fractions 0.25, 0.25 -> std 0 -> 100
#       TaintToleration: 1 intolerable taint, max 1 -> reversed normalize 100 - 100 = 0
#       NodeAffinity: 10, max 10 -> 100
#   nb: 8 cpu, 8Gi, zone=b, no taint
#       Fit: cpu 7000*100/8000 = 87 (87.5 truncated), memory 75 -> (87 + 75) / 2 = 81
#       Balanced: fractions 0.125, 0.25 -> std |0.125 - 0.25| / 2 = 0.0625 -> int(93.75) = 93
#       TaintToleration: 0 -> 100; NodeAffinity: 0 -> 0
RAW = {
    "na": {"NodeResourcesFit": 75, "NodeResourcesBalancedAllocation": 100, "TaintToleration": 0, "NodeAffinity": 100},
    "nb": {"NodeResourcesFit": 81, "NodeResourcesBalancedAllocation": 93, "TaintToleration": 100, "NodeAffinity": 0},
}


def _weights_cluster_and_pod():
    c = cluster_of(
        make_node("na", 4000, 8 * GIB, labels={"zone": "a"}, taints=[taint("spot", "", "PreferNoSchedule")]),
        make_node("nb", 8000, 8 * GIB, labels={"zone": "b"}),
    )
    pod = req_pod("p", 1000, 2 * GIB, preferred=[(10, term(expr("zone", "In", "a")))])
    return c, pod


def test_default_profile_weights_in_hand_computed_score():
    c, pod = _weights_cluster_and_pod()
    # 1*75 + 1*100 + 3*0 + 2*100 = 375 ; 1*81 + 1*93 + 3*100 + 2*0 = 474
    assert vcore.Scheduler(c).score(pod) == {"na": 375, "nb": 474}
    placement = vcore.Scheduler(c).schedule([pod])
    assert placement == [Placement("default/p", "nb", {}, "")]


@pytest.mark.parametrize(
    "weights",
    [
        {"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1, "TaintToleration": 3, "NodeAffinity": 2},
        {"NodeResourcesFit": 5, "NodeResourcesBalancedAllocation": 1, "TaintToleration": 1, "NodeAffinity": 1},
        {"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 7, "TaintToleration": 2, "NodeAffinity": 9},
        {"NodeAffinity": 4},
        {"TaintToleration": 2, "NodeResourcesFit": 3},
    ],
    ids=["default", "fit5", "mixed", "affinity-only", "taint-fit"],
)
def test_weighted_sum_of_plugin_scores(weights):
    c, pod = _weights_cluster_and_pod()
    expected = {node: sum(w * RAW[node][plugin] for plugin, w in weights.items()) for node in RAW}
    profile = make_profile(list(weights.items()))
    assert vcore.Scheduler(c, profile).score(pod) == expected


# Pod-level resources (spec.resources) as kube-scheduler v1.34 scores them: NodeResourcesFit's scorer leaves the
# pod's own pod-level requests out (its resourceAllocationScorer is built without the PodLevelResources feature:
# noderesources/fit.go, resource_allocation.go) while BalancedAllocation reads them; a bound pod with pod-level
# requests adds the 100m / 200Mi non-zero default only for a resource it asks for nowhere
# (framework/types.go: PodInfo.CalculateResource, getNonMissingContainerRequests).
FIT_ONLY = make_profile([("NodeResourcesFit", 1)])
BALANCED_ONLY = make_profile([("NodeResourcesBalancedAllocation", 1)])


def with_pod_level(pod: dict, requests: dict) -> dict:
    pod["spec"]["resources"] = {"requests": requests}
    return pod


def test_fit_scores_the_containers_of_a_pod_with_pod_level_requests():
    c = cluster_of(make_node("n", 4000, 8 * GIB))
    pod = with_pod_level(req_pod("p", 500, GIB), {"cpu": "2", "memory": "4Gi"})
    # The containers' 500m and 1Gi: (4000 - 500) * 100 / 4000 = 87, (8 - 1) * 100 / 8 = 87 (not the pod level's 50).
    assert vcore.Scheduler(c, FIT_ONLY).score(pod) == {"n": 87}
    # BalancedAllocation: the pod level's 2000m / 4000m and 4Gi / 8Gi are alike, std 0.
    assert vcore.Scheduler(c, BALANCED_ONLY).score(pod) == {"n": 100}


def test_fit_counts_a_bound_pods_non_zero_defaults_only_for_what_it_asks_nowhere():
    asks_cpu = make_pod("bound", container({"cpu": 1000}), container({}))  # the second container asks nothing
    c = cluster_of(make_node("n", 4000, 8 * GIB), make_node("m", 4000, 8 * GIB))
    c.bind(with_pod_level(asks_cpu, {"memory": "2Gi"}), "n")
    # Without pod-level requests the same pod counts 100m more for its second container.
    c.bind(make_pod("plain", container({"cpu": 1000, "memory": 2 * GIB}), container({})), "m")
    # n: cpu (4000 - 1000 - 1000) -> 50, memory (8Gi - 2Gi - 1Gi) -> 62: 56.
    # m: cpu (4000 - 1100 - 1000) -> 47, memory (8Gi - 2Gi - 200Mi - 1Gi) -> 60: 53.
    assert vcore.Scheduler(c, FIT_ONLY).score(req_pod("p", 1000, GIB)) == {"n": 56, "m": 53}


# -------------------------------------------------------------------------------------------------------------
# schedule
# -------------------------------------------------------------------------------------------------------------
def test_schedule_returns_placements_in_order_and_binds():
    c = cluster_of(
        make_node("big", 4000, 8 * GIB),
        make_node("small", 1000, 8 * GIB),
        make_node("tainted", 64_000, 64 * GIB, taints=[taint("gpu")]),
    )
    pods = [
        req_pod("a", 3000, GIB),
        req_pod("b", 900, GIB),
        req_pod("c", 2000, GIB, namespace="ml"),
        req_pod("d", 100, MI),
        req_pod("e", 500, MI, tolerations=[toleration("gpu", "Exists")]),
    ]
    placements = vcore.Scheduler(c).schedule(pods)
    assert [p.pod for p in placements] == ["default/a", "default/b", "ml/c", "default/d", "default/e"]
    assert all(isinstance(p, Placement) for p in placements)
    by_key = {p.pod: p for p in placements}
    assert by_key["default/a"].node == "big"  # LeastAllocated: the only node with room
    assert by_key["default/b"].node == "small"  # big has 1000m left, small 1000m: balanced and fit prefer small
    # ml/c needs 2 cpu: big has 1000m left, small 100m: nowhere (the taint blocks the big node).
    assert by_key["ml/c"].node is None
    assert by_key["ml/c"].reasons == {"Insufficient cpu": 2, TAINTED: 1}
    # big (4000m, 3000m taken) would have room without its pods, but none has a lower priority than ml/c.
    assert by_key["ml/c"].message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not "
        "helpful for scheduling."
    )
    assert by_key["default/e"].node == "tainted"  # tolerates, and has the most room
    for p in placements:
        assert c.node_of(p.pod) == p.node
        if p.node is not None:
            assert p.reasons == {} and p.message == ""
    assert c.n_pods == 4
    big = c.node_index("big")
    assert c.requested("cpu")[big] == 3000 + (100 if by_key["default/d"].node == "big" else 0)


def test_schedule_sees_its_own_earlier_placements():
    c = identical_cluster(1, cpu=1000)
    placements = vcore.Scheduler(c).schedule([req_pod(f"p{i}", 400, MI) for i in range(3)])
    assert [p.node for p in placements] == ["n0000", "n0000", None]
    assert placements[2].reasons == {"Insufficient cpu": 1}


def test_schedule_accepts_an_iterable_and_empty_batch():
    c = identical_cluster(2)
    sched = vcore.Scheduler(c)
    assert sched.schedule([]) == []
    placements = sched.schedule(req_pod(f"g{i}", 100, MI) for i in range(3))
    assert len(placements) == 3 and all(p.node for p in placements)


def test_schedule_batch_with_bound_pod_raises_and_binds_nothing():
    c = identical_cluster(3)
    c.bind(req_pod("bound", 100, MI), "n0001")
    before = (c.requested_matrix.copy(), c.n_pods)
    sched = vcore.Scheduler(c)
    # vcore.errors: PodAlreadyBoundError is raised by "bind (or schedule)" of a bound pod.
    with pytest.raises(PodAlreadyBoundError, match="default/bound"):
        sched.schedule([req_pod("fresh", 100, MI), req_pod("bound", 100, MI), req_pod("other", 100, MI)])
    assert (c.requested_matrix == before[0]).all() and c.n_pods == before[1]
    assert c.node_of("default/fresh") is None and c.node_of("default/other") is None


def test_schedule_batch_with_duplicate_key_raises_and_binds_nothing():
    c = identical_cluster(3)
    sched = vcore.Scheduler(c)
    with pytest.raises(ValueError, match="default/twice"):
        sched.schedule([req_pod("first", 100, MI), req_pod("twice", 100, MI), req_pod("twice", 200, MI)])
    assert c.n_pods == 0 and not c.requested_matrix.any()
    assert c.node_of("default/first") is None
    # The scheduler is still usable, and the same pods can be placed once the batch is fixed.
    placements = sched.schedule([req_pod("first", 100, MI), req_pod("twice", 100, MI)])
    assert all(p.node for p in placements) and c.n_pods == 2


def test_schedule_with_bad_pod_raises_and_binds_nothing():
    c = identical_cluster(3)
    with pytest.raises(ValueError, match="cpu"):
        vcore.Scheduler(c).schedule([req_pod("ok", 100, MI), req_pod("bad", "12parsecs", MI)])
    assert c.n_pods == 0


def test_scheduled_pod_can_be_unbound_and_rescheduled():
    c = identical_cluster(2)
    sched = vcore.Scheduler(c)
    [first] = sched.schedule([req_pod("p", 100, MI)])
    assert c.unbind("default/p") == first.node
    [again] = sched.schedule([req_pod("p", 100, MI)])
    assert again.node is not None and c.node_of("default/p") == again.node


# -------------------------------------------------------------------------------------------------------------
# percentageOfNodesToScore and the rotating start
# -------------------------------------------------------------------------------------------------------------
def _window(start: int, n_all: int, want: int, feasible) -> tuple[list[int], int]:
    """Indices kube-scheduler examines from `start` until `want` feasible nodes are found (or all were seen):
    (feasible indices found, number examined)."""
    found, examined = [], 0
    while examined < n_all and len(found) < want:
        i = (start + examined) % n_all
        examined += 1
        if feasible(i):
            found.append(i)
    return found, examined


@pytest.mark.parametrize(
    "n_all, pct",
    [(1000, 10), (1000, 0), (1000, 25), (250, 0), (150, 10)],
    ids=["1000-10pct", "1000-adaptive", "1000-25pct", "250-adaptive", "150-min100"],
)
def test_percentage_of_nodes_to_score_rotating_windows(n_all, pct):
    """Identical empty nodes, LeastAllocated: each single-pod schedule() call lands in the window it examines
    (nodes_to_find nodes from the previous start + examined), on a node with the fewest pods in that window."""
    c = identical_cluster(n_all)
    sched = vcore.Scheduler(c, make_profile([("NodeResourcesFit", 1)], pct=pct))
    want = nodes_to_find(n_all, pct)
    pods_on = [0] * n_all
    start = 0
    for k in range(2 * n_all // want + 2):  # wraps around the node list at least twice
        found, examined = _window(start, n_all, want, lambda i: True)
        assert examined == want
        fewest = min(pods_on[i] for i in found)
        candidates = {i for i in found if pods_on[i] == fewest}
        [placement] = sched.schedule([req_pod(f"p{k}", 100, MI)])
        index = c.node_index(placement.node)
        assert index in candidates, (k, start, index)
        pods_on[index] += 1
        start = (start + examined) % n_all


def test_percentage_windows_count_infeasible_nodes_as_examined():
    """With every odd node tainted, a window must examine about twice as many nodes to find nodes_to_find
    feasible ones, and the next start moves past all of them (kube-scheduler's processedNodes)."""
    n_all, pct = 1000, 10
    c = cluster_of(
        *(make_node(f"n{i:04d}", 4000, 8 * GIB, taints=[taint("odd")] if i % 2 else None) for i in range(n_all))
    )
    sched = vcore.Scheduler(c, make_profile([("NodeResourcesFit", 1)], pct=pct))
    want = nodes_to_find(n_all, pct)
    pods_on = [0] * n_all
    start = 0
    for k in range(12):
        found, examined = _window(start, n_all, want, lambda i: i % 2 == 0)
        assert examined in (2 * want - 1, 2 * want)
        fewest = min(pods_on[i] for i in found)
        candidates = {i for i in found if pods_on[i] == fewest}
        [placement] = sched.schedule([req_pod(f"p{k}", 100, MI)])
        index = c.node_index(placement.node)
        assert index in candidates, (k, start, index)
        pods_on[index] += 1
        start = (start + examined) % n_all


@pytest.mark.parametrize(
    "n_all, pct, sees_best_first",
    [
        (99, 1, True),  # fewer than 100 nodes: all are examined
        (100, 1, True),  # max(100, 1) = 100 = all
        (200, 100, True),  # 100 %: all
        (200, 10, False),  # max(100, 20) = 100: the first call sees [0, 100) only
        (1000, 0, False),  # adaptive 42 % = 420
    ],
)
def test_sampling_decides_whether_the_best_node_is_seen(n_all, pct, sees_best_first):
    """The last node is strictly the best (twice the cpu and memory). It wins the first pod only when the first window
    reaches it; otherwise the rotating start brings it into a later window."""
    nodes = [make_node(f"n{i:04d}", 4000, 8 * GIB) for i in range(n_all - 1)]
    nodes.append(make_node("best", 8000, 16 * GIB))
    c = cluster_of(*nodes)
    sched = vcore.Scheduler(c, make_profile([("NodeResourcesFit", 1)], pct=pct))
    want = nodes_to_find(n_all, pct)
    # LeastAllocated for 1 cpu, 1Gi: (75 + 87) / 2 = 81 on the others, (87 + 93) / 2 = 90 on "best".
    [first] = sched.schedule([req_pod("first", 1000, GIB)])
    if sees_best_first:
        assert first.node == "best"
        return
    assert c.node_index(first.node) < want
    # Following calls examine later windows; the one containing the last index places its pod on "best".
    start, k = want, 0
    while True:
        k += 1
        found, examined = _window(start, n_all, want, lambda i: True)
        [placement] = sched.schedule([req_pod(f"p{k}", 1000, GIB)])
        if n_all - 1 in found:
            assert placement.node == "best"
            break
        assert placement.node != "best" and c.node_index(placement.node) in found
        start = (start + examined) % n_all


def test_filter_and_score_are_not_sampled():
    c = identical_cluster(1000)
    sched = vcore.Scheduler(c, make_profile([("NodeResourcesFit", 1)], pct=10))
    pod = req_pod("p", 100, MI)
    assert len(sched.filter(pod).feasible) == 1000
    assert len(sched.score(pod)) == 1000


# -------------------------------------------------------------------------------------------------------------
# Seeds, profiles, constructor
# -------------------------------------------------------------------------------------------------------------
def _placements(seed: int, n_nodes: int = 200, n_pods: int = 30) -> list[Placement]:
    c = identical_cluster(n_nodes)
    pods = [req_pod(f"p{i}", 100, MI) for i in range(n_pods)]
    return vcore.Scheduler(c, make_profile([("NodeResourcesFit", 1)], pct=100), seed=seed).schedule(pods)


def test_seeded_ties_are_reproducible():
    for seed in (0, 1, 2**64 - 1):
        first, second = _placements(seed), _placements(seed)
        assert first == second
        assert len({p.node for p in first}) == len(first)  # LeastAllocated spreads identical pods


def test_different_seeds_break_ties_differently():
    # 30 pods over 200 tied nodes: the chance two seeds agree on all 30 is ~ (1/200)^30 for a decent mix.
    a, b, c = _placements(1), _placements(2), _placements(12345)
    assert a != b and b != c and a != c


def test_profile_as_yaml_path(tmp_path):
    c = cluster_of(make_node("empty", 4000, 8 * GIB), make_node("busy", 4000, 8 * GIB))
    c.bind(req_pod("occupant", 2000, 4 * GIB), "busy")
    pod = req_pod("p", 500, GIB)
    assert vcore.Scheduler(c).schedule([req_pod("least", 500, GIB)])[0].node == "empty"
    c.unbind("default/least")

    profile = {
        "schedulerName": "packer",
        "plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]}},
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                    }
                },
            }
        ],
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    for p in (path, str(path)):
        sched = vcore.Scheduler(c, p)
        # MostAllocated: busy = ((2500*100/4000) + (5Gi*100/8Gi)) / 2 = (62 + 62) / 2 = 62 ; empty = (12 + 12) / 2
        assert sched.score(pod) == {"empty": 12, "busy": 62}
    [placement] = vcore.Scheduler(c, path).schedule([pod])
    assert placement.node == "busy"

    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    whole = tmp_path / "config.yaml"
    whole.write_text(yaml.safe_dump(config))
    assert vcore.Scheduler(c, whole).score(req_pod("q", 500, GIB)) == {"empty": 12, "busy": 75}


def test_bad_profile_raises():
    c = identical_cluster(1)
    with pytest.raises(vcore.ProfileError):
        vcore.Scheduler(c, {"plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}})
    with pytest.raises(vcore.ProfileError, match="cannot read the file"):
        vcore.Scheduler(c, "/nonexistent/profile.yaml")
    with pytest.raises(TypeError):
        vcore.Scheduler(c, 42)


@pytest.mark.parametrize("not_a_cluster", [None, "cluster", object(), {"nodes": []}])
def test_scheduler_rejects_a_non_cluster(not_a_cluster):
    with pytest.raises(TypeError, match="Cluster"):
        vcore.Scheduler(not_a_cluster)


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "1", True, None])
def test_scheduler_rejects_a_bad_seed(seed):
    with pytest.raises((TypeError, ValueError), match="seed"):
        vcore.Scheduler(identical_cluster(1), seed=seed)


def test_scheduler_accepts_extreme_valid_seeds():
    for seed in (0, 2**63, 2**64 - 1):
        assert vcore.Scheduler(identical_cluster(2), seed=seed).schedule([req_pod("p", 1, 1)])[0].node


def test_pod_already_bound_error_is_exported():
    assert issubclass(PodAlreadyBoundError, vcore.VCoreError)


def test_unschedulable_pod_on_node_selector_and_required_affinity():
    c = cluster_of(
        make_node("a", 4000, GIB, labels={"zone": "a", "rank": "7"}),
        make_node("b", 4000, GIB, labels={"zone": "b", "rank": "42"}),
    )
    sched = vcore.Scheduler(c)
    assert sched.filter(make_pod("s", node_selector={"zone": "b"})).feasible == ["b"]
    assert sched.filter(make_pod("g", required=[term(expr("rank", "Gt", "10"))])).feasible == ["b"]
    [placement] = sched.schedule([make_pod("none", required=[term(expr("zone", "In", "c"))])])
    assert placement.node is None
    assert placement.reasons == {AFFINITY: 2}
    assert placement.message == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. " + NOT_HELPFUL.format(n=2)
    )
