"""Volcano v1.14 pkg/scheduler/actions/preempt/preempt_shard_test.go (TestPreemptWithShard), through vcore's
cycle (preempt alone); the node shard is vcore's Scheduler.set_node_scope."""

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
        opt("conformance", EnabledPreemptable=True),
        opt("gang", EnabledPreemptable=True, EnabledJobStarving=True),
        opt("priority", EnabledPreemptable=True, EnabledJobStarving=True),
        opt("predicates", EnabledPredicate=True),
    ]
]


def objects() -> dict:
    yes = {PREEMPTABLE: "true"}
    return {
        "podgroups": [
            build_podgroup("pg1", "c1", "q1", 1, None, PG_INQUEUE, priority_class="low-priority"),
            build_podgroup("pg2", "c1", "q1", 1, None, PG_INQUEUE, priority_class="high-priority"),
        ],
        "pods": [
            build_pod("c1", "preemptee1", "n1", RUNNING, rl("1", "1G"), "pg1", yes),
            build_pod("c1", "preemptee2", "n2", RUNNING, rl("1", "1G"), "pg1", yes),
            build_pod("c1", "preemptor1", "", PENDING, rl("1", "1G"), "pg2"),
        ],
        "nodes": [build_node("n1", node_res("1", "1G")), build_node("n2", node_res("1", "1G"))],
        "queues": [build_queue("q1", 1)],
        "priority_classes": [build_priority_class("high-priority", 100000), build_priority_class("low-priority", 10)],
    }


SUITE = Suite(
    "TestPreemptWithShard",
    TIERS,
    ["preempt"],
    [
        Case(
            "hard sharding mode - preempt from node in shard",
            **objects(),
            expect_evicted=["c1/preemptee1"],
            sharding_mode="hard",
            nodes_in_shard=["n1"],
        ),
        Case(
            "soft sharding mode - prefer preempting from node in shard",
            **objects(),
            expect_evicted=["c1/preemptee1"],
            sharding_mode="soft",
            nodes_in_shard=["n1"],
        ),
    ],
    {"conformance", "gang", "priority", "proportion", "predicates"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_preempt_with_shard(case):
    SUITE.run(case)
