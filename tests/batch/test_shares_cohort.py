"""Kueue-style cohorts: the ClusterQueue examples of Kueue's documentation (borrowing, borrowingLimit,
lendingLimit, reclaimWithinCohort) and Kueue's preemption rules at plugin level."""

from __future__ import annotations

import pytest

from vcore.batch.shares import PERMIT, REJECT, Claim, CohortPlugin
from vcore.errors import ProfileError

from .share_builders import kueue, opened, tree, usage, vec

NAMES = ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu")
GI = 2**30


def cq(
    name,
    cohort="team-ab",
    *,
    cpu,
    memory=None,
    borrowing=None,
    lending=None,
    covered=None,
    preemption=None,
    stop=None,
    gpu=None,
    pods=None,
):
    resources = [{"name": "cpu", "nominalQuota": cpu}]
    if borrowing is not None:
        resources[0]["borrowingLimit"] = borrowing
    if lending is not None:
        resources[0]["lendingLimit"] = lending
    for r, q in (("memory", memory), ("nvidia.com/gpu", gpu), ("pods", pods)):
        if q is not None:
            resources.append({"name": r, "nominalQuota": q})
    covered = covered or [r["name"] for r in resources]
    return kueue(
        name,
        cohort=cohort,
        covered=covered,
        preemption=preemption,
        stop=stop,
        flavors=[{"name": "default-flavor", "resources": resources}],
    )


def session(*queues, usages=None, total=None):
    t = tree(*queues, default_queue=False)
    return opened(CohortPlugin(), t, total if total is not None else vec(NAMES, cpu="1000", mem="4000Gi"), usages or {})


def cpu(n):
    return vec(NAMES, cpu=str(n))


# -- Kueue docs: "Borrowing example", "BorrowingLimit", "LendingLimit" ------------------------------------------
def test_borrowing_example_team_a_uses_team_b_idle_quota():
    p = session(cq("team-a-cq", cpu=9, memory="36Gi"), cq("team-b-cq", cpu=12, memory="48Gi"))
    assert p.available("team-a-cq")[:2].tolist() == [21000, 84 * GI]  # 12+9 CPUs, 48+36 Gi
    assert p.allocatable("team-a-cq", vec(NAMES, cpu="21", mem="84Gi"))
    assert not p.allocatable("team-a-cq", vec(NAMES, cpu="22"))


@pytest.mark.parametrize(
    "queue, expected_cpu",
    [
        pytest.param("team-a-cq", 10000, id="team-a borrows at most its borrowingLimit: 9+1=10 CPUs"),
        pytest.param("team-b-cq", 21000, id="team-b has no borrowingLimit: 12+9 CPUs"),
    ],
)
def test_borrowing_limit_example(queue, expected_cpu):
    p = session(
        cq("team-a-cq", cpu=9, borrowing=1, covered=["cpu", "memory"], memory=0),
        cq("team-b-cq", cpu=12, covered=["cpu", "memory"], memory=0),
    )
    assert p.available(queue)[0] == expected_cpu


@pytest.mark.parametrize(
    "b_usage, a_cpu, b_cpu",
    [
        pytest.param(0, 10000, 21000, id="team-b idle: team-a gets 9+1 (team-b lends 1), team-b can use 12+9"),
        pytest.param(11, 10000, 10000, id="team-b uses 11 of its 12: team-a still gets 9+1"),
        pytest.param(12, 9000, 9000, id="team-b uses all 12: nothing left to lend"),
    ],
)
def test_lending_limit_example(b_usage, a_cpu, b_cpu):
    p = session(
        cq("team-a-cq", cpu=9, covered=["cpu"]),
        cq("team-b-cq", cpu=12, lending=1, covered=["cpu"]),
        usages={"team-b-cq": usage(NAMES, allocated=cpu(b_usage))},
    )
    assert p.available("team-a-cq")[0] == a_cpu
    assert p.available("team-b-cq")[0] == b_cpu


