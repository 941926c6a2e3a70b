"""Volcano's capacity plugin: the cases of Volcano's capacity_test.go at plugin level.

Volcano's tests run whole sessions (enqueue, allocate, reclaim) and check bindings and evictions; here each case
asks the plugin the question its outcome hinges on (allocatable, enqueueable, preemptive, which candidates are
victims, queue order), with the cluster, queues and pods of the Volcano case. Node fit and the choice among victims
are the actions' part and are not repeated here.
"""

from __future__ import annotations

import numpy as np
import pytest

from vcore.batch.queue import UNLIMITED
from vcore.batch.shares import PERMIT, REJECT, CapacityPlugin, Claim
from vcore.batch.shares.capacity import capacity_share
from vcore.errors import ProfileError

from .share_builders import opened, rlist, tree, usage, vec, volcano

CM = ("cpu", "memory", "ephemeral-storage", "pods")
GPU = ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu")
A100 = ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/A100")


def r(names, cpu="0", mem="0", **extra):
    return vec(
        names,
        {("nvidia.com/" + k if k in ("gpu", "A100", "a100") else k.replace("_", "/")): v for k, v in extra.items()},
        cpu=cpu,
        mem=mem,
    )


def run(names, total, queues, usages, *, hierarchy=False):
    return opened(CapacityPlugin(hierarchy=hierarchy), tree(*queues), total, usages, names)


# -- Test_capacityPlugin_OnSessionOpenWithoutHierarchy ---------------------------------------------------------
def test_case0_allocatable_when_queue_has_not_exceeded_capability():
    p = run(
        CM,
        r(CM, "4", "8Gi"),
        [volcano("q1", capability=rlist(cpu="2", mem="2Gi"))],
        {"q1": usage(CM, allocated=r(CM, "1", "1Gi"), pending=r(CM, "1", "1Gi"))},
    )
    assert p.allocatable("q1", r(CM, "1", "1Gi"))


def test_case1_not_allocatable_when_queue_exceeds_capability():
    p = run(
        CM,
        r(CM, "4", "8Gi"),
        [volcano("q2", capability=rlist(cpu="1.5", mem="1.5Gi"))],
        {"q2": usage(CM, allocated=r(CM, "1", "1Gi"), pending=r(CM, "1", "1Gi"))},
    )
    assert not p.allocatable("q2", r(CM, "1", "1Gi"))


def test_case2_reclaim_from_other_queue_when_allocated_below_deserved():
    # q3 runs p5 and p6 (2c/4Gi each; p5 is not preemptable, so the action offers only p6); p7 waits in q4
    p = run(
        CM,
        r(CM, "4", "8Gi"),
        [volcano("q3", deserved=rlist(cpu="2", mem="4Gi")), volcano("q4", deserved=rlist(cpu="2", mem="4Gi"))],
        {"q3": usage(CM, allocated=r(CM, "4", "8Gi")), "q4": usage(CM, pending=r(CM, "2", "4Gi"))},
    )
    assert p.preemptive("q4", r(CM, "2", "4Gi"))
    assert p.reclaimable(Claim("q4", r(CM, "2", "4Gi")), [Claim("q3", r(CM, "2", "4Gi"))]) == [0]


def test_case3_scalar_not_overused_reclaim_for_a_task_without_cpu_memory():
    total = r(A100, "4", "8Gi", A100=20)
    p = run(
        A100,
        total,
        [
            volcano("q5", deserved=rlist(cpu="2", mem="4Gi", extra={"nvidia.com/A100": 10})),
            volcano("q6", deserved=rlist(cpu="2", mem="4Gi", extra={"nvidia.com/A100": 10})),
        ],
        {
            "q5": usage(A100, allocated=r(A100, A100=20)),
            "q6": usage(A100, allocated=r(A100, "4", "8Gi"), pending=r(A100, A100=10)),
        },
    )
    assert p.preemptive("q6", r(A100, A100=10))  # cpu and memory are over deserved, but the task asks for neither
    assert p.reclaimable(Claim("q6", r(A100, A100=10)), [Claim("q5", r(A100, A100=10))]) == [0]


