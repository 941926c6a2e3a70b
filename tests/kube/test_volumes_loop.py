"""The scheduling loop's VolumeBinding in process, with a recording binder and volume writer: storage objects from
the watch reach vcore, a placed pod's PreBind writes go out before its binding, the pod is bound once the PV
controller has bound its claims (seen through the watch), and a PreBind that fails (the writes refused, provisioning
given up, bindTimeoutSeconds passed, the pod deleted) undoes the assumption, says why in kube-scheduler's words and
retries the pod after its backoff. Unschedulable pods wake on the storage events the volume plugins' queueing hints
name, and only on those."""

from __future__ import annotations

import pytest

from tests.kube.test_loop import RecordingBinder, Silent, _pod
from vcore_kube.batchcycle import BatchCycle
from vcore_kube.config import load_config
from vcore_kube.convert import Converter
from vcore_kube.loop import SchedulingLoop
from vcore_kube.metrics import Metrics
from vcore_kube.testenv.objects import node
from vcore_kube.volumehints import rejecting_plugins, wakes
from vcore_kube.volumewriter import WriteResult

SELECTED = "volume.kubernetes.io/selected-node"
BOUND = "pv.kubernetes.io/bind-completed"


class RecordingWriter:
    def __init__(self):
        self.submitted = []

    def submit(self, key, uid, writes):
        self.submitted.append((key, uid, writes))
        return True


def _class(name, mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"):
    return {"metadata": {"name": name, "resourceVersion": "1"}, "provisioner": provisioner, "volumeBindingMode": mode}


def _claim(name, storage_class="local", rv="1", **meta_annotations):
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "annotations": dict(meta_annotations),
        },
        "spec": {
            "storageClassName": storage_class,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def _bound_claim(name, pv, rv, storage_class="local"):
    c = _claim(name, storage_class, rv, **{BOUND: "yes"})
    c["spec"]["volumeName"] = pv
    return c


def _pv(name, host, rv="1", claim_ref=None):
    out = {
        "metadata": {"name": name, "resourceVersion": rv},
        "spec": {
            "storageClassName": "local",
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}
                    ]
                }
            },
        },
        "status": {"phase": "Available"},
    }
    if claim_ref is not None:
        out["spec"]["claimRef"] = claim_ref
    return out


def _user(name, claim, uid="u1"):
    p = _pod(name, uid=uid)
    p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return p


