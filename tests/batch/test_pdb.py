"""Volcano's ``pdb`` plugin in the cycle: preempt and reclaim evict no pod past a PodDisruptionBudget.

The three cases of Volcano v1.14's pdb_test.go (TestPreemptableAndReclaimableFn: no budget, a budget allowing no
disruption, one allowing one) run through both actions, plus the plugin's switches and what stays as it was
without the plugin."""

from __future__ import annotations

import pytest

import vcore
from vcore.errors import ProfileError

from .builders import build, flatten, gang, node, pod, priority_class, queue

JOB_LABEL = {"volcano.sh/job-name": "job-1"}  # the label of Volcano's test pods
# Neither gang (a one-pod job at its minimum keeps its pod) nor drf (the preemptor's share is the larger) would
# let these victims go, so the plugins beside pdb are those that do.
T1 = [{"name": "priority"}, {"name": "conformance"}]


def cycle(actions: str, pdb: dict | None) -> dict:
    plugins = [{"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]
    # One tier: as in Volcano, a tier whose plugins leave no victim hands the decision to the next, so proportion in a
    # later tier would reclaim what pdb keeps.
    return {"actions": actions, "tiers": [{"plugins": T1 + ([pdb] if pdb is not None else []) + plugins}]}


def labelled(obj: dict, labels: dict[str, str] = JOB_LABEL) -> dict:
    obj["metadata"]["labels"] = dict(labels)
    return obj


def budget(allowed: int, labels: dict[str, str] = JOB_LABEL, disrupted: tuple[str, ...] = ()) -> dict:
    status: dict = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {name: "2025-01-01T00:00:00Z" for name in disrupted}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "test-pdb", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": dict(labels)}},
        "status": status,
    }


def preempt_cluster(cpu_wanted: str, budgets: list[dict]) -> vcore.Cluster:
    """Two running low-priority pods of job-1 on a full node; a high-priority pod wanting ``cpu_wanted``."""
    c = build(
        node("n1", "2"),
        priority_class("hi", 1000),
        priority_class("lo", 10),
        labelled(pod("test-pod1", None, "1", priority_class="lo", node="n1")),
        labelled(pod("test-pod2", None, "1", priority_class="lo", node="n1")),
        *gang("high", 1, cpu=cpu_wanted, priority_class="hi"),
    )
    for b in budgets:
        c.add_pod_disruption_budget(b)
    return c


def reclaim_cluster(budgets: list[dict]) -> vcore.Cluster:
    """q1 took the whole node while q2 was empty; q2 wants half of it back."""
    running = [labelled(pod(f"test-pod{i}", None, "1", queue="q1", node="n1", phase="Running")) for i in (1, 2)]
    c = build(*flatten(node("n1", "2"), queue("q1"), queue("q2"), running, gang("want", 1, cpu="1", queue="q2")))
    for b in budgets:
        c.add_pod_disruption_budget(b)
    return c


# TestPreemptableAndReclaimableFn: (budgets, victims a preemptor needing one pod's room may take)
VOLCANO_CASES = [
    pytest.param([], {"ns/test-pod1", "ns/test-pod2"}, id="test without pdbs"),
    pytest.param([budget(0)], set(), id="test with pdbs(can evict 0 pod)"),
    pytest.param([budget(1)], {"ns/test-pod1"}, id="test with pdbs(can evict 1 pod)"),
]


@pytest.mark.parametrize("budgets, allowed", VOLCANO_CASES)
def test_preempt_evicts_only_what_budgets_allow(budgets, allowed):
    result = vcore.Scheduler(
        preempt_cluster("1", budgets), cycle=cycle("enqueue, allocate, preempt", {"name": "pdb"})
    ).run_cycle()
    victims = {e.victim for e in result.evictions}
    assert len(victims) == (1 if allowed else 0) and victims <= allowed


@pytest.mark.parametrize("budgets, allowed", VOLCANO_CASES)
def test_preempt_needing_both_pods_takes_them_only_when_both_may_go(budgets, allowed):
    result = vcore.Scheduler(
        preempt_cluster("2", budgets), cycle=cycle("enqueue, allocate, preempt", {"name": "pdb"})
    ).run_cycle()
    victims = {e.victim for e in result.evictions}
    assert victims == (allowed if len(allowed) == 2 else set())


@pytest.mark.parametrize("budgets, allowed", VOLCANO_CASES)
def test_reclaim_evicts_only_what_budgets_allow(budgets, allowed):
    result = vcore.Scheduler(
        reclaim_cluster(budgets), cycle=cycle("enqueue, allocate, reclaim", {"name": "pdb"})
    ).run_cycle()
    victims = {e.victim for e in result.evictions}
    assert len(victims) == (1 if allowed else 0) and victims <= allowed
    assert all(e.reason == "reclaim" for e in result.evictions)


def test_a_disrupted_pod_spends_no_budget():
    """Pods in status.disruptedPods are already counted by the API server: evicting test-pod1 spends nothing,
    so with one disruption allowed both may go."""
    result = vcore.Scheduler(
        preempt_cluster("2", [budget(1, disrupted=("test-pod1",))]),
        cycle=cycle("enqueue, allocate, preempt", {"name": "pdb"}),
    ).run_cycle()
    assert {e.victim for e in result.evictions} == {"ns/test-pod1", "ns/test-pod2"}


def test_budgets_only_bind_with_the_plugin():
    """Without ``pdb`` in the tiers (as in Volcano) budgets do not stop preempt or reclaim."""
    result = vcore.Scheduler(
        preempt_cluster("2", [budget(0)]), cycle=cycle("enqueue, allocate, preempt", None)
    ).run_cycle()
    assert {e.victim for e in result.evictions} == {"ns/test-pod1", "ns/test-pod2"}
    result = vcore.Scheduler(reclaim_cluster([budget(0)]), cycle=cycle("enqueue, allocate, reclaim", None)).run_cycle()
    assert len(result.evictions) == 1


def test_switches_turn_the_filter_off_per_action():
    """enablePreemptable / enableReclaimable false: the plugin leaves that action's victims alone."""
    no_preempt = {"name": "pdb", "enablePreemptable": False}
    result = vcore.Scheduler(
        preempt_cluster("1", [budget(0)]), cycle=cycle("enqueue, allocate, preempt", no_preempt)
    ).run_cycle()
    assert len(result.evictions) == 1
    result = vcore.Scheduler(
        reclaim_cluster([budget(0)]), cycle=cycle("enqueue, allocate, reclaim", no_preempt)
    ).run_cycle()
    assert result.evictions == []
    no_reclaim = {"name": "pdb", "enableReclaimable": False}
    result = vcore.Scheduler(
        reclaim_cluster([budget(0)]), cycle=cycle("enqueue, allocate, reclaim", no_reclaim)
    ).run_cycle()
    assert len(result.evictions) == 1


def test_budget_of_another_label_or_namespace_does_not_protect():
    other_label = budget(0, labels={"volcano.sh/job-name": "job-2"})
    other_namespace = dict(budget(0), metadata={"name": "elsewhere", "namespace": "other"})
    result = vcore.Scheduler(
        preempt_cluster("2", [other_label, other_namespace]), cycle=cycle("enqueue, allocate, preempt", {"name": "pdb"})
    ).run_cycle()
    assert len(result.evictions) == 2


def test_plugin_takes_no_arguments():
    with pytest.raises(ProfileError, match=r"tiers\[0\]\.plugins\[2\]\.arguments"):
        vcore.Scheduler(vcore.Cluster(), cycle=cycle("allocate", {"name": "pdb", "arguments": {"x": 1}}))