def test_case4_queues_are_ordered_by_priority():
    cap = rlist(cpu="2", mem="4Gi")
    p = run(
        CM,
        r(CM, "4", "8Gi"),
        [
            volcano("q7", priority=5, capability=cap),
            volcano("q8", priority=1, capability=cap),
            volcano("q9", priority=10, capability=cap),
        ],
        {
            "q7": usage(CM, allocated=r(CM, "2", "4Gi")),
            "q8": usage(CM, pending=r(CM, "2", "4Gi")),
            "q9": usage(CM, pending=r(CM, "2", "4Gi")),
        },
    )
    assert p.sorted_queues(["q7", "q8", "q9"]) == ["q9", "q7", "q8"]  # p15 (q9) binds first
    assert p.allocatable("q9", r(CM, "2", "4Gi"))


def test_case5_reclaim_when_allocated_plus_request_within_deserved_on_one_resource():
    p = run(
        CM,
        r(CM, "2", "4Gi"),
        [
            volcano("q10", deserved=rlist(cpu="2", mem="2Gi"), capability=rlist(cpu="4", mem="4Gi")),
            volcano("q11", deserved=rlist(cpu="0", mem="0"), capability=rlist(cpu="2", mem="2Gi")),
        ],
        {
            "q10": usage(CM, allocated=r(CM, "1", "3Gi"), pending=r(CM, "1", "1Gi")),
            "q11": usage(CM, allocated=r(CM, "1", "1Gi")),
        },
    )
    assert p.preemptive("q10", r(CM, "1", "1Gi"))  # cpu: 1 + 1 <= 2 although memory 3Gi + 1Gi > 2Gi
    assert p.reclaimable(Claim("q10", r(CM, "1", "1Gi")), [Claim("q11", r(CM, "1", "1Gi"))]) == [0]  # evict p18


def test_case6_no_reclaim_when_allocated_plus_request_exceeds_deserved():
    p = run(
        CM,
        r(CM, "2", "4Gi"),
        [
            volcano("q12", deserved=rlist(cpu="1", mem="2Gi"), capability=rlist(cpu="4", mem="4Gi")),
            volcano("q13", deserved=rlist(cpu="0", mem="0"), capability=rlist(cpu="2", mem="2Gi")),
        ],
        {
            "q12": usage(CM, allocated=r(CM, "1", "1Gi"), pending=r(CM, "1", "2Gi")),
            "q13": usage(CM, allocated=r(CM, "1", "1Gi")),
        },
    )
    assert not p.preemptive("q12", r(CM, "1", "2Gi"))


def test_case7_allocated_without_a_deserved_scalar_is_not_reclaimed():
    # n7: 4c/8Gi/4 GPUs. p22 (2c/4Gi) in queue14, p23 (1 GPU) in queue15, p24 (2c/1Gi/1 GPU) and pending p25
    # (2c/3Gi/1 GPU) in queue16. p22 is within queue14's deserved on cpu and memory: not a victim (Volcano #4918);
    # p23 alone is (its queue deserves nothing) but does not free cpu on the node, so Volcano evicts nothing.
    deserved = rlist(cpu="2", mem="4Gi", gpu=2)
    p = run(
        GPU,
        r(GPU, "4", "8Gi", gpu=4),
        [volcano("queue14", deserved=deserved), volcano("queue15"), volcano("queue16", deserved=deserved)],
        {
            "queue14": usage(GPU, allocated=r(GPU, "2", "4Gi")),
            "queue15": usage(GPU, allocated=r(GPU, gpu=1)),
            "queue16": usage(GPU, allocated=r(GPU, "2", "1Gi", gpu=1), pending=r(GPU, "2", "3Gi", gpu=1)),
        },
    )
    reclaimer = Claim("queue16", r(GPU, "2", "3Gi", gpu=1))
    assert p.preemptive("queue16", reclaimer.request)
    assert p.reclaimable(reclaimer, [Claim("queue14", r(GPU, "2", "4Gi")), Claim("queue15", r(GPU, gpu=1))]) == [1]


