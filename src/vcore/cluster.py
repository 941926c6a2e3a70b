"""Cluster: the nodes and the pods bound to them, held by the C++ core as struct-of-arrays.

This module validates at the boundary (typed vcore errors naming the object) and converts Kubernetes objects
through the Cython converter; the accounting itself lives in C++ so it can never drift from what the kernels read.
Node indices are stable across removals, so numpy views indexed by them stay meaningful.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vcore._native import _convert, _core
from vcore.errors import (
    NodeExistsError,
    NodeInUseError,
    NodeNotFoundError,
    PodAlreadyBoundError,
    PodNotFoundError,
)


def pod_key(pod: Any) -> str:
    """namespace/name of a pod object, or the string itself."""
    return pod if isinstance(pod, str) else _convert.pod_spec(pod)["key"]


class Cluster:
    """Nodes (Kubernetes v1 Node objects or dicts) and the pods bound to them.

    Read-only numpy views share memory with the core; their second axis is the node index (`node_index(name)`),
    and slots of removed nodes read as zero with `live_mask` False. A view taken before the cluster grew is stale
    (compare `generation`); take a fresh one.
    """

    def __init__(self) -> None:
        self._state = _core.ClusterState()

    # -- nodes -------------------------------------------------------------------------------------------
    def add_node(self, node: Any) -> int:
        """Add a node; returns its index. A name already present raises NodeExistsError."""
        spec = _convert.node_spec(node)
        if self._state.has_node(spec["name"]):
            raise NodeExistsError(f"node {spec['name']}: already exists (use update_node)")
        return self._state.add_node(spec)

    def update_node(self, node: Any) -> int:
        """Replace a node's labels, taints, allocatable and unschedulable flag; its bound pods stay."""
        spec = _convert.node_spec(node)
        if not self._state.has_node(spec["name"]):
            raise NodeNotFoundError(f"node {spec['name']}: not found (use add_node)")
        return self._state.update_node(spec)

    def remove_node(self, name: str, *, evict: bool = False) -> list[str]:
        """Remove a node. With bound pods this raises NodeInUseError unless evict=True, which unbinds them first;
        returns the keys of the unbound pods."""
        if not self._state.has_node(name):
            raise NodeNotFoundError(f"node {name}: not found")
        bound = self._state.pods_on(self._state.node_index(name))
        if bound and not evict:
            raise NodeInUseError(f"node {name}: has {len(bound)} bound pod(s); unbind them or pass evict=True")
        return self._state.remove_node(name, evict)

    def node_index(self, name: str) -> int:
        index = self._state.node_index(name)
        if index < 0:
            raise NodeNotFoundError(f"node {name}: not found")
        return index

    def has_node(self, name: str) -> bool:
        return self._state.has_node(name)

    @property
    def node_names(self) -> list[str]:
        """Names of the live nodes in index order."""
        return [n for n in self._state.node_names() if n]

    @property
    def n_nodes(self) -> int:
        return self._state.n_nodes

    # -- pods --------------------------------------------------------------------------------------------
    def bind(self, pod: Any, node_name: str) -> None:
        """Account a pod (already running or bound elsewhere) on a node. Binding a bound pod raises
        PodAlreadyBoundError; the pod is accounted as-is, even past the node's allocatable, as the kubelet has it."""
        spec = _convert.pod_spec(pod)
        # Check before compiling: compiling may add resource rows, and a failed call must change nothing.
        index = self.node_index(node_name)
        self.check_unbound(spec["key"])
        self._state.bind(self._state.compile_pod(spec), index)

    def check_unbound(self, key: str) -> None:
        """Raise PodAlreadyBoundError if a pod with this namespace/name is bound."""
        bound_to = self._state.pod_node(key)
        if bound_to >= 0:
            raise PodAlreadyBoundError(f"pod {key}: already bound to node {self._state.node_name(bound_to)}")

    def unbind(self, pod: Any) -> str:
        """Release a pod's resources (pod object or "namespace/name"); returns the node it was on."""
        key = pod_key(pod)
        if self._state.pod_node(key) < 0:
            raise PodNotFoundError(f"pod {key}: not bound")
        return self._state.node_name(self._state.unbind(key))

    def node_of(self, pod: Any) -> str | None:
        index = self._state.pod_node(pod_key(pod))
        return None if index < 0 else self._state.node_name(index)

    def pods_on(self, node_name: str) -> list[str]:
        return self._state.pods_on(self.node_index(node_name))

    @property
    def n_pods(self) -> int:
        return self._state.n_pods

    # -- views -------------------------------------------------------------------------------------------
    @property
    def resource_names(self) -> list[str]:
        """Resource axes in row order: cpu (milli), memory (bytes), ephemeral-storage (bytes), pods, then others."""
        return self._state.resource_names()

    def _axis(self, resource: str) -> int:
        axis = self._state.find_resource_axis(resource)
        if axis < 0:
            raise KeyError(f"resource {resource}: no node or pod has it")
        return axis

    def allocatable(self, resource: str) -> np.ndarray:
        """Read-only int64 view of one resource's allocatable per node index."""
        return self._state.allocatable[self._axis(resource)]

    def requested(self, resource: str) -> np.ndarray:
        """Read-only int64 view of one resource's requested (sum of bound pods) per node index."""
        return self._state.requested[self._axis(resource)]

    @property
    def allocatable_matrix(self) -> np.ndarray:
        """Read-only int64[R, n_slots]; rows follow resource_names."""
        return self._state.allocatable

    @property
    def requested_matrix(self) -> np.ndarray:
        return self._state.requested

    @property
    def nonzero_requested_matrix(self) -> np.ndarray:
        """Read-only int64[2, n_slots]: cpu milli and memory bytes with kube-scheduler's non-zero defaults."""
        return self._state.nonzero_requested

    @property
    def live_mask(self) -> np.ndarray:
        return self._state.live_mask

    @property
    def generation(self) -> int:
        """Bumped whenever storage is reallocated; views taken before are stale."""
        return self._state.generation

    @property
    def native_bytes(self) -> int:
        """Heap bytes of the per-node native state."""
        return self._state.native_bytes
