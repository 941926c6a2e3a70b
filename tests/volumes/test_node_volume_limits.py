"""NodeVolumeLimits against kube-scheduler v1.34's own table (nodevolumelimits/csi_test.go: TestCSILimits), case names
as ids, with its fixtures ported (getFakeCSIPVLister, getFakeCSIPVCLister, getFakeVolumeAttachmentLister,
getNodeWithPodAndVolumeLimits, enableMigrationOnNode), plus vcore's cases for what the table leaves out.

kube's fake PVC lister words a missing claim ``persistentvolumeclaims "x" not found``; the informer lister
kube-scheduler runs with says ``persistentvolumeclaim "x" not found``, which is what vcore reports. An error status
of kube's (``fwk.AsStatus``) fails the scheduling attempt with ``running "NodeVolumeLimits" filter plugin: <err>``.
"""

from __future__ import annotations

import pytest

from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of, expect, outcome

PLUGIN = "NodeVolumeLimits"
EXCEEDED = "node(s) exceed max volume count"
EBS, GCE = "ebs.csi.aws.com", "pd.csi.storage.gke.io"
AWS_IN_TREE, HOSTPATH = "kubernetes.io/aws-ebs", "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"


def _pvs(*drivers: str) -> list[dict]:
    out = []
    for driver in drivers:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                source = {"awsElasticBlockStore": {"volumeID": handle}}
            elif driver == HOSTPATH:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": handle}}
            out.append(B.pv(handle, source=source, phase=None))
    return out


def _pvcs(*drivers: str) -> list[dict]:
    out = [B.pvc(f"csi-{d}-{j}", volume_name=f"csi-{d}-{j}") for d in drivers for j in range(4)]
    out.append(B.pvc("csi-4", SC_NAME))
    out.append(B.pvc("csi-5"))
    out.append(B.pvc("csi-6", SC_NAME, volume_name="missing-in-action"))  # a claim whose PV is missing, valid class
    return out


def _attachments(count: int, *drivers: str) -> list[dict]:
    return [B.attachment(f"va-{d}-{j}", NODE, d, f"csi-{d}-{j}") for d in drivers for j in range(count)]


def _csi_node(limit_source: str, limit: int, *drivers: str) -> list[dict]:
    if limit_source == "csinode":
        limits = {d: limit for d in drivers}
    elif limit_source == "csinode-with-no-limit":
        limits = {d: None for d in drivers}
    elif limit_source == "no-csi-driver":
        limits = {}
    else:
        return []
    return [B.csi_node(NODE, limits, migrated=AWS_IN_TREE)]  # enableMigrationOnNode


def _claims_pod(name: str, *claims: str) -> dict:
    return B.pod(name, *(B.claim_volume(c, f"v{i}") for i, c in enumerate(claims)))


