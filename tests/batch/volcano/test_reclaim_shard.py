"""Volcano v1.14 pkg/scheduler/actions/reclaim/reclaim_shard_test.go (TestReclaimWithShard), through vcore's cycle
(reclaim alone); the node shard is vcore's Scheduler.set_node_scope."""

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

TIERS = [
    [
        opt("conformance", EnabledReclaimable=True),
        opt("gang", EnabledReclaimable=True, EnabledJobStarving=True),
        opt("proportion", EnabledReclaimable=True, EnabledQueueOrder=True, EnablePreemptive=True),
        opt("priority", EnabledReclaimable=True, EnabledJobOrder=True, EnabledTaskOrder=True),
        opt("predicates", EnabledPredicate=True),
    ]
]


def objects() -> dict:
    yes = {PREEMPTABLE: "true"}
    return {
        "podgroups": [
            build_podgroup("pg1", "c1", "q1", 1, None, PG_INQUEUE, priority_class="low-priority"),
            build_podgroup("pg2", "c1", "q2", 1, None, PG_INQUEUE, priority_class="high-priority"),
        ],
        "pods": [
            build_pod("c1", "preemptee1", "n1", RUNNING, rl("2", "2Gi"), "pg1", yes),
            build_pod("c1", "preemptee2", "n2", RUNNING, rl("2", "2Gi"), "pg1", yes),
            build_pod("c1", "preemptor1", "", PENDING, rl("1", "1G"), "pg2"),
        ],
        "nodes": [build_node("n1", node_res("2", "2Gi")), build_node("n2", node_res("2", "2Gi"))],
        "queues": [build_queue("q1", 1), build_queue("q2", 1)],
        "priority_classes": [build_priority_class("high-priority", 100000), build_priority_class("low-priority", 10)],
    }


SUITE = Suite(
    "TestReclaimWithShard",
    TIERS,
    ["reclaim"],
    [
        Case(
            "hard sharding mode - only reclaim from nodes in shard",
            **objects(),
            expect_evicted=["c1/preemptee1"],
            sharding_mode="hard",
            nodes_in_shard=["n1"],
        ),
        Case(
            "soft sharding mode - prefer reclaiming from node in shard",
            **objects(),
            expect_evicted=["c1/preemptee1"],
            sharding_mode="soft",
            nodes_in_shard=["n1"],
        ),
    ],
    {"conformance", "gang", "proportion", "predicates", "priority"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_reclaim_with_shard(case):
    SUITE.run(case)