def test_a_queue_without_cohort_has_its_nominal_quota():
    p = session(
        cq("solo", cohort=None, cpu=4, covered=["cpu"]),
        cq("other", cpu=100, covered=["cpu"]),
        usages={"solo": usage(NAMES, allocated=cpu(1))},
    )
    assert p.available("solo")[0] == 3000
    assert not p.allocatable("solo", cpu(4))


def test_uncovered_resources_are_not_admissible_but_pods_count_only_when_covered():
    p = session(cq("a", cpu=4, covered=["cpu"]), cq("b", cpu=4, pods=2))
    assert not p.allocatable("a", vec(NAMES, cpu="1", gpu=1))  # Kueue: resource not covered by the ClusterQueue
    assert p.allocatable("a", vec(NAMES, cpu="1", pods=1))  # a does not cover pods: not counted
    assert p.allocatable("b", vec(NAMES, cpu="1", pods=2))  # b covers pods: at most its 2 (nobody lends pods)
    assert not p.allocatable("b", vec(NAMES, cpu="1", pods=3))


def test_enqueue_counts_reserved_quota_and_closed_queues():
    p = session(
        cq("a", cohort=None, cpu=4, covered=["cpu"]),
        cq("held", cohort=None, cpu=4, covered=["cpu"], stop="Hold"),
        usages={"a": usage(NAMES, allocated=cpu(1), inqueue=cpu(2))},
    )
    assert p.job_enqueueable("a", cpu(1)) == PERMIT
    assert p.job_enqueueable("a", cpu(2)) == REJECT  # 1 allocated + 2 reserved by admitted jobs + 2 > 4
    p.on_job_enqueued("a", cpu(1))
    assert p.job_enqueueable("a", cpu(1)) == REJECT
    assert p.job_enqueueable("held", cpu(1)) == REJECT
    assert p.job_enqueueable("a", None) == PERMIT


# -- reclaimWithinCohort ---------------------------------------------------------------------------------------
def _reclaim(policy="Any", b_usage=0, borrow=None, threshold=None):
    preemption = {"reclaimWithinCohort": policy}
    if borrow:
        preemption["borrowWithinCohort"] = {
            "policy": borrow,
            **({"maxPriorityThreshold": threshold} if threshold is not None else {}),
        }
    return session(
        cq("team-a-cq", cpu=9, covered=["cpu"]),
        cq("team-b-cq", cpu=12, covered=["cpu"], preemption=preemption),
        usages={"team-a-cq": usage(NAMES, allocated=cpu(18)), "team-b-cq": usage(NAMES, allocated=cpu(b_usage))},
    )


A_WORKLOADS = [
    Claim("team-a-cq", cpu(6), priority=0),
    Claim("team-a-cq", cpu(6), priority=0),
    Claim("team-a-cq", cpu(6), priority=0),
]


def test_reclaim_takes_back_borrowed_quota_minimally():
    # team-a borrows 9 of team-b's 12; team-b needs 10 and fits its nominal quota: evict until it fits
    p = _reclaim()
    assert p.preemptive("team-b-cq", cpu(10))
    assert p.reclaimable(Claim("team-b-cq", cpu(10)), A_WORKLOADS) == [0, 1]
    assert p.reclaimable(Claim("team-b-cq", cpu(4)), A_WORKLOADS) == [0]  # 3 free, one 6-cpu workload is enough


def test_reclaim_only_from_queues_that_borrow():
    p = _reclaim()
    # after two evictions team-a holds 6 < 9: it no longer borrows, so its last workload is never a victim
    assert p.reclaimable(Claim("team-b-cq", cpu(12)), A_WORKLOADS) == [0, 1]
    # 12 + 3 free would be needed from team-a's third workload: not possible -> nothing is evicted
    assert p.reclaimable(Claim("team-b-cq", vec(NAMES, cpu="12", mem="1")), A_WORKLOADS) == []


