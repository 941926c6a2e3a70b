"""Volcano v1.14 pkg/scheduler/plugins/priority/priority_test.go (TestPreempt), run through vcore's cycle (allocate,
then preempt)."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
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

ENABLE_EVICT = opt(
    "priority",
    EnabledTaskOrder=True,
    EnabledJobOrder=True,
    EnabledPreemptable=True,
    EnabledReclaimable=True,
    EnabledJobStarving=True,
)
DISABLE_EVICT = opt(
    "priority",
    EnabledTaskOrder=True,
    EnabledJobOrder=True,
    EnabledPreemptable=False,
    EnabledReclaimable=False,
    EnabledJobStarving=True,
)
CLASSES = [build_priority_class("low-priority", 100), build_priority_class("high-priority", 1000)]
PGS = [
    build_podgroup("pg1", "ns1", "q1", 1, {}, PG_INQUEUE, priority_class="low-priority"),
    build_podgroup("pg2", "ns2", "q1", 1, {}, PG_INQUEUE, priority_class="high-priority"),
]
R3 = rl("3", "3G")

SUITE = Suite(
    "TestPreempt",
    [[ENABLE_EVICT]],
    ["allocate", "preempt"],
    [
        Case(
            "enable preempt low priority: enablePreemptable:true",
            tiers=[[ENABLE_EVICT]],
            priority_classes=CLASSES,
            podgroups=PGS,
            pods=[
                build_pod("ns1", "preemptee1", "node1", RUNNING, R3, "pg1", {PREEMPTABLE: "true"}),
                build_pod("ns1", "preemptee2", "node1", RUNNING, R3, "pg1", {PREEMPTABLE: "true"}, priority=1000),
                build_pod("ns2", "preemptor1", "", PENDING, R3, "pg2"),
            ],
            nodes=[build_node("node1", node_res("6", "6G")), build_node("node2", node_res("2", "2G"))],
            queues=[build_queue("q1", 1, rl("6", "6G"))],
            expect_evicted=["ns1/preemptee1"],
            expect_pipelined={"ns2/pg2": ["node1"]},
        ),
        Case(
            "disable preempt low priority: enablePreemptable:false",
            tiers=[[DISABLE_EVICT]],
            priority_classes=CLASSES,
            podgroups=PGS,
            pods=[
                build_pod("ns1", "preemptee1", "node1", RUNNING, R3, "pg1", {PREEMPTABLE: "true"}),
                build_pod("ns1", "preemptee2", "node2", RUNNING, R3, "pg1", {PREEMPTABLE: "false"}),
                build_pod("ns2", "preemptor1", "", PENDING, R3, "pg2"),
            ],
            nodes=[build_node("node1", node_res("3", "3G")), build_node("node2", node_res("3", "3G"))],
            queues=[build_queue("q1", 1, rl("6", "6G"))],
        ),
    ],
    {"priority"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_preempt(case):
    SUITE.run(case)
