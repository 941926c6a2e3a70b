"""The fast path's scheduling queue (vcore_kube.schedqueue) against kube-scheduler's queue rules: active order,
conflict first, backoff doubling, queueing hints, the move-request cycle, the unschedulable flush."""

from __future__ import annotations

import pytest

from vcore_kube.schedqueue import (
    ALL_EVENTS,
    NODE_ADDED,
    NODE_UPDATED,
    POD_DELETED,
    SHARD_CHANGED,
    SchedulingQueue,
    hints,
)


def test_active_order_is_priority_then_arrival():
    q = SchedulingQueue()
    q.add("low", 0, now=1.0)
    q.add("high-late", 100, now=3.0)
    q.add("high-early", 100, now=2.0)
    q.add("mid", 50, now=0.5)
    assert q.pop(10, now=4.0) == ["high-early", "high-late", "mid", "low"]
    assert q.n_active == 0


def test_pop_takes_at_most_n():
    q = SchedulingQueue()
    for i in range(5):
        q.add(f"p{i}", 0, now=float(i))
    assert q.pop(2, now=9.0) == ["p0", "p1"] and q.n_active == 3
    assert q.pop(9, now=9.0) == ["p2", "p3", "p4"]


def test_a_pod_that_lost_a_conflict_goes_first_without_backoff():
    q = SchedulingQueue()
    q.add("vip", 1000, now=0.0)
    q.add("loser", 0, now=1.0)
    assert q.pop(1, now=2.0) == ["vip"]
    assert q.pop(1, now=2.0) == ["loser"]
    q.conflict("loser")
    q.add("vip2", 1000, now=3.0)
    assert q.pop(1, now=3.0) == ["loser"]


@pytest.mark.parametrize(
    "attempts, expected",
    [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)],
    ids=["1st", "2nd", "3rd", "4th", "capped", "still-capped"],
)
def test_backoff_doubles_up_to_the_maximum(attempts, expected):
    q = SchedulingQueue(initial_backoff=1.0, max_backoff=10.0)
    q.add("p", 0, now=0.0)
    for _ in range(attempts):
        assert q.pop(1, now=1000.0) == ["p"]
        q.failed("p", now=100.0)
    assert q.pods["p"].backoff_until == 100.0 + expected
    assert q.next_backoff() == 100.0 + expected
    assert q.pop(1, now=100.0 + expected - 0.01) == []
    assert q.pop(1, now=100.0 + expected) == ["p"]


@pytest.mark.parametrize(
    "reasons, event, moves",
    [
        ({"Insufficient cpu": 3}, POD_DELETED, True),
        ({"Insufficient cpu": 3}, NODE_ADDED, True),
        ({"Too many pods": 1}, NODE_UPDATED, True),
        ({"node(s) had untolerated taint(s)": 2}, POD_DELETED, False),
        ({"node(s) had untolerated taint(s)": 2}, NODE_UPDATED, True),
        ({"node(s) didn't match Pod's node affinity/selector": 2}, POD_DELETED, False),
        ({"node(s) didn't match Pod's node affinity/selector": 2}, SHARD_CHANGED, True),
        ({}, POD_DELETED, True),  # nothing to go by: any event
    ],
    ids=[
        "cpu-pod-deleted",
        "cpu-node-added",
        "pods-node-updated",
        "taint-pod-deleted",
        "taint-node-updated",
        "selector-pod-deleted",
        "selector-shard",
        "no-reasons",
    ],
)
def test_queueing_hints(reasons, event, moves):
    q = SchedulingQueue(initial_backoff=1.0)
    q.add("p", 0, now=0.0)
    q.pop(1, now=0.0)
    q.unschedulable("p", reasons, now=0.0)
    assert q.where("p") == "unschedulable"
    assert q.move(event, now=5.0) == int(moves)
    assert q.where("p") == ("active" if moves else "unschedulable")


def test_a_move_during_backoff_goes_to_the_backoff_queue():
    q = SchedulingQueue(initial_backoff=1.0)
    q.add("p", 0, now=0.0)
    q.pop(1, now=0.0)
    q.unschedulable("p", {"Insufficient cpu": 1}, now=10.0)
    q.move(POD_DELETED, now=10.5)
    assert q.where("p") == "backoff"
    assert q.pop(1, now=10.9) == [] and q.pop(1, now=11.0) == ["p"]


def test_an_event_during_the_attempt_sends_the_failure_to_backoff_not_the_pool():
    q = SchedulingQueue(initial_backoff=1.0)
    q.add("p", 0, now=0.0)
    assert q.pop(1, now=0.0) == ["p"]
    q.move(NODE_ADDED, now=0.1)  # a node arrived while p was being tried
    q.unschedulable("p", {"Insufficient cpu": 1}, now=0.2)
    assert q.where("p") == "backoff"
    q.add("r", 0, now=0.3)
    assert q.pop(1, now=0.3) == ["r"]  # a later attempt, no event since: the pool
    q.unschedulable("r", {"Insufficient cpu": 1}, now=0.4)
    assert q.where("r") == "unschedulable"


def test_unschedulable_pods_are_flushed_after_the_maximum_time():
    q = SchedulingQueue(initial_backoff=1.0, max_in_unschedulable=300.0)
    q.add("p", 0, now=0.0)
    q.pop(1, now=0.0)
    q.unschedulable("p", {"node(s) had untolerated taint(s)": 1}, now=0.0)
    assert q.pop(1, now=299.0) == []
    assert q.pop(1, now=300.0) == ["p"]


def test_update_of_a_popped_pod_waits_for_its_outcome_and_delete_forgets():
    q = SchedulingQueue()
    q.add("p", 0, now=0.0)
    q.pop(1, now=0.0)
    q.add("p", 5, now=1.0)  # an update while it is tried
    assert q.where("p") == "popped" and q.pods["p"].priority == 5
    q.delete("p")
    assert "p" not in q and q.pop(1, now=2.0) == [] and len(q) == 0


def test_hints_of_unknown_reasons_are_every_event():
    assert hints({"something new": 1}) == ALL_EVENTS
    assert hints(["Insufficient memory", "node(s) had untolerated taint(s)"]) >= {POD_DELETED, NODE_UPDATED}
    with pytest.raises(ValueError):
        SchedulingQueue(initial_backoff=0)
