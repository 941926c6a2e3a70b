"""vcore-scheduler's volume plugins on the real control plane, with kube-controller-manager's PV binder and
ephemeral volume controller and the testenv's WaitForFirstConsumer provisioner: pods with a static local PV, a
dynamically provisioned claim and a generic ephemeral volume end up bound, on the node their volume allows, with
their claims Bound; a pod whose claim does not exist waits (in kube-scheduler's words) until the claim appears; a
provisioner that gives up on a node sends the pod elsewhere."""

from __future__ import annotations

import functools

import pytest

from vcore.batch.config import DEFAULT_CONF
from vcore_kube.kubeclient import ApiException
from vcore_kube.testenv.objects import create_nodes, node, pod
from vcore_kube.testenv.provisioner import NAME as PROVISIONER, NO_STORAGE_LABEL, Provisioner

from .harness import events, wait_bound, wait_for

SCHEDULER = "vcore-e2e-volumes"


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, SCHEDULER)


@pytest.fixture(scope="module")
def provisioner(control_plane):
    api = control_plane.admin_api()
    p = Provisioner(api)
    p.start()
    yield p
    p.stop()
    api.close()


def _storage_class(admin, name: str, provisioner: str, mode: str = "WaitForFirstConsumer") -> None:
    try:
        admin.create(
            "/apis/storage.k8s.io/v1/storageclasses",
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": provisioner,
                "volumeBindingMode": mode,
                "reclaimPolicy": "Delete",
            },
        )
    except ApiException as e:
        if e.status != 409:
            raise


def _claim(admin, namespace: str, name: str, storage_class: str, size: str = "1Gi") -> None:
    admin.create(
        f"/api/v1/namespaces/{namespace}/persistentvolumeclaims",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "storageClassName": storage_class,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
            },
        },
    )


def _local_pv(admin, name: str, node_name: str, storage_class: str, size: str = "5Gi") -> None:
    admin.create(
        "/api/v1/persistentvolumes",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_class,
                "persistentVolumeReclaimPolicy": "Retain",
                "local": {"path": f"/mnt/{name}"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}
                                ]
                            }
                        ]
                    }
                },
            },
        },
    )


def _user(namespace: str, name: str, *volumes: dict, selector: dict | None = None) -> dict:
    p = pod(name, namespace, scheduler=SCHEDULER, cpu="100m")
    p["spec"]["volumes"] = list(volumes)
    if selector:
        p["spec"]["nodeSelector"] = selector
    return p


def _claim_phase(admin, namespace: str, name: str) -> str | None:
    try:
        claim = admin.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}")
        return (claim.get("status") or {}).get("phase")
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def _pool(admin, prefix: str, n: int, **labels: str) -> dict:
    create_nodes(admin, [node(f"{prefix}-{i}", labels={"pool": prefix, **labels}) for i in range(n)])
    return {"pool": prefix}


def test_a_static_local_pv_takes_the_pod_to_its_node(admin, namespace, scheduler):
    run = scheduler()
    selector = _pool(admin, "static", 3)
    _storage_class(admin, "local-static", "kubernetes.io/no-provisioner")
    _local_pv(admin, f"{namespace}-pv", "static-2", "local-static")
    _claim(admin, namespace, "data", "local-static")
    admin.create(
        f"/api/v1/namespaces/{namespace}/pods",
        _user(namespace, "web", {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}, selector=selector),
    )
    placed = wait_bound(admin, namespace, ["web"], timeout=90, run=run)
    assert placed == {"web": "static-2"}
    wait_for(lambda: _claim_phase(admin, namespace, "data") == "Bound", 60, "claim data Bound", run)
    pv = admin.get(f"/api/v1/persistentvolumes/{namespace}-pv")
    assert pv["spec"]["claimRef"]["name"] == "data" and pv["status"]["phase"] == "Bound"


def test_a_claim_is_provisioned_on_the_node_chosen_and_the_pod_bound_there(admin, namespace, scheduler, provisioner):
    run = scheduler()
    selector = _pool(admin, "dynamic", 3)
    _storage_class(admin, "wffc-dynamic", PROVISIONER)
    _claim(admin, namespace, "scratch", "wffc-dynamic")
    admin.create(
        f"/api/v1/namespaces/{namespace}/pods",
        _user(
            namespace, "job", {"name": "scratch", "persistentVolumeClaim": {"claimName": "scratch"}}, selector=selector
        ),
    )
    placed = wait_bound(admin, namespace, ["job"], timeout=90, run=run)
    wait_for(lambda: _claim_phase(admin, namespace, "scratch") == "Bound", 60, "claim scratch Bound", run)
    claim = admin.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/scratch")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == placed["job"]
    pv = admin.get(f"/api/v1/persistentvolumes/{claim['spec']['volumeName']}")
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == [placed["job"]]


