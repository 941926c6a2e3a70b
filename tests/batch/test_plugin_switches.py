"""Every PluginOption switch of a volcano-scheduler.conf, by Volcano's key: each test runs one small cycle with the
switch unset (on: plugins.ApplyPluginConfDefaults) and set false, and checks that the outcome changes the way
Volcano's framework changes it (framework/session_plugins.go: a plugin whose switch is off is not asked, and a
function nobody answers falls back to Volcano's default). Switches of functions no configured plugin registers
change nothing, in Volcano as here."""

from __future__ import annotations

from typing import Any

import pytest

import vcore
from vcore.batch.config import PLUGIN_SWITCHES, CycleConfig

from .builders import NS, build, gang, node, pod, podgroup, priority_class, queue

PRIORITY = [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]


def conf(actions: str, *tiers: list[dict], off: tuple[str, str] | None = None) -> dict:
    """A conf of the given tiers; ``off``: (plugin, switch) to set false."""
    out = []
    for tier in tiers:
        plugins = []
        for entry in tier:
            entry = dict(entry)
            if off is not None and entry["name"] == off[0]:
                entry[off[1]] = False
            plugins.append(entry)
        out.append({"plugins": plugins})
    return {"actions": actions, "tiers": out}


def run(objects: list, config: dict) -> vcore.CycleResult:
    return vcore.Scheduler(build(*objects), cycle=config).run_cycle()


def bound(result: vcore.CycleResult) -> set[str]:
    return {b.pod for b in result.bindings if b.node}


def evicted(result: vcore.CycleResult) -> set[str]:
    return {e.victim for e in result.evictions}


def both(
    objects: list, actions: str, tiers: list[list[dict]], plugin: str, switch: str
) -> tuple[vcore.CycleResult, vcore.CycleResult]:
    """The cycle with the switch on (unset) and off."""
    return (run(objects, conf(actions, *tiers)), run(objects, conf(actions, *tiers, off=(plugin, switch))))


def hi_lo() -> list[dict]:
    return [priority_class("hi", 1000), priority_class("lo", 10)]


#: Switches of functions that no plugin vcore has registers (see the last test).
NOT_REGISTERED = [
    "EnabledClusterOrder",
    "enableBestNode",
    "enableTargetJob",
    "enableReservedNodes",
    "enabledVictim",
    "enabledHyperNodeOrder",
    "enabledHyperNodeGradient",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
]


def test_every_volcano_key_has_its_test():
    tested = {name[len("test_") :] for name in globals() if name.startswith("test_")}
    assert set(PLUGIN_SWITCHES) == (tested & set(PLUGIN_SWITCHES)) | set(NOT_REGISTERED)


def test_enableJobOrder():
    # One cpu for two jobs: the priority plugin's order puts the later, high-priority job first; without it, the
    # earlier job (creation time, Volcano's last order) goes first.
    objects = [
        node("n1", "1"),
        *hi_lo(),
        *gang("early", 1, priority_class="lo", created="2026-01-01T00:00:00Z"),
        *gang("late", 1, priority_class="hi", created="2026-01-01T00:00:01Z"),
    ]
    on, off = both(
        objects, "enqueue, allocate", [[{"name": "priority"}, {"name": "gang"}]], "priority", "enableJobOrder"
    )
    assert bound(on) == {f"{NS}/late-0"} and bound(off) == {f"{NS}/early-0"}


def test_enableTaskOrder():
    # An elastic job (minMember 1) with room for one pod: the priority plugin's task order places the
    # higher-priority pod; without it, the pods go in the order they came.
    objects = [node("n1", "1"), podgroup("job", 1), pod("job-a", "job", priority=1), pod("job-b", "job", priority=9)]
    on, off = both(
        objects, "enqueue, allocate", [[{"name": "priority"}, {"name": "gang"}]], "priority", "enableTaskOrder"
    )
    assert bound(on) == {f"{NS}/job-b"} and bound(off) == {f"{NS}/job-a"}


def test_enableJobReady():
    # A gang of 3 with room for 2: gang's JobReady keeps it all or nothing; with no JobReady answering, Volcano
    # commits what was allocated.
    objects = [node("n1", "2"), *gang("job", 3)]
    on, off = both(objects, "enqueue, allocate", [[{"name": "gang"}]], "gang", "enableJobReady")
    assert bound(on) == set() and len(bound(off)) == 2


def _starving_gang() -> list[dict]:
    """A high-priority gang of 2 (1 cpu each) and one node holding a low-priority job above its minimum by one."""
    return [
        node("n1", "2"),
        *hi_lo(),
        podgroup("lo", 1, priority_class="lo"),
        pod("lo-0", "lo", node="n1", priority_class="lo"),
        pod("lo-1", "lo", node="n1", priority_class="lo"),
        *gang("hi", 2, priority_class="hi"),
    ]


