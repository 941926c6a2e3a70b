"""The agent fast path and warm pools against the real API server, with exactly the deploy/ ClusterRole's
permissions: a burst of agent pods while gangs are scheduled (all placed, nothing over-committed, gangs all or
nothing), and a warm pool (placeholders kept bound, hits onto a placeholder's node, a miss placed by the fast
path, the pool refilled, and a placeholder never blocking a real pod of any priority)."""

from __future__ import annotations

import json
import threading
import urllib.request

from vcore_kube.testenv.objects import create_nodes, create_pods, ensure_namespace, node, pod
from vcore_kube.warmpool import PLACEHOLDER_LABEL, POOL_LABEL

from .harness import SchedulerRun, bound, check_invariants, events, pods, wait_bound, wait_for

VOLCANO = "/apis/scheduling.volcano.sh/v1beta1"
WARMPOOLS = "/apis/vcore.io/v1alpha1/namespaces/{ns}/warmpools"


def samples(run: SchedulerRun, series: str) -> list[float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{run.port}/debug/samples", timeout=5) as r:
        return json.loads(r.read()).get(series, [])


def pinned(p: dict, **selector) -> dict:
    p["spec"]["nodeSelector"] = selector
    return p


def test_agent_burst_while_gangs_are_scheduled(admin, namespace, scheduler):
    sched, agent = "vcore-mix", "vcore-mix-agent"
    run = scheduler(
        sched,
        fastPath={
            "enabled": True,
            "schedulerName": agent,
            "window": "1ms",
            "profile": {
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
            },
        },
    )
    create_nodes(admin, [node(f"mix-{i}", cpu="8", labels={"pool": "mix"}) for i in range(8)])
    agents_ns = f"{namespace}-agents"
    ensure_namespace(admin, agents_ns)
    gangs = {f"g{i}": 6 for i in range(6)}  # 36 cpu
    gangs["toobig"] = 40  # never fits beside the rest: must hold nothing
    for name, size in gangs.items():
        admin.create(
            f"{VOLCANO}/namespaces/{namespace}/podgroups",
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"minMember": size},
            },
        )
    members = [
        pinned(
            pod(f"{g}-{i}", namespace, scheduler=sched, cpu="1", annotations={"scheduling.k8s.io/group-name": g}),
            pool="mix",
        )
        for g, size in gangs.items()
        for i in range(size)
    ]
    agents = [pinned(pod(f"a{i}", agents_ns, scheduler=agent, cpu="500m"), pool="mix") for i in range(40)]  # 20 cpu
    burst = threading.Thread(target=create_pods, args=(admin, agents))
    burst.start()  # the agents arrive while the gangs are being created and cycled
    create_pods(admin, members)
    burst.join()
    wait_bound(admin, agents_ns, [p["metadata"]["name"] for p in agents], run=run)
    placed = [f"{g}-{i}" for g, size in gangs.items() if g != "toobig" for i in range(size)]
    wait_bound(admin, namespace, placed, run=run)
    wait_for(
        lambda: run.metric('vcore_scheduler_schedule_attempts_total{result="scheduled"}') >= 76,
        30,
        "the bindings counted",
        run,
    )
    assert not {n for n in bound(admin, namespace) if n.startswith("toobig-")}  # all or nothing
    wait_for(
        lambda: (
            {e["regarding"]["name"] for e in events(admin, namespace, "FailedScheduling")}
            >= {f"toobig-{i}" for i in range(40)}
        ),
        30,
        "why the big gang waits",
        run,
    )
    check_invariants(admin, namespace, sched)
    check_invariants(admin, agents_ns, agent, expect_all_bound=True)
    assert len(samples(run, "fast_event_to_bind_request")) == 40
    assert run.metric("vcore_scheduler_fast_path_batch_pods_count") >= 1


def warm_pool(admin, namespace: str, name: str, size: int, scheduler: str, cpu: str, **spec) -> None:
    admin.create(
        WARMPOOLS.format(ns=namespace),
        {
            "apiVersion": "vcore.io/v1alpha1",
            "kind": "WarmPool",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "size": size,
                "schedulerName": scheduler,
                "template": {
                    "spec": {
                        "containers": [{"name": "agent", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}],
                        **spec,
                    }
                },
            },
        },
    )


