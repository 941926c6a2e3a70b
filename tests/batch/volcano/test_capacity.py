"""Volcano v1.14 pkg/scheduler/plugins/capacity/capacity_test.go (Test_capacityPlugin_OnSessionOpenWithoutHierarchy,
TestEnqueueAndAllocatable, Test_capacityPlugin_OnSessionOpenWithHierarchy through vcore's cycle;
Test_updateQueueAttrShare against vcore's capacity share)."""

from __future__ import annotations

import numpy as np
import pytest

from vcore import parse_quantity
from vcore.batch.shares.capacity import capacity_share

from .volcano_fixtures import (
    PENDING,
    PG_INQUEUE,
    PG_PENDING,
    PG_RUNNING,
    PREEMPTABLE,
    RUNNING,
    Case,
    Suite,
    build_node,
    build_pod,
    build_podgroup,
    build_queue,
    node_res,
    opt,
    res,
    rl,
)

PLUGINS = {"capacity", "predicates", "gang"}
NO = {PREEMPTABLE: "false"}
GPU = "nvidia.com/gpu"


def pod(name, node, phase, req, group, labels=None, selector=None):
    return build_pod("ns1", name, node, phase, req, group, labels, selector)


def pg(name, queue, phase, min_member=1, **kw):
    return build_podgroup(name, "ns1", queue, min_member, None, phase, **kw)


def queue(name, deserved=None, capability=None, *, parent="", priority=None, guarantee=None):
    """util.BuildQueueWithResourcesQuantity (weight 1) and capacity_test.go's buildQueueWithParents."""
    return build_queue(name, 1, capability, deserved=deserved, parent=parent, priority=priority, guarantee=guarantee)


# -- Test_capacityPlugin_OnSessionOpenWithoutHierarchy ------------------------------------------------------------
N1 = build_node("n1", node_res("2", "4Gi"), {"selector": "worker"})
N2 = build_node("n2", node_res("2", "4Gi"))
N3 = build_node("n3", node_res("2", "4Gi", scalars={"nvidia.com/A100": "10"}), {"selector": "worker"})
N4 = build_node("n4", node_res("2", "4Gi", scalars={"nvidia.com/A100": "10"}))
N7 = build_node("n7", node_res("4", "8Gi", scalars={GPU: "4"}))
N8 = build_node("n8", node_res("4", "8Gi", scalars={GPU: "1"}))
A100 = {"nvidia.com/A100": "10"}

