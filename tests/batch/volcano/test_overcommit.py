"""Volcano v1.14 pkg/scheduler/plugins/overcommit/overcommit_test.go (TestOvercommitPlugin), run through vcore's
enqueue action.

The Go test opens a session over one Inqueue PodGroup and calls ssn.JobEnqueued then ssn.JobEnqueueable on it. Here
the PodGroup starts Pending and the enqueue action decides: it ends Inqueue exactly when JobEnqueueable permits.
The verdicts are the same (the Go call counts the job's minResources three times, here once; each case is on the
same side of the 1.2 x allocatable line either way)."""

from __future__ import annotations

import pytest

from .volcano_fixtures import PG_INQUEUE, PG_PENDING, Case, Suite, build_node, build_podgroup, build_queue, opt, rl

NODES = [build_node("n1", rl("2", "4Gi")), build_node("n2", rl("4", "16Gi"))]
NORMAL, HUGE, SMALL = rl("2000m", "2G"), rl("20000m", "20G"), rl("200m", "0.5G")
PG1 = build_podgroup("pg1", "test-namespace", "c1", 2, None, PG_PENDING, min_resources=NORMAL)
PG2 = build_podgroup("pg2", "test-namespace", "c1", 2, None, PG_PENDING, min_resources=HUGE)
PG3 = build_podgroup("pg2", "test-namespace", "c1", 2, None, PG_PENDING)  # Go names it pg2 too
QUEUE1, QUEUE2 = build_queue("c1", 1), build_queue("c1", 1, SMALL)


def overcommit(factor: float) -> list:
    return [[opt("overcommit", {"overcommit-factor": factor}, EnabledJobEnqueued=True)]]


SUITE = Suite(
    "TestOvercommitPlugin",
    overcommit(1.2),
    ["enqueue"],
    [
        Case(
            "overCommitFactor is more than 0",
            podgroups=[PG1],
            queues=[QUEUE1],
            nodes=NODES,
            tiers=overcommit(1.2),
            expect_status={"test-namespace/pg1": PG_INQUEUE},
        ),
        Case(
            "overCommitFactor is less than 0",
            podgroups=[PG1],
            queues=[QUEUE1],
            nodes=NODES,
            tiers=overcommit(0.8),
            expect_status={"test-namespace/pg1": PG_INQUEUE},
        ),
        Case(
            "when the required resources of pg are too large",
            podgroups=[PG2],
            queues=[QUEUE1],
            nodes=NODES,
            tiers=overcommit(1.2),
            expect_status={"test-namespace/pg2": PG_PENDING},
        ),
        Case(
            "when pg does not fill MinResources",
            podgroups=[PG3],
            queues=[QUEUE2],
            nodes=NODES,
            tiers=overcommit(1.2),
            expect_status={"test-namespace/pg2": PG_INQUEUE},
        ),
    ],
    {"overcommit"},
)


@pytest.mark.parametrize("case", SUITE.params())
def test_overcommit_plugin(case):
    SUITE.run(case)
