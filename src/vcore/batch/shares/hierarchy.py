"""Hierarchical queues with KAI Scheduler's semantics: per level, deserved quota first, then the remainder split by
overQuotaWeight among the children that still request, capped by their limit.

Semantics of KAI's proportion plugin (resource_division, reclaimable, queue_order, capacity_policy), for cpu, memory
and ``nvidia.com/gpu`` (the resources KAI queues carry; other axes are not quota'd):

* Fair share, per resource, top-down: at each level every queue first gets min(quota, what it can use), where what
  it can use is its request (all its pods, placed or pending, summed up the tree) capped by its limit, and an
  unlimited quota counts as the whole amount being divided. What remains goes to the queues of the highest priority
  first: in rounds, each queue that still wants more gets amount * overQuotaWeight / (sum of the weights of those
  still wanting), all of it when that covers what it still wants, else the floor of it in whole units; the rounds
  repeat while some queue took less than its portion. The fractions the floors dropped go one unit at a time to the
  queues with the largest dropped fraction (then the oldest, then by name), highest priority first. A parent's
  fair share is then divided among its children the same way.
* Queue order (KAI's GetQueueOrderResult, compared where two queues' paths part): queues not above their fair share
  on every resource first, then queues within their quota, higher priority, no usage without an allocatable share,
  smaller dominant share (allocated / allocatable share), smaller allocatable share, older, then name.
* allocatable: only leaf queues take jobs; a task fits when no queue on its path would exceed its limit on a
  resource the task asks for (KAI's IsJobOverQueueCapacity).
* preemptive (CanReclaimResources): the reclaimer's queue stays within its fair share with the request added.
* reclaimable: victims are added in the order given while the scenario stays valid for KAI's Reclaimable: at the
  level where the two queues' paths part, each victim must come from a queue above its allocatable share (fair-share
  strategy), or from a queue above its quota while the reclaimer stays within its own (quota strategy); and on the
  reclaimer's path no queue may end, with the request added, above its fair share and at a saturation
  (allocated / fair share) times ``reclaimerUtilizationMultiplier`` at or above a sibling that gave resources.

Not modelled: KAI's historical-usage factor (kValue, taken as 0), non-preemptible jobs' quota checks, MIG devices
counted as GPU units, and queue lendingLimit (rejected when the queue is parsed). KAI has no queue state; a Volcano
queue that is not Open takes no new allocations. Volcano queues read as quota = deserved, limit = capability and
overQuotaWeight = weight.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from vcore.batch.amounts import UNLIMITED
from vcore.batch.queue import GPU
from vcore.batch.shares import names
from vcore.batch.shares.base import Claim, QueueShare, SharePlugin, positive_float, share
from vcore.errors import ProfileError

KAI_RESOURCES = ("cpu", "memory", GPU)
_MULTIPLIER_KEYS = ("reclaimerUtilizationMultiplier", "relcaimerSaturationMultiplier")  # KAI's docs, KAI's code
_NO_FAIR_SHARE_PENALTY = 1000  # KAI's noFairShareDrfMultiplier


@dataclass
class KaiQueue:
    """One queue as KAI's proportion plugin sees it; quantities per resource axis index (cpu, memory, GPU)."""

    name: str
    parent: str | None
    deserved: dict[int, int]  # quota; UNLIMITED possible
    max_allowed: dict[int, int]  # limit; UNLIMITED possible
    fair: dict[int, int]
    allocated: dict[int, int]
    request: dict[int, int] = field(default_factory=dict)
    weight: dict[int, int] = field(default_factory=dict)  # overQuotaWeight
    priority: int = 0
    created: str = ""
    ancestors: list[str] = field(default_factory=list)  # top first, filled by link()
    children: list[str] = field(default_factory=list)

    def requestable(self, k: int) -> int:
        return self.request[k] if self.max_allowed[k] >= UNLIMITED else min(self.max_allowed[k], self.request[k])

    def satisfied(self, k: int) -> bool:
        return self.request[k] <= self.fair[k] or (
            self.max_allowed[k] < UNLIMITED and self.max_allowed[k] <= self.fair[k]
        )

    def still_wanted(self, k: int) -> int:
        return max(self.requestable(k) - self.fair[k], 0)

    def allocatable_share(self, k: int) -> int:
        """KAI's GetAllocatableShare: max(quota, fair share) capped by the limit."""
        if self.deserved[k] >= UNLIMITED:
            return self.max_allowed[k]
        share = max(self.deserved[k], self.fair[k])
        return share if self.max_allowed[k] >= UNLIMITED else min(self.max_allowed[k], share)


