"""Volcano v1.14 pkg/scheduler/plugins/nodegroup/nodegroup_test.go (TestNodeGroup), against vcore's cycle.

Each Go case registers only the nodegroup plugin (its node order and predicate on, ``strict`` and
``enableHierarchy`` as the case sets them) and asks, for the one pending task on each of five nodes, the
plugin's predicate status and node score. Here:

* the status: the same objects with that node alone go through ``vcore.Scheduler(cluster, cycle=conf).run_cycle()``
  and the task binds exactly where Volcano's predicate says Success;
* the score: the plugin's score of the node's group for the queue's affinity (``vcore.batch.nodegroups.score`` of
  the affinity the queue has, or inherits with the hierarchy on) equals the Go table's, and the cycle ranks nodes by
  it: with every node the predicate admits present, the task goes to the best scored; with that one removed, to the
  next, as long as the next is strictly better than the rest (Volcano picks at random among equal scores).

Adapted: the Go nodes allocate cpu and memory only; here they also allocate 10 pods (util.BuildNode leaves them
out, and kube-scheduler's NodeResourcesFit, which vcore's allocate runs, refuses a node with no pod room).

Beyond the table: each tier switch and argument (enablePredicate, enableNodeOrder, enableHierarchy, strict) changes
the outcome as in Volcano; a queue's affinity read from its object, with errors naming the field; a Queue update
and a configuration without the plugin take effect on pending tasks.
"""

from __future__ import annotations

import pytest

import vcore
from vcore.batch import nodegroups
from vcore.batch.config import CycleConfig
from vcore.errors import ProfileError

from .volcano_fixtures import (
    PENDING,
    build_node,
    build_pod,
    build_podgroup,
    build_priority_class,
    build_queue,
    node_res,
    rl,
)

LABEL = nodegroups.NODE_GROUP_LABEL
SUCCESS, UNSCHEDULABLE = "Success", "UnschedulableAndUnresolvable"


def affinity(required=(), preferred=(), anti_required=(), anti_preferred=()) -> dict:
    """schedulingv1.Affinity{NodeGroupAffinity, NodeGroupAntiAffinity}."""
    return {
        "nodeGroupAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": list(required),
            "preferredDuringSchedulingIgnoredDuringExecution": list(preferred),
        },
        "nodeGroupAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": list(anti_required),
            "preferredDuringSchedulingIgnoredDuringExecution": list(anti_preferred),
        },
    }


def queue(name: str, aff: dict | None, parent: str = "") -> dict:
    """util.MakeQueue(name).Affinity(aff).Parent(parent)."""
    q = build_queue(name, 1, parent=parent)
    if aff is not None:
        q["spec"]["affinity"] = aff
    return q


def nodes() -> list[dict]:
    return [
        build_node("n1", node_res("2", "4Gi"), {LABEL: "group1"}),
        build_node("n2", node_res("4", "16Gi"), {LABEL: "group2"}),
        build_node("n3", node_res("4", "16Gi"), {LABEL: "group3"}),
        build_node("n4", node_res("4", "16Gi"), {LABEL: "group4"}),
        build_node("n5", node_res("4", "16Gi")),
    ]


ROOT_AFFINITY = affinity(["group1", "group3"], ["group3"], ["group2", "group4"], ["group4"])
ROOT = queue("root", ROOT_AFFINITY)
ROOT_NO_AFFINITY = queue("root-no-affinity", None)
Q1 = queue("q1", ROOT_AFFINITY, parent="root")
Q2 = queue("q2", affinity(["group1"], ["group3"], ["group2"], ["group4"]), parent="root")
NO_AFFINITY = queue("q-no-affinity", None, parent="root")
Q1_CHILD = queue("q1-child", None, parent="q1")  # inherits q1's
NO_AFFINITY_CHILD = queue("q-no-affinity-child", None, parent="q-no-affinity")  # inherits root's

# The Go cases: (name, the task's queue, queues, arguments, enableHierarchy, per node (score, status)).
_S, _U = SUCCESS, UNSCHEDULABLE
CASES = [
    (
        "case: soft constraints is subset of hard constraints",
        "q1",
        [Q1],
        {},
        False,
        {"n1": (100, _S), "n2": (0, _U), "n3": (150, _S), "n4": (-1, _S), "n5": (0, _U)},
    ),
    (
        "case: soft constraints is not subset of hard constraints",
        "q2",
        [Q2],
        {},
        False,
        {"n1": (100, _S), "n2": (0, _U), "n3": (50, _S), "n4": (-1, _S), "n5": (0, _U)},
    ),
    (
        "case: affinity is not set for the queue, pods still cannot be scheduled to nodes with the nodegroup label "
        "when strict=false",
        "root-no-affinity",
        [ROOT_NO_AFFINITY],
        {"strict": False},
        False,
        {"n1": (0, _U), "n2": (0, _U), "n3": (0, _U), "n4": (0, _U), "n5": (0, _S)},
    ),
    (
        "case: affinity inherits from parent queue",
        "q1-child",
        [ROOT, Q1, Q1_CHILD],
        {},
        True,
        {"n1": (100, _S), "n2": (0, _U), "n3": (150, _S), "n4": (-1, _S), "n5": (0, _U)},
    ),
    (
        "case: affinity inherits from ancestor queue if parent queue has no affinity",
        "q-no-affinity-child",
        [ROOT, NO_AFFINITY, NO_AFFINITY_CHILD],
        {},
        True,
        {"n1": (100, _S), "n2": (0, _U), "n3": (150, _S), "n4": (-1, _S), "n5": (0, _U)},
    ),
    (
        "case: queue without affinity",
        "q-no-affinity",
        [NO_AFFINITY],
        {},
        False,
        {"n1": (0, _U), "n2": (0, _U), "n3": (0, _U), "n4": (0, _U), "n5": (0, _U)},
    ),
]


