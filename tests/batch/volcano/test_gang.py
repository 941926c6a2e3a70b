"""Volcano v1.14 (release-1.14) pkg/scheduler/plugins/gang/gang_test.go (TestShouldSkipUnschedulableForReleasing),
through the PodGroup conditions a vcore cycle writes.

The Go test calls shouldSkipUnschedulableForReleasing on JobInfos built from tasks in given states: when it is true,
the gang plugin's OnSessionClose writes no Unschedulable condition for the unready job. Here each job is a PodGroup
whose pods are in those states (Running on a node; Releasing: Running with metadata.deletionTimestamp set; Pending),
one cycle runs (enqueue only, which leaves admitted jobs alone), and the check is the one the function decides: does
the PodGroup get an Unschedulable condition."""

from __future__ import annotations

import pytest

import vcore

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    RUNNING,
    Case,
    build_cluster,
    build_node,
    build_pod,
    build_podgroup,
    build_queue,
    node_res,
    opt,
    param,
    rl,
    scheduler_conf,
)

RELEASING = "Releasing"  # a Running pod with a deletionTimestamp: Volcano's api.Releasing task status
PIPELINED = "Pipelined"
TIERS = [[opt("gang", EnabledJobOrder=True, EnabledJobReady=True, EnabledJobPipelined=True)]]


def _pod(name: str, status: str, node: str) -> dict:
    """A pod in a Volcano task status (api.getTaskStatus read backwards): Releasing is a pod being deleted, Running
    on its node or Pending when it never got one."""
    phase = RUNNING if node else PENDING
    p = build_pod("ns", name, node, phase, rl("1", "1Gi"), "job-1")
    if status == RELEASING:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return p


def case(
    name: str, min_member: int, tasks: list[tuple[str, str, str]], skip_condition: bool, **kw
) -> tuple[Case, bool]:
    c = Case(
        name,
        podgroups=[build_podgroup("job-1", "ns", "default", min_member, None, PG_INQUEUE)],
        pods=[_pod(*t) for t in tasks if t[1] != PIPELINED],
        nodes=[build_node(n, node_res("1", "1Gi")) for n in ("node-1", "node-2", "node-3")],
        queues=[build_queue("default", 1)],
        **kw,
    )
    return c, skip_condition


CASES = [
    case("partial termination", 2, [("running", RUNNING, "node-1"), ("releasing", RELEASING, "node-2")], True),
    case(
        "pending replacement still needs condition",
        2,
        [("running", RUNNING, "node-1"), ("releasing", RELEASING, "node-2"), ("replacement", PENDING, "")],
        False,
    ),
    case(
        "pipelined replacement still needs condition",
        2,
        [("running", RUNNING, "node-1"), ("releasing", RELEASING, "node-2"), ("replacement", PIPELINED, "node-3")],
        False,
        skip="a Pipelined task exists only inside a Volcano session (Statement.Pipeline); no API object "
        "carries that state, so the job cannot be built for a cycle",
    ),
    case("never scheduled releasing task is not counted", 1, [("releasing", RELEASING, "")], False),
    case(
        "scheduled tasks below minAvailable",
        3,
        [("running", RUNNING, "node-1"), ("releasing", RELEASING, "node-2")],
        False,
    ),
]


@pytest.mark.parametrize(
    "case, skip_condition", [pytest.param(c, s, id=p.id, marks=p.marks) for c, s in CASES for p in [param(c)]]
)
def test_should_skip_unschedulable_for_releasing(case, skip_condition):
    cluster = build_cluster(case)
    result = vcore.Scheduler(cluster, cycle=scheduler_conf(TIERS, ["enqueue"])).run_cycle()
    status = result.podgroups["ns/job-1"]
    unschedulable = any(c["type"] == "Unschedulable" and c["status"] == "True" for c in status.conditions)
    assert unschedulable != skip_condition, status
