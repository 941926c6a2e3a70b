"""The storage objects a Cluster holds, kept in step with the native volume store.

:class:`VolumeObjects` parses each object (vcore.volumes.objects), checks that an add finds no object of that key
and an update or removal finds one, and only then writes the native store, so a bad object changes nothing. It keeps
each object's API dict (what an adapter reads back to write PreBind's updates) and resourceVersion: an update with
the resourceVersion already held (a relist's copy) keeps what VolumeBinding assumed about the object, as
kube-scheduler's assume cache does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vcore._native import _core
from vcore.errors import ObjectExistsError, ObjectNotFoundError
from vcore.types import Placement, VolumeBinds
from vcore.volumes import objects

__all__ = ["VolumeObjects", "rejection_lookup", "volume_binds", "with_volume_binds"]


class VolumeObjects:
    """PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and
    VolumeAttachments of one cluster state. Callers hold the cluster's lock."""

    def __init__(self, state: _core.ClusterState) -> None:
        self._state = state
        self._held: dict[str, dict[str, objects.Parsed]] = {kind: {} for kind in objects.KINDS}

    def add(self, kind: objects.Kind, obj: Any) -> None:
        parsed = objects.parse(kind, obj)
        if parsed.key in self._held[kind]:
            raise ObjectExistsError(f"{kind} {parsed.key}: already exists (use update_{_method(kind)})")
        _core.volumes_put(self._state, kind, parsed.spec, False)
        self._held[kind][parsed.key] = parsed

    def update(self, kind: objects.Kind, obj: Any) -> None:
        parsed = objects.parse(kind, obj)
        old = self._held[kind].get(parsed.key)
        if old is None:
            raise ObjectNotFoundError(f"{kind} {parsed.key}: not found (use add_{_method(kind)})")
        same_version = bool(parsed.resource_version) and parsed.resource_version == old.resource_version
        _core.volumes_put(self._state, kind, parsed.spec, same_version)
        self._held[kind][parsed.key] = parsed

    def remove(self, kind: objects.Kind, obj: Any) -> None:
        key = objects.key_of(kind, obj)
        if key not in self._held[kind]:
            raise ObjectNotFoundError(f"{kind} {key}: not found")
        _core.volumes_remove(self._state, kind, key)
        del self._held[kind][key]

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """The API dict of an object held (name, or namespace/name for claims and capacities); None when absent."""
        parsed = self._held[kind].get(key)
        return None if parsed is None else parsed.obj

    def keys(self, kind: str) -> list[str]:
        return sorted(self._held[kind])


def _method(kind: str) -> str:
    return {
        objects.PERSISTENT_VOLUME: "persistent_volume",
        objects.CLAIM: "persistent_volume_claim",
        objects.STORAGE_CLASS: "storage_class",
        objects.CSI_NODE: "csi_node",
        objects.CSI_DRIVER: "csi_driver",
        objects.CAPACITY: "csi_storage_capacity",
        objects.ATTACHMENT: "volume_attachment",
    }[kind]


def volume_binds(state: _core.ClusterState, key: str) -> VolumeBinds | None:
    """What VolumeBinding's Reserve assumed for a bound pod, which PreBind writes (None when nothing)."""
    assumed = _core.volume_assumption(state, key)
    if assumed is None:
        return None
    return VolumeBinds(
        assumed["node"],
        tuple((pv, f"{ns}/{name}", uid) for pv, ns, name, uid in assumed["bindings"]),
        tuple(assumed["provisions"]),
    )


def with_volume_binds(state: _core.ClusterState, placements: list[Placement]) -> None:
    """Give placements what PreBind must write for their pods, in place: only the pods VolumeBinding assumed volumes
    for are looked up (usually none)."""
    assumed = _core.volume_assumed_pods(state)
    if not assumed:
        return
    where = {p.pod: i for i, p in enumerate(placements)}
    for key in assumed:
        i = where.get(key)
        if i is not None:
            placements[i] = placements[i]._replace(volumes=volume_binds(state, key))


def rejection_lookup(state: _core.ClusterState, key: str) -> Callable[[str], str]:
    """For vcore.reasons.reason_counts: the message a volume plugin noted when it rejected the pod."""
    return lambda plugin: _core.volume_rejection(state, key, plugin)