def test_case8_reclaimer_dimensions_decide_the_victims():
    # n8: 4c/8Gi/1 GPU; queue17 (deserved 2c/2Gi) runs p26 (4Gi), p27 (1 cpu), p28 (1 GPU); p30 (1 cpu, 1 GPU)
    # waits in queue18: only p28 is a victim (Volcano #4918, bug 1 and enhancement 1)
    p = run(
        GPU,
        r(GPU, "4", "8Gi", gpu=1),
        [
            volcano("queue17", deserved=rlist(cpu="2", mem="2Gi")),
            volcano("queue18", deserved=rlist(cpu="2", mem="4Gi", gpu=1)),
        ],
        {
            "queue17": usage(GPU, allocated=r(GPU, "1", "4Gi", gpu=1)),
            "queue18": usage(GPU, allocated=r(GPU, "2", "4Gi"), pending=r(GPU, "1", gpu=1)),
        },
    )
    candidates = [Claim("queue17", r(GPU, "0", "4Gi")), Claim("queue17", r(GPU, "1")), Claim("queue17", r(GPU, gpu=1))]
    assert p.reclaimable(Claim("queue18", r(GPU, "1", gpu=1)), candidates) == [2]


def test_case9_intersecting_scalar_within_deserved_is_not_reclaimed_on_cpu_memory():
    # p31 (4c/4Gi/1 GPU) in queue19 (deserved: 1 GPU only) uses the node's cpu, but its GPU is within deserved
    p = run(
        GPU,
        r(GPU, "4", "8Gi", gpu=1),
        [volcano("queue19", deserved=rlist(gpu=1)), volcano("queue20", deserved=rlist(cpu="2", mem="2Gi"))],
        {"queue19": usage(GPU, allocated=r(GPU, "4", "4Gi", gpu=1)), "queue20": usage(GPU, pending=r(GPU, "1", "1Gi"))},
    )
    assert p.preemptive("queue20", r(GPU, "1", "1Gi"))
    assert p.reclaimable(Claim("queue20", r(GPU, "1", "1Gi")), [Claim("queue19", r(GPU, "4", "4Gi", gpu=1))]) == []


def test_case10_preemptive_respects_capability():
    # queue21: capability = deserved = 8c/100Gi, 7c/90Gi allocated, 2c/5Gi pending: 9 cpu would exceed capability
    both = rlist(cpu="8", mem="100Gi")
    p = run(
        CM,
        r(CM, "16", "200Gi"),
        [volcano("queue21", deserved=both, capability=both), volcano("queue22", capability=rlist(cpu="2", mem="5Gi"))],
        {
            "queue21": usage(CM, allocated=r(CM, "7", "90Gi"), pending=r(CM, "2", "5Gi")),
            "queue22": usage(CM, allocated=r(CM, "2", "5Gi")),
        },
    )
    assert not p.preemptive("queue21", r(CM, "2", "5Gi"))


# -- TestEnqueueAndAllocatable ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "queue, min_resources, expected",
    [
        pytest.param("q1", r(CM, "1", "0"), PERMIT, id="case0: memory exceed deserved, job only request cpu"),
        pytest.param("q2", r(CM, "0", "1G"), PERMIT, id="case1: cpu exceed deserved, job only request memory"),
        pytest.param("q1", r(CM, "1", "1G"), REJECT, id="case2: exceed capacity, can not enqueue"),
        pytest.param("q3", r(CM, "1", "1G"), REJECT, id="case4: queue with non-open state, can not enqueue"),
    ],
)
def test_enqueue_and_allocatable(queue, min_resources, expected):
    queues = [
        volcano("q1", deserved=rlist(cpu="2", mem="2Gi"), capability=rlist(cpu="2", mem="2Gi")),
        volcano("q2", deserved=rlist(cpu="2", mem="2Gi"), capability=rlist(cpu="3", mem="3Gi")),
        volcano("q3", capability=rlist(cpu="3", mem="3Gi"), state="Closed"),
    ]
    usages = {"q1": usage(CM, allocated=r(CM, "1", "3G")), "q2": usage(CM, allocated=r(CM, "3", "1G")), "q3": usage(CM)}
    p = run(CM, r(CM, "6", "6Gi"), queues, usages)
    assert p.job_enqueueable(queue, min_resources) == expected
    if expected == PERMIT:
        assert p.allocatable(queue, min_resources)
        p.on_job_enqueued(queue, min_resources)
        assert p.job_enqueueable(queue, min_resources) == (PERMIT if queue == "q2" else REJECT)