def test_enableJobPipelined():
    # Only one pod of the gang of 2 can be made room for: gang's JobPipelined discards the evictions; with no
    # JobPipelined answering, the job is let through and the eviction stands.
    on, off = both(_starving_gang(), "enqueue, preempt", [PRIORITY], "gang", "enableJobPipelined")
    assert evicted(on) == set() and evicted(off) == {f"{NS}/lo-0"}


def test_enableJobStarving():
    # gang and priority call the gang starving; with neither asked, no job is starving and nothing is preempted.
    objects = [
        node("n1", "1"),
        *hi_lo(),
        podgroup("lo", 0, priority_class="lo"),
        pod("lo-0", "lo", node="n1", priority_class="lo"),
        *gang("hi", 1, priority_class="hi"),
    ]
    tiers = [[{"name": "priority", "enableJobStarving": False}, {"name": "gang"}, {"name": "conformance"}]]
    on, off = both(objects, "enqueue, preempt", tiers, "gang", "enableJobStarving")
    assert evicted(on) == {f"{NS}/lo-0"} and evicted(off) == set()


def test_enablePreemptable():
    # With priority's Preemptable off, gang and conformance decide alone: a low-priority job may then take a
    # high-priority pod's place (priority no longer forbids it).
    objects = [
        node("n1", "1"),
        *hi_lo(),
        podgroup("hi", 0, priority_class="hi"),
        pod("hi-0", "hi", node="n1", priority_class="hi"),
        *gang("lo", 1, priority_class="lo"),
    ]
    on, off = both(objects, "enqueue, preempt", [PRIORITY], "priority", "enablePreemptable")
    assert evicted(on) == set() and evicted(off) == {f"{NS}/hi-0"}


def test_enableReclaimable():
    # capacity: q1 holds exactly what it deserves (one cpu), so capacity gives no victim from it; with its
    # Reclaimable off, gang and conformance decide alone and take from q1 anyway.
    objects = [
        node("n1", "1"),
        queue("q1", deserved={"cpu": "1"}),
        queue("q2", deserved={"cpu": "1"}),
        podgroup("own", 0, queue="q1"),
        pod("own-0", "own", node="n1", phase="Running"),
        *gang("want", 1, queue="q2"),
    ]
    # (one tier, as Volcano's TestReclaim: the first tier whose plugins leave victims decides)
    on, off = both(objects, "enqueue, reclaim", [[*PRIORITY, {"name": "capacity"}]], "capacity", "enableReclaimable")
    assert evicted(on) == set() and evicted(off) == {f"{NS}/own-0"}


def test_enablePreemptive():
    # proportion: q1 and q2 (weight 1 each) deserve 1.5 of 3 cpus; q2 holds one and asks one more, past its
    # deserved share: Preemptive refuses; off, it reclaims from q1, which holds two.
    objects = [
        node("n1", "3"),
        queue("q1"),
        queue("q2"),
        podgroup("own", 0, queue="q1"),
        pod("own-0", "own", node="n1", phase="Running"),
        pod("own-1", "own", node="n1", phase="Running"),
        podgroup("has", 0, queue="q2"),
        pod("has-0", "has", node="n1", phase="Running"),
        *gang("want", 1, queue="q2"),
    ]
    on, off = both(objects, "enqueue, reclaim", [[*PRIORITY, {"name": "proportion"}]], "proportion", "enablePreemptive")
    assert evicted(on) == set() and evicted(off) == {f"{NS}/own-0"}


def _priority_queues() -> list[dict]:
    """Two queues racing for one cpu: q-b has the higher queue priority, q-a the earlier name."""
    qa, qb = queue("q-a"), queue("q-b")
    qb["spec"]["priority"] = 10
    return [node("n1", "1"), qa, qb, *gang("a", 1, queue="q-a"), *gang("b", 1, queue="q-b")]


def test_enableQueueOrder():
    # (proportion's Allocatable off: half a cpu each is all either queue deserves)
    tiers = [[{"name": "gang"}], [{"name": "proportion", "enabledAllocatable": False}]]
    on, off = both(_priority_queues(), "enqueue, allocate", tiers, "proportion", "enableQueueOrder")
    assert bound(on) == {f"{NS}/b-0"} and bound(off) == {f"{NS}/a-0"}


def test_enabledAllocatable():
    # q1 (weight 1 of 4) deserves one of 4 cpus and holds two: proportion's Allocatable refuses it a third.
    objects = [
        node("n1", "4"),
        queue("q1", 1),
        queue("q2", 3),
        podgroup("run", 0, queue="q1"),
        pod("run-0", "run", "2", node="n1"),
        *gang("more", 1, queue="q1"),
        *gang("other", 1, cpu="3", queue="q2"),
    ]
    on, off = both(
        objects, "enqueue, allocate", [[{"name": "gang"}], [{"name": "proportion"}]], "proportion", "enabledAllocatable"
    )
    assert f"{NS}/more-0" not in bound(on) and f"{NS}/more-0" in bound(off)


