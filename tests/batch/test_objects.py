"""Pods, PodGroups, queues and PriorityClasses through the Cluster API: parsing, transitions, bad input."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vcore

from .builders import build, gang, node, pod, podgroup, priority_class, queue


def _state(cluster: vcore.Cluster):
    return (
        cluster.n_pods,
        sorted(cluster._batch.pods),
        sorted(cluster.podgroups),
        sorted(cluster.queues),
        cluster.requested("cpu").copy().tolist(),
    )


def test_add_pod_pending_and_running():
    cluster = build(node("n1", "4"))
    cluster.add_pod(pod("a"))
    cluster.add_pod(pod("b", node="n1", cpu="2"))
    assert cluster.pending_pods == ["ns/a"] and cluster.node_of("ns/b") == "n1"
    assert cluster.requested("cpu").tolist() == [2000]
    with pytest.raises(vcore.PodExistsError, match="pod ns/a: already exists"):
        cluster.add_pod(pod("a"))


def test_running_pod_gpu_index_annotation():
    cluster = build(node("g1", "16", gpu=4))
    running = pod("a", node="g1", gpu=2)
    running["metadata"]["annotations"]["volcano.sh/gpu-index"] = "1,3"
    cluster.add_pod(running)
    assert cluster.pod_gpus("ns/a").indices == (1, 3)


def test_update_pod_transitions():
    cluster = build(node("n1", "4"), node("n2", "4"))
    cluster.add_pod(pod("a", cpu="2"))
    cluster.update_pod(pod("a", cpu="2", node="n1"))  # bound by someone else
    assert cluster.node_of("ns/a") == "n1"
    with pytest.raises(ValueError, match="cannot move from n1 to n2"):
        cluster.update_pod(pod("a", cpu="2", node="n2"))
    cluster.update_pod(pod("a", cpu="2", node="n1", phase="Succeeded"))  # finished: releases its resources
    assert cluster.node_of("ns/a") is None and cluster.requested("cpu").tolist() == [0, 0]
    with pytest.raises(vcore.PodNotFoundError):
        cluster.update_pod(pod("nobody"))


def test_remove_pod_pending_running_and_unknown():
    cluster = build(node("n1", "4"), pod("a"), pod("b", node="n1"))
    cluster.remove_pod("ns/a")
    cluster.remove_pod(pod("b"))
    assert cluster.n_pods == 0 and not cluster.has_pod("ns/b")
    with pytest.raises(vcore.PodNotFoundError):
        cluster.remove_pod("ns/a")


def test_add_pod_on_unknown_node_changes_nothing():
    cluster = build(node("n1", "4"))
    before = _state(cluster)
    with pytest.raises(vcore.NodeNotFoundError):
        cluster.add_pod(pod("a", node="ghost"))
    assert _state(cluster) == before


BAD_PODGROUPS = {
    "negative-min-member": ({"minMember": -1}, r"podgroup ns/pg: spec\.minMember: must not be negative"),
    "min-member-not-int": ({"minMember": "3"}, r"spec\.minMember: expected an integer"),
    "negative-task-minimum": ({"minTaskMember": {"ps": -2}}, r"spec\.minTaskMember\.ps: must not be negative"),
    "bad-min-resources": ({"minResources": {"cpu": "lots"}}, r"podgroup ns/pg: spec\.minResources.*cpu"),
    "negative-min-resources": ({"minResources": {"memory": "-1Gi"}}, r"spec\.minResources"),
    "queue-not-string": ({"queue": 7}, r"spec\.queue: expected a string"),
}


@pytest.mark.parametrize("name", list(BAD_PODGROUPS))
def test_bad_podgroup_names_the_field_and_changes_nothing(name):
    fields, pattern = BAD_PODGROUPS[name]
    cluster = build(node("n1", "4"))
    obj = podgroup("pg")
    obj["spec"].update(fields)
    before = _state(cluster)
    with pytest.raises((ValueError, TypeError), match=pattern):
        cluster.add_podgroup(obj)
    assert _state(cluster) == before


def test_podgroup_lifecycle():
    cluster = build(node("n1", "4"))
    cluster.add_podgroup(podgroup("pg", 2))
    with pytest.raises(vcore.PodGroupExistsError):
        cluster.add_podgroup(podgroup("pg", 2))
    cluster.update_podgroup(podgroup("pg", 3))
    cluster.remove_podgroup("ns/pg")
    with pytest.raises(vcore.PodGroupNotFoundError):
        cluster.update_podgroup(podgroup("pg", 3))
    with pytest.raises(vcore.PodGroupNotFoundError):
        cluster.remove_podgroup(podgroup("pg"))


def test_pods_of_a_missing_podgroup_wait_for_it():
    cluster = build(node("n1", "4"), pod("a-0", "a"), pod("a-1", "a"))
    result = vcore.Scheduler(cluster).run_cycle()
    assert result.unschedulable["ns/a-0"][1] == "podgroup ns/a not found" and not result.bindings
    cluster.add_podgroup(podgroup("a", 2))
    assert len(vcore.Scheduler(cluster).run_cycle().bindings) == 2


def test_podgroup_phase_survives_restart_from_status():
    obj = podgroup("pg", 1)
    obj["status"] = {"phase": "Inqueue"}
    cluster = build(node("n1", "4"), obj)
    assert cluster._batch.status["ns/pg"].phase == "Inqueue"


def test_queue_lifecycle_and_errors():
    cluster = build(node("n1", "4"))
    assert cluster.queues == ["default"]
    cluster.add_queue(queue("q1", 2))
    with pytest.raises(vcore.QueueExistsError):
        cluster.add_queue(queue("q1"))
    with pytest.raises(vcore.QueueNotFoundError):
        cluster.add_queue(queue("child", parent="nowhere"))
    with pytest.raises(ValueError, match="capability"):
        cluster.add_queue(queue("bad", capability={"cpu": "1"}, guarantee={"cpu": "2"}))
    cluster.add_podgroup(podgroup("pg", queue="q1"))
    with pytest.raises(vcore.QueueInUseError, match="1 job"):
        cluster.remove_queue("q1")
    cluster.remove_podgroup("ns/pg")
    cluster.remove_queue("q1")
    assert "q1" not in cluster.queues


def test_queue_parent_cycle_is_refused_and_changes_nothing():
    cluster = build(node("n1", "4"), queue("a", parent="root"), queue("b", parent="a"))
    before = _state(cluster)
    with pytest.raises(ValueError, match="cycle"):
        cluster.update_queue(queue("a", parent="b"))
    assert _state(cluster) == before


def test_priority_classes():
    cluster = build(node("n1", "4"))
    cluster.add_priority_class(priority_class("high", 1000))
    with pytest.raises(ValueError, match="already exists"):
        cluster.add_priority_class(priority_class("high", 5))
    with pytest.raises(ValueError, match="at most 1000000000"):
        cluster.add_priority_class(priority_class("huge", 2_000_000_000))
    default = priority_class("std", 7)
    default["globalDefault"] = True
    cluster.add_priority_class(default)
    other = priority_class("std2", 8)
    other["globalDefault"] = True
    with pytest.raises(ValueError, match="std is the global default already"):
        cluster.add_priority_class(other)
    cluster.remove_priority_class("high")
    with pytest.raises(KeyError):
        cluster.remove_priority_class("high")


def test_client_objects_are_accepted():
    from kubernetes import client

    cluster = build(node("n1", "4"))
    v1pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="p", namespace="ns", annotations={"scheduling.k8s.io/group-name": "g"}),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="c", resources=client.V1ResourceRequirements(requests={"cpu": "1"}))]
        ),
    )
    cluster.add_podgroup(podgroup("g", 1))
    cluster.add_pod(v1pod)
    assert [b.pod for b in vcore.Scheduler(cluster).run_cycle().bindings] == ["ns/p"]


def test_failed_cycle_input_leaves_state_unchanged():
    cluster = build(node("n1", "4"), *gang("job", 2))
    snapshot = copy.deepcopy(_state(cluster))
    with pytest.raises(vcore.ProfileError):
        vcore.Scheduler(cluster, cycle={"actions": "bogus", "tiers": []})
    assert _state(cluster) == snapshot
    np.testing.assert_array_equal(cluster.requested("cpu"), [0])


def _recount(cluster: vcore.Cluster) -> tuple[dict, dict]:
    """The per-group tallies and the uncompiled index, recomputed from the pods."""
    batch = cluster._batch
    tallies = {}
    for group, members in batch.members.items():
        if not members:
            continue
        shapes, priorities, roles, ended = {}, {}, {}, 0
        annotated = sum(info.topology is not None for info in members.values())
        for info in members.values():
            if info.terminated:
                ended += 1
            else:
                shapes[info.shape] = shapes.get(info.shape, 0) + 1
                roles[info.role] = roles.get(info.role, 0) + 1
            key = (info.spec_priority, info.priority_class)
            priorities[key] = priorities.get(key, 0) + 1
        tallies[group] = (shapes, priorities, roles, ended, annotated)
    uncompiled = {k for k, info in batch.pods.items() if info.compiled is None and not info.terminated}
    return tallies, uncompiled


def _assert_jobs_read_alike(cluster: vcore.Cluster, scheduler: vcore.Scheduler) -> None:
    """Every job a session reads from the tallies (gangs none or all of whose pods run) equals the job read pod by
    pod."""
    from vcore.batch.session import Session

    session = Session(cluster, scheduler._engine, scheduler.cycle, scheduler._framework)
    tallies, cluster._batch.tallies = cluster._batch.tallies, {}
    try:
        for key, fast in session.jobs.items():
            if fast.podgroup is None:
                continue
            slow = session._job(key, fast.podgroup, cluster._batch.members.get(key, {}))
            for name in ("running", "releasing", "succeeded", "failed", "n_tasks", "priority", "min_member"):
                assert getattr(fast, name) == getattr(slow, name), (key, name)
            assert [t.key for t in fast.pending] == [t.key for t in slow.pending], key
            assert dict(fast.role_ready) == dict(slow.role_ready), key
            for name in ("allocated", "request", "pending_request"):
                assert getattr(fast, name).tolist() == getattr(slow, name).tolist(), (key, name)
    finally:
        cluster._batch.tallies = tallies


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "add", "update", "remove", "cycle", "node"]),
            st.integers(0, 3),
            st.sampled_from(["g1", "g2", None]),
            st.sampled_from(["1", "2"]),
            st.sampled_from(["", "n1", "Succeeded"]),
            st.sampled_from(["", "high"]),
            st.booleans(),
        ),
        min_size=3,
        max_size=40,
    )
)
def test_group_tallies_follow_every_change(steps):
    """What the cycle reads of a gang without a pass over its pods (BatchState.tallies, .uncompiled) always equals a
    recount, whatever pods come, change, go, bind or end, and whatever nodes go."""
    cluster = build(
        node("n1", "64", "256Gi"),
        node("n2", "64", "256Gi"),
        podgroup("g1", 2),
        podgroup("g2", 1, min_task={"ps": 1}),
        priority_class("high", 100),
    )
    scheduler = vcore.Scheduler(cluster)
    for action, i, group, cpu, where, klass, kueue in steps:
        name = f"p{i}"
        obj = pod(
            name,
            group,
            cpu=cpu,
            node="n1" if where == "n1" else "",
            phase="Succeeded" if where == "Succeeded" else "",
            priority_class=klass,
            role="ps" if i % 2 == 0 else "worker",
        )
        if kueue:
            obj["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"] = "kubernetes.io/hostname"
        if action == "node":  # n1 goes (its pods are pending again, never compiled) or comes back
            if "n1" in cluster.node_names:
                cluster.remove_node("n1", evict=True)
            else:
                cluster.add_node(node("n1", "64", "256Gi"))
        elif "n1" not in cluster.node_names and where == "n1":
            continue
        elif action == "add" and not cluster.has_pod(f"ns/{name}"):
            cluster.add_pod(obj)
        elif action == "update" and cluster.has_pod(f"ns/{name}"):
            old = cluster._batch.pods[f"ns/{name}"]
            if old.group == (f"ns/{group}" if group else None):
                try:
                    cluster.update_pod(obj)
                except ValueError:  # a running pod cannot move: refused, nothing changed
                    pass
        elif action == "remove" and cluster.has_pod(f"ns/{name}"):
            cluster.remove_pod(f"ns/{name}")
        elif action == "cycle":
            scheduler.run_cycle()
        _assert_jobs_read_alike(cluster, scheduler)
        want_tallies, want_uncompiled = _recount(cluster)
        got = {
            g: (dict(t.shapes), dict(t.priorities), dict(t.roles), t.ended, t.topology)
            for g, t in cluster._batch.tallies.items()
        }
        assert got == want_tallies
        assert set(cluster._batch.uncompiled) <= want_uncompiled
        assert {k for k in want_uncompiled if cluster.node_of(k) is None} <= set(cluster._batch.uncompiled)