def conf(arguments: dict | None = None, **switches: bool) -> dict:
    """The Go tiers: nodegroup alone, with its node order and predicate on."""
    plugin: dict = {"name": "nodegroup", **switches}
    if arguments:
        plugin["arguments"] = dict(arguments)
    return {"actions": "enqueue, allocate", "tiers": [{"plugins": [plugin]}]}


def cluster_of(node_list: list[dict], queues: list[dict], task_queue: str) -> vcore.Cluster:
    cluster = vcore.Cluster()
    for n in node_list:
        cluster.add_node(n)
    for q in queues:
        if q["metadata"]["name"] in cluster.queues:  # root, added implicitly as its children's parent
            cluster.update_queue(q)
        else:
            cluster.add_queue(q)
    cluster.add_podgroup(build_podgroup("pg1", "c1", task_queue, 0, None, ""))
    cluster.add_pod(build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1"))
    return cluster


def bound_to(cluster: vcore.Cluster, cycle: dict) -> str | None:
    result = vcore.Scheduler(cluster, cycle=cycle).run_cycle()
    return {b.pod: b.node for b in result.bindings}.get("c1/p1")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_node_group(case):
    name, task_queue, queues, arguments, hierarchy, expected = case
    cycle = conf(arguments, **({"enableHierarchy": True} if hierarchy else {}))
    by_name = {n["metadata"]["name"]: n for n in nodes()}
    # The predicate: the task alone with each node binds exactly where Volcano says Success.
    for node, (_, status) in expected.items():
        cluster = cluster_of([by_name[node]], queues, task_queue)
        assert (bound_to(cluster, cycle) == node) == (status == SUCCESS), f"{name}: {node}"
    # The score: the plugin's, per node, as the Go table gives it.
    queue_tree = cluster_of([], queues, task_queue).batch.queues
    aff = nodegroups.inherited(queue_tree, task_queue) if hierarchy else queue_tree.get(task_queue).node_groups
    for node, (score, _) in expected.items():
        assert nodegroups.score(aff, by_name[node]["metadata"]["labels"].get(LABEL)) == score, node
    # The cycle ranks admitted nodes by that score: remove the best, and the task goes to the next.
    admitted = sorted((n for n, (_, s) in expected.items() if s == SUCCESS), key=lambda n: -expected[n][0])
    while admitted:
        best = admitted[0]
        if len(admitted) > 1 and expected[admitted[1]][0] == expected[best][0]:
            break  # a tie: Volcano picks either
        worst_first = [by_name[n] for n in reversed(admitted)]  # so neither slot nor name order picks the best
        assert bound_to(cluster_of(worst_first, queues, task_queue), cycle) == best
        admitted.pop(0)


# -- the switches and the argument ----------------------------------------------------------------------------------
def test_enable_predicate_off_admits_every_node():
    """Without its predicate the plugin filters nothing: the task runs in the group its queue must avoid."""
    only_n2 = [nodes()[1]]
    assert bound_to(cluster_of(only_n2, [Q1], "q1"), conf()) is None
    assert bound_to(cluster_of(only_n2, [Q1], "q1"), conf(enablePredicate=False)) == "n2"


def test_enable_node_order_off_scores_nothing():
    """n3 (150) beats n1 (100) by the plugin's score; without it the nodes tie and vcore takes the first by name."""
    both = [nodes()[0], nodes()[2]]
    assert bound_to(cluster_of(both, [Q1], "q1"), conf()) == "n3"
    assert bound_to(cluster_of(both, [Q1], "q1"), conf(enableNodeOrder=False)) == "n1"


def test_hierarchy_off_inherits_nothing():
    """q1-child sets no affinity: with the hierarchy off it has none, and strict refuses every node."""
    n1 = [nodes()[0]]
    assert bound_to(cluster_of(n1, [ROOT, Q1, Q1_CHILD], "q1-child"), conf(enableHierarchy=True)) == "n1"
    assert bound_to(cluster_of(n1, [ROOT, Q1, Q1_CHILD], "q1-child"), conf()) is None


def test_strict_off_admits_unlabelled_nodes_only_to_queues_without_groups():
    n5 = [nodes()[4]]
    assert bound_to(cluster_of(n5, [NO_AFFINITY], "q-no-affinity"), conf()) is None
    assert bound_to(cluster_of(n5, [NO_AFFINITY], "q-no-affinity"), conf({"strict": False})) == "n5"
    assert bound_to(cluster_of(n5, [Q1], "q1"), conf({"strict": False})) is None  # a queue with groups: never


def test_refused_arguments_name_the_field():
    with pytest.raises(ProfileError, match=r"tiers\[0\]\.plugins\[0\]\.arguments\.strict"):
        CycleConfig.from_config(conf({"strict": "sometimes"}))
    with pytest.raises(ProfileError, match=r"arguments\.weight"):
        CycleConfig.from_config(conf({"weight": 1}))


def test_the_unschedulable_task_says_which_filter_refused():
    cluster = cluster_of([nodes()[1]], [Q1], "q1")
    result = vcore.Scheduler(cluster, cycle=conf()).run_cycle()
    counts, message = result.unschedulable["c1/p1"]
    assert counts == {"node(s) didn't match Pod's node affinity/selector": 1}, message


def test_own_node_affinity_still_applies():
    """The queue's groups are ANDed into the pod's own required node affinity, term by term."""
    n1, n3 = nodes()[0], nodes()[2]
    n1["metadata"]["labels"]["zone"] = "a"
    cluster = cluster_of([n1, n3], [Q1], "q1")
    pod = build_pod(
        "c1",
        "p2",
        "",
        PENDING,
        rl("1", "1Gi"),
        "pg1",
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            }
        },
    )
    cluster.add_pod(pod)
    result = vcore.Scheduler(cluster, cycle=conf()).run_cycle()
    assert {b.pod: b.node for b in result.bindings} == {"c1/p1": "n3", "c1/p2": "n1"}