@pytest.mark.parametrize(
    "policy, reclaimer_priority, victims",
    [
        pytest.param("Never", 10, [], id="Never: do not preempt workloads in the cohort"),
        pytest.param("LowerPriority", 0, [], id="LowerPriority: equal priority is not preempted"),
        pytest.param("LowerPriority", 1, [0, 1], id="LowerPriority: lower priority is preempted"),
        pytest.param("Any", 0, [0, 1], id="Any: irrespective of priority"),
    ],
)
def test_reclaim_within_cohort_policies(policy, reclaimer_priority, victims):
    p = _reclaim(policy)
    assert p.reclaimable(Claim("team-b-cq", cpu(10), priority=reclaimer_priority), A_WORKLOADS) == victims


def test_reclaim_needs_the_workload_to_fit_within_nominal_quota():
    p = _reclaim(b_usage=3)  # team-b uses 3 of its 12; 10 more would need borrowing
    assert not p.preemptive("team-b-cq", cpu(10))
    assert p.reclaimable(Claim("team-b-cq", cpu(10)), A_WORKLOADS) == []
    assert p.preemptive("team-b-cq", cpu(9))


def test_lowest_priority_candidates_go_first():
    p = _reclaim()
    candidates = [
        Claim("team-a-cq", cpu(6), priority=5),
        Claim("team-a-cq", cpu(6), priority=1),
        Claim("team-a-cq", cpu(6), priority=3),
    ]
    assert p.reclaimable(Claim("team-b-cq", cpu(4)), candidates) == [1]


@pytest.mark.parametrize(
    "borrow, victims",
    [
        pytest.param(
            {"policy": "LowerPriority", "maxPriorityThreshold": 2},
            [1],
            id="borrowWithinCohort: preempt below min(priority, maxPriorityThreshold + 1)",
        ),
        pytest.param(None, [], id="no borrowWithinCohort: a queue at its nominal quota does not reclaim"),
    ],
)
def test_borrow_within_cohort(borrow, victims):
    # a (9) borrows 3 beyond its quota, b (12) is at its quota, c (3) is idle: the cohort's 24 CPUs are in use.
    # b's workload of priority 10 needs 4 more, which means borrowing.
    preemption = {"reclaimWithinCohort": "Any", **({"borrowWithinCohort": borrow} if borrow else {})}
    p = session(
        cq("a", cpu=9, covered=["cpu"]),
        cq("b", cpu=12, covered=["cpu"], preemption=preemption),
        cq("c", cpu=3, covered=["cpu"]),
        usages={"a": usage(NAMES, allocated=cpu(12)), "b": usage(NAMES, allocated=cpu(12))},
    )
    candidates = [Claim("a", cpu(6), priority=5), Claim("a", cpu(6), priority=2)]
    assert p.preemptive("b", cpu(4)) is bool(borrow)
    assert p.reclaimable(Claim("b", cpu(4), priority=10), candidates) == victims


def test_queue_order_non_borrowing_first_then_dominant_share():
    p = session(
        cq("a", cpu=9, covered=["cpu"]),
        cq("b", cpu=12, covered=["cpu"]),
        cq("c", cpu=3, covered=["cpu"]),
        usages={
            "a": usage(NAMES, allocated=cpu(12)),
            "b": usage(NAMES, allocated=cpu(1)),
            "c": usage(NAMES, allocated=cpu(5)),
        },
    )
    # a borrows 3 of 24 lendable (125/1000), c borrows 2 (83/1000), b does not borrow
    assert p.sorted_queues(["a", "b", "c"]) == ["b", "c", "a"]
    s = p.status()
    assert s["a"].deserved[0] == 9000 and s["a"].share == pytest.approx(12 / 9)


def test_no_arguments():
    with pytest.raises(ProfileError, match=r"cohort: arguments.fairSharing: unknown argument"):
        CohortPlugin({"fairSharing": True})
