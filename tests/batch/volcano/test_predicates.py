"""Volcano v1.14 (v1.14.4) pkg/scheduler/plugins/predicates/predicates_test.go, run through vcore's cycle.

Translated, as Suites of Cases:

* TestEventHandler ("pod-deallocate"; allocate with predicates, gang, priority): pg1's first task is placed on
  node1, its second cannot go anywhere (anti-affinity with the first on node1, node2 too small), so the gang is
  discarded and the first task deallocated; pg2's task then has node1 to itself only because the predicates
  forgot the discarded task (the plugin's DeallocateFunc).
* TestNodeNum ("pod-predicate"; allocate then backfill with predicates alone): best-effort pods, placed by
  backfill, are held to the node's ``pods`` allocatable.
* TestPodAntiAffinity ("pod-anti-affinity"; allocate then preempt with predicates and priority,
  enableTopologyAwarePreemption): worker-3 is refused n1 by its pod count and by required anti-affinity with
  worker-1 (role=worker). Both running tasks are victims by priority (their job's 10 < 100000), but the Go tiers
  leave predicates' EnabledPreemptable and EnabledAllocatable unset, so Volcano's dry run never tells
  InterPodAffinity that a victim left (SimulateRemoveTask is not called) and the node never fits: nothing is
  evicted, pipelined or bound. vcore evicted worker-1 until its topology-aware preemption learnt that
  (scheduler.py: _affinity_blind_to_victims); ``test_pod_anti_affinity_with_simulation_switches_on`` checks
  the outcome with the switch on (worker-1 evicted).

Not translated (they unit-test Volcano's Go internals, with no observable counterpart in a vcore cycle):

* TestSetUpDynamicResourcesArgs_Default, TestSetUpDynamicResourcesArgs_OverideSeconds: the DRA plugin's
  FilterTimeout argument set-up (a k8s DynamicResourcesArgs field); vcore has no DRA filter and no filter timeout.
* TestInitPlugin: which k8s framework plugins land in PredicatesPlugin's Filter/StableFilter/PreFilter/Reserve/
  PreBind/Score maps for given enable flags; those maps are Volcano's wiring, not a scheduling outcome.
* TestPredicateFailureReasonAggregationOrderStable: the order of FitError.Reasons() for one node when fake filter
  plugins (injected into the plugin's maps) all fail with a plain Unschedulable. vcore cannot inject filters, and
  the order is not observable: with the real plugins every stable filter (NodeUnschedulable, NodeAffinity,
  TaintToleration) fails UnschedulableAndUnresolvable and ends the node's check, and the FailedScheduling message
  (FitErrors.Error) is a sorted histogram of reasons.
* TestReserveRollbackOrderStable: the order PreBindRollBack calls the VolumeBinding and DynamicResources
  Unreserve hooks (fake reserve plugins); vcore has neither reserve plugin chain nor DRA.
"""

from __future__ import annotations

import pytest

import vcore

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_RUNNING,
    RUNNING,
    Case,
    Suite,
    build_cluster,
    build_node,
    build_pod,
    build_podgroup,
    build_priority_class,
    build_queue,
    node_res,
    opt,
    rl,
    scheduler_conf,
)

HOSTNAME = "kubernetes.io/hostname"


def worker_anti_affinity() -> dict:
    """getWorkerAffinity: required anti-affinity to pods labelled role=worker, per hostname."""
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
                    "topologyKey": HOSTNAME,
                }
            ]
        }
    }


WORKER = {"role": "worker"}
SELECT_WORKER = {"selector": "worker"}
P1, P2 = build_priority_class("p1", 1), build_priority_class("p2", 2)


# -- TestEventHandler ---------------------------------------------------------------------------------------------
EVENT_HANDLER = Suite(
    "TestEventHandler",
    [
        [
            opt("predicates", EnabledPredicate=True),
            opt("gang", EnabledJobReady=True, EnabledJobPipelined=True),
            opt("priority", EnabledJobOrder=True),
        ]
    ],
    ["allocate"],
    [
        Case(
            "pod-deallocate",
            pods=[
                build_pod(
                    "ns1",
                    "worker-1",
                    "",
                    PENDING,
                    rl("3", "3k"),
                    "pg1",
                    WORKER,
                    SELECT_WORKER,
                    affinity=worker_anti_affinity(),
                ),
                build_pod(
                    "ns1", "worker-2", "", PENDING, rl("5", "5k"), "pg1", WORKER, affinity=worker_anti_affinity()
                ),
                build_pod(
                    "ns1", "worker-3", "", PENDING, rl("4", "4k"), "pg2", WORKER, affinity=worker_anti_affinity()
                ),
            ],
            nodes=[
                build_node("node1", node_res("14", "14k"), {**SELECT_WORKER, HOSTNAME: "node1"}),
                build_node("node2", node_res("3", "3k"), {HOSTNAME: "node2"}),
            ],
            priority_classes=[P1, P2],
            podgroups=[
                build_podgroup("pg1", "ns1", "q1", 2, None, PG_INQUEUE, priority_class="p2"),
                build_podgroup("pg2", "ns1", "q1", 1, None, PG_INQUEUE, priority_class="p1"),
            ],
            queues=[build_queue("q1", 0)],
            expect_bind={"ns1/worker-3": "node1"},
            expect_binds_num=1,
        )
    ],
    {"predicates", "gang", "priority"},
)


