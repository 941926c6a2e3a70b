"""VolumeBinding's PreBind through the library (Cluster.volume_writes and Cluster.volume_binds_status), as kube's
binder does it (binder_test.go TestBindAPIUpdate and TestCheckBindings' cases, on the objects a cluster holds): the
PV and claim updates to write, then whether the PV controller's binding has completed, not yet, or failed."""

from __future__ import annotations

import vcore
from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of
from vcore.types import VolumeBinds
from vcore.volumes.prebind import written_key

LOCAL = B.storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")
DYNAMIC = B.storage_class("dynamic", "WaitForFirstConsumer", "example.com/provisioner")


def _setup():
    claim = B.pvc("a", "local", uid="uid-a", request="1Gi", access_modes=("ReadWriteOnce",), resource_version="7")
    to_provision = B.pvc(
        "b", "dynamic", uid="uid-b", request="1Gi", access_modes=("ReadWriteOnce",), resource_version="8"
    )
    pv = B.pv(
        "pv-1",
        "local",
        capacity="5Gi",
        access_modes=("ReadWriteOnce",),
        resource_version="3",
        node_affinity=B.node_affinity(B.HOSTNAME, "n1"),
    )
    cluster = cluster_of(Objects(nodes=[B.node("n1")], pvs=[pv], pvcs=[claim, to_provision], classes=[LOCAL, DYNAMIC]))
    placed = vcore.Scheduler(cluster).schedule([B.pod("p", B.claim_volume("a"), B.claim_volume("b"))])[0]
    return cluster, placed, claim, to_provision, pv


def test_the_writes_bind_the_pv_and_select_the_node():
    cluster, placed, claim, to_provision, pv = _setup()
    assert placed.volumes == VolumeBinds("n1", (("pv-1", "default/a", "uid-a"),), ("default/b",))
    (k1, pv_write), (k2, claim_write) = cluster.volume_writes(placed.volumes)
    assert (k1, k2) == ("persistentvolume", "persistentvolumeclaim")
    assert pv_write["metadata"]["resourceVersion"] == "3"  # a PUT at the version held: a change since conflicts
    assert pv_write["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": "default",
        "name": "a",
        "uid": "uid-a",
        "resourceVersion": "7",
    }
    assert pv_write["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert claim_write["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n1"
    assert claim_write["metadata"]["resourceVersion"] == "8"
    # The objects held are untouched: the writes are copies.
    assert "claimRef" not in cluster.storage_object("persistentvolume", "pv-1")["spec"]


def test_a_pv_pre_bound_by_the_user_keeps_its_claimref_and_gets_no_annotation():
    claim = B.pvc("a", "local", uid="uid-a", request="1Gi", access_modes=("ReadWriteOnce",))
    pv = B.pv(
        "pv-1",
        "local",
        capacity="5Gi",
        access_modes=("ReadWriteOnce",),
        claim=claim,
        node_affinity=B.node_affinity(B.HOSTNAME, "n1"),
    )
    cluster = cluster_of(Objects(nodes=[B.node("n1")], pvs=[pv], pvcs=[claim], classes=[LOCAL]))
    placed = vcore.Scheduler(cluster).schedule([B.pod("p", B.claim_volume("a"))])[0]
    ((_, write),) = cluster.volume_writes(placed.volumes)
    assert write["spec"]["claimRef"] == pv["spec"]["claimRef"]
    assert "pv.kubernetes.io/bound-by-controller" not in write["metadata"]["annotations"]


def test_status_follows_the_pv_controller():
    cluster, placed, claim, to_provision, pv = _setup()
    binds = placed.volumes
    written = {written_key("persistentvolume", "pv-1"): "10", written_key("persistentvolumeclaim", "default/b"): "11"}
    (_, pv_write), (_, claim_write) = cluster.volume_writes(binds)
    # The watch has not shown the writes yet: wait.
    assert cluster.volume_binds_status(binds, written) == (False, None)
    cluster.update_persistent_volume({**pv_write, "metadata": {**pv_write["metadata"], "resourceVersion": "10"}})
    cluster.update_persistent_volume_claim(
        {**claim_write, "metadata": {**claim_write["metadata"], "resourceVersion": "11"}}
    )
    assert cluster.volume_binds_status(binds, written) == (False, None)  # the claims are not bound yet
    # The PV controller binds claim a to pv-1; a provisioner makes pv-2 for b, and the controller binds it.
    cluster.update_persistent_volume_claim(
        B.pvc("a", "local", uid="uid-a", request="1Gi", volume_name="pv-1", bound=True, resource_version="12")
    )
    assert cluster.volume_binds_status(binds, written) == (False, None)
    cluster.add_persistent_volume(
        B.pv("pv-2", "dynamic", capacity="1Gi", node_affinity=B.node_affinity(B.HOSTNAME, "n1"))
    )
    cluster.update_persistent_volume_claim(
        B.pvc(
            "b",
            "dynamic",
            uid="uid-b",
            request="1Gi",
            volume_name="pv-2",
            bound=True,
            selected_node="n1",
            resource_version="13",
        )
    )
    assert cluster.volume_binds_status(binds, written) == (True, None)


def test_status_reports_the_failures_kube_scheduler_reports():
    cluster, placed, claim, to_provision, pv = _setup()
    binds = placed.volumes
    (_, pv_write), (_, claim_write) = cluster.volume_writes(binds)
    cluster.update_persistent_volume_claim(claim_write)
    # The PV controller dropped the claimRef (unbindVolume):
    cluster.update_persistent_volume({**pv_write, "spec": {**pv_write["spec"], "claimRef": None}})
    assert cluster.volume_binds_status(binds) == (False, 'ClaimRef got reset for pv "pv-1"')
    cluster.update_persistent_volume(pv_write)
    # The provisioner gave up: it removed the selected-node annotation.
    cluster.update_persistent_volume_claim(to_provision)
    cluster.update_persistent_volume_claim(
        B.pvc("a", "local", uid="uid-a", request="1Gi", volume_name="pv-1", bound=True)
    )
    assert cluster.volume_binds_status(binds) == (False, 'provisioning failed for PVC "b"')
    # A provisioned PV that does not allow the node.
    cluster.update_persistent_volume_claim(
        B.pvc("b", "dynamic", uid="uid-b", volume_name="pv-far", bound=True, selected_node="n1")
    )
    cluster.add_persistent_volume(
        B.pv("pv-far", "dynamic", capacity="1Gi", node_affinity=B.node_affinity(B.HOSTNAME, "elsewhere"))
    )
    assert cluster.volume_binds_status(binds) == (
        False,
        'pv "pv-far" node affinity doesn\'t match node "n1": no matching NodeSelectorTerms',
    )
    cluster.remove_persistent_volume("pv-1")
    assert cluster.volume_binds_status(binds) == (
        False,
        'failed to check binding: could not find v1.PersistentVolume "pv-1"',
    )
    cluster.remove_node("n1", evict=True)
    assert cluster.volume_binds_status(binds) == (False, 'failed to get node "n1": node "n1" not found')
