"""kube-scheduler v1.34's queueing hints of the volume plugins: which storage event may make a pod they rejected
schedulable again, so that the loop wakes only those pods (the others wait for their own kind of change).

A pod remembers the plugins that rejected it (:func:`rejecting_plugins`, from the reasons of its last attempt); a
storage event wakes it when one of those plugins registered the event and its hint says the event may help
(:func:`wakes`). Node and pod events are left to the loop, which wakes every unschedulable pod on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vcore_kube.convert import quantity_value

VOLUME_RESTRICTIONS, NODE_VOLUME_LIMITS, VOLUME_ZONE, VOLUME_BINDING = (
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeZone",
    "VolumeBinding",
)

# The volume plugins' per-node reasons in kube-scheduler's words (their pod-wide rejections carry the plugin).
REASON_PLUGINS = {
    "node(s) had no available disk": VOLUME_RESTRICTIONS,
    (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "
        "another pod"
    ): VOLUME_RESTRICTIONS,
    "node(s) exceed max volume count": NODE_VOLUME_LIMITS,
    "node(s) had no available volume zone": VOLUME_ZONE,
    "node(s) didn't match PersistentVolume's node affinity": VOLUME_BINDING,
    "node(s) didn't find available persistent volumes to bind": VOLUME_BINDING,
    "node(s) did not have enough free storage": VOLUME_BINDING,
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)": VOLUME_BINDING,
}

#: The storage kinds the loop follows (the reflectors' Kind names).
STORAGE_KINDS = (
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
)

ZONE_LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
# The in-tree inline volumes CSI migration knows, with the CSI driver each translates to.
INLINE_DRIVERS = {
    "gcePersistentDisk": "pd.csi.storage.gke.io",
    "awsElasticBlockStore": "ebs.csi.aws.com",
    "azureDisk": "disk.csi.azure.com",
    "azureFile": "file.csi.azure.com",
    "cinder": "cinder.csi.openstack.org",
    "vsphereVolume": "csi.vsphere.vmware.com",
    "portworxVolume": "pxd.portworx.com",
}
INLINE_MIGRATABLE = tuple(INLINE_DRIVERS)


def rejecting_plugins(reasons: Iterable[str]) -> frozenset[str]:
    """The volume plugins behind an attempt's reasons."""
    out = set()
    for reason in reasons:
        # A reason in a plugin's own words (vcore.reasons.NotedReason) names the plugin; the others are its table's.
        plugin = getattr(reason, "plugin", "") or REASON_PLUGINS.get(reason, "")
        if plugin:
            out.add(plugin)
    return frozenset(out)


def _meta(obj: Mapping | None) -> Mapping:
    return (obj or {}).get("metadata") or {}


def _claims(pod: Mapping, *, ephemeral: bool) -> set[str]:
    """The claims a pod's volumes name (with its generic ephemeral volumes' when asked)."""
    name = _meta(pod).get("name", "")
    out = set()
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if v.get("persistentVolumeClaim") is not None:
            out.add(v["persistentVolumeClaim"].get("claimName") or "")
        elif ephemeral and v.get("ephemeral") is not None:
            out.add(f"{name}-{v.get('name', '')}")
    return out


def _names_claim(pod: Mapping, claim: Mapping, *, ephemeral: bool) -> bool:
    if (_meta(claim).get("namespace") or "default") != (_meta(pod).get("namespace") or "default"):
        return False
    return _meta(claim).get("name") in _claims(pod, ephemeral=ephemeral)


def _limits(csi_node: Mapping | None) -> dict[str, int]:
    out = {}
    for d in ((csi_node or {}).get("spec") or {}).get("drivers") or []:
        out[d.get("name", "")] = ((d.get("allocatable") or {}).get("count")) or 0
    return out


def _zone_labels(pv: Mapping | None) -> dict[str, str]:
    labels = _meta(pv).get("labels") or {}
    return {k: labels[k] for k in ZONE_LABELS if k in labels}


def _volume_limit(capacity: Mapping | None) -> Any:
    capacity = capacity or {}
    return capacity.get("maximumVolumeSize", capacity.get("capacity"))


def _quantity_grew(old: Any, new: Any) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    old_value, new_value = quantity_value(old), quantity_value(new)
    return old_value is None or new_value is None or new_value > old_value


def _hint(plugin: str, kind: str, pod: Mapping, old: Mapping | None, new: Mapping | None) -> bool:
    """Whether ``plugin``'s hint for this event queues the pod (False: the plugin did not register the event)."""
    added, deleted = old is None, new is None
    # The object before and after the event (empty where the event has none, which the checks never read).
    before: Mapping = old or {}
    after: Mapping = new or {}
    if plugin == VOLUME_RESTRICTIONS:
        return kind == "PersistentVolumeClaim" and added and _names_claim(pod, after, ephemeral=False)
    if plugin == NODE_VOLUME_LIMITS:
        if kind == "CSINode" and not deleted:
            if added:
                return True
            old_limits, new_limits = _limits(before), _limits(after)
            return any(limit > old_limits.get(driver, 0) for driver, limit in new_limits.items())
        if kind == "PersistentVolumeClaim" and added:
            return _names_claim(pod, after, ephemeral=True)
        if kind == "VolumeAttachment" and deleted:
            attacher = (before.get("spec") or {}).get("attacher")
            # A pod with a claim may gain from any detach; an inline disk migrated to CSI from its driver's.
            for v in (pod.get("spec") or {}).get("volumes") or []:
                if v.get("persistentVolumeClaim") is not None:
                    return True
                source = next((s for s in INLINE_MIGRATABLE if v.get(s) is not None), None)
                if source is not None and INLINE_DRIVERS[source] == attacher:
                    return True
            return False
        return False
    if plugin == VOLUME_ZONE:
        if kind == "StorageClass" and added:
            return after.get("volumeBindingMode") == "WaitForFirstConsumer"
        if kind == "PersistentVolumeClaim" and not deleted:
            return _names_claim(pod, after, ephemeral=False)
        if kind == "PersistentVolume" and not deleted:
            return added or _zone_labels(before) != _zone_labels(after)
        return False
    if plugin == VOLUME_BINDING:
        if kind == "StorageClass" and not deleted:
            return added or (before.get("allowedTopologies") or []) != (after.get("allowedTopologies") or [])
        if kind == "PersistentVolumeClaim" and not deleted:
            return _names_claim(pod, after, ephemeral=True)
        if kind == "PersistentVolume" and not deleted:
            return True
        if kind == "CSINode" and not deleted:
            return added or (_meta(before).get("annotations") or {}).get(MIGRATED_PLUGINS) != (
                _meta(after).get("annotations") or {}
            ).get(MIGRATED_PLUGINS)
        if kind == "CSIDriver" and not added and not deleted:
            drivers = {
                v["csi"].get("driver") for v in (pod.get("spec") or {}).get("volumes") or [] if v.get("csi") is not None
            }
            was = bool((before.get("spec") or {}).get("storageCapacity"))
            now = bool((after.get("spec") or {}).get("storageCapacity"))
            return _meta(after).get("name") in drivers and was and not now
        if kind == "CSIStorageCapacity" and not deleted:
            return added or _quantity_grew(_volume_limit(before), _volume_limit(after))
        return False
    return False


def wakes(plugins: Iterable[str], kind: str, pod: Mapping, old: Mapping | None, new: Mapping | None) -> bool:
    """Whether a storage event (``kind``, the object before and after; None for added or deleted) may make ``pod``,
    rejected by ``plugins``, schedulable."""
    return any(_hint(plugin, kind, pod, old, new) for plugin in plugins)
