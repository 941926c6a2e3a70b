"""Volcano v1.14 pkg/scheduler/actions/allocate/allocate_shard_test.go (TestAllocateWithShard), through vcore's
cycle; Volcano's node shard (ssn.NodesInShard with ShardingMode hard/soft) is vcore's Scheduler.set_node_scope."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
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

TIERS = [
    [
        opt("gang", EnabledJobReady=True),
        opt("predicates", EnabledPredicate=True),
        opt("nodeorder", {"leastrequested.weight": 1, "mostrequested.weight": 0}, EnabledNodeOrder=True),
    ]
]


def objects(*nodes: tuple[str, str, str]) -> dict:
    return {
        "podgroups": [build_podgroup("pg1", "c1", "c1", 0, None, PG_INQUEUE)],
        "pods": [build_pod("c1", "p1", "", PENDING, rl("1", "1G"), "pg1")],
        "nodes": [build_node(n, node_res(cpu, mem)) for n, cpu, mem in nodes],
        "queues": [build_queue("c1", 1)],
    }


FOUR = [("n1", "10", "20Gi"), ("n2", "2", "4Gi"), ("n3", "20", "40Gi"), ("n4", "5", "10Gi")]
SUITE = Suite(
    "TestAllocateWithShard",
    TIERS,
    ["allocate"],
    [
        Case(
            "hard sharding mode - allocate to node in shard",
            **objects(*FOUR),
            expect_bind={"c1/p1": "n1"},
            expect_binds_num=1,
            sharding_mode="hard",
            nodes_in_shard=["n1", "n4"],
        ),
        Case(
            "soft sharding mode - prefer node in shard",
            **objects(*FOUR),
            expect_bind={"c1/p1": "n1"},
            expect_binds_num=1,
            sharding_mode="soft",
            nodes_in_shard=["n1", "n4"],
        ),
        Case(
            "soft sharding mode - identical nodes prefer shard node",
            **objects(("n1", "10", "20Gi"), ("n2", "10", "20Gi")),
            expect_bind={"c1/p1": "n1"},
            expect_binds_num=1,
            sharding_mode="soft",
            nodes_in_shard=["n1"],
        ),
    ],
    {"drf", "proportion", "predicates", "nodeorder", "gang"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_allocate_with_shard(case):
    SUITE.run(case)