FLAT = Suite(
    "Test_capacityPlugin_OnSessionOpenWithoutHierarchy",
    [
        [
            opt(
                "capacity",
                EnabledAllocatable=True,
                EnablePreemptive=True,
                EnabledReclaimable=True,
                EnabledQueueOrder=True,
            ),
            opt("predicates", EnabledPredicate=True),
            opt("gang", EnabledJobStarving=True),
        ]
    ],
    ["allocate", "reclaim"],
    [
        Case(
            "case0: Pod allocatable when queue has not exceed capability",
            pods=[
                pod("p1", "n1", RUNNING, rl("1", "1Gi"), "pg1"),
                pod("p2", "", PENDING, rl("1", "1Gi"), "pg2", selector={"selector": "worker"}),
            ],
            nodes=[N1, N2],
            podgroups=[pg("pg1", "q1", PG_RUNNING), pg("pg2", "q1", PG_INQUEUE)],
            queues=[queue("q1", None, rl("2", "2Gi"))],
            expect_bind={"ns1/p2": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "case1: Pod not allocatable when queue exceed queue capability",
            pods=[pod("p3", "n1", RUNNING, rl("1", "1Gi"), "pg3"), pod("p4", "", PENDING, rl("1", "1Gi"), "pg4")],
            nodes=[N1, N2],
            podgroups=[pg("pg3", "q2", PG_RUNNING), pg("pg4", "q2", PG_INQUEUE)],
            queues=[queue("q2", None, rl("1.5", "1.5Gi"))],
        ),
        Case(
            "case2: Can reclaim from other queues when allocated < deserved",
            pods=[
                pod("p5", "n1", RUNNING, rl("2", "4Gi"), "pg5", NO),
                pod("p6", "n2", RUNNING, rl("2", "4Gi"), "pg5"),
                pod("p7", "", PENDING, rl("2", "4Gi"), "pg6"),
            ],
            nodes=[N1, N2],
            podgroups=[pg("pg5", "q3", PG_RUNNING), pg("pg6", "q4", PG_INQUEUE)],
            queues=[queue("q3", rl("2", "4Gi")), queue("q4", rl("2", "4Gi"))],
            expect_pipelined={"ns1/pg6": ["n2"]},
            expect_evicted=["ns1/p6"],
        ),
        Case(
            "case3: CPU & Memory are overused, scalar resource is not overused, but candidate pod has not request "
            "CPU & "
            "Memory, reclaim should happen",
            pods=[
                pod("p8", "n3", RUNNING, res("0", "0Gi", A100), "pg7", NO),
                pod("p9", "n4", RUNNING, res("0", "0Gi", A100), "pg7"),
                pod("p10", "n3", RUNNING, rl("2", "4Gi"), "pg8"),
                pod("p11", "n4", RUNNING, rl("2", "4Gi"), "pg8"),
                pod("p12", "", PENDING, res("0", "0Gi", A100), "pg9"),
            ],
            nodes=[N3, N4],
            podgroups=[pg("pg7", "q5", PG_RUNNING), pg("pg8", "q6", PG_RUNNING), pg("pg9", "q6", PG_INQUEUE)],
            queues=[queue("q5", res("2", "4Gi", A100)), queue("q6", res("2", "4Gi", A100))],
            expect_pipelined={"ns1/pg9": ["n4"]},
            expect_evicted=["ns1/p9"],
        ),
        Case(
            "case4: Pods are assigned according to the order of Queue Priority in which PGs are placed",
            pods=[
                pod("p13", "n5", RUNNING, rl("2", "4Gi"), "pg10"),
                pod("p14", "", PENDING, rl("2", "4Gi"), "pg11"),
                pod("p15", "", PENDING, rl("2", "4Gi"), "pg12"),
            ],
            nodes=[build_node("n5", node_res("2", "4Gi")), build_node("n6", node_res("2", "4Gi"))],
            podgroups=[pg("pg10", "q7", PG_RUNNING), pg("pg11", "q8", PG_INQUEUE), pg("pg12", "q9", PG_INQUEUE)],
            queues=[
                queue("q7", None, rl("2", "4Gi"), priority=5),
                queue("q8", None, rl("2", "4Gi"), priority=1),
                queue("q9", None, rl("2", "4Gi"), priority=10),
            ],
            expect_bind={"ns1/p15": "n6"},
            expect_binds_num=1,
        ),
        Case(
            "case5: Can reclaim from other queues when allocated + req <= deserved on one dimension",
            pods=[
                pod("p16", "n1", RUNNING, rl("1", "3Gi"), "pg16"),
                pod("p17", "", PENDING, rl("1", "1Gi"), "pg17"),
                pod("p18", "n1", RUNNING, rl("1", "1Gi"), "pg18"),
            ],
            nodes=[N1],
            podgroups=[pg("pg16", "q10", PG_RUNNING), pg("pg17", "q10", PG_INQUEUE), pg("pg18", "q11", PG_RUNNING)],
            queues=[queue("q10", rl("2", "2Gi"), rl("4", "4Gi")), queue("q11", rl("0", "0Gi"), rl("2", "2Gi"))],
            expect_pipelined={"ns1/pg17": ["n1"]},
            expect_evicted=["ns1/p18"],
        ),
        Case(
            "case6: Can not reclaim from other queues when allocated + req > deserved",
            pods=[
                pod("p19", "n1", RUNNING, rl("1", "1Gi"), "pg19"),
                pod("p20", "", PENDING, rl("1", "2Gi"), "pg20"),
                pod("p21", "n1", RUNNING, rl("1", "1Gi"), "pg21"),
            ],
            nodes=[N1],
            podgroups=[pg("pg19", "q12", PG_RUNNING), pg("pg20", "q12", PG_INQUEUE), pg("pg21", "q13", PG_RUNNING)],
            queues=[queue("q12", rl("1", "2Gi"), rl("4", "4Gi")), queue("q13", rl("0", "0Gi"), rl("2", "2Gi"))],
        ),
        Case(
            "case7: allocated does not contain scalar dimension (GPU), deserved does; should not reclaim",
            pods=[
                pod("p22", "n7", RUNNING, rl("2", "4Gi"), "pg22"),
                pod("p23", "n7", RUNNING, res("0", "0Gi", {GPU: "1"}), "pg23"),
                pod("p24", "n7", RUNNING, res("2", "1Gi", {GPU: "1"}), "pg24"),
                pod("p25", "", PENDING, res("2", "3Gi", {GPU: "1"}), "pg25"),
            ],
            nodes=[N7],
            podgroups=[
                pg("pg22", "queue14", PG_RUNNING),
                pg("pg23", "queue15", PG_RUNNING),
                pg("pg24", "queue16", PG_RUNNING),
                pg("pg25", "queue16", PG_INQUEUE),
            ],
            queues=[
                queue("queue14", res("2", "4Gi", {GPU: "2"})),
                queue("queue15"),
                queue("queue16", res("2", "4Gi", {GPU: "2"})),
            ],
        ),
        Case(
            "case8: reclaimer dimensions are considered properly while evicting reclaimees",
            pods=[
                pod("p26", "n8", RUNNING, rl("0", "4Gi"), "pg26"),
                pod("p27", "n8", RUNNING, rl("1", "0Gi"), "pg27"),
                pod("p28", "n8", RUNNING, res("0", "0Gi", {GPU: "1"}), "pg28"),
                pod("p29", "n8", RUNNING, rl("2", "4Gi"), "pg29"),
                pod("p30", "", PENDING, res("1", "0Gi", {GPU: "1"}), "pg30"),
            ],
            nodes=[N8],
            podgroups=[
                pg("pg26", "queue17", PG_RUNNING),
                pg("pg27", "queue17", PG_RUNNING),
                pg("pg28", "queue17", PG_RUNNING),
                pg("pg29", "queue18", PG_RUNNING),
                pg("pg30", "queue18", PG_INQUEUE),
            ],
            queues=[queue("queue17", rl("2", "2Gi")), queue("queue18", res("2", "4Gi", {GPU: "1"}))],
            expect_pipelined={"ns1/pg30": ["n8"]},
            expect_evicted=["ns1/p28"],
        ),
        Case(
            "case9: reclaimee has intersecting scalar dimensions with deserved shouldn't be reclaimed on cpu/memory",
            pods=[
                pod("p31", "n8", RUNNING, res("4", "4Gi", {GPU: "1"}), "pg31"),
                pod("p32", "", PENDING, rl("1", "1Gi"), "pg32"),
            ],
            nodes=[N8],
            podgroups=[pg("pg31", "queue19", PG_RUNNING), pg("pg32", "queue20", PG_INQUEUE)],
            queues=[queue("queue19", res("", "", {GPU: "1"})), queue("queue20", rl("2", "2Gi"))],
        ),
    ],
    PLUGINS,
)


@pytest.mark.parametrize("case", FLAT.params())
def test_capacity_without_hierarchy(case):
    FLAT.run(case)


# -- TestEnqueueAndAllocatable ------------------------------------------------------------------------------------
def _enqueue_objects(n: int, queue_name: str, req: dict) -> dict:
    return {
        "pods": [
            pod("pod1", "n1", RUNNING, rl("1", "3G"), "pg1"),
            pod("pod2", "n2", RUNNING, rl("3", "1G"), "pg2"),
            pod(f"pod{n}", "", PENDING, req, f"pg{n}"),
        ],
        "podgroups": [
            pg("pg1", "q1", PG_RUNNING, min_resources=rl("1", "3G")),
            pg("pg2", "q2", PG_RUNNING, min_resources=rl("3", "1G")),
            pg(f"pg{n}", queue_name, PG_PENDING, min_resources=req),
        ],
        "queues": [queue("q1", rl("2", "2G"), rl("2", "2G")), queue("q2", rl("2", "2G"), rl("3", "3G"))],
        "nodes": [build_node("n1", node_res("3", "3G")), build_node("n2", node_res("3", "3G"))],
    }


ENQUEUE = Suite(
    "TestEnqueueAndAllocatable",
    [
        [
            opt(
                "capacity",
                EnabledAllocatable=True,
                EnablePreemptive=True,
                EnabledOverused=True,
                EnabledJobEnqueued=True,
            ),
        ]
    ],
    ["enqueue", "allocate"],
    [
        Case(
            "case0: memory exceed derserved, job only request cpu can be enqueued and allocated",
            **_enqueue_objects(3, "q1", rl("1", "0G")),
            expect_bind={"ns1/pod3": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "case1: cpu exceed derserved, job only request memory can be enqueued and allocated",
            **_enqueue_objects(4, "q2", rl("0", "1G")),
            expect_bind={"ns1/pod4": "n2"},
            expect_binds_num=1,
        ),
        Case("case2: exceed capacity, can not enqueue", **_enqueue_objects(5, "q1", rl("1", "1G"))),
        Case(
            "case4: queue with non-open state, can not enqueue",
            pods=[pod("pod6", "", PENDING, rl("1", "1G"), "pg6")],
            podgroups=[pg("pg6", "q3", PG_PENDING, min_resources=rl("1", "1G"))],
            queues=[build_queue("q3", 1, rl("3", "3G"), state="Closed")],
            nodes=[build_node("n1", node_res("3", "3G")), build_node("n2", node_res("3", "3G"))],
        ),
    ],
    {"capacity"},
)


@pytest.mark.parametrize("case", ENQUEUE.params())
def test_enqueue_and_allocatable(case):
    ENQUEUE.run(case)


# -- Test_capacityPlugin_OnSessionOpenWithHierarchy ---------------------------------------------------------------
H_N1 = build_node("n1", node_res("8", "8Gi", pods="11"))
ROOT = queue("root")
ROOT1 = queue("root", None, rl("16", "16Gi"))
ROOT2 = queue("root", res("16", "16Gi", {"nvidia.com/a100": "4", "rdma": "1000"}))
Q1, Q2 = queue("q1", None, rl("4", "4Gi"), parent="root"), queue("q2", None, rl("4", "4Gi"), parent="root")
Q11, Q12 = queue("q11", None, rl("1", "1Gi"), parent="q1"), queue("q12", None, rl("3", "3Gi"), parent="q1")


def _pods_q(cpu: str, mem: str, pods: str) -> dict:
    return res(cpu, mem, {"pods": pods})


Q3 = queue("q3", _pods_q("4", "4Gi", "10"), _pods_q("4", "4Gi", "10"), parent="root")
Q4 = queue("q4", _pods_q("2", "2Gi", "1"), _pods_q("4", "4Gi", "4"), parent="root")
Q31 = queue("q31", _pods_q("2", "2Gi", "2"), _pods_q("4", "4Gi", "4"), parent="q3")
Q32 = queue("q32", _pods_q("2", "2Gi", "2"), _pods_q("4", "4Gi", "4"), parent="q3")
Q33 = queue("q33", _pods_q("0", "0Gi", "2"), _pods_q("4", "4Gi", "4"), parent="q3")
H_P6 = pod("p6", "n1", RUNNING, rl("2", "2Gi"), "pg5", NO)
H_PG5 = pg("pg5", "q31", PG_RUNNING)
N_GPU2 = build_node("n2", node_res("8", "8Gi", scalars={GPU: "8", "hugepages-1Gi": "0"}))
A100_2 = {"nvidia.com/a100": "2", "rdma/hca": "1"}

HIERARCHY = Suite(
    "Test_capacityPlugin_OnSessionOpenWithHierarchy",
    [
        [
            opt(
                "capacity",
                EnabledAllocatable=True,
                EnablePreemptive=True,
                EnabledReclaimable=True,
                EnabledQueueOrder=True,
                EnabledHierarchy=True,
                EnabledJobEnqueued=True,
            ),
            opt("predicates", EnabledPredicate=True),
            opt("gang", EnabledJobStarving=True),
        ]
    ],
    ["enqueue", "reclaim", "allocate"],
    [
        Case(
            "case0: Pod allocatable when queue is leaf queue",
            pods=[pod("p1", "", PENDING, rl("1", "1Gi"), "pg1")],
            nodes=[H_N1],
            podgroups=[pg("pg1", "q11", PG_INQUEUE)],
            queues=[ROOT, Q1, Q2, Q11, Q12],
            expect_bind={"ns1/p1": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "case1: Pod not allocatable when queue is not leaf queue",
            pods=[pod("p2", "", PENDING, rl("1", "1Gi"), "pg2")],
            nodes=[H_N1],
            podgroups=[pg("pg2", "q1", PG_PENDING)],
            queues=[ROOT, Q1, Q2, Q11, Q12],
        ),
        Case(
            "case2: Pod allocatable when queue has not exceed capability",
            pods=[pod("p3", "", PENDING, rl("2", "2Gi"), "pg3"), pod("p4", "", PENDING, rl("2", "2Gi"), "pg3")],
            nodes=[H_N1],
            podgroups=[pg("pg3", "q31", PG_INQUEUE, min_member=2)],
            queues=[ROOT, Q3, Q4, Q31, Q32],
            expect_bind={"ns1/p3": "n1", "ns1/p4": "n1"},
            expect_binds_num=2,
        ),
        Case(
            "case3: Can reclaim from other queues when allocated < deserved",
            pods=[
                pod("p5", "n1", RUNNING, rl("4", "4Gi"), "pg4"),
                H_P6,
                pod("p7", "n1", RUNNING, rl("2", "2Gi"), "pg5"),
                pod("p8", "", PENDING, rl("2", "2Gi"), "pg6"),
            ],
            nodes=[H_N1],
            podgroups=[pg("pg4", "q4", PG_RUNNING), H_PG5, pg("pg6", "q32", PG_INQUEUE)],
            queues=[ROOT, Q3, Q31, Q32, Q4],
            expect_pipelined={"ns1/pg6": ["n1"]},
            expect_evicted=["ns1/p7"],
        ),
        Case(
            "case4: Pod is not allocatable when ancestor queue's real capability not enough",
            pods=[
                H_P6,
                pod("p9", "n1", RUNNING, rl("2", "2Gi"), "pg7"),
                pod("p10", "", PENDING, rl("3", "3Gi"), "pg8"),
            ],
            nodes=[H_N1],
            podgroups=[H_PG5, pg("pg7", "q32", PG_RUNNING), pg("pg8", "q33", PG_INQUEUE)],
            queues=[ROOT, Q3, Q31, Q32, Q33],
        ),
        Case(
            "case5: If the capability cpu or memory is not specified, the value should be inherited from parent queue",
            pods=[pod("p11", "", PENDING, rl("1", ""), "pg9")],
            nodes=[H_N1],
            podgroups=[pg("pg9", "q51", PG_RUNNING)],
            queues=[
                ROOT,
                queue("q5", None, rl("", "4Gi"), parent="root"),
                queue("q51", None, rl("", "2Gi"), parent="q5"),
            ],
            expect_bind={"ns1/p11": "n1"},
            expect_binds_num=1,
        ),
        Case(
            "case6: podgroup can't be enqueued when any ancestor queue's capability is not enough",
            nodes=[H_N1],
            podgroups=[
                pg("pg10", "q61", PG_PENDING, min_resources=rl("2", "4Gi")),
                pg("pg11", "q62", PG_PENDING, min_resources=rl("2", "4Gi")),
            ],
            queues=[
                ROOT,
                queue("q6", None, rl("2", "4Gi"), parent="root"),
                queue("q61", parent="q6"),
                queue("q62", parent="q6"),
            ],
            expect_status={"ns1/pg10": PG_INQUEUE, "ns1/pg11": PG_PENDING},
        ),
        Case(
            "case7: the sum of sub queue 71 and 72's guarantee exceeds the capacity of queue7, but should not panic",
            nodes=[H_N1],
            queues=[
                ROOT,
                queue("q7", None, rl("6", "4Gi"), parent="root"),
                queue("q71", None, rl("6", "4Gi"), parent="q7", guarantee=rl("4", "3Gi")),
                queue("q72", None, rl("6", "4Gi"), parent="q7", guarantee=rl("4", "3Gi")),
            ],
        ),
        Case(
            "case8: When the queue's deserved value has a scalar resource set, the check can pass",
            pods=[pod("p12", "", PENDING, res("2", "2Gi", {GPU: "1"}), "pg12")],
            nodes=[build_node("n-gpu", node_res("8", "8Gi", scalars={GPU: "8"}))],
            podgroups=[pg("pg12", "q81", PG_INQUEUE)],
            queues=[
                ROOT,
                queue("q8", res("4", "4Gi", {GPU: "8"}), parent="root"),
                queue("q81", res("2", "2Gi", {GPU: "4"}), parent="q8"),
                queue("q82", res("2", "2Gi", {GPU: "4"}), parent="q8"),
            ],
            expect_bind={"ns1/p12": "n-gpu"},
            expect_binds_num=1,
        ),
        Case(
            "case9: When some scalar resources are 0 in deserved, the check can still pass",
            pods=[pod("p13", "", PENDING, res("2", "2Gi", {GPU: "1"}), "pg13")],
            nodes=[N_GPU2],
            podgroups=[pg("pg13", "q91", PG_INQUEUE)],
            queues=[
                ROOT,
                queue("q9", res("2", "2Gi", {GPU: "8", "hugepages-1Gi": "0"}), parent="root"),
                queue("q91", res("2", "2Gi", {GPU: "4", "hugepages-1Gi": "0"}), parent="q9"),
            ],
            expect_bind={"ns1/p13": "n2"},
            expect_binds_num=1,
        ),
        Case(
            "case10: root queue's capability > cluster total resource, but should not panic",
            nodes=[H_N1],
            queues=[ROOT1, queue("q10", None, rl("10", "4Gi"), parent="root")],
        ),
        Case(
            "case11: If the capability scalar resources is not specified, the value should be inherited from parent "
            "queue",
            pods=[
                pod("p14", "", PENDING, res("1", "1Gi", {GPU: "4"}), "pg14"),
                pod("p15", "", PENDING, res("1", "1Gi", {GPU: "4"}), "pg15"),
            ],
            nodes=[N_GPU2],
            podgroups=[pg("pg14", "case11_queue11", PG_INQUEUE), pg("pg15", "case11_queue12", PG_INQUEUE)],
            queues=[
                ROOT,
                queue("case11_queue1", parent="root"),
                queue("case11_queue11", None, res("4", "4Gi", {GPU: "4"}), parent="case11_queue1"),
                queue("case11_queue12", None, res("4", "4Gi", {GPU: "4"}), parent="case11_queue1"),
            ],
            expect_bind={"ns1/p14": "n2", "ns1/p15": "n2"},
            expect_binds_num=2,
        ),
        Case(
            "case12: Can reclaim from other queues when allocated <= deserved on a single scalar dimension",
            pods=[
                pod("p16", "", PENDING, res("1", "1Gi", A100_2), "pg16"),
                pod("p17", "n3", RUNNING, res("1", "1Gi", A100_2), "pg17"),
                pod("p18", "n3", RUNNING, res("1", "1Gi", A100_2), "pg18", NO),
            ],
            nodes=[
                build_node(
                    "n3", node_res("16", "16Gi", pods="11", scalars={"nvidia.com/a100": "5", "rdma/hca": "1001"})
                )
            ],
            podgroups=[
                pg("pg16", "case12_queue11", PG_INQUEUE),
                pg("pg17", "case12_queue12", PG_RUNNING),
                pg("pg18", "case12_queue12", PG_RUNNING),
            ],
            queues=[
                ROOT2,
                queue("case12_queue1", res("", "", {"nvidia.com/a100": "2"}), parent="root"),
                queue("case12_queue11", res("", "", {"nvidia.com/a100": "2"}), parent="case12_queue1"),
                queue("case12_queue12", parent="case12_queue1"),
            ],
            expect_pipelined={"ns1/pg16": ["n3"]},
            expect_evicted=["ns1/p17"],
        ),
    ],
    PLUGINS,
)


@pytest.mark.parametrize("case", HIERARCHY.params())
def test_capacity_with_hierarchy(case):
    HIERARCHY.run(case)


# -- Test_updateQueueAttrShare ------------------------------------------------------------------------------------
def _vec(cpu: str = "0", memory: str = "0") -> np.ndarray:
    """api.NewResource(BuildResourceList(cpu, memory)) over (cpu milli, memory bytes); EmptyResource is zeros."""
    return np.array([parse_quantity(cpu, milli=True), parse_quantity(memory)], dtype=np.int64)


EMPTY = _vec()
SHARE_CASES = [  # name, deserved, allocated, request (ignored by the share), want
    ("best-effort queue with allocated resources", EMPTY, _vec("1", "1Gi"), EMPTY, 1.0),
    ("best-effort queue with pending requests only (no allocated)", EMPTY, EMPTY, _vec("1", "1Gi"), 1.0),
    ("best-effort queue with both allocated and request", EMPTY, _vec("1", "1Gi"), _vec("0.5", "0.5Gi"), 1.0),
    ("best-effort queue completely idle", EMPTY, EMPTY, EMPTY, 1.0),
    ("queue with deserved but no allocated", _vec("2", "2Gi"), EMPTY, EMPTY, 0.0),
    ("queue with deserved, allocated < deserved (CPU dimension)", _vec("2", "2Gi"), _vec("1", "1Gi"), EMPTY, 0.5),
    ("queue with deserved, allocated = deserved", _vec("2", "2Gi"), _vec("2", "2Gi"), EMPTY, 1.0),
    ("queue with deserved, allocated > deserved (CPU dimension)", _vec("2", "2Gi"), _vec("3", "2Gi"), EMPTY, 1.5),
    ("queue with deserved, memory is dominant resource", _vec("2", "4Gi"), _vec("1", "3Gi"), EMPTY, 0.75),
    ("queue with deserved, CPU is dominant resource", _vec("2", "4Gi"), _vec("1.5", "2Gi"), EMPTY, 0.75),
    ("queue with deserved, allocated exceeds on both dimensions", _vec("2", "2Gi"), _vec("3", "3Gi"), EMPTY, 1.5),
    (
        "queue with deserved, request should not affect share calculation",
        _vec("2", "2Gi"),
        _vec("1", "1Gi"),
        _vec("1", "1Gi"),
        0.5,
    ),
    ("queue with deserved but zero values", _vec("0", "0Gi"), _vec("1", "1Gi"), EMPTY, 1.0),
    ("queue with deserved, allocated is zero", _vec("2", "2Gi"), _vec("0", "0Gi"), EMPTY, 0.0),
    ("best-effort queue with only CPU allocated", EMPTY, _vec("1", "0Gi"), EMPTY, 1.0),
    ("best-effort queue with only memory allocated", EMPTY, _vec("0", "1Gi"), EMPTY, 1.0),
    ("best-effort queue with only CPU request (no allocated)", EMPTY, EMPTY, _vec("1", "0Gi"), 1.0),
]


@pytest.mark.parametrize("deserved, allocated, requested, want", [pytest.param(*c[1:], id=c[0]) for c in SHARE_CASES])
def test_update_queue_attr_share(deserved, allocated, requested, want):
    assert capacity_share(allocated, deserved, np.ones(2, dtype=bool)) == want  # requested plays no part