RUNNING = _claims_pod("running", f"csi-{EBS}-3")
PENDING_VOLUME = _claims_pod("pending-volume", "csi-4")
UNBOUND_PVC_2 = _claims_pod("unbound-pvc-2", "csi-4")
MISSING_PV = _claims_pod("missing-pv", "csi-6")
NO_SC_PVC = _claims_pod("no-sc-pvc", "csi-5")
GCE_TWO = _claims_pod("gce-two", f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE = _claims_pod("in-tree-one", f"csi-{AWS_IN_TREE}-0")
IN_TREE_TWO = _claims_pod("in-tree-two", f"csi-{AWS_IN_TREE}-1", f"csi-{AWS_IN_TREE}-2")
EBS_ONE = _claims_pod("ebs-one", f"csi-{EBS}-0")
EBS_TWO = _claims_pod("ebs-two", f"csi-{EBS}-1", f"csi-{EBS}-2")
NON_MIGRATABLE = _claims_pod("non-migratable", f"csi-{HOSTPATH}-0")
EPHEMERAL = B.pod("abc", B.ephemeral_volume("xyz"), namespace="test", uid="12345")
EPHEMERAL_CLAIM = B.pvc("abc-xyz", SC_NAME, namespace="test", owner_uid="12345")
CONFLICTING_CLAIM = B.pvc("abc-xyz", SC_NAME, namespace="test")
EPHEMERAL_TWO = B.pod("abc", B.ephemeral_volume("x"), B.ephemeral_volume("y"), namespace="test", uid="12345II")
EPHEMERAL_X = B.pvc("abc-x", SC_NAME, namespace="test", owner_uid="12345II")
EPHEMERAL_Y = B.pvc("abc-y", SC_NAME, namespace="test", owner_uid="12345II")
IN_TREE_INLINE = B.pod("in-tree-inline", B.inline("awsElasticBlockStore", "aws", volumeID="aws-inline1"))
IN_TREE_INLINE_SAME_ID = B.pod("in-tree-inline-same", B.inline("awsElasticBlockStore", "aws", volumeID=f"csi-{EBS}-1"))
CONFIG = [{"name": "cm", "configMap": {"name": "cm"}}, {"name": "secret", "secret": {"secretName": "s"}}]
ONLY_CONFIG = B.pod("only-config", *CONFIG)
PVC_WITH_CONFIG = B.pod("pvc-with-config", *CONFIG, B.claim_volume(f"csi-{EBS}-0"))
EPHEMERAL_WITH_CONFIG = B.pod("abc", *CONFIG, B.ephemeral_volume("xyz"), namespace="test")
INLINE_WITH_CONFIG = B.pod(
    "inline-with-config", *CONFIG, B.inline("awsElasticBlockStore", "aws", volumeID="aws-inline1")
)
MISSING_EPHEMERAL = 'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'


def case(test, new_pod, existing, max_vols, drivers, limit_source="", want=(), *, va_count=0, extra=()):
    return pytest.param(
        new_pod, existing, max_vols, drivers, limit_source, want, va_count, extra, id=f"TestCSILimits/{test}"
    )


CASES = [
    case(
        "should count VolumeAttachments towards volume limit when no pods exist",
        EBS_ONE,
        [],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        va_count=2,
    ),
    case(
        "should schedule pod when VolumeAttachments count does not exceed limit",
        EBS_ONE,
        [],
        2,
        [EBS],
        "csinode",
        va_count=1,
    ),
    case("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 4, [EBS], "csinode"),
    case(
        "doesn't when node volume limit <= pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode", EXCEEDED
    ),
    case(
        "should when driver does not support volume limits",
        EBS_ONE,
        [RUNNING, EBS_TWO],
        2,
        [EBS],
        "csinode-with-no-limit",
    ),
    case(
        "count pending PVCs towards volume limit <= pods CSI volume",
        EBS_ONE,
        [PENDING_VOLUME, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
    ),
    case(
        "count multiple pending pvcs towards volume limit >= pods CSI volume",
        EBS_ONE,
        [PENDING_VOLUME, UNBOUND_PVC_2, EBS_TWO],
        4,
        [EBS],
        "csinode",
    ),
    case(
        "should count PVCs with invalid PV name but valid SC",
        EBS_ONE,
        [MISSING_PV, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
    ),
    case("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC_PVC], 2, [EBS], "csinode"),
    case(
        "count pvcs with the same type towards volume limit",
        EBS_ONE,
        [GCE_TWO, EBS_TWO],
        2,
        [EBS, GCE],
        "csinode",
        EXCEEDED,
    ),
    case(
        "don't count pvcs with different type towards volume limit",
        GCE_TWO,
        [EBS_TWO, RUNNING],
        2,
        [EBS, GCE],
        "csinode",
    ),
    case(
        "should count in-tree volumes if migration is enabled",
        IN_TREE_ONE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
    case("nil csi node", IN_TREE_INLINE, [IN_TREE_TWO], 0, [AWS_IN_TREE, EBS]),
    case(
        "should count unbound in-tree volumes if migration is enabled",
        PENDING_VOLUME,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
    case(
        "should not limit pod if volume used does not report limits",
        IN_TREE_ONE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode-with-no-limit",
    ),
    case("should not count non-migratable in-tree volumes", NON_MIGRATABLE, [EBS_TWO], 2, [HOSTPATH, EBS], "csinode"),
    case(
        "should count in-tree inline volumes if migration is enabled",
        IN_TREE_INLINE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
    case(
        "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_ONE,
        [EBS_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
    case(
        "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_INLINE,
        [EBS_TWO, IN_TREE_ONE],
        3,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
    case(
        "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_INLINE_SAME_ID,
        [EBS_TWO, IN_TREE_ONE],
        3,
        [AWS_IN_TREE, EBS],
        "csinode",
    ),
    case(
        "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
        EBS_ONE,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
    case("ephemeral volume missing", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit", MISSING_EPHEMERAL),
    case(
        "ephemeral volume not owned",
        EPHEMERAL,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        'error:running "NodeVolumeLimits" filter plugin: PVC test/abc-xyz was not created for pod test/abc '
        "(pod is not owner)",
        extra=[CONFLICTING_CLAIM],
    ),
    case("ephemeral volume unbound", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit", extra=[EPHEMERAL_CLAIM]),
    case(
        "ephemeral doesn't when node volume limit <= pods CSI volume",
        EPHEMERAL,
        [RUNNING, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=[EPHEMERAL_CLAIM],
    ),
    case(
        "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
        EBS_ONE,
        [RUNNING, EPHEMERAL_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=[EPHEMERAL_X, EPHEMERAL_Y],
    ),
    case(
        "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral "
        "disabled",
        EBS_ONE,
        [RUNNING, EPHEMERAL, EBS_TWO],
        3,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=[EPHEMERAL_CLAIM],
    ),
    case(
        "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
        EBS_ONE,
        [RUNNING, EPHEMERAL, EBS_TWO],
        3,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=[EPHEMERAL_CLAIM],
    ),
    case(
        "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
        EBS_ONE,
        [RUNNING, EPHEMERAL, EBS_TWO],
        5,
        [EBS],
        "csinode",
        extra=[EPHEMERAL_CLAIM],
    ),
    case("skip Filter when the pod only uses secrets and configmaps", ONLY_CONFIG, [], 2, [EBS], "csinode"),
    case("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIG, [], 2, [EBS], "csinode"),
    case(
        "don't skip Filter when the pod has ephemeral volumes",
        EPHEMERAL_WITH_CONFIG,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        MISSING_EPHEMERAL,
    ),
    case(
        "don't skip Filter when the pod has inline migratable volumes",
        INLINE_WITH_CONFIG,
        [IN_TREE_TWO],
        2,
        [AWS_IN_TREE, EBS],
        "csinode",
        EXCEEDED,
    ),
]


@pytest.mark.parametrize("new_pod, existing, max_vols, drivers, limit_source, want, va_count, extra", CASES)
def test_csi_limits(new_pod, existing, max_vols, drivers, limit_source, want, va_count, extra):
    objects = Objects(
        nodes=[B.node(NODE, hostname=False)],
        pvs=_pvs(*drivers),
        pvcs=_pvcs(*drivers) + list(extra),
        classes=[B.storage_class(SC_NAME, provisioner=drivers[0])],
        csi_nodes=_csi_node(limit_source, max_vols, *drivers),
        attachments=_attachments(va_count, *drivers),
        bound=[(p, NODE) for p in existing],
    )
    got = outcome(cluster_of(objects), new_pod, [PLUGIN])
    if isinstance(want, str) and want.startswith("error:"):
        assert got == expect(error=want[len("error:") :])
    else:
        assert got == expect(**{NODE.replace("-", "_"): want})


# --- vcore's cases ------------------------------------------------------------------------------------------


def _limits_cluster(limit: int, *, migrated: str | None = None, **objects) -> object:
    return cluster_of(Objects(nodes=[B.node("n1")], csi_nodes=[B.csi_node("n1", {EBS: limit}, migrated)], **objects))


def test_the_same_volume_used_twice_counts_once():
    pv = B.pv("pv-1", source={"csi": {"driver": EBS, "volumeHandle": "h1"}}, phase=None)
    claim = B.pvc("c1", volume_name="pv-1")
    user = _claims_pod("user", "c1")
    cluster = _limits_cluster(1, pvs=[pv], pvcs=[claim], bound=[(user, "n1")])
    assert outcome(cluster, _claims_pod("second", "c1"), [PLUGIN]) == expect(n1=())


def test_an_inline_ebs_volume_the_translation_rejects_fails_the_pod_where_ebs_migrates():
    bad = B.pod("bad", B.inline("awsElasticBlockStore", "disk", volumeID="aws://zone/not-a-volume"))
    cluster = _limits_cluster(5, migrated=AWS_IN_TREE)
    assert outcome(cluster, bad, [PLUGIN]) == expect(
        error='running "NodeVolumeLimits" filter plugin: converting volume(disk) from inline to csi: failed to '
        "translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://zone/not-a-volume)"
    )
    # Where EBS does not migrate the volume is not counted, and nothing fails.
    assert outcome(_limits_cluster(5), bad, [PLUGIN]) == expect(n1=())


def test_a_bound_pods_unowned_ephemeral_claim_fails_pods_counted_on_its_node():
    owner = B.pod("owner", B.ephemeral_volume("scratch"), uid="u-owner")
    foreign = B.pvc("owner-scratch", SC_NAME)  # same name, not owned by the pod
    classes = [B.storage_class(SC_NAME, provisioner=EBS)]
    cluster = _limits_cluster(5, pvcs=[foreign, B.pvc("mine", SC_NAME)], classes=classes, bound=[(owner, "n1")])
    assert outcome(cluster, _claims_pod("new", "mine"), [PLUGIN]) == expect(
        error='running "NodeVolumeLimits" filter plugin: PVC default/owner-scratch was not created for pod '
        "default/owner (pod is not owner)"
    )


def test_a_node_without_a_csinode_takes_any_number():
    pvs = _pvs(EBS)
    cluster = cluster_of(Objects(nodes=[B.node("n1")], pvs=pvs, pvcs=_pvcs(EBS), bound=[(EBS_TWO, "n1")]))
    assert outcome(cluster, EBS_ONE, [PLUGIN]) == expect(n1=())


def test_limits_follow_csinode_updates():
    cluster = _limits_cluster(2, pvs=_pvs(EBS), pvcs=_pvcs(EBS), bound=[(EBS_TWO, "n1")])
    assert outcome(cluster, EBS_ONE, [PLUGIN]) == expect(n1=EXCEEDED)
    cluster.update_csi_node(B.csi_node("n1", {EBS: 3}))
    assert outcome(cluster, EBS_ONE, [PLUGIN]) == expect(n1=())
    cluster.remove_csi_node("n1")
    assert outcome(cluster, EBS_ONE, [PLUGIN]) == expect(n1=())


def test_counts_follow_binds_unbinds_attachments_pv_updates_and_node_changes():
    """The per-node counts the plugin keeps between pods follow every change that moves them: a pod bound or unbound
    on a node, a VolumeAttachment added or removed, a PV's driver changing, a node leaving and another arriving; on a
    node that migrates EBS as on one that does not."""
    pvs = [B.pv(f"pv-{i}", source={"csi": {"driver": EBS, "volumeHandle": f"h{i}"}}, phase=None) for i in range(5)]
    claims = [B.pvc(f"c{i}", volume_name=f"pv-{i}") for i in range(5)]
    cluster = cluster_of(
        Objects(
            nodes=[B.node("n1"), B.node("n2")],
            pvs=pvs,
            pvcs=claims,
            csi_nodes=[B.csi_node("n1", {EBS: 2}), B.csi_node("n2", {EBS: 2}, AWS_IN_TREE)],
        )
    )
    new = _claims_pod("new", "c0")
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=(), n2=())

    a, b, d = _claims_pod("a", "c1"), _claims_pod("b", "c2"), _claims_pod("d", "c4")
    cluster.bind(a, "n1")
    cluster.bind(b, "n1")
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=EXCEEDED, n2=())
    assert outcome(cluster, _claims_pod("again", "c1"), [PLUGIN]) == expect(n1=(), n2=())  # n1 has it: counts once

    cluster.unbind(b)
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=(), n2=())

    attachment = B.attachment("va-3", "n2", EBS, "pv-3")
    cluster.add_volume_attachment(attachment)
    cluster.bind(d, "n2")
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=(), n2=EXCEEDED)
    cluster.remove_volume_attachment("va-3")
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=(), n2=())

    cluster.bind(b, "n1")
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=EXCEEDED, n2=())
    cluster.update_persistent_volume(
        B.pv("pv-2", source={"csi": {"driver": "other.csi.io", "volumeHandle": "h2"}}, phase=None)
    )
    assert outcome(cluster, new, [PLUGIN]) == expect(n1=(), n2=())

    cluster.remove_node("n1", evict=True)
    cluster.add_node(B.node("n3"))
    cluster.add_csi_node(B.csi_node("n3", {EBS: 0}))
    assert outcome(cluster, new, [PLUGIN]) == expect(n2=(), n3=EXCEEDED)
