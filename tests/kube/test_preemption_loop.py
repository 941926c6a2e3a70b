"""DefaultPreemption in the scheduling loop, in process with a recording binder and recorder: the decision for a
pod without a gang (victims to preempt, lower-priority nominations cleared, the preemptor nominated), its PostFilter
text in FailedScheduling, no second preemption while the victim terminates, the retry once it is gone; gangs are
left to the cycle's own preempt action, and a profile without DefaultPreemption preempts nothing."""

from __future__ import annotations

import pytest

from vcore_kube.batchcycle import BatchCycle
from vcore_kube.config import load_config
from vcore_kube.convert import Converter
from vcore_kube.loop import SchedulingLoop
from vcore_kube.metrics import Metrics
from vcore_kube.testenv.objects import node, pod

from .test_loop import RecordingBinder

PREEMPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


class Recorder:
    def __init__(self):
        self.failed, self.preempted, self.nominated = [], [], []

    def scheduled(self, pod, node):
        pass

    def failed_scheduling(self, pod, message):
        self.failed.append((pod["metadata"]["name"], message))

    def gated(self, pod):
        pass

    def podgroup_status(self, podgroup, status):
        pass

    def preempt(self, victim, preemptor, node):
        self.preempted.append((victim["metadata"]["name"], preemptor["metadata"]["name"], node))

    def nominate(self, pod, node):
        self.nominated.append((pod["metadata"]["name"], node))


def _pod(name, uid, *, cpu="1", priority=0, node_name=None, rv="1", nominated=None, **kw):
    p = pod(name, "ns", cpu=cpu, node_name=node_name, **kw)
    p["metadata"].update(uid=uid, resourceVersion=rv, creationTimestamp="2025-01-01T00:00:00Z")
    p["spec"]["priority"] = priority
    if nominated:
        p["status"] = {"nominatedNodeName": nominated}
    return p


def _loop(profile=None):
    config = load_config({"podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10})
    converter = Converter()
    now = [100.0]
    lp = SchedulingLoop(
        config,
        converter,
        BatchCycle(converter, profile),
        RecordingBinder(),
        Recorder(),
        Metrics(),
        clock=lambda: now[0],
    )
    lp.now = now
    lp.leading.set()
    lp.event("Node", "ADDED", node("n1", cpu="2"))
    lp.event("Pod", "ADDED", _pod("low", "u-low", cpu="2", priority=10, node_name="n1"))
    lp.drain()
    return lp


@pytest.fixture
def loop():
    return _loop()


def test_preemptor_evicts_nominates_and_binds_once_the_victim_is_gone(loop):
    loop.event("Pod", "ADDED", _pod("waiting", "u-w", cpu="1", priority=5, nominated="n1"))  # lower, nominated
    loop.event("Pod", "ADDED", _pod("urgent", "u-urgent", cpu="2", priority=1000))
    loop.drain()
    assert loop.schedule_once() == 0
    rec = loop.recorder
    assert rec.preempted == [("low", "urgent", "n1")]
    assert rec.nominated == [("waiting", None), ("urgent", "n1")]
    assert dict(rec.failed)["urgent"] == "0/1 nodes are available: 1 Insufficient cpu."  # nothing to add: it found one
    assert loop.metrics.evictions.labels("preempt")._value.get() == 1
    # The API server tells what was written: the nomination, the victim terminating with its condition.
    loop.event("Pod", "MODIFIED", _pod("urgent", "u-urgent", cpu="2", priority=1000, rv="2", nominated="n1"))
    victim = _pod("low", "u-low", cpu="2", priority=10, node_name="n1", rv="2")
    victim["metadata"]["deletionTimestamp"] = "2025-01-01T00:01:00Z"
    victim["status"] = {"conditions": [PREEMPTED]}
    loop.event("Pod", "MODIFIED", victim)
    loop.drain()
    loop.now[0] += 400  # past every backoff and the unschedulable flush (5 minutes)
    assert loop.schedule_once() == 0
    assert rec.preempted == [("low", "urgent", "n1")]  # no second victim while the first terminates
    assert dict(rec.failed)["urgent"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    loop.event("Pod", "DELETED", victim)  # its resources are free: the preemptor is woken (after its backoff)
    loop.drain()
    loop.now[0] += 10
    assert loop.schedule_once() == 1 and loop.binder.submitted[-1][:2] == ("urgent", "n1")


def test_a_pod_of_a_gang_is_left_to_the_cycle(loop):
    loop.event(
        "PodGroup",
        "ADDED",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "ns", "uid": "pg"},
            "spec": {"minMember": 2},
        },
    )
    for i in range(2):
        loop.event(
            "Pod",
            "ADDED",
            _pod(f"g-{i}", f"u-g{i}", cpu="2", priority=1000, annotations={"scheduling.k8s.io/group-name": "g"}),
        )
    loop.drain()
    assert loop.schedule_once() == 0
    assert loop.recorder.preempted == [] and loop.recorder.nominated == []


def test_preemption_text_joins_failed_scheduling():
    lp = _loop()
    lp.event("Pod", "ADDED", _pod("same", "u-same", cpu="2", priority=10))
    lp.drain()
    lp.schedule_once()
    assert lp.recorder.failed == [
        (
            "same",
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 No preemption victims found "
            "for incoming pod.",
        )
    ]


def test_a_profile_without_default_preemption_preempts_nothing():
    profile = {"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}
    lp = _loop(profile)
    lp.event("Pod", "ADDED", _pod("urgent", "u-urgent", cpu="2", priority=1000))
    lp.drain()
    assert lp.schedule_once() == 0
    assert lp.recorder.preempted == []
    assert lp.recorder.failed == [("urgent", "0/1 nodes are available: 1 Insufficient cpu.")]


def test_a_nomination_written_by_the_api_reaches_vcore(loop):
    """A status-only change wakes nothing, but vcore learns the nomination (preemption reads it)."""
    loop.event("Pod", "ADDED", _pod("p", "u-p", cpu="2", priority=1000))
    loop.drain()
    loop.event("Pod", "MODIFIED", _pod("p", "u-p", cpu="2", priority=1000, rv="2", nominated="n1"))
    loop.drain()
    assert loop.converter.cluster.batch.pods["ns/p"].spec.get("nominated_node") == "n1"
