"""Warm pools: capacity reserved for agent sessions before they arrive, as placeholder pods, and handed to an
arriving session pod in one step.

A pool is a vcore-owned object (``vcore.io/v1alpha1`` WarmPool, namespaced; deploy/crds/):

    spec:
      size: 10                       # placeholders kept placed and bound
      schedulerName: vcore-agent     # the scheduler that keeps it (its own or its fast path's name)
      template:                      # what a session pod looks like: its requests, nodeSelector, tolerations,
        spec: {containers: [...]}    # affinity are what a placeholder reserves and where

Placeholders are pods of this scheduler, in the pool's namespace, labelled ``vcore.io/warm-pool: <pool>`` and
``vcore.io/placeholder: "true"``, of the lowest priority class (``warmPools.placeholderPriorityClass``, never
preempting) running a pause container that requests what the template's containers request. A session pod is a
pod labelled ``vcore.io/warm-pool: <pool>`` (and no placeholder label); it takes the fast path.

vcore decides everything else as if placeholders did not exist (they are not in its cluster state), so a
placeholder never blocks a real pod of any priority, in the fast path or the batch cycle. This module keeps their
ledger per node instead, and:
- hit: an arriving session pod goes, when it fits there, to a node holding one of its pool's placeholders (one
  native call confined to those nodes); that placeholder is deleted and the session pod bound to the node in one
  step of the binder (deletion first, so the node is never over-committed);
- room: any other binding onto a node whose real pods plus placeholders would exceed its allocatable first
  deletes the fewest placeholders there that make it fit (the largest first);
- refill: missing placeholders are created in the background and placed through the fast path, on the capacity
  that real pods and the other placeholders leave (the ledger's placeholders are bound in the cluster state for
  the length of that one call). Hits, misses, the pool size and the refill latency are metrics.
Placeholders reserve by resource totals per node (GPU devices are not pinned for them).
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import vcore
from vcore_kube.config import WarmPoolsConfig
from vcore_kube.convert import pod_key

log = logging.getLogger(__name__)

GROUP, VERSION, PLURAL = "vcore.io", "v1alpha1", "warmpools"
POOL_LABEL = "vcore.io/warm-pool"
PLACEHOLDER_LABEL = "vcore.io/placeholder"


def pool_of(pod: dict[str, Any]) -> str | None:
    """The pool a pod belongs to ("namespace/name"), placeholder or session pod; None for other pods."""
    meta = pod["metadata"]
    name = (meta.get("labels") or {}).get(POOL_LABEL)
    return f"{meta.get('namespace', '')}/{name}" if name else None


def is_placeholder(pod: dict[str, Any]) -> bool:
    return (pod["metadata"].get("labels") or {}).get(PLACEHOLDER_LABEL) == "true"


@dataclass(frozen=True)
class PoolSpec:
    key: str  # namespace/name
    namespace: str
    name: str
    uid: str
    size: int
    scheduler_name: str
    template: dict[str, Any]  # the pod template's spec
    requests: dict[str, int]  # per resource (cpu in milli), what one placeholder requests

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> PoolSpec:
        """A WarmPool object; ValueError naming the field when it is malformed."""
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        where = f"WarmPool {meta.get('namespace', '')}/{meta.get('name', '')}"
        size = spec.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"{where}: spec.size: expected an integer >= 0, got {size!r}")
        template = ((spec.get("template") or {}).get("spec")) or {}
        containers = template.get("containers")
        if not isinstance(containers, list) or not containers:
            raise ValueError(f"{where}: spec.template.spec.containers: at least one container is required")
        requests: dict[str, int] = {}
        for c in containers:
            resources = c.get("resources") or {}
            # Limits stand for requests where a request is missing (as the API server defaults them).
            merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
            for resource, quantity in merged.items():
                try:
                    amount = vcore.parse_quantity(str(quantity), milli=resource == "cpu")
                except ValueError as e:
                    raise ValueError(f"{where}: spec.template: {resource}: {e}") from None
                requests[resource] = requests.get(resource, 0) + amount
        return cls(
            f"{meta.get('namespace', '')}/{meta.get('name', '')}",
            meta.get("namespace", ""),
            meta.get("name", ""),
            meta.get("uid", ""),
            size,
            spec.get("schedulerName") or "",
            template,
            requests,
        )


def placeholder_pod(pool: PoolSpec, scheduler_name: str, config: WarmPoolsConfig) -> dict[str, Any]:
    """A new placeholder of the pool: the lowest priority, never preempting, a pause container requesting what a
    session pod requests, where a session pod may go."""
    resources = {"requests": {r: _quantity(r, v) for r, v in pool.requests.items()}}
    extended = {r: q for r, q in resources["requests"].items() if "/" in r}
    if extended:
        resources["limits"] = extended  # extended resources need limit == request
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "priorityClassName": config.placeholder_priority_class,
        "preemptionPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "containers": [{"name": "pause", "image": config.placeholder_image, "resources": resources}],
    }
    for key in ("nodeSelector", "affinity", "tolerations"):
        if pool.template.get(key):
            spec[key] = pool.template[key]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{pool.name}-warm-{secrets.token_hex(3)}",
            "namespace": pool.namespace,
            "labels": {POOL_LABEL: pool.name, PLACEHOLDER_LABEL: "true", "app.kubernetes.io/managed-by": "vcore"},
            "ownerReferences": [
                {"apiVersion": f"{GROUP}/{VERSION}", "kind": "WarmPool", "name": pool.name, "uid": pool.uid}
            ]
            if pool.uid
            else [],
        },
        "spec": spec,
    }


def _quantity(resource: str, amount: int) -> str:
    return f"{amount}m" if resource == "cpu" else str(amount)


@dataclass
class Placeholder:
    key: str
    pool: str | None  # None: the pod names no pool (surplus, to delete)
    pod: dict[str, Any]
    node: str = ""  # "" while pending; set when its binding is decided
    bound: bool = False  # the watch has shown it bound
    requests: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """A session pod placed onto its pool's reserve: its placement, and the placeholders to delete first."""

    placement: vcore.Placement
    evict: list[dict[str, Any]]


