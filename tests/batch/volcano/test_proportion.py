"""Volcano v1.14 pkg/scheduler/plugins/proportion/proportion_test.go (TestProportion, TestEnqueueAndAllocable,
TestAllocate), run through vcore's cycle."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_PENDING,
    PG_RUNNING,
    RUNNING,
    Case,
    Suite,
    build_node,
    build_pod,
    build_podgroup,
    build_queue,
    node_res,
    opt,
    rl,
)

# -- TestProportion -----------------------------------------------------------------------------------------------
METRICS_ONLY = (
    "the Go test serves Volcano's Prometheus metrics on :8081 and compares volcano_queue_allocated_* "
    "across repeated sessions while it deletes PodGroups; its expected bindings are never asserted, and "
    "vcore's cycle exports no Volcano queue metrics"
)
PROPORTION_METRICS = Suite(
    "TestProportion",
    [[opt("proportion", EnabledPredicate=True)]],
    ["allocate"],
    [
        Case("pod-deallocate", skip=METRICS_ONLY),
        Case("realcapability-test", skip=METRICS_ONLY),
    ],
)


@pytest.mark.parametrize("case", PROPORTION_METRICS.params())
def test_proportion(case):
    PROPORTION_METRICS.run(case)


# -- TestEnqueueAndAllocable --------------------------------------------------------------------------------------
def _nodes():
    return [build_node("n1", node_res("2", "2G")), build_node("n2", node_res("2", "2G"))]


RES = {
    "1c2g": rl("1", "2G"),
    "2c1g": rl("2", "1G"),
    "1c0g": rl("1", "0G"),
    "0c1g": rl("0", "1G"),
    "1c1g": rl("1", "1G"),
}


def _pod(name, node, phase, res):
    group = "pg" + name.removeprefix("pod")
    return build_pod("ns1", name, node, phase, RES[res], group)


def _pg(n, queue, phase, res):
    return build_podgroup(f"pg{n}", "ns1", queue, 1, None, phase, min_resources=RES[res])


def _objects(third: str) -> dict:
    """pod1 / pod2 running in q1 / q2 (pg1, pg2) and the case's pending pod (pod3, pod4 or pod5)."""
    pending = {"pod3": ("q1", "1c0g"), "pod4": ("q2", "0c1g"), "pod5": ("q1", "1c1g")}[third]
    n = third.removeprefix("pod")
    return {
        "pods": [
            _pod("pod1", "n1", RUNNING, "1c2g"),
            _pod("pod2", "n2", RUNNING, "2c1g"),
            _pod(third, "", PENDING, pending[1]),
        ],
        "podgroups": [
            _pg(1, "q1", PG_RUNNING, "1c2g"),
            _pg(2, "q2", PG_RUNNING, "2c1g"),
            _pg(n, pending[0], PG_PENDING, pending[1]),
        ],
        "queues": [build_queue("q1", 1, rl("2", "2G")), build_queue("q2", 1, rl("3", "3G"))],
        "nodes": _nodes(),
    }


ALL_ENABLE = [[opt("proportion", EnabledAllocatable=True, EnabledOverused=True, EnabledJobEnqueued=True)]]
ENQUEUEABLE = [[opt("proportion", EnabledAllocatable=False, EnabledOverused=False, EnabledJobEnqueued=True)]]
ALLOCATABLE = [[opt("proportion", EnabledAllocatable=True, EnabledOverused=False, EnabledJobEnqueued=False)]]
CLOSED = {
    "pods": [_pod("pod6", "", PENDING, "1c1g")],
    "podgroups": [_pg(6, "q3", PG_PENDING, "1c1g")],
    "queues": [build_queue("q3", 1, rl("3", "3G"), state="Closed")],
    "nodes": _nodes(),
}

ENQUEUE_AND_ALLOCABLE = Suite(
    "TestEnqueueAndAllocable",
    ALL_ENABLE,
    ["enqueue", "allocate"],
    [
        Case(
            "case0: memory exceed derserved, job only request cpu can be enqueued and allocated",
            **_objects("pod3"),
            tiers=ALL_ENABLE,
            expect_bind={"ns1/pod3": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "case1: cpu exceed derserved, job only request memory can be enqueued and allocated",
            **_objects("pod4"),
            tiers=ALL_ENABLE,
            expect_bind={"ns1/pod4": "n2"},
            expect_binds_num=1,
        ),
        Case("case2: exceed capacity, can not enqueue", **_objects("pod5"), tiers=ENQUEUEABLE),
        Case("case3: exceed deserved, can not allocate", **_objects("pod5"), tiers=ALLOCATABLE),
        Case("case4: queue with  non-open state, can not enqueue", **CLOSED, tiers=ENQUEUEABLE),
    ],
    {"proportion"},
)


@pytest.mark.parametrize("case", ENQUEUE_AND_ALLOCABLE.params())
def test_enqueue_and_allocable(case):
    ENQUEUE_AND_ALLOCABLE.run(case)


# -- TestAllocate -------------------------------------------------------------------------------------------------
ALLOCATE = Suite(
    "TestAllocate",
    [[opt("proportion", EnabledQueueOrder=True)]],
    ["allocate", "reclaim"],
    [
        Case(
            "case0: Pods are assigned according to the order of Queue Priority in which PGs are placed",
            pods=[
                build_pod("ns1", "p1", "n1", RUNNING, rl("2", "4Gi"), "pg1"),
                build_pod("ns1", "p2", "", PENDING, rl("2", "4Gi"), "pg2"),
                build_pod("ns1", "p3", "", PENDING, rl("2", "4Gi"), "pg3"),
            ],
            nodes=[build_node("n1", node_res("2", "4Gi")), build_node("n2", node_res("2", "4Gi"))],
            podgroups=[
                build_podgroup("pg1", "ns1", "q1", 1, None, PG_RUNNING),
                build_podgroup("pg2", "ns1", "q2", 1, None, PG_INQUEUE),
                build_podgroup("pg3", "ns1", "q3", 1, None, PG_INQUEUE),
            ],
            queues=[
                build_queue("q1", 1, rl("2", "4Gi"), priority=5),
                build_queue("q2", 1, rl("2", "4Gi"), priority=1),
                build_queue("q3", 1, rl("2", "4Gi"), priority=10),
            ],
            expect_bind={"ns1/p3": "n2"},
            expect_binds_num=1,
        ),
    ],
    {"proportion"},
)


@pytest.mark.parametrize("case", ALLOCATE.params())
def test_allocate(case):
    ALLOCATE.run(case)
