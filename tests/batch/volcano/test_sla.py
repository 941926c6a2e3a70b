"""Volcano v1.14 pkg/scheduler/plugins/sla/sla_test.go (TestSlaPlugin), through vcore's cycle.

The Go test asks the sla plugin's JobOrderFn(job1, job2), where job1 has no waiting time of its own and job2 waits
1h, and JobEnqueueable(job1). Here job1 and job2 are PodGroups created at the same time (job2 with the
``sla-waiting-time: 1h`` annotation) whose single pods compete for one node's only cpu: the job the sla order puts
first is the one bound. With the global ``sla-waiting-time: 3m`` job1's deadline comes first; with an argument that
is not a duration string, or none, job1 has no deadline and goes after job2. Both jobs have no minResources, so
enqueue admits them whatever JobEnqueueable says (it permits or abstains in all three Go cases)."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_PENDING,
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

CREATED = "2020-01-01T00:00:00Z"


def objects() -> dict:
    job1 = build_podgroup("job1", "default", "default", 1, None, PG_PENDING)
    job2 = build_podgroup("job2", "default", "default", 1, None, PG_PENDING, annotations={"sla-waiting-time": "1h"})
    for pg in (job1, job2):
        pg["metadata"]["creationTimestamp"] = CREATED
    return {
        "podgroups": [job1, job2],
        "pods": [
            build_pod("default", "job1-ps-0", "", PENDING, rl("1", "1Gi"), "job1"),
            build_pod("default", "job2-ps-0", "", PENDING, rl("1", "1Gi"), "job2"),
        ],
        "nodes": [build_node("n1", node_res("1", "4Gi"))],
        "queues": [build_queue("default", 1)],
    }


def sla(arguments: dict) -> list:
    return [[opt("sla", arguments, EnabledJobOrder=True, EnabledJobEnqueued=True)]]


SUITE = Suite(
    "TestSlaPlugin",
    sla({}),
    ["enqueue", "allocate"],
    [
        Case(
            "sla normal placement",
            **objects(),
            tiers=sla({"sla-waiting-time": "3m"}),
            expect_bind={"default/job1-ps-0": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "sla error type placement",
            **objects(),
            tiers=sla({"sla-waiting-time": 1}),
            expect_bind={"default/job2-ps-0": "n1"},
            expect_binds_num=1,
        ),
        Case("none placement", **objects(), tiers=sla({}), expect_bind={"default/job2-ps-0": "n1"}, expect_binds_num=1),
    ],
    {"sla"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_sla_plugin(case):
    SUITE.run(case)
