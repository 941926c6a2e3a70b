"""Volcano v1.14 pkg/scheduler/actions/preempt/preempt_test.go (TestPreempt, TestTopologyAwarePreempt), run
through vcore's cycle (the preempt action alone, as the Go tests run it)."""

from __future__ import annotations

import pytest

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_RUNNING,
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

HIGH = build_priority_class("high-priority", 100000)
LOW = build_priority_class("low-priority", 10)
YES, NO = {PREEMPTABLE: "true"}, {PREEMPTABLE: "false"}

NORMAL_PLUGINS = {"conformance", "gang", "priority", "proportion"}
NORMAL_TIERS = [
    [
        opt("conformance", EnabledPreemptable=True),
        opt("gang", EnabledPreemptable=True, EnabledJobPipelined=True, EnabledJobStarving=True),
        opt(
            "priority",
            EnabledTaskOrder=True,
            EnabledJobOrder=True,
            EnabledPreemptable=True,
            EnabledJobPipelined=True,
            EnabledJobStarving=True,
        ),
        opt("proportion", EnabledOverused=True, EnabledAllocatable=True, EnabledQueueOrder=True),
    ]
]
TOPOLOGY_PLUGINS = NORMAL_PLUGINS | {"capacity", "predicates"}
TOPOLOGY_TIERS = [
    [
        opt("conformance", EnabledPreemptable=True),
        opt("gang", EnabledPreemptable=True, EnabledJobPipelined=True, EnabledJobStarving=True),
        opt(
            "priority",
            EnabledTaskOrder=True,
            EnabledJobOrder=True,
            EnabledPreemptable=True,
            EnabledJobPipelined=True,
            EnabledJobStarving=True,
        ),
        opt("proportion", EnabledOverused=True, EnabledAllocatable=True, EnabledQueueOrder=True, EnabledPredicate=True),
        opt("predicates", EnabledPreemptable=True, EnabledPredicate=True),
        opt("capacity", EnabledQueueOrder=True),
    ]
]


def topology_aware(enabled: bool) -> list[dict]:
    return [{"name": "preempt", "arguments": {"enableTopologyAwarePreemption": enabled}}]


def pod(name, node, phase, req, group, labels=None, **kw):
    return build_pod("c1", name, node, phase, req, group, labels, **kw)


def anti_affinity_pod(name, node, phase, req, group, labels):
    """preempt_test.go's buildPodWithPodAntiAffinity: required anti-affinity to pods with its own labels, per
    kubernetes.io/hostname."""
    term = {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": "kubernetes.io/hostname"}
    return pod(
        name,
        node,
        phase,
        req,
        group,
        labels,
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


def n1(cpu, mem, pods="10", labels=None):
    return [build_node("n1", node_res(cpu, mem, pods), labels)]


R1 = rl("1", "1G")


def shared_cases() -> list[Case]:
    """The cases both Go functions share (same objects, same expectations)."""
    return [
        Case(
            "do not preempt if there are enough idle resources",
            podgroups=[build_podgroup("pg1", "c1", "q1", 3, {"": 3}, PG_INQUEUE)],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg1"),
                pod("preemptee2", "n1", RUNNING, R1, "pg1"),
                pod("preemptor1", "", PENDING, R1, "pg1"),
            ],
            nodes=n1("10", "10G"),
            queues=[build_queue("q1", 1)],
        ),
        Case(
            "do not preempt if job is pipelined",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 1, {"": 2}, PG_INQUEUE),
                build_podgroup("pg2", "c1", "q1", 1, {"": 2}, PG_INQUEUE),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg1"),
                pod("preemptee2", "n1", RUNNING, R1, "pg1"),
                pod("preemptee3", "n1", RUNNING, R1, "pg2"),
                pod("preemptor2", "", PENDING, R1, "pg2"),
            ],
            nodes=n1("3", "3G"),
            queues=[build_queue("q1", 1)],
        ),
        Case(
            "preempt one task of different job to fit both jobs on one node",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 1, {"": 2}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 2}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg1", YES),
                pod("preemptee2", "n1", RUNNING, R1, "pg1", NO),
                pod("preemptor1", "", PENDING, R1, "pg2"),
                pod("preemptor2", "", PENDING, R1, "pg2"),
            ],
            nodes=n1("2", "2G"),
            queues=[build_queue("q1", 1)],
            expect_evicted=["c1/preemptee1"],
        ),
        Case(
            "preempt enough tasks to fit large task of different job",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 1, {"": 3}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg1", YES),
                pod("preemptee2", "n1", RUNNING, R1, "pg1", YES),
                pod("preemptee3", "n1", RUNNING, R1, "pg1", NO),
                pod("preemptor1", "", PENDING, rl("5", "5G"), "pg2"),
            ],
            nodes=n1("6", "6G"),
            queues=[build_queue("q1", 1)],
            expect_evicted=["c1/preemptee2", "c1/preemptee1"],
        ),
        Case(
            "preempt low priority job in same queue",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 0, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, rl("3", "3G"), "pg1", YES),
                pod("preemptor1", "", PENDING, rl("3", "3G"), "pg2"),
            ],
            nodes=n1("12", "12G"),
            queues=[build_queue("q1", 1, rl("4", "4G"))],
            expect_evicted=["c1/preemptee1"],
        ),
        Case(
            "preempt low priority job in same queue: allocatable and has enough resource, don't preempt",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 1, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, rl("3", "3G"), "pg1", YES),
                pod("preemptor1", "", PENDING, rl("3", "3G"), "pg2"),
            ],
            nodes=n1("12", "12G"),
            queues=[build_queue("q1", 1, rl("6", "6G"))],
        ),
        Case(
            "preempt low priority job in same queue but not pod with preemptable=false or higher priority",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 1, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg1", NO),
                pod("preemptee2", "n1", RUNNING, R1, "pg1", YES),
                pod("preemptee3", "n1", RUNNING, R1, "pg1", YES, priority=100000),
                pod("preemptor1", "", PENDING, R1, "pg2"),
            ],
            nodes=n1("12", "12G"),
            queues=[build_queue("q1", 1, rl("3", "3G"))],
            expect_evicted=["c1/preemptee2"],
        ),
        Case(
            "unBestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 0, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, {}, "pg1", YES),
                pod("preemptor1", "", PENDING, rl("3", "3G"), "pg2"),
            ],
            nodes=n1("12", "12G", pods="1"),
            queues=[build_queue("q1", 1, rl("6", "6G"))],
            expect_evicted=["c1/preemptee1"],
        ),
        Case(
            "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 0, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[pod("preemptee1", "n1", RUNNING, {}, "pg1", YES), pod("preemptor1", "", PENDING, {}, "pg2")],
            nodes=n1("12", "12G", pods="1"),
            queues=[build_queue("q1", 1, rl("6", "6G"))],
            expect_evicted=["c1/preemptee1"],
        ),
        Case(
            "can not preempt resources when task preemption policy is never",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 0, None, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, None, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg1", YES),
                pod("preemptor1", "", PENDING, R1, "pg2", preemption_policy="Never"),
            ],
            nodes=n1("1", "1Gi", pods="1"),
            queues=[build_queue("q1", 1)],
        ),
    ]


