"""vcore-scheduler's DefaultPreemption against the real API server, with exactly the deploy/ ClusterRole's
permissions, for pods without a gang: a high-priority pod that fits no node preempts a low-priority one as
kube-scheduler's prepareCandidate does (the victim's DisruptionTarget condition, then its deletion, a Preempted
event, the preemptor's nominatedNodeName) and binds once the victim is gone (the test finishes the deletion, as a
kubelet would); no second victim goes while the first terminates; a PodDisruptionBudget steers the choice to
another node; a pod whose PriorityClass says preemptionPolicy Never preempts nothing."""

from __future__ import annotations

import functools

import pytest

from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod

from .harness import bound, check_invariants, delete_pod, events, pods, wait_bound, wait_for

SCHED = "vcore-preempt"
PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, SCHED)


def priority_class(admin, name: str, value: int, **extra) -> str:
    admin.create(
        PRIORITY_CLASSES,
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            **extra,
        },
    )
    return name


def in_pool(p: dict, pool: str) -> dict:
    p["spec"]["nodeSelector"] = {"pool": pool}
    # A graceful deletion: a bound pod then stays terminating (no kubelet runs here) until the test finishes it.
    p["spec"]["terminationGracePeriodSeconds"] = 30
    return p


def get_pod(admin, namespace: str, name: str) -> dict:
    return admin.get(f"/api/v1/namespaces/{namespace}/pods/{name}")


def disruption_target(p: dict) -> dict | None:
    return next(
        (c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "DisruptionTarget"), None
    )


def finish_deletion(admin, namespace: str, name: str) -> None:
    """No kubelet runs here: a deleted pod that was bound stays terminating until someone finishes it."""
    delete_pod(admin, namespace, name)


def test_high_priority_pod_preempts_a_low_priority_one(admin, namespace, scheduler):
    run = scheduler()
    low = priority_class(admin, f"{namespace}-low", 10)
    high = priority_class(admin, f"{namespace}-high", 1000)
    pool = f"{namespace}-p"
    create_nodes(admin, [node(f"{pool}-{i}", cpu="2", labels={"pool": pool}) for i in range(2)])
    victims = [
        in_pool(pod(f"low-{i}", namespace, scheduler=SCHED, cpu="2", priority_class=low), pool) for i in range(2)
    ]
    create_pods(admin, victims)
    placed = wait_bound(admin, namespace, ["low-0", "low-1"], run=run)
    create_pods(admin, [in_pool(pod("urgent", namespace, scheduler=SCHED, cpu="2", priority_class=high), pool)])

    # One victim is chosen, marked and deleted; the preemptor is nominated to its node.
    def chosen():
        marked = [
            p
            for p in pods(admin, namespace)
            if p["metadata"]["name"].startswith("low-") and p["metadata"].get("deletionTimestamp")
        ]
        return marked[0] if len(marked) == 1 else None

    victim = wait_for(chosen, 30, "a victim being deleted", run)
    name, node_name = victim["metadata"]["name"], placed[victim["metadata"]["name"]]
    condition = disruption_target(victim)
    assert condition is not None and (condition["status"], condition["reason"]) == ("True", "PreemptionByScheduler")
    assert condition["message"] == f"{SCHED}: preempting to accommodate a higher priority pod"
    wait_for(
        lambda: (get_pod(admin, namespace, "urgent").get("status") or {}).get("nominatedNodeName") == node_name,
        30,
        "the preemptor's nominatedNodeName",
        run,
    )
    preempted = wait_for(
        lambda: [e for e in events(admin, namespace, "Preempted") if e["regarding"]["name"] == name],
        30,
        "a Preempted event",
        run,
    )
    urgent_uid = get_pod(admin, namespace, "urgent")["metadata"]["uid"]
    assert preempted[0]["note"] == f"Preempted by pod {urgent_uid} on node {node_name}"
    assert preempted[0]["type"] == "Normal" and preempted[0]["action"] == "Preempting"
    failed = wait_for(lambda: events(admin, namespace, "FailedScheduling"), 30, "FailedScheduling", run)
    assert any(e["regarding"]["name"] == "urgent" and "0/" in e["note"] for e in failed)

    # Once the victim is gone the preemptor binds there; the other low-priority pod was never touched.
    finish_deletion(admin, namespace, name)
    assert wait_bound(admin, namespace, ["urgent"], run=run)["urgent"] == node_name
    other = get_pod(admin, namespace, "low-1" if name == "low-0" else "low-0")
    assert not other["metadata"].get("deletionTimestamp") and disruption_target(other) is None
    assert run.metric('vcore_scheduler_evictions_total{reason="preempt"}') == 1
    check_invariants(admin, namespace, SCHED)