def link(queues: Mapping[str, KaiQueue]) -> None:
    """Fill every queue's ancestors (top first) and children from the parent names."""
    for q in queues.values():
        q.children = [c.name for c in queues.values() if c.parent == q.name]
        chain, parent = [], q.parent
        while parent is not None:
            chain.append(parent)
            parent = queues[parent].parent
        q.ancestors = chain[::-1]


def _le(a: Mapping[int, int], b: Mapping[int, int]) -> bool:
    return all(a[k] <= b[k] for k in a)  # UNLIMITED is the int64 maximum: larger than any quantity


def _path_up(queues: Mapping[str, KaiQueue], name: str) -> list[KaiQueue]:
    q = queues[name]
    return [q] + [queues[a] for a in reversed(q.ancestors)]


def leveled(queues: Mapping[str, KaiQueue], left: str, right: str) -> tuple[KaiQueue, KaiQueue]:
    """KAI's getLeveledQueues: the two queues' ancestors-or-selves where their paths part."""
    lp = queues[left].ancestors + [left]
    rp = queues[right].ancestors + [right]
    pair = (lp[0], rp[0])
    for a, b in zip(lp, rp):
        pair = (a, b)
        if a != b:
            break
    return queues[pair[0]], queues[pair[1]]


def can_reclaim(queue: KaiQueue, wanted: Mapping[int, int]) -> bool:
    """KAI's CanReclaimResources (preemptible reclaimer): allocated + request stays within the fair share."""
    return all(queue.allocated[k] + wanted[k] <= queue.fair[k] for k in wanted)


def reclaim_valid(
    queues: Mapping[str, KaiQueue],
    reclaimer_queue: str,
    wanted: Mapping[int, int],
    victims: list[tuple[str, Mapping[int, int]]],
    multiplier: float = 1.0,
) -> bool:
    """KAI's Reclaimable: may ``victims`` (queue, resources) be evicted for a task of ``reclaimer_queue``?"""
    by_queue: dict[str, list[Mapping[int, int]]] = {}
    for queue, resources in victims:
        by_queue.setdefault(queue, []).append(resources)
    remaining: dict[str, dict[int, int]] = {}
    involved: dict[str, set[int]] = {}
    for queue, requests in by_queue.items():
        reclaimer_level, victim_level = leveled(queues, reclaimer_queue, queue)
        involved[queue] = {k for req in requests for k in req if req[k] > 0}
        left = remaining.setdefault(victim_level.name, dict(victim_level.allocated))
        for req in requests:
            if not _fits_strategy(wanted, reclaimer_level, victim_level, left):
                return False
            for up in _path_up(queues, queue):
                held = remaining.setdefault(up.name, dict(up.allocated))
                for k in held:
                    held[k] -= req[k]
                involved[up.name] = involved.get(up.name, set()) | involved[queue]
    wanted_involved = {k for k in wanted if wanted[k] > 0}
    for q in _path_up(queues, reclaimer_queue):
        mine = dict(remaining.get(q.name) or q.allocated)
        for k in mine:
            mine[k] += wanted[k]
        for sibling, held in remaining.items():
            s = queues[sibling]
            if s.parent != q.parent or sibling == q.name:
                continue
            for k in involved.get(sibling, set()) | wanted_involved:
                ratio = _saturation(mine[k], q.fair[k])
                if ratio > 1 and s.fair[k] > 0 and ratio * multiplier >= _saturation(held[k], s.fair[k]):
                    return False
    return True


def _fits_strategy(
    wanted: Mapping[int, int], reclaimer_level: KaiQueue, victim_level: KaiQueue, left: Mapping[int, int]
) -> bool:
    # fair-share strategy: the victim's queue is above its allocatable share
    if not _le(left, {k: victim_level.allocatable_share(k) for k in left}):
        return True
    # quota strategy: the reclaimer stays within its quota and the victim's queue is above its quota
    after = {k: reclaimer_level.allocated[k] + wanted[k] for k in wanted}
    return _le(after, reclaimer_level.deserved) and not _le(left, victim_level.deserved)


def _saturation(allocated: int, fair: int) -> float:
    """KAI's fairShareSaturationRatio: allocated / fair share (infinite above a zero fair share)."""
    if fair == 0:
        return math.inf if allocated > 0 else 0.0
    return allocated / fair


# -- fair share -------------------------------------------------------------------------------------------------
def divide(queues: Mapping[str, KaiQueue], group: list[KaiQueue], amount: int, k: int) -> None:
    """KAI's setResourceShare over one level for resource axis ``k``, then down into each queue's children."""
    remaining = amount
    for q in group:
        quota = amount if q.deserved[k] >= UNLIMITED else q.deserved[k]
        given = min(quota, q.requestable(k))
        q.fair[k] += given
        remaining -= given
    if remaining > 0:
        _over_quota(remaining, group, k)
    for q in group:
        if q.children:
            divide(queues, [queues[c] for c in q.children], q.fair[k], k)