def multi_queue_case() -> Case:
    return Case(
        "multi-queue: preemptorTasks must not be overwritten by intra-job preemption of another queue",
        podgroups=[
            build_podgroup("pg1", "c1", "q1", 1, {"": 1}, PG_INQUEUE),
            build_podgroup("pg2", "c1", "q2", 0, {}, PG_INQUEUE, priority_class="low-priority"),
            build_podgroup("pg3", "c1", "q2", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
        ],
        pods=[
            pod("q1-runner1", "n1", RUNNING, R1, "pg1"),
            pod("q2-preemptee1", "n1", RUNNING, R1, "pg2", YES),
            pod("q2-preemptor1", "", PENDING, R1, "pg3"),
        ],
        nodes=n1("2", "2G"),
        queues=[build_queue("q1", 1), build_queue("q2", 1, rl("4", "4G"))],
        expect_evicted=["c1/q2-preemptee1"],
    )


def prepared(cases: list[Case]) -> list[Case]:
    """The Go loop's additions (test.PriClass = high, low)."""
    for c in cases:
        c.priority_classes = [HIGH, LOW]
    return cases


# Every case configures preempt's enableTopologyAwarePreemption (false: the default).
NORMAL = prepared([*shared_cases(), multi_queue_case()])


NORMAL_SUITE = Suite("TestPreempt", NORMAL_TIERS, ["preempt"], NORMAL, NORMAL_PLUGINS, topology_aware(False))


@pytest.mark.parametrize("case", NORMAL_SUITE.params())
def test_preempt(case):
    NORMAL_SUITE.run(case)


def topology_only_cases() -> list[Case]:
    return [
        Case(
            "preempt low-priority pod when high-priority pod has PodAntiAffinity conflict",
            podgroups=[
                build_podgroup("pg1", "c1", "q1", 0, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 0, {}, PG_INQUEUE, priority_class="low-priority"),
                build_podgroup("pg3", "c1", "q1", 1, {"": 1}, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee1", "n1", RUNNING, R1, "pg2", YES),
                anti_affinity_pod("preemptee2", "n1", RUNNING, R1, "pg1", {PREEMPTABLE: "true", "test": "test"}),
                anti_affinity_pod("preemptor1", "", PENDING, R1, "pg3", {"test": "test"}),
            ],
            nodes=n1("2", "2Gi", pods="2", labels={"kubernetes.io/hostname": "n1"}),
            queues=[build_queue("q1", 1, rl("2", "2G"))],
            expect_evicted=["c1/preemptee2"],
        ),
        multi_queue_case(),
        Case(
            "preemption with priority queues",
            podgroups=[
                build_podgroup("pg3", "c1", "q2", 1, None, PG_RUNNING, priority_class="high-priority"),
                build_podgroup("pg1", "c1", "q1", 0, None, PG_RUNNING, priority_class="low-priority"),
                build_podgroup("pg2", "c1", "q1", 1, None, PG_INQUEUE, priority_class="high-priority"),
            ],
            pods=[
                pod("preemptee2", "n1", RUNNING, R1, "pg3", YES),
                pod("preemptee1", "n1", RUNNING, R1, "pg1", YES),
                pod("preemptor1", "", PENDING, R1, "pg2", preemption_policy="PreemptLowerPriority"),
            ],
            nodes=n1("2", "2Gi", pods="2"),
            queues=[
                build_queue("q1", 1, rl("1", "1G"), deserved=rl("1", "1G"), priority=1),
                build_queue("q2", 1, rl("1", "1G"), deserved=rl("1", "1G"), priority=10),
            ],
            expect_evicted=["c1/preemptee1"],
        ),
    ]


# Every case runs proportion and capacity together and configures enableTopologyAwarePreemption: true.
TOPOLOGY = prepared([*shared_cases(), *topology_only_cases()])


TOPOLOGY_SUITE = Suite(
    "TestTopologyAwarePreempt", TOPOLOGY_TIERS, ["preempt"], TOPOLOGY, TOPOLOGY_PLUGINS, topology_aware(True)
)


@pytest.mark.parametrize("case", TOPOLOGY_SUITE.params())
def test_topology_aware_preempt(case):
    TOPOLOGY_SUITE.run(case)
