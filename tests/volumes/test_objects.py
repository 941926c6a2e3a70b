"""Storage objects through the Cluster: add, update and remove per kind, bad input named by object and field with
the state unchanged, the fields Kubernetes resolves on read (the beta storage-class annotation, zone labels, storage
quantities compared exactly), and kubernetes client models taken as they come."""

from __future__ import annotations

import re

import pytest
from kubernetes import client

import vcore
from tests.volumes import builders as B
from tests.volumes.harness import Objects, cluster_of, expect, outcome
from vcore.errors import ObjectExistsError, ObjectNotFoundError
from vcore.volumes.objects import storage_size

KINDS = {
    "persistent_volume": (B.pv("pv-1", "local", capacity="1Gi"), "pv-1"),
    "persistent_volume_claim": (B.pvc("c-1", "local"), "default/c-1"),
    "storage_class": (B.storage_class("local", "WaitForFirstConsumer"), "local"),
    "csi_node": (B.csi_node("n1", {"d": 2}), "n1"),
    "csi_driver": (B.csi_driver("d", True), "d"),
    "csi_storage_capacity": (B.capacity("cap", "local", {}, "1Gi"), "default/cap"),
    "volume_attachment": (B.attachment("va", "n1", "d", "pv-1"), "va"),
}
KIND_NAMES = {
    "persistent_volume": "persistentvolume",
    "persistent_volume_claim": "persistentvolumeclaim",
    "storage_class": "storageclass",
    "csi_node": "csinode",
    "csi_driver": "csidriver",
    "csi_storage_capacity": "csistoragecapacity",
    "volume_attachment": "volumeattachment",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_add_update_remove(kind):
    obj, key = KINDS[kind]
    cluster = vcore.Cluster()
    getattr(cluster, f"add_{kind}")(obj)
    assert cluster.storage_object(KIND_NAMES[kind], key) == obj
    with pytest.raises(ObjectExistsError, match=f"{KIND_NAMES[kind]} {key}: already exists"):
        getattr(cluster, f"add_{kind}")(obj)
    getattr(cluster, f"update_{kind}")(obj)
    getattr(cluster, f"remove_{kind}")(key)
    assert cluster.storage_object(KIND_NAMES[kind], key) is None
    with pytest.raises(ObjectNotFoundError, match=f"{KIND_NAMES[kind]} {key}: not found"):
        getattr(cluster, f"remove_{kind}")(obj)
    with pytest.raises(ObjectNotFoundError, match=f"{KIND_NAMES[kind]} {key}: not found"):
        getattr(cluster, f"update_{kind}")(obj)


BAD = [
    (
        "persistent_volume",
        {"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "ten"}}},
        ValueError,
        "persistentvolume pv: spec.capacity.storage: invalid quantity 'ten'",
    ),
    (
        "persistent_volume",
        {"metadata": {"name": "pv"}, "spec": {"accessModes": ["ReadWriteSometimes"]}},
        ValueError,
        "persistentvolume pv: spec.accessModes[0]: unsupported access mode 'ReadWriteSometimes'",
    ),
    (
        "persistent_volume",
        {"metadata": {"name": "pv"}, "spec": {"volumeMode": "Raw"}},
        ValueError,
        "persistentvolume pv: spec.volumeMode: must be Filesystem or Block, got 'Raw'",
    ),
    (
        "persistent_volume",
        {
            "metadata": {"name": "pv"},
            "spec": {
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Near", "values": ["v"]}]}]
                    }
                }
            },
        },
        ValueError,
        "persistentvolume pv: spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: "
        "not a valid selector operator: 'Near'",
    ),
    (
        "persistent_volume",
        {"metadata": {"name": "pv"}, "spec": {"claimRef": "c"}},
        TypeError,
        "persistentvolume pv: spec.claimRef: must be a mapping",
    ),
    (
        "persistent_volume",
        {"metadata": {}, "spec": {}},
        ValueError,
        "persistentvolume <unnamed>: metadata.name: required",
    ),
    (
        "persistent_volume_claim",
        {"metadata": {"name": "c"}, "spec": {"resources": {"requests": {"storage": "-1Gi"}}}},
        ValueError,
        "persistentvolumeclaim default/c: spec.resources.requests.storage: quantity '-1Gi' must not be negative",
    ),
    (
        "persistent_volume_claim",
        {"metadata": {"name": "c"}, "spec": {"selector": {"matchExpressions": [{"key": "k", "operator": "In"}]}}},
        ValueError,
        "persistentvolumeclaim default/c: spec.selector.matchExpressions[0].values: must be specified when "
        "`operator` is 'In'",
    ),
    (
        "persistent_volume_claim",
        {"metadata": {"name": "c", "annotations": {"a": 1}}, "spec": {}},
        TypeError,
        "persistentvolumeclaim default/c: metadata.annotations.a: must map strings to strings",
    ),
    (
        "persistent_volume_claim",
        {"metadata": {"name": "c"}, "spec": {"storageClassName": 5}},
        TypeError,
        "persistentvolumeclaim default/c: spec.storageClassName: must be a string",
    ),
    (
        "storage_class",
        {"metadata": {"name": "sc"}, "volumeBindingMode": "Later"},
        ValueError,
        "storageclass sc: volumeBindingMode: must be Immediate or WaitForFirstConsumer, got 'Later'",
    ),
    (
        "storage_class",
        {"metadata": {"name": "sc"}, "allowedTopologies": [{"matchLabelExpressions": [{"key": 3}]}]},
        TypeError,
        "storageclass sc: allowedTopologies[0].matchLabelExpressions[0].key: must be a string",
    ),
    (
        "csi_node",
        {"metadata": {"name": "n"}, "spec": {"drivers": [{"name": "d", "allocatable": {"count": -1}}]}},
        ValueError,
        "csinode n: spec.drivers[0].allocatable.count: must be >= 0, got -1",
    ),
    (
        "csi_node",
        {"metadata": {"name": "n"}, "spec": {"drivers": [{"name": "d", "allocatable": {"count": "2"}}]}},
        TypeError,
        "csinode n: spec.drivers[0].allocatable.count: must be an integer",
    ),
    (
        "csi_driver",
        {"metadata": {"name": "d"}, "spec": {"storageCapacity": "yes"}},
        TypeError,
        "csidriver d: spec.storageCapacity: must be true or false",
    ),
    (
        "csi_storage_capacity",
        {"metadata": {"name": "cap"}, "capacity": "lots"},
        ValueError,
        "csistoragecapacity default/cap: capacity: invalid quantity 'lots'",
    ),
    (
        "volume_attachment",
        {"metadata": {"name": "va"}, "spec": {"nodeName": ["n1"]}},
        TypeError,
        "volumeattachment va: spec.nodeName: must be a string",
    ),
]