# -- Test_capacityPlugin_OnSessionOpenWithHierarchy ------------------------------------------------------------
def h(name, parent, deserved=None, capability=None, **kw):
    return volcano(name, parent=parent or None, deserved=deserved, capability=capability, **kw)


ROOT = h("root", "")
Q1, Q2 = h("q1", "root", capability=rlist(cpu="4", mem="4Gi")), h("q2", "root", capability=rlist(cpu="4", mem="4Gi"))
Q11, Q12 = h("q11", "q1", capability=rlist(cpu="1", mem="1Gi")), h("q12", "q1", capability=rlist(cpu="3", mem="3Gi"))
Q3 = h("q3", "root", rlist(cpu="4", mem="4Gi", pods=10), rlist(cpu="4", mem="4Gi", pods=10))
Q4 = h("q4", "root", rlist(cpu="2", mem="2Gi", pods=1), rlist(cpu="4", mem="4Gi", pods=4))
Q31 = h("q31", "q3", rlist(cpu="2", mem="2Gi", pods=2), rlist(cpu="4", mem="4Gi", pods=4))
Q32 = h("q32", "q3", rlist(cpu="2", mem="2Gi", pods=2), rlist(cpu="4", mem="4Gi", pods=4))
Q33 = h("q33", "q3", rlist(cpu="0", mem="0", pods=2), rlist(cpu="4", mem="4Gi", pods=4))
N1 = r(CM, "8", "8Gi") + vec(CM, pods=11)


def test_h_case0_allocatable_in_a_leaf_queue():
    p = run(CM, N1, [ROOT, Q1, Q2, Q11, Q12], {"q11": usage(CM, pending=r(CM, "1", "1Gi"))}, hierarchy=True)
    assert p.allocatable("q11", r(CM, "1", "1Gi"))
    assert p.status()["q11"].deserved.tolist() == r(CM).tolist()


def test_h_case1_not_allocatable_in_a_non_leaf_queue():
    p = run(CM, N1, [ROOT, Q1, Q2, Q11, Q12], {"q1": usage(CM, pending=r(CM, "1", "1Gi"))}, hierarchy=True)
    assert not p.allocatable("q1", r(CM, "1", "1Gi"))
    assert p.job_enqueueable("q1", r(CM, "1", "1Gi")) == REJECT


def test_h_case2_allocatable_within_capability():
    p = run(CM, N1, [ROOT, Q3, Q4, Q31, Q32], {"q31": usage(CM, pending=r(CM, "4", "4Gi"))}, hierarchy=True)
    for _ in range(2):  # p3 and p4, 2c/2Gi each, both bind
        assert p.allocatable("q31", r(CM, "2", "2Gi"))
        p.on_allocate("q31", r(CM, "2", "2Gi"))
    assert not p.allocatable("q31", r(CM, "1", "1Gi"))


