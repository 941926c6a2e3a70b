"""The scheduling loop's bookkeeping in process, with a recording binder: assume on bind, forget on failure,
watch events that arrive before or after a binding's answer, and no retry storm on 409/404."""

from __future__ import annotations

import pytest

import vcore
from vcore_kube import binder as bind
from vcore_kube.batchcycle import BatchCycle
from vcore_kube.config import load_config
from vcore_kube.convert import Converter
from vcore_kube.loop import SchedulingLoop
from vcore_kube.metrics import Metrics
from vcore_kube.testenv.objects import node, pod


class RecordingBinder:
    def __init__(self):
        self.submitted = []

    def submit(self, pod, node, gpu_index=None, evict=()):
        self.submitted.append((pod["metadata"]["name"], node, gpu_index))
        return True


class Silent:
    def scheduled(self, pod, node):
        pass

    def failed_scheduling(self, pod, message):
        self.last = message
        self.failed = getattr(self, "failed", []) + [(pod["metadata"]["name"], message)]

    def gated(self, pod):
        self.gated_pods = getattr(self, "gated_pods", []) + [pod["metadata"]["name"]]


def _pod(name, uid="u1", cpu="1", node_name=None, rv="1", **kw):
    p = pod(name, "ns", cpu=cpu, node_name=node_name, **kw)
    p["metadata"].update(uid=uid, resourceVersion=rv, creationTimestamp="2025-01-01T00:00:00Z")
    return p


