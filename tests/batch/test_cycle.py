"""Scheduling cycles as scenario tables, in the style of Volcano's plugin tests: cluster, queues, PodGroups and pods
in; bindings, evictions, phases and messages out."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest

import vcore

from .builders import bound_by_group, build, flatten, gang, node, pod, podgroup, priority_class, queue

PLUGINS_T1 = [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]


def cycle(
    actions: str, *, shares: str | dict | None = "proportion", drf: bool = True, extra: list | None = None
) -> dict:
    share = [] if shares is None else [shares if isinstance(shares, dict) else {"name": shares}]
    t2 = ([{"name": "drf"}] if drf else []) + [{"name": "predicates"}, *share, {"name": "nodeorder"}] + (extra or [])
    return {"actions": actions, "tiers": [{"plugins": PLUGINS_T1}, {"plugins": t2}]}


@dataclass
class Case:
    objects: list
    bound: dict[str, int]  # group -> pods bound after the cycle(s)
    phases: dict[str, str] = field(default_factory=dict)  # podgroup name -> phase
    cycle: dict | None = None
    cycles: int = 1
    message: dict[str, str] = field(default_factory=dict)  # podgroup name -> substring of its message
    evicted: set[str] | None = None


CASES = {
    "gang-fits": Case(flatten(node("n1", "2"), node("n2", "2"), gang("job", 4)), {"job": 4}, {"job": "Running"}),
    "gang-too-big-holds-nothing": Case(
        flatten(node("n1", "2"), node("n2", "2"), gang("job", 5)),
        {},
        {"job": "Inqueue"},
        message={
            "job": "5/5 tasks in gang unschedulable: 0/2 nodes are available for the whole gang: the "
            "cluster's free resources cannot hold its minimum (cpu 5000 > 4000 free)."
        },
    ),
    "gang-first-task-fits-nowhere": Case(  # kube-scheduler's words when no node takes even one task
        flatten(node("n1", "2"), node("n2", "2"), gang("job", 2, cpu="3")),
        {},
        {"job": "Inqueue"},
        message={"job": "2/2 tasks in gang unschedulable: 0/2 nodes are available: 2 Insufficient cpu."},
    ),
    "gang-partial-minimum": Case(
        flatten(node("n1", "2"), node("n2", "2"), gang("job", 6, min_member=3)), {"job": 4}, {"job": "Running"}
    ),
    "partial-gang-fit-error-kube-words": Case(  # fits the free total, not the nodes: the 4th task has no node
        flatten(node("n1", "2"), node("n2", "2"), node("n3", "2"), gang("job", 4, cpu="1500m")),
        {},
        {"job": "Inqueue"},
        message={"job": "1/4 tasks in gang unschedulable: 0/3 nodes are available: 3 Insufficient cpu."},
    ),
    "deadlock-pair-with-minresources": Case(
        flatten(
            [node(f"n{i:03d}", "1", "2Gi") for i in range(100)],
            gang("a", 100, min_resources={"cpu": "100"}, created="2026-01-01T00:00:00Z"),
            gang("b", 100, min_resources={"cpu": "100"}, created="2026-01-01T00:00:01Z"),
        ),
        {"a": 100},
        {"a": "Running", "b": "Pending"},
    ),
    "deadlock-pair-without-minresources": Case(
        flatten(
            [node(f"n{i:03d}", "1", "2Gi") for i in range(100)],
            gang("a", 100, created="2026-01-01T00:00:00Z"),
            gang("b", 100, created="2026-01-01T00:00:01Z"),
        ),
        {"a": 100},
        {"a": "Running", "b": "Inqueue"},
    ),
    "min-task-member-blocks-gang": Case(
        flatten(
            node("n1", "4"),
            node("n2", "4"),
            podgroup("job", 3, min_task={"ps": 1, "worker": 2}),
            pod("job-ps", "job", "5", role="ps"),
            [pod(f"job-w{i}", "job", "1", role="worker") for i in range(3)],
        ),
        {},
        {"job": "Inqueue"},
        message={"job": "Insufficient cpu"},
    ),
    "min-task-member-met": Case(
        flatten(
            node("n1", "4"),
            podgroup("job", 3, min_task={"ps": 1, "worker": 2}),
            pod("job-ps", "job", "1", role="ps"),
            [pod(f"job-w{i}", "job", "1", role="worker") for i in range(5)],
        ),
        {"job": 4},
        {"job": "Running"},
    ),
    # Volcano's enqueue admits on minResources whatever the pods (they may not exist yet); the gang stays unplaced.
    "min-member-above-pods-reported": Case(
        flatten(node("n1", "4"), gang("job", 2, min_member=3)),
        {},
        {"job": "Inqueue"},
        message={"job": "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"},
    ),
    "role-minimum-above-pods-reported": Case(
        flatten(
            node("n1", "4"),
            podgroup("job", 2, min_task={"ps": 2}),
            pod("job-ps", "job", role="ps"),
            pod("job-w", "job", role="worker"),
        ),
        {},
        {"job": "Inqueue"},
        message={"job": "Not enough valid pods of each task"},
    ),
    # minMember below the roles' sum: Volcano checks no role minimum (JobInfo.CheckTaskValid and its siblings).
    "role-minimums-above-min-member-do-not-bind": Case(
        flatten(node("n1", "4"), podgroup("job", 1, min_task={"ps": 2}), pod("job-ps", "job", role="ps")),
        {"job": 1},
        {"job": "Running"},
    ),
    "pod-without-podgroup-pods-yet-is-admitted": Case(
        flatten(node("n1", "4"), podgroup("later", 2, min_resources={"cpu": "2"})), {}, {"later": "Inqueue"}
    ),
    "priority-wins-the-room": Case(
        flatten(
            node("n1", "3"),
            priority_class("hi", 1000),
            priority_class("lo", 10),
            gang("low", 3, priority_class="lo", created="2026-01-01T00:00:00Z"),
            gang("high", 3, priority_class="hi", created="2026-01-01T00:00:01Z"),
        ),
        {"high": 3},
        {"high": "Running", "low": "Inqueue"},
    ),
    "creation-order-breaks-ties": Case(
        flatten(
            node("n1", "3"),
            gang("second", 3, created="2026-01-01T00:00:01Z"),
            gang("first", 3, created="2026-01-01T00:00:00Z"),
        ),
        {"first": 3},
        {"first": "Running"},
    ),
    "drf-serves-the-job-with-less": Case(
        flatten(
            node("n1", "4"),
            podgroup("big", 1, created="2026-01-01T00:00:00Z"),
            pod("big-run", "big", "2", node="n1"),
            pod("big-1", "big", "2"),
            gang("small", 1, cpu="2", created="2026-01-01T00:00:01Z"),
        ),
        {"big": 1, "small": 1},
        {"small": "Running"},
    ),
    "enqueue-overcommit": Case(
        flatten(
            node("n1", "10"),
            gang("a", 1, cpu="1", min_resources={"cpu": "9"}, created="2026-01-01T00:00:00Z"),
            gang("b", 1, cpu="1", min_resources={"cpu": "4"}, created="2026-01-01T00:00:01Z"),
            gang("c", 1, cpu="1", min_resources={"cpu": "3"}, created="2026-01-01T00:00:02Z"),
        ),
        {"a": 1, "c": 1},
        {"a": "Running", "b": "Pending", "c": "Running"},
        message={"b": "overcommit-factor 1.2"},
        cycle=cycle("enqueue, allocate", shares=None, extra=[{"name": "overcommit"}]),
    ),
    "proportion-counts-admitted-minresources": Case(  # Volcano's proportion: inqueue minResources use the queue
        flatten(
            node("n1", "10"),
            gang("a", 1, cpu="1", min_resources={"cpu": "9"}, created="2026-01-01T00:00:00Z"),
            gang("c", 1, cpu="1", min_resources={"cpu": "3"}, created="2026-01-01T00:00:02Z"),
        ),
        {"a": 1},
        {"a": "Running", "c": "Pending"},
        message={"c": "queue default cannot admit"},
    ),
    "queue-capability": Case(
        flatten(node("n1", "8"), queue("capped", capability={"cpu": "3"}), gang("job", 4, queue="capped")),
        {},
        {"job": "Inqueue"},
    ),
    "queue-capability-elastic": Case(
        flatten(
            node("n1", "8"), queue("capped", capability={"cpu": "3"}), gang("job", 5, min_member=2, queue="capped")
        ),
        {"job": 3},
        {"job": "Running"},
    ),
    "proportion-weights": Case(
        flatten(
            node("n1", "8"),
            queue("q1", 1),
            queue("q3", 3),
            [gang(f"a{i}", 1, queue="q1", created=f"2026-01-01T00:00:0{i}Z") for i in range(8)],
            [gang(f"b{i}", 1, queue="q3", created=f"2026-01-01T00:00:0{i}Z") for i in range(8)],
        ),
        {**{f"a{i}": 1 for i in range(2)}, **{f"b{i}": 1 for i in range(6)}},
    ),
    "proportion-guarantee-reserves": Case(  # q1's guarantee (6 of 8 cpu) outweighs q3's weight 3
        flatten(
            node("n1", "8", "64Gi"),
            queue("q1", 1, guarantee={"cpu": "6"}),
            queue("q3", 3),
            [gang(f"a{i}", 1, queue="q1", created=f"2026-01-01T00:00:1{i}Z") for i in range(8)],
            [gang(f"b{i}", 1, queue="q3", created=f"2026-01-01T00:00:0{i}Z") for i in range(8)],
        ),
        {**{f"a{i}": 1 for i in range(6)}, **{f"b{i}": 1 for i in range(2)}},
    ),
    "closed-queue-admits-nothing": Case(
        flatten(node("n1", "8"), queue("shut", state="Closed"), gang("job", 1, queue="shut")),
        {},
        {"job": "Pending"},
        message={"job": "queue shut is Closed"},
    ),
    "unknown-queue": Case(
        flatten(node("n1", "8"), gang("job", 1, queue="nowhere")),
        {},
        {"job": "Pending"},
        message={"job": "queue nowhere not found"},
    ),
    "pods-without-group-are-gangs-of-one": Case(
        flatten(node("n1", "2"), [pod(f"solo{i}-0") for i in range(3)]), {"solo0": 1, "solo1": 1}
    ),
    "backfill-places-best-effort": Case(
        flatten(
            node("n1", "1"),
            gang("busy", 1, cpu="1"),
            podgroup("be", 2),
            pod("be-0", "be", None, None),
            pod("be-1", "be", None, None),
        ),
        {"busy": 1, "be": 2},
        {"be": "Running"},
        cycle=cycle("enqueue, allocate, backfill"),
    ),
    "best-effort-waits-without-backfill": Case(
        flatten(node("n1", "1"), podgroup("be", 1), pod("be-0", "be", None, None)),
        {},
        {"be": "Inqueue"},
        cycle=cycle("enqueue, allocate"),
    ),
    "allocate-without-enqueue-takes-pending-jobs": Case(
        flatten(node("n1", "2"), gang("job", 2, min_resources={"cpu": "99"})),
        {"job": 2},
        {"job": "Running"},
        cycle=cycle("allocate"),
    ),
    "succeeded-pods-count-toward-the-gang": Case(
        flatten(
            node("n1", "1"),
            podgroup("job", 3),
            pod("job-0", "job", phase="Succeeded"),
            pod("job-1", "job", phase="Succeeded"),
            pod("job-2", "job"),
        ),
        {"job": 1},
        {"job": "Running"},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cycle_table(name):
    case = CASES[name]
    cluster = build(*case.objects)
    scheduler = vcore.Scheduler(cluster, cycle=case.cycle)
    for _ in range(case.cycles):
        result = scheduler.run_cycle()
    assert bound_by_group(cluster) == case.bound
    for group, phase in case.phases.items():
        assert result.podgroups[f"ns/{group}"].phase == phase, result.podgroups[f"ns/{group}"]
    for group, text in case.message.items():
        assert text in result.podgroups[f"ns/{group}"].message, result.podgroups[f"ns/{group}"].message
    for b in result.bindings:
        assert cluster.node_of(b.pod) == b.node


def test_deadlock_pair_ends_in_the_first_cycle_with_one_running():
    case = CASES["deadlock-pair-with-minresources"]
    cluster = build(*case.objects)
    result = vcore.Scheduler(cluster).run_cycle()
    a, b = result.podgroups["ns/a"], result.podgroups["ns/b"]
    assert (a.phase, b.phase) == ("Running", "Pending")
    assert len(result.bindings) == 100 and all(p.pod.startswith("ns/a-") for p in result.bindings)
    assert b.running == 0
    assert any(c["type"] == "Unschedulable" and c["reason"] == "NotEnoughResources" for c in b.conditions)
    assert any(c["type"] == "Scheduled" for c in a.conditions)


def test_preempt_evicts_lowest_priority_and_binds_after_release():
    # "lo" and "mid" each run a pod on each node; "mid" is at its minimum (gang keeps it), "lo" above (one may go).
    cluster = build(
        node("n1", "4"),
        node("n2", "4"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        priority_class("mid", 100),
        podgroup("lo", 1, priority_class="lo"),
        podgroup("mid", 2, priority_class="mid"),
        pod("lo-0", "lo", "2", priority_class="lo", node="n1"),
        pod("lo-1", "lo", "2", priority_class="lo", node="n2"),
        pod("mid-0", "mid", "2", priority_class="mid", node="n1"),
        pod("mid-1", "mid", "2", priority_class="mid", node="n2"),
        *gang("high", 1, cpu="2", priority_class="hi"),
    )
    scheduler = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt"))
    result = scheduler.run_cycle()
    assert [(e.victim, e.node, e.reason, e.preemptor) for e in result.evictions] == [
        ("ns/lo-0", "n1", "preempt", "ns/high-0")
    ]
    assert result.nominated == {"ns/high-0": "n1"}
    assert cluster.node_of("ns/lo-0") == "n1"  # Releasing: still holds its resources
    again = scheduler.run_cycle()  # the victim has not gone yet: nothing more is evicted, nothing binds
    assert not again.evictions and not again.bindings
    cluster.remove_pod("ns/lo-0")
    done = scheduler.run_cycle()
    assert [(b.pod, b.node) for b in done.bindings] == [("ns/high-0", "n1")]
    assert done.podgroups["ns/high"].phase == "Running"


def test_preempt_never_takes_a_pod_that_keeps_its_gang_at_its_minimum():
    # A pod without a PodGroup is a gang of one (Volcano gives it a PodGroup of minMember 1): gang never lets it go.
    cluster = build(
        node("n1", "2"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        pod("lo-0", None, "2", priority_class="lo", node="n1"),
        *gang("high", 1, cpu="2", priority_class="hi"),
    )
    assert vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle().evictions == []


def test_preempt_keeps_other_gangs_at_their_minimum():
    # The running gang holds 4 pods with minMember 3: one may go, not two.
    cluster = build(
        node("n1", "4"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        podgroup("run", 3, priority_class="lo"),
        *[pod(f"run-{i}", "run", "1", node="n1", priority_class="lo") for i in range(4)],
        *gang("one", 1, cpu="1", priority_class="hi", created="2026-01-01T00:00:00Z"),
        *gang("two", 1, cpu="2", priority_class="hi", created="2026-01-01T00:00:01Z"),
    )
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle()
    # "one" takes the spare pod; "two" would break the gang below 3 (Volcano's gang plugin never lets that happen).
    assert [e.preemptor for e in result.evictions] == ["ns/one-0"]
    assert result.evictions[0].victim.startswith("ns/run-")
    assert "ns/two-0" not in result.nominated


def test_preempt_never_takes_a_pod_that_keeps_its_role_at_its_minimum():
    # "run" (minMember 1, minTaskMember r1: 1) may lose one pod by its minMember, but its r0 pod is not preemptable
    # and its r1 pod keeps r1 at its minimum: no victim.
    keep = pod("run-r0", "run", "1", node="n1", role="r0", priority_class="lo")
    keep["metadata"]["annotations"]["volcano.sh/preemptable"] = "false"
    cluster = build(
        node("n1", "2"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        podgroup("run", 1, min_task={"r1": 1}, priority_class="lo"),
        keep,
        pod("run-r1", "run", "1", node="n1", role="r1", priority_class="lo"),
        *gang("high", 1, cpu="1", priority_class="hi"),
    )
    assert vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle().evictions == []


def test_preempt_takes_from_other_roles_when_one_role_is_already_short():
    # "run" lost its only r1 pod (deleted, no replacement yet): r1 is below its minimum before any eviction. Its r0
    # pods may still go down to minMember: the eviction takes nothing from the short role (found by the cycle's
    # property test, whose check had blamed the eviction for the shortfall).
    cluster = build(
        node("n1", "2"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        podgroup("run", 1, min_task={"r1": 1}, priority_class="lo"),
        *[pod(f"run-r0-{i}", "run", "1", node="n1", role="r0", priority_class="lo") for i in range(2)],
        *gang("high", 1, cpu="1", priority_class="hi"),
    )
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle()
    assert [(e.victim.startswith("ns/run-r0-"), e.preemptor) for e in result.evictions] == [(True, "ns/high-0")]


def test_preempt_needs_lower_priority_in_the_same_queue():
    cluster = build(
        node("n1", "2"),
        queue("other"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        pod("lo-0", None, "2", priority_class="lo", node="n1", queue="other"),
        *gang("high", 1, cpu="2", priority_class="hi"),
    )
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle()
    assert result.evictions == []


def test_preemption_policy_never():
    # The pod's own spec.preemptionPolicy decides (the API server's Priority admission copies its class's there).
    def evictions(policy: str | None) -> list:
        high = gang("high", 1, cpu="2", priority_class="hi")
        if policy is not None:
            high[1]["spec"]["preemptionPolicy"] = policy
        cluster = build(
            node("n1", "2"),
            priority_class("hi", 1000, never=True),
            priority_class("lo", 10),
            podgroup("lo", 0, priority_class="lo"),
            pod("lo-0", "lo", "2", priority_class="lo", node="n1"),
            *high,
        )
        return vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle().evictions

    assert evictions("Never") == []
    assert [e.victim for e in evictions(None)] == ["ns/lo-0"]


def test_conformance_never_evicts_critical_pods():
    cluster = build(
        node("n1", "2"),
        priority_class("hi", 1000),
        podgroup("sys", 0),
        pod("sys-0", "sys", "2", priority_class="system-cluster-critical", node="n1"),
        *gang("high", 1, cpu="2", priority_class="hi"),
    )
    assert vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle().evictions == []


def test_reclaim_takes_back_from_a_queue_above_its_share():
    # q1 took the whole cluster while q2 was empty; q2 deserves half of it now.
    objects = flatten(
        node("n1", "4"),
        queue("q1"),
        queue("q2"),
        podgroup("q1job", 1, queue="q1"),
        [pod(f"q1job{i}-0", "q1job", "1", node="n1", phase="Running") for i in range(4)],
        gang("want", 2, cpu="1", queue="q2"),
    )
    cluster = build(*objects)
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, reclaim")).run_cycle()
    assert len(result.evictions) == 2 and all(e.reason == "reclaim" for e in result.evictions)
    assert all(e.victim.startswith("ns/q1job") for e in result.evictions)


def test_reclaim_spares_queues_that_are_not_reclaimable():
    objects = flatten(
        node("n1", "4"),
        queue("q1", reclaimable=False),
        queue("q2"),
        podgroup("q1job", 1, queue="q1"),
        [pod(f"q1job{i}-0", "q1job", "1", node="n1", phase="Running") for i in range(4)],
        gang("want", 2, cpu="1", queue="q2"),
    )
    cluster = build(*objects)
    assert vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, reclaim")).run_cycle().evictions == []


def test_queue_status_reports_allocated_deserved_and_share():
    cluster = build(
        node("n1", "8", "8Gi"), queue("q1", 1), queue("q3", 3), *gang("a", 4, queue="q1"), *gang("b", 4, queue="q3")
    )
    result = vcore.Scheduler(cluster).run_cycle()
    q1, q3 = result.queues["q1"], result.queues["q3"]
    assert q1.allocated == {"cpu": 4000, "memory": 4 * 2**30} and q3.allocated == q1.allocated
    assert q1.deserved["cpu"] == 4000 and q3.deserved["cpu"] == 4000  # each deserves what it asks
    assert q1.share == pytest.approx(1.0) and q1.running == 1


def test_queue_status_counts_its_podgroups_by_phase_and_says_its_state():
    # One gang runs, one waits for room (Inqueue), one is held by its minResources (Pending); q2 is Closed.
    cluster = build(
        node("n1", "4", "8Gi"),
        queue("q1"),
        queue("q2", state="Closed"),
        *gang("runs", 2, queue="q1"),
        *gang("waits", 4, queue="q1"),
        *gang("held", 1, queue="q1", min_resources={"cpu": "100"}),
        *gang("closed", 1, queue="q2"),
    )
    result = vcore.Scheduler(cluster).run_cycle()
    q1, q2 = result.queues["q1"], result.queues["q2"]
    assert dict(q1.podgroups) == {"Running": 1, "Inqueue": 1, "Pending": 1} and q1.state == "Open"
    assert dict(q2.podgroups) == {"Pending": 1} and q2.state == "Closed"


def test_hierarchical_queues_kai_quota():
    kai = "scheduling.run.ai/v2"
    objects = [
        node("n1", "8"),
        {
            "apiVersion": kai,
            "kind": "Queue",
            "metadata": {"name": "dept"},
            "spec": {
                "resources": {
                    "cpu": {"quota": 8000, "limit": 8000, "overQuotaWeight": 1},
                    "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                    "gpu": {"quota": 0, "limit": -1, "overQuotaWeight": 1},
                }
            },
        },
        {
            "apiVersion": kai,
            "kind": "Queue",
            "metadata": {"name": "team-a"},
            "spec": {
                "parentQueue": "dept",
                "resources": {
                    "cpu": {"quota": 2000, "limit": 3000, "overQuotaWeight": 1},
                    "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                    "gpu": {"quota": 0, "limit": -1, "overQuotaWeight": 1},
                },
            },
        },
    ]
    objects += [gang(f"j{i}", 1, queue="team-a", created=f"2026-01-01T00:00:0{i}Z") for i in range(5)]
    cluster = build(*flatten(*objects))
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate", shares="hierarchy")).run_cycle()
    assert len(result.bindings) == 3  # team-a's limit is 3 cpu (KAI counts cpu in millicores)


def test_cohort_borrowing_limit():
    kueue = "kueue.x-k8s.io/v1beta1"

    def cq(name, nominal, borrowing=None):
        res = {"name": "cpu", "nominalQuota": nominal}
        if borrowing is not None:
            res["borrowingLimit"] = borrowing
        return {
            "apiVersion": kueue,
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "cohort": "team",
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [res]}]}],
            },
        }

    objects = flatten(
        node("n1", "10"),
        cq("a", "2", borrowing="1"),
        cq("b", "6"),
        [gang(f"j{i}", 1, cpu="1", mem=None, queue="a", created=f"2026-01-01T00:00:0{i}Z") for i in range(6)],
    )
    cluster = build(*objects)
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate", shares="cohort")).run_cycle()
    assert len(result.bindings) == 3  # nominal 2 + borrowing limit 1


def test_cycle_binds_into_the_cluster_with_gpu_choice():
    cluster = build(node("g1", "16", "64Gi", gpu=4), *gang("train", 2, cpu="2"))
    for p in ("ns/train-0", "ns/train-1"):
        cluster.remove_pod(p)
    cluster.add_pod(pod("train-0", "train", "2", gpu=2))
    cluster.add_pod(pod("train-1", "train", "2", gpu=2))
    result = vcore.Scheduler(cluster).run_cycle()
    choices = sorted(b.gpus.indices for b in result.bindings)
    assert choices == [(0, 1), (2, 3)]
    assert cluster.pod_gpus("ns/train-0").indices in {(0, 1), (2, 3)}


def test_eligible_limits_the_jobs_tried_and_keeps_the_others_status():
    cluster = build(node("n1", "2"), *gang("big", 3), *gang("small", 1, created="2026-01-01T00:00:09Z"))
    scheduler = vcore.Scheduler(cluster)
    first = scheduler.run_cycle(eligible=["ns/big-0"])
    assert not first.bindings and "ns/small-0" not in first.unschedulable
    said = first.podgroups["ns/big"].message
    assert said.startswith("3/3 tasks in gang unschedulable")
    second = scheduler.run_cycle(eligible=["ns/small-0"])
    assert [b.pod for b in second.bindings] == ["ns/small-0"]
    assert second.podgroups["ns/big"].message == said  # not tried again: what it said stands
    assert "ns/big-0" not in second.unschedulable


def test_condition_time_moves_only_when_the_condition_changes():
    cluster = build(node("n1", "2"), *gang("big", 3))
    scheduler = vcore.Scheduler(cluster)
    first = scheduler.run_cycle().podgroups["ns/big"].conditions
    first[0]["lastTransitionTime"] = "2020-01-01T00:00:00Z"  # as if written long ago
    cluster._batch.status["ns/big"].conditions = [dict(first[0])]
    again = scheduler.run_cycle().podgroups["ns/big"].conditions
    assert again[0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    cluster.add_node(node("n2", "2"))
    done = scheduler.run_cycle().podgroups["ns/big"]
    assert done.phase == "Running" and done.conditions[0]["type"] == "Scheduled"


def test_preempt_takes_no_more_victims_than_the_room_needs():
    # Ten 4-cpu nodes full of 2-cpu low-priority pods; a gang of six 1-cpu high-priority pods needs 6 cpus: three
    # victims free them. Each eviction leaves its node 1 cpu of future idle room (idle + releasing - pipelined)
    # after the first task: the next task goes there, and the node gives no second victim (as Volcano counts it).
    nodes = [node(f"n{i}", "4") for i in range(10)]
    low = [
        podgroup("lo", 1, priority_class="lo"),
        *[pod(f"lo-{i}", "lo", "2", node=f"n{i // 2}", priority_class="lo", phase="Running") for i in range(20)],
    ]
    cluster = build(
        *nodes, priority_class("hi", 1000), priority_class("lo", 10), *low, *gang("hi", 6, priority_class="hi")
    )
    result = vcore.Scheduler(cluster, cycle=cycle("enqueue, allocate, preempt")).run_cycle()
    assert len(result.evictions) == 3
    assert len(result.nominated) == 6
    # each victim's 2 cpus take two tasks, on its node
    assert Counter(result.nominated.values()) == Counter(
        {n: 2 * k for n, k in Counter(e.node for e in result.evictions).items()}
    )


def test_a_full_cluster_is_told_as_kube_scheduler_tells_it():
    # No queue limit: an elastic gang's pods beyond what the nodes hold fail for the nodes' resources, not because
    # the queue "has no room left" (proportion's deserved share is all the cluster has).
    cluster = build(node("n1", "2"), node("n2", "2"), *gang("job", 6, min_member=2))
    result = vcore.Scheduler(cluster).run_cycle()
    assert len(result.bindings) == 4
    message = result.unschedulable["ns/job-5"][1]
    assert "no room left" not in message and message == "0/2 nodes are available: 2 Insufficient cpu."
