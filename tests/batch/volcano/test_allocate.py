"""Volcano v1.14 pkg/scheduler/actions/allocate/allocate_test.go, run through vcore's cycle (the allocate action
alone, as the Go tests run it).

TestAllocate, the network-topology tables (TestAllocateWithNetWorkTopologies, TestNodeLevelScoreWithNetWorkTopologies,
TestHyperNodeBinpackWithNetWorkTopologies, TestAllocateWithPartitionPolicyNetworkTopology) and TestFareShareAllocate
run; TestParseArgs checks that the allocate action's argument is accepted; the PVC and DRA tables are listed as out
of scope, the JobWorksheet unit tests as Volcano internals. A Go case's HyperNodes come from its HyperNodesSetByTier
and HyperNodes node sets (what Volcano's session reads), with the tier names its HyperNodeInfo objects carry."""

from __future__ import annotations

import pytest

from vcore.batch.config import CycleConfig

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_RUNNING,
    RUNNING,
    Case,
    Suite,
    build_node,
    build_pod,
    build_podgroup,
    build_pv,
    build_pvc,
    build_queue,
    build_storage_class,
    hypernodes_from_sets,
    mark,
    node_res,
    opt,
    rl,
    sub_group,
    subgroup_pg,
    topology_pg,
    topology_pg_by_name,
    uniform_nodes,
    with_pvc,
)

TASK_SPEC, JOB_SPEC, HYPERNODE_SPEC = "volcano.sh/task-spec", "volcano.sh/job-spec", "volcano.sh/hypernode-spec"


# -- TestParseArgs ------------------------------------------------------------------------------------------------
def test_parse_args():
    """ "set cache false": allocate's predicateErrorCacheEnable argument (conf.EnablePredicateErrCacheKey) is taken."""
    conf = CycleConfig.from_config(
        {
            "actions": "allocate",
            "tiers": [],
            "configurations": [{"name": "allocate", "arguments": {"predicateErrorCacheEnable": False}}],
        }
    )
    assert conf.action_arguments["allocate"] == {"predicateErrorCacheEnable": False}


# -- TestAllocate -------------------------------------------------------------------------------------------------
def _role_pod(name, role, node_role, cpu="1"):
    return build_pod("c1", name, "", PENDING, rl(cpu, "1G"), "pg1", {TASK_SPEC: role}, {"nodeRole": node_role})


ALLOCATE = Suite(
    "TestAllocate",
    [
        [
            opt("gang", EnabledJobOrder=True, EnabledJobReady=True, EnabledJobPipelined=True, EnabledJobStarving=True),
            opt("drf", EnabledPreemptable=True, EnabledJobOrder=True),
            opt("proportion", EnabledQueueOrder=True, EnabledReclaimable=True, EnabledAllocatable=True),
            opt("predicates", EnabledPredicate=True),
            opt("nodeorder", EnabledNodeOrder=True),
        ]
    ],
    ["allocate"],
    [
        Case(
            "prepredicate failed: node selector does not match",
            podgroups=[build_podgroup("pg1", "c1", "c1", 1, None, PG_INQUEUE)],
            pods=[_role_pod("p1", "master", "master"), _role_pod("p2", "worker", "worker")],
            nodes=[build_node("n1", node_res("2", "4Gi"), {"nodeRole": "worker"})],
            queues=[build_queue("c1", 1)],
            expect_bind={"c1/p2": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "prepredicate failed and tasks are not used up, continue on until min member meet",
            podgroups=[build_podgroup("pg1", "c1", "c1", 2, {"master": 1, "worker": 1}, PG_INQUEUE)],
            pods=[
                _role_pod("p0", "master", "master"),
                _role_pod("p1", "master", "master"),
                _role_pod("p2", "worker", "worker"),
                _role_pod("p3", "worker", "worker"),
            ],
            nodes=[
                build_node("n1", node_res("1", "2Gi"), {"nodeRole": "master"}),
                build_node("n2", node_res("1", "2Gi"), {"nodeRole": "worker"}),
            ],
            queues=[build_queue("c1", 1)],
            expect_bind={"c1/p0": "n1", "c1/p2": "n2"},
            expect_binds_num=2,
        ),
        Case(
            "master's min member can not be allocated, break from allocating",
            podgroups=[build_podgroup("pg1", "c1", "c1", 2, {"master": 2, "worker": 0}, PG_INQUEUE)],
            pods=[
                _role_pod("p0", "master", "master"),
                _role_pod("p1", "master", "master"),
                _role_pod("p2", "worker", "worker"),
                _role_pod("p3", "worker", "worker"),
            ],
            nodes=[
                build_node("n1", node_res("1", "2Gi"), {"nodeRole": "master"}),
                build_node("n2", node_res("2", "2Gi"), {"nodeRole": "worker"}),
            ],
            queues=[build_queue("c1", 1)],
        ),
        Case(
            "one Job with two Pods on one node",
            podgroups=[build_podgroup("pg1", "c1", "c1", 0, None, PG_INQUEUE)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("1", "1G"), "pg1"),
                build_pod("c1", "p2", "", PENDING, rl("1", "1G"), "pg1"),
            ],
            nodes=[build_node("n1", node_res("2", "4Gi"))],
            queues=[build_queue("c1", 1)],
            expect_bind={"c1/p1": "n1", "c1/p2": "n1"},
            expect_binds_num=2,
        ),
        Case(
            "two Jobs on one node",
            podgroups=[
                build_podgroup("pg1", "c1", "c1", 0, None, PG_INQUEUE),
                build_podgroup("pg2", "c2", "c2", 0, None, PG_INQUEUE),
            ],
            pods=[
                build_pod("c1", "pg1-p-1", "", PENDING, rl("1", "1G"), "pg1"),
                build_pod("c1", "pg1-p-2", "", PENDING, rl("1", "1G"), "pg1"),
                build_pod("c2", "pg2-p-1", "", PENDING, rl("1", "1G"), "pg2"),
                build_pod("c2", "pg2-p-2", "", PENDING, rl("1", "1G"), "pg2"),
            ],
            nodes=[build_node("n1", node_res("2", "4G"))],
            queues=[build_queue("c1", 1), build_queue("c2", 1)],
            expect_bind={"c2/pg2-p-1": "n1", "c1/pg1-p-1": "n1"},
            expect_binds_num=2,
        ),
        Case(
            "high priority queue should not block others",
            podgroups=[
                build_podgroup("pg1", "c1", "c1", 0, None, PG_INQUEUE),
                build_podgroup("pg2", "c1", "c2", 0, None, PG_INQUEUE),
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("3", "1G"), "pg1"),
                build_pod("c1", "p2", "", PENDING, rl("1", "1G"), "pg2"),
            ],
            nodes=[build_node("n1", node_res("2", "4G"))],
            queues=[build_queue("c1", 1), build_queue("c2", 1)],
            expect_bind={"c1/p2": "n1"},
            expect_binds_num=1,
        ),
    ],
    {"drf", "proportion", "predicates", "nodeorder", "gang"},
)