def test_enabledOverused():
    # q1 holds at least its deserved on every resource (1 cpu and 4Gi of it): Overused skips the queue. With
    # Allocatable off in both runs, only Overused keeps q1 from more.
    objects = [
        node("n1", "4", "16Gi"),
        queue("q1", 1),
        queue("q2", 3),
        podgroup("run", 0, queue="q1"),
        pod("run-0", "run", "2", "8Gi", node="n1"),
        *gang("more", 1, queue="q1"),
        *gang("other", 1, cpu="3", mem="12Gi", queue="q2"),
    ]
    tiers = [[{"name": "gang"}], [{"name": "proportion", "enabledAllocatable": False}]]
    on, off = both(objects, "enqueue, allocate", tiers, "proportion", "enabledOverused")
    assert f"{NS}/more-0" not in bound(on) and f"{NS}/more-0" in bound(off)
    assert "overused" in on.unschedulable[f"{NS}/more-0"][1]


def test_enableJobEnqueued():
    # overcommit admits up to 1.2 times the cluster: a minResources of 13 cpus on 10 stays Pending; unasked, the
    # job is admitted (its pods then wait for room in allocate).
    objects = [node("n1", "10"), *gang("big", 1, min_resources={"cpu": "13"})]
    on, off = both(objects, "enqueue", [[{"name": "overcommit"}]], "overcommit", "enableJobEnqueued")
    assert on.podgroups[f"{NS}/big"].phase == "Pending" and off.podgroups[f"{NS}/big"].phase == "Inqueue"
    assert on.enqueued == [] and off.enqueued == [f"{NS}/big"]


def test_enableHierarchy():
    # capacity, hierarchical: only leaf queues take jobs; flat, a queue with children is a queue like another.
    parent, child = queue("parent"), queue("child", parent="parent")
    objects = [node("n1", "4"), parent, child, *gang("job", 1, queue="parent")]
    flat = run(objects, conf("enqueue, allocate", [{"name": "gang"}], [{"name": "capacity"}]))
    nested = run(
        objects, conf("enqueue, allocate", [{"name": "gang"}], [{"name": "capacity", "enableHierarchy": True}])
    )
    assert bound(flat) == {f"{NS}/job-0"} and bound(nested) == set()


def test_enablePredicate():
    # The predicates plugin's filters: off, Volcano asks only for resources (the node selector is not looked at).
    p = pod("solo-0")
    p["spec"]["nodeSelector"] = {"zone": "a"}
    objects = [node("n1", "4", labels={"zone": "b"}), p]
    on, off = both(objects, "allocate", [[{"name": "predicates"}]], "predicates", "enablePredicate")
    assert bound(on) == set() and bound(off) == {f"{NS}/solo-0"}


def test_enableNodeOrder():
    # nodeorder's scores (least requested first): on, the emptier node; off, nodeorder scores nothing.
    def profile(switch: bool) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": "nodeorder"} if switch else {"name": "nodeorder", "enableNodeOrder": False}
        return CycleConfig.from_config({"actions": "allocate", "tiers": [{"plugins": [entry]}]}).node_profile()

    assert profile(True)["plugins"]["score"]["enabled"] and not profile(False)["plugins"]["score"]["enabled"]
    objects = [
        node("n1", "4"),
        node("n2", "4"),
        podgroup("busy", 0),
        pod("busy-0", "busy", "3", node="n1"),
        pod("solo-0"),
    ]
    on = run(objects, conf("allocate", [{"name": "nodeorder"}]))
    assert [(b.pod, b.node) for b in on.bindings] == [(f"{NS}/solo-0", "n2")]


@pytest.mark.parametrize("switch", NOT_REGISTERED)
def test_switches_of_functions_no_configured_plugin_registers(switch):
    """ClusterOrder, BestNode, TargetJob, ReservedNodes and Victim are registered by Volcano plugins vcore does not
    have (tdm, rescheduling, ...); the HyperNode and SubJob ones by network-topology-aware and gang for what vcore's
    own topology search and sub-group placement do (they keep every constraint whatever the switch). Accepted with
    Volcano's key; the cycle is the same either way."""
    objects = [
        node("n1", "2"),
        *hi_lo(),
        podgroup("lo", 0, priority_class="lo"),
        pod("lo-0", "lo", node="n1", priority_class="lo"),
        *gang("job", 2, priority_class="hi"),
    ]
    tiers = [[*PRIORITY, {"name": "network-topology-aware"}]]
    on, off = (run(objects, conf("enqueue, allocate, preempt", *tiers, off=(p, switch))) for p in ("nobody", "gang"))
    assert (bound(on), evicted(on)) == (bound(off), evicted(off))
    assert (
        CycleConfig.from_config(conf("allocate", *tiers, off=("gang", switch))).plugin("gang").enabled(switch) is False
    )


def test_an_unset_switch_is_on_and_every_switch_answers_false():
    config = CycleConfig.from_config(
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "gang"}, {"name": "priority", **{k: False for k in PLUGIN_SWITCHES}}]}],
        }
    )
    assert all(config.plugin("gang").enabled(k) for k in PLUGIN_SWITCHES if k != "enableHierarchy")
    assert not any(config.plugin("priority").enabled(k) for k in PLUGIN_SWITCHES)