def _over_quota(amount: int, group: list[KaiQueue], k: int) -> None:
    priorities = sorted({q.priority for q in group}, reverse=True)
    dropped = {}
    for p in priorities:
        amount, dropped[p] = _up_to_fair_share(amount, [q for q in group if q.priority == p], k)
    for p in priorities:
        if amount <= 0:
            break
        # the fractions the floors dropped, one unit each, largest first (then oldest, then name)
        for _, q in sorted(dropped[p].values(), key=lambda fq: (-fq[0], fq[1].created, fq[1].name)):
            if amount == 0:
                break
            q.fair[k] += 1
            amount -= 1


def _up_to_fair_share(amount: int, group: list[KaiQueue], k: int) -> tuple[int, dict[str, tuple[Fraction, KaiQueue]]]:
    """KAI's divideUpToFairShare over the queues of one priority: rounds of weighted portions, floored to whole
    units; returns what is left and, per queue, the fraction its last floor dropped."""
    dropped: dict[str, tuple[Fraction, KaiQueue]] = {}
    while True:
        portion_of_round = amount
        weight_sum = sum(q.weight[k] for q in group if not q.satisfied(k))
        if weight_sum == 0:
            break
        again = False
        for q in group:
            if amount == 0:
                break
            if q.satisfied(k) or q.weight[k] == 0:
                continue
            wanted = q.still_wanted(k)
            portion = Fraction(portion_of_round * q.weight[k], weight_sum)
            if wanted <= portion:
                given = wanted
                dropped.pop(q.name, None)
            else:
                given = math.floor(portion)
                if portion > given:
                    dropped[q.name] = (portion - given, q)
            if given == 0:
                continue
            q.fair[k] += given
            amount -= given
            again = again or wanted < portion
        if not again or amount == 0:
            break
    return amount, dropped


