"""VolumeBinding against kube-scheduler v1.34's own tables, case names as ids:

- volumebinding/volume_binding_test.go TestVolumeBinding: PreFilter and Filter statuses per node (its scores belong to
  the StorageCapacityScoring feature gate, off by default in v1.34, which vcore follows: VolumeBinding never scores;
  its "custom shape" case configures ``shape``, which kube-scheduler rejects with the gate off, so it runs here with
  the default arguments, whose filter is the same);
- volumebinding/binder_test.go TestFindPodVolumesWithoutProvisioning, TestFindPodVolumesWithProvisioning (each under
  no CSIDriver, a CSIDriver with and one without capacity tracking, as kube runs them) and
  TestFindPodVolumesWithCSIMigration: FindPodVolumes' reasons and what it binds and provisions (vcore's Reserve
  assumes that; ``Cluster.volume_binds`` shows it), with binder_test.go's fixtures ported. ``shouldFail`` is a
  PreFilter rejection or an error here;

plus vcore's cases on what Reserve assumes across a batch and how it is undone.
"""

from __future__ import annotations

import pytest

import vcore
from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of, expect, only, outcome
from vcore.types import VolumeBinds

PLUGIN = "VolumeBinding"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

# --- TestVolumeBinding -------------------------------------------------------------------------------------

WAIT, WAIT_HDD, WAIT_CAP = "wait-sc", "wait-hdd-sc", "wait-sc-with-storage-capacity"
PLUGIN_CLASSES = [
    B.storage_class("immediate-sc", "Immediate"),
    B.storage_class(WAIT, "WaitForFirstConsumer"),
    B.storage_class(WAIT_HDD, "WaitForFirstConsumer"),
    B.storage_class(WAIT_CAP, "WaitForFirstConsumer", "driver-with-storage-capacity"),
]
PLUGIN_DRIVERS = [B.csi_driver("driver-with-storage-capacity", True)]
NODE_KEY = "nodeKey"


def _make_pvc(name, storage_class, *, bound_pv="", request=None, phase=None):
    """makePVC(...).withBoundPV(...).withRequestStorage(...).withPhase(...)"""
    return B.pvc(name, storage_class, volume_name=bound_pv, bound=bool(bound_pv), request=request, phase=phase)


def _make_pv(name, storage_class, *, capacity=None, phase="Available", **affinity):
    return B.pv(
        name,
        storage_class,
        capacity=capacity,
        phase=phase,
        node_affinity=B.affinity(**{k.replace("__", "/").replace("_", "."): v for k, v in affinity.items()})
        if affinity
        else None,
    )


def _host_pv(name, storage_class, capacity, host):
    return B.pv(name, storage_class, capacity=capacity, node_affinity=B.node_affinity(B.HOSTNAME, host))


def _zone_pv(name, storage_class, capacity, zone):
    return B.pv(
        name,
        storage_class,
        capacity=capacity,
        node_affinity=B.affinity(
            **{"topology.kubernetes.io/region": [f"region-{zone}"], "topology.kubernetes.io/zone": [f"zone-{zone}"]}
        ),
    )


def _zone_node(name, zone):
    return B.node(
        name, {"topology.kubernetes.io/region": f"region-{zone}", "topology.kubernetes.io/zone": f"zone-{zone}"}
    )


def _key_node(name):
    return B.node(name, {NODE_KEY: name})


def _key_capacity(node_name, size):
    return B.capacity(node_name, WAIT_CAP, {"matchLabels": {NODE_KEY: node_name}}, size)


def _pod_a(*claims):
    return B.pod("pod-a", *(B.claim_volume(c, f"v{i}") for i, c in enumerate(claims)))


def plugin_case(name, pod, nodes, want, *, pvcs=(), pvs=(), capacities=()):
    return pytest.param(pod, nodes, pvcs, pvs, capacities, want, id=f"TestVolumeBinding/{name}")


