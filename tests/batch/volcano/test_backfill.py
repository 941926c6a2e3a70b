"""Volcano v1.14 pkg/scheduler/actions/backfill/backfill_test.go (TestPickUpPendingTasks), through vcore's backfill.

The Go test asks backfill's pickUpPendingTasks for the order in which it will place best-effort tasks: queue by queue
(drf QueueOrder), job by job (priority JobOrder: pg2's class outranks pg1's), task by task (priority TaskOrder:
spec.priority 4, 3, 2, 1); the tasks the Go test pipelined first are unpipelined and taken like the pending ones, so
here every pod is simply pending. Each PodGroup mixes best-effort pods with pods asking 500m cpu. The Go test has no
node; here one node, node1 (the node the Go test pipelines onto), has room for everything, and the check is the order
of the bindings backfill makes: the best-effort pods, in that order, and nothing else (allocate does not run)."""

from __future__ import annotations

import pytest

import vcore

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    Case,
    build_cluster,
    build_node,
    build_pod,
    build_podgroup,
    build_priority_class,
    build_queue,
    node_res,
    opt,
    param,
    scheduler_conf,
)

TIERS = [
    [
        opt("priority", EnabledPreemptable=True, EnabledTaskOrder=True, EnabledJobOrder=True),
        opt("drf", EnabledQueueOrder=True),
    ]
]


def _pods() -> list[dict]:
    out = []
    for group in ("pg1", "pg2"):
        for prio in (1, 3, 2, 4):  # the Go test's pending (1, 3) then pipelined (2, 4) tasks
            out.append(build_pod("default", f"{group}-besteffort-task-{prio}", "", PENDING, None, group, priority=prio))
            out.append(
                build_pod(
                    "default", f"{group}-unbesteffort-task-{prio}", "", PENDING, {"cpu": "500m"}, group, priority=prio
                )
            )
    return out


CASE = Case(
    "test",
    pods=_pods(),
    podgroups=[
        build_podgroup("pg1", "default", "q1", 1, {"": 3}, PG_INQUEUE, priority_class="job-priority-1"),
        build_podgroup("pg2", "default", "q1", 1, {"": 3}, PG_INQUEUE, priority_class="job-priority-2"),
    ],
    queues=[build_queue("q1", 1)],
    priority_classes=[build_priority_class("job-priority-1", 1), build_priority_class("job-priority-2", 2)],
    nodes=[build_node("node1", node_res("16", "16Gi", pods="110"))],
)
EXPECTED = [
    "pg2-besteffort-task-4",
    "pg2-besteffort-task-3",
    "pg2-besteffort-task-2",
    "pg2-besteffort-task-1",
    "pg1-besteffort-task-4",
    "pg1-besteffort-task-3",
    "pg1-besteffort-task-2",
    "pg1-besteffort-task-1",
]


@pytest.mark.parametrize("case", [param(CASE)])
def test_pick_up_pending_tasks(case):
    cluster = build_cluster(case)
    result = vcore.Scheduler(cluster, cycle=scheduler_conf(TIERS, ["backfill"], {"priority", "drf"})).run_cycle()
    assert [b.pod.split("/", 1)[1] for b in result.bindings if b.node] == EXPECTED
