"""Volcano v1.14 pkg/scheduler/plugins/cdp/cdp_test.go, against vcore's cycle.

* Test_CooldownTimePlugin_podPreemptStableTime: the cooldown a pod's ``volcano.sh/cooldown-time`` gives ("600s": 600
  s; "600abcde": none), read through the plugin (``CooldownProtectionPlugin.protected_until``).
* TestPreemptableFn: of three running pods, the one scheduled 100 s ago with a 600 s cooldown is no victim; the one
  whose cooldown does not parse and the one scheduled 800 s ago are. The Go test calls ssn.Preemptable on the three;
  here they run on one 3-cpu node, a higher-priority pod asking 2 cpu arrives, and preempt evicts exactly the two
  victims. The protected pod has the lowest priority, so without the plugin it would be the first victim.

Beyond the table: the reclaim side (reclaimable), each part's switch (enablePreemptable, enableReclaimable), a pod
that is not Running or has no PodScheduled condition is unprotected, and the label wins over the annotation.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

import vcore
from vcore.batch.plugins.cdp import CooldownProtectionPlugin
from vcore.batch.pods import COOLDOWN_TIME_KEY
from vcore.errors import ProfileError

from .volcano_fixtures import (
    PENDING,
    RUNNING,
    build_node,
    build_pod,
    build_podgroup,
    build_priority_class,
    build_queue,
    node_res,
    rl,
)


def scheduled(pod: dict, seconds_ago: float) -> dict:
    """makePod's PodScheduled condition, turned True ``seconds_ago``."""
    since = datetime.fromtimestamp(time.time() - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": since}]
    return pod


def running(name: str, cooldown: str | None, seconds_ago: float, priority: str, *, node: str = "n1", queue="q1"):
    """A one-pod job running on ``node`` with the cooldown annotation (None: without it)."""
    pg = build_podgroup(name, "c1", queue, 1, None, "Running", priority_class=priority)
    annotations = {} if cooldown is None else {COOLDOWN_TIME_KEY: cooldown}
    pod = build_pod("c1", name, node, RUNNING, rl("1", "1Gi"), name, annotations=annotations)
    return pg, scheduled(pod, seconds_ago)


def cluster_with(jobs: list[tuple[dict, dict]], queues=("q1",), cpu: int = 2) -> vcore.Cluster:
    """n1 (3 cpu) running ``jobs``, and q1's higher-priority preemptor asking ``cpu`` cpus."""
    cluster = vcore.Cluster()
    cluster.add_node(build_node("n1", node_res("3", "3Gi")))
    for value, name in ((1, "lowest"), (2, "low"), (100, "high")):
        cluster.add_priority_class(build_priority_class(name, value))
    for q in queues:
        cluster.add_queue(build_queue(q, 1))
    for pg, pod in jobs:
        cluster.add_podgroup(pg)
        cluster.add_pod(pod)
    cluster.add_podgroup(build_podgroup("preemptor", "c1", "q1", 1, None, "", priority_class="high"))
    cluster.add_pod(build_pod("c1", "preemptor", "", PENDING, rl(str(cpu), f"{cpu}Gi"), "preemptor"))
    return cluster


THREE = [
    running("task1", "600s", 100, "lowest"),  # protected for 500 s more
    running("task2", "600abcde", 100, "low"),  # not a duration: unprotected
    running("task3", "600s", 800, "low"),  # cooled down 200 s ago
]


def evicted(cluster: vcore.Cluster, cdp: dict | None, action: str = "preempt") -> list[str]:
    """The victims of one cycle; priority and conformance vote on them (conformance lets every pod here go), and cdp
    beside them in their tier unless None."""
    plugins: list[dict] = [{"name": "priority"}, {"name": "conformance"}]
    if cdp is not None:
        plugins.append({"name": "cdp", **cdp})
    cycle = {"actions": f"enqueue, allocate, {action}", "tiers": [{"plugins": plugins}]}
    return sorted(e.victim for e in vcore.Scheduler(cluster, cycle=cycle).run_cycle().evictions)


# -- Test_CooldownTimePlugin_podPreemptStableTime -------------------------------------------------------------------
@pytest.mark.parametrize(("value", "seconds"), [("600s", 600.0), ("600abcde", None)], ids=["normal", "not-enabled"])
def test_pod_cooldown_time(value, seconds):
    plugin = CooldownProtectionPlugin()
    since = "2026-01-01T00:00:00Z"
    until = plugin_open(plugin).protected_until((value, since))
    base = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    assert until == (None if seconds is None else base + seconds)


def plugin_open(plugin: CooldownProtectionPlugin) -> CooldownProtectionPlugin:
    class Session:  # the one thing the plugin reads of its session
        wall_clock = time.time()

    plugin.open(Session())  # type: ignore[arg-type]
    return plugin


# -- TestPreemptableFn ---------------------------------------------------------------------------------------------
def test_preemptable_fn():
    assert evicted(cluster_with(THREE), {}) == ["c1/task2", "c1/task3"]
    without = evicted(cluster_with(THREE), None)
    assert len(without) == 2 and "c1/task1" in without  # the lowest priority goes first


def test_enable_preemptable_off_protects_nothing():
    off = evicted(cluster_with(THREE), {"enablePreemptable": False})
    assert len(off) == 2 and "c1/task1" in off


def test_reclaimable_fn_and_its_switch():
    """reclaim across queues: q2's pods run beyond q2's share and q1's preemptor asks all 3 cpus; with the protected
    pod no victim set makes room, so nothing is evicted, and with cdp's reclaimable off all three go."""
    jobs = [
        running(name, cooldown, ago, "low", queue="q2")
        for name, cooldown, ago in (("task1", "600s", 100), ("task2", "600abcde", 100), ("task3", "600s", 800))
    ]
    assert evicted(cluster_with(jobs, queues=("q1", "q2"), cpu=3), {}, "reclaim") == []
    off = evicted(cluster_with(jobs, queues=("q1", "q2"), cpu=3), {"enableReclaimable": False}, "reclaim")
    assert off == ["c1/task1", "c1/task2", "c1/task3"]


def test_only_a_running_pod_with_a_scheduled_condition_is_protected():
    pg, pod = running("task1", "600s", 100, "lowest")
    pod["status"]["conditions"][0]["status"] = "False"
    unprotected = evicted(cluster_with([(pg, pod), *THREE[1:]]), {})
    assert len(unprotected) == 2 and "c1/task1" in unprotected


def test_the_label_wins_over_the_annotation():
    pg, pod = running("task1", "1s", 100, "lowest")  # the annotation says it cooled down long ago
    pod["metadata"]["labels"][COOLDOWN_TIME_KEY] = "600s"
    assert evicted(cluster_with([(pg, pod), *THREE[1:]]), {}) == ["c1/task2", "c1/task3"]


def test_a_bad_condition_time_names_the_field():
    pg, pod = running("task1", "600s", 100, "lowest")
    pod["status"]["conditions"][0]["lastTransitionTime"] = 5
    with pytest.raises(TypeError, match=r"pod c1/task1: status\.conditions\[0\]\.lastTransitionTime"):
        vcore.Cluster().add_pod(pod)


def test_arguments_are_refused():
    with pytest.raises(ProfileError, match=r"tiers\[0\]\.plugins\[0\]\.arguments\.cooldown"):
        vcore.Scheduler(
            vcore.Cluster(),
            cycle={"actions": "preempt", "tiers": [{"plugins": [{"name": "cdp", "arguments": {"cooldown": "1m"}}]}]},
        )
