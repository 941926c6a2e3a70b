"""What VolumeBinding's Reserve assumes for the pods vcore places, as kube-scheduler's assume cache keeps it: the
next pod of the same batch (or cycle, or gang) sees the PV taken and the claim selected for the node; unbinding the
pod undoes it; a newer object from the API replaces it, a relist's copy (same resourceVersion) does not. What
PreBind must write is on the Placement and ``Cluster.volume_binds``."""

from __future__ import annotations

import vcore
from tests.batch import builders as BB
from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of
from vcore.types import VolumeBinds

BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
LOCAL = B.storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")
DYNAMIC = B.storage_class("dynamic", "WaitForFirstConsumer", "example.com/provisioner")


def _local_pv(name: str, node: str, size: str = "10Gi", **kw) -> dict:
    return B.pv(
        name,
        "local",
        capacity=size,
        access_modes=("ReadWriteOnce",),
        node_affinity=B.node_affinity(B.HOSTNAME, node),
        **kw,
    )


def _claim(name: str, storage_class: str = "local", size: str = "1Gi", **kw) -> dict:
    return B.pvc(name, storage_class, uid=f"uid-{name}", request=size, access_modes=("ReadWriteOnce",), **kw)


def _user(name: str, *claims: str) -> dict:
    return B.pod(name, *(B.claim_volume(c, f"v{i}") for i, c in enumerate(claims)))


def _cluster(*, pvs=(), pvcs=(), nodes=("n1", "n2")) -> vcore.Cluster:
    return cluster_of(Objects(nodes=[B.node(n) for n in nodes], pvs=pvs, pvcs=pvcs, classes=[LOCAL, DYNAMIC]))


def test_the_next_pod_of_a_batch_does_not_take_the_pv_the_first_one_was_given():
    cluster = _cluster(pvs=[_local_pv("pv-1", "n1")], pvcs=[_claim("a"), _claim("b")])
    first, second = vcore.Scheduler(cluster).schedule([_user("p1", "a"), _user("p2", "b")])
    assert first.node == "n1"
    assert first.volumes == VolumeBinds("n1", (("pv-1", "default/a", "uid-a"),), ())
    assert second.node is None and second.reasons == {BIND_CONFLICT: 2}
    # Unbinding the first pod (its binding failed, say) gives the PV back.
    cluster.unbind("default/p1")
    assert cluster.volume_binds("default/p1") is None
    assert vcore.Scheduler(cluster).schedule([_user("p2", "b")])[0].node == "n1"


def test_the_smallest_fitting_pv_is_chosen_and_ties_go_by_name():
    pvs = [
        _local_pv("pv-big", "n1", "100Gi"),
        _local_pv("pv-b", "n1", "5Gi"),
        _local_pv("pv-a", "n1", "5Gi"),
        _local_pv("pv-tiny", "n1", "500Mi"),
    ]
    cluster = _cluster(pvs=pvs, pvcs=[_claim("c")])
    placed = vcore.Scheduler(cluster).schedule([_user("p", "c")])[0]
    assert placed.volumes.bindings == (("pv-a", "default/c", "uid-c"),)


def test_a_claim_to_provision_is_selected_for_the_node_and_its_next_user_follows_it():
    cluster = _cluster(pvcs=[_claim("shared", "dynamic")])
    first = vcore.Scheduler(cluster).schedule([_user("p1", "shared")])[0]
    assert first.volumes == VolumeBinds(first.node, (), ("default/shared",))
    other = {"n1": "n2", "n2": "n1"}[first.node]
    # The second user of the claim may go only where it was selected for (the assumed annotation), not elsewhere.
    scheduler = vcore.Scheduler(cluster)
    assert scheduler.filter(_user("p2", "shared")).feasible == [first.node]
    assert scheduler.filter(_user("p2", "shared")).reasons == {BIND_CONFLICT: 1}
    cluster.unbind("default/p1")
    assert sorted(scheduler.filter(_user("p2", "shared")).feasible) == sorted([first.node, other])


