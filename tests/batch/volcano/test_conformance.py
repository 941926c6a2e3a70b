"""Volcano v1.14 pkg/scheduler/plugins/conformance/conformance_test.go (TestConformancePlugin), through vcore's
preempt action.

The Go test asks ssn.Preemptable for two running pods named test-pod on test-node, one in kube-system and one in
test-namespace, and expects only the second as a victim. A cycle needs a preemptor and a plugin that lets a job
starve, so here the priority plugin (JobStarving, Preemptable) joins conformance, both pods belong to low-priority
PodGroups, the node is full, and a high-priority pod needs the room of one of them: only test-namespace/test-pod
may go."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_RUNNING,
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

R1 = rl("1", "1Gi")
SUITE = Suite(
    "TestConformancePlugin",
    [
        [
            opt("conformance", EnabledPreemptable=True),
            opt(
                "priority",
                EnabledJobOrder=True,
                EnabledTaskOrder=True,
                EnabledPreemptable=True,
                EnabledJobStarving=True,
            ),
        ]
    ],
    ["preempt"],
    [
        Case(
            "conformance plugin",
            priority_classes=[build_priority_class("low", 10), build_priority_class("high", 1000)],
            podgroups=[
                build_podgroup("pg1", "kube-system", "default", 0, None, PG_RUNNING, priority_class="low"),
                build_podgroup("pg1", "test-namespace", "default", 0, None, PG_RUNNING, priority_class="low"),
                build_podgroup("preemptor", "default", "default", 1, None, PG_INQUEUE, priority_class="high"),
            ],
            pods=[
                build_pod("kube-system", "test-pod", "test-node", RUNNING, R1, "pg1"),
                build_pod("test-namespace", "test-pod", "test-node", RUNNING, R1, "pg1"),
                build_pod("default", "preemptor-0", "", PENDING, R1, "preemptor"),
            ],
            nodes=[build_node("test-node", node_res("2", "2Gi"))],
            queues=[build_queue("default", 1)],
            expect_evicted=["test-namespace/test-pod"],
        ),
    ],
)


@pytest.mark.parametrize("case", SUITE.params())
def test_conformance_plugin(case):
    SUITE.run(case)