# -- the queue object and changes between cycles ---------------------------------------------------------------------
def test_queue_affinity_errors_name_the_field():
    bad = queue("q", {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "group1"}})
    with pytest.raises(TypeError, match=r"queue q: spec\.affinity\.nodeGroupAffinity\.requiredDuring\w+: must be a"):
        vcore.Cluster().add_queue(bad)
    unknown = queue("q", {"nodeAffinity": {}})
    with pytest.raises(ValueError, match=r"queue q: spec\.affinity\.nodeAffinity: unknown field"):
        vcore.Cluster().add_queue(unknown)


def test_a_queue_update_reaches_pending_tasks():
    """The queue first avoids group1, then requires it: the next cycle places the waiting task there."""
    cluster = cluster_of([nodes()[0]], [queue("q", affinity(["group3"]))], "q")
    scheduler = vcore.Scheduler(cluster, cycle=conf())
    assert not scheduler.run_cycle().bindings
    cluster.update_queue(queue("q", affinity(["group1"])))
    assert [b.node for b in scheduler.run_cycle().bindings] == ["n1"]


def test_a_configuration_without_the_plugin_lifts_its_filter():
    """A task an earlier scheduler's nodegroup kept off n2 goes there under a configuration without the plugin."""
    cluster = cluster_of([nodes()[1]], [Q1], "q1")
    assert not vcore.Scheduler(cluster, cycle=conf()).run_cycle().bindings
    plain = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}
    assert [b.node for b in vcore.Scheduler(cluster, cycle=plain).run_cycle().bindings] == ["n2"]


def test_preempt_tries_the_best_scored_group_first():
    """Both admitted nodes are full of lower-priority pods: preempt evicts on n3 (150), not on n1 (100)."""
    n1, n3 = nodes()[0], nodes()[2]
    n3["status"]["allocatable"] = n3["status"]["capacity"] = node_res("2", "4Gi")
    cluster = vcore.Cluster()
    for n in (n1, n3):  # n1 first: slot and name order would both pick it
        cluster.add_node(n)
    cluster.add_queue(Q1)
    for name, value in (("low", 1), ("high", 100)):
        cluster.add_priority_class(build_priority_class(name, value))
    for name, node, priority in (("low1", "n1", "low"), ("low3", "n3", "low"), ("high", "", "high")):
        phase = "Running" if node else PENDING
        cluster.add_podgroup(build_podgroup(name, "c1", "q1", 1, None, phase, priority_class=priority))
        cluster.add_pod(build_pod("c1", name, node, phase, rl("2", "4Gi"), name))
    cycle = {
        "actions": "enqueue, allocate, preempt",
        "tiers": [{"plugins": [{"name": "priority"}]}, {"plugins": [{"name": "nodegroup"}]}],
    }
    result = vcore.Scheduler(cluster, cycle=cycle).run_cycle()
    assert [e.victim for e in result.evictions] == ["c1/low3"]
    assert result.nominated == {"c1/high": "n3"}
