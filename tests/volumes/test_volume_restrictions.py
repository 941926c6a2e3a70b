"""VolumeRestrictions against kube-scheduler v1.34's own tables (volumerestrictions/volume_restrictions_test.go:
TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts),
case names as ids, plus vcore's cases for the read-only rules the tables leave out. A Skip or a nil PreFilter status
of kube's is "the pod fits" here: vcore shows what the node says, not which phase said it."""

from __future__ import annotations

import pytest

from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of, expect, outcome

PLUGIN = "VolumeRestrictions"
DISK = "node(s) had no available disk"
RWOP = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

DISKS = {
    "GCE": (B.inline("gcePersistentDisk", "a", pdName="foo"), B.inline("gcePersistentDisk", "b", pdName="bar")),
    "AWS": (
        B.inline("awsElasticBlockStore", "a", volumeID="foo"),
        B.inline("awsElasticBlockStore", "b", volumeID="bar"),
    ),
    "RBD": (
        B.inline("rbd", "a", monitors=["a", "b"], pool="foo", image="bar", fsType="ext4"),
        B.inline("rbd", "b", monitors=["c", "d"], pool="foo", image="bar", fsType="ext4"),
    ),
    "ISCSI": (
        B.inline(
            "iscsi", "a", targetPortal="127.0.0.1:3260", iqn="iqn.2016-12.server:storage.target01", fsType="ext4", lun=0
        ),
        B.inline(
            "iscsi", "b", targetPortal="127.0.0.1:3260", iqn="iqn.2017-12.server:storage.target01", fsType="ext4", lun=0
        ),
    ),
}


def _disk_cases():
    for kind, (state, state2) in DISKS.items():
        test = f"Test{kind}DiskConflicts"
        yield pytest.param(B.pod("p"), [], (), id=f"{test}/nothing")
        yield pytest.param(B.pod("p"), [state], (), id=f"{test}/one state")
        yield pytest.param(B.pod("p", state), [state], DISK, id=f"{test}/same state")
        yield pytest.param(B.pod("p", state2), [state], (), id=f"{test}/different state")
    yield pytest.param(
        B.pod("p", {"name": "volume with no restriction"}),
        [],
        (),
        id="TestGCEDiskConflicts/pod with a volume that doesn't have restrictions",
    )
    # vcore: the read-only rules (GCE PD, iSCSI and RBD allow several read-only mounts; EBS never two).
    ro_gce = B.inline("gcePersistentDisk", "a", pdName="foo", readOnly=True)
    yield pytest.param(B.pod("p", ro_gce), [ro_gce], (), id="vcore: GCE PD read-only twice")
    yield pytest.param(B.pod("p", ro_gce), [DISKS["GCE"][0]], DISK, id="vcore: GCE PD read-only beside read-write")
    ro_ebs = B.inline("awsElasticBlockStore", "a", volumeID="foo", readOnly=True)
    yield pytest.param(B.pod("p", ro_ebs), [ro_ebs], DISK, id="vcore: EBS read-only twice still conflicts")
    ro_iscsi = B.inline("iscsi", "a", iqn="iqn.x", targetPortal="p", lun=0, readOnly=True)
    yield pytest.param(B.pod("p", ro_iscsi), [ro_iscsi], (), id="vcore: iSCSI read-only twice")
    rbd_overlap = B.inline("rbd", "b", monitors=["z", "b"], pool="foo", image="bar")
    yield pytest.param(B.pod("p", rbd_overlap), [DISKS["RBD"][0]], DISK, id="vcore: RBD sharing one monitor")
    rbd_pool = B.inline("rbd", "b", monitors=["a"], pool="other", image="bar")
    yield pytest.param(B.pod("p", rbd_pool), [DISKS["RBD"][0]], (), id="vcore: RBD in another pool")
    yield pytest.param(B.pod("p", DISKS["GCE"][0]), [DISKS["AWS"][0]], (), id="vcore: same name, other source")