def test_a_generic_ephemeral_volume_is_created_provisioned_and_bound(admin, namespace, scheduler, provisioner):
    run = scheduler()
    selector = _pool(admin, "ephemeral", 2)
    _storage_class(admin, "wffc-dynamic", PROVISIONER)
    template = {
        "spec": {
            "storageClassName": "wffc-dynamic",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        }
    }
    admin.create(
        f"/api/v1/namespaces/{namespace}/pods",
        _user(namespace, "eph", {"name": "cache", "ephemeral": {"volumeClaimTemplate": template}}, selector=selector),
    )
    # The ephemeral volume controller makes the claim eph-cache (owned by the pod); the scheduler waits for it.
    placed = wait_bound(admin, namespace, ["eph"], timeout=90, run=run)
    wait_for(lambda: _claim_phase(admin, namespace, "eph-cache") == "Bound", 60, "claim eph-cache Bound", run)
    claim = admin.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/eph-cache")
    assert claim["metadata"]["ownerReferences"][0]["name"] == "eph"
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == placed["eph"]


def test_a_missing_claim_keeps_the_pod_pending_until_it_appears(admin, namespace, scheduler, provisioner):
    run = scheduler()
    selector = _pool(admin, "missing", 2)
    _storage_class(admin, "wffc-dynamic", PROVISIONER)
    admin.create(
        f"/api/v1/namespaces/{namespace}/pods",
        _user(namespace, "waits", {"name": "d", "persistentVolumeClaim": {"claimName": "later"}}, selector=selector),
    )
    wait_for(
        lambda: any(
            'persistentvolumeclaim "later" not found' in (e.get("note") or "")
            for e in events(admin, namespace, "FailedScheduling")
        ),
        60,
        "FailedScheduling",
        run,
    )
    _claim(admin, namespace, "later", "wffc-dynamic")
    wait_bound(admin, namespace, ["waits"], timeout=90, run=run)
    wait_for(lambda: _claim_phase(admin, namespace, "later") == "Bound", 60, "claim later Bound", run)


def test_a_provisioning_failure_undoes_the_binding_and_the_pod_is_placed_again(
    admin, namespace, scheduler, provisioner
):
    run = scheduler()
    create_nodes(
        admin,
        [
            node("refuse-0", labels={"pool": "refuse", NO_STORAGE_LABEL: "true"}, cpu="64"),
            node("refuse-1", labels={"pool": "refuse"}, cpu="2"),
        ],
    )
    _storage_class(admin, "wffc-dynamic", PROVISIONER)
    _claim(admin, namespace, "vol", "wffc-dynamic")
    # LeastAllocated prefers the big node; the provisioner gives up there (it drops the selected node), PreBind
    # fails, the assumption is undone and the pod goes back to the queue.
    admin.create(
        f"/api/v1/namespaces/{namespace}/pods",
        _user(
            namespace,
            "mover",
            {"name": "vol", "persistentVolumeClaim": {"claimName": "vol"}},
            selector={"pool": "refuse"},
        ),
    )
    failure = 'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "vol"'
    wait_for(
        lambda: any(failure in (e.get("note") or "") for e in events(admin, namespace, "FailedScheduling")),
        90,
        "PreBind's failure",
        run,
    )
    assert provisioner.rescheduled >= 1
    # Cordon the node without storage: the next attempt takes the other one.
    admin.patch("/api/v1/nodes/refuse-0", {"spec": {"unschedulable": True}})
    placed = wait_bound(admin, namespace, ["mover"], timeout=90, run=run)
    assert placed == {"mover": "refuse-1"}
    wait_for(lambda: _claim_phase(admin, namespace, "vol") == "Bound", 60, "claim vol Bound", run)
    claim = admin.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/vol")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "refuse-1"


def test_a_gang_under_volcanos_configuration_goes_where_its_volumes_are(admin, namespace, scheduler):
    """vcore-scheduler given a volcano-scheduler.conf (Volcano's default) places PodGroups with Volcano's predicates,
    whose volume filters are on unless switched off: the gang's members go to the two nodes that hold a static local
    PV (either PV matches either claim, so which member goes where is VolumeBinding's choice), and each claim is
    bound to the PV on its member's node (the batch cycle's VolumeBinding PreBind)."""
    run = scheduler(cycle=DEFAULT_CONF)
    selector = _pool(admin, "gangvol", 4)
    _storage_class(admin, "local-static", "kubernetes.io/no-provisioner")
    homes = {"member-0": "gangvol-1", "member-1": "gangvol-3"}  # where the PVs are
    for member, home in homes.items():
        _local_pv(admin, f"{namespace}-{member}", home, "local-static")
        _claim(admin, namespace, f"{member}-data", "local-static")
    admin.create(
        f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "member", "namespace": namespace},
            "spec": {"minMember": 2},
        },
    )
    for member in homes:
        p = _user(
            namespace,
            member,
            {"name": "data", "persistentVolumeClaim": {"claimName": f"{member}-data"}},
            selector=selector,
        )
        p["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "member"}
        admin.create(f"/api/v1/namespaces/{namespace}/pods", p)
    placed = wait_bound(admin, namespace, list(homes), timeout=90, run=run)
    assert sorted(placed.values()) == sorted(homes.values()), placed
    for member, node_name in placed.items():
        wait_for(lambda m=member: _claim_phase(admin, namespace, f"{m}-data") == "Bound", 60, f"{member}'s claim", run)
        claim = admin.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{member}-data")
        pv = admin.get(f"/api/v1/persistentvolumes/{claim['spec']['volumeName']}")
        terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert terms[0]["matchExpressions"][0]["values"] == [node_name], (member, pv["metadata"]["name"])