class HierarchyPlugin(SharePlugin[KaiQueue]):
    """KAI Scheduler's hierarchical fair share. Always hierarchical (a flat tree is one level)."""

    name = names.HIERARCHY
    supports_hierarchy = True
    hooks = frozenset(
        {"queue_order", "allocatable", "preemptive", "reclaimable", "on_allocate", "on_deallocate", "status"}
    )
    accepted_arguments = {
        key: (lambda plugin, k, v: positive_float(plugin, k, v, minimum=1.0)) for key in _MULTIPLIER_KEYS
    }

    def __init__(self, arguments: Mapping[str, Any] | None = None, *, hierarchy: bool = False) -> None:
        super().__init__(arguments, hierarchy=hierarchy)
        given = [k for k in _MULTIPLIER_KEYS if k in self.arguments]
        if len(given) > 1:
            raise ProfileError(f"{self.name}: arguments.{given[1]}: the same setting as {given[0]}; give one")
        self.multiplier = self.arguments[given[0]] if given else 1.0

    # -- open ------------------------------------------------------------------------------------------------
    def _open(self) -> None:
        axes = [i for i, r in enumerate(self.resource_names) if r in KAI_RESOURCES]
        self._axes = axes
        r = self.resource_names
        self._queues: dict[str, KaiQueue] = {}
        self._allocated: dict[str, np.ndarray] = {}
        for q in self.tree:
            spec = self.tree.get(q)
            self._queues[q] = KaiQueue(
                name=q,
                parent=spec.parent,
                priority=spec.priority,
                created=spec.creation_timestamp,
                deserved={k: spec.deserved.get(r[k], 0) for k in axes},
                max_allowed={k: spec.limit(r[k]) for k in axes},
                weight={k: spec.over_quota_weight_of(r[k]) for k in axes},
                request={k: 0 for k in axes},
                fair={k: 0 for k in axes},
                allocated={k: 0 for k in axes},
            )
            self._allocated[q] = np.zeros(len(r), dtype=np.int64)
        link(self._queues)
        for q, u in self.usage.items():
            for up in _path_up(self._queues, q):
                self._allocated[up.name] = self._allocated[up.name] + u.allocated
                for k in axes:
                    up.request[k] += int(u.request[k])
                    up.allocated[k] += int(u.allocated[k])
        tops = [q for q in self._queues.values() if q.parent is None]
        for k in axes:
            divide(self._queues, tops, int(self.total[k]), k)

    def _queue(self, name: str) -> KaiQueue:
        self._spec(name)
        return self._queues[name]

    def _quantities(self, v: np.ndarray) -> dict[int, int]:
        return {k: int(v[k]) for k in self._axes}

    # -- hooks -----------------------------------------------------------------------------------------------
    def queue_order(self, left: str, right: str) -> int:
        self._queue(left)
        self._queue(right)
        if left == right:
            return 0
        lq, rq = leveled(self._queues, left, right)
        if lq is rq:
            return 0
        checks = (
            lambda q: all(q.fair[k] < q.allocated[k] for k in self._axes),  # above fair share everywhere: later
            lambda q: not _le(q.allocated, q.deserved),  # beyond quota: later
            lambda q: -q.priority,
            lambda q: any(q.allocatable_share(k) == 0 and q.allocated[k] > 0 for k in self._axes),
            self._dominant_share,
        )
        for key in checks:
            a, b = key(lq), key(rq)
            if a != b:
                return -1 if a < b else 1
        la = {k: lq.allocatable_share(k) for k in self._axes}
        ra = {k: rq.allocatable_share(k) for k in self._axes}
        if _le(la, ra) and not _le(ra, la):
            return -1
        if _le(ra, la) and not _le(la, ra):
            return 1
        if lq.created != rq.created:
            return -1 if lq.created < rq.created else 1
        return 0

    def _dominant_share(self, q: KaiQueue) -> float:
        """KAI's GetDominantResourceShare: max of allocated / allocatable share (unlimited reads as the total)."""
        dominant = 0.0
        for k in self._axes:
            share_k = q.allocatable_share(k)
            if share_k >= UNLIMITED:
                share_k = int(self.total[k])
            value = float(q.allocated[k]) * _NO_FAIR_SHARE_PENALTY if share_k == 0 else q.allocated[k] / share_k
            dominant = max(dominant, value)
        return dominant

    def allocatable(self, queue: str, request: npt.ArrayLike) -> bool:
        q = self._queue(queue)
        wanted = self._quantities(self._vector(request, "request"))
        if not self.tree.get(queue).is_open or q.children:
            return False
        return not any(
            wanted[k] > 0 and up.max_allowed[k] < UNLIMITED and up.max_allowed[k] < up.allocated[k] + wanted[k]
            for up in _path_up(self._queues, queue)
            for k in self._axes
        )

    def headroom(self, queue: str) -> np.ndarray:
        q = self._queue(queue)
        if not self.tree.get(queue).is_open or q.children:
            return np.zeros(len(self.resource_names), dtype=np.int64)
        room = np.full(len(self.resource_names), UNLIMITED, dtype=np.int64)
        for up in _path_up(self._queues, queue):
            for k in self._axes:
                if up.max_allowed[k] < UNLIMITED:
                    room[k] = min(room[k], max(up.max_allowed[k] - up.allocated[k], 0))
        return room

    def preemptive(self, queue: str, request: npt.ArrayLike) -> bool:
        return can_reclaim(self._queue(queue), self._quantities(self._vector(request, "request")))

    def _victims(self, reclaimer: Claim, candidates: list[tuple[int, Claim]]) -> list[int]:
        wanted = self._quantities(reclaimer.request)
        accepted: list[tuple[int, str, dict[int, int]]] = []
        for i, c in candidates:
            trial = accepted + [(i, c.queue, self._quantities(c.request))]
            if reclaim_valid(self._queues, reclaimer.queue, wanted, [(q, res) for _, q, res in trial], self.multiplier):
                accepted = trial
        return [i for i, _, _ in accepted]

    def on_allocate(self, queue: str, request: npt.ArrayLike) -> None:
        self._queue(queue)
        self._move(queue, self._vector(request, "request"))

    def on_deallocate(self, queue: str, request: npt.ArrayLike) -> None:
        self._queue(queue)
        request = self._vector(request, "request")
        if (self._allocated[queue] - request < 0).any():
            raise ValueError(
                f"queue {queue}: deallocating more than the queue holds ({self._allocated[queue].tolist()})"
            )
        self._move(queue, -request)

    def _move(self, queue: str, delta: np.ndarray) -> None:
        for up in _path_up(self._queues, queue):
            self._allocated[up.name] = self._allocated[up.name] + delta
            for k in self._axes:
                up.allocated[k] += int(delta[k])

    def status(self) -> dict[str, QueueShare]:
        self._require_open()
        quota_axes = np.zeros(len(self.resource_names), dtype=bool)
        quota_axes[self._axes] = True
        out = {}
        for name, q in self._queues.items():
            fair = np.zeros(len(self.resource_names), dtype=np.int64)
            for k in self._axes:
                fair[k] = q.fair[k]
            out[name] = QueueShare(self._allocated[name].copy(), fair, share(self._allocated[name], fair, quota_axes))
        return out
