"""Kueue-style cohorts: each ClusterQueue has a nominal quota per resource; queues of the same cohort borrow each
other's unused quota, up to their borrowingLimit, and lend no more than their lendingLimit.

Semantics of Kueue's ClusterQueue resource nodes (pkg/cache resource_node.go) for a flat cohort:

* a queue's guaranteed quota is nominal - lendingLimit (0 without a lending limit): it is never lent;
* the cohort pools what its queues may lend, sum(nominal - guaranteed), and counts each queue's usage above its
  guaranteed quota against that pool;
* available = (guaranteed - usage, not below 0) + min(cohort pool - cohort usage,
  what the queue keeps in the pool - what it uses there + borrowingLimit); a queue without a cohort has
  nominal - usage. A request fits when every resource it asks for is covered by the queue and within available
  (``pods`` counts only when the queue covers it, as Kueue computes it).

Hooks: job enqueueable (Kueue's admission: the job's minResources fit, with usage = allocated + inqueue - elastic as
the quota the queue's admitted jobs reserve), allocatable (the task fits, with usage = allocated), preemptive
(reclaimWithinCohort allows it and the request fits within nominal quota, or borrowWithinCohort is on),
reclaimable (Kueue's classical preemption across the cohort: candidates from queues that borrow on a resource the
reclaimer lacks, lower priority unless the policy is Any, lowest priority first, removed until the reclaimer fits -
without borrowing unless borrowWithinCohort allows it below its priority threshold - then put back where they are
not needed), queue order (queues that do not borrow first, then Kueue's dominant resource share of borrowed quota).

vcore has no resource flavors (a ClusterQueue's flavors are summed per resource when it is parsed) and flat cohorts
only. A job without minResources is admitted without a quota check (vcore sees only minResources at enqueue), and
withinClusterQueue preemption is the preempt action's business. Candidates of equal priority keep the caller's
order, where Kueue prefers the most recently admitted: give them newest first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vcore.batch.amounts import UNLIMITED
from vcore.batch.queue import KUEUE_API, QueueSpec
from vcore.batch.shares import names
from vcore.batch.shares.base import PERMIT, REJECT, Claim, QueueShare, SharePlugin, add_bounded, share


@dataclass
class _Attr:
    spec: QueueSpec
    covered: np.ndarray
    nominal: np.ndarray
    guaranteed: np.ndarray
    borrowing_limit: np.ndarray  # UNLIMITED where unset
    allocated: np.ndarray
    inqueue: np.ndarray
    elastic: np.ndarray


class CohortPlugin(SharePlugin[_Attr]):
    """Kueue's ClusterQueue quota with cohort borrowing and lending (no arguments)."""

    name = names.COHORT
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

    def _open(self) -> None:
        self._pods = np.array([r == "pods" for r in self.resource_names], dtype=bool)
        zero = np.zeros(len(self.resource_names), dtype=np.int64)
        self._attrs: dict[str, _Attr] = {}
        self._cohorts: dict[str, list[str]] = {}
        for q in self.tree:
            spec = self.tree.get(q)
            covered = spec.covered_resources if spec.api == KUEUE_API else set(spec.deserved)
            nominal = self._resources(spec.deserved)
            lending = self._resources(spec.lending_limit)
            u = self.usage.get(q)
            self._attrs[q] = _Attr(
                spec=spec,
                covered=self._mask(covered),
                nominal=nominal,
                guaranteed=np.where(self._mask(spec.lending_limit), np.maximum(nominal - lending, 0), 0),
                borrowing_limit=self._resources(spec.borrowing_limit, UNLIMITED),
                allocated=u.allocated.copy() if u else zero.copy(),
                inqueue=u.inqueue.copy() if u else zero.copy(),
                elastic=u.elastic.copy() if u else zero.copy(),
            )
            if spec.cohort is not None:
                self._cohorts.setdefault(spec.cohort, []).append(q)
        # the pool a cohort lends from: its queues' nominal quota above their guaranteed (lending-limited) part
        self._lendable = {
            c: sum(self._attrs[m].nominal - self._attrs[m].guaranteed for m in members)
            for c, members in self._cohorts.items()
        }

    def _attr(self, queue: str) -> _Attr:
        self._spec(queue)
        return self._attrs[queue]

    # -- Kueue's resource-node arithmetic --------------------------------------------------------------------
    def _reserved(self) -> dict[str, np.ndarray]:
        """Usage as the quota the queues' admitted jobs reserve: allocated + inqueue - elastic."""
        return {q: np.maximum(a.allocated + a.inqueue - a.elastic, 0) for q, a in self._attrs.items()}

    def available(self, queue: str, usage: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """What the queue can still use per resource (Kueue's available()); usage is allocated unless given."""
        a = self._attr(queue)

        def used(q: str) -> np.ndarray:
            return self._attrs[q].allocated if usage is None else usage[q]

        mine = used(queue)
        if a.spec.cohort is None:
            return a.nominal - mine
        pool_used = np.zeros_like(mine)
        for member in self._cohorts[a.spec.cohort]:
            pool_used += np.maximum(used(member) - self._attrs[member].guaranteed, 0)
        from_pool = self._lendable[a.spec.cohort] - pool_used
        stored = a.nominal - a.guaranteed
        used_in_pool = np.maximum(mine - a.guaranteed, 0)
        bounded = a.borrowing_limit < UNLIMITED
        with_limit = stored - used_in_pool + np.where(bounded, a.borrowing_limit, 0)
        from_pool = np.where(bounded, np.minimum(with_limit, from_pool), from_pool)
        return np.maximum(a.guaranteed - mine, 0) + from_pool

    def _asked(self, a: _Attr, request: np.ndarray) -> np.ndarray | None:
        """The resources the request asks for, or None when one is not covered by the queue (Kueue rejects)."""
        asked = (request > 0) & ~(self._pods & ~a.covered)  # pods count only where the queue covers them
        return None if (asked & ~a.covered).any() else asked

    def _fits(
        self,
        queue: str,
        request: np.ndarray,
        usage: dict[str, np.ndarray] | None = None,
        *,
        allow_borrowing: bool = True,
    ) -> bool:
        a = self._attr(queue)
        asked = self._asked(a, request)
        if asked is None:
            return False
        mine = a.allocated if usage is None else usage[queue]
        if not allow_borrowing and (mine + request > a.nominal)[asked].any():
            return False
        return bool((request <= self.available(queue, usage))[asked].all())

    def _borrowing(self, queue: str, dims: np.ndarray, usage: dict[str, np.ndarray] | None = None) -> bool:
        a = self._attrs[queue]
        mine = a.allocated if usage is None else usage[queue]
        return bool((mine > a.nominal)[dims].any())

    # -- hooks -----------------------------------------------------------------------------------------------
    def queue_order(self, left: str, right: str) -> int:
        keys = [(self._borrowing(q, self._attr(q).covered), self._dominant_share(q)) for q in (left, right)]
        return (keys[0] > keys[1]) - (keys[0] < keys[1])

    def _dominant_share(self, queue: str) -> int:
        """Kueue's dominant resource share: max over resources of borrowed * 1000 / what the cohort lends."""
        a = self._attrs[queue]
        if a.spec.cohort is None:
            return 0
        lendable = self._lendable[a.spec.cohort]
        borrowed = np.maximum(a.allocated - a.nominal, 0)
        ratios = [
            int(borrowed[d]) * 1000 // int(lendable[d])
            for d in range(len(borrowed))
            if borrowed[d] > 0 and lendable[d] > 0
        ]
        return max(ratios, default=0)

    def allocatable(self, queue: str, request: npt.ArrayLike) -> bool:
        request = self._vector(request, "request")
        return self._attr(queue).spec.is_open and self._fits(queue, request)

    def headroom(self, queue: str) -> np.ndarray:
        a = self._attr(queue)
        if not a.spec.is_open:
            return np.zeros(len(self.resource_names), dtype=np.int64)
        room = np.where(a.covered, np.maximum(self.available(queue), 0), 0)
        return np.where(self._pods & ~a.covered, UNLIMITED, room).astype(np.int64)

    def job_enqueueable(self, queue: str, min_resources: npt.ArrayLike | None) -> int:
        a = self._attr(queue)
        if not a.spec.is_open:
            return REJECT
        if min_resources is None:
            return PERMIT
        minimum = self._vector(min_resources, "min_resources")
        return PERMIT if self._fits(queue, minimum, self._reserved()) else REJECT

    def on_job_enqueued(self, queue: str, min_resources: npt.ArrayLike | None) -> None:
        a = self._attr(queue)
        if min_resources is not None:
            a.inqueue = add_bounded(a.inqueue, self._vector(min_resources, "min_resources"))

    def preemptive(self, queue: str, request: npt.ArrayLike) -> bool:
        a = self._attr(queue)
        request = self._vector(request, "request")
        if not a.spec.is_open or a.spec.cohort is None or a.spec.reclaim_within_cohort == "Never":
            return False
        if a.spec.borrow_within_cohort != "Never":
            return True
        asked = self._asked(a, request)
        return asked is not None and bool((a.allocated + request <= a.nominal)[asked].all())

    def _victims(self, reclaimer: Claim, candidates: list[tuple[int, Claim]]) -> list[int]:
        a = self._attr(reclaimer.queue)
        spec = a.spec
        if spec.cohort is None or spec.reclaim_within_cohort == "Never":
            return []
        usage = {q: a.allocated.copy() for q, a in self._attrs.items()}
        asked = self._asked(a, reclaimer.request)
        if asked is None:
            return []
        lacking = asked & (reclaimer.request > self.available(reclaimer.queue, usage))
        if not lacking.any():
            return []  # it fits without evicting anyone
        pool = [
            (i, c)
            for i, c in candidates
            if self._attrs[c.queue].spec.cohort == spec.cohort
            and (spec.reclaim_within_cohort == "Any" or c.priority < reclaimer.priority)
            and (c.request > 0)[lacking].any()
        ]
        pool.sort(key=lambda ic: ic[1].priority)  # stable: equal priorities keep the caller's order
        under_nominal = bool((usage[reclaimer.queue] < a.nominal)[lacking].all())
        if spec.borrow_within_cohort != "Never":
            threshold = reclaimer.priority
            if spec.max_priority_threshold is not None and spec.max_priority_threshold < threshold:
                threshold = spec.max_priority_threshold + 1
            if not under_nominal:
                pool = [(i, c) for i, c in pool if c.priority < threshold]
            return self._minimal(reclaimer, pool, usage, lacking, allow_borrowing=True, threshold=threshold)
        if under_nominal:
            return self._minimal(reclaimer, pool, usage, lacking, allow_borrowing=False, threshold=None)
        return []

    def _minimal(
        self,
        reclaimer: Claim,
        pool: list[tuple[int, Claim]],
        usage: dict[str, np.ndarray],
        lacking: np.ndarray,
        *,
        allow_borrowing: bool,
        threshold: int | None,
    ) -> list[int]:
        """Kueue's minimalPreemptions: remove candidates until the reclaimer fits, then put back the unneeded."""
        targets: list[tuple[int, Claim]] = []
        fits = False
        for i, c in pool:
            if not self._borrowing(c.queue, lacking, usage):
                continue  # Kueue reclaims only from queues that still borrow
            if threshold is not None and c.priority >= threshold:
                allow_borrowing = False
            usage[c.queue] = usage[c.queue] - c.request
            targets.append((i, c))
            if self._fits(reclaimer.queue, reclaimer.request, usage, allow_borrowing=allow_borrowing):
                fits = True
                break
        if not fits:
            return []
        for j in range(len(targets) - 2, -1, -1):
            _, c = targets[j]
            usage[c.queue] = usage[c.queue] + c.request
            if self._fits(reclaimer.queue, reclaimer.request, usage, allow_borrowing=allow_borrowing):
                targets.pop(j)
            else:
                usage[c.queue] = usage[c.queue] - c.request
        return [i for i, _ in targets]

    def on_allocate(self, queue: str, request: npt.ArrayLike) -> None:
        a = self._attr(queue)
        a.allocated = a.allocated + self._vector(request, "request")

    def on_deallocate(self, queue: str, request: npt.ArrayLike) -> None:
        a = self._attr(queue)
        allocated = a.allocated - self._vector(request, "request")
        if (allocated < 0).any():
            raise ValueError(f"queue {queue}: deallocating more than the queue holds ({a.allocated.tolist()})")
        a.allocated = allocated

    def status(self) -> dict[str, QueueShare]:
        self._require_open()
        return {
            q: QueueShare(a.allocated.copy(), a.nominal.copy(), share(a.allocated, a.nominal, a.covered))
            for q, a in self._attrs.items()
        }