def test_h_case3_reclaim_from_other_queues_nearest_first():
    # p5 (4c/4Gi) runs in q4, p6 (not preemptable) and p7 (2c/2Gi each) in q31, p8 (2c/2Gi) waits in q32
    p = run(
        CM,
        N1,
        [ROOT, Q3, Q31, Q32, Q4],
        {
            "q4": usage(CM, allocated=r(CM, "4", "4Gi")),
            "q31": usage(CM, allocated=r(CM, "4", "4Gi")),
            "q32": usage(CM, pending=r(CM, "2", "2Gi")),
        },
        hierarchy=True,
    )
    assert p.preemptive("q32", r(CM, "2", "2Gi"))
    assert p.victim_queue_order("q31", "q4", "q32") == -1  # q31 shares q3 with the preemptor: its tasks first
    victims = p.reclaimable(
        Claim("q32", r(CM, "2", "2Gi")), [Claim("q31", r(CM, "2", "2Gi")), Claim("q4", r(CM, "4", "4Gi"))]
    )
    assert victims == [0, 1]  # both queues are above deserved; evicting p7 (first) frees enough on the node


def test_h_case4_not_allocatable_when_an_ancestor_real_capability_is_short():
    p = run(
        CM,
        N1,
        [ROOT, Q3, Q31, Q32, Q33],
        {
            "q31": usage(CM, allocated=r(CM, "2", "2Gi")),
            "q32": usage(CM, allocated=r(CM, "2", "2Gi")),
            "q33": usage(CM, pending=r(CM, "3", "3Gi")),
        },
        hierarchy=True,
    )
    assert not p.allocatable("q33", r(CM, "3", "3Gi"))  # q33 itself would fit (4c/4Gi); q3 would reach 7c/7Gi


def test_h_case5_unset_capability_inherited_from_the_parent():
    q5 = h("q5", "root", capability={"memory": "4Gi"})
    q51 = h("q51", "q5", capability={"memory": "2Gi"})
    p = run(CM, N1, [ROOT, q5, q51], {"q51": usage(CM, pending=r(CM, "1"))}, hierarchy=True)
    assert p.allocatable("q51", r(CM, "1"))
    assert not p.allocatable("q51", r(CM, "0", "3Gi"))


def test_h_case6_enqueue_stops_at_any_ancestor_capability():
    q6 = h("q6", "root", capability=rlist(cpu="2", mem="4Gi"))
    q61, q62 = h("q61", "q6"), h("q62", "q6")
    p = run(CM, N1, [ROOT, q6, q61, q62], {"q61": usage(CM), "q62": usage(CM)}, hierarchy=True)
    minimum = r(CM, "2", "4Gi")
    assert p.job_enqueueable("q61", minimum) == PERMIT
    p.on_job_enqueued("q61", minimum)
    assert p.job_enqueueable("q62", minimum) == REJECT  # pg10 Inqueue, pg11 stays Pending


def test_h_case7_guarantees_above_parent_capacity_do_not_break():
    g = {"resource": rlist(cpu="4", mem="3Gi")}
    q7 = h("q7", "root", capability=rlist(cpu="6", mem="4Gi"))
    q71, q72 = (h(n, "q7", capability=rlist(cpu="6", mem="4Gi")) for n in ("q71", "q72"))
    q71["spec"]["guarantee"] = q72["spec"]["guarantee"] = g
    p = run(CM, N1, [ROOT, q7, q71, q72], {}, hierarchy=True)
    s = p.status()
    assert s["q71"].deserved.tolist() == r(CM, "4", "3Gi").tolist()  # raised to its guarantee
    # min(parent 6c/4Gi - both guarantees 8c/6Gi (floored at 0) + own 4c/3Gi, capability 6c/4Gi)
    assert p._attrs["q71"].real_capability.tolist()[:2] == [4000, 3 * 2**30]


def test_h_case8_scalar_deserved_passes():
    q8 = h("q8", "root", rlist(cpu="4", mem="4Gi", gpu=8))
    q81, q82 = (h(n, "q8", rlist(cpu="2", mem="2Gi", gpu=4)) for n in ("q81", "q82"))
    p = run(
        GPU,
        r(GPU, "8", "8Gi", gpu=8),
        [ROOT, q8, q81, q82],
        {"q81": usage(GPU, pending=r(GPU, "2", "2Gi", gpu=1))},
        hierarchy=True,
    )
    assert p.allocatable("q81", r(GPU, "2", "2Gi", gpu=1))


