"""DefaultPreemption for pods the volume plugins reject, as kube-scheduler v1.34 treats their statuses: a disk
conflict, a ReadWriteOncePod claim in use and too many volumes are Unschedulable (evicting the pods behind them may
help); VolumeZone's and VolumeBinding's failures and every PreFilter rejection are UnschedulableAndUnresolvable
(volumerestrictions, nodevolumelimits/csi.go, volumezone, volumebinding: the codes of their NewStatus calls). A
PreFilter rejection stops the PreFilter before DynamicResources' (later in the default profile) writes its state,
so DynamicResources' PostFilter fails with "not found" and DefaultPreemption does not run."""

from __future__ import annotations

import vcore
from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of

NO_CLAIMS = "no new claims to deallocate, preemption: "
RWOP = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
EBS = "ebs.csi.aws.com"


def _priority(pod: dict, priority: int) -> dict:
    pod["spec"]["priority"] = priority
    return pod


def _bound(claim: str, pv: str, *, access_modes: tuple[str, ...] = (), **pv_fields) -> tuple[dict, dict]:
    """A claim bound to its PV (VolumeBinding lets the pod through wherever the PV's node affinity allows)."""
    pvc = B.pvc(claim, uid=f"uid-{claim}", volume_name=pv, bound=True, access_modes=access_modes)
    return pvc, B.pv(pv, claim=pvc, phase="Bound", access_modes=access_modes, **pv_fields)


def _rwop_cluster(holder_priority: int) -> vcore.Cluster:
    claim, pv = _bound("rwop", "pv-rwop", access_modes=("ReadWriteOncePod",))
    holder = _priority(B.pod("holder", B.claim_volume("rwop")), holder_priority)
    return cluster_of(Objects(nodes=[B.node("n1"), B.node("n2")], pvs=[pv], pvcs=[claim], bound=[(holder, "n1")]))


def test_a_readwriteoncepod_claim_held_by_a_lower_priority_pod_is_freed_by_evicting_it():
    result = vcore.Scheduler(_rwop_cluster(0)).filter(_priority(B.pod("p", B.claim_volume("rwop")), 100))
    assert result.feasible == [] and result.reasons == {RWOP: 2}
    assert result.preemption is not None
    assert (result.preemption.node, result.preemption.victims) == ("n1", ("default/holder",))
    assert result.message == f"0/2 nodes are available: 2 {RWOP}."  # a node found: the PostFilter says nothing


def test_a_readwriteoncepod_claim_held_by_a_pod_of_higher_priority_has_no_victims():
    result = vcore.Scheduler(_rwop_cluster(1000)).filter(_priority(B.pod("p", B.claim_volume("rwop")), 100))
    assert result.preemption is not None and result.preemption.node is None
    assert result.message == (
        f"0/2 nodes are available: 2 {RWOP}. "
        + NO_CLAIMS
        + "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_too_many_volumes_on_a_node_are_lifted_by_evicting_lower_priority_users():
    claims, pvs = zip(
        *(_bound(f"c{i}", f"pv-{i}", source={"csi": {"driver": EBS, "volumeHandle": f"h{i}"}}) for i in range(2))
    )
    low = _priority(B.pod("low", B.claim_volume("c0")), 0)
    cluster = cluster_of(
        Objects(nodes=[B.node("n1")], pvs=pvs, pvcs=claims, csi_nodes=[B.csi_node("n1", {EBS: 1})], bound=[(low, "n1")])
    )
    result = vcore.Scheduler(cluster).filter(_priority(B.pod("p", B.claim_volume("c1")), 100))
    assert result.reasons == {"node(s) exceed max volume count": 1}
    assert result.preemption is not None
    assert (result.preemption.node, result.preemption.victims) == ("n1", ("default/low",))


def test_a_volume_zone_conflict_is_not_helped_by_preemption():
    claim, pv = _bound("c", "pv-a", labels={B.ZONE_GA: "zone-a"})
    low = _priority(B.pod("low"), 0)
    cluster = cluster_of(
        Objects(
            nodes=[B.node("n1", {B.ZONE_GA: "zone-b"}), B.node("n2", {B.ZONE_GA: "zone-c"})],
            pvs=[pv],
            pvcs=[claim],
            bound=[(low, "n1")],
        )
    )
    result = vcore.Scheduler(cluster).filter(_priority(B.pod("p", B.claim_volume("c")), 100))
    assert result.reasons == {"node(s) had no available volume zone": 2}
    assert result.preemption is not None and result.preemption.node is None
    assert result.message == (
        "0/2 nodes are available: 2 node(s) had no available volume zone. "
        + NO_CLAIMS
        + "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_a_prefilter_rejection_ends_with_dynamic_resources_missing_state_and_no_preemption():
    low = _priority(B.pod("low"), 0)
    cluster = cluster_of(Objects(nodes=[B.node("n1"), B.node("n2")], bound=[(low, "n1")]))
    scheduler = vcore.Scheduler(cluster)
    pod = _priority(B.pod("p", B.claim_volume("missing")), 100)
    result = scheduler.filter(pod)
    assert result.preemption is None
    assert result.message == '0/2 nodes are available: persistentvolumeclaim "missing" not found. not found'
    placement = scheduler.schedule([pod])[0]
    assert (placement.node, placement.message, placement.preemption) == (None, result.message, None)
    # Asked directly, the dry run finds every node unresolvable.
    asked = scheduler.preempt(pod)
    assert asked.node is None and asked.victims == ()
    assert asked.message == "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
