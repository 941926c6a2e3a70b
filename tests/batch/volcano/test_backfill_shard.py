"""Volcano v1.14 pkg/scheduler/actions/backfill/backfill_shard_test.go (TestBackfillWithShard), through vcore's
cycle; the node shard is vcore's Scheduler.set_node_scope."""

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

TIERS = [[opt("gang", EnabledJobReady=True), opt("predicates", EnabledPredicate=True)]]


def objects(*nodes: tuple[str, str, str]) -> dict:
    """One best-effort pod (requests cpu 0, memory 0) in an admitted PodGroup."""
    return {
        "podgroups": [build_podgroup("pg1", "c1", "c1", 0, None, PG_INQUEUE)],
        "pods": [build_pod("c1", "p1", "", PENDING, rl("0", "0"), "pg1")],
        "nodes": [build_node(n, node_res(cpu, mem)) for n, cpu, mem in nodes],
        "queues": [build_queue("c1", 1)],
    }


FOUR = [("n1", "10", "20Gi"), ("n2", "2", "4Gi"), ("n3", "20", "40Gi"), ("n4", "5", "10Gi")]
SUITE = Suite(
    "TestBackfillWithShard",
    TIERS,
    ["backfill"],
    [
        Case(
            "hard sharding mode - backfill to node in shard",
            **objects(*FOUR),
            expect_bind={"c1/p1": "n1"},
            expect_binds_num=1,
            sharding_mode="hard",
            nodes_in_shard=["n1"],
        ),
        Case(
            "soft sharding mode - prefer node in shard",
            **objects(*FOUR),
            expect_bind={"c1/p1": "n1"},
            expect_binds_num=1,
            sharding_mode="soft",
            nodes_in_shard=["n1"],
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
    {"gang", "predicates"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_backfill_with_shard(case):
    SUITE.run(case)