# -- TestNodeNum --------------------------------------------------------------------------------------------------
NODE_NUM = Suite(
    "TestNodeNum",
    [[opt("predicates", EnabledPredicate=True)]],
    ["allocate", "backfill"],
    [
        Case(
            "pod-predicate",
            pods=[
                build_pod("ns1", "worker-1", "", PENDING, None, "pg1", WORKER, SELECT_WORKER),
                build_pod("ns1", "worker-2", "", PENDING, None, "pg1", WORKER),
                build_pod("ns1", "worker-3", "", PENDING, None, "pg2", WORKER),
            ],
            nodes=[build_node("node1", node_res("4", "4k", pods="2"), SELECT_WORKER)],
            priority_classes=[P1, P2],
            podgroups=[
                build_podgroup("pg1", "ns1", "q1", 2, None, PG_INQUEUE, priority_class="p2"),
                build_podgroup("pg2", "ns1", "q1", 1, None, PG_INQUEUE, priority_class="p1"),
            ],
            queues=[build_queue("q1", 0)],
            expect_bind={"ns1/worker-1": "node1", "ns1/worker-2": "node1"},
            expect_binds_num=2,
        )
    ],
    {"predicates"},
)


# -- TestPodAntiAffinity ------------------------------------------------------------------------------------------
HIGH, LOW = build_priority_class("high-priority", 100000), build_priority_class("low-priority", 10)
R3 = rl("3", "3G")

POD_ANTI_AFFINITY = Suite(
    "TestPodAntiAffinity",
    [[opt("predicates", EnabledPredicate=True), opt("priority", EnabledPreemptable=True, EnabledJobStarving=True)]],
    ["allocate", "preempt"],
    [
        Case(
            "pod-anti-affinity",
            pods=[
                build_pod(
                    "ns1",
                    "worker-1",
                    "n1",
                    RUNNING,
                    R3,
                    "pg1",
                    WORKER,
                    priority=100000,
                    affinity=worker_anti_affinity(),
                ),
                build_pod("ns1", "worker-2", "n1", RUNNING, R3, "pg1", priority=10),
                build_pod(
                    "ns1",
                    "worker-3",
                    "",
                    PENDING,
                    R3,
                    "pg2",
                    WORKER,
                    priority=100000,
                    affinity=worker_anti_affinity(),
                ),
            ],
            # The node is named n1 but its hostname label says node1 (the anti-affinity's topology domain).
            nodes=[build_node("n1", node_res("12", "12G", pods="2"), {HOSTNAME: "node1"})],
            priority_classes=[HIGH, LOW],
            podgroups=[
                build_podgroup("pg1", "ns1", "q1", 0, None, PG_RUNNING, priority_class="low-priority"),
                build_podgroup("pg2", "ns1", "q1", 1, None, PG_INQUEUE, priority_class="high-priority"),
            ],
            queues=[build_queue("q1", 0, rl("9", "9G"))],
            # ExpectPipeLined is an empty map (nothing checked), ExpectEvicted empty, no bindings.
        )
    ],
    {"predicates", "priority"},
    [{"name": "preempt", "arguments": {"enableTopologyAwarePreemption": True}}],
)


def test_the_conf_turns_the_simulation_switches_off():
    """The anti-affinity suite's predicates entry has both switches that call its SimulateAddTask/RemoveTask off,
    as the Go tiers (nil pointers) have them."""
    suite = POD_ANTI_AFFINITY
    conf = scheduler_conf(suite.tiers, suite.actions, suite.registered, configurations=suite.configurations)
    entry = conf["tiers"][0]["plugins"][0]
    assert entry["name"] == "predicates"
    assert entry["enablePreemptable"] is False and entry["enabledAllocatable"] is False
    assert "enablePredicate" not in entry  # EnabledPredicate: true in the Go tiers


@pytest.mark.parametrize("case", EVENT_HANDLER.params())
def test_event_handler(case):
    EVENT_HANDLER.run(case)


@pytest.mark.parametrize("case", NODE_NUM.params())
def test_node_num(case):
    NODE_NUM.run(case)


@pytest.mark.parametrize("case", POD_ANTI_AFFINITY.params())
def test_pod_anti_affinity(case):
    POD_ANTI_AFFINITY.run(case)


def test_pod_anti_affinity_with_simulation_switches_on():
    """The counterpart of pod-anti-affinity under a conf that leaves predicates' enablePreemptable on (Volcano's
    default): the dry run tells InterPodAffinity that worker-1 (role=worker, job priority 10 < 100000) left, so
    worker-1 is the one victim and worker-3 is pipelined to n1 (Volcano's SelectVictimsOnNode takes both running
    tasks, keeps worker-1 evicted and reprieves worker-2: its dry run checks resources and InterPodAffinity only)."""
    suite = POD_ANTI_AFFINITY
    (case,) = suite.cases
    conf = scheduler_conf(suite.tiers, suite.actions, suite.registered, configurations=suite.configurations)
    del conf["tiers"][0]["plugins"][0]["enablePreemptable"]
    cluster = build_cluster(case)
    result = vcore.Scheduler(cluster, cycle=conf).run_cycle()
    assert [e.victim for e in result.evictions] == ["ns1/worker-1"]
    assert result.nominated == {"ns1/worker-3": "n1"}
    assert not result.bindings
