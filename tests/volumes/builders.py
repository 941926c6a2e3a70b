"""Builders of storage objects and pods for the volume plugin tests, shaped as the API serves them (dicts), with the
helpers of kube-scheduler's own tests (volumebinding/test_utils.go and binder_test.go, the plugins' *_test.go)
ported so that their tables read the same here."""

from __future__ import annotations

from typing import Any

HOSTNAME = "kubernetes.io/hostname"
ZONE_BETA, REGION_BETA = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
ZONE_GA, REGION_GA = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


def node(name: str, labels: dict[str, str] | None = None, *, hostname: bool = True) -> dict:
    """makeNode: a node with the hostname label (and any others), room for any test pod."""
    all_labels = ({HOSTNAME: name} if hostname else {}) | dict(labels or {})
    return {
        "metadata": {"name": name, "labels": all_labels},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "1000"}},
    }


def pod(name: str, *volumes: dict, namespace: str = "default", uid: str = "", node_name: str = "") -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "volumes": list(volumes)}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": meta, "spec": spec}


def claim_volume(claim: str, name: str = "") -> dict:
    return {"name": name or f"vol-{claim}", "persistentVolumeClaim": {"claimName": claim}}


def ephemeral_volume(name: str) -> dict:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}


def inline(source: str, name: str = "", **fields: Any) -> dict:
    """An inline volume of an in-tree source, e.g. inline("gcePersistentDisk", pdName="foo")."""
    return {"name": name or f"{source}-{len(fields)}", source: dict(fields)}


def pvc(
    name: str,
    storage_class: str | None = None,
    *,
    namespace: str = "default",
    uid: str = "",
    request: str | None = None,
    volume_name: str = "",
    bound: bool = False,
    selected_node: str | None = None,
    access_modes: tuple[str, ...] = (),
    phase: str | None = None,
    owner_uid: str | None = None,
    resource_version: str = "",
    volume_mode: str | None = None,
    deleting: bool = False,
    selector: dict | None = None,
    annotations: dict[str, str] | None = None,
) -> dict:
    """A claim: bound (volumeName and the bind-completed annotation), pre-bound (volumeName only), selected for a
    node (the selected-node annotation), owned by a pod (a controller ownerReference)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": dict(annotations or {})}
    if uid:
        meta["uid"] = uid
    if resource_version:
        meta["resourceVersion"] = resource_version
    if bound:
        meta["annotations"][BIND_COMPLETED] = "yes"
    if selected_node is not None:
        meta["annotations"][SELECTED_NODE] = selected_node
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid, "controller": True}
        ]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if volume_name:
        spec["volumeName"] = volume_name
    if access_modes:
        spec["accessModes"] = list(access_modes)
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    if selector is not None:
        spec["selector"] = selector
    out: dict[str, Any] = {"metadata": meta, "spec": spec}
    if phase is not None:
        out["status"] = {"phase": phase}
    return out


def affinity(**terms: list[str]) -> dict:
    """A PV node affinity with one term of "key In values" requirements (keys given as keyword arguments)."""
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": k, "operator": "In", "values": list(v)} for k, v in terms.items()]}
            ]
        }
    }


def node_affinity(key: str, *values: str) -> dict:
    return {
        "required": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]
        }
    }


def pv(
    name: str,
    storage_class: str = "",
    *,
    capacity: str | None = None,
    phase: str | None = "Available",
    node_affinity: dict | None = None,
    claim: dict | None = None,
    labels: dict[str, str] | None = None,
    access_modes: tuple[str, ...] = (),
    resource_version: str = "",
    volume_mode: str | None = None,
    source: dict | None = None,
    annotations: dict[str, str] | None = None,
    deleting: bool = False,
) -> dict:
    """A PV; ``claim`` (a claim dict) sets its claimRef to that claim (uid included)."""
    meta: dict[str, Any] = {"name": name, "labels": dict(labels or {}), "annotations": dict(annotations or {})}
    if resource_version:
        meta["resourceVersion"] = resource_version
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"storageClassName": storage_class, **(source or {})}
    if capacity is not None:
        spec["capacity"] = {"storage": capacity}
    if node_affinity is not None:
        spec["nodeAffinity"] = node_affinity
    if access_modes:
        spec["accessModes"] = list(access_modes)
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    if claim is not None:
        cm = claim["metadata"]
        spec["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": cm["namespace"],
            "name": cm["name"],
            "uid": cm.get("uid", ""),
        }
    out: dict[str, Any] = {"metadata": meta, "spec": spec}
    if phase is not None:
        out["status"] = {"phase": phase}
    return out


def storage_class(
    name: str,
    mode: str | None = None,
    provisioner: str = "",
    *,
    allowed_topologies: list[dict[str, list[str]]] | None = None,
) -> dict:
    """A StorageClass; ``allowed_topologies``: terms as {key: values}."""
    out: dict[str, Any] = {"metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        out["volumeBindingMode"] = mode
    if allowed_topologies is not None:
        out["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in t.items()]} for t in allowed_topologies
        ]
    return out


def csi_node(name: str, limits: dict[str, int | None] | None = None, migrated: str | None = None) -> dict:
    """A CSINode: per driver its allocatable count (None: the driver sets none), the migrated-plugins annotation."""
    meta: dict[str, Any] = {"name": name}
    if migrated is not None:
        meta["annotations"] = {MIGRATED_PLUGINS: migrated}
    drivers = []
    for driver, count in (limits or {}).items():
        entry: dict[str, Any] = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {"metadata": meta, "spec": {"drivers": drivers}}


def csi_driver(name: str, storage_capacity: bool | None) -> dict:
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return {"metadata": {"name": name}, "spec": spec}


def capacity(
    name: str,
    storage_class_name: str,
    topology: dict | None,
    capacity_: str = "",
    maximum: str = "",
    namespace: str = "default",
) -> dict:
    out: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace}, "storageClassName": storage_class_name}
    if topology is not None:
        out["nodeTopology"] = topology
    if capacity_:
        out["capacity"] = capacity_
    if maximum:
        out["maximumVolumeSize"] = maximum
    return out


def attachment(name: str, node_name: str, attacher: str, pv_name: str | None) -> dict:
    source = {} if pv_name is None else {"persistentVolumeName": pv_name}
    return {"metadata": {"name": name}, "spec": {"nodeName": node_name, "attacher": attacher, "source": source}}
