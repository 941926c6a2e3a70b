"""Arithmetic that cannot wrap: a node or pod whose numbers take a cluster total past vcore's bound (2**61) is
refused naming it; huge requests are unschedulable, never a cycle-wide error; one job's failure fails that job.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vcore
from tests.batch import builders as B
from vcore.batch.amounts import MAX_AMOUNT, summed, vector

EI = 2**60


def _cluster(*nodes: dict) -> vcore.Cluster:
    cluster = vcore.Cluster()
    for n in nodes:
        cluster.add_node(n)
    return cluster


def test_a_node_that_would_take_the_clusters_total_past_the_bound_is_refused_naming_it():
    cluster = _cluster(B.node("a", mem="1Ei"))
    before = cluster.allocatable_matrix.copy()
    with pytest.raises(
        ValueError,
        match=r"^node b: status\.allocatable\.memory: the cluster's total memory would "
        r"exceed 2\*\*61",
    ):
        cluster.add_node(B.node("b", mem="5Ei"))
    assert not cluster.has_node("b")
    np.testing.assert_array_equal(cluster.allocatable_matrix[:, :1], before[:, :1])
    cluster.add_node(B.node("b", mem="1Ei"))  # exactly at the bound: fine
    with pytest.raises(ValueError, match="^node b: status.allocatable.memory"):
        cluster.update_node(B.node("b", mem="2Ei"))  # an update is checked against the others' total too
    assert cluster.allocatable("memory")[cluster.node_index("b")] == EI


def test_two_nodes_of_5ei_do_not_poison_the_cycle():
    cluster = _cluster(B.node("a"))
    for name in ("big-1", "big-2"):
        with pytest.raises(ValueError, match=f"^node {name}: status.allocatable.memory: "):
            cluster.add_node(B.node(name, mem="5Ei"))
    cluster.add_pod(B.pod("p"))
    result = vcore.Scheduler(cluster).run_cycle()
    assert [b.pod for b in result.bindings] == [f"{B.NS}/p"]


def test_binding_what_would_overflow_is_refused_and_requested_never_goes_negative():
    cluster = _cluster(B.node("a", mem="1Ei"), B.node("b", mem="1Ei"))
    huge = B.pod("huge", mem="4Ei")
    with pytest.raises(ValueError, match=rf"^pod {B.NS}/huge: node a: the cluster's requested memory would exceed"):
        cluster.bind(huge, "a")
    cluster.bind(B.pod("half", mem=str(EI)), "a")
    with pytest.raises(ValueError, match="would exceed"):
        cluster.bind(B.pod("more", mem=str(EI + 1)), "b")  # per node fine, but the cluster's total is not
    assert (cluster.requested("memory") >= 0).all()
    assert cluster.node_of(f"{B.NS}/more") is None and cluster.n_pods == 1


def test_pending_pods_asking_4ei_are_unschedulable_and_the_rest_of_the_cycle_proceeds():
    cluster = _cluster(B.node("a"), B.node("b"))
    cluster.add_pod(B.pod("big-1", mem="4Ei"))
    cluster.add_pod(B.pod("big-2", mem="4Ei"))
    cluster.add_podgroup(B.podgroup("g", 2, min_resources={"memory": "6Ei"}))
    cluster.add_pod(B.pod("g-1", "g", mem="4Ei"))
    cluster.add_pod(B.pod("g-2", "g", mem="4Ei"))
    cluster.add_pod(B.pod("small"))
    for _ in range(2):  # and again, once the small pod is running
        result = vcore.Scheduler(cluster).run_cycle()
        assert "Insufficient memory" in result.unschedulable[f"{B.NS}/big-1"][1]
        assert (cluster.requested("memory") >= 0).all()
        for status in result.queues.values():
            assert all(v >= 0 for v in status.allocated.values())
    assert cluster.node_of(f"{B.NS}/small") is not None


def test_a_queue_with_huge_bounds_and_huge_min_resources_is_exact():
    cluster = _cluster(B.node("a"))
    cluster.add_queue(B.queue("q", capability={"memory": "7Ei", "cpu": "9000000000000"}, guarantee={"memory": "7Ei"}))
    for i in range(6):  # their minResources sum past 2**63
        cluster.add_podgroup(B.podgroup(f"g{i}", 1, queue="q", min_resources={"memory": "7Ei"}))
        cluster.add_pod(B.pod(f"p{i}", f"g{i}"))
    scheduler = vcore.Scheduler(
        cluster,
        cycle={
            "actions": "enqueue, allocate, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {"plugins": [{"name": "predicates"}, {"name": "capacity"}, {"name": "nodeorder"}]},
            ],
        },
    )
    result = scheduler.run_cycle()
    assert all(v >= 0 for s in result.queues.values() for v in s.allocated.values())


def test_one_jobs_failure_fails_that_job_and_not_the_cycle(monkeypatch):
    allocate = importlib.import_module("vcore.batch.actions.allocate")
    cluster = _cluster(B.node("a"), B.node("b"))
    cluster.add_podgroup(B.podgroup("bad", 1))
    cluster.add_pod(B.pod("bad-0", "bad"))
    cluster.add_podgroup(B.podgroup("good", 1))
    cluster.add_pod(B.pod("good-0", "good"))
    real = allocate.place_job

    def failing(ssn, job, allowed=None):
        if job.key == f"{B.NS}/bad":
            ssn.state.bind(job.pending[0].compiled, 0)  # bound, then something goes wrong before it is recorded
            raise OverflowError("a sum that does not fit")
        return real(ssn, job, allowed)

    monkeypatch.setattr(allocate, "place_job", failing)
    result = vcore.Scheduler(cluster).run_cycle()
    assert [b.pod for b in result.bindings] == [f"{B.NS}/good-0"]
    assert cluster.node_of(f"{B.NS}/bad-0") is None  # nothing the cycle does not return stays bound
    assert (
        result.unschedulable[f"{B.NS}/bad-0"][1]
        == "vcore could not schedule the job: OverflowError: a sum that does not fit"
    )


def test_a_cycle_that_raises_binds_nothing(monkeypatch):
    from vcore.batch import session

    cluster = _cluster(B.node("a"))
    for i in range(3):
        cluster.add_pod(B.pod(f"p{i}"))

    def broken_close(self):
        raise RuntimeError("close failed")

    monkeypatch.setattr(session.Session, "close", broken_close)
    with pytest.raises(RuntimeError):
        vcore.Scheduler(cluster).run_cycle()
    assert cluster.n_pods == 0 and len(cluster.pending_pods) == 3


def test_amount_vectors_saturate_instead_of_wrapping():
    assert vector([2**70, 5]).tolist() == [MAX_AMOUNT, 5]
    big = np.array([MAX_AMOUNT, 1], np.int64)
    assert summed([big] * 10, np.zeros(2, np.int64)).tolist() == [MAX_AMOUNT, 10]
    assert summed([big] * 3, big).tolist() == [MAX_AMOUNT, 4]


quantities = st.sampled_from(["1", "3", "1Gi", "1Ei", "2Ei", "4Ei", "9Ei", str(2**62), str(2**63 - 1)])


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(quantities, quantities, st.integers(0, 3)), min_size=1, max_size=8),
    st.lists(quantities, min_size=1, max_size=3),
)
def test_random_huge_quantities_never_break_a_cycle(pods, node_memory):
    cluster = vcore.Cluster()
    for i, mem in enumerate(node_memory):
        try:
            cluster.add_node(B.node(f"n{i}", cpu="64", mem=mem))
        except ValueError:
            pass  # past the bound: refused, naming the node
    for i, (cpu, mem, group) in enumerate(pods):
        if group and f"{B.NS}/g{group}" not in cluster.podgroups:
            try:
                cluster.add_podgroup(B.podgroup(f"g{group}", 1, min_resources={"memory": mem}))
            except ValueError as e:  # past 2**63-1 bytes: refused, naming the PodGroup
                assert str(e).startswith(f"podgroup {B.NS}/g{group}: spec.minResources")
        try:
            cluster.add_pod(B.pod(f"p{i}", f"g{group}" if group else None, cpu=cpu, mem=mem))
        except ValueError as e:  # past 2**63-1 (9Ei, or cpu in millicores): refused, naming the pod and the field
            assert str(e).startswith(f"pod {B.NS}/p{i}: spec.containers[0].resources.requests.")
    scheduler = vcore.Scheduler(cluster)
    for _ in range(2):
        scheduler.run_cycle()
        for row in cluster.requested_matrix:
            assert (row >= 0).all()
        assert (cluster.requested_matrix <= np.maximum(cluster.allocatable_matrix, 0)).all()