@pytest.fixture
def loop():
    config = load_config(
        {
            "podInitialBackoffSeconds": 1,
            "podMaxBackoffSeconds": 10,
            "profile": {"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}}]},
        }
    )
    converter = Converter()
    now = [100.0]
    lp = SchedulingLoop(
        config,
        converter,
        BatchCycle(converter, config.profile),
        RecordingBinder(),
        Silent(),
        Metrics(),
        clock=lambda: now[0],
    )
    lp.volume_writer = RecordingWriter()
    lp.now = now
    lp.leading.set()
    for n in ("n1", "n2"):
        lp.event("Node", "ADDED", node(n))
    lp.event("StorageClass", "ADDED", _class("local"))
    lp.event("StorageClass", "ADDED", _class("dynamic", provisioner="example.com/provisioner"))
    lp.drain()
    return lp


def _written(loop, key="ns/p", uid="u1", error=""):
    ((_, _, writes),) = [s for s in loop.volume_writer.submitted if s[0] == key][-1:]
    rvs = {
        f"{kind}/{obj['metadata']['name'] if kind == 'persistentvolume' else 'ns/' + obj['metadata']['name']}": "50"
        for kind, obj in writes
    }
    loop.volumes_written(WriteResult(key, uid, {} if error else rvs, error))
    loop.drain()
    return writes


def test_a_static_pv_is_bound_before_the_pod(loop):
    loop.event("PersistentVolume", "ADDED", _pv("pv-1", "n2"))
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data"))
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 1
    assert loop.binder.submitted == []  # PreBind first
    writes = _written(loop)
    ((kind, pv),) = writes
    assert kind == "persistentvolume" and pv["spec"]["claimRef"]["uid"] == "uid-data"
    assert loop.binder.submitted == []  # the claim is not bound yet
    # The PV controller: the PV (our write, at a newer version) and the claim bound to it.
    loop.event("PersistentVolume", "MODIFIED", {**pv, "metadata": {**pv["metadata"], "resourceVersion": "50"}})
    loop.drain()
    assert loop.binder.submitted == []
    loop.event("PersistentVolumeClaim", "MODIFIED", _bound_claim("data", "pv-1", "51"))
    loop.drain()
    assert loop.binder.submitted == [("p", "n2", None)]


def test_a_claim_to_provision_gets_its_node_and_the_pod_waits_for_the_provisioner(loop):
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data", "dynamic"))
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 1
    ((kind, claim),) = _written(loop)
    node_name = claim["metadata"]["annotations"][SELECTED]
    assert kind == "persistentvolumeclaim" and node_name in ("n1", "n2")
    loop.event("PersistentVolumeClaim", "MODIFIED", _claim("data", "dynamic", "50", **{SELECTED: node_name}))
    loop.event("PersistentVolume", "ADDED", {**_pv("pvc-xyz", node_name, "52"), "status": {"phase": "Bound"}})
    loop.event(
        "PersistentVolumeClaim",
        "MODIFIED",
        {
            **_bound_claim("data", "pvc-xyz", "53", "dynamic"),
            "metadata": {
                **_bound_claim("data", "pvc-xyz", "53")["metadata"],
                "annotations": {BOUND: "yes", SELECTED: node_name},
            },
        },
    )
    loop.drain()
    assert loop.binder.submitted == [("p", node_name, None)]


def test_provisioning_given_up_fails_prebind_frees_the_claim_and_retries(loop):
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data", "dynamic"))
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 1
    _written(loop)
    # The provisioner gave up: the selected-node annotation is gone.
    loop.event("PersistentVolumeClaim", "MODIFIED", _claim("data", "dynamic", "60"))
    loop.drain()
    assert loop.recorder.failed[-1] == (
        "p",
        'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "data"',
    )
    assert loop.converter.node_of("ns/p") is None and loop.pending["ns/p"].state == "active"
    assert loop.converter.cluster.volume_binds("ns/p") is None
    loop.now[0] += 1.0  # its backoff
    assert loop.schedule_once() == 1  # tried again


def test_refused_writes_fail_prebind(loop):
    loop.event("PersistentVolume", "ADDED", _pv("pv-1", "n1"))
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data"))
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 1
    message = (
        'Operation cannot be fulfilled on persistentvolumes "pv-1": the object has been modified; please '
        "apply your changes to the latest version and try again"
    )
    _written(loop, error=message)
    assert loop.recorder.failed[-1] == ("p", f'running PreBind plugin "VolumeBinding": {message}')
    assert loop.converter.node_of("ns/p") is None and loop.binder.submitted == []


def test_waiting_gives_up_after_bind_timeout_seconds(loop):
    loop.event("PersistentVolume", "ADDED", _pv("pv-1", "n1"))
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data"))
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 1
    _written(loop)
    loop.now[0] += 29.0
    loop._tick()
    assert "ns/p" in loop.volume_waits
    loop.now[0] += 1.0
    loop._tick()
    assert loop.recorder.failed[-1] == (
        "p",
        'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded',
    )
    assert "ns/p" not in loop.volume_waits and loop.converter.node_of("ns/p") is None


def test_a_pod_deleted_while_its_claims_bind_is_forgotten(loop):
    loop.event("PersistentVolume", "ADDED", _pv("pv-1", "n1"))
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data"))
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 1
    loop.event("Pod", "DELETED", _user("p", "data"))
    loop.drain()
    _written(loop)
    assert "ns/p" not in loop.volume_waits and "ns/p" not in loop.pending
    assert loop.converter.node_of("ns/p") is None and loop.binder.submitted == []


def test_a_pod_waiting_for_its_claim_wakes_when_the_claim_appears_not_before(loop):
    loop.event("Pod", "ADDED", _user("p", "data"))
    loop.drain()
    assert loop.schedule_once() == 0
    entry = loop.pending["ns/p"]
    assert entry.state == "unschedulable" and entry.rejected_by == {"VolumeRestrictions"}
    # kube-scheduler's words: the PreFilter rejection, then DynamicResources' PostFilter missing its state.
    assert loop.recorder.last == '0/2 nodes are available: persistentvolumeclaim "data" not found. not found'
    loop.event("PersistentVolumeClaim", "ADDED", _claim("other"))
    loop.drain()
    assert entry.state == "unschedulable"  # not its claim
    loop.event("PersistentVolumeClaim", "ADDED", _claim("data"))
    loop.drain()
    assert entry.state == "active"


def test_a_pod_without_a_pv_wakes_on_a_new_pv():
    rejected = rejecting_plugins(["node(s) didn't find available persistent volumes to bind"])
    assert rejected == {"VolumeBinding"}
    pod = _user("p", "data")
    assert wakes(rejected, "PersistentVolume", pod, None, _pv("pv-9", "n1"))
    assert not wakes(rejected, "PersistentVolume", pod, _pv("pv-9", "n1"), None)  # a deletion helps no one
    assert wakes(rejected, "StorageClass", pod, None, _class("x"))
    assert not wakes(rejected, "StorageClass", pod, _class("x"), _class("x"))  # allowedTopologies unchanged
    assert not wakes(rejected, "VolumeAttachment", pod, {"spec": {"attacher": "d"}}, None)
    limits = rejecting_plugins(["node(s) exceed max volume count"])
    assert wakes(limits, "VolumeAttachment", pod, {"spec": {"attacher": "d"}}, None)
    more = {"metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "d", "allocatable": {"count": 5}}]}}
    less = {"metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "d", "allocatable": {"count": 2}}]}}
    assert wakes(limits, "CSINode", pod, less, more) and not wakes(limits, "CSINode", pod, more, less)
    zone = rejecting_plugins(["node(s) had no available volume zone"])
    labelled = {"metadata": {"name": "v", "labels": {"topology.kubernetes.io/zone": "a"}}}
    assert wakes(zone, "PersistentVolume", pod, labelled, {"metadata": {"name": "v", "labels": {}}})
    assert not wakes(zone, "PersistentVolume", pod, labelled, labelled)
