"""Kubernetes objects into vcore's cluster state: the one module (with the decision seams batchcycle.py, fastpath.py
and warmpool.py) that knows both.

Nodes become vcore nodes. Pods go to vcore with ``add_pod``/``update_pod``/``remove_pod``: every bound,
non-terminal pod (any scheduler's) is accounted on its node, with the GPUs of its ``volcano.sh/gpu-index``
annotation, and joins its PodGroup's count; this scheduler's pending pods wait in vcore for a cycle; a pod that
leaves (deleted, finished) releases what it held. PodGroups, Queues (Volcano, KAI, Kueue), PriorityClasses and
HyperNodes go to vcore as they are. Objects are the API server's JSON dicts, which vcore's converter takes as they
are. An object vcore rejects is logged and counted; the rest of the cluster goes on.
"""

from __future__ import annotations

import logging
from typing import Any

import vcore

log = logging.getLogger(__name__)

GPU_INDEX_ANNOTATION = "volcano.sh/gpu-index"


# -- what a pod is, in Kubernetes' terms -------------------------------------------------------------------
def pod_key(pod: dict) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def node_name_of(pod: dict) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def scheduler_name_of(pod: dict) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


def is_terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_terminating(pod: dict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def gpu_index(pod: dict) -> str | None:
    return ((pod["metadata"].get("annotations") or {}).get(GPU_INDEX_ANNOTATION)) or None


def _node_inputs(node: dict) -> tuple:
    """What vcore reads of a Node: labels and annotations (GPU topology), taints, the unschedulable flag and
    allocatable."""
    meta, spec = node.get("metadata") or {}, node.get("spec") or {}
    return (meta.get("labels"), meta.get("annotations"), spec.get("taints"), spec.get("unschedulable"),
            (node.get("status") or {}).get("allocatable"))


class Converter:
    """Applies node and bound-pod changes to a vcore.Cluster; tolerates the orders watches deliver them in."""

    def __init__(self) -> None:
        self.cluster = vcore.Cluster()
        self._accounted: dict[str, dict] = {}  # pod key -> the pod bound (or assumed) in vcore
        self._orphans: dict[str, dict[str, dict]] = {}  # node name -> pods bound to it before it was seen
        self.errors = 0  # objects vcore rejected (logged; the rest of the cluster goes on)

    # -- nodes -------------------------------------------------------------------------------------------
    def node_changed(self, old: dict | None, new: dict | None) -> bool:
        """Apply a Node delta; True when pods that did not fit before might fit now."""
        name = (new or old)["metadata"]["name"]
        try:
            if new is None:
                if self.cluster.has_node(name):
                    for key in self.cluster.remove_node(name, evict=True):
                        # The pods stay bound to the vanished node (as in Kubernetes, until they are deleted):
                        # should it come back, they are accounted on it again.
                        pod = self._accounted.pop(key, None)
                        if self.cluster.has_pod(key):
                            self.cluster.remove_pod(key)
                        if pod is not None:
                            self._orphans.setdefault(name, {})[key] = pod
                return False
            if self.cluster.has_node(name):
                if old is not None and _node_inputs(old) == _node_inputs(new):
                    return False  # a heartbeat or condition timestamp: nothing vcore reads changed
                self.cluster.update_node(new)
            else:
                self.cluster.add_node(new)
                for pod in self._orphans.pop(name, {}).values():
                    self.pod_bound(pod)
            return True
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("node %s: not usable by vcore: %s", name, e)
            return False

    # -- pods --------------------------------------------------------------------------------------------
    def pod_bound(self, pod: dict) -> None:
        """A pod bound to a node (by us or anyone): account it there, unless it is already."""
        key, node = pod_key(pod), node_name_of(pod)
        current = self.cluster.node_of(key)
        known = self._accounted.get(key)
        if current == node and known is not None and _accounting_inputs(known) == _accounting_inputs(pod):
            self._accounted[key] = pod  # a status update that changes nothing vcore counts
            return
        if current is not None and current != node:  # our assumption lost a race: the API server is the truth
            self.cluster.remove_pod(key)
        self._drop_orphan(key)
        if not self.cluster.has_node(node):
            if self.cluster.has_pod(key):
                self.cluster.remove_pod(key)
            self._orphans.setdefault(node, {})[key] = pod
            return
        try:
            try:
                self._put(pod)
            except ValueError:
                if gpu_index(pod) is None:
                    raise
                # The annotation names GPUs the table cannot give it (another pod holds them, or they vanished):
                # account the pod by its resources and let the fit rule choose its GPUs.
                self._put(_without_gpu_index(pod))
            self._accounted[key] = pod
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("pod %s on node %s: not accountable by vcore: %s", key, node, e)

    def assumed(self, key: str, pod: dict) -> None:
        """A placement the scheduler made (already bound in vcore by the cycle): remember the pod."""
        self._accounted[key] = pod

    def bound_uid(self, key: str) -> str | None:
        """UID of the pod accounted (bound or assumed) under this key, or None."""
        pod = self._accounted.get(key)
        return pod["metadata"].get("uid", "") if pod is not None else None

    def pod_pending(self, pod: dict) -> str | None:
        """One of this scheduler's pods waits for a node: vcore holds it for the next cycle. Returns why vcore
        cannot read it, or None."""
        try:
            self._put(pod)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            if self.cluster.has_pod(pod_key(pod)) and self.cluster.node_of(pod_key(pod)) is None:
                self.cluster.remove_pod(pod_key(pod))  # no stale version waits in its place
            return str(e)
        return None

    def _put(self, pod: dict) -> None:
        if self.cluster.has_pod(pod_key(pod)):
            self.cluster.update_pod(pod)
        else:
            self.cluster.add_pod(pod)

    def pod_released(self, key: str) -> bool:
        """A pod is gone (deleted, finished, replaced): vcore forgets it; True when it held resources."""
        self._drop_orphan(key)
        self._accounted.pop(key, None)
        if not self.cluster.has_pod(key):
            if self.cluster.node_of(key) is None:
                return False
            self.cluster.unbind(key)  # placed by the fast path, not yet seen bound
            return True
        held = self.cluster.node_of(key) is not None
        self.cluster.remove_pod(key)
        return held

    def unassume(self, key: str) -> None:
        """A placement whose binding failed: the pod is pending in vcore again, its resources free."""
        self._accounted.pop(key, None)
        if self.cluster.node_of(key) is not None:
            self.cluster.unbind(key)

    def _drop_orphan(self, key: str) -> None:
        for node, pods in list(self._orphans.items()):
            if pods.pop(key, None) is not None and not pods:
                del self._orphans[node]

    def node_of(self, key: str) -> str | None:
        return self.cluster.node_of(key)

    # -- Volcano objects ---------------------------------------------------------------------------------
    def volcano_object(self, kind: str, old: dict | None, new: dict | None) -> bool:
        """A PodGroup, Queue, HyperNode or PriorityClass delta; True when pending pods might fit now."""
        c = self.cluster
        name = (new or old)["metadata"].get("name", "")
        try:
            if kind == "PodGroup":
                key = f"{(new or old)['metadata'].get('namespace', '')}/{name}"
                if new is None:
                    if key in c.podgroups:
                        c.remove_podgroup(key)
                elif key in c.podgroups:
                    if old is None or (old.get("spec"), old["metadata"].get("annotations")) != (
                            new.get("spec"), new["metadata"].get("annotations")):
                        c.update_podgroup(new)  # our own status writes come back here: nothing to redo
                else:
                    c.add_podgroup(new)
            elif kind in ("Queue", "ClusterQueue"):
                if new is None:
                    c.remove_queue(name)
                elif name in c.queues and (old is not None or name == "default"):
                    c.update_queue(new)
                else:
                    c.add_queue(new)
            elif kind == "PriorityClass":
                if new is None:
                    c.remove_priority_class(name)
                elif old is None:
                    c.add_priority_class(new)
                else:
                    c.update_priority_class(new)
            elif kind == "HyperNode":
                if new is None:
                    c.remove_hypernode(name)
                elif old is None:
                    c.add_hypernode(new)
                else:
                    c.update_hypernode(new)
            return new is not None
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("%s %s: not usable by vcore: %s", kind, name, e)
            return False

    # -- storage (what the volume plugins read) --------------------------------------------------------------
    def storage_object(self, kind: str, old: dict | None, new: dict | None) -> None:
        """A PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity or
        VolumeAttachment delta (kind as the API names it)."""
        method = _STORAGE_METHODS[kind]
        obj = new if new is not None else old
        if obj is None:
            raise ValueError(f"storage_object: {kind}: an event needs the old or the new object")
        meta = obj["metadata"]
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}" if kind in _NAMESPACED_STORAGE \
            else meta.get("name", "")
        c = self.cluster
        try:
            if new is None:
                if c.storage_object(_STORAGE_KINDS[kind], key) is not None:
                    getattr(c, f"remove_{method}")(key)
            elif c.storage_object(_STORAGE_KINDS[kind], key) is not None:
                getattr(c, f"update_{method}")(new)
            else:
                getattr(c, f"add_{method}")(new)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("%s %s: not usable by vcore: %s", kind, key, e)
            if new is not None and c.storage_object(_STORAGE_KINDS[kind], key) is not None:
                getattr(c, f"remove_{method}")(key)  # an object vcore cannot read is one it does not see

    def replace_hypernodes(self, hypernodes: list[dict]) -> None:
        """A relist of HyperNodes: install them as a whole (members may arrive in any order)."""
        try:
            self.cluster.set_hypernodes(hypernodes)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("HyperNodes: the tree is not usable by vcore: %s", e)


