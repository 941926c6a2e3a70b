"""The fast path's pending pods, queued as kube-scheduler's scheduling queue keeps them: an active queue (highest
priority first, then the earliest arrival; a pod whose binding lost a conflict goes before all of them), a backoff
queue (each failed attempt doubles the wait, from the initial to the maximum backoff) and an unschedulable pool.

A pod that did not fit waits in the pool until a cluster event that can make it fit arrives (kube-scheduler's
queueing hints, from the reasons it did not fit: insufficient resources wait for a node added or changed, a pod
deleted, or the shard grown; a taint, selector or cordon for a node added or changed, or the shard grown), then
moves to the backoff queue, or to the active queue once its backoff has passed. Pods stuck in the pool longer than
podMaxInUnschedulableSeconds are flushed anyway. As in kube-scheduler, a pod whose attempt overlapped such an event
(it was popped before the event and failed after it) goes straight to the backoff queue, so it never misses it.
Pure state with an injected clock; the scheduling loop owns it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

# Cluster events (kube-scheduler's ClusterEvent, in the terms this adapter sees them).
NODE_ADDED, NODE_UPDATED, POD_DELETED, SHARD_CHANGED = "NodeAdd", "NodeUpdate", "AssignedPodDelete", "ShardChange"
STORAGE_CHANGED = "StorageChange"  # a PV, PVC, StorageClass, CSINode, CSIDriver, CSIStorageCapacity or attachment
ALL_EVENTS = frozenset({NODE_ADDED, NODE_UPDATED, POD_DELETED, SHARD_CHANGED, STORAGE_CHANGED})
_RESOURCE_EVENTS = frozenset({NODE_ADDED, NODE_UPDATED, POD_DELETED, SHARD_CHANGED})
_NODE_EVENTS = frozenset({NODE_ADDED, NODE_UPDATED, SHARD_CHANGED})


def hints(reasons: Iterable[str] | None) -> frozenset[str]:
    """The events that can make a pod fit, from the reasons it did not (vcore's kube-scheduler reason strings)."""
    if not reasons:
        return ALL_EVENTS
    out: set[str] = set()
    for reason in reasons:
        if reason.startswith("Insufficient") or reason == "Too many pods" or "GPU" in reason or "NUMA" in reason:
            out |= _RESOURCE_EVENTS
        elif "taint" in reason or "affinity" in reason or "selector" in reason or "unschedulable" in reason:
            out |= _NODE_EVENTS
        else:
            return ALL_EVENTS
    return frozenset(out)


@dataclass
class QueuedPod:
    key: str
    priority: int
    arrived: float  # when it first entered the queue (the active queue's tie-break)
    attempts: int = 0
    backoff_until: float = 0.0
    where: str = ""  # active | backoff | unschedulable | popped
    conflict: bool = False  # lost a bind conflict: first in the active queue
    popped_in: int = 0  # the scheduling cycle of its last pop
    unschedulable_since: float = 0.0
    wake_on: frozenset[str] = field(default_factory=frozenset)
    token: int = -1  # its current heap entry; older entries of the pod are skipped


class SchedulingQueue:
    def __init__(
        self, initial_backoff: float = 1.0, max_backoff: float = 10.0, max_in_unschedulable: float = 300.0
    ) -> None:
        if not 0 < initial_backoff <= max_backoff:
            raise ValueError("SchedulingQueue: needs 0 < initial_backoff <= max_backoff")
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.pods: dict[str, QueuedPod] = {}
        self._active: list = []  # (not conflict, -priority, arrived, token, key)
        self._backoff: list = []  # (backoff_until, token, key)
        self._seq = itertools.count()
        self.n_active = 0
        self.scheduling_cycle = 0  # bumped by every pop
        self.move_request_cycle = -1  # the scheduling cycle of the last move request
        self._scanned = -1e18  # when the pool was last looked at for pods stuck too long

    # -- entering and leaving ----------------------------------------------------------------------------------
    def add(self, key: str, priority: int, now: float) -> None:
        """A new pending pod, or one whose scheduling inputs changed (it is tried again, after any backoff)."""
        pod = self.pods.get(key)
        if pod is None:
            pod = self.pods[key] = QueuedPod(key, priority, now)
        pod.priority = priority
        if pod.where == "popped":
            return  # its attempt is under way; its outcome decides where it goes
        if pod.backoff_until > now:
            self._to_backoff(pod)  # kube-scheduler keeps a backing-off pod in backoff on an update
        else:
            self._to_active(pod)

    def delete(self, key: str) -> None:
        pod = self.pods.pop(key, None)  # its heap entries are skipped when reached
        if pod is not None and pod.where == "active":
            self.n_active -= 1

    def __contains__(self, key: str) -> bool:
        return key in self.pods

    def __len__(self) -> int:
        return len(self.pods)

    # -- attempts ----------------------------------------------------------------------------------------------
    def pop(self, n: int, now: float) -> list[str]:
        """Up to n pods from the active queue, best first (after moving the expired backoffs over)."""
        self.flush(now)
        out: list[str] = []
        self.scheduling_cycle += 1
        while self._active and len(out) < n:
            *_, token, key = heapq.heappop(self._active)
            pod = self.pods.get(key)
            if pod is None or pod.where != "active" or pod.token != token:
                continue
            self._set(pod, "popped")
            pod.conflict, pod.popped_in = False, self.scheduling_cycle
            out.append(key)
        return out

    def unschedulable(self, key: str, reasons: Iterable[str] | None, now: float) -> None:
        """The popped pod fits nowhere: the pool (or backoff, if a move request overlapped its attempt)."""
        pod = self.pods.get(key)
        if pod is None:
            return
        pod.attempts += 1
        pod.backoff_until = now + self._backoff_of(pod)
        pod.wake_on = hints(reasons)
        if self.move_request_cycle >= pod.popped_in:
            self._to_backoff(pod)
        else:
            self._set(pod, "unschedulable")
            pod.unschedulable_since = now

    def conflict(self, key: str) -> None:
        """Its placement lost a conflict (the node was taken meanwhile, the binding failed on the way): it is
        retried first, without backoff."""
        pod = self.pods.get(key)
        if pod is not None:
            pod.conflict = True
            pod.backoff_until = 0.0
            self._to_active(pod)

    def failed(self, key: str, now: float) -> None:
        """An error unrelated to fit (a failed binding): retried after its backoff."""
        pod = self.pods.get(key)
        if pod is not None:
            pod.attempts += 1
            pod.backoff_until = now + self._backoff_of(pod)
            self._to_backoff(pod)

    def done(self, key: str) -> None:
        """Placed (its binding is on its way): it leaves the queue."""
        self.delete(key)

    # -- events --------------------------------------------------------------------------------------------------
    def move(self, event: str, now: float) -> int:
        """A cluster event: unschedulable pods it can help go to backoff, or active when their backoff passed.
        Returns how many moved."""
        self.move_request_cycle = self.scheduling_cycle
        moved = 0
        for pod in self.pods.values():
            if pod.where == "unschedulable" and event in pod.wake_on:
                moved += 1
                if pod.backoff_until > now:
                    self._to_backoff(pod)
                else:
                    self._to_active(pod)
        return moved

    def flush(self, now: float) -> None:
        """Expired backoffs to the active queue; pods unschedulable for too long to backoff or active."""
        while self._backoff and self._backoff[0][0] <= now:
            _, token, key = heapq.heappop(self._backoff)
            pod = self.pods.get(key)
            if pod is not None and pod.where == "backoff" and pod.token == token:
                self._to_active(pod)
        if now - self._scanned < 1.0:  # the pool's leftovers are looked for once a second (kube-scheduler: 30 s)
            return
        self._scanned = now
        for pod in self.pods.values():
            if pod.where == "unschedulable" and now - pod.unschedulable_since >= self.max_in_unschedulable:
                if pod.backoff_until > now:
                    self._to_backoff(pod)
                else:
                    self._to_active(pod)

    def next_backoff(self) -> float | None:
        """When the earliest backoff expires (the loop's next wake-up), or None."""
        while self._backoff:
            _, token, key = self._backoff[0]
            pod = self.pods.get(key)
            if pod is not None and pod.where == "backoff" and pod.token == token:
                return self._backoff[0][0]
            heapq.heappop(self._backoff)
        return None

    def where(self, key: str) -> str | None:
        pod = self.pods.get(key)
        return pod.where if pod is not None else None

    # -- internals ---------------------------------------------------------------------------------------------
    def _backoff_of(self, pod: QueuedPod) -> float:
        return min(self.initial_backoff * 2 ** (pod.attempts - 1), self.max_backoff)

    def _set(self, pod: QueuedPod, where: str) -> None:
        self.n_active += (where == "active") - (pod.where == "active")
        pod.where = where

    def _to_active(self, pod: QueuedPod) -> None:
        self._set(pod, "active")
        pod.token = next(self._seq)
        heapq.heappush(self._active, (not pod.conflict, -pod.priority, pod.arrived, pod.token, pod.key))

    def _to_backoff(self, pod: QueuedPod) -> None:
        self._set(pod, "backoff")
        pod.token = next(self._seq)
        heapq.heappush(self._backoff, (pod.backoff_until, pod.token, pod.key))