@pytest.mark.parametrize("pod, on_node, want", list(_disk_cases()))
def test_disk_conflicts(pod, on_node, want):
    existing = B.pod("existing", *on_node)
    cluster = cluster_of(Objects(nodes=[B.node("node-1")], bound=[(existing, "node-1")]))
    assert outcome(cluster, pod, [PLUGIN]) == expect(node_1=want)


RWOP_1 = B.pvc("claim-with-rwop-1", access_modes=("ReadWriteOncePod",))
RWOP_2 = B.pvc("claim-with-rwop-2", access_modes=("ReadWriteOncePod",))
RWX = B.pvc("claim-with-rwx", access_modes=("ReadWriteMany",))
WITH_ONE = B.pod("pod-with-one-pvc", B.claim_volume("claim-with-rwop-1"))
WITH_TWO = B.pod("pod-with-two-pvcs", B.claim_volume("claim-with-rwop-1"), B.claim_volume("claim-with-rwop-2"))
ONE_CONFLICT = B.pod("pod-with-one-conflict", B.claim_volume("claim-with-rwop-1"))
TWO_CONFLICTS = B.pod(
    "pod-with-two-conflicts", B.claim_volume("claim-with-rwop-1"), B.claim_volume("claim-with-rwop-2")
)
WITH_RWX = B.pod("pod-with-rwx", B.claim_volume("claim-with-rwx"))


@pytest.mark.parametrize(
    "pod, existing, pvcs, want",
    [
        pytest.param(B.pod("p"), [], [], expect(node_1=()), id="TestAccessModeConflicts/nothing"),
        pytest.param(
            WITH_ONE,
            [],
            [],
            expect(rejection='persistentvolumeclaim "claim-with-rwop-1" not found'),
            id="TestAccessModeConflicts/failed to get PVC",
        ),
        pytest.param(
            WITH_ONE, [WITH_RWX], [RWOP_1, RWX], expect(node_1=()), id="TestAccessModeConflicts/no access mode conflict"
        ),
        pytest.param(
            ONE_CONFLICT,
            [WITH_ONE, WITH_RWX],
            [RWOP_1, RWX],
            expect(node_1=RWOP),
            id="TestAccessModeConflicts/access mode conflict, unschedulable",
        ),
        pytest.param(
            TWO_CONFLICTS,
            [WITH_TWO, WITH_RWX],
            [RWOP_1, RWOP_2, RWX],
            expect(node_1=RWOP),
            id="TestAccessModeConflicts/two conflicts, unschedulable",
        ),
    ],
)
def test_access_mode_conflicts(pod, existing, pvcs, want):
    cluster = cluster_of(Objects(nodes=[B.node("node-1")], pvcs=pvcs, bound=[(p, "node-1") for p in existing]))
    assert outcome(cluster, pod, [PLUGIN]) == want


def test_a_readwriteoncepod_claim_in_use_anywhere_rules_out_every_node():
    # The claim counts wherever its user is bound (kube-scheduler's PVC reference counts over all nodes), and stops
    # counting once that pod is gone.
    cluster = cluster_of(Objects(nodes=[B.node("n1"), B.node("n2")], pvcs=[RWOP_1], bound=[(WITH_ONE, "n1")]))
    assert outcome(cluster, ONE_CONFLICT, [PLUGIN]) == expect(n1=RWOP, n2=RWOP)
    cluster.unbind(WITH_ONE)
    assert outcome(cluster, ONE_CONFLICT, [PLUGIN]) == expect(n1=(), n2=())


def test_a_generic_ephemeral_claim_is_not_a_readwriteoncepod_user():
    # readWriteOncePodPVCsForPod and the PVC reference counts look at persistentVolumeClaim volumes only.
    claim = B.pvc("user-eph", access_modes=("ReadWriteOncePod",), owner_uid="u1")
    user = B.pod("user", B.ephemeral_volume("eph"), uid="u1")
    cluster = cluster_of(Objects(nodes=[B.node("n1")], pvcs=[claim], bound=[(user, "n1")]))
    assert outcome(cluster, B.pod("p", B.claim_volume("user-eph")), [PLUGIN]) == expect(n1=())
