"""The scheduling loop's agent side in process (no API server), with a recording binder: fast-path micro-batches,
a micro-batch interleaved between two jobs of a running cycle, changes deferred until the cycle ends, a failed
fast-path binding retried first, a warm pool's hit and the room any binding makes, and a shard scope applied to
every scheduler of the process."""

from __future__ import annotations

import itertools

import pytest

from vcore_kube import binder as bind
from vcore_kube.agentcontrol import AgentControl
from vcore_kube.batchcycle import BatchCycle
from vcore_kube.config import load_config
from vcore_kube.convert import Converter
from vcore_kube.fastpath import FastPath
from vcore_kube.loop import SchedulingLoop
from vcore_kube.metrics import Metrics
from vcore_kube.schedqueue import SchedulingQueue
from vcore_kube.shardcontrol import ShardControl
from vcore_kube.testenv.objects import node, pod
from vcore_kube.warmpool import POOL_LABEL, WarmPools

SCHED, AGENT = "vcore", "vcore-agent"
_uids = itertools.count()


class RecordingBinder:
    def __init__(self):
        self.submitted = []

    def submit(self, pod, node, gpu_index=None, evict=()):
        self.submitted.append((pod["metadata"]["name"], node, [e["metadata"]["name"] for e in evict]))
        return True


class Silent:
    def scheduled(self, pod, node):
        pass

    def failed_scheduling(self, pod, message):
        self.last = message

    def gated(self, pod):
        pass

    def podgroup_event(self, *a):
        pass


class Writer:
    def __init__(self):
        self.created, self.deleted = [], []

    def create(self, pod):
        self.created.append(pod)

    def delete(self, pod):
        self.deleted.append(pod)


def _pod(name, scheduler=SCHED, cpu="1", node_name=None, labels=None, annotations=None, rv="1"):
    p = pod(name, "ns", scheduler=scheduler, cpu=cpu, node_name=node_name, labels=labels, annotations=annotations)
    p["metadata"].update(uid=f"u{next(_uids)}", resourceVersion=rv, creationTimestamp="2025-01-01T00:00:00Z")
    return p


@pytest.fixture
def loop():
    config = load_config(
        {"schedulerName": SCHED, "fastPath": {"enabled": True, "schedulerName": AGENT, "window": "1ms"}}
    )
    converter = Converter()
    now = [100.0]
    lp = SchedulingLoop(
        config, converter, BatchCycle(converter), RecordingBinder(), Silent(), Metrics(), clock=lambda: now[0]
    )
    lp.now = now
    queue = SchedulingQueue(1.0, 10.0, 300.0)
    fast = FastPath(config.fast_path, SCHED, converter.cluster, None, queue, clock=lp.clock)
    warm = WarmPools(config.warm_pools, SCHED, {AGENT}, converter.cluster, None, clock=lp.clock)
    lp.agents = AgentControl(lp, fast, warm, Writer())
    lp.leading.set()
    for i in range(4):
        lp.event("Node", "ADDED", node(f"n{i}", cpu="4"))
    lp.drain()
    return lp


def advance(loop, seconds=0.002):
    loop.now[0] += seconds


def test_fast_path_pods_wait_for_the_window_then_go_in_one_batch(loop):
    for i in range(3):
        loop.event("Pod", "ADDED", _pod(f"a{i}", scheduler=AGENT))
    loop.drain()
    assert not loop.agents.fast.due()  # the window is open
    advance(loop)
    assert loop.agents.fast.due()
    loop._tick()
    assert sorted(n for n, *_ in loop.binder.submitted) == ["a0", "a1", "a2"]
    assert {k for k, e in loop.in_flight.items() if e.kind == "fast"} == {"ns/a0", "ns/a1", "ns/a2"}
    assert loop.metrics.fast_batch._sum.get() == 3
    assert all(loop.converter.node_of(f"ns/a{i}") is not None for i in range(3))
    assert not loop.pending  # the batch cycle never saw them


def test_a_micro_batch_runs_between_two_jobs_of_a_cycle(loop):
    # Three one-pod gangs for the cycle (PodGroups: plain pods would go in one native call, with no boundary
    # between them); an agent pod arrives; its micro-batch must run inside the cycle.
    for i in range(3):
        loop.event(
            "PodGroup",
            "ADDED",
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {
                    "name": f"g{i}",
                    "namespace": "ns",
                    "uid": f"pg{i}",
                    "resourceVersion": "1",
                    "creationTimestamp": "2025-01-01T00:00:00Z",
                },
                "spec": {"minMember": 1},
            },
        )
        loop.event("Pod", "ADDED", _pod(f"b{i}", annotations={"scheduling.k8s.io/group-name": f"g{i}"}))
    loop.drain()
    advance(loop)
    arrivals = iter([_pod("agent", scheduler=AGENT)])
    other = _pod("late-batch")

    def between():
        advance(loop)
        nxt = next(arrivals, None)
        if nxt is not None:
            loop.event("Pod", "ADDED", nxt)
            loop.event("Pod", "ADDED", other)  # a batch pod: it must wait for the cycle's end
        loop._interleave()

    outcome = loop.cycle.run(loop.due(), between_jobs=between)
    # The agent's binding was submitted during the cycle, before any of the cycle's own.
    assert [n for n, *_ in loop.binder.submitted] == ["agent"]
    assert len(outcome.bindings) == 3
    assert "ns/late-batch" not in loop.pending and len(loop.inbox) == 1  # queued behind the cycle, in order
    loop.drain()
    assert "ns/late-batch" in loop.pending


