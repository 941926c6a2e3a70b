"""Cluster: the nodes and the pods bound to them, held by the C++ core as struct-of-arrays.

This module validates at the boundary (typed vcore errors naming the object) and converts Kubernetes objects
through the Cython converter; the accounting itself lives in C++ so it can never drift from what the kernels read.
Node indices are stable across removals, so numpy views indexed by them stay meaningful.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from vcore import disruption_budgets as _budgets, pod_selectors as _selectors
from vcore._native import _convert, _core
from vcore.batch.podgroup import parse_podgroup, podgroup_key
from vcore.batch.pods import PodInfo, pod_info
from vcore.batch.queue import QueueSpec
from vcore.batch.state import BatchState
from vcore.errors import (
    NodeExistsError,
    NodeInUseError,
    NodeNotFoundError,
    ObjectExistsError,
    ObjectNotFoundError,
    PodAlreadyBoundError,
    PodExistsError,
    PodGroupExistsError,
    PodGroupNotFoundError,
    PodNotFoundError,
)
from vcore.gpu import numa as _gpu_numa, specs as _gpu_specs
from vcore.topology import tree as _topology
from vcore.topology.patterns import NodePatterns
from vcore.types import GpuChoice, HeldGpus, VolumeBinds
from vcore.volumes import objects as _volume_kinds, prebind as _prebind
from vcore.volumes.pods import with_volumes
from vcore.volumes.store import VolumeObjects, volume_binds

if TYPE_CHECKING:
    from vcore._native._convert import NodeSpec, PodSpec

T = TypeVar("T")


def node_spec(node: Any) -> NodeSpec:
    """The native spec of a Node, with its GPU devices when it has any."""
    spec = _convert.node_spec(node)
    if _gpu_specs.node_has_gpus(spec):
        spec["gpus"] = _gpu_specs.node_devices(node, spec)
    numa = _gpu_numa.node_numa_cpu(node)
    if numa is not None:
        spec["numa_cpu"] = numa
    return spec


def pod_spec(pod: Any) -> PodSpec:
    """The native spec of a Pod, with its GPU request and its volumes when it has them."""
    return with_volumes(with_gpu(_convert.pod_spec(pod), pod), pod)


def with_gpu(spec: PodSpec, pod: Any) -> PodSpec:
    """Add a converted pod spec's GPU request (parsed only for pods that may have one)."""
    if _gpu_specs.pod_may_use_gpus(spec):
        gpu = _gpu_specs.pod_gpu(pod, spec.get("requests"))
        if gpu is not None:
            spec["gpu"] = gpu
    return spec


def gpu_choice(held: HeldGpus) -> GpuChoice | None:
    """The native ((gpu, mig_start), ...) of a placed pod as a GpuChoice; None when it holds no GPU."""
    if not held:
        return None
    return GpuChoice(tuple(g for g, _ in held), tuple(s for _, s in held) if held[0][1] >= 0 else ())


def pod_key(pod: Any) -> str:
    """namespace/name of a pod object, or the string itself."""
    return pod if isinstance(pod, str) else _convert.pod_spec(pod)["key"]


def _locked(method: Callable[..., T]) -> Callable[..., T]:
    """Run a Cluster method holding the cluster's lock (see Cluster.lock)."""

    @functools.wraps(method)
    def locked(self: Cluster, *args: Any, **kwargs: Any) -> T:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