def test_a_pod_disruption_budget_steers_the_victim(admin, namespace, scheduler):
    run = scheduler()
    lower = priority_class(admin, f"{namespace}-lower", 10)
    low = priority_class(admin, f"{namespace}-low", 20)
    high = priority_class(admin, f"{namespace}-high", 1000)
    pool = f"{namespace}-p"
    create_nodes(admin, [node(f"{pool}-{i}", cpu="2", labels={"pool": pool}) for i in range(2)])
    # Without a budget the lower-priority "guarded" pod would be the victim (the lowest highest-priority victim).
    create_pods(
        admin,
        [
            in_pool(
                pod("guarded", namespace, scheduler=SCHED, cpu="2", priority_class=lower, labels={"app": "guarded"}),
                pool,
            ),
            in_pool(pod("plain", namespace, scheduler=SCHED, cpu="2", priority_class=low), pool),
        ],
    )
    wait_bound(admin, namespace, ["guarded", "plain"], run=run)
    budget = admin.create(
        f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "guard", "namespace": namespace},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
        },
    )
    # No disruption controller runs here: write the status it would (one healthy pod, one required).
    admin.put(
        f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/guard/status",
        {
            **budget,
            "status": {
                "disruptionsAllowed": 0,
                "currentHealthy": 1,
                "desiredHealthy": 1,
                "expectedPods": 1,
                "observedGeneration": budget["metadata"].get("generation", 1),
            },
        },
    )
    # The loop applies watch events in arrival order: once it has applied the budget's two (created, status
    # written), the preemptor created next is seen after them.
    wait_for(
        lambda: run.metric('vcore_scheduler_watch_events_total{kind="PodDisruptionBudget"}') >= 2,
        30,
        "the scheduler applying the budget's status",
        run,
    )
    create_pods(admin, [in_pool(pod("urgent", namespace, scheduler=SCHED, cpu="2", priority_class=high), pool)])
    victim = wait_for(
        lambda: [p["metadata"]["name"] for p in pods(admin, namespace) if p["metadata"].get("deletionTimestamp")],
        30,
        "a victim being deleted",
        run,
    )
    assert victim == ["plain"]
    finish_deletion(admin, namespace, "plain")
    wait_bound(admin, namespace, ["urgent"], run=run)
    assert not get_pod(admin, namespace, "guarded")["metadata"].get("deletionTimestamp")
    check_invariants(admin, namespace, SCHED)


def test_preemption_policy_never_preempts_nothing(admin, namespace, scheduler):
    run = scheduler()
    low = priority_class(admin, f"{namespace}-low", 10)
    polite = priority_class(admin, f"{namespace}-polite", 1000, preemptionPolicy="Never")
    pool = f"{namespace}-p"
    create_nodes(admin, [node(f"{pool}-0", cpu="2", labels={"pool": pool})])
    create_pods(admin, [in_pool(pod("low", namespace, scheduler=SCHED, cpu="2", priority_class=low), pool)])
    wait_bound(admin, namespace, ["low"], run=run)
    create_pods(admin, [in_pool(pod("polite", namespace, scheduler=SCHED, cpu="2", priority_class=polite), pool)])
    assert get_pod(admin, namespace, "polite")["spec"].get("preemptionPolicy") == "Never"  # from its class
    failed = wait_for(
        lambda: [e for e in events(admin, namespace, "FailedScheduling") if e["regarding"]["name"] == "polite"],
        30,
        "FailedScheduling for polite",
        run,
    )
    assert failed[0]["note"].endswith(" preemption: not eligible due to preemptionPolicy=Never.")
    low_pod = get_pod(admin, namespace, "low")
    assert not low_pod["metadata"].get("deletionTimestamp") and disruption_target(low_pod) is None
    assert not (get_pod(admin, namespace, "polite").get("status") or {}).get("nominatedNodeName")
    assert bound(admin, namespace) == {"low": f"{pool}-0"}
    assert run.metric('vcore_scheduler_evictions_total{reason="preempt"}') == 0