def test_failed_fast_binding_is_retried_first(loop):
    loop.event("Pod", "ADDED", _pod("x", scheduler=AGENT))
    loop.drain()
    advance(loop)
    loop._tick()
    entry = loop.in_flight["ns/x"]
    loop.bind_done(bind.BindResult("ns/x", entry.uid, entry.node, bind.ERROR, "server_error", 0.0))
    loop.drain()
    assert loop.converter.node_of("ns/x") is None  # the decision was taken back
    assert loop.agents.fast.queue.pods["ns/x"].conflict
    loop.event("Pod", "ADDED", _pod("y", scheduler=AGENT))
    loop.drain()
    advance(loop)
    assert loop.agents.fast.queue.pop(1, loop.clock()) == ["ns/x"]


def test_unschedulable_fast_pod_waits_for_a_freeing_event(loop):
    loop.event("Pod", "ADDED", _pod("huge", scheduler=AGENT, cpu="9"))
    loop.drain()
    advance(loop)
    loop._tick()
    assert loop.agents.fast.queue.where("ns/huge") == "unschedulable"
    assert "Insufficient cpu" in loop.recorder.last
    loop.event("Node", "ADDED", node("big", cpu="16"))
    loop.drain()
    assert loop.agents.fast.queue.where("ns/huge") == "backoff"
    advance(loop, 1.5)
    loop._tick()  # back from backoff: it opens a micro-batch
    advance(loop)
    loop._tick()
    assert ("huge", "big", []) in loop.binder.submitted


def test_warm_pool_hit_and_room(loop):
    warm = loop.agents.warm
    loop.event(
        "WarmPool",
        "ADDED",
        {
            "apiVersion": "vcore.io/v1alpha1",
            "kind": "WarmPool",
            "metadata": {"name": "sb", "namespace": "ns", "uid": "w"},
            "spec": {
                "size": 4,
                "schedulerName": AGENT,
                "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}},
            },
        },
    )
    loop.drain()
    advance(loop, 1.0)
    loop._tick()
    assert len(loop.agents.writer.created) == 4
    for p in loop.agents.writer.created:  # the watch shows them created, then the next tick places them
        p["metadata"].update(uid=p["metadata"]["name"], resourceVersion="1")
        loop.event("Pod", "ADDED", p)
        loop.inbox.put(("placeholder-created", "ns/sb"))
    loop.drain()
    advance(loop, 1.0)
    loop._tick()
    placed = [s for s in loop.binder.submitted if s[0].startswith("sb-warm-")]
    assert len(placed) == 4
    for name, node_name, _ in placed:  # bound: the ledger has them, vcore's state does not
        p = next(p for p in loop.agents.writer.created if p["metadata"]["name"] == name)
        loop.event(
            "Pod",
            "MODIFIED",
            {**p, "spec": {**p["spec"], "nodeName": node_name}, "metadata": {**p["metadata"], "resourceVersion": "2"}},
        )
    loop.drain()
    assert warm.counts("ns/sb") == (4, 4) and loop.converter.cluster.n_pods == 0
    # A session pod hits: bound where a placeholder was, that placeholder deleted first.
    loop.binder.submitted.clear()
    loop.event("Pod", "ADDED", _pod("s1", scheduler=AGENT, cpu="2", labels={POOL_LABEL: "sb"}))
    loop.drain()
    advance(loop)
    loop._tick()
    ((name, node_name, evicted),) = loop.binder.submitted
    assert name == "s1" and len(evicted) == 1 and evicted[0].startswith("sb-warm-")
    assert warm.hits == 1
    # A batch pod needing a whole node that placeholders hold: they make room first (never block it).
    loop.binder.submitted.clear()
    before = {n: set(keys) for n, keys in warm.on_node.items()}
    loop.event("Pod", "ADDED", _pod("batch", cpu="4"))
    loop.drain()
    loop.schedule_once()
    ((name, node_name, evicted),) = loop.binder.submitted
    assert name == "batch"
    assert {f"ns/{e}" for e in evicted} == before.get(node_name, set())  # every placeholder of that node
    assert not warm.on_node.get(node_name)


def test_shard_scope_applies_to_every_scheduler(loop):
    control = ShardControl(loop, "s1", soft=False, writer=None)
    loop.shards = control
    assert all(s.node_scope is not None and s.node_scope.nodes == frozenset() for s in loop.schedulers())
    control.membership.verified |= {"n1"}
    control.membership.own = type(
        "S",
        (),
        {"desired": frozenset({"n1"}), "in_use": frozenset({"n1"}), "to_add": frozenset(), "to_remove": frozenset()},
    )()
    control.apply()
    assert all(s.node_scope.nodes == frozenset({"n1"}) for s in loop.schedulers())
    loop.event("Pod", "ADDED", _pod("a", scheduler=AGENT))
    loop.event("Pod", "ADDED", _pod("b"))
    loop.drain()
    advance(loop)
    loop._tick()
    loop.schedule_once()
    assert {n for _, n, _ in loop.binder.submitted} == {"n1"}