class WarmPools:
    """The pools of this scheduler and their placeholders (owned by the scheduling loop's thread)."""

    def __init__(
        self,
        config: WarmPoolsConfig,
        scheduler_name: str,
        scheduler_names: set[str],
        cluster: vcore.Cluster,
        profile: dict[str, Any] | None,
        *,
        seed: int = 0,
        clock: Callable[[], float],
    ) -> None:
        """scheduler_name: the placeholders' schedulerName; scheduler_names: the pools this scheduler keeps."""
        self.config, self.scheduler_name, self.cluster, self.clock = config, scheduler_name, cluster, clock
        self.scheduler_names = scheduler_names | {scheduler_name}
        self.pools: dict[str, PoolSpec] = {}
        self.placeholders: dict[str, Placeholder] = {}
        self.on_node: dict[str, set[str]] = {}  # node -> placeholders decided or bound there
        self.creating: dict[str, int] = {}  # pool -> creations in flight
        # pool -> when each missing placeholder went missing
        self.vacant_since: dict[str | None, deque[float]] = {}
        self.hits = self.misses = 0
        self.refill_latencies: list[float] = []  # drained by the loop into its histogram
        # Hits are decided on the pool's placeholder nodes only: a scheduler of their own, its scope those nodes.
        self._hit_scheduler = vcore.Scheduler(cluster, profile, seed=seed)

    # -- pools ------------------------------------------------------------------------------------------------
    def pool_changed(self, key: str, obj: dict[str, Any] | None) -> str | None:
        """A WarmPool was added, changed or deleted; returns why it is unusable, or None."""
        if obj is None:
            self.pools.pop(key, None)
            return None
        try:
            spec = PoolSpec.parse(obj)
        except ValueError as e:
            self.pools.pop(key, None)
            return str(e)
        if spec.scheduler_name and spec.scheduler_name not in self.scheduler_names:
            self.pools.pop(key, None)  # another scheduler's pool
            return None
        before = self.pools[key].size if key in self.pools else 0
        for _ in range(spec.size - max(before, self.counts(key)[1])):
            self._vacate(key)  # a new pool, or a larger one: each missing placeholder is a vacancy from now
        self.pools[key] = spec
        return None

    def counts(self, pool: str) -> tuple[int, int]:
        """(placeholders bound, placeholders existing or being created) of a pool."""
        mine = [p for p in self.placeholders.values() if p.pool == pool]
        return sum(p.bound for p in mine), len(mine) + self.creating.get(pool, 0)

    def to_create(self) -> list[dict[str, Any]]:
        """New placeholders to create now, for every pool below its size (and their creation is counted in
        flight until `created` is called)."""
        out = []
        for key, spec in self.pools.items():
            _, have = self.counts(key)
            for _ in range(max(0, spec.size - have)):
                out.append(placeholder_pod(spec, self.scheduler_name, self.config))
                self.creating[key] = self.creating.get(key, 0) + 1
        return out

    def created(self, pool: str) -> None:
        """A creation finished (or failed): it no longer counts in flight."""
        self.creating[pool] = max(0, self.creating.get(pool, 0) - 1)

    def surplus(self) -> list[dict[str, Any]]:
        """Placeholders beyond their pool's size (it shrank), or of a pool that is gone: to delete."""
        out = []
        by_pool: dict[str | None, list[Placeholder]] = {}
        for p in self.placeholders.values():
            by_pool.setdefault(p.pool, []).append(p)
        for pool, items in by_pool.items():
            size = self.pools[pool].size if pool in self.pools else 0
            items.sort(key=lambda p: (p.bound, p.key))  # pending ones go first
            for p in items[: max(0, len(items) - size)]:
                self._forget(p.key)
                out.append(p.pod)
        return out

    # -- placeholders ----------------------------------------------------------------------------------------
    def placeholder_seen(self, pod: dict[str, Any]) -> None:
        """A placeholder of ours, pending or bound, as the watch shows it."""
        key, node = pod_key(pod), (pod.get("spec") or {}).get("nodeName") or ""
        pool = pool_of(pod)
        p = self.placeholders.get(key)
        if p is None:
            p = self.placeholders[key] = Placeholder(key, pool, pod, requests=self._requests(pod))
        p.pod = pod
        if node:
            self._place(p, node)
            if not p.bound:
                p.bound = True
                vacancies = self.vacant_since.get(pool)
                if vacancies:  # a vacancy filled: how long the pool was one short
                    self.refill_latencies.append(self.clock() - vacancies.popleft())

    def placeholder_gone(self, key: str) -> None:
        """A placeholder was deleted (by us or anyone)."""
        p = self.placeholders.get(key)
        if p is not None:
            self._forget(key)
            if p.pool in self.pools:
                self._vacate(p.pool)

    def binding_failed(self, key: str) -> None:
        """A placeholder's binding failed: it is pending again."""
        p = self.placeholders.get(key)
        if p is not None and not p.bound:
            self._unplace(p)

    def pending(self) -> list[Placeholder]:
        return [p for p in self.placeholders.values() if not p.node]

    def place(self, scheduler: vcore.Scheduler) -> list[tuple[Placeholder, vcore.Placement]]:
        """Place the pending placeholders with `scheduler` (the fast path's: its profile and shard), on what real
        pods and the other placeholders leave: those are bound in the cluster for the length of the call."""
        pending = self.pending()
        if not pending:
            return []
        held = []
        for p in self.placeholders.values():
            if p.node and self.cluster.has_node(p.node) and self.cluster.node_of(p.key) is None:
                try:
                    self.cluster.bind(p.pod, p.node)
                    held.append(p.key)
                except (ValueError, vcore.VCoreError):
                    pass
        try:
            placements = scheduler.schedule([p.pod for p in pending])
        finally:
            for key in held:
                self.cluster.unbind(key)
        for placement in placements:  # placeholders stay out of the cluster state
            if placement.node is not None:
                self.cluster.unbind(placement.pod)
        out = []
        for p, placement in zip(pending, placements):
            if placement.node is not None:
                self._place(p, placement.node)
                out.append((p, placement))
        return out

    # -- what real pods do to them ------------------------------------------------------------------------------
    def hit(self, pod: dict[str, Any]) -> Hit | None:
        """Place a session pod onto a node holding one of its pool's bound placeholders, if it fits on one; the
        pod is bound in the cluster state (as schedule() binds), the placeholders to delete are returned."""
        pool = pool_of(pod)
        if pool is None or pool not in self.pools:
            return None
        nodes = {p.node for p in self.placeholders.values() if p.pool == pool and p.bound and p.node}
        if not nodes:
            self.misses += 1
            return None
        self._hit_scheduler.set_node_scope(nodes)
        (placement,) = self._hit_scheduler.schedule([pod])
        if placement.node is None:
            self.misses += 1
            return None
        self.hits += 1
        taken = min(
            k for k in self.on_node[placement.node] if self.placeholders[k].pool == pool and self.placeholders[k].bound
        )
        evict = [self.placeholders[taken].pod]
        self._forget(taken)
        self._vacate(pool)
        return Hit(placement, evict + self.room(placement.node))

    def room(self, node: str) -> list[dict[str, Any]]:
        """Placeholders to delete so that the node's real pods (the cluster state) and its remaining
        placeholders fit its allocatable; forgotten here at once (the largest first)."""
        keys = self.on_node.get(node)
        if not keys or not self.cluster.has_node(node):
            return []
        index = self.cluster.node_index(node)
        names = self.cluster.resource_names
        alloc = self.cluster.allocatable_matrix[:, index]
        used = self.cluster.requested_matrix[:, index].astype(np.int64)
        row = {name: i for i, name in enumerate(names)}
        held = sorted(keys, key=lambda k: (-sum(self.placeholders[k].requests.values()), k))
        total = np.zeros(len(names), np.int64)
        vectors = {}
        for k in held:
            v = np.zeros(len(names), np.int64)
            for resource, amount in self.placeholders[k].requests.items():
                if resource in row:
                    v[row[resource]] += amount
            v[row["pods"]] += 1
            vectors[k] = v
            total += v
        out = []
        for k in held:
            if ((used + total) <= alloc).all():
                break
            total -= vectors[k]
            out.append(self.placeholders[k].pod)
            pool = self.placeholders[k].pool
            self._forget(k)
            self._vacate(pool)
        return out

    def node_gone(self, node: str) -> list[dict[str, Any]]:
        """A node left (the cluster, or our shard): its placeholders are deleted, to be made again elsewhere."""
        out = []
        for k in sorted(self.on_node.get(node, ())):
            p = self.placeholders[k]
            out.append(p.pod)
            self._forget(k)
            self._vacate(p.pool)
        return out

    # -- internals --------------------------------------------------------------------------------------------
    def _requests(self, pod: dict[str, Any]) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in (pod.get("spec") or {}).get("containers") or []:
            resources = c.get("resources") or {}
            for r, q in {**(resources.get("limits") or {}), **(resources.get("requests") or {})}.items():
                out[r] = out.get(r, 0) + vcore.parse_quantity(str(q), milli=r == "cpu")
        return out

    def _vacate(self, pool: str | None) -> None:
        self.vacant_since.setdefault(pool, deque()).append(self.clock())

    def _place(self, p: Placeholder, node: str) -> None:
        if p.node and p.node != node:
            self._unplace(p)
        p.node = node
        self.on_node.setdefault(node, set()).add(p.key)

    def _unplace(self, p: Placeholder) -> None:
        keys = self.on_node.get(p.node)
        if keys is not None:
            keys.discard(p.key)
            if not keys:
                del self.on_node[p.node]
        p.node = ""

    def _forget(self, key: str) -> None:
        p = self.placeholders.pop(key, None)
        if p is not None:
            self._unplace(p)