def placeholders(admin, namespace: str) -> dict[str, str]:
    """{placeholder name: node} of the bound placeholders."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods(admin, namespace)
        if (p["metadata"].get("labels") or {}).get(PLACEHOLDER_LABEL) == "true"
        and p["spec"].get("nodeName")
        and not p["metadata"].get("deletionTimestamp")
    }


def test_warm_pool_hits_misses_refill_and_never_blocks(admin, namespace, scheduler):
    sched, agent = "vcore-warm", "vcore-warm-agent"
    run = scheduler(sched, fastPath={"enabled": True, "schedulerName": agent})
    create_nodes(
        admin,
        [node(f"warm-{i}", cpu="4", labels={"pool": "warm", "reserve": "yes"}) for i in range(2)]
        + [node("warm-x", cpu="4", labels={"pool": "warm", "only": "here"})],
    )
    warm_pool(admin, namespace, "sandbox", 4, agent, "1", nodeSelector={"reserve": "yes"})
    held = wait_for(lambda: (h := placeholders(admin, namespace)) and len(h) == 4 and h, 60, "4 placeholders", run)
    assert set(held.values()) <= {"warm-0", "warm-1"}
    # Hits: each session pod goes where a placeholder was, and that placeholder is gone.
    sessions = [pod(f"s{i}", namespace, scheduler=agent, cpu="1", labels={POOL_LABEL: "sandbox"}) for i in range(2)]
    create_pods(admin, sessions)
    placed = wait_bound(admin, namespace, ["s0", "s1"], run=run)
    assert set(placed[n] for n in ("s0", "s1")) <= set(held.values())
    wait_for(
        lambda: run.metric(f'vcore_scheduler_warm_pool_hits_total{{pool="{namespace}/sandbox"}}') == 2,
        20,
        "2 hits",
        run,
    )
    # The pool refills to its size, on the capacity left.
    refilled = wait_for(lambda: (h := placeholders(admin, namespace)) and len(h) == 4 and h, 60, "the refill", run)
    assert len(set(refilled) - set(held)) == 2  # two new ones beside the two left
    wait_for(lambda: samples(run, "warm_refill"), 20, "refill latency samples", run)
    # A miss: the session pod can only go where no placeholder is; the fast path places it.
    miss = pod("s-miss", namespace, scheduler=agent, cpu="1", labels={POOL_LABEL: "sandbox"})
    miss["spec"]["nodeSelector"] = {"only": "here"}
    create_pods(admin, [miss])
    assert wait_bound(admin, namespace, ["s-miss"], run=run)["s-miss"] == "warm-x"
    assert run.metric(f'vcore_scheduler_warm_pool_misses_total{{pool="{namespace}/sandbox"}}') >= 1
    # Never blocks: real pods of any priority (below the placeholders' too, never preempting) take every cpu of
    # the reserved nodes; the placeholders there give way.
    admin.create(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"{namespace}-lowest"},
            "value": -2000000,
            "preemptionPolicy": "Never",
        },
    )
    real_ns = f"{namespace}-real"
    ensure_namespace(admin, real_ns)
    sessions_on = [placed[s] for s in ("s0", "s1")]
    free = {n: 4 - sessions_on.count(n) for n in ("warm-0", "warm-1")}  # every cpu the sessions left
    real = []
    for n, cpu in free.items():
        p = pod(f"real-{n}", real_ns, scheduler=sched, cpu=str(cpu), priority_class=f"{namespace}-lowest")
        p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": n}
        real.append(p)
    real.append(pinned(pod("real-fast", real_ns, scheduler=agent, cpu="1"), only="here"))
    create_pods(admin, real)
    wait_bound(admin, real_ns, [p["metadata"]["name"] for p in real], run=run)
    check_invariants(admin, real_ns, sched)
    check_invariants(admin, namespace, agent)
    # The reserved nodes are full of real pods: the pool has nowhere to refill, and never over-commits.
    assert not set(placeholders(admin, namespace).values()) & {"warm-0", "warm-1"}
