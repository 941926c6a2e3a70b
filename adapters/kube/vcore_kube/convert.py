"""Kubernetes objects into vcore's cluster state: the one module (with its seam, cycle.py) that knows both.

Nodes become vcore nodes; every bound, non-terminal pod (any scheduler's) is accounted on its node, with the
GPUs of its ``volcano.sh/gpu-index`` annotation; a pod that leaves (deleted, finished) releases them. Objects are
the API server's JSON dicts, which vcore's converter takes as they are.

PodGroups, Queues, HyperNodes and PriorityClasses are listed and watched into the adapter's cache, and stay
there until the adapter switches to vcore's gang API (``cluster.add_podgroup``, ``add_queue``,
``add_priority_class``, ``add_hypernode``): `volcano_object` is where they will be handed to vcore.
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
        self._bound: dict[str, tuple[str, dict]] = {}  # pod key -> (node, pod) accounted in the cluster
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
                        _, pod = self._bound.pop(key)
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
        """Account a pod that is bound to a node (by us or anyone), unless it is already accounted there."""
        key, node = pod_key(pod), node_name_of(pod)
        current = self.cluster.node_of(key)
        if current == node:
            self._bound[key] = (node, pod)
            return
        if current is not None:  # accounted elsewhere (our assumption lost a race): the API server is the truth
            self.cluster.unbind(key)
            self._bound.pop(key, None)
        self._drop_orphan(key)
        if not self.cluster.has_node(node):
            self._orphans.setdefault(node, {})[key] = pod
            return
        try:
            try:
                self.cluster.bind(pod, node, gpus=gpu_index(pod))
            except ValueError:
                if gpu_index(pod) is None:
                    raise
                # The annotation names GPUs the table cannot give it (another pod holds them, or they vanished):
                # account the pod by its resources and let the fit rule choose its GPUs.
                self.cluster.bind(pod, node)
            self._bound[key] = (node, pod)
        except (ValueError, TypeError, KeyError, vcore.VCoreError) as e:
            self.errors += 1
            log.error("pod %s on node %s: not accountable by vcore: %s", key, node, e)

    def assumed(self, key: str, node: str, pod: dict) -> None:
        """A placement the scheduler made (already bound in the cluster by vcore): remember it as bound."""
        self._bound[key] = (node, pod)

    def pod_released(self, key: str) -> bool:
        """A pod left its node (deleted, finished, or an assumption forgotten); True when it held resources."""
        self._drop_orphan(key)
        if self._bound.pop(key, None) is None and self.cluster.node_of(key) is None:
            return False
        if self.cluster.node_of(key) is not None:
            self.cluster.unbind(key)
        return True

    def _drop_orphan(self, key: str) -> None:
        for node, pods in list(self._orphans.items()):
            if pods.pop(key, None) is not None and not pods:
                del self._orphans[node]

    def node_of(self, key: str) -> str | None:
        return self.cluster.node_of(key)

    def bound_uid(self, key: str) -> str | None:
        """UID of the pod accounted (bound or assumed) under this key, or None."""
        entry = self._bound.get(key)
        return entry[1]["metadata"].get("uid", "") if entry is not None else None

    # -- Volcano objects ---------------------------------------------------------------------------------
    def volcano_object(self, kind: str, old: dict | None, new: dict | None) -> None:
        """PodGroup, Queue, HyperNode, PriorityClass deltas. They live in the adapter's cache until the adapter
        switches to vcore's gang API; then this calls cluster.add_/update_/remove_podgroup (queue, priority_class,
        hypernode)."""


def usable_profile(profile: Any) -> None:
    """Validate a profile before anything connects (vcore.ProfileError names the bad field)."""
    vcore.Profile.from_config(profile)
