"""Volcano v1.14 pkg/scheduler/actions/reclaim/reclaim_test.go (TestReclaim), run through vcore's cycle (the reclaim
action alone). Each Go case registers its own plugin builders; the tiers name more, and Volcano skips the ones
without a builder."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_RUNNING,
    PREEMPTABLE,
    RUNNING,
    Case,
    Suite,
    build_node,
    build_pod,
    build_podgroup,
    build_priority_class,
    build_queue,
    node_res,
    opt,
    rl,
)

TIERS = [
    [
        opt("conformance", EnabledReclaimable=True),
        opt("gang", EnabledReclaimable=True, EnabledJobStarving=True),
        opt("proportion", EnabledReclaimable=True, EnabledQueueOrder=True, EnablePreemptive=True),
        opt("capacity", EnabledReclaimable=True, EnabledQueueOrder=True, EnablePreemptive=True),
        opt("priority", EnabledReclaimable=True, EnabledJobOrder=True, EnabledTaskOrder=True),
    ]
]
BASE = {"conformance", "gang", "proportion"}
WITH_PRIORITY = BASE | {"priority"}
YES, NO = {PREEMPTABLE: "true"}, {PREEMPTABLE: "false"}
R1 = rl("1", "1G")
THREE_CLASSES = [
    build_priority_class("low-priority", 100),
    build_priority_class("mid-priority", 500),
    build_priority_class("high-priority", 1000),
]


def pod(name, node, phase, req, group, labels=None, **kw):
    return build_pod("c1", name, node, phase, req, group, labels, **kw)


def pg(name, queue, min_member, phase, priority_class):
    return build_podgroup(name, "c1", queue, min_member, None, phase, priority_class=priority_class)


def n1(cpu, mem, pods="10"):
    return [build_node("n1", node_res(cpu, mem, pods))]


def three_of_pg1():
    return [
        pod("preemptee1", "n1", RUNNING, R1, "pg1", NO),
        pod("preemptee2", "n1", RUNNING, R1, "pg1", YES),
        pod("preemptee3", "n1", RUNNING, R1, "pg1", NO),
    ]


CASES = [
    Case(
        "Two Queue with one Queue overusing resource, should reclaim",
        plugins=BASE,
        podgroups=[pg("pg1", "q1", 1, PG_INQUEUE, "low-priority"), pg("pg2", "q2", 1, PG_INQUEUE, "high-priority")],
        pods=[*three_of_pg1(), pod("preemptor1", "", PENDING, R1, "pg2")],
        nodes=n1("3", "3Gi"),
        queues=[build_queue("q1", 1), build_queue("q2", 1)],
        expect_evicted=["c1/preemptee2"],
    ),
    Case(
        "sort reclaimees when reclaiming from overusing queue",
        plugins=WITH_PRIORITY,
        priority_classes=THREE_CLASSES,
        podgroups=[
            pg("pg1", "q1", 1, PG_INQUEUE, "mid-priority"),
            pg("pg2", "q2", 1, PG_INQUEUE, "low-priority"),
            pg("pg3", "q3", 1, PG_INQUEUE, "high-priority"),
        ],
        pods=[
            pod("preemptee1-1", "n1", RUNNING, R1, "pg1", YES),
            pod("preemptee1-2", "n1", RUNNING, R1, "pg1", YES),
            pod("preemptee2-1", "n1", RUNNING, R1, "pg2", YES),
            pod("preemptee2-2", "n1", RUNNING, R1, "pg2", NO),
            pod("preemptor1", "", PENDING, R1, "pg3"),
        ],
        nodes=n1("4", "4Gi"),
        queues=[build_queue("q1", 1), build_queue("q2", 1), build_queue("q3", 1)],
        expect_evicted=["c1/preemptee2-1"],
    ),
    Case(
        "sort reclaimees when reclaiming from overusing queues with different queue priority",
        plugins=BASE,
        podgroups=[
            pg("pg1", "q1", 1, PG_INQUEUE, "mid-priority"),
            pg("pg2", "q2", 1, PG_INQUEUE, "mid-priority"),
            pg("pg3", "q3", 1, PG_INQUEUE, "mid-priority"),
        ],
        pods=[
            pod("preemptee1-1", "n1", RUNNING, R1, "pg1", YES),
            pod("preemptee1-2", "n1", RUNNING, R1, "pg1", NO),
            pod("preemptee2-1", "n1", RUNNING, R1, "pg2", YES),
            pod("preemptee2-2", "n1", RUNNING, R1, "pg2", NO),
            pod("preemptor1", "", PENDING, R1, "pg3"),
        ],
        nodes=n1("4", "4Gi"),
        queues=[build_queue("q1", 1, priority=5), build_queue("q2", 1, priority=10), build_queue("q3", 1, priority=1)],
        expect_evicted=["c1/preemptee1-1"],
    ),
    Case(
        "can not reclaim resources when task preemption policy is never",
        plugins=BASE,
        priority_classes=[
            build_priority_class("low-priority", 100),
            build_priority_class("high-priority", 1000, "Never"),
        ],
        podgroups=[pg("pg1", "q1", 0, PG_INQUEUE, "low-priority"), pg("pg2", "q2", 0, PG_INQUEUE, "high-priority")],
        pods=[
            pod("preemptee1", "n1", RUNNING, R1, "pg1", YES),
            pod("preemptor1", "", PENDING, R1, "pg2", preemption_policy="Never"),
        ],
        nodes=n1("1", "1Gi", pods="1"),
        queues=[build_queue("q1", 5), build_queue("q2", 10)],
    ),
    Case(
        "can not reclaim resources when queue is not open(proportion plugin)",
        plugins=BASE,
        podgroups=[pg("pg1", "q1", 1, PG_RUNNING, "low-priority"), pg("pg2", "q2", 1, PG_INQUEUE, "high-priority")],
        pods=[*three_of_pg1(), pod("preemptor1", "", PENDING, R1, "pg2")],
        nodes=n1("3", "3Gi"),
        queues=[build_queue("q1", 1), build_queue("q2", 1, state="Closed")],
    ),
    Case(
        "can not reclaim resources when queue is not open(capacity plugin)",
        plugins={"conformance", "gang", "capacity"},
        podgroups=[pg("pg1", "q1", 1, PG_RUNNING, "low-priority"), pg("pg2", "q2", 1, PG_INQUEUE, "high-priority")],
        pods=[*three_of_pg1(), pod("preemptor1", "", PENDING, R1, "pg2")],
        nodes=n1("3", "3Gi"),
        queues=[build_queue("q1", 1), build_queue("q2", 1, state="Closed")],
    ),
    Case(
        "Node available resources should be included in reclaimed resources",
        plugins=WITH_PRIORITY,
        priority_classes=THREE_CLASSES,
        podgroups=[
            pg("pg1", "q1", 0, PG_RUNNING, "mid-priority"),
            pg("pg2", "q2", 0, PG_RUNNING, "mid-priority"),
            pg("pg3", "q3", 1, PG_INQUEUE, "mid-priority"),
        ],
        pods=[
            pod("preemptee1-1", "n1", RUNNING, R1, "pg1", YES),
            pod("preemptee2-1", "n1", RUNNING, R1, "pg2", YES),
            pod("preemptor1", "", PENDING, rl("2", "1G"), "pg3"),
        ],
        nodes=n1("10", "2Gi"),
        queues=[build_queue("q1", 1, priority=1), build_queue("q2", 1, priority=2), build_queue("q3", 3)],
        expect_evicted=["c1/preemptee1-1"],
    ),
    Case(
        "Reclaim succeeds for second task when first task has PreemptionPolicy=Never",
        plugins=WITH_PRIORITY,
        priority_classes=[
            build_priority_class("low-priority", 100),
            build_priority_class("high-priority-no-preempt", 1000, "Never"),
            build_priority_class("high-priority-can-preempt", 900),
        ],
        podgroups=[
            pg("pg-victim", "q1", 1, PG_RUNNING, "low-priority"),
            pg("pg-preemptor", "q2", 2, PG_INQUEUE, "high-priority-no-preempt"),
        ],
        pods=[
            pod("victim-pod-no", "n1", RUNNING, R1, "pg-victim", NO),
            pod("victim-pod", "n1", RUNNING, R1, "pg-victim", YES),
            pod("preemptor-task1-non-preemptable", "", PENDING, R1, "pg-preemptor", preemption_policy="Never"),
            pod("preemptor-task2-preemptable", "", PENDING, R1, "pg-preemptor"),
        ],
        nodes=n1("2", "2G"),
        queues=[build_queue("q1", 1), build_queue("q2", 1)],
        expect_evicted=["c1/victim-pod"],
    ),
]
SUITE = Suite("TestReclaim", TIERS, ["reclaim"], CASES)


@pytest.mark.parametrize("case", SUITE.params())
def test_reclaim(case):
    SUITE.run(case)