def _key(kind: str, name: str) -> str:
    return f"default/{name}" if kind in ("persistent_volume_claim", "csi_storage_capacity") else name


@pytest.mark.parametrize("kind, obj, error, message", BAD, ids=[m.split(": ", 1)[1] for _, _, _, m in BAD])
def test_bad_objects_are_refused_naming_the_field_and_change_nothing(kind, obj, error, message):
    good, _ = KINDS[kind]
    name = obj["metadata"].get("name") or "x"
    cluster = vcore.Cluster()
    with pytest.raises(error, match="^" + re.escape(message)):
        getattr(cluster, f"add_{kind}")(obj)
    assert cluster.storage_object(KIND_NAMES[kind], _key(kind, name)) is None
    # An update with the bad object leaves the object held as it was.
    held = {**good, "metadata": {**good["metadata"], "name": name}}
    getattr(cluster, f"add_{kind}")(held)
    with pytest.raises(error, match="^" + re.escape(message)):
        getattr(cluster, f"update_{kind}")(obj)
    assert cluster.storage_object(KIND_NAMES[kind], _key(kind, name)) == held


def test_a_bad_pod_volume_is_refused_naming_it():
    cluster = vcore.Cluster()
    cluster.add_node(B.node("n1"))
    bad = B.pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": 7}})
    with pytest.raises(
        TypeError,
        match=r"^pod default/p: spec.volumes\[0\].persistentVolumeClaim.claimName: must be "
        r"a string",
    ):
        vcore.Scheduler(cluster).schedule([bad])
    assert cluster.n_pods == 0


def test_storage_quantities_compare_as_kubernetes_compares_them():
    assert storage_size("1Gi", "o", "f") == (2**30, 1000)
    assert storage_size("0", "o", "f") == (0, 0)
    assert storage_size("1.5", "o", "f") < storage_size("2", "o", "f") < storage_size("2.001", "o", "f")
    assert storage_size("1000M", "o", "f") < storage_size("1Gi", "o", "f")
    assert storage_size("1G", "o", "f") == storage_size("1000000000", "o", "f")


def test_the_beta_storage_class_annotation_wins_over_the_field():
    # GetPersistentVolumeClaimClass / GetPersistentVolumeClass read the beta annotation first.
    ann = {"volume.beta.kubernetes.io/storage-class": "local"}
    pv = B.pv("pv-1", "other", capacity="1Gi", annotations=ann, node_affinity=B.node_affinity(B.HOSTNAME, "n1"))
    claim = B.pvc("c", "other", annotations=ann)
    cluster = cluster_of(
        Objects(
            nodes=[B.node("n1"), B.node("n2")],
            pvs=[pv],
            pvcs=[claim],
            classes=[B.storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")],
        )
    )
    assert outcome(cluster, B.pod("p", B.claim_volume("c")), ["VolumeBinding"]) == expect(
        n1=(), n2="node(s) didn't find available persistent volumes to bind"
    )


def test_client_models_are_taken_as_they_come():
    pv = client.V1PersistentVolume(
        metadata=client.V1ObjectMeta(name="pv-1"),
        spec=client.V1PersistentVolumeSpec(
            capacity={"storage": "5Gi"},
            access_modes=["ReadWriteOnce"],
            storage_class_name="local",
            host_path=client.V1HostPathVolumeSource(path="/data"),
            node_affinity=client.V1VolumeNodeAffinity(
                required=client.V1NodeSelector(
                    node_selector_terms=[
                        client.V1NodeSelectorTerm(
                            match_expressions=[
                                client.V1NodeSelectorRequirement(key=B.HOSTNAME, operator="In", values=["n2"])
                            ]
                        )
                    ]
                )
            ),
        ),
        status=client.V1PersistentVolumeStatus(phase="Available"),
    )
    claim = client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="c", namespace="default", uid="u"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            storage_class_name="local",
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}),
        ),
    )
    sc = client.V1StorageClass(
        metadata=client.V1ObjectMeta(name="local"),
        provisioner="kubernetes.io/no-provisioner",
        volume_binding_mode="WaitForFirstConsumer",
    )
    cluster = cluster_of(Objects(nodes=[B.node("n1"), B.node("n2")]))
    cluster.add_storage_class(sc)
    cluster.add_persistent_volume(pv)
    cluster.add_persistent_volume_claim(claim)
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="p", namespace="default"),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="c")],
            volumes=[
                client.V1Volume(
                    name="v", persistent_volume_claim=client.V1PersistentVolumeClaimVolumeSource(claim_name="c")
                )
            ],
        ),
    )
    placed = vcore.Scheduler(cluster).schedule([pod])[0]
    assert placed.node == "n2" and placed.volumes.bindings == (("pv-1", "default/c", "u"),)