# Storage kinds: the Cluster's method suffix and vcore's kind name for each.
_STORAGE_METHODS = {"PersistentVolume": "persistent_volume", "PersistentVolumeClaim": "persistent_volume_claim",
                    "StorageClass": "storage_class", "CSINode": "csi_node", "CSIDriver": "csi_driver",
                    "CSIStorageCapacity": "csi_storage_capacity", "VolumeAttachment": "volume_attachment"}
_STORAGE_KINDS = {kind: kind.lower() for kind in _STORAGE_METHODS}
_NAMESPACED_STORAGE = {"PersistentVolumeClaim", "CSIStorageCapacity"}


def _accounting_inputs(pod: dict) -> tuple:
    """What vcore reads of a bound pod: its requests, annotations (gang, GPUs), labels and phase."""
    meta = pod["metadata"]
    return (pod.get("spec"), meta.get("annotations"), meta.get("labels"), (pod.get("status") or {}).get("phase"))


def _without_gpu_index(pod: dict) -> dict:
    annotations = dict(pod["metadata"].get("annotations") or {})
    annotations.pop(GPU_INDEX_ANNOTATION, None)
    return {**pod, "metadata": {**pod["metadata"], "annotations": annotations}}


def quantity_value(value: Any) -> int | None:
    """A Kubernetes quantity's Value() (rounded up), or None when it does not parse."""
    try:
        return vcore.parse_quantity(value)
    except (ValueError, TypeError):
        return None


def usable_profile(profile: Any) -> None:
    """Validate a profile before anything connects (vcore.ProfileError names the bad field)."""
    vcore.Profile.from_config(profile)