ABC = [B.node("node-a"), B.node("node-b"), B.node("node-c")]
ZONES = [
    _zone_node("zone-a-node-a", "a"),
    _zone_node("zone-a-node-b", "a"),
    _zone_node("zone-b-node-a", "b"),
    _zone_node("zone-b-node-b", "b"),
    _zone_node("zone-c-node-a", "c"),
    _zone_node("zone-c-node-b", "c"),
]
ZONE_PVS = [
    _zone_pv("pv-a-0", WAIT, "200Gi", "a"),
    _zone_pv("pv-a-1", WAIT, "200Gi", "a"),
    _zone_pv("pv-b-0", WAIT, "100Gi", "b"),
    _zone_pv("pv-b-1", WAIT, "100Gi", "b"),
]
ZONE_WANT = expect(
    zone_a_node_a=(),
    zone_a_node_b=(),
    zone_b_node_a=(),
    zone_b_node_b=(),
    zone_c_node_a=BIND_CONFLICT,
    zone_c_node_b=BIND_CONFLICT,
)
KEY_NODES = [_key_node("node-a"), _key_node("node-b"), _key_node("node-c")]
PLUGIN_CASES = [
    plugin_case("pod has not pvcs", _pod_a(), [B.node("node-a")], expect(node_a=())),
    plugin_case(
        "all bound",
        _pod_a("pvc-a"),
        [B.node("node-a")],
        expect(node_a=()),
        pvcs=[_make_pvc("pvc-a", WAIT, bound_pv="pv-a")],
        pvs=[_make_pv("pv-a", WAIT)],
    ),
    plugin_case(
        "PVC does not exist",
        _pod_a("pvc-a"),
        [B.node("node-a")],
        expect(rejection='persistentvolumeclaim "pvc-a" not found'),
    ),
    plugin_case(
        "Part of PVCs do not exist",
        _pod_a("pvc-a", "pvc-b"),
        [B.node("node-a")],
        expect(rejection='persistentvolumeclaim "pvc-b" not found'),
        pvcs=[_make_pvc("pvc-a", WAIT, bound_pv="pv-a")],
    ),
    plugin_case(
        "immediate claims not bound",
        _pod_a("pvc-a"),
        [B.node("node-a")],
        expect(rejection="pod has unbound immediate PersistentVolumeClaims"),
        pvcs=[_make_pvc("pvc-a", "immediate-sc")],
    ),
    plugin_case(
        "unbound claims no matches",
        _pod_a("pvc-a"),
        [B.node("node-a")],
        expect(node_a=BIND_CONFLICT),
        pvcs=[_make_pvc("pvc-a", WAIT)],
    ),
    plugin_case(
        "bound and unbound unsatisfied",
        _pod_a("pvc-a", "pvc-b"),
        [B.node("node-a", {"foo": "barbar"})],
        expect(node_a=(NODE_CONFLICT, BIND_CONFLICT)),
        pvcs=[_make_pvc("pvc-a", WAIT, bound_pv="pv-a"), _make_pvc("pvc-b", WAIT)],
        pvs=[_make_pv("pv-a", WAIT, foo=["bar"])],
    ),
    plugin_case(
        "pv not found",
        _pod_a("pvc-a"),
        [B.node("node-a")],
        expect(node_a=PV_NOT_EXIST),
        pvcs=[_make_pvc("pvc-a", WAIT, bound_pv="pv-a")],
    ),
    plugin_case(
        "pv not found claim lost",
        _pod_a("pvc-a"),
        [B.node("node-a")],
        expect(rejection='persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
        pvcs=[_make_pvc("pvc-a", WAIT, bound_pv="pv-a", phase="Lost")],
    ),
    plugin_case(
        "local volumes with close capacity are preferred",
        _pod_a("pvc-a"),
        ABC,
        expect(node_a=(), node_b=(), node_c=BIND_CONFLICT),
        pvcs=[_make_pvc("pvc-a", WAIT, request="50Gi")],
        pvs=[
            _host_pv("pv-a-0", WAIT, "200Gi", "node-a"),
            _host_pv("pv-a-1", WAIT, "200Gi", "node-a"),
            _host_pv("pv-b-0", WAIT, "100Gi", "node-b"),
            _host_pv("pv-b-1", WAIT, "100Gi", "node-b"),
        ],
    ),
    plugin_case(
        "local volumes with close capacity are preferred (multiple pvcs)",
        _pod_a("pvc-0", "pvc-1"),
        ABC,
        expect(node_a=(), node_b=(), node_c=BIND_CONFLICT),
        pvcs=[_make_pvc("pvc-0", WAIT, request="50Gi"), _make_pvc("pvc-1", WAIT_HDD, request="100Gi")],
        pvs=[
            _host_pv("pv-a-0", WAIT, "200Gi", "node-a"),
            _host_pv("pv-a-1", WAIT, "200Gi", "node-a"),
            _host_pv("pv-a-2", WAIT_HDD, "200Gi", "node-a"),
            _host_pv("pv-a-3", WAIT_HDD, "200Gi", "node-a"),
            _host_pv("pv-b-0", WAIT, "100Gi", "node-b"),
            _host_pv("pv-b-1", WAIT, "100Gi", "node-b"),
            _host_pv("pv-b-2", WAIT_HDD, "100Gi", "node-b"),
            _host_pv("pv-b-3", WAIT_HDD, "100Gi", "node-b"),
        ],
    ),
    plugin_case(
        "zonal volumes with close capacity are preferred",
        _pod_a("pvc-a"),
        ZONES,
        ZONE_WANT,
        pvcs=[_make_pvc("pvc-a", WAIT, request="50Gi")],
        pvs=ZONE_PVS,
    ),
    plugin_case(
        "zonal volumes with close capacity are preferred (custom shape)",
        _pod_a("pvc-a"),
        ZONES,
        ZONE_WANT,
        pvcs=[_make_pvc("pvc-a", WAIT, request="50Gi")],
        pvs=ZONE_PVS,
    ),
    plugin_case(
        "storage capacity score",
        _pod_a("pvc-dynamic"),
        KEY_NODES,
        expect(node_a=(), node_b=(), node_c=()),
        pvcs=[_make_pvc("pvc-dynamic", WAIT_CAP, request="10Gi")],
        capacities=[_key_capacity("node-a", "100Gi"), _key_capacity("node-b", "50Gi"), _key_capacity("node-c", "10Gi")],
    ),
    plugin_case(
        "storage capacity score with static binds",
        _pod_a("pvc-dynamic", "pvc-static"),
        KEY_NODES,
        expect(node_a=(), node_b=(), node_c=()),
        pvcs=[_make_pvc("pvc-dynamic", WAIT_CAP, request="10Gi"), _make_pvc("pvc-static", WAIT, request="50Gi")],
        pvs=[
            _host_pv("pv-static-a", WAIT, "100Gi", "node-a"),
            _host_pv("pv-static-b", WAIT, "100Gi", "node-b"),
            _host_pv("pv-static-c", WAIT, "100Gi", "node-c"),
        ],
        capacities=[_key_capacity("node-a", "100Gi"), _key_capacity("node-b", "50Gi"), _key_capacity("node-c", "10Gi")],
    ),
    plugin_case(
        "dynamic provisioning with multiple PVCs of the same StorageClass",
        _pod_a("pvc-dynamic-0", "pvc-dynamic-1"),
        [_key_node("node-a")],
        expect(node_a=()),
        pvcs=[
            _make_pvc("pvc-dynamic-0", WAIT_CAP, request="50Gi"),
            _make_pvc("pvc-dynamic-1", WAIT_CAP, request="50Gi"),
        ],
        capacities=[_key_capacity("node-a", "100Gi")],
    ),
    plugin_case(
        "prefer node with least allocatable",
        _pod_a("pvc-dynamic"),
        KEY_NODES,
        expect(node_a=(), node_b=(), node_c=()),
        pvcs=[_make_pvc("pvc-dynamic", WAIT_CAP, request="10Gi")],
        capacities=[_key_capacity("node-a", "100Gi"), _key_capacity("node-b", "20Gi"), _key_capacity("node-c", "10Gi")],
    ),
    plugin_case(
        "prefer node with maximum allocatable",
        _pod_a("pvc-dynamic"),
        KEY_NODES,
        expect(node_a=(), node_b=(), node_c=()),
        pvcs=[_make_pvc("pvc-dynamic", WAIT_CAP, request="10Gi")],
        capacities=[_key_capacity("node-a", "100Gi"), _key_capacity("node-b", "20Gi"), _key_capacity("node-c", "10Gi")],
    ),
]


@pytest.mark.parametrize("pod, nodes, pvcs, pvs, capacities, want", PLUGIN_CASES)
def test_volume_binding(pod, nodes, pvcs, pvs, capacities, want):
    cluster = cluster_of(
        Objects(
            nodes=nodes, pvcs=pvcs, pvs=pvs, classes=PLUGIN_CLASSES, csi_drivers=PLUGIN_DRIVERS, capacities=capacities
        )
    )
    assert outcome(cluster, pod, [PLUGIN]) == want


def test_volume_binding_never_scores_and_rejects_a_shape():
    # StorageCapacityScoring is off by default in v1.34: PreScore skips, and a shape is rejected as kube does.
    profile = {"pluginConfig": [{"name": PLUGIN, "args": {"shape": [{"utilization": 0, "score": 0}]}}]}
    with pytest.raises(
        vcore.ProfileError,
        match="shape: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
    ):
        vcore.Scheduler(vcore.Cluster(), profile)
    cluster = cluster_of(
        Objects(
            nodes=KEY_NODES,
            pvcs=[_make_pvc("pvc-dynamic", WAIT_CAP, request="10Gi")],
            classes=PLUGIN_CLASSES,
            csi_drivers=PLUGIN_DRIVERS,
            capacities=[
                _key_capacity("node-a", "100Gi"),
                _key_capacity("node-b", "20Gi"),
                _key_capacity("node-c", "10Gi"),
            ],
        )
    )
    assert set(vcore.Scheduler(cluster, only(PLUGIN)).score(_pod_a("pvc-dynamic")).values()) == {0}


# --- binder_test.go: FindPodVolumes ------------------------------------------------------------------------

PROVISIONER = "test-provisioner"
WAIT_CLASS, IMMEDIATE_CLASS, WAIT_PROV, TOPO_MISMATCH = (
    "waitClass",
    "immediateClass",
    "waitClassWithProvisioner",
    "topoMismatchClass",
)
BINDER_CLASSES = [
    B.storage_class(
        WAIT_PROV, "WaitForFirstConsumer", PROVISIONER, allowed_topologies=[{NODE_KEY: ["node1", "reference-value"]}]
    ),
    B.storage_class(IMMEDIATE_CLASS, "Immediate"),
    B.storage_class(WAIT_CLASS, "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
    B.storage_class(
        TOPO_MISMATCH, "WaitForFirstConsumer", PROVISIONER, allowed_topologies=[{NODE_KEY: ["reference-value"]}]
    ),
]
UNBOUND, PREBOUND, BOUND, SELECTED = "unbound", "prebound", "bound", "selected"


def make_test_pvc(name, size, state, pv_name, storage_class, node=""):
    """makeTestPVC: namespace testns, uid pvc-uid, a storage request, and its binding state."""
    return B.pvc(
        name,
        storage_class,
        namespace="testns",
        uid="pvc-uid",
        request=size,
        volume_name=pv_name if state in (PREBOUND, BOUND) else "",
        bound=state == BOUND,
        selected_node=node if state == SELECTED else None,
        volume_mode="Filesystem",
    )


def make_test_pv(name, node, capacity, bound_to, storage_class):
    """makeTestPV: Available, node affinity nodeKey In [node], claimRef to the claim it is bound to."""
    return B.pv(
        name,
        storage_class,
        capacity=capacity,
        volume_mode="Filesystem",
        claim=bound_to,
        node_affinity=B.node_affinity(NODE_KEY, node) if node else None,
    )


UNBOUND_PVC = make_test_pvc("unbound-pvc", "1G", UNBOUND, "", WAIT_CLASS)
UNBOUND_PVC2 = make_test_pvc("unbound-pvc2", "5G", UNBOUND, "", WAIT_CLASS)
PREBOUND_PVC = make_test_pvc("prebound-pvc", "1G", PREBOUND, "pv-node1a", WAIT_CLASS)
BOUND_PVC = make_test_pvc("bound-pvc", "1G", BOUND, "pv-bound", WAIT_CLASS)
IMMEDIATE_UNBOUND_PVC = make_test_pvc("immediate-unbound-pvc", "1G", UNBOUND, "", IMMEDIATE_CLASS)
IMMEDIATE_BOUND_PVC = make_test_pvc("immediate-bound-pvc", "1G", BOUND, "pv-bound-immediate", IMMEDIATE_CLASS)
PROVISIONED_PVC = make_test_pvc("provisioned-pvc", "1Gi", UNBOUND, "", WAIT_PROV)
NO_PROVISIONER_PVC = make_test_pvc("no-provisioner-pvc", "1Gi", UNBOUND, "", WAIT_CLASS)
TOPO_MISMATCH_PVC = make_test_pvc("topo-mismatch-pvc", "1Gi", UNBOUND, "", TOPO_MISMATCH)
SELECTED_NODE_PVC = make_test_pvc("provisioned-pvc", "1Gi", SELECTED, "", WAIT_PROV, node="node1")
BOUND_MIGRATION_PVC = make_test_pvc("pvc-migration-bound", "1G", BOUND, "pv-migration-bound", WAIT_CLASS)
# makeGenericEphemeralPVC: the claim of test-pod's volume "test-volume", owned by the pod or not.
POD_UID = "test-pod-uid"
CORRECT_GENERIC_PVC = B.pvc(
    "test-pod-test-volume",
    IMMEDIATE_CLASS,
    namespace="testns",
    uid="pvc-uid",
    request="1G",
    volume_name="pv-bound",
    bound=True,
    owner_uid=POD_UID,
)
CONFLICTING_GENERIC_PVC = B.pvc(
    "test-pod-test-volume",
    IMMEDIATE_CLASS,
    namespace="testns",
    uid="pvc-uid",
    request="1G",
    volume_name="pv-bound",
    bound=True,
)

PV_NODE1A = make_test_pv("pv-node1a", "node1", "5G", None, WAIT_CLASS)
PV_NODE1B = make_test_pv("pv-node1b", "node1", "10G", None, WAIT_CLASS)
PV_NODE2 = make_test_pv("pv-node2", "node2", "1G", None, WAIT_CLASS)
PV_BOUND = make_test_pv("pv-bound", "node1", "1G", BOUND_PVC, WAIT_CLASS)
PV_NODE1A_BOUND = make_test_pv("pv-node1a", "node1", "5G", UNBOUND_PVC, WAIT_CLASS)
PV_BOUND_IMMEDIATE = make_test_pv("pv-bound-immediate", "node1", "1G", IMMEDIATE_BOUND_PVC, IMMEDIATE_CLASS)
PV_BOUND_IMMEDIATE_NODE2 = make_test_pv("pv-bound-immediate", "node2", "1G", IMMEDIATE_BOUND_PVC, IMMEDIATE_CLASS)
PV_BOUND_GENERIC = make_test_pv("pv-bound", "node1", "1G", CORRECT_GENERIC_PVC, WAIT_CLASS)
ZONE1_LABELS = {B.ZONE_BETA: "us-east-1", B.REGION_BETA: "us-east-1a"}


def migration_pv(bound_to, migrated):
    """makeTestPVForCSIMigration: a GCE PD (migratable) or an RBD image (not), labels of zone us-east-1."""
    source = (
        {"gcePersistentDisk": {"pdName": "test-disk", "fsType": "ext4"}}
        if migrated
        else {"rbd": {"monitors": ["m"], "image": "test-disk"}}
    )
    return B.pv(
        "pv-migration-bound",
        WAIT_CLASS,
        capacity="1G",
        volume_mode="Filesystem",
        claim=bound_to,
        labels=ZONE1_LABELS,
        source=source,
    )


MIGRATION_PV_BOUND = migration_pv(BOUND_MIGRATION_PVC, True)
NODE1 = B.node("node1", {NODE_KEY: "node1"})


def _claim_key(claim):
    return f"{claim['metadata']['namespace']}/{claim['metadata']['name']}"


def _pv_name(pv):
    return pv["metadata"]["name"]


def scenario(
    test,
    name,
    *,
    pvcs=(),
    pvs=(),
    cache=None,
    pod=None,
    bindings=(),
    provisions=(),
    reasons=(),
    fail=False,
    needs_capacity=False,
    nodes=None,
    csi_nodes=(),
):
    return pytest.param(
        dict(
            pvcs=pvcs,
            pvs=pvs,
            cache=cache,
            pod=pod,
            bindings=bindings,
            provisions=provisions,
            reasons=reasons,
            fail=fail,
            needs_capacity=needs_capacity,
            nodes=nodes,
            csi_nodes=csi_nodes,
        ),
        id=f"{test}/{name}",
    )


def ephemeral_pod(volume_name):
    return B.pod("test-pod", B.ephemeral_volume(volume_name), namespace="testns", uid=POD_UID)


W, P, M = (
    "TestFindPodVolumesWithoutProvisioning",
    "TestFindPodVolumesWithProvisioning",
    "TestFindPodVolumesWithCSIMigration",
)
WITHOUT = [
    scenario(W, "no-volumes", pod=B.pod("test-pod", namespace="testns")),
    scenario(W, "no-pvcs", pod=B.pod("test-pod", {"name": "e", "emptyDir": {}}, namespace="testns")),
    scenario(W, "pvc-not-found", cache=[], pvcs=[BOUND_PVC], fail=True),
    scenario(W, "bound-pvc", pvcs=[BOUND_PVC], pvs=[PV_BOUND]),
    scenario(W, "bound-pvc,pv-not-exists", pvcs=[BOUND_PVC], reasons=[PV_NOT_EXIST]),
    scenario(W, "prebound-pvc", pvcs=[PREBOUND_PVC], pvs=[PV_NODE1A_BOUND], fail=True),
    scenario(
        W,
        "unbound-pvc,pv-same-node",
        pvcs=[UNBOUND_PVC],
        pvs=[PV_NODE2, PV_NODE1A, PV_NODE1B],
        bindings=[(UNBOUND_PVC, PV_NODE1A)],
    ),
    scenario(W, "unbound-pvc,pv-different-node", pvcs=[UNBOUND_PVC], pvs=[PV_NODE2], reasons=[BIND_CONFLICT]),
    scenario(
        W,
        "two-unbound-pvcs",
        pvcs=[UNBOUND_PVC, UNBOUND_PVC2],
        pvs=[PV_NODE1A, PV_NODE1B],
        bindings=[(UNBOUND_PVC, PV_NODE1A), (UNBOUND_PVC2, PV_NODE1B)],
    ),
    scenario(
        W,
        "two-unbound-pvcs,order-by-size",
        pvcs=[UNBOUND_PVC2, UNBOUND_PVC],
        pvs=[PV_NODE1A, PV_NODE1B],
        bindings=[(UNBOUND_PVC, PV_NODE1A), (UNBOUND_PVC2, PV_NODE1B)],
    ),
    scenario(
        W,
        "two-unbound-pvcs,partial-match",
        pvcs=[UNBOUND_PVC, UNBOUND_PVC2],
        pvs=[PV_NODE1A],
        bindings=[(UNBOUND_PVC, PV_NODE1A)],
        reasons=[BIND_CONFLICT],
    ),
    scenario(
        W,
        "one-bound,one-unbound",
        pvcs=[UNBOUND_PVC, BOUND_PVC],
        pvs=[PV_BOUND, PV_NODE1A],
        bindings=[(UNBOUND_PVC, PV_NODE1A)],
    ),
    scenario(
        W,
        "one-bound,one-unbound,no-match",
        pvcs=[UNBOUND_PVC, BOUND_PVC],
        pvs=[PV_BOUND, PV_NODE2],
        reasons=[BIND_CONFLICT],
    ),
    scenario(W, "one-prebound,one-unbound", pvcs=[UNBOUND_PVC, PREBOUND_PVC], pvs=[PV_NODE1A, PV_NODE1B], fail=True),
    scenario(W, "immediate-bound-pvc", pvcs=[IMMEDIATE_BOUND_PVC], pvs=[PV_BOUND_IMMEDIATE]),
    scenario(
        W,
        "immediate-bound-pvc-wrong-node",
        pvcs=[IMMEDIATE_BOUND_PVC],
        pvs=[PV_BOUND_IMMEDIATE_NODE2],
        reasons=[NODE_CONFLICT],
    ),
    scenario(W, "immediate-unbound-pvc", pvcs=[IMMEDIATE_UNBOUND_PVC], fail=True),
    scenario(
        W,
        "immediate-unbound-pvc,delayed-mode-bound",
        pvcs=[IMMEDIATE_UNBOUND_PVC, BOUND_PVC],
        pvs=[PV_BOUND],
        fail=True,
    ),
    scenario(W, "immediate-unbound-pvc,delayed-mode-unbound", pvcs=[IMMEDIATE_UNBOUND_PVC, UNBOUND_PVC], fail=True),
    scenario(W, "generic-ephemeral,no-pvc", pod=ephemeral_pod("no-such-pvc"), fail=True),
    scenario(
        W,
        "generic-ephemeral,with-pvc",
        pod=ephemeral_pod("test-volume"),
        cache=[CORRECT_GENERIC_PVC],
        pvs=[PV_BOUND_GENERIC],
    ),
    scenario(
        W,
        "generic-ephemeral,wrong-pvc",
        pod=ephemeral_pod("test-volume"),
        cache=[CONFLICTING_GENERIC_PVC],
        pvs=[PV_BOUND_GENERIC],
        fail=True,
    ),
]
WITH = [
    scenario(P, "one-provisioned", pvcs=[PROVISIONED_PVC], provisions=[PROVISIONED_PVC], needs_capacity=True),
    scenario(
        P,
        "two-unbound-pvcs,one-matched,one-provisioned",
        pvcs=[UNBOUND_PVC, PROVISIONED_PVC],
        pvs=[PV_NODE1A],
        bindings=[(UNBOUND_PVC, PV_NODE1A)],
        provisions=[PROVISIONED_PVC],
        needs_capacity=True,
    ),
    scenario(
        P,
        "one-bound,one-provisioned",
        pvcs=[BOUND_PVC, PROVISIONED_PVC],
        pvs=[PV_BOUND],
        provisions=[PROVISIONED_PVC],
        needs_capacity=True,
    ),
    scenario(
        P,
        "one-binding,one-selected-node",
        pvcs=[BOUND_PVC, SELECTED_NODE_PVC],
        pvs=[PV_BOUND],
        provisions=[SELECTED_NODE_PVC],
        needs_capacity=True,
    ),
    scenario(P, "immediate-unbound-pvc", pvcs=[IMMEDIATE_UNBOUND_PVC], fail=True),
    scenario(
        P,
        "one-immediate-bound,one-provisioned",
        pvcs=[IMMEDIATE_BOUND_PVC, PROVISIONED_PVC],
        pvs=[PV_BOUND_IMMEDIATE],
        provisions=[PROVISIONED_PVC],
        needs_capacity=True,
    ),
    scenario(P, "invalid-provisioner", pvcs=[NO_PROVISIONER_PVC], reasons=[BIND_CONFLICT]),
    scenario(P, "volume-topology-unsatisfied", pvcs=[TOPO_MISMATCH_PVC], reasons=[BIND_CONFLICT]),
]
NODE1_ZONE1 = B.node("node1", {"topology.gke.io/zone": "us-east-1"})
NODE1_ZONE2 = B.node("node1", {"topology.gke.io/zone": "us-east-2"})
MIGRATION = [
    scenario(
        M,
        "pvc-bound",
        pvcs=[BOUND_MIGRATION_PVC],
        pvs=[MIGRATION_PV_BOUND],
        nodes=[NODE1_ZONE1],
        csi_nodes=[B.csi_node("node1", migrated="kubernetes.io/gce-pd")],
    ),
    scenario(
        M,
        "pvc-bound,csinode-not-migrated",
        pvcs=[BOUND_MIGRATION_PVC],
        pvs=[MIGRATION_PV_BOUND],
        nodes=[NODE1_ZONE1],
        csi_nodes=[B.csi_node("node1", migrated="")],
    ),
    scenario(M, "pvc-bound,missing-csinode", pvcs=[BOUND_MIGRATION_PVC], pvs=[MIGRATION_PV_BOUND], nodes=[NODE1_ZONE1]),
    scenario(
        M,
        "pvc-bound,node-different-zone",
        pvcs=[BOUND_MIGRATION_PVC],
        pvs=[MIGRATION_PV_BOUND],
        nodes=[NODE1_ZONE2],
        csi_nodes=[B.csi_node("node1", migrated="kubernetes.io/gce-pd")],
        reasons=[NODE_CONFLICT],
    ),
]
CSI_DRIVERS = {
    "no CSIDriver": None,
    "CSIDriver with capacity tracking": True,
    "CSIDriver without capacity tracking": False,
}


def _run_find(s, csi_driver):
    pod = s["pod"] or B.pod(
        "test-pod",
        *(B.claim_volume(c["metadata"]["name"], f"vol{i}") for i, c in enumerate(s["pvcs"])),
        namespace="testns",
        uid=POD_UID,
    )
    cache = s["pvcs"] if s["cache"] is None else s["cache"]
    drivers = [] if csi_driver is None else [B.csi_driver(PROVISIONER, csi_driver)]
    cluster = cluster_of(
        Objects(
            nodes=s["nodes"] or [NODE1],
            pvcs=cache,
            pvs=s["pvs"],
            classes=BINDER_CLASSES,
            csi_drivers=drivers,
            csi_nodes=s["csi_nodes"],
        )
    )
    got = outcome(cluster, pod, [PLUGIN])
    reasons = list(s["reasons"])
    provisions = list(s["provisions"])
    if s["needs_capacity"] and csi_driver:  # without CSIStorageCapacity objects provisioning is blocked
        reasons.append(NOT_ENOUGH_SPACE)
        provisions = []
    if s["fail"]:
        assert got.rejection is not None or got.error is not None, got
        return
    assert got == expect(node1=tuple(reasons))
    if reasons:
        return
    # What Reserve assumes on the node: FindPodVolumes' bindings and provisions (none when every claim is bound).
    placed = vcore.Scheduler(cluster, only(PLUGIN)).schedule([pod])[0]
    assert placed.node == "node1"
    if not s["bindings"] and not provisions:
        assert placed.volumes is None
        return
    assert placed.volumes == VolumeBinds(
        "node1",
        tuple((_pv_name(pv), _claim_key(c), c["metadata"].get("uid", "")) for c, pv in s["bindings"]),
        tuple(_claim_key(c) for c in provisions),
    )
    assert cluster.volume_binds(pod) == placed.volumes


@pytest.mark.parametrize("driver", list(CSI_DRIVERS))
@pytest.mark.parametrize("s", WITHOUT + WITH)
def test_find_pod_volumes(s, driver):
    _run_find(s, CSI_DRIVERS[driver])


@pytest.mark.parametrize("s", MIGRATION)
def test_find_pod_volumes_with_csi_migration(s):
    _run_find(s, None)


def test_find_pod_volumes_with_capacity_objects():
    # binder_test.go TestCapacity's idea: with capacity tracking, a CSIStorageCapacity of the class, large enough and
    # reaching the node by its topology, lets the claim be provisioned there.
    def run(capacities):
        cluster = cluster_of(
            Objects(
                nodes=[NODE1, B.node("node2", {NODE_KEY: "node2"})],
                pvcs=[PROVISIONED_PVC],
                classes=[BINDER_CLASSES[0]],
                csi_drivers=[B.csi_driver(PROVISIONER, True)],
                capacities=capacities,
            )
        )
        pod = B.pod("test-pod", B.claim_volume("provisioned-pvc"), namespace="testns")
        return outcome(cluster, pod, [PLUGIN])

    def cap(name, node, size, maximum=""):
        topology = None if node is None else {"matchLabels": {NODE_KEY: node}} if node else {}
        return B.capacity(name, WAIT_PROV, topology, size, maximum)

    node2_out = BIND_CONFLICT  # the class allows node1 only
    assert run([cap("net", "", "1Gi")]) == expect(node1=(), node2=node2_out)  # network attached: every node
    assert run([cap("n1", "node1", "1Gi")]) == expect(node1=(), node2=node2_out)
    assert run([cap("n2", "node2", "1Gi")]) == expect(node1=NOT_ENOUGH_SPACE, node2=node2_out)
    assert run([cap("small", "node1", "1Mi")]) == expect(node1=NOT_ENOUGH_SPACE, node2=node2_out)
    assert run([cap("max", "node1", "100Gi", maximum="1Mi")]) == expect(node1=NOT_ENOUGH_SPACE, node2=node2_out)
    assert run([cap("nil-topology", None, "1Gi")]) == expect(node1=NOT_ENOUGH_SPACE, node2=node2_out)
    assert run([]) == expect(node1=NOT_ENOUGH_SPACE, node2=node2_out)