class Cluster:
    """Nodes (Kubernetes v1 Node objects or dicts) and the pods bound to them.

    Read-only numpy views share memory with the core; their second axis is the node index (`node_index(name)`),
    and slots of removed nodes read as zero with `live_mask` False. A view taken before the cluster grew is stale
    (compare `generation`); take a fresh one.
    """

    def __init__(self) -> None:
        self._state = _core.ClusterState()
        self._batch = BatchState()
        self._lock = threading.RLock()
        self._node_patterns = NodePatterns(self._state)  # the HyperNodes' regexMatch patterns, for node writes
        self._selectors = _selectors.PodSelectors()  # Services, controllers: default topology spread
        self._namespaces: set[str] = set()
        self._budgets: set[str] = set()
        self._volumes = VolumeObjects(self._state)  # PVs, PVCs, StorageClasses, CSINodes, ... (vcore.volumes)

    @property
    def state(self) -> _core.ClusterState:
        """The native state behind this cluster (node rows, bound pods, topology), for vcore's own layers: the
        scheduler's engine, the cycle, the topology search. Change it through Cluster's methods only."""
        return self._state

    @property
    def batch(self) -> BatchState:
        """The batch layer's record of the pods added with add_pod, PodGroups, queues and priority classes, which
        the scheduling cycle reads."""
        return self._batch

    @property
    def lock(self) -> threading.RLock:
        """The cluster's reentrant lock. Every Cluster and Scheduler call holds it while it runs, so each is atomic
        from any thread (a scheduling cycle holds it throughout: a mutation from another thread waits for the cycle
        to end). Hold it yourself to make several calls one atomic step."""
        return self._lock

    # -- nodes -------------------------------------------------------------------------------------------
    @_locked
    def add_node(self, node: Any) -> int:
        """Add a node; returns its index. A name already present raises NodeExistsError."""
        spec = node_spec(node)
        if self._state.has_node(spec["name"]):
            raise NodeExistsError(f"node {spec['name']}: already exists (use update_node)")
        return self._node_patterns.write(self._state.add_node, spec)

    @_locked
    def update_node(self, node: Any) -> int:
        """Replace a node's labels, taints, allocatable, unschedulable flag and GPUs; its bound pods stay. The node
        is the truth about its GPUs: a pod's hold on a GPU that vanished or changed MIG mode is dropped (the pod
        stays accounted by its resources)."""
        spec = node_spec(node)
        if not self._state.has_node(spec["name"]):
            raise NodeNotFoundError(f"node {spec['name']}: not found (use add_node)")
        return self._node_patterns.write(self._state.update_node, spec)

    @_locked
    def remove_node(self, name: str, *, evict: bool = False) -> list[str]:
        """Remove a node. With bound pods this raises NodeInUseError unless evict=True, which unbinds them first;
        returns the keys of the unbound pods."""
        if not self._state.has_node(name):
            raise NodeNotFoundError(f"node {name}: not found")
        bound = self._state.pods_on(self._state.node_index(name))
        if bound and not evict:
            raise NodeInUseError(f"node {name}: has {len(bound)} bound pod(s); unbind them or pass evict=True")
        return self._state.remove_node(name, evict)

    @_locked
    def node_index(self, name: str) -> int:
        index = self._state.node_index(name)
        if index < 0:
            raise NodeNotFoundError(f"node {name}: not found")
        return index

    @_locked
    def has_node(self, name: str) -> bool:
        return self._state.has_node(name)

    @property
    @_locked
    def node_names(self) -> list[str]:
        """Names of the live nodes in index order."""
        return [n for n in self._state.node_names() if n]

    @property
    @_locked
    def n_nodes(self) -> int:
        return self._state.n_nodes

    # -- pods --------------------------------------------------------------------------------------------
    @_locked
    def bind(self, pod: Any, node_name: str, gpus: Any = None) -> None:
        """Account a pod (already running or bound elsewhere) on a node. Binding a bound pod raises
        PodAlreadyBoundError; the pod is accounted as-is, even past the node's allocatable, as the kubelet has it.

        A pod with a GPU request also holds GPU devices: ``gpus`` gives their node-local indices (a sequence of
        ints or a ``"0,1"`` string, as in a ``volcano.sh/gpu-index`` annotation), and a conflict with what other
        pods hold raises ValueError and binds nothing. Without it the fit rule chooses; a running pod whose
        devices the table cannot place is still accounted, by its resources only (``pod_gpus`` is then None).

        ``bind`` is node-level accounting only; ``add_pod`` also tells the batch layer (gangs, queues) the pod.
        """
        self._bind_spec(self.pod_spec(pod), node_name, gpus)

    def _bind_spec(self, spec: PodSpec, node_name: str, gpus: Any) -> _core.CompiledPod:
        """Bind a converted pod; returns its CompiledPod."""
        # Check before compiling: compiling may add resource rows, and a failed call must change nothing.
        index = self.node_index(node_name)
        self.check_unbound(spec["key"])
        compiled = self._state.compile_pod(spec)
        self._state.bind(compiled, index, _gpu_indices(gpus, spec["key"]))
        return compiled

    @_locked
    def check_unbound(self, key: str) -> None:
        """Raise PodAlreadyBoundError if a pod with this namespace/name is bound."""
        bound_to = self._state.pod_node(key)
        if bound_to >= 0:
            raise PodAlreadyBoundError(f"pod {key}: already bound to node {self._state.node_name(bound_to)}")

    @_locked
    def unbind(self, pod: Any) -> str:
        """Release a pod's resources (pod object or "namespace/name"); returns the node it was on."""
        key = pod_key(pod)
        if self._state.pod_node(key) < 0:
            raise PodNotFoundError(f"pod {key}: not bound")
        return self._state.node_name(self._state.unbind(key))

    @_locked
    def pod_gpus(self, pod: Any) -> GpuChoice | None:
        """The GPU devices a bound pod holds (None when it holds none); PodNotFoundError when not bound."""
        key = pod_key(pod)
        held = self._state.pod_gpus(key)
        if held is None:
            raise PodNotFoundError(f"pod {key}: not bound")
        return gpu_choice(held)

    @_locked
    def gpu_devices(self) -> dict[str, np.ndarray]:
        """A copy of the GPU device table in CSR form: node index n's GPUs are ``dev_offsets[n]:dev_offsets[n+1]``;
        per device ``dev_model_id`` (into ``model_names``), ``dev_memory_mib``, ``dev_numa``, ``dev_nvlink``,
        ``dev_mig_mode``, ``dev_used_milli``, ``dev_used_memory_mib``, ``dev_shared_pods``, ``dev_exclusive``
        and the MIG slices in use (``dev_mig_compute_used``/``dev_mig_memory_used`` bit masks)."""
        return self._state.gpu_devices()

    @_locked
    def node_of(self, pod: Any) -> str | None:
        index = self._state.pod_node(pod_key(pod))
        return None if index < 0 else self._state.node_name(index)

    @_locked
    def pods_on(self, node_name: str) -> list[str]:
        return self._state.pods_on(self.node_index(node_name))

    @property
    @_locked
    def n_pods(self) -> int:
        return self._state.n_pods

    def pod_spec(self, pod: Any) -> PodSpec:
        """The native spec of a Pod as this cluster schedules it: converted, with its GPU request and the default
        topology spread selector the cluster's Services and controllers give it."""
        return self.complete_spec(pod_spec(pod))

    def complete_spec(self, spec: PodSpec) -> PodSpec:
        """Add to a converted pod spec what the cluster knows about the pod: the selector of its default topology
        spread constraints (PodTopologySpread), when it has no constraints of its own and something selects it."""
        if self._selectors and "spread" not in spec:
            requirements = self._selectors.default_selector(spec)
            if requirements is not None:
                spec["default_spread_selector"] = {"requirements": requirements}
        return spec

    # -- pods the batch layer schedules (gangs, queues) --------------------------------------------------
    @_locked
    def add_pod(self, pod: Any) -> None:
        """Add a pod: pending when ``spec.nodeName`` is empty, accounted as running there when it is set (its
        ``volcano.sh/gpu-index`` annotation names the GPUs it holds), holding nothing once Succeeded or Failed.
        It joins the PodGroup its ``scheduling.k8s.io/group-name`` annotation names; without one it is a gang of
        one. A running pod that ``schedule()`` or ``bind()`` already accounted on that node keeps that accounting
        (its devices included). A key already present raises PodExistsError; an unknown node NodeNotFoundError."""
        spec = self.pod_spec(pod)
        info = pod_info(pod, spec)
        if info.key in self._batch.pods:
            raise PodExistsError(f"pod {info.key}: already exists (use update_pod)")
        self._track(info)
        self._batch.add_pod(info)

    def _track(self, info: PodInfo) -> None:
        """Bind a running pod, compile a pending one (once, at ingest: a cycle then only places it)."""
        if info.node_name and not info.terminated:
            if self.node_of(info.key) == info.node_name:  # placed by schedule() or bind(): adopt that binding
                info.shape = self._batch.shape_of(self._state.compile_pod(info.spec).requests)
                return
            info.shape = self._batch.shape_of(self._bind_spec(info.spec, info.node_name, info.gpu_index).requests)
        elif info.terminated:
            self.check_unbound(info.key)
        else:
            self.check_unbound(info.key)
            info.compiled = self._state.compile_pod(info.spec)
            info.shape = self._batch.shape_of(info.compiled.requests)

    @_locked
    def update_pod(self, pod: Any) -> None:
        """Replace a pod's record. A pending pod that now has ``spec.nodeName`` is accounted there (bound by
        someone else); a running pod that terminated releases its resources; a running pod cannot move to
        another node (ValueError)."""
        spec = self.pod_spec(pod)
        info = pod_info(pod, spec)
        old = self._batch.pods.get(info.key)
        if old is None:
            raise PodNotFoundError(f"pod {info.key}: not found (use add_pod)")
        slot = self._state.pod_node(info.key)
        bound_to = self._state.node_name(slot) if slot >= 0 else ""
        if bound_to and info.node_name and info.node_name != bound_to:
            raise ValueError(
                f"pod {info.key}: spec.nodeName: a running pod cannot move from {bound_to} to {info.node_name}"
            )
        if bound_to and info.terminated:
            self._state.unbind(info.key)
        elif bound_to:
            info.shape = old.shape
            if info.spec.get("start_time") != old.spec.get("start_time"):  # the kubelet started it meanwhile
                self._state.set_pod_start_time(info.key, info.spec.get("start_time"))
        else:
            self._track(info)
        self._batch.remove_pod(info.key)
        self._batch.add_pod(info)

    @_locked
    def remove_pod(self, pod: Any) -> None:
        """Forget a pod (object or "namespace/name"), releasing what it holds; PodNotFoundError when unknown."""
        key = pod_key(pod)
        if key not in self._batch.pods:
            raise PodNotFoundError(f"pod {key}: not found")
        if self._state.pod_node(key) >= 0:
            self._state.unbind(key)
        self._batch.remove_pod(key)

    @_locked
    def has_pod(self, pod: Any) -> bool:
        return pod_key(pod) in self._batch.pods

    @property
    @_locked
    def pending_pods(self) -> list[str]:
        """Keys of the pods added with add_pod that are not bound and not terminated."""
        return [k for k, info in self._batch.pods.items() if not info.terminated and self._state.pod_node(k) < 0]

    # -- PodGroups, queues, priority classes -------------------------------------------------------------
    @_locked
    def add_podgroup(self, podgroup: Any) -> None:
        """Add a Volcano PodGroup (scheduling.volcano.sh/v1beta1); PodGroupExistsError when present."""
        pg = parse_podgroup(podgroup)
        if pg.key in self._batch.podgroups:
            raise PodGroupExistsError(f"podgroup {pg.key}: already exists (use update_podgroup)")
        self._batch.set_podgroup(pg)

    @_locked
    def update_podgroup(self, podgroup: Any) -> None:
        pg = parse_podgroup(podgroup)
        if pg.key not in self._batch.podgroups:
            raise PodGroupNotFoundError(f"podgroup {pg.key}: not found (use add_podgroup)")
        self._batch.set_podgroup(pg)

    @_locked
    def remove_podgroup(self, podgroup: Any) -> None:
        """Forget a PodGroup (object or "namespace/name"); its pods stay, unschedulable until it returns."""
        key = podgroup_key(podgroup)
        if key not in self._batch.podgroups:
            raise PodGroupNotFoundError(f"podgroup {key}: not found")
        self._batch.remove_podgroup(key)

    @property
    @_locked
    def podgroups(self) -> list[str]:
        return list(self._batch.podgroups)

    @_locked
    def add_queue(self, queue: Any) -> None:
        """Add a queue: a Volcano Queue, a KAI Scheduler Queue or a Kueue ClusterQueue. Volcano's ``default``
        queue exists from the start; adding one of that name replaces it."""
        self._batch.queues.add(QueueSpec.from_object(queue))

    @_locked
    def update_queue(self, queue: Any) -> None:
        self._batch.queues.update(QueueSpec.from_object(queue))

    @_locked
    def remove_queue(self, queue: Any) -> None:
        """Remove a queue (object or name); an error while child queues or jobs still use it."""
        name = queue if isinstance(queue, str) else QueueSpec.from_object(queue).name
        self._batch.queues.remove(name, n_jobs=self._batch.jobs_in_queue(name))

    @property
    @_locked
    def queues(self) -> list[str]:
        return list(self._batch.queues)

    @_locked
    def add_priority_class(self, priority_class: Any) -> None:
        """Add a PriorityClass (scheduling.k8s.io/v1); pods and PodGroups name it in priorityClassName."""
        self._batch.priority_classes.add(priority_class)

    @_locked
    def update_priority_class(self, priority_class: Any) -> None:
        self._batch.priority_classes.add(priority_class, replace=True)

    @_locked
    def remove_priority_class(self, priority_class: Any) -> None:
        name = (
            priority_class
            if isinstance(priority_class, str)
            else _convert.api_dict(priority_class, "priorityclass").get("metadata", {}).get("name", "")
        )
        self._batch.priority_classes.remove(name)

    # -- views -------------------------------------------------------------------------------------------
    # -- namespaces and the objects that select pods --------------------------------------------------------
    @_locked
    def add_namespace(self, namespace: Any) -> None:
        """Add a Namespace: its labels are what pod affinity terms' namespaceSelector matches. As in
        kube-scheduler, a pod's own term with a non-empty namespaceSelector takes in only the namespaces added here;
        a bound pod's term matches an incoming pod whose namespace was never added as if it had no labels."""
        self._set_namespace(namespace, exists=False)

    @_locked
    def update_namespace(self, namespace: Any) -> None:
        self._set_namespace(namespace, exists=True)

    @_locked
    def remove_namespace(self, namespace: Any) -> None:
        name = namespace if isinstance(namespace, str) else _namespace(namespace)[0]
        if name not in self._namespaces:
            raise ObjectNotFoundError(f"namespace {name}: not found")
        self._state.set_namespace_labels(name, [], exists=False)
        self._namespaces.discard(name)

    def _set_namespace(self, namespace: Any, *, exists: bool) -> None:
        name, labels = _namespace(namespace)
        if exists != (name in self._namespaces):
            raise (
                ObjectNotFoundError(f"namespace {name}: not found (use add_namespace)")
                if exists
                else ObjectExistsError(f"namespace {name}: already exists (use update_namespace)")
            )
        self._state.set_namespace_labels(name, labels)
        self._namespaces.add(name)

    @_locked
    def add_service(self, service: Any) -> None:
        """Add a Service: the pods its selector picks are spread together by PodTopologySpread's defaults."""
        self._set_selecting(_selectors.SERVICE, service, exists=False)

    @_locked
    def update_service(self, service: Any) -> None:
        self._set_selecting(_selectors.SERVICE, service, exists=True)

    @_locked
    def remove_service(self, service: Any) -> None:
        self._remove_selecting(_selectors.SERVICE, service)

    @_locked
    def add_replication_controller(self, rc: Any) -> None:
        self._set_selecting(_selectors.REPLICATION_CONTROLLER, rc, exists=False)

    @_locked
    def update_replication_controller(self, rc: Any) -> None:
        self._set_selecting(_selectors.REPLICATION_CONTROLLER, rc, exists=True)

    @_locked
    def remove_replication_controller(self, rc: Any) -> None:
        self._remove_selecting(_selectors.REPLICATION_CONTROLLER, rc)

    @_locked
    def add_replica_set(self, rs: Any) -> None:
        """Add a ReplicaSet: the pods it controls are spread by its selector under PodTopologySpread's defaults."""
        self._set_selecting(_selectors.REPLICA_SET, rs, exists=False)

    @_locked
    def update_replica_set(self, rs: Any) -> None:
        self._set_selecting(_selectors.REPLICA_SET, rs, exists=True)

    @_locked
    def remove_replica_set(self, rs: Any) -> None:
        self._remove_selecting(_selectors.REPLICA_SET, rs)

    @_locked
    def add_stateful_set(self, ss: Any) -> None:
        self._set_selecting(_selectors.STATEFUL_SET, ss, exists=False)

    @_locked
    def update_stateful_set(self, ss: Any) -> None:
        self._set_selecting(_selectors.STATEFUL_SET, ss, exists=True)

    @_locked
    def remove_stateful_set(self, ss: Any) -> None:
        self._remove_selecting(_selectors.STATEFUL_SET, ss)

    @_locked
    def add_pod_disruption_budget(self, pdb: Any) -> None:
        """Add a PodDisruptionBudget: preemption spares the pods it protects where it can."""
        self._set_budget(pdb, exists=False)

    @_locked
    def update_pod_disruption_budget(self, pdb: Any) -> None:
        self._set_budget(pdb, exists=True)

    @_locked
    def remove_pod_disruption_budget(self, pdb: Any) -> None:
        key = _budgets.key_of(pdb)
        if key not in self._budgets:
            raise ObjectNotFoundError(f"{_budgets.KIND} {key}: not found")
        self._state.remove_pdb(key)
        self._budgets.discard(key)

    def _set_budget(self, pdb: Any, *, exists: bool) -> None:
        budget = _budgets.parse(pdb)
        if exists != (budget.key in self._budgets):
            raise (
                ObjectNotFoundError(f"{_budgets.KIND} {budget.key}: not found")
                if exists
                else ObjectExistsError(f"{_budgets.KIND} {budget.key}: already exists")
            )
        self._state.set_pdb(budget.key, budget.selector, budget.disruptions_allowed, list(budget.disrupted))
        self._budgets.add(budget.key)

    def _set_selecting(self, kind: str, obj: Any, *, exists: bool) -> None:
        parsed = _selectors.parse(kind, obj)
        if exists != self._selectors.has(kind, parsed.key):
            raise (
                ObjectNotFoundError(f"{kind} {parsed.key}: not found")
                if exists
                else ObjectExistsError(f"{kind} {parsed.key}: already exists")
            )
        self._selectors.put(kind, parsed)
        self._recompile_pending(parsed.key.split("/", 1)[0])

    def _remove_selecting(self, kind: str, obj: Any) -> None:
        key = _selectors.name_of(kind, obj)
        if not self._selectors.has(kind, key):
            raise ObjectNotFoundError(f"{kind} {key}: not found")
        self._selectors.remove(kind, key)
        self._recompile_pending(key.split("/", 1)[0])

    def _recompile_pending(self, namespace: str) -> None:
        """The pending pods of a namespace again with their default spread selector as it now is (kube-scheduler
        works it out when it schedules the pod; vcore compiles a pending pod once, at ingest)."""
        prefix = namespace + "/"
        for key, info in self._batch.pods.items():
            if info.compiled is None or not key.startswith(prefix):
                continue
            info.spec.pop("default_spread_selector", None)
            # the next cycle compiles the nodegroup filter in again
            self._batch.set_compiled(info, self._state.compile_pod(self.complete_spec(info.spec)))

    # -- ResourceQuotas: what Volcano's resourcequota plugin reads (vcore.batch.quotas) -------------------------
    @_locked
    def add_resource_quota(self, quota: Any) -> None:
        """Add a ResourceQuota (v1): its ``status.hard`` and ``status.used`` are what Volcano's resourcequota plugin
        holds a PodGroup's minResources to before enqueueing it."""
        self._batch.quotas.set(quota, exists=False)

    @_locked
    def update_resource_quota(self, quota: Any) -> None:
        self._batch.quotas.set(quota, exists=True)

    @_locked
    def remove_resource_quota(self, quota: Any) -> None:
        """Forget a ResourceQuota (object or "namespace/name"); ObjectNotFoundError when unknown."""
        self._batch.quotas.remove(quota)

    # -- storage objects (vcore.volumes): what the volume plugins read --------------------------------------
    # Each kind is added, updated and removed as nodes are: an add of a key held raises ObjectExistsError, an update
    # or removal of one not held ObjectNotFoundError; a bad object raises naming the field and changes nothing.
    # Removals take the object or its key (name; namespace/name for claims and CSIStorageCapacities).
    @_locked
    def add_persistent_volume(self, pv: Any) -> None:
        self._volumes.add(_volume_kinds.PERSISTENT_VOLUME, pv)

    @_locked
    def update_persistent_volume(self, pv: Any) -> None:
        self._volumes.update(_volume_kinds.PERSISTENT_VOLUME, pv)

    @_locked
    def remove_persistent_volume(self, pv: Any) -> None:
        self._volumes.remove(_volume_kinds.PERSISTENT_VOLUME, pv)

    @_locked
    def add_persistent_volume_claim(self, pvc: Any) -> None:
        self._volumes.add(_volume_kinds.CLAIM, pvc)

    @_locked
    def update_persistent_volume_claim(self, pvc: Any) -> None:
        self._volumes.update(_volume_kinds.CLAIM, pvc)

    @_locked
    def remove_persistent_volume_claim(self, pvc: Any) -> None:
        self._volumes.remove(_volume_kinds.CLAIM, pvc)

    @_locked
    def add_storage_class(self, storage_class: Any) -> None:
        self._volumes.add(_volume_kinds.STORAGE_CLASS, storage_class)

    @_locked
    def update_storage_class(self, storage_class: Any) -> None:
        self._volumes.update(_volume_kinds.STORAGE_CLASS, storage_class)

    @_locked
    def remove_storage_class(self, storage_class: Any) -> None:
        self._volumes.remove(_volume_kinds.STORAGE_CLASS, storage_class)

    @_locked
    def add_csi_node(self, csi_node: Any) -> None:
        self._volumes.add(_volume_kinds.CSI_NODE, csi_node)

    @_locked
    def update_csi_node(self, csi_node: Any) -> None:
        self._volumes.update(_volume_kinds.CSI_NODE, csi_node)

    @_locked
    def remove_csi_node(self, csi_node: Any) -> None:
        self._volumes.remove(_volume_kinds.CSI_NODE, csi_node)

    @_locked
    def add_csi_driver(self, csi_driver: Any) -> None:
        self._volumes.add(_volume_kinds.CSI_DRIVER, csi_driver)

    @_locked
    def update_csi_driver(self, csi_driver: Any) -> None:
        self._volumes.update(_volume_kinds.CSI_DRIVER, csi_driver)

    @_locked
    def remove_csi_driver(self, csi_driver: Any) -> None:
        self._volumes.remove(_volume_kinds.CSI_DRIVER, csi_driver)

    @_locked
    def add_csi_storage_capacity(self, capacity: Any) -> None:
        self._volumes.add(_volume_kinds.CAPACITY, capacity)

    @_locked
    def update_csi_storage_capacity(self, capacity: Any) -> None:
        self._volumes.update(_volume_kinds.CAPACITY, capacity)

    @_locked
    def remove_csi_storage_capacity(self, capacity: Any) -> None:
        self._volumes.remove(_volume_kinds.CAPACITY, capacity)

    @_locked
    def add_volume_attachment(self, attachment: Any) -> None:
        self._volumes.add(_volume_kinds.ATTACHMENT, attachment)

    @_locked
    def update_volume_attachment(self, attachment: Any) -> None:
        self._volumes.update(_volume_kinds.ATTACHMENT, attachment)

    @_locked
    def remove_volume_attachment(self, attachment: Any) -> None:
        self._volumes.remove(_volume_kinds.ATTACHMENT, attachment)

    @_locked
    def storage_object(self, kind: str, key: str) -> dict[str, Any] | None:
        """The API dict of a storage object held: ``kind`` one of persistentvolume, persistentvolumeclaim,
        storageclass, csinode, csidriver, csistoragecapacity, volumeattachment; None when absent."""
        if kind not in _volume_kinds.KINDS:
            raise ValueError(f"storage_object: unknown kind {kind!r} (one of {', '.join(_volume_kinds.KINDS)})")
        return self._volumes.get(kind, key)

    @_locked
    def volume_binds(self, pod: Any) -> VolumeBinds | None:
        """What VolumeBinding's PreBind must write for a pod placed by schedule() or run_cycle() before it is bound:
        the PVs assumed for its unbound claims and the claims to provision on its node (None when nothing: every
        claim was bound, or the pod was not placed by vcore). Unbinding the pod drops the assumption."""
        return volume_binds(self._state, pod_key(pod))

    @_locked
    def volume_writes(self, binds: VolumeBinds) -> list[tuple[str, dict[str, Any]]]:
        """PreBind's API writes for ``binds`` (from volume_binds or a Placement): (kind, object) pairs to update
        (PUT) in order, the PVs with their claimRef, then the claims with their selected-node annotation."""
        return _prebind.writes(self._volumes, binds)

    @_locked
    def volume_binds_status(
        self, binds: VolumeBinds, written: Mapping[str, str] | None = None
    ) -> tuple[bool, str | None]:
        """After PreBind's writes, whether the claims of ``binds`` are all bound (the PV controller's work, seen
        through the objects this cluster holds), as kube-scheduler checks it: (True, None) done, (False, None) not
        yet, (False, why) failed for good. ``written`` maps ``<kind>/<key>`` to the resourceVersion each write
        returned (vcore.volumes.prebind.written_key): an object held at an older version is waited for."""
        return _prebind.status(self._state, self._volumes, binds, written or {})

    @property
    @_locked
    def resource_names(self) -> list[str]:
        """Resource axes in row order: cpu (milli), memory (bytes), ephemeral-storage (bytes), pods, then others."""
        return self._state.resource_names()

    def _axis(self, resource: str) -> int:
        axis = self._state.find_resource_axis(resource)
        if axis < 0:
            raise KeyError(f"resource {resource}: no node or pod has it")
        return axis

    @_locked
    def allocatable(self, resource: str) -> np.ndarray:
        """Read-only int64 view of one resource's allocatable per node index."""
        return self._state.allocatable[self._axis(resource)]

    @_locked
    def requested(self, resource: str) -> np.ndarray:
        """Read-only int64 view of one resource's requested (sum of bound pods) per node index."""
        return self._state.requested[self._axis(resource)]

    @property
    @_locked
    def allocatable_matrix(self) -> np.ndarray:
        """Read-only int64[R, n_slots]; rows follow resource_names."""
        return self._state.allocatable

    @property
    @_locked
    def requested_matrix(self) -> np.ndarray:
        return self._state.requested

    @property
    @_locked
    def nonzero_requested_matrix(self) -> np.ndarray:
        """Read-only int64[2, n_slots]: cpu milli and memory bytes with kube-scheduler's non-zero defaults."""
        return self._state.nonzero_requested

    @property
    @_locked
    def live_mask(self) -> np.ndarray:
        return self._state.live_mask

    @property
    @_locked
    def generation(self) -> int:
        """Bumped whenever storage is reallocated; views taken before are stale."""
        return self._state.generation

    @property
    @_locked
    def native_bytes(self) -> int:
        """Heap bytes of the per-node native state."""
        return self._state.native_bytes

    # -- network topology (vcore.topology) ---------------------------------------------------------------
    @_locked
    def add_hypernode(self, hn: Any) -> None:
        """Add a Volcano HyperNode (topology.volcano.sh/v1alpha1). As in Volcano, a member that matches nothing yet
        is no error: a node or a member HyperNode added later joins it. An invalid tree (a cycle, two parents, a
        member's tier not below its HyperNode's, a node in two HyperNodes of a tier) raises TopologyError naming the
        HyperNode and changes nothing."""
        _topology.add_hypernode(self._state, hn)

    @_locked
    def update_hypernode(self, hn: Any) -> None:
        """Replace a HyperNode's tier, members and link-state annotations (HyperNodeNotFoundError if absent)."""
        _topology.update_hypernode(self._state, hn)

    @_locked
    def remove_hypernode(self, hn: Any) -> None:
        """Remove a HyperNode (object or name). A HyperNode that lists it keeps listing it, as in Volcano: it joins
        again if it is added back."""
        _topology.remove_hypernode(self._state, hn)

    @_locked
    def set_hypernodes(self, hns: Any) -> None:
        """Replace every HyperNode at once (any order; validated as a whole), e.g. after a relist."""
        _topology.set_hypernodes(self._state, hns)

    @_locked
    def set_topology_levels(self, levels: Any) -> None:
        """Use node labels as topology levels, highest first (Kueue Topology / KAI Topology), e.g.
        ``["topology.kubernetes.io/zone", "example.com/block", "example.com/rack", "kubernetes.io/hostname"]``;
        ``[]`` clears them. Levels and HyperNodes exclude each other."""
        _topology.set_levels(self._state, levels)

    @property
    @_locked
    def topology(self) -> _topology.TopologyView:
        """The domain tree and the read-only ``node_topo`` view (int32[tier rows, n_slots])."""
        return _topology.TopologyView(self._state)


def _gpu_indices(gpus: Any, key: str) -> list[int] | None:
    if gpus is None:
        return None
    if isinstance(gpus, str):
        try:
            return [int(x) for x in gpus.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"pod {key}: gpus: expected comma-separated GPU indices, got {gpus!r}") from None
    if isinstance(gpus, GpuChoice):
        return list(gpus.indices)
    out = list(gpus)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        raise TypeError(f"pod {key}: gpus: expected GPU indices (ints), got {gpus!r}")
    return out


def _namespace(namespace: Any) -> tuple[str, list[tuple[str, str]]]:
    """(name, labels) of a Namespace (dict or client model)."""
    d = _convert.api_dict(namespace, "namespace")
    meta = d.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("namespace <unnamed>: metadata.name: required")
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise TypeError(f"namespace {name}: metadata.labels: must map strings to strings")
    return name, sorted(labels.items())
