"""Volcano's proportion plugin: queues share the cluster by weight (water-filling), each clamped by its real
capability and its request, and raised to its guarantee.

Semantics of Volcano's pkg/scheduler/plugins/proportion at session open, over the queues that have jobs:

* realCapability = min(capability, total - sum of every queue's guarantee + own guarantee);
* deserved: rounds over the queues not yet met; each adds remaining * weight / total weight, is clamped to
  realCapability and to its request, raised to its guarantee, and is met once its request fits (or its deserved
  stopped changing); remaining loses what was handed out; the rounds end when remaining is empty or unchanged;
* share = max over resources of allocated / deserved; queues order by priority (higher first), then share.

Hooks: overused (deserved <= allocated on every resource), allocatable and preemptive (the queue is Open and
allocated + request <= deserved on the resources the task asks for), job enqueueable (Open, and minResources +
allocated + inqueue - elastic <= realCapability on the resources minResources names), reclaimable (victims from
queues whose allocated exceeds deserved, each victim lowering its queue's allocated before the next, as v1.14 has
it: whatever the reclaimer asks). Volcano counts
no ``pods`` in queue quotas, so the pods axis is ignored.

The rounds run in float64 exactly as Volcano's (its stopping rules depend on float rounding); each deserved is then
floored to whole units (millicores, bytes), the only quantity vcore keeps.
Volcano adds a job's minResources to the queue's inqueue inside its enqueueable function; vcore does it in
``on_job_enqueued``, which the cycle calls only once every plugin permitted (the same result with the default tier
order, where overcommit votes before proportion).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vcore.batch.amounts import UNLIMITED, bounded
from vcore.batch.shares import names
from vcore.batch.shares.base import (
    PERMIT,
    REJECT,
    Claim,
    QueueShare,
    SharePlugin,
    quota_axes,
    share,
    sub_floor,
)

_MIN_RESOURCE = 0.1  # Volcano's minResource: quantities below it count as zero, differences below it as equal


@dataclass
class _Attr:
    weight: int
    priority: int
    request: np.ndarray
    elastic: np.ndarray
    guarantee: np.ndarray
    real_capability: np.ndarray
    deserved: np.ndarray
    # Every job's hooks read these and add to the first two, over a handful of axes: Python ints, where a chain of
    # numpy calls per hook cost more than the hook's arithmetic. The pods axis (uncounted) stays 0.
    allocated: list[int]
    inqueue: list[int]
    share: float = 0.0
    deserved_row: list[int] = field(default_factory=list)  # deserved, once the rounds set it
    admit_limit: list[int] = field(default_factory=list)  # real capability + elastic: enqueue's bound on the rest


class ProportionPlugin(SharePlugin[_Attr]):
    """Volcano's proportion plugin (no arguments)."""

    name = names.PROPORTION
    hooks = frozenset(
        {
            "queue_order",
            "overused",
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

    def _open(self) -> None:
        self._counted = quota_axes(self.resource_names)
        self._counted_row = [int(c) for c in self._counted.tolist()]
        total_guarantee = sum(
            (self._resources(s.guarantee) for s in self.tree.specs()),
            np.zeros(len(self.resource_names), dtype=np.int64),
        )
        free = sub_floor(self.total, total_guarantee)
        self._attrs: dict[str, _Attr] = {}
        for queue in self.tree:
            if queue not in self.usage:
                continue
            spec = self.tree.get(queue)
            u = self.usage[queue]
            guarantee = self._resources(spec.guarantee)
            capability = np.array([bounded(spec.limit(r)) for r in self.resource_names], dtype=np.int64)
            self._attrs[queue] = _Attr(
                weight=spec.weight,
                priority=spec.priority,
                request=u.request * self._counted,
                elastic=u.elastic * self._counted,
                guarantee=guarantee,
                real_capability=np.minimum(free + guarantee, capability),
                deserved=np.zeros(len(self.resource_names), dtype=np.int64),
                allocated=(u.allocated * self._counted).tolist(),
                inqueue=(u.inqueue * self._counted).tolist(),
            )
        water_fill(self.total, self._counted, self._attrs)
        for attr in self._attrs.values():
            attr.deserved_row = attr.deserved.tolist()
            # in Python ints: an unlimited capability plus elastic would wrap in int64
            attr.admit_limit = [c + e for c, e in zip(attr.real_capability.tolist(), attr.elastic.tolist())]
            attr.share = share(attr.allocated, attr.deserved_row)

    def _attr(self, queue: str) -> _Attr:
        try:  # every hook of every job asks: the tracked queue first, the checks (and their errors) after
            return self._attrs[queue]
        except (AttributeError, KeyError):
            return self._tracked(queue)

    # -- hooks -----------------------------------------------------------------------------------------------
    def queue_order(self, left: str, right: str) -> int:
        lq, rq = self._attr(left), self._attr(right)
        if lq.priority != rq.priority:
            return -1 if lq.priority > rq.priority else 1
        return (lq.share > rq.share) - (lq.share < rq.share)

    def queue_key(self, queue: str) -> tuple[int, float]:
        """queue_order as a sort key (the higher priority, then the lower share, first): the session ranks the
        queues with one call each instead of a comparison per pair."""
        a = self._attr(queue)
        return -a.priority, a.share

    def overused(self, queue: str) -> bool:
        a = self._attr(queue)
        return all(d <= used for d, used in zip(a.deserved_row, a.allocated))

    def allocatable(self, queue: str, request: npt.ArrayLike) -> bool:
        return self._fits_deserved(queue, self._vector(request, "request"))

    def headroom(self, queue: str) -> np.ndarray:
        a = self._attr(queue)
        if not self.tree.get(queue).is_open:
            return np.zeros(len(self.resource_names), dtype=np.int64)
        rows = zip(a.deserved_row, a.allocated, self._counted_row)
        # once per job: a conditional expression where max() would be a call per axis
        return np.array(
            [(d - used if d > used else 0) if counted else UNLIMITED for d, used, counted in rows], np.int64
        )

    def preemptive(self, queue: str, request: npt.ArrayLike) -> bool:
        return self._fits_deserved(queue, self._vector(request, "request"))

    def _fits_deserved(self, queue: str, request: np.ndarray) -> bool:
        a = self._attr(queue)
        if not self.tree.get(queue).is_open:
            return False
        asked = (request > 0) & self._counted
        return bool((np.array(a.allocated, np.int64) + request <= a.deserved)[asked].all())

    def job_enqueueable(self, queue: str, min_resources: npt.ArrayLike | None) -> int:
        a = self._attr(queue)
        if not self.tree.get(queue).is_open:
            return REJECT
        if min_resources is None:
            return PERMIT
        rows = zip(self._row(min_resources, "min_resources"), self._counted_row, a.allocated, a.inqueue, a.admit_limit)
        for m, counted, allocated, inqueue, limit in rows:
            if counted and m > 0 and m + allocated + inqueue > limit:
                return REJECT
        return PERMIT

    def on_job_enqueued(self, queue: str, min_resources: npt.ArrayLike | None) -> None:
        a = self._attr(queue)
        if min_resources is not None:
            rows = zip(a.inqueue, self._row(min_resources, "min_resources"), self._counted_row)
            a.inqueue = [held + m * counted for held, m, counted in rows]

    def _victims(self, reclaimer: Claim, candidates: list[tuple[int, Claim]]) -> list[int]:
        # Any queue above its deserved gives victims, whatever the reclaimer asks (v1.14: Volcano's commit 975277f55
        # took out the condition that the queue hold at least that much).
        allocations: dict[str, np.ndarray] = {}
        victims = []
        for i, c in candidates:
            attr = self._attr(c.queue)
            allocated = allocations.setdefault(c.queue, np.array(attr.allocated, np.int64))
            if not (allocated <= attr.deserved).all():
                allocated -= c.request * self._counted
                victims.append(i)
        return victims

    def on_allocate(self, queue: str, request: npt.ArrayLike) -> None:
        a = self._attr(queue)
        rows = zip(a.allocated, self._row(request, "request"), self._counted_row)
        a.allocated = [held + r * counted for held, r, counted in rows]
        a.share = share(a.allocated, a.deserved_row)

    def on_deallocate(self, queue: str, request: npt.ArrayLike) -> None:
        a = self._attr(queue)
        rows = zip(a.allocated, self._row(request, "request"), self._counted_row)
        allocated = [held - r * counted for held, r, counted in rows]
        if min(allocated, default=0) < 0:
            raise ValueError(f"queue {queue}: deallocating more than the queue holds ({a.allocated})")
        a.allocated = allocated
        a.share = share(a.allocated, a.deserved_row)

    def status(self) -> dict[str, QueueShare]:
        return self._status()


def water_fill(total: np.ndarray, counted: np.ndarray, attrs: dict[str, _Attr]) -> None:
    """Volcano's deserved rounds, computed as Volcano computes them (float64, its 0.1 tolerance and its stopping
    rules), then floored to whole units; writes each attr's deserved."""
    remaining = total.astype(np.float64)
    deserved = {q: np.zeros_like(remaining) for q in attrs}
    met: set[str] = set()
    while True:
        total_weight = sum(a.weight for q, a in attrs.items() if q not in met)
        if total_weight == 0:
            break
        before = remaining.copy()
        increased = np.zeros_like(remaining)
        decreased = np.zeros_like(remaining)
        for queue, a in attrs.items():
            if queue in met:
                continue
            old = deserved[queue]
            new = old + remaining * (a.weight / total_weight)
            new = np.maximum(np.minimum(np.minimum(new, a.real_capability), a.request), a.guarantee)
            if _less_equal(a.request, new) or (new == old).all():
                met.add(queue)
            deserved[queue] = new
            increased += np.maximum(new - old, 0)
            decreased += np.maximum(old - new, 0)
        remaining = np.maximum(remaining + decreased - increased, 0)
        if (remaining[counted] < _MIN_RESOURCE).all() or (remaining == before).all():
            break
    for queue, a in attrs.items():
        a.deserved = np.floor(deserved[queue]).astype(np.int64)


def _less_equal(left: np.ndarray, right: np.ndarray) -> bool:
    """Volcano's Resource.LessEqual: every resource below, or within its 0.1 tolerance."""
    return bool(((left < right) | (np.abs(left - right) < _MIN_RESOURCE)).all())
