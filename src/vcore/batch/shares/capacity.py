"""Volcano's capacity plugin: per-resource deserved, capability and guarantee, flat or hierarchical (enableHierarchy).

Semantics of Volcano's pkg/scheduler/plugins/capacity:

* Flat: each queue with jobs gets realCapability = min(capability, total - sum of guarantees + own guarantee) and
  deserved = max(min(spec.deserved, realCapability), guarantee).
* Hierarchical: every queue takes part; a queue without a parent hangs under ``root``. root's capability is its own
  (unlimited when it sets none), its realCapability that capability, its deserved and guarantee the sums of its
  children's. Going down, a child inherits the parent's cpu / memory capability where its own is unset or <= 0, and
  the parent's other resources where it does not name them; its deserved is raised to its guarantee, and
  realCapability = min(capability, parent realCapability - the siblings' guarantees + own guarantee). Usage adds up
  the tree; only leaf queues take jobs.
* share: 1 for a queue that deserves nothing (best effort, it goes after every queue below its deserved), else max
  over resources of allocated / deserved; order: priority, then share, then queues with a deserved first. With
  hierarchy a leaf goes before a non-leaf, and two leaves compare through their ancestors where their paths part.

Hooks: allocatable (Open; a leaf when hierarchical; allocated + request <= realCapability on the requested
resources, for the queue and every ancestor), job enqueueable (the same test on minResources + allocated + inqueue
- elastic), preemptive (Open; allocated + request within realCapability, and <= deserved on at least one requested
resource), reclaimable (a victim must share a resource with the reclaimer, leave its queue at or above its
guarantee, and either ask for nothing its queue deserves or come from a queue above its deserved on a resource the
victim uses), victim queue order (hierarchical: victims from queues closer to the preemptor first). Volcano's
capacity registers no overused function. ``pods`` is ignored as in proportion.

Differences: Volcano stops the whole plugin when a job sits in a non-leaf queue; vcore rejects only that queue's
jobs. Volcano updates only the leaf's share on allocate; vcore updates the share of every queue on the path. The
``ancestorReclaimLevel`` argument is not supported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from vcore.batch.amounts import UNLIMITED, bounded
from vcore.batch.queue import ROOT_QUEUE, QueueSpec, implicit_queue
from vcore.batch.shares import names
from vcore.batch.shares.base import (
    PERMIT,
    REJECT,
    Claim,
    QueueShare,
    SharePlugin,
    add_bounded,
    add_capped,
    quota_axes,
    share,
    sub_floor,
)


@dataclass
class _Attr:
    spec: QueueSpec
    allocated: np.ndarray
    request: np.ndarray
    inqueue: np.ndarray
    elastic: np.ndarray
    guarantee: np.ndarray
    deserved: np.ndarray
    deserved_named: np.ndarray  # resources deserved or guarantee name: Volcano's "relevant" scalar dimensions
    capability: np.ndarray = field(init=False)  # the two set by _open, once the tree is walked
    real_capability: np.ndarray = field(init=False)
    ancestors: list[str] = field(default_factory=list)  # root first
    children: list[str] = field(default_factory=list)
    share: float = 0.0


class CapacityPlugin(SharePlugin[_Attr]):
    """Volcano's capacity plugin; ``hierarchy=True`` is Volcano's ``enableHierarchy``."""

    name = names.CAPACITY
    supports_hierarchy = True
    hooks = frozenset(
        {
            "queue_order",
            "allocatable",
            "job_enqueueable",
            "on_job_enqueued",
            "preemptive",
            "reclaimable",
            "on_allocate",
            "on_deallocate",
            "status",
        }
    )

    def __init__(self, arguments: Mapping[str, Any] | None = None, *, hierarchy: bool = False) -> None:
        super().__init__(arguments, hierarchy=hierarchy)
        if self.hierarchy:
            self.hooks = self.hooks | {"victim_queue_order"}

    # -- open ------------------------------------------------------------------------------------------------
    def _open(self) -> None:
        n = len(self.resource_names)
        self._counted = quota_axes(self.resource_names)
        self._cpu_mem = np.array([r in ("cpu", "memory") for r in self.resource_names], dtype=bool)
        self._attrs: dict[str, _Attr] = {}
        if self.hierarchy:
            self._open_hierarchy()
        else:
            total_guarantee = sum(
                (self._resources(s.guarantee) for s in self.tree.specs()), np.zeros(n, dtype=np.int64)
            )
            free = sub_floor(self.total, total_guarantee)
            for queue in self.tree:
                if queue in self.usage:
                    a = self._new_attr(self.tree.get(queue))
                    a.capability = np.array([bounded(a.spec.limit(r)) for r in self.resource_names], dtype=np.int64)
                    a.real_capability = np.minimum(free + a.guarantee, a.capability)
                    a.deserved = np.maximum(np.minimum(a.deserved, a.real_capability), a.guarantee)
                    self._attrs[queue] = a
        for a in self._attrs.values():
            a.share = capacity_share(a.allocated, a.deserved, self._counted)

    def _new_attr(self, spec: QueueSpec) -> _Attr:
        u = self.usage.get(spec.name)
        zero = np.zeros(len(self.resource_names), dtype=np.int64)
        return _Attr(
            spec=spec,
            allocated=u.allocated * self._counted if u else zero.copy(),
            request=u.request * self._counted if u else zero.copy(),
            inqueue=u.inqueue * self._counted if u else zero.copy(),
            elastic=u.elastic * self._counted if u else zero.copy(),
            guarantee=self._resources(spec.guarantee),
            deserved=self._resources(spec.deserved),
            deserved_named=self._mask(set(spec.deserved) | set(spec.guarantee)) & ~self._cpu_mem,
        )

    def _open_hierarchy(self) -> None:
        specs = {q: self.tree.get(q) for q in self.tree}
        specs.setdefault(ROOT_QUEUE, implicit_queue(ROOT_QUEUE))
        for q, spec in specs.items():
            self._attrs[q] = self._new_attr(spec)
        for q in specs:
            if q != ROOT_QUEUE:
                parent = specs[q].parent or ROOT_QUEUE
                self._attrs[parent].children.append(q)
                chain: list[str] = []
                p: str | None = parent
                while p is not None:
                    chain.append(p)
                    p = None if p == ROOT_QUEUE else (specs[p].parent or ROOT_QUEUE)
                self._attrs[q].ancestors = chain[::-1]
        for q, a in self._attrs.items():
            if q in self.usage:
                for anc in a.ancestors:
                    up = self._attrs[anc]
                    up.allocated = up.allocated + a.allocated
                    up.request = up.request + a.request
                    up.inqueue = up.inqueue + a.inqueue
                    up.elastic = up.elastic + a.elastic
        root = self._attrs[ROOT_QUEUE]
        named = root.spec.capability
        if not any(v > 0 for r, v in named.items() if r != "pods"):
            root.capability = np.full(len(self.resource_names), UNLIMITED, dtype=np.int64)
        else:  # unset cpu / memory read as 0, unset other resources as unlimited (Volcano's NewResource)
            root.capability = self._resources(named, UNLIMITED)
            root.capability[self._cpu_mem & ~self._mask(named)] = 0
        root.real_capability = root.capability
        self._descend(root)

    def _descend(self, parent: _Attr) -> None:
        """Volcano's checkHierarchicalQueue: fill the children's deserved, capability and realCapability."""
        total_guarantee = np.zeros(len(self.resource_names), dtype=np.int64)
        total_deserved = np.zeros(len(self.resource_names), dtype=np.int64)
        for c in parent.children:
            child = self._attrs[c]
            child.deserved = np.maximum(child.deserved, child.guarantee)
            total_guarantee += child.guarantee
            total_deserved += child.deserved
            own = child.spec.capability
            cap = self._resources(own, UNLIMITED)
            inherit = (self._cpu_mem & ((cap <= 0) | ~self._mask(own))) | (~self._cpu_mem & ~self._mask(own))
            child.capability = np.where(inherit, parent.capability, cap)
        if parent.spec.name == ROOT_QUEUE:
            parent.guarantee = total_guarantee
            parent.deserved = total_deserved
        for c in parent.children:
            child = self._attrs[c]
            real = add_capped(sub_floor(parent.real_capability, total_guarantee), child.guarantee)
            child.real_capability = np.minimum(real, child.capability)
        for c in parent.children:
            self._descend(self._attrs[c])

    # -- helpers ---------------------------------------------------------------------------------------------
    def _attr(self, queue: str) -> _Attr:
        return self._tracked(queue)

    def _path(self, queue: str) -> list[_Attr]:
        """The queue and, when hierarchical, its ancestors up to root (leaf first)."""
        a = self._attr(queue)
        return [a] + [self._attrs[q] for q in reversed(a.ancestors)]

    def _is_leaf(self, a: _Attr) -> bool:
        return not self.hierarchy or not a.children

    # -- hooks -----------------------------------------------------------------------------------------------
    def queue_order(self, left: str, right: str) -> int:
        lq, rq = self._attr(left), self._attr(right)
        if lq.spec.priority != rq.spec.priority:
            return -1 if lq.spec.priority > rq.spec.priority else 1
        if self.hierarchy:
            l_leaf, r_leaf = not lq.children, not rq.children
            if l_leaf != r_leaf:
                return -1 if l_leaf else 1
            if l_leaf:
                level = _common_level(lq, rq)
                if level + 1 < len(lq.ancestors):
                    lq = self._attrs[lq.ancestors[level + 1]]
                if level + 1 < len(rq.ancestors):
                    rq = self._attrs[rq.ancestors[level + 1]]
        return self._compare_share(lq, rq)

    def _compare_share(self, lq: _Attr, rq: _Attr) -> int:
        if lq.share != rq.share:
            return -1 if lq.share < rq.share else 1
        l_has = bool(lq.deserved[self._counted].any())
        r_has = bool(rq.deserved[self._counted].any())
        return 0 if l_has == r_has else (-1 if l_has else 1)

    def victim_queue_order(self, left: str, right: str, preemptor: str) -> int:
        if not self.hierarchy:
            return 0
        p = self._attr(preemptor)
        l_level = _common_level(self._attr(left), p)
        r_level = _common_level(self._attr(right), p)
        return 0 if l_level == r_level else (-1 if l_level > r_level else 1)

    def allocatable(self, queue: str, request: npt.ArrayLike) -> bool:
        a = self._attr(queue)
        vec = self._vector(request, "request") * self._counted
        if not a.spec.is_open or not self._is_leaf(a):
            return False
        asked = vec > 0
        return all((q.allocated + vec <= q.real_capability)[asked].all() for q in self._path(queue))

    def headroom(self, queue: str) -> np.ndarray:
        a = self._attr(queue)
        if not a.spec.is_open or not self._is_leaf(a):
            return np.zeros(len(self.resource_names), dtype=np.int64)
        room = np.full(len(self.resource_names), UNLIMITED, dtype=np.int64)
        for q in self._path(queue):
            room = np.minimum(room, sub_floor(q.real_capability, q.allocated))
        return np.where(self._counted, room, UNLIMITED).astype(np.int64)

    def job_enqueueable(self, queue: str, min_resources: npt.ArrayLike | None) -> int:
        a = self._attr(queue)
        if not self._is_leaf(a) or not a.spec.is_open:
            return REJECT
        if min_resources is None:
            return PERMIT
        minimum = self._vector(min_resources, "min_resources") * self._counted
        asked = minimum > 0
        for q in self._path(queue):
            if not (minimum + q.allocated + q.inqueue - q.elastic <= q.real_capability)[asked].all():
                return REJECT
        return PERMIT

    def on_job_enqueued(self, queue: str, min_resources: npt.ArrayLike | None) -> None:
        path = self._path(queue)
        if min_resources is not None:
            minimum = self._vector(min_resources, "min_resources") * self._counted
            for q in path:
                q.inqueue = add_bounded(q.inqueue, minimum)

    def preemptive(self, queue: str, request: npt.ArrayLike) -> bool:
        a = self._attr(queue)
        vec = self._vector(request, "request") * self._counted
        if not a.spec.is_open:
            return False
        future = a.allocated + vec
        asked = vec > 0
        if not (future <= a.real_capability)[asked].all():
            return False
        # partly: one requested resource still within deserved is enough to reclaim for it
        return bool((future <= a.deserved)[asked].any())

    def _victims(self, reclaimer: Claim, candidates: list[tuple[int, Claim]]) -> list[int]:
        wanted = reclaimer.request * self._counted
        allocations: dict[str, np.ndarray] = {}
        victims = []
        for i, c in candidates:
            request = c.request * self._counted
            if not ((request > 0) & (wanted > 0)).any():
                continue  # no resource in common with the reclaimer
            a = self._attr(c.queue)
            allocated = allocations.setdefault(c.queue, a.allocated.copy())
            if not (a.guarantee <= allocated - request).all():
                continue  # would take the queue below its guarantee
            deserved_dims = a.deserved > 0
            if ((request > 0) & deserved_dims).any():
                relevant = (request > 0) & ((self._cpu_mem & deserved_dims) | a.deserved_named)
                if not (allocated > a.deserved)[relevant].any():
                    continue  # the queue is within its deserved on every resource the victim uses
            allocated -= request
            victims.append(i)
        return victims

    def on_allocate(self, queue: str, request: npt.ArrayLike) -> None:
        path = self._path(queue)
        vec = self._vector(request, "request") * self._counted
        for q in path:
            q.allocated = q.allocated + vec
            q.share = capacity_share(q.allocated, q.deserved, self._counted)

    def on_deallocate(self, queue: str, request: npt.ArrayLike) -> None:
        path = self._path(queue)
        vec = self._vector(request, "request") * self._counted
        if (path[0].allocated - vec < 0).any():
            raise ValueError(f"queue {queue}: deallocating more than the queue holds ({path[0].allocated.tolist()})")
        for q in path:
            q.allocated = q.allocated - vec
            q.share = capacity_share(q.allocated, q.deserved, self._counted)

    def status(self) -> dict[str, QueueShare]:
        return self._status()


def capacity_share(allocated: np.ndarray, deserved: np.ndarray, counted: np.ndarray) -> float:
    """The capacity plugin's share: 1 for a queue that deserves nothing (best effort), else Volcano's share."""
    if not deserved[counted].any():
        return 1.0
    return share(allocated, deserved)


def _common_level(left: _Attr, right: _Attr) -> int:
    """Volcano's getQueueLevel: the index of the deepest ancestor two queues share (0 = root)."""
    level = 0
    for i in range(min(len(left.ancestors), len(right.ancestors))):
        if left.ancestors[i] != right.ancestors[i]:
            return level
        level = i
    return level
