"""A pod's volumes as kube-scheduler's volume plugins see them, added to its converted spec.

The converter marks the pods that have a volume the plugins read (``may_use_volumes``: persistentVolumeClaim,
ephemeral and the in-tree disks); :func:`with_volumes` reads those volumes off the pod object into the spec's
``volumes`` entry, which the native core keeps with the pod (``PodVolumes``): the claim each names (a generic
ephemeral volume's claim is ``<pod name>-<volume name>``), what identifies an in-tree disk for VolumeRestrictions'
conflicts, and the disk translated to CSI for NodeVolumeLimits. Other volume sources are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vcore._native import _convert
from vcore.validation import optional_list, optional_mapping, type_name
from vcore.volumes import translation

if TYPE_CHECKING:
    from vcore._native._convert import PodSpec

__all__ = ["pod_volumes", "with_volumes"]

_SOURCES = (
    "persistentVolumeClaim",
    "ephemeral",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "rbd",
    "iscsi",
    "azureDisk",
    "azureFile",
    "cinder",
    "vsphereVolume",
    "portworxVolume",
)


def with_volumes(spec: PodSpec, pod: Any) -> PodSpec:
    """Add a converted pod spec's volumes (parsed only for pods the converter marked)."""
    if spec.get("may_use_volumes"):
        spec["volumes"] = pod_volumes(pod, spec["key"])
    return spec


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{where}: must be a string, got {type_name(value)}")
    return value


def _flag(value: Any, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise TypeError(f"{where}: must be true or false, got {type_name(value)}")
    return value


def pod_volumes(pod: Any, key: str) -> dict[str, Any]:
    """The volumes of a pod (dict or client model) the volume plugins read, as the native core takes them."""
    d = _convert.api_dict(pod, "pod")
    ctx = f"pod {key}"
    meta = optional_mapping(d.get("metadata"), f"{ctx}: metadata")
    spec = optional_mapping(d.get("spec"), f"{ctx}: spec")
    namespace, name = key.split("/", 1)
    items = []
    for i, volume in enumerate(optional_list(spec.get("volumes"), f"{ctx}: spec.volumes")):
        volume = optional_mapping(volume, f"{ctx}: spec.volumes[{i}]")
        path = f"{ctx}: spec.volumes[{i}]"
        vol_name = _string(volume.get("name"), f"{path}.name")
        source = next((s for s in _SOURCES if volume.get(s) is not None), None)
        if source is None:
            continue
        fields = optional_mapping(volume[source], f"{path}.{source}")
        item: dict[str, Any] = {"source": source, "name": vol_name}
        at = f"{path}.{source}"
        if source == "persistentVolumeClaim":
            item["claim"] = _string(fields.get("claimName"), f"{at}.claimName")
        elif source == "ephemeral":
            item["claim"] = f"{name}-{vol_name}"
        elif source == "gcePersistentDisk":
            item["disk"] = _string(fields.get("pdName"), f"{at}.pdName")
        elif source == "awsElasticBlockStore":
            item["disk"] = _string(fields.get("volumeID"), f"{at}.volumeID")
        elif source == "iscsi":
            item["disk"] = _string(fields.get("iqn"), f"{at}.iqn")
        elif source == "rbd":
            item["disk"] = _string(fields.get("image"), f"{at}.image")
            item["pool"] = _string(fields.get("pool"), f"{at}.pool")
            item["monitors"] = [
                _string(m, f"{at}.monitors[{k}]")
                for k, m in enumerate(optional_list(fields.get("monitors"), f"{at}.monitors"))
            ]
        if source in ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"):
            item["read_only"] = _flag(fields.get("readOnly"), f"{at}.readOnly")
        plugin = translation.inline_plugin(source)
        if plugin:
            t = translation.translate_inline(source, fields)
            item.update(migration_plugin=plugin, csi_driver=t.driver, csi_handle=t.handle, translation_error=t.error)
        items.append(item)
    uid = _string(meta.get("uid"), f"{ctx}: metadata.uid")
    return {"namespace": namespace, "name": name, "uid": uid, "items": items}


def claim_names(spec: Mapping[str, Any]) -> list[str]:
    """The claims (namespace/name) a converted pod spec's volumes name, in volume order."""
    volumes = spec.get("volumes")
    if not volumes:
        return []
    return [f"{volumes['namespace']}/{v['claim']}" for v in volumes["items"] if "claim" in v]
