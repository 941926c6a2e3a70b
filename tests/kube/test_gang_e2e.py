"""vcore-scheduler's gang cycle against the real API server, with exactly the deploy/ ClusterRole's permissions:
a Volcano gang is bound all or nothing and its PodGroup status says why it waits, a queue's capability caps what
its jobs take, a higher-priority gang evicts lower-priority pods (which the test then removes, as a kubelet would)
and binds once they are gone, and a gang with a hard network-topology constraint stays inside one HyperNode."""

from __future__ import annotations

import functools

import pytest

from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod

from .harness import bound, check_invariants, delete_pod, pods, wait_bound, wait_for

SCHED = "vcore-gang"
VOLCANO = "/apis/scheduling.volcano.sh/v1beta1"


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, SCHED)


def podgroup(admin, namespace: str, name: str, min_member: int, **spec) -> None:
    admin.create(
        f"{VOLCANO}/namespaces/{namespace}/podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member, **spec},
        },
    )


def queue(admin, name: str, **spec) -> None:
    admin.create(
        f"{VOLCANO}/queues",
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec},
    )


def status(admin, namespace: str, name: str) -> dict:
    return admin.get(f"{VOLCANO}/namespaces/{namespace}/podgroups/{name}").get("status") or {}


def members(namespace: str, group: str, n: int, pool: str, **kw) -> list[dict]:
    out = []
    for i in range(n):
        p = pod(f"{group}-{i}", namespace, scheduler=SCHED, annotations={"scheduling.k8s.io/group-name": group}, **kw)
        p["spec"]["nodeSelector"] = {"pool": pool}
        out.append(p)
    return out


def pool(admin, name: str, n: int, **kw) -> None:
    create_nodes(admin, [node(f"{name}-{i}", labels={"pool": name}, **kw) for i in range(n)])


def test_gang_is_bound_all_or_nothing_and_its_podgroup_says_why(admin, namespace, scheduler):
    run = scheduler()
    pool(admin, "gang", 2, cpu="2")
    podgroup(admin, namespace, "train", 3)
    create_pods(admin, members(namespace, "train", 3, "gang", cpu="1200m"))
    # The PodGroup may be seen before its pods (then it reads Pending), and the pods before the pool's second node
    # (then two of three do not fit, "2/3"): wait for the cycle that saw all of them, one pod short.
    wait_for(
        lambda: any(
            c.get("message", "").startswith("1/3 tasks in gang unschedulable")
            for c in status(admin, namespace, "train").get("conditions") or []
        ),
        30,
        "the PodGroup's Unschedulable condition, one pod short",
        run,
    )
    st = status(admin, namespace, "train")
    assert st["phase"] == "Inqueue" and not bound(admin, namespace)  # two fit, three are needed: none is bound
    [cond] = [c for c in st["conditions"] if c["type"] == "Unschedulable"]
    assert cond["reason"] == "NotEnoughResources" and cond["message"].startswith("1/3 tasks in gang unschedulable")
    create_nodes(admin, [node("gang-2", cpu="2", labels={"pool": "gang"})])
    placed = wait_bound(admin, namespace, [f"train-{i}" for i in range(3)], run=run)
    assert len(set(placed.values())) == 3
    wait_for(lambda: status(admin, namespace, "train").get("phase") == "Running", 30, "PodGroup Running", run)
    assert any(c["type"] == "Scheduled" for c in status(admin, namespace, "train")["conditions"])
    check_invariants(admin, namespace, SCHED, expect_all_bound=True)


def test_queue_capability_caps_its_jobs(admin, namespace, scheduler):
    run = scheduler()
    pool(admin, "capq", 1, cpu="16")
    queue(admin, f"{namespace}-small", weight=1, capability={"cpu": "2"})
    podgroup(admin, namespace, "elastic", 1, queue=f"{namespace}-small")
    create_pods(admin, members(namespace, "elastic", 4, "capq", cpu="1"))
    wait_for(lambda: len(bound(admin, namespace)) == 2, 30, "two pods bound (the queue holds 2 cpu)", run)
    wait_for(lambda: status(admin, namespace, "elastic").get("phase") == "Running", 30, "PodGroup Running", run)
    assert len(bound(admin, namespace)) == 2
    check_invariants(admin, namespace, SCHED)


def test_a_higher_priority_gang_preempts_and_binds_once_the_victims_are_gone(admin, namespace, scheduler):
    run = scheduler(
        cycle={
            "actions": "enqueue, allocate, preempt, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]},
            ],
        }
    )
    for name, value in ((f"{namespace}-low", 10), (f"{namespace}-high", 1000)):
        admin.create(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value},
        )
    pool(admin, "preempt", 2, cpu="2")
    # The low-priority job runs four pods above its minMember of 1: Volcano's gang plugin lets those go (a job at its
    # minimum keeps its pods), so preempt may take them for the gang.
    podgroup(admin, namespace, "low", 1, priorityClassName=f"{namespace}-low")
    low = members(namespace, "low", 4, "preempt", cpu="1", priority_class=f"{namespace}-low")
    create_pods(admin, low)
    wait_bound(admin, namespace, [p["metadata"]["name"] for p in low], run=run)
    podgroup(admin, namespace, "urgent", 2, priorityClassName=f"{namespace}-high")
    create_pods(admin, members(namespace, "urgent", 2, "preempt", cpu="1", priority_class=f"{namespace}-high"))

    def victims_terminating():
        # No kubelet runs here: the victims only get their deletion started; finish it as a kubelet would.
        going = [
            p["metadata"]["name"]
            for p in pods(admin, namespace)
            if p["metadata"]["name"].startswith("low-") and p["metadata"].get("deletionTimestamp")
        ]
        gone = {p["metadata"]["name"] for p in pods(admin, namespace)}
        for name in going:
            delete_pod(admin, namespace, name)
        return len(going) + (4 - sum(n.startswith("low-") for n in gone)) >= 2

    wait_for(victims_terminating, 30, "two low-priority victims evicted", run)
    wait_bound(admin, namespace, ["urgent-0", "urgent-1"], run=run)
    remaining = [n for n in bound(admin, namespace) if n.startswith("low-")]
    assert len(remaining) == 2  # the fewest victims: two pods of 1 cpu made room for two
    assert run.metric('vcore_scheduler_evictions_total{reason="preempt"}') == 2
    check_invariants(admin, namespace, SCHED)


def test_hard_network_topology_keeps_the_gang_in_one_hypernode(admin, namespace, scheduler):
    run = scheduler()
    for rack in ("a", "b"):
        create_nodes(admin, [node(f"hn-{rack}{i}", cpu="2", labels={"pool": "hn"}) for i in range(3)])
        admin.create(
            "/apis/topology.volcano.sh/v1alpha1/hypernodes",
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": f"hn-rack-{rack}"},
                "spec": {
                    "tier": 1,
                    "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": f"^hn-{rack}[0-9]$"}}}],
                },
            },
        )
    podgroup(admin, namespace, "ring", 3, networkTopology={"mode": "hard", "highestTierAllowed": 1})
    create_pods(admin, members(namespace, "ring", 3, "hn", cpu="2"))
    placed = wait_bound(admin, namespace, [f"ring-{i}" for i in range(3)], run=run)
    racks = {n[3] for n in placed.values()}
    assert len(racks) == 1, placed  # one rack holds the whole gang
    check_invariants(admin, namespace, SCHED, expect_all_bound=True)
