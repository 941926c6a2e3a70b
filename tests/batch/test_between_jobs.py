"""run_cycle(between_jobs=...): a caller's work between two jobs of a cycle on the same cluster (an adapter's fast
path placing pods with schedule()), and add_pod adopting a pod schedule() already bound."""

from __future__ import annotations

import pytest

import vcore

from .builders import NS, build, gang, node, pod


def test_between_jobs_runs_after_each_job_and_the_cycle_sees_its_binds():
    # 3 nodes x 2 cpu; three 2-pod gangs of 1 cpu pods fill them. Between jobs the caller binds a 2-cpu pod with
    # schedule(): the cycle's later jobs see that node taken, so the last gang no longer fits.
    c = build([node(f"n{i}", "2") for i in range(3)], gang("a", 2), gang("b", 2), gang("c", 2))
    s = vcore.Scheduler(c)
    fast = vcore.Scheduler(
        c, {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}
    )
    calls = []

    def between():
        calls.append(len(c.pending_pods))
        if calls[-1] == 4 and calls.count(4) == 1:  # after the first gang
            (p,) = fast.schedule([pod("agent", cpu="2")])
            assert p.node is not None

    result = s.run_cycle(between_jobs=between)
    # Before each action (enqueue, allocate, backfill), after each job allocate tries, and at close after each
    # batch of Placements made (one here).
    assert calls == [6, 6, 4, 2, 2, 2, 2]
    placed = {b.pod.split("/")[1].rsplit("-", 1)[0] for b in result.bindings}
    assert len(placed) == 2 and not result.podgroups[f"{NS}/{({'a', 'b', 'c'} - placed).pop()}"].phase == "Running"
    assert c.n_pods == 2 * 2 + 1
    assert all(int(c.requested("cpu")[c.node_index(n)]) <= 2000 for n in c.node_names)


def test_between_jobs_must_be_callable():
    c = build(node("n0"), gang("a", 1))
    with pytest.raises(TypeError, match="between_jobs"):
        vcore.Scheduler(c).run_cycle(between_jobs=5)
    assert c.pending_pods == [f"{NS}/a-0"]


def test_add_pod_adopts_a_pod_schedule_bound_on_the_same_node():
    c = build(node("n0", "4"), node("n1", "4"))
    s = vcore.Scheduler(c)
    agent = pod("agent", cpu="3")
    (p,) = s.schedule([agent])
    running = dict(agent, spec={**agent["spec"], "nodeName": p.node})
    c.add_pod(running)  # the watch shows it bound: the batch layer learns it without a second accounting
    assert c.node_of(f"{NS}/agent") == p.node
    assert int(c.requested("cpu")[c.node_index(p.node)]) == 3000
    c.remove_pod(f"{NS}/agent")
    assert int(c.requested("cpu")[c.node_index(p.node)]) == 0


def test_add_pod_bound_elsewhere_than_schedule_put_it_is_refused():
    c = build(node("n0", "4"), node("n1", "4"))
    s = vcore.Scheduler(c)
    agent = pod("agent", cpu="3")
    (p,) = s.schedule([agent])
    other = "n1" if p.node == "n0" else "n0"
    with pytest.raises(vcore.PodAlreadyBoundError):
        c.add_pod(dict(agent, spec={**agent["spec"], "nodeName": other}))
    assert c.node_of(f"{NS}/agent") == p.node and not c.has_pod(f"{NS}/agent")


def test_pods_without_a_group_come_in_short_runs_when_a_caller_waits_between_jobs():
    # Plain pods go in runs of one native call each; with a caller waiting (a fast path), a run is short, so the
    # caller is never held for a whole queue of pods.
    from vcore.batch.actions.allocate import SINGLES_PER_CALL_INTERLEAVED as run

    c = build([node(f"n{i}", "64", "256Gi") for i in range(10)], [pod(f"p{i}", cpu="100m") for i in range(2 * run + 1)])
    calls = []
    result = vcore.Scheduler(c).run_cycle(between_jobs=lambda: calls.append(len(c.pending_pods)))
    assert len(result.bindings) == 2 * run + 1
    # Before allocate, every call sees all of them pending; then one call after each run.
    first_run = calls.index(run + 1)
    assert set(calls[:first_run]) == {2 * run + 1} and calls[first_run : first_run + 3] == [run + 1, 1, 0]


def test_the_placements_made_at_close_come_in_turns_of_the_caller(monkeypatch):
    # The cycle makes its Placement records at close: in batches, the caller's turn after each, so one long
    # stretch of record-making never holds a caller waiting between jobs.
    import vcore.batch.session as session

    monkeypatch.setattr(session, "PLACEMENTS_PER_TURN", 10)
    c = build([node(f"n{i}", "64", "256Gi") for i in range(4)], gang("a", 45, cpu="100m"))
    calls = []
    result = vcore.Scheduler(c).run_cycle(between_jobs=lambda: calls.append(len(c.pending_pods)))
    assert len(result.bindings) == 45
    assert calls.count(0) >= 5  # after allocate placed the gang: backfill's turn, then one per 10 records