@pytest.fixture
def loop():
    config = load_config({"podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10})
    converter = Converter()
    now = [100.0]
    lp = SchedulingLoop(
        config, converter, BatchCycle(converter), RecordingBinder(), Silent(), Metrics(), clock=lambda: now[0]
    )
    lp.now = now
    lp.leading.set()
    lp.event("Node", "ADDED", node("n1", cpu="2", gpus=2))
    lp.drain()
    return lp


def result(key, uid, node_name, outcome):
    return bind.BindResult(key, uid, node_name, outcome, "" if outcome != bind.ERROR else "server_error", 0.0)


def test_assume_then_confirm(loop):
    loop.event("Pod", "ADDED", _pod("a"))
    loop.drain()
    assert loop.schedule_once() == 1 and loop.binder.submitted == [("a", "n1", None)]
    assert loop.converter.node_of("ns/a") == "n1" and "ns/a" in loop.in_flight
    loop.bind_done(result("ns/a", "u1", "n1", bind.OK))
    loop.event("Pod", "MODIFIED", _pod("a", node_name="n1", rv="2"))
    loop.drain()
    assert not loop.in_flight and not loop.pending and loop.converter.node_of("ns/a") == "n1"


def test_stale_unbound_event_after_a_successful_binding_is_ignored(loop):
    loop.event("Pod", "ADDED", _pod("g", gpu_memory_mib=1000))
    loop.drain()
    loop.schedule_once()
    assert loop.binder.submitted[0][2] == "0"  # the gpu-index annotation to write
    loop.bind_done(result("ns/g", "u1", "n1", bind.OK))
    # Our annotation patch's event (still unbound) arrives after the binding's answer.
    annotated = _pod("g", rv="2", gpu_memory_mib=1000, annotations={"volcano.sh/gpu-index": "0"})
    loop.event("Pod", "MODIFIED", annotated)
    loop.drain()
    assert not loop.pending
    assert loop.schedule_once() == 0  # nothing re-queued, no PodAlreadyBoundError


def test_failed_binding_is_forgotten_and_retried_after_backoff(loop):
    loop.event("Pod", "ADDED", _pod("a", cpu="2"))
    loop.drain()
    loop.schedule_once()
    loop.bind_done(result("ns/a", "u1", "n1", bind.ERROR))
    loop.drain()
    assert loop.converter.node_of("ns/a") is None  # forgotten: its 2 cpu are free again
    assert loop.schedule_once() == 0  # backing off
    loop.now[0] += 1.0
    assert loop.schedule_once() == 1 and len(loop.binder.submitted) == 2


def test_conflict_then_watch_shows_where_it_went(loop):
    loop.event("Node", "ADDED", node("n2", cpu="2"))
    loop.event("Pod", "ADDED", _pod("a", cpu="2"))
    loop.drain()
    loop.schedule_once()
    chosen = loop.binder.submitted[0][1]
    other = "n2" if chosen == "n1" else "n1"
    loop.bind_done(result("ns/a", "u1", chosen, bind.CONFLICT))
    loop.event("Pod", "MODIFIED", _pod("a", cpu="2", node_name=other, rv="2"))
    loop.drain()
    assert loop.converter.node_of("ns/a") == other and not loop.pending
    loop.now[0] += 60
    assert loop.schedule_once() == 0 and len(loop.binder.submitted) == 1  # one request, no storm


def test_deleted_while_binding(loop):
    loop.event("Pod", "ADDED", _pod("a", cpu="2"))
    loop.drain()
    loop.schedule_once()
    loop.event("Pod", "DELETED", _pod("a", cpu="2"))
    loop.bind_done(result("ns/a", "u1", "n1", bind.NOT_FOUND))
    loop.drain()
    assert loop.converter.node_of("ns/a") is None and not loop.pending and not loop.in_flight
    loop.event("Pod", "ADDED", _pod("b", uid="u2", cpu="2"))
    loop.drain()
    assert loop.schedule_once() == 1  # the deleted pod's 2 cpu were released


def test_unschedulable_pod_waits_for_a_cluster_change(loop):
    loop.event("Pod", "ADDED", _pod("big", cpu="4"))
    loop.drain()
    assert loop.schedule_once() == 0
    assert "Insufficient cpu" in loop.recorder.last
    loop.now[0] += 30
    assert loop.schedule_once() == 0 and loop.pending["ns/big"].state == "unschedulable"
    loop.event("Node", "ADDED", node("n9", cpu="8"))
    loop.drain()
    assert loop.schedule_once() == 1 and loop.binder.submitted[-1][1] == "n9"


def test_a_pod_vcore_cannot_read_is_reported_alone(loop):
    bad = _pod("bad")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    loop.event("Pod", "ADDED", bad)
    loop.event("Pod", "ADDED", _pod("good", uid="u2"))
    loop.drain()
    assert loop.schedule_once() == 1 and loop.pending["ns/bad"].state == "invalid"
    assert "vcore cannot read the pod" in loop.recorder.last


def test_cycle_configuration_is_volcanos():
    assert BatchCycle(Converter(), cycle={"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}]})
    with pytest.raises(vcore.ProfileError, match="unknown action"):
        BatchCycle(Converter(), cycle={"actions": "enqueue, shuffle", "tiers": []})


def test_node_heartbeats_do_not_wake_unschedulable_pods(loop):
    loop.event("Pod", "ADDED", _pod("big", cpu="4"))
    loop.drain()
    loop.schedule_once()
    beat = node("n1", cpu="2", gpus=2)
    beat["status"]["conditions"][0]["lastHeartbeatTime"] = "2030-01-01T00:00:00Z"
    loop.event("Node", "MODIFIED", beat)
    loop.drain()
    assert loop.pending["ns/big"].state == "unschedulable"
    grown = node("n1", cpu="8", gpus=2)
    loop.event("Node", "MODIFIED", grown)
    loop.drain()
    assert loop.pending["ns/big"].state == "active"


def test_unschedulable_pod_is_retried_when_a_pod_frees_its_node(loop):
    loop.event("Pod", "ADDED", _pod("running", uid="r", cpu="2", node_name="n1"))
    loop.event("Pod", "ADDED", _pod("waiting", uid="w", cpu="2"))
    loop.drain()
    assert loop.schedule_once() == 0 and loop.pending["ns/waiting"].state == "unschedulable"
    loop.event("Pod", "DELETED", _pod("running", uid="r", cpu="2", node_name="n1"))
    loop.drain()
    assert loop.pending["ns/waiting"].state == "active"
    loop.now[0] += 1.0  # its backoff
    assert loop.schedule_once() == 1 and loop.binder.submitted[-1] == ("waiting", "n1", None)


def test_a_gated_pod_is_not_attempted_until_its_gates_are_removed(loop):
    gated = _pod("g")
    gated["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    loop.event("Pod", "ADDED", gated)
    loop.drain()
    assert loop.schedule_once() == 0 and loop.binder.submitted == []
    assert loop.recorder.gated_pods == ["g"] and not getattr(loop.recorder, "failed", [])  # no FailedScheduling
    loop.now[0] += 600  # not even the unschedulable flush tries it
    assert loop.schedule_once() == 0
    loop.event("Pod", "MODIFIED", _pod("g", rv="2"))  # the gate is removed
    loop.drain()
    assert loop.schedule_once() == 1 and loop.binder.submitted == [("g", "n1", None)]


def test_a_pod_with_a_field_vcore_does_not_honor_gets_a_failed_scheduling_naming_it(loop):
    p = _pod("claims")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
    loop.event("Pod", "ADDED", p)
    loop.drain()
    assert loop.schedule_once() == 0 and loop.binder.submitted == []
    assert loop.recorder.failed == [("claims", "0/1 nodes are available: vcore does not honor spec.resourceClaims.")]


def _rack(name: str, pattern: str) -> dict:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": pattern}}}]},
    }


def _racks_of(converter: Converter) -> dict[str, str]:
    """Node name -> the HyperNode holding it, as vcore's tree has it."""
    view = converter.cluster.topology
    names, leaf = view.domain_names, view.node_leaf
    return {n: names[leaf[converter.cluster.node_index(n)]] for n in converter.cluster.node_names}


def test_hypernodes_listed_before_the_nodes_wait_for_them():
    """At start the HyperNode list may arrive before the Node list: the tree waits for the nodes (no error in
    between), and a node added later joins the HyperNode whose member matches it."""
    converter = Converter()
    lp = SchedulingLoop(
        load_config({}), converter, BatchCycle(converter), RecordingBinder(), Silent(), Metrics(), clock=lambda: 100.0
    )
    lp.replace("HyperNode", [_rack("rack-a", "^a[0-9]$"), _rack("rack-b", "^b[0-9]$")], "1")
    lp.drain()
    assert converter.errors == 0
    lp.replace("Node", [node("a0", cpu="2"), node("b0", cpu="2")], "2")
    lp.drain()
    assert converter.errors == 0
    assert _racks_of(converter) == {"a0": "rack-a", "b0": "rack-b"}
    lp.event("Node", "ADDED", node("a1", cpu="2"))
    lp.drain()
    assert converter.errors == 0
    assert _racks_of(converter) == {"a0": "rack-a", "b0": "rack-b", "a1": "rack-a"}


def _labelled_rack(name: str, labels: dict[str, str]) -> dict:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"labelMatch": {"matchLabels": labels}}}]},
    }


