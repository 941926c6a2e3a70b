"""Invariants after every cycle on random batch workloads (hypothesis): no node over-committed, no partial gang
(best-effort pods count toward a gang's minimum, as Volcano's IsReady counts them, and backfill binds them one by
one), every Running gang at its minimum, no Pending gang holding resources, queue capabilities respected, evictions
only of pods that were running, and bindings equal to what the cluster holds."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

import vcore

from .builders import build, node, pod, podgroup, priority_class, queue

ACTIONS = [
    "enqueue, allocate, backfill",
    "enqueue, allocate, preempt, reclaim, backfill",
    "allocate, backfill",
    "enqueue, allocate, reclaim",
]


@st.composite
def workloads(draw):
    nodes = [
        node(f"n{i}", str(draw(st.integers(1, 8))), f"{draw(st.integers(1, 16))}Gi")
        for i in range(draw(st.integers(1, 8)))
    ]
    queues = [
        queue(
            f"q{i}",
            draw(st.integers(1, 4)),
            capability={"cpu": str(draw(st.integers(1, 12)))} if draw(st.booleans()) else None,
            reclaimable=draw(st.booleans()),
        )
        for i in range(draw(st.integers(1, 3)))
    ]
    classes = [priority_class("lo", 10), priority_class("hi", 1000)]
    groups, pods = [], []
    for g in range(draw(st.integers(1, 8))):
        size = draw(st.integers(1, 6))
        name = f"g{g}"
        cpu = f"{draw(st.sampled_from([250, 500, 1000, 2000]))}m"
        groups.append(
            podgroup(
                name,
                draw(st.integers(1, size)),
                queue=f"q{draw(st.integers(0, len(queues) - 1))}",
                priority_class=draw(st.sampled_from(["lo", "hi", ""])),
                created=f"2026-01-01T00:00:{g:02d}Z",
                min_resources={"cpu": cpu} if draw(st.booleans()) else None,
            )
        )
        for i in range(size):
            best_effort = draw(st.integers(0, 9)) == 0
            pods.append(
                pod(
                    f"{name}-{i}",
                    name,
                    None if best_effort else cpu,
                    None if best_effort else "1Gi",
                    priority_class=groups[-1]["spec"].get("priorityClassName", ""),
                )
            )
    return nodes, queues, classes, groups, pods, draw(st.sampled_from(ACTIONS)), draw(st.integers(1, 3))


def _check(cluster: vcore.Cluster, result: vcore.CycleResult, groups: list[dict], queues: list[dict]) -> None:
    req, alloc = cluster.requested_matrix, cluster.allocatable_matrix
    assert (req <= alloc)[:, cluster.live_mask].all(), "a node is over-committed"
    bound = Counter()
    by_queue: Counter = Counter()
    for g in groups:
        name, pg_key = g["metadata"]["name"], f"ns/{g['metadata']['name']}"
        pods = cluster._batch.members.get(pg_key, {})
        members = [k for k in pods if cluster.node_of(k) is not None]
        bound[pg_key] = len(members)
        status = result.podgroups[pg_key]
        holding = [k for k in members if not pods[k].best_effort]
        waiting_best_effort = sum(1 for k, info in pods.items() if info.best_effort and k not in members)
        if holding:
            assert len(members) + waiting_best_effort >= g["spec"]["minMember"], (
                f"{name}: a partial gang holds {len(members)} pods"
            )
        if status.phase == "Running":
            assert len(members) >= g["spec"]["minMember"]
        if status.phase == "Pending":
            assert not holding, f"{name} is Pending but holds resources"
        for k in members:
            info = cluster._batch.pods[k]
            by_queue[g["spec"]["queue"]] += dict(cluster._batch.shapes[info.shape]).get(0, 0)  # axis 0: cpu
    for q in queues:
        cap = (q["spec"].get("capability") or {}).get("cpu")
        if cap is not None:
            assert by_queue[q["metadata"]["name"]] <= int(cap) * 1000, f"queue {q['metadata']['name']} over capability"
    for b in result.bindings:
        assert cluster.node_of(b.pod) == b.node
    for e in result.evictions:
        assert cluster.node_of(e.victim) == e.node  # Releasing: still accounted until removed


@given(workload=workloads())
@settings(max_examples=60)
def test_invariants_hold_after_every_cycle(workload):
    nodes, queues, classes, groups, pods, actions, n_cycles = workload
    cluster = build(*nodes, *queues, *classes, *groups, *pods)
    tiers = [
        {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
        {
            "plugins": [
                {"name": "overcommit"},
                {"name": "drf"},
                {"name": "predicates"},
                {"name": "proportion"},
                {"name": "nodeorder"},
            ]
        },
    ]
    scheduler = vcore.Scheduler(cluster, cycle={"actions": actions, "tiers": tiers})
    for _ in range(n_cycles):
        result = scheduler.run_cycle()
        _check(cluster, result, groups, queues)
        for e in result.evictions:  # the victims terminate before the next cycle
            cluster.remove_pod(e.victim)
