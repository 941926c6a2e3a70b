"""Kubernetes objects into vcore's cluster state: the one module (with the decision seams batchcycle.py, fastpath.py
and warmpool.py) that knows both.

Nodes become vcore nodes. Pods go to vcore with ``add_pod``/``update_pod``/``remove_pod``: every bound,
non-terminal pod (any scheduler's) is accounted on its node, with the GPUs of its ``volcano.sh/gpu-index``
annotation, and joins its PodGroup's count; this scheduler's pending pods wait in vcore for a cycle; a pod that
leaves (deleted, finished) releases what it held. PodGroups, Queues (Volcano, KAI, Kueue), PriorityClasses,
PodDisruptionBudgets, ResourceQuotas and HyperNodes go to vcore as they are. Objects are the API server's JSON
dicts, which vcore's converter takes as they are. An object vcore rejects is logged and counted; the rest of the
cluster goes on.
"""

from __future__ import annotations

import logging
from typing import Any

import vcore

log = logging.getLogger(__name__)

GPU_INDEX_ANNOTATION = "volcano.sh/gpu-index"


# -- what a pod is, in Kubernetes' terms -------------------------------------------------------------------
def pod_key(pod: dict[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def node_name_of(pod: dict[str, Any]) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def scheduler_name_of(pod: dict[str, Any]) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


def is_terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_terminating(pod: dict[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def gpu_index(pod: dict[str, Any]) -> str | None:
    return ((pod["metadata"].get("annotations") or {}).get(GPU_INDEX_ANNOTATION)) or None


def _object(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """The object a delta is about: its new version, the old one when it was deleted."""
    obj = new or old
    if obj is None:
        raise ValueError("a delta without an object")
    return obj


def _node_inputs(node: dict[str, Any]) -> tuple:
    """What vcore reads of a Node: labels and annotations (GPU topology), taints, the unschedulable flag,
    allocatable and the images it has (ImageLocality)."""
    meta, spec = node.get("metadata") or {}, node.get("spec") or {}
    status = node.get("status") or {}
    return (
        meta.get("labels"),
        meta.get("annotations"),
        spec.get("taints"),
        spec.get("unschedulable"),
        status.get("allocatable"),
        status.get("images"),
    )


def _podgroup_inputs(pg: dict[str, Any]) -> tuple:
    """What vcore reads of a PodGroup once it has it: its spec and metadata (its status only when first added)."""
    meta = pg.get("metadata") or {}
    return pg.get("spec"), meta.get("annotations"), meta.get("labels")


def _queue_inputs(queue: dict[str, Any]) -> tuple:
    """What vcore reads of a queue: its spec, metadata and state (a Volcano Queue's status.state), not the counts
    and allocation the scheduler writes into its status."""
    meta = queue.get("metadata") or {}
    status = queue.get("status")
    return (
        queue.get("spec"),
        meta.get("annotations"),
        meta.get("labels"),
        status.get("state") if isinstance(status, dict) else status,
    )


class Converter:
    """Applies node and bound-pod changes to a vcore.Cluster; tolerates the orders watches deliver them in."""

    def __init__(self) -> None:
        self.cluster = vcore.Cluster()
        self._accounted: dict[str, dict[str, Any]] = {}  # pod key -> the pod bound (or assumed) in vcore
        self._orphans: dict[str, dict[str, dict[str, Any]]] = {}  # node name -> pods bound to it before it was seen
        self.errors = 0  # objects vcore rejected (logged; the rest of the cluster goes on)

    # -- nodes -------------------------------------------------------------------------------------------
    def node_changed(self, old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
        """Apply a Node delta; True when pods that did not fit before might fit now."""
        name = _object(old, new)["metadata"]["name"]
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
    def pod_bound(self, pod: dict[str, Any]) -> bool:
        """A pod bound to a node (by us or anyone): account it there, unless it is already. True when what vcore
        counts changed (a new pod on the node, or its labels, spec or phase)."""
        key, node = pod_key(pod), node_name_of(pod)
        current = self.cluster.node_of(key)
        known = self._accounted.get(key)
        if current == node and known is not None and _accounting_inputs(known) == _accounting_inputs(pod):
            self._accounted[key] = pod  # a status update that changes nothing vcore counts
            return False
        if current is not None and current != node:  # our assumption lost a race: the API server is the truth
            self.cluster.remove_pod(key)
        self._drop_orphan(key)
        if not self.cluster.has_node(node):
            if self.cluster.has_pod(key):
                self.cluster.remove_pod(key)
            self._orphans.setdefault(node, {})[key] = pod
            return False
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
            return True
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("pod %s on node %s: not accountable by vcore: %s", key, node, e)
            return False

    def assumed(self, key: str, pod: dict[str, Any]) -> None:
        """A placement the scheduler made (already bound in vcore by the cycle): remember the pod."""
        self._accounted[key] = pod

    def bound_uid(self, key: str) -> str | None:
        """UID of the pod accounted (bound or assumed) under this key, or None."""
        pod = self._accounted.get(key)
        return pod["metadata"].get("uid", "") if pod is not None else None

    def pod_pending(self, pod: dict[str, Any]) -> str | None:
        """One of this scheduler's pods waits for a node: vcore holds it for the next cycle. Returns why vcore
        cannot read it, or None."""
        try:
            self._put(pod)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            if self.cluster.has_pod(pod_key(pod)) and self.cluster.node_of(pod_key(pod)) is None:
                self.cluster.remove_pod(pod_key(pod))  # no stale version waits in its place
            return str(e)
        return None

    def _put(self, pod: dict[str, Any]) -> None:
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
    def volcano_object(self, kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
        """A PodGroup, Queue, HyperNode or PriorityClass delta; True when pending pods might fit now (a change only
        of what vcore does not read, such as a PodGroup's status or a Queue's counts, changes nothing)."""
        c = self.cluster
        name = _object(old, new)["metadata"].get("name", "")
        try:
            if kind == "PodGroup":
                key = f"{_object(old, new)['metadata'].get('namespace', '')}/{name}"
                if new is None:
                    if key in c.podgroups:
                        c.remove_podgroup(key)
                elif key in c.podgroups:
                    if old is not None and _podgroup_inputs(old) == _podgroup_inputs(new):
                        return False  # our own status writes come back here: nothing to redo
                    c.update_podgroup(new)
                else:
                    c.add_podgroup(new)
            elif kind in ("Queue", "ClusterQueue"):
                if new is None:
                    c.remove_queue(name)
                elif name in c.queues and (old is not None or name == "default"):
                    if old is not None and _queue_inputs(old) == _queue_inputs(new):
                        return False  # its status counts and allocation (ours) change nothing vcore reads
                    c.update_queue(new)
                else:
                    c.add_queue(new)
            elif kind == "PriorityClass":
                if new is None:
                    c.remove_priority_class(name)
                else:
                    # Added or changed alike: vcore's cluster holds the system classes from the start, and the API
                    # server lists them too (an add of a class vcore has would fail).
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

    # -- namespaces and the objects that select pods -------------------------------------------------------
    SELECTING_KINDS = {
        "Namespace": "namespace",
        "Service": "service",
        "ReplicationController": "replication_controller",
        "ReplicaSet": "replica_set",
        "StatefulSet": "stateful_set",
    }

    def selecting_object(self, kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
        """A Namespace (labels for namespaceSelector) or Service/ReplicationController/ReplicaSet/StatefulSet
        (default topology spread) delta; True when it changed what vcore reads, so pending pods might fit now."""
        noun = self.SELECTING_KINDS[kind]
        name = _object(old, new)["metadata"].get("name", "")
        if old is not None and new is not None and _selecting_inputs(old) == _selecting_inputs(new):
            return False
        try:
            if new is None:
                getattr(self.cluster, f"remove_{noun}")(old)
            elif old is None:
                getattr(self.cluster, f"add_{noun}")(new)
            else:
                getattr(self.cluster, f"update_{noun}")(new)
            return True
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("%s %s: not usable by vcore: %s", kind, name, e)
            return False

    def disruption_budget(self, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """A PodDisruptionBudget delta (preemption reads its selector and status.disruptionsAllowed)."""
        c = self.cluster
        meta = _object(old, new)["metadata"]
        try:
            if new is None:
                c.remove_pod_disruption_budget(old)
            elif old is None:
                c.add_pod_disruption_budget(new)
            elif (old.get("spec"), old.get("status")) != (new.get("spec"), new.get("status")):
                c.update_pod_disruption_budget(new)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("PodDisruptionBudget %s/%s: not usable by vcore: %s", meta.get("namespace"), meta.get("name"), e)

    def resource_quota(self, old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
        """A ResourceQuota delta (the resourcequota plugin reads its status.hard and status.used); True when what
        vcore reads changed."""
        c = self.cluster
        meta = _object(old, new)["metadata"]
        try:
            if new is None:
                c.remove_resource_quota(old)
            elif old is None:
                c.add_resource_quota(new)
            elif old.get("status") != new.get("status"):
                c.update_resource_quota(new)
            else:
                return False
            return True
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("ResourceQuota %s/%s: not usable by vcore: %s", meta.get("namespace"), meta.get("name"), e)
            return False

    # -- storage (what the volume plugins read) --------------------------------------------------------------
    def storage_object(self, kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """A PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity or
        VolumeAttachment delta (kind as the API names it)."""
        method = _STORAGE_METHODS[kind]
        obj = new if new is not None else old
        if obj is None:
            raise ValueError(f"storage_object: {kind}: an event needs the old or the new object")
        meta = obj["metadata"]
        key = (
            f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
            if kind in _NAMESPACED_STORAGE
            else meta.get("name", "")
        )
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

    def replace_hypernodes(self, hypernodes: list[dict[str, Any]]) -> bool:
        """A relist of HyperNodes: install them as a whole (members may arrive in any order); False when vcore
        refused the tree (logged)."""
        try:
            self.cluster.set_hypernodes(hypernodes)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("HyperNodes: the tree is not usable by vcore: %s", e)
            return False
        return True


# Storage kinds: the Cluster's method suffix and vcore's kind name for each.
_STORAGE_METHODS = {
    "PersistentVolume": "persistent_volume",
    "PersistentVolumeClaim": "persistent_volume_claim",
    "StorageClass": "storage_class",
    "CSINode": "csi_node",
    "CSIDriver": "csi_driver",
    "CSIStorageCapacity": "csi_storage_capacity",
    "VolumeAttachment": "volume_attachment",
}
_STORAGE_KINDS = {kind: kind.lower() for kind in _STORAGE_METHODS}
_NAMESPACED_STORAGE = {"PersistentVolumeClaim", "CSIStorageCapacity"}


def _selecting_inputs(obj: dict[str, Any]) -> tuple:
    """What vcore reads of a Namespace (its labels) or of an object that selects pods (its selector)."""
    return obj["metadata"].get("labels"), (obj.get("spec") or {}).get("selector")


def _accounting_inputs(pod: dict[str, Any]) -> tuple:
    """What vcore reads of a bound pod: its spec, annotations (gang, GPUs), labels, whether it is being deleted
    (topology spread leaves such pods out), phase, and what preemption reads: its start time, whether a
    preemption is terminating it (the DisruptionTarget condition) and since when it is scheduled (the PodScheduled
    condition, which Volcano's cdp plugin reads)."""
    meta, status = pod["metadata"], pod.get("status") or {}
    conditions = status.get("conditions") or []
    disruption = [c for c in conditions if c.get("type") == "DisruptionTarget"]
    scheduled = [c for c in conditions if c.get("type") == "PodScheduled"]
    return (
        pod.get("spec"),
        meta.get("annotations"),
        meta.get("labels"),
        meta.get("deletionTimestamp"),
        status.get("phase"),
        status.get("startTime"),
        [(c.get("status"), c.get("reason")) for c in disruption],
        [(c.get("status"), c.get("lastTransitionTime")) for c in scheduled],
    )


def _without_gpu_index(pod: dict[str, Any]) -> dict[str, Any]:
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