def test_a_hypernode_whose_member_matches_no_node_is_kept_empty_until_its_node_comes():
    """As in Volcano, a member that matches no node leaves its HyperNode empty (no error): the tree is installed,
    and the node joins when it is added."""
    converter = Converter()
    lp = SchedulingLoop(
        load_config({}), converter, BatchCycle(converter), RecordingBinder(), Silent(), Metrics(), clock=lambda: 100.0
    )
    lp.replace("Node", [node("a0", cpu="2")], "1")
    lp.replace("HyperNode", [_rack("rack-a", "^a[0-9]$"), _rack("rack-b", "^b[0-9]$")], "1")
    lp.drain()
    assert converter.errors == 0
    assert _racks_of(converter) == {"a0": "rack-a"}
    assert "rack-b" in converter.cluster.topology.domain_names
    lp.event("Node", "ADDED", node("b0", cpu="2"))
    lp.drain()
    assert converter.errors == 0
    assert _racks_of(converter) == {"a0": "rack-a", "b0": "rack-b"}


def test_a_refused_hypernode_tree_is_tried_again_when_a_node_is_relabeled():
    """A tree vcore refuses (a node in two HyperNodes of one tier) is logged once, and installed when the node's
    relabeling resolves the conflict."""
    converter = Converter()
    lp = SchedulingLoop(
        load_config({}), converter, BatchCycle(converter), RecordingBinder(), Silent(), Metrics(), clock=lambda: 100.0
    )
    lp.replace("Node", [node("a0", cpu="2", labels={"rack": "a", "row": "1"})], "1")
    lp.replace("HyperNode", [_labelled_rack("rack-a", {"rack": "a"}), _labelled_rack("row-1", {"row": "1"})], "1")
    lp.drain()
    assert converter.errors == 1  # a0 would be in both tier-1 HyperNodes
    lp.event("Node", "MODIFIED", node("a0", cpu="2", labels={"rack": "a"}))
    lp.drain()
    assert converter.errors == 1
    assert _racks_of(converter) == {"a0": "rack-a"}
