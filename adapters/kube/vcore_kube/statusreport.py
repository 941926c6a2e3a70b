"""What the scheduling loop reports after a cycle besides its bindings: each PodGroup's and each Volcano Queue's
status, handed to the status writer when the cycle changed it, and the PodGroup events Volcano's scheduler records
(RecordJobStatusEvent): a Warning `Unschedulable` with the gang's reason while a group waits (Pending, Inqueue or
Unknown; here at most once a minute unless the reason changes, where Volcano's event recorder aggregates), and a
Normal `Scheduled` "pod group is ready" when a group that is not waiting gets a new status; and the events the
cycle's plugins record about a PodGroup (resourcequota's rejection, a topology the cycle cannot honour), each at
most once a minute.

A cycle gives every group's status; only those that differ from the one last handed over go to the writer (which
keeps it and writes it whenever the API server's copy differs), so an unchanged group costs one comparison.
Called on the scheduling loop's thread only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from vcore_kube.cache import Cache
from vcore_kube.volcanostatus import PODGROUP, QUEUE, podgroup_status, queue_status, rolled_up

if TYPE_CHECKING:
    from vcore_kube.batchcycle import Outcome
    from vcore_kube.statuswriter import StatusWriter
    from vcore_kube.volcanostatus import PodGroupStatus, QueueStatus

log = logging.getLogger(__name__)

WAITING_PHASES = frozenset({"Pending", "Inqueue", "Unknown"})  # Volcano's pgUnschedulable
UNSCHEDULABLE_EVENT_EVERY = 60.0  # seconds between two Unschedulable events of one group with the same reason
READY_NOTE = "pod group is ready"  # Volcano's PodGroupReady


class PodGroupEvents(Protocol):
    def podgroup_event(self, podgroup: dict[str, Any], kind: str, reason: str, note: str) -> None: ...


class StatusReport:
    def __init__(self, writer: StatusWriter, events: PodGroupEvents, clock: Callable[[], float]) -> None:
        self.writer, self.events, self.clock = writer, events, clock
        # PodGroup key -> (uid, status) last handed to the writer; Queue name -> (uid, status dict).
        self._podgroups: dict[str, tuple[str | None, PodGroupStatus]] = {}
        self._queues: dict[str, tuple[str | None, dict[str, Any]]] = {}
        self._unschedulable: dict[str, tuple[str, float]] = {}  # PodGroup key -> (reason, when) of its last event
        # A plugin's event (PodGroup key, type, reason, note) -> when it was last recorded.
        self._recorded: dict[tuple[str, str, str, str], float] = {}

    def cycle_done(self, outcome: Outcome, cache: Cache, interleave_at: Callable[[int], None]) -> None:
        for i, (key, status) in enumerate(outcome.podgroups.items()):
            interleave_at(i)
            current = cache.get(PODGROUP, key)
            if current is not None:
                try:
                    self._podgroup(key, current, status)
                except Exception:  # one object's bug must not cost the others their status (nor the loop its cycle)
                    log.exception("reporting the status of PodGroup %s", key)
        if outcome.events:
            self._plugin_events(outcome, cache)
        if outcome.queues:
            try:
                self._queues_done(outcome.queues, cache)
            except Exception:
                log.exception("reporting the status of the queues")

    def observed(self, kind: str, key: str, obj: dict[str, Any] | None) -> None:
        """A PodGroup or Queue delta of the informer cache (None: deleted)."""
        self.writer.observed(kind, key, obj)
        if obj is None:
            if kind == PODGROUP:
                self._podgroups.pop(key, None)
                self._unschedulable.pop(key, None)
            else:
                self._queues.pop(key, None)

    def _podgroup(self, key: str, current: dict[str, Any], status: PodGroupStatus) -> None:
        uid = current["metadata"].get("uid")
        waiting = status.phase in WAITING_PHASES
        if waiting and status.message:
            self._unschedulable_event(key, current, status.message)
        elif not waiting:
            self._unschedulable.pop(key, None)
        if self._podgroups.get(key) == (uid, status):
            return
        self._podgroups[key] = (uid, status)
        if self.writer.want(PODGROUP, key, current, podgroup_status(status)) and not waiting:
            self.events.podgroup_event(current, "Normal", "Scheduled", READY_NOTE)

    def _plugin_events(self, outcome: Outcome, cache: Cache) -> None:
        now = self.clock()
        self._recorded = {k: t for k, t in self._recorded.items() if now - t < UNSCHEDULABLE_EVENT_EVERY}
        for event in outcome.events:
            kind, _, key = event.object.partition(" ")
            current = cache.get(PODGROUP, key) if kind == "PodGroup" else None
            recorded = (key, event.type, event.reason, event.message)
            if current is not None and recorded not in self._recorded:
                self._recorded[recorded] = now
                self.events.podgroup_event(current, event.type, event.reason, event.message)

    def _unschedulable_event(self, key: str, podgroup: dict[str, Any], message: str) -> None:
        now = self.clock()
        last = self._unschedulable.get(key)
        if last is None or last[0] != message or now - last[1] >= UNSCHEDULABLE_EVENT_EVERY:
            self._unschedulable[key] = (message, now)
            self.events.podgroup_event(podgroup, "Warning", "Unschedulable", message)

    def _queues_done(self, queues: dict[str, QueueStatus], cache: Cache) -> None:
        parents = {name: (obj.get("spec") or {}).get("parent") or "" for name, obj in cache.items(QUEUE)}
        allocated = rolled_up(queues, parents)
        for name, q in queues.items():
            current = cache.get(QUEUE, name)
            if current is None:  # the default queue vcore assumes when the cluster has none: no object to write
                continue
            uid = current["metadata"].get("uid")
            wanted = queue_status(q, allocated[name])
            if self._queues.get(name) == (uid, wanted):
                continue
            self._queues[name] = (uid, wanted)
            self.writer.want(QUEUE, name, current, wanted)