def test_h_case9_zero_scalars_in_deserved_pass():
    names = GPU + ("hugepages-1Gi",)
    q9 = h("q9", "root", rlist(cpu="2", mem="2Gi", gpu=8, extra={"hugepages-1Gi": 0}))
    q91 = h("q91", "q9", rlist(cpu="2", mem="2Gi", gpu=4, extra={"hugepages-1Gi": 0}))
    p = run(
        names,
        vec(names, cpu="8", mem="8Gi", gpu=8),
        [ROOT, q9, q91],
        {"q91": usage(names, pending=vec(names, cpu="2", mem="2Gi", gpu=1))},
        hierarchy=True,
    )
    assert p.allocatable("q91", vec(names, cpu="2", mem="2Gi", gpu=1))


def test_h_case10_root_capability_above_cluster_total():
    root = h("root", "", capability=rlist(cpu="16", mem="16Gi"))
    q10 = h("q10", "root", capability=rlist(cpu="10", mem="4Gi"))
    p = run(CM, N1, [root, q10], {}, hierarchy=True)
    assert p._attrs["root"].real_capability.tolist()[:2] == [16000, 16 * 2**30]
    assert p._attrs["q10"].real_capability.tolist()[:2] == [10000, 4 * 2**30]


def test_h_case11_unset_scalar_capability_inherited():
    q1 = h("case11_queue1", "root")
    leaves = [
        h(n, "case11_queue1", capability=rlist(cpu="4", mem="4Gi", gpu=4)) for n in ("case11_queue11", "case11_queue12")
    ]
    task = r(GPU, "1", "1Gi", gpu=4)
    p = run(
        GPU,
        r(GPU, "8", "8Gi", gpu=8),
        [ROOT, q1, *leaves],
        {"case11_queue11": usage(GPU, pending=task), "case11_queue12": usage(GPU, pending=task)},
        hierarchy=True,
    )
    for leaf in ("case11_queue11", "case11_queue12"):
        assert p.allocatable(leaf, task)
        p.on_allocate(leaf, task)


def test_h_case12_reclaim_on_a_single_scalar_dimension():
    names = CM + ("nvidia.com/a100", "rdma/hca")
    root2 = h("root", "", rlist(cpu="16", mem="16Gi", extra={"nvidia.com/a100": 4, "rdma": 1000}))
    q1 = h("case12_queue1", "root", {"nvidia.com/a100": "2"})
    q11 = h("case12_queue11", "case12_queue1", {"nvidia.com/a100": "2"})
    q12 = h("case12_queue12", "case12_queue1")
    task = vec(names, {"nvidia.com/a100": 2, "rdma/hca": 1}, cpu="1", mem="1Gi")
    p = run(
        names,
        vec(names, {"nvidia.com/a100": 5, "rdma/hca": 1001}, cpu="16", mem="16Gi"),
        [root2, q1, q11, q12],
        {"case12_queue11": usage(names, pending=task), "case12_queue12": usage(names, allocated=task + task)},
        hierarchy=True,
    )
    assert p.preemptive("case12_queue11", task)
    assert p.reclaimable(Claim("case12_queue11", task), [Claim("case12_queue12", task)]) == [0]  # evict p17


# -- Test_updateQueueAttrShare ---------------------------------------------------------------------------------
def cmv(cpu, mem):
    return r(CM, cpu, mem)


EMPTY = np.zeros(4, dtype=np.int64)


