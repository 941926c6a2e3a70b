"""VolumeBinding's PreBind for an adapter: the API writes that carry out what Reserve assumed, and the check, as
kube-scheduler's volume binder makes it (binder.go bindAPIUpdate and checkBindings), of whether the claims are bound.

:func:`writes` gives the objects to update (PUT, with the resourceVersion held, so a change since fails with a
conflict): each PV of a static binding with ``spec.claimRef`` to its claim (and ``pv.kubernetes.io/bound-by-controller``
when it was not bound to it already), each claim to provision with ``volume.kubernetes.io/selected-node``.
:func:`status` then reads the objects held (kept current by the watch): done when every claim is bound, an error when
the binding failed for good (a claimRef dropped, provisioning given up, a PV that does not allow the node), else not
yet. An object older than the version the write returned is waited for, as kube-scheduler does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from vcore._native import _core
from vcore.types import VolumeBinds
from vcore.volumes import objects as O
from vcore.volumes.store import VolumeObjects

__all__ = ["writes", "status", "written_key"]


def written_key(kind: str, key: str) -> str:
    """The key of an object in ``status``'s ``written`` map: ``persistentvolume/<name>`` or
    ``persistentvolumeclaim/<namespace>/<name>``."""
    return f"{kind}/{key}"


def _bound_to(pv: Mapping[str, Any], ns: str, name: str, uid: str) -> bool:
    ref = (pv.get("spec") or {}).get("claimRef")
    if ref is None or ref.get("name") != name or ref.get("namespace") != ns:
        return False
    return not ref.get("uid") or ref.get("uid") == uid


def writes(held: VolumeObjects, binds: VolumeBinds) -> list[tuple[str, dict[str, Any]]]:
    """The objects PreBind updates, in kube-scheduler's order (the PVs, then the claims); KeyError naming an object
    the cluster no longer holds."""
    out: list[tuple[str, dict[str, Any]]] = []
    for pv_name, claim_key, uid in binds.bindings:
        pv = held.get(O.PERSISTENT_VOLUME, pv_name)
        claim = held.get(O.CLAIM, claim_key)
        if pv is None:
            raise KeyError(f"persistentvolume {pv_name}: not found")
        ns, name = claim_key.split("/", 1)
        new = copy.deepcopy(pv)
        spec = new.setdefault("spec", {})
        meta = new.setdefault("metadata", {})
        ref = spec.get("claimRef") or {}
        if ref.get("name") != name or ref.get("namespace") != ns or ref.get("uid") != uid:
            claim_meta = (claim or {}).get("metadata") or {}
            spec["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": ns,
                "name": name,
                "uid": uid,
                "resourceVersion": claim_meta.get("resourceVersion", ""),
            }
        annotations = dict(meta.get("annotations") or {})
        if not _bound_to(pv, ns, name, uid) and O.BOUND_BY_CONTROLLER not in annotations:
            annotations[O.BOUND_BY_CONTROLLER] = "yes"
        meta["annotations"] = annotations
        out.append((O.PERSISTENT_VOLUME, new))
    for claim_key in binds.provisions:
        claim = held.get(O.CLAIM, claim_key)
        if claim is None:
            raise KeyError(f"persistentvolumeclaim {claim_key}: not found")
        new = copy.deepcopy(claim)
        meta = new.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), O.SELECTED_NODE: binds.node}
        out.append((O.CLAIM, new))
    return out


def _older(obj: Mapping[str, Any], written: Mapping[str, str], kind: str, key: str) -> bool:
    """Whether the object held is older than the version PreBind's write returned (wait for the watch)."""
    wrote = written.get(written_key(kind, key))
    if not wrote:
        return False
    have = (obj.get("metadata") or {}).get("resourceVersion") or ""
    try:
        return int(wrote) > int(have)
    except ValueError:
        return False


def _fully_bound(claim: Mapping[str, Any]) -> bool:
    return bool((claim.get("spec") or {}).get("volumeName")) and O.BIND_COMPLETED in (
        (claim.get("metadata") or {}).get("annotations") or {}
    )


def _pv_fits(state: _core.ClusterState, pv: str, node: str) -> tuple[bool, str]:
    """(whether the PV allows the node, the CSI translation error); both are held here (the callers checked)."""
    checked = _core.volume_pv_fits(state, pv, node)
    if checked is None:
        raise KeyError(f"persistentvolume {pv} or node {node}: not in the cluster state")
    return checked


def status(
    state: _core.ClusterState, held: VolumeObjects, binds: VolumeBinds, written: Mapping[str, str]
) -> tuple[bool, str | None]:
    """(done, error): whether every claim of the binds is bound, or why the binding failed."""
    node = binds.node
    if not state.has_node(node):
        return False, f'failed to get node "{node}": node "{node}" not found'
    for pv_name, claim_key, _ in binds.bindings:
        pv = held.get(O.PERSISTENT_VOLUME, pv_name)
        if pv is None:
            return False, f'failed to check binding: could not find v1.PersistentVolume "{pv_name}"'
        claim = held.get(O.CLAIM, claim_key)
        if claim is None:
            return False, f'failed to check binding: could not find v1.PersistentVolumeClaim "{claim_key}"'
        if _older(pv, written, O.PERSISTENT_VOLUME, pv_name):
            return False, None
        fits, error = _pv_fits(state, pv_name, node)
        if error:
            return False, f"failed to translate pv to csi: {error}"
        if not fits:
            return False, f'pv "{pv_name}" node affinity doesn\'t match node "{node}": no matching NodeSelectorTerms'
        ref = (pv.get("spec") or {}).get("claimRef")
        if ref is None or not ref.get("uid"):
            return False, f'ClaimRef got reset for pv "{pv_name}"'
        if not _fully_bound(claim):
            return False, None
    for claim_key in binds.provisions:
        claim = held.get(O.CLAIM, claim_key)
        if claim is None:
            return False, f'failed to check provisioning pvc: could not find v1.PersistentVolumeClaim "{claim_key}"'
        if _older(claim, written, O.CLAIM, claim_key):
            return False, None
        name = claim_key.split("/", 1)[1]
        annotations = (claim.get("metadata") or {}).get("annotations")
        if annotations is None:
            return False, f'selectedNode annotation reset for PVC "{name}"'
        if annotations.get(O.SELECTED_NODE, "") != node:
            return False, f'provisioning failed for PVC "{name}"'
        volume = (claim.get("spec") or {}).get("volumeName") or ""
        if volume:
            if held.get(O.PERSISTENT_VOLUME, volume) is None:
                return False, None  # the PV may not have reached the cache yet
            fits, error = _pv_fits(state, volume, node)
            if error:
                return False, error
            if not fits:
                return False, f'pv "{volume}" node affinity doesn\'t match node "{node}": no matching NodeSelectorTerms'
        if not _fully_bound(claim):
            return False, None
    return True, None