def test_the_api_objects_replace_the_assumption_and_a_relist_copy_keeps_it():
    pv = _local_pv("pv-1", "n1", resource_version="10")
    claim = _claim("a", resource_version="5")
    cluster = _cluster(pvs=[pv], pvcs=[claim, _claim("b")])
    assert vcore.Scheduler(cluster).schedule([_user("p1", "a")])[0].node == "n1"
    cluster.update_persistent_volume(pv)  # the same resourceVersion: a relist, the assumption stays
    assert vcore.Scheduler(cluster).filter(_user("p2", "b")).reasons == {BIND_CONFLICT: 2}
    # PreBind wrote the claimRef: the PV now says so itself (a newer resourceVersion), with or without the pod.
    written = _local_pv("pv-1", "n1", resource_version="11", claim=claim)
    cluster.update_persistent_volume(written)
    cluster.unbind("default/p1")
    assert vcore.Scheduler(cluster).filter(_user("p2", "b")).reasons == {BIND_CONFLICT: 2}
    # A newer PV without the claimRef (the PV controller unbound it) frees it.
    cluster.update_persistent_volume(_local_pv("pv-1", "n1", resource_version="12"))
    assert vcore.Scheduler(cluster).filter(_user("p2", "b")).feasible == ["n1"]


def test_a_pv_prebound_to_the_claim_is_the_only_one_it_takes():
    claim = _claim("a")
    pvs = [_local_pv("pv-free", "n1"), _local_pv("pv-mine", "n2", "50Gi", claim=claim)]
    cluster = _cluster(pvs=pvs, pvcs=[claim])
    placed = vcore.Scheduler(cluster).schedule([_user("p", "a")])[0]
    assert placed.node == "n2"
    assert placed.volumes.bindings == (("pv-mine", "default/a", "uid-a"),)


def test_a_pod_with_every_claim_bound_has_nothing_to_write():
    claim = _claim("a", volume_name="pv-1", bound=True)
    cluster = _cluster(pvs=[_local_pv("pv-1", "n2", claim=claim)], pvcs=[claim])
    placed = vcore.Scheduler(cluster).schedule([_user("p", "a")])[0]
    assert (placed.node, placed.volumes) == ("n2", None)


def test_the_cycle_assumes_within_a_gang_and_reports_what_to_write():
    cluster = _cluster(
        pvs=[_local_pv("pv-1", "n1"), _local_pv("pv-2", "n2")],
        pvcs=[_claim("a", namespace=BB.NS), _claim("b", namespace=BB.NS)],
    )
    cluster.add_podgroup(BB.podgroup("gang", 2))
    for name, claim in (("w0", "a"), ("w1", "b")):
        pod = BB.pod(name, "gang")
        pod["spec"]["volumes"] = [B.claim_volume(claim)]
        cluster.add_pod(pod)
    result = vcore.Scheduler(cluster).run_cycle()
    placed = {p.pod: p for p in result.bindings}
    assert {p.node for p in placed.values()} == {"n1", "n2"}
    for key, p in placed.items():
        pv = {"n1": "pv-1", "n2": "pv-2"}[p.node]
        claim = {f"{BB.NS}/w0": "a", f"{BB.NS}/w1": "b"}[key]
        assert p.volumes == VolumeBinds(p.node, ((pv, f"{BB.NS}/{claim}", f"uid-{claim}"),), ())
        assert cluster.volume_binds(key) == p.volumes


def test_a_gang_that_cannot_have_all_its_volumes_gives_them_back():
    cluster = _cluster(pvs=[_local_pv("pv-1", "n1")], pvcs=[_claim("a", namespace=BB.NS), _claim("b", namespace=BB.NS)])
    cluster.add_podgroup(BB.podgroup("gang", 2))
    for name, claim in (("w0", "a"), ("w1", "b")):
        pod = BB.pod(name, "gang")
        pod["spec"]["volumes"] = [B.claim_volume(claim)]
        cluster.add_pod(pod)
    result = vcore.Scheduler(cluster).run_cycle()
    assert result.bindings == []
    # Nothing stays assumed: a pod of another claim takes the PV.
    cluster.add_persistent_volume_claim(_claim("c"))
    assert vcore.Scheduler(cluster).schedule([_user("p", "c")])[0].node == "n1"