@pytest.mark.parametrize(
    "deserved, allocated, want",
    [
        pytest.param(EMPTY, cmv("1", "1Gi"), 1.0, id="best-effort queue with allocated resources"),
        pytest.param(EMPTY, EMPTY, 1.0, id="best-effort queue completely idle"),
        pytest.param(cmv("2", "2Gi"), EMPTY, 0.0, id="queue with deserved but no allocated"),
        pytest.param(cmv("2", "2Gi"), cmv("1", "1Gi"), 0.5, id="allocated < deserved (CPU dimension)"),
        pytest.param(cmv("2", "2Gi"), cmv("2", "2Gi"), 1.0, id="allocated = deserved"),
        pytest.param(cmv("2", "2Gi"), cmv("3", "2Gi"), 1.5, id="allocated > deserved (CPU dimension)"),
        pytest.param(cmv("2", "4Gi"), cmv("1", "3Gi"), 0.75, id="memory is dominant resource"),
        pytest.param(cmv("2", "4Gi"), cmv("1.5", "2Gi"), 0.75, id="CPU is dominant resource"),
        pytest.param(cmv("2", "2Gi"), cmv("3", "3Gi"), 1.5, id="allocated exceeds on both dimensions"),
        pytest.param(cmv("0", "0"), cmv("1", "1Gi"), 1.0, id="deserved but zero values"),
        pytest.param(EMPTY, cmv("1", "0"), 1.0, id="best-effort queue with only CPU allocated"),
        pytest.param(EMPTY, cmv("0", "1Gi"), 1.0, id="best-effort queue with only memory allocated"),
    ],
)
def test_update_queue_attr_share(deserved, allocated, want):
    counted = np.array([True, True, True, False])
    assert capacity_share(allocated, deserved, counted) == pytest.approx(want)


def test_best_effort_queue_orders_after_a_queue_with_deserved_at_equal_share():
    p = run(
        CM,
        r(CM, "8", "8Gi"),
        [volcano("be"), volcano("d", deserved=rlist(cpu="1"))],
        {"be": usage(CM, pending=r(CM, "1")), "d": usage(CM, allocated=r(CM, "1"), pending=r(CM, "1"))},
    )
    assert p.status()["be"].share == p.status()["d"].share == 1.0
    assert p.sorted_queues(["be", "d"]) == ["d", "be"]


def test_flat_real_capability_keeps_the_others_guarantees():
    p = run(
        CM,
        r(CM, "10"),
        [volcano("a", guarantee=rlist(cpu="4")), volcano("b")],
        {"a": usage(CM), "b": usage(CM, pending=r(CM, "10"))},
    )
    assert p._attrs["b"].real_capability[0] == 6000 and p._attrs["a"].real_capability[0] == 10000
    assert p.status()["a"].deserved[0] == 4000  # raised to its guarantee
    assert not p.allocatable("b", r(CM, "7"))


def test_reclaim_respects_the_victims_guarantee():
    p = run(
        CM,
        r(CM, "10"),
        [volcano("a", guarantee=rlist(cpu="4")), volcano("b", deserved=rlist(cpu="6"))],
        {"a": usage(CM, allocated=r(CM, "6")), "b": usage(CM, pending=r(CM, "4"))},
    )
    victims = p.reclaimable(
        Claim("b", r(CM, "2")), [Claim("a", r(CM, "2")), Claim("a", r(CM, "2")), Claim("a", r(CM, "2"))]
    )
    assert victims == [0]  # 6 - 2 = 4 keeps the guarantee; a second eviction would not


def test_hierarchy_option_and_unknown_argument():
    assert "victim_queue_order" in CapacityPlugin(hierarchy=True).hooks
    assert "victim_queue_order" not in CapacityPlugin().hooks and "overused" not in CapacityPlugin().hooks
    with pytest.raises(ProfileError, match=r"capacity: arguments.ancestorReclaimLevel: unknown argument"):
        CapacityPlugin({"ancestorReclaimLevel": 1})


def test_root_without_capability_is_unlimited():
    p = run(CM, N1, [h("a", "root")], {"a": usage(CM)}, hierarchy=True)
    assert (p._attrs["root"].real_capability == UNLIMITED).all()
    assert p._attrs["a"].ancestors == ["root"] and p._attrs["default"].ancestors == ["root"]