@pytest.mark.parametrize("case", ALLOCATE.params())
def test_allocate(case):
    ALLOCATE.run(case)


# -- HyperNode trees of the network-topology tables ---------------------------------------------------------------
TWO_LEAF_SETS = {"s0": ("s0-n1", "s0-n2"), "s1": ("s1-n3", "s1-n4"), "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4")}
THREE_TIER_SETS = {
    "s0": ("s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
    "s1": ("s3-n1", "s3-n2", "s4-n1", "s4-n2"),
    "s2": ("s5-n1", "s5-n2", "s6-n1", "s6-n2"),
    "s3": ("s3-n1", "s3-n2"),
    "s4": ("s4-n1", "s4-n2"),
    "s5": ("s5-n1", "s5-n2"),
    "s6": ("s6-n1", "s6-n2"),
}
THREE_TIER_BY_TIER = {1: ("s3", "s4", "s5", "s6"), 2: ("s1", "s2"), 3: ("s0",)}
#: s0 {s0-n1, s0-n2} and s1 {s1-n3, s1-n4} at tier 1 under s2 at tier 2
TWO_LEAVES = hypernodes_from_sets({1: ("s0", "s1"), 2: ("s2",)}, TWO_LEAF_SETS)
#: the same tree numbered from tier 0
TWO_LEAVES_TIERS_0_1 = hypernodes_from_sets({0: ("s0", "s1"), 1: ("s2",)}, TWO_LEAF_SETS)
#: TWO_LEAVES with tier names: 1 volcano.sh/task-spec, 2 volcano.sh/job-spec
TWO_LEAVES_NAMED = hypernodes_from_sets({1: ("s0", "s1"), 2: ("s2",)}, TWO_LEAF_SETS, {1: TASK_SPEC, 2: JOB_SPEC})
#: s0 and s1 at tier 1, no HyperNode above them
TWO_LEAVES_NO_TOP = hypernodes_from_sets({1: ("s0", "s1")}, TWO_LEAF_SETS)
#: TWO_LEAVES_NO_TOP, tier 1 named volcano.sh/task-spec
TWO_LEAVES_NO_TOP_NAMED = hypernodes_from_sets({1: ("s0", "s1")}, TWO_LEAF_SETS, {1: TASK_SPEC})
#: s0 {s0-n1} and s1 {s1-n2} at tier 0
TWO_ONE_NODE_HYPERNODES_TIER_0 = hypernodes_from_sets({0: ("s0", "s1")}, {"s0": ("s0-n1",), "s1": ("s1-n2",)})
#: s0 {s0-n1, s0-n2} alone at tier 1
ONE_LEAF = hypernodes_from_sets({1: ("s0",)}, {"s0": ("s0-n1", "s0-n2")})
#: s0 {s0-n1, s0-n2} and s1 {s1-n3} under s2
LEAVES_OF_2_AND_1 = hypernodes_from_sets(
    {1: ("s0", "s1"), 2: ("s2",)}, {"s0": ("s0-n1", "s0-n2"), "s1": ("s1-n3",), "s2": ("s0-n1", "s0-n2", "s1-n3")}
)
#: s0 {s0-n1, s0-n2}, s1 {s1-n3, s1-n4}, s2 {s2-n5} under s3
LEAVES_OF_2_2_AND_1 = hypernodes_from_sets(
    {1: ("s0", "s1", "s2"), 2: ("s3",)},
    {
        "s0": ("s0-n1", "s0-n2"),
        "s1": ("s1-n3", "s1-n4"),
        "s2": ("s2-n5",),
        "s3": ("s0-n1", "s0-n2", "s1-n3", "s1-n4", "s2-n5"),
    },
)
#: s0, s1, s2 of two nodes each under s3
THREE_LEAVES = hypernodes_from_sets(
    {1: ("s0", "s1", "s2"), 2: ("s3",)},
    {
        "s0": ("s0-n1", "s0-n2"),
        "s1": ("s1-n3", "s1-n4"),
        "s2": ("s2-n5", "s2-n6"),
        "s3": ("s0-n1", "s0-n2", "s1-n3", "s2-n5", "s1-n4", "s2-n6"),
    },
)
#: s3..s6 (two nodes each) at tier 1, s1 {s3, s4} and s2 {s5, s6} at tier 2, s0 at tier 3
THREE_TIERS = hypernodes_from_sets(THREE_TIER_BY_TIER, THREE_TIER_SETS)
#: THREE_TIERS with tier names task-spec, job-spec, hypernode-spec
THREE_TIERS_NAMED = hypernodes_from_sets(
    THREE_TIER_BY_TIER, THREE_TIER_SETS, {1: TASK_SPEC, 2: JOB_SPEC, 3: HYPERNODE_SPEC}
)

GANG = opt("gang", EnabledJobOrder=True, EnabledJobReady=True, EnabledJobPipelined=True, EnabledJobStarving=True)
NETWORK_TOPOLOGY = opt(
    "network-topology-aware", EnabledNodeOrder=True, EnabledHyperNodeOrder=True, EnabledHyperNodeGradient=True
)
TOPOLOGY_TIERS = [[GANG, opt("predicates", EnabledPredicate=True), NETWORK_TOPOLOGY]]
TOPOLOGY_PLUGINS = {"predicates", "gang", "network-topology-aware"}


# -- TestAllocateWithNetWorkTopologies -------------------------------------------------------------------------

NETWORK_TOPOLOGIES = Suite(
    "TestAllocateWithNetWorkTopologies",
    TOPOLOGY_TIERS,
    ["allocate"],
    [
        Case(
            "soft network topology constrain, can allocate job when resources are enough",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 3, None, PG_INQUEUE, "soft", 0)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_TIERS_0_1,
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "soft network topology constrain, can allocate job when minavailable < replicas",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 1, None, PG_INQUEUE, "soft", 0)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "soft network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 1, None, PG_INQUEUE, "soft", 0)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"})
            ],
            nodes=[
                build_node("s0-n1", node_res("2", "4Gi", "10")),
                build_node("s1-n2", node_res("2", "4Gi", "10"), {"nodeRole": "master"}),
            ],
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_ONE_NODE_HYPERNODES_TIER_0,
            expect_bind={"c1/p1": "s1-n2"},
            expect_binds_num=1,
        ),
        Case(
            "soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough",
            podgroups=[topology_pg("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "soft", 0)],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "soft network topology constrain and tasks in job rescheduled, can allocate job when resources are "
            "enough and minavailable = replicas",
            podgroups=[topology_pg("pg1", "c1", "s0", "q1", 3, None, PG_INQUEUE, "soft", 0)],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "soft network topology constrain and tasks in job rescheduled, can allocate job when cross "
            "highestTierAllowed tier and hyperNodesInfo has three tier",
            podgroups=[topology_pg("pg1", "c1", "s3", "q1", 2, None, PG_INQUEUE, "soft", 0)],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can not allocate job when cross highestTierAllowed tier",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 3, None, PG_INQUEUE, "hard", 1)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can allocate job when highestTierAllowed not reached",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 3, None, PG_INQUEUE, "hard", 2)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can allocate job when multi hyperNodes are available",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 2, None, PG_INQUEUE, "hard", 1)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can allocate job when minavailable < replicas",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 1, None, PG_INQUEUE, "hard", 1)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 1, None, PG_INQUEUE, "hard", 1)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"})
            ],
            nodes=[
                build_node("s0-n1", node_res("2", "4Gi", "10")),
                build_node("s1-n2", node_res("2", "4Gi", "10"), {"nodeRole": "master"}),
            ],
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_ONE_NODE_HYPERNODES_TIER_0,
            expect_bind={"c1/p1": "s1-n2"},
            expect_binds_num=1,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can allocate job when "
            "highestTierAllowed not reached",
            podgroups=[topology_pg("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "hard", 2)],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can allocate job when "
            "highestTierAllowed not reached and minavailable = replicas",
            podgroups=[topology_pg("pg1", "c1", "s0", "q1", 3, None, PG_INQUEUE, "hard", 2)],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can allocate job when "
            "highestTierAllowed not reached and hyperNodesInfo has three tier",
            podgroups=[topology_pg("pg1", "c1", "s3", "q1", 2, None, PG_INQUEUE, "hard", 2)],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can not allocate job when cross "
            "highestTierAllowed tier",
            podgroups=[topology_pg("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "hard", 1)],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can not allocate job when cross "
            "highestTierAllowed tier and hyperNodesInfo has three tier",
            podgroups=[topology_pg("pg1", "c1", "s3", "q1", 2, None, PG_INQUEUE, "hard", 1)],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can allocate job when LCAHyperNode is empty",
            podgroups=[topology_pg("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "hard", 2)],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NO_TOP,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can not allocate job when cross highestTierName tier",
            podgroups=[topology_pg_by_name("pg1", "c1", "", "q1", 3, None, PG_INQUEUE, "hard", "volcano.sh/task-spec")],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NAMED,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can allocate job when the tier corresponding to highestTierName not "
            "reached",
            podgroups=[topology_pg_by_name("pg1", "c1", "", "q1", 3, None, PG_INQUEUE, "hard", "volcano.sh/job-spec")],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NAMED,
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain, can allocate job when multi hyperNodes are available",
            podgroups=[topology_pg_by_name("pg1", "c1", "", "q1", 2, None, PG_INQUEUE, "hard", "volcano.sh/task-spec")],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NAMED,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and task in job rescheduled, can allocate job when the tier "
            "corresponding to highestTierName not reached",
            podgroups=[
                topology_pg_by_name("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "hard", "volcano.sh/job-spec")
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NAMED,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and task in job rescheduled, can allocate job when the tier "
            "corresponding to highestTierName not reached and minavailable = replicas",
            podgroups=[
                topology_pg_by_name("pg1", "c1", "s0", "q1", 3, None, PG_INQUEUE, "hard", "volcano.sh/job-spec")
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NAMED,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and task in job rescheduled, can allocate job when the tier "
            "corresponding to highestTierName not reached and hyperNodesInfo has three tier",
            podgroups=[
                topology_pg_by_name("pg1", "c1", "s3", "q1", 2, None, PG_INQUEUE, "hard", "volcano.sh/job-spec")
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS_NAMED,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology constrain and tasks in job rescheduled, can not allocate job when cross the "
            "tier corresponding to highestTierName",
            podgroups=[
                topology_pg_by_name("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "hard", "volcano.sh/task-spec")
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NAMED,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "hard network topology with highestTierName constrain and tasks in job rescheduled, can allocate job "
            "when here is no corresponding highestTierAllowed for highestTierName",
            podgroups=[
                topology_pg_by_name("pg1", "c1", "s0", "q1", 2, None, PG_INQUEUE, "hard", "volcano.sh/hypercluster")
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NO_TOP_NAMED,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
    ],
    TOPOLOGY_PLUGINS,
)


mark(
    NETWORK_TOPOLOGIES.cases,
    skip={
        "hard network topology constrain and task in job rescheduled, can allocate job when the tier corresponding to "
        "highestTierName not reached and hyperNodesInfo has three tier": "fixture artifact: the running pods p1 and p2 "
        "are on s0-n1 and s0-n2, which are not nodes of this case "
        "(Volcano's cache keeps them on placeholder nodes); vcore refuses a pod bound to an unknown node "
        "(NodeNotFoundError)",
    },
)


@pytest.mark.parametrize("case", NETWORK_TOPOLOGIES.params())
def test_allocate_with_network_topologies(case):
    NETWORK_TOPOLOGIES.run(case)


# -- TestNodeLevelScoreWithNetWorkTopologies -------------------------------------------------------------------

NODE_LEVEL_SCORE = Suite(
    "TestNodeLevelScoreWithNetWorkTopologies",
    [
        [
            GANG,
            opt("predicates", EnabledPredicate=True),
            opt("binpack", EnabledNodeOrder=True),
            NETWORK_TOPOLOGY,
        ]
    ],
    ["allocate"],
    [
        Case(
            "hard network topology constrain, allocate job to highest score hypeNode with node level binpack",
            podgroups=[
                topology_pg("pg1", "c1", "", "q1", 2, None, PG_INQUEUE, "hard", 1),
                build_podgroup("pg2", "c1", "q1", 2, None, PG_RUNNING),
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("4", "8Gi"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "s0-n1", RUNNING, rl("2", "4Gi"), "pg2", {TASK_SPEC: "master"}),
                build_pod("c1", "p4", "s0-n2", RUNNING, rl("4", "8Gi"), "pg2", {TASK_SPEC: "worker"}),
            ],
            nodes=[
                build_node("s0-n1", node_res("4", "8Gi", "10")),
                build_node("s0-n2", node_res("8", "16Gi", "10")),
                build_node("s1-n3", node_res("4", "8Gi", "10")),
                build_node("s1-n4", node_res("8", "16Gi", "10")),
            ],
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_bind={"c1/p1": "s0-n1", "c1/p2": "s0-n2"},
            expect_binds_num=2,
        ),
    ],
    TOPOLOGY_PLUGINS | {"binpack"},
)


NODE_LEVEL_SCORE.cases[0].note = (
    'pg2 (Running, every pod running) is built by Go with networkTopology mode "" (highestTierAllowed 1): an object '
    "the API server's enum refuses, which Volcano's scheduler reads as neither hard nor soft; here pg2 has no "
    "networkTopology, the same (no) constraint"
)


@pytest.mark.parametrize("case", NODE_LEVEL_SCORE.params())
def test_node_level_score_with_network_topologies(case):
    NODE_LEVEL_SCORE.run(case)


# -- TestHyperNodeBinpackWithNetWorkTopologies ----------------------------------------------------------------

HYPERNODE_BINPACK = Suite(
    "TestHyperNodeBinpackWithNetWorkTopologies",
    TOPOLOGY_TIERS,
    ["allocate"],
    [
        Case(
            "hard network topology constrain, allocate task to node under LCAHyperNode",
            podgroups=[topology_pg("pg1", "c1", "", "q1", 4, None, PG_INQUEUE, "hard", 2)],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("4", "8Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("4", "8Gi"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("4", "8Gi"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("4", "8Gi"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("4", "8Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4", "s2-n5", "s2-n6"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_LEAVES,
            expect_binds_num=4,
            expect_binds_per_hypernode=[2, 2],
        ),
    ],
    TOPOLOGY_PLUGINS,
)


@pytest.mark.parametrize("case", HYPERNODE_BINPACK.params())
def test_hypernode_binpack_with_network_topologies(case):
    HYPERNODE_BINPACK.run(case)


# -- TestAllocateWithPartitionPolicyNetworkTopology ------------------------------------------------------------
PARTITION_TIERS = [
    [
        opt(
            "gang",
            EnabledJobOrder=True,
            EnabledJobReady=True,
            EnabledJobPipelined=True,
            EnabledJobStarving=True,
            EnabledSubJobReady=True,
            EnabledSubJobOrder=True,
        ),
        opt("predicates", EnabledPredicate=True),
        NETWORK_TOPOLOGY,
    ]
]

PARTITION_POLICY = Suite(
    "TestAllocateWithPartitionPolicyNetworkTopology",
    PARTITION_TIERS,
    ["allocate"],
    [
        Case(
            "podgroup hard network topology constrain and subGroup soft network topology constrain, can allocate "
            "job when resources are enough",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "soft", 0, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_TIERS_0_1,
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup soft network topology constrain, can allocate "
            "job when minavailable < replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    1,
                    None,
                    PG_INQUEUE,
                    "hard",
                    1,
                    [sub_group("task1", [TASK_SPEC], "soft", 0, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup soft network topology constrain, two available "
            "hyperNodes, can allocate job to nodes with affinity",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    1,
                    None,
                    PG_INQUEUE,
                    "hard",
                    1,
                    [sub_group("task1", [TASK_SPEC], "soft", 0, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"})
            ],
            nodes=[
                build_node("s0-n1", node_res("2", "4Gi", "10")),
                build_node("s1-n2", node_res("2", "4Gi", "10"), {"nodeRole": "master"}),
            ],
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_ONE_NODE_HYPERNODES_TIER_0,
            expect_bind={"c1/p1": "s1-n2"},
            expect_binds_num=1,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in "
            "job rescheduled, can allocate job when resources are enough",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s2",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "soft", 0, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in "
            "job rescheduled, can allocate job when resources are enough and minavailable = replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s2",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "soft", 0, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in "
            "job rescheduled, can allocate job when cross highestTierAllowed tier and hyperNodesInfo has three "
            "tier",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s1",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "soft", 0, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup soft network topology constrain and subGroup hard network topology constrain, can allocate "
            "job when resources are enough",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "soft",
                    0,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 2, 0),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 1, 0),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {"volcano.sh/task-instance": "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3"),
            queues=[build_queue("q1", 1)],
            hypernodes=LEAVES_OF_2_AND_1,
            expect_bind={"c1/p1": "s1-n3"},
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup soft network topology constrain and subGroup hard network topology constrain, can allocate "
            "job when minavailable < replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    1,
                    None,
                    PG_INQUEUE,
                    "soft",
                    0,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup soft network topology constrain and subGroup hard network topology constrain, can not "
            "allocate job when cross highestTierAllowed tier",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "soft",
                    0,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup soft network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can allocate job when resources are enough",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s2",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "soft",
                    0,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s1-n3", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_bind={"c1/p3": "s1-n4"},
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup soft network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has "
            "three tier",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s1",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "soft",
                    0,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "s4-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "s4-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job when highestTierAllowed not reached",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job according to the network topology constrain of subGroup policy",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 0),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {"volcano.sh/task-instance": "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3"),
            queues=[build_queue("q1", 1)],
            hypernodes=LEAVES_OF_2_AND_1,
            expect_bind={"c1/p1": "s1-n3"},
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job when multi hyperNodes are available",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job when minavailable < replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    1,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, two available hyperNodes, can allocate job to nodes with affinity",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s1-n3", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_bind={"c1/p3": "s1-n4"},
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can allocate job when highestTierAllowed not reached and minavailable = replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can allocate job when highestTierAllowed not reached and hyperNodesInfo has three "
            "tier",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s3",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    3,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can not allocate job when cross highestTierAllowed tier",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has "
            "three tier",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s3",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    3,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s3-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s3-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "s4-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "s4-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=THREE_TIERS,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in "
            "job rescheduled, can allocate job when LCAHyperNode is empty",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    3,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 1, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES_NO_TOP,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job according to the network topology constrain of subGroup policy with minSubGroups",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    5,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 1),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 2),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4", "s2-n5"),
            queues=[build_queue("q1", 1)],
            hypernodes=LEAVES_OF_2_2_AND_1,
            expect_bind={"c1/p1": "s2-n5"},
            expect_binds_num=5,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job according to the network topology constrain of subGroup policy with minSubGroups and "
            "minavailable = replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 1),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 1),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3"),
            queues=[build_queue("q1", 1)],
            hypernodes=LEAVES_OF_2_AND_1,
            expect_bind={"c1/p1": "s1-n3"},
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate "
            "job according to the network topology constrain of subGroup policy with minSubGroups and hypernode "
            "resources meet minSubGroups",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 2),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 1),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master2"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master3"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master4"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p6", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p7", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
                build_pod("c1", "p8", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=4,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can not "
            "allocate job when minMember is not satisfied",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    5,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 1),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 1),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain, can not "
            "allocate job when minSubGroups is not satisfied",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 1),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 2),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain with "
            "minSubGroups and tasks in job rescheduled, two available hyperNodes, can allocate job to nodes with "
            "affinity",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 2, 1)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s1-n3", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_bind={"c1/p3": "s1-n4"},
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain with "
            "minSubGroups and tasks in job rescheduled, can not allocate job when hypernode resources are "
            "insufficient.",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    2,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 2, 1)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s1-n3", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "s1-n4", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain with "
            "minSubGroups and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and "
            "minAvailable = replicas",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    4,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 2, 2)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "podgroup hard network topology constrain and subGroup hard network topology constrain with "
            "minSubGroups and tasks in job rescheduled, can allocate job when subGroup is rescheduled",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 1, 2),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 2, 1),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master2"}),
                build_pod("c1", "p3", "s0-n1", RUNNING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master3"}),
                build_pod("c1", "p4", "s0-n2", RUNNING, rl("2", "4Gi"), "pg1", {TASK_SPEC: "master4"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p6", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p7", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
                build_pod("c1", "p8", "", PENDING, rl("2", "4Gi"), "pg1", {"volcano.sh/task-instance": "worker2"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "rescheduling scenario: SubJob with multiple pending tasks, GetMinResources returns sum of all "
            "pending tasks resources",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    4,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 4, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("4", "8Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "rescheduling scenario: SubJob with single pending task",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 3, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("4", "8Gi", "s0-n1", "s0-n2", "s1-n3"),
            queues=[build_queue("q1", 1)],
            hypernodes=LEAVES_OF_2_AND_1,
            expect_binds_num=1,
            minimal_bind_check=True,
        ),
        Case(
            "rescheduling scenario: multiple SubJobs with different pending task counts",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s2",
                    "q1",
                    6,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [
                        sub_group("task1", [TASK_SPEC], "hard", 1, 3, 0),
                        sub_group("task2", ["volcano.sh/task-instance"], "hard", 1, 3, 0),
                    ],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "master"}),
                build_pod("c1", "p4", "s1-n3", RUNNING, rl("2", "4G"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p5", "", PENDING, rl("2", "4G"), "pg1", {"volcano.sh/task-instance": "worker"}),
                build_pod("c1", "p6", "", PENDING, rl("2", "4G"), "pg1", {"volcano.sh/task-instance": "worker"}),
            ],
            nodes=uniform_nodes("4", "8Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=3,
            minimal_bind_check=True,
        ),
        Case(
            "rescheduling scenario: pending tasks with different resource requirements",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    1,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 3, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1-running", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p2-pending-small", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3-pending-large", "", PENDING, rl("4", "8G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("10", "20Gi", "s0-n1", "s0-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=ONE_LEAF,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "rescheduling scenario: insufficient resources for pending tasks allocation",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s0",
                    "q1",
                    3,
                    None,
                    PG_INQUEUE,
                    "hard",
                    1,
                    [sub_group("task1", [TASK_SPEC], "hard", 1, 3, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("4", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p2", "", PENDING, rl("4", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("4", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("4", "8Gi", "s0-n1", "s0-n2"),
            queues=[build_queue("q1", 1)],
            hypernodes=ONE_LEAF,
            expect_binds_num=0,
            minimal_bind_check=True,
        ),
        Case(
            "rescheduling scenario: SubJob rescheduling within tier-2 HyperNode constraint",
            podgroups=[
                subgroup_pg(
                    "pg1",
                    "c1",
                    "s2",
                    "q1",
                    4,
                    None,
                    PG_INQUEUE,
                    "hard",
                    2,
                    [sub_group("task1", [TASK_SPEC], "hard", 2, 4, 0)],
                )
            ],
            pods=[
                build_pod("c1", "p1", "s0-n1", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p2", "s0-n2", RUNNING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p3", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
                build_pod("c1", "p4", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker"}),
            ],
            nodes=uniform_nodes("4", "8Gi", "s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            queues=[build_queue("q1", 1)],
            hypernodes=TWO_LEAVES,
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
        Case(
            "no network topology at job or subgroup level but has SubJobPolicy, can allocate job successfully",
            podgroups=[
                subgroup_pg(
                    "pg1", "c1", "", "q1", 2, None, PG_INQUEUE, "", 0, [sub_group("worker", [TASK_SPEC], "", 0, 1, 2)]
                )
            ],
            pods=[
                build_pod("c1", "p1", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker-0"}),
                build_pod("c1", "p2", "", PENDING, rl("2", "4G"), "pg1", {TASK_SPEC: "worker-1"}),
            ],
            nodes=uniform_nodes("2", "4Gi", "n1", "n2"),
            queues=[build_queue("q1", 1)],
            expect_binds_num=2,
            minimal_bind_check=True,
        ),
    ],
    TOPOLOGY_PLUGINS,
)


@pytest.mark.parametrize("case", PARTITION_POLICY.params())
def test_allocate_with_partition_policy_network_topology(case):
    PARTITION_POLICY.run(case)


# -- TestFareShareAllocate ----------------------------------------------------------------------------------------
def _ns1_pod(name, node, phase, cpu, mem, group):
    return build_pod("ns-1", name, node, phase, rl(cpu, mem), group)


NODE_1 = [build_node("node-1", node_res("5", "5G"))]
FARE_SHARE = Suite(
    "TestFareShareAllocate",
    [
        [
            opt("drf", EnabledPreemptable=True, EnabledJobOrder=True),
            opt("proportion", EnabledQueueOrder=True, EnabledReclaimable=True, EnabledAllocatable=False),
            opt("predicates", EnabledPredicate=True),
            opt("nodeorder", EnabledNodeOrder=True),
        ]
    ],
    ["allocate"],
    [
        Case(
            "queue with low DRF share value has high priority, should allocate first",
            podgroups=[
                build_podgroup("pg-small-1", "ns-1", "q-1", 0, None, PG_RUNNING),
                build_podgroup("pg-large-1", "ns-1", "q-1", 0, None, PG_INQUEUE),
                build_podgroup("pg-large-2", "ns-1", "q-2", 0, None, PG_INQUEUE),
            ],
            pods=[
                _ns1_pod("pod-small-1", "node-1", RUNNING, "1", "1G", "pg-small-1"),
                _ns1_pod("pod-large-1", "", PENDING, "2", "2G", "pg-large-1"),
                _ns1_pod("pod-large-2", "", PENDING, "3", "2G", "pg-large-2"),
            ],
            nodes=NODE_1,
            queues=[build_queue("q-1", 1), build_queue("q-2", 1)],
            expect_bind={"ns-1/pod-large-2": "node-1"},
            expect_binds_num=1,
        ),
        Case(
            "queue's DRF share value will be updated and its priority will change before it is put back into the "
            "priority queue",
            podgroups=[
                build_podgroup("pg-small-1", "ns-1", "q-1", 0, None, PG_RUNNING),
                build_podgroup("pg-large-1", "ns-1", "q-1", 0, None, PG_INQUEUE),
                build_podgroup("pg-small-2", "ns-1", "q-2", 0, None, PG_INQUEUE),
                build_podgroup("pg-large-2", "ns-1", "q-2", 0, None, PG_INQUEUE),
            ],
            pods=[
                _ns1_pod("pod-small-1", "node-1", RUNNING, "1", "1G", "pg-small-1"),
                _ns1_pod("pod-large-1", "", PENDING, "2", "2G", "pg-large-1"),
                _ns1_pod("pod-large-2", "", PENDING, "2", "2G", "pg-large-2"),
                _ns1_pod("pod-small-2", "", PENDING, "1", "1G", "pg-small-2"),
            ],
            nodes=NODE_1,
            queues=[build_queue("q-1", 1), build_queue("q-2", 1)],
            expect_bind={"ns-1/pod-large-1": "node-1", "ns-1/pod-large-2": "node-1"},
            expect_binds_num=2,
        ),
        Case(
            "queue's one jobs has no pending tasks, should be put back to queues for next job",
            podgroups=[
                build_podgroup("pg-1", "ns-1", "q-1", 0, None, PG_RUNNING),
                build_podgroup("pg-2", "ns-1", "q-1", 0, None, PG_INQUEUE),
            ],
            pods=[
                _ns1_pod("pod-1", "node-1", RUNNING, "1", "1G", "pg-1"),
                _ns1_pod("pod-2", "", PENDING, "2", "2G", "pg-2"),
            ],
            nodes=NODE_1,
            queues=[build_queue("q-1", 1)],
            expect_bind={"ns-1/pod-2": "node-1"},
            expect_binds_num=1,
        ),
    ],
    {"drf", "proportion", "predicates", "nodeorder"},
)


@pytest.mark.parametrize("case", FARE_SHARE.params())
def test_fare_share_allocate(case):
    FARE_SHARE.run(case)


# -- TestAllocateWithPVC ------------------------------------------------------------------------------------------
SC = build_storage_class("sc", "ignore-provisioner", "WaitForFirstConsumer")
PVCS = [build_pvc("c1", f"pvc{i}", "1Gi", "sc") for i in (1, 2)]
PV1, PV2 = build_pv("pv1", "sc", "2Gi"), build_pv("pv2", "sc", "2Gi")


def pvc_pods() -> list[dict]:
    return [with_pvc(build_pod("c1", f"p{i}", "", PENDING, rl("1", "1G"), "pg1"), f"pvc{i}") for i in (1, 2)]


ALLOCATE_WITH_PVC = Suite(
    "TestAllocateWithPVC",
    [
        [
            opt("gang", EnabledJobReady=True, EnabledPredicate=True, EnabledJobPipelined=True, EnabledTaskOrder=True),
            opt("predicates", EnabledPredicate=True),
        ]
    ],
    ["allocate"],
    [
        Case(
            "static pv matched but node without enough resource",
            podgroups=[build_podgroup("pg1", "c1", "c1", 2, {"": 2}, PG_INQUEUE)],
            pods=pvc_pods(),
            queues=[build_queue("c1", 1)],
            nodes=[build_node("n1", node_res("1", "4Gi"))],
            storage=[SC, PV1, *PVCS],
            expect_status={"c1/pg1": PG_INQUEUE},
        ),
        # The Go case checks only that both tasks are Binding (the PV controller's part is not simulated).
        Case(
            "static pv matched and node with enough resources",
            podgroups=[build_podgroup("pg1", "c1", "c1", 2, {"": 2}, PG_INQUEUE)],
            pods=pvc_pods(),
            queues=[build_queue("c1", 1)],
            nodes=[build_node("n2", node_res("2", "4Gi"))],
            storage=[SC, PV1, PV2, *PVCS],
            minimal_bind_check=True,
            expect_binds_num=2,
        ),
    ],
    {"gang", "predicates"},
)


@pytest.mark.parametrize("case", ALLOCATE_WITH_PVC.params())
def test_allocate_with_pvc(case):
    result = ALLOCATE_WITH_PVC.run(case)
    # What the binding means for the volumes: each claim gets a PV of its own (VolumeBinding's Reserve), which
    # PreBind writes; nothing is reserved for a gang that did not go.
    claimed = {}
    for b in result.bindings:
        assert b.volumes is not None, b
        claimed.update({claim: pv for pv, claim, _uid in b.volumes.bindings})
    assert sorted(claimed) == (["c1/pvc1", "c1/pvc2"] if result.bindings else [])
    assert len(set(claimed.values())) == len(claimed)


DRA = (
    "vcore has no Dynamic Resource Allocation: ResourceClaims, ResourceSlices and DeviceClasses are not part of "
    "its cluster model"
)


@pytest.mark.parametrize("case", ["Allocate normal resourceClaim successfully", "claim cel runtime errors"])
def test_allocate_with_dra(case):
    pytest.skip(DRA)


@pytest.mark.parametrize("case", ["TestWorksheetShallowCopy", "TestWorksheetEmpty", "TestWorksheetClone"])
def test_worksheet(case):
    pytest.skip(
        "a unit test of the allocate action's own JobWorksheet priority-queue structure (copy, empty, clone): "
        "Volcano's internals, no scheduling semantics to compare"
    )
