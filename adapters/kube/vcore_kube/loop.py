"""The scheduling loop: one thread that owns the cache, vcore's state and the queue of pending pods.

Reflector threads and bind workers talk to it only through its inbox. Between cycles it applies what arrived
(object deltas, bind results); every cyclePeriod, while it leads and every cache has synced, it asks vcore
(cycle.py) to place the pending pods that are due, assumes each placement, and hands it to the binder.

The queue follows kube-scheduler's: a pod that did not fit waits, unschedulable, until something that could
make it fit happens (a node added or changed, a pod's resources freed, the pod itself changed, a PodGroup, Queue
or PriorityClass changed) or five minutes pass; every failed attempt backs it off exponentially (1 s doubling to
10 s by default). A gang is tried when one of its pods is due; its pods share one fate, so they back off together.
After a cycle the loop writes what changed in each PodGroup's status, evicts the pods a preemption chose (and tells
the preemptor's status which node it waits for). A failed binding is
forgotten (the pod's resources are released in vcore) and retried after its backoff, unless the pod is gone or
the watch has meanwhile shown it bound; a 409 or a 404 is never retried blindly, so a pod bound by someone else
or deleted between decision and binding costs one request, not a storm.
"""

from __future__ import annotations

import calendar
import gc
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from vcore_kube import binder as bind
from vcore_kube.cache import Cache, Delta
from vcore_kube.config import Config
from vcore_kube.convert import Converter, is_terminating, node_name_of, scheduler_name_of
from vcore_kube.cycle import Cycle
from vcore_kube.events import Recorder
from vcore_kube.metrics import Metrics
from vcore_kube.reflector import paused_gc

log = logging.getLogger(__name__)

QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


@dataclass
class PendingPod:
    key: str
    uid: str
    pod: dict
    first_seen: float  # monotonic
    state: str = "active"  # active | unschedulable | invalid | binding
    attempts: int = 0
    not_before: float = 0.0  # monotonic: backoff
    unschedulable_since: float = 0.0
    node: str = ""  # while binding
    confirmed: bool = False  # while binding: the watch has shown the pod bound
    deleted: bool = False  # while binding: the watch has shown the pod deleted
    event_message: str = ""
    event_at: float = field(default=-1e9)


class SchedulingLoop(threading.Thread):
    def __init__(self, config: Config, converter: Converter, cycle: Cycle, binder: "bind.Binder | None",
                 recorder: Recorder, metrics: Metrics, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(name="scheduling-loop", daemon=True)
        self.config, self.converter, self.cycle, self.binder = config, converter, cycle, binder
        self.recorder, self.metrics, self.clock = recorder, metrics, clock
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.cache = Cache()
        self.pending: dict[str, PendingPod] = {}
        self.in_flight: dict[str, PendingPod] = {}
        self.leading = threading.Event()
        self.stop_event = threading.Event()
        self.synced: Callable[[], bool] = lambda: True
        self.heartbeat = self.clock()
        self.cycles = 0
        self._queues_seen: set[str] = set()
        self._announced = False  # "caches synced" logged

    # -- inputs (any thread) -------------------------------------------------------------------------------
    def replace(self, kind: str, items: list[dict], resource_version: str) -> None:
        self.inbox.put(("replace", kind, items))

    def event(self, kind: str, event_type: str, obj: dict) -> None:
        self.inbox.put(("event", kind, event_type, obj))

    def bind_done(self, result: "bind.BindResult") -> None:
        self.inbox.put(("bound", result))

    # -- the thread ---------------------------------------------------------------------------------------
    def run(self) -> None:
        period = self.config.cycle_period
        next_cycle = self.clock()
        while not self.stop_event.is_set():
            self.heartbeat = self.clock()
            try:
                self._handle(self.inbox.get(timeout=max(0.0, min(next_cycle - self.clock(), 1.0))))
                while self.clock() < next_cycle:  # drain what else arrived, but never starve the cycle
                    self._handle(self.inbox.get_nowait())
            except queue.Empty:
                pass
            except Exception:
                log.exception("applying a change failed")
            if self.clock() >= next_cycle:
                next_cycle = self.clock() + period
                try:
                    if self.leading.is_set() and self.synced():
                        if not self._announced:
                            self._announced = True
                            log.info("caches synced: %d nodes, %d pods (%d pending); scheduling",
                                     self.cache.count("Node"), self.cache.count("Pod"), len(self.pending))
                        self.schedule_once()
                    self._update_gauges()
                except Exception:  # a bug must not stop scheduling for good: log it, try again next cycle
                    log.exception("scheduling cycle failed")

    def drain(self) -> None:
        """Apply everything queued in the inbox (tests and shutdown)."""
        try:
            while True:
                self._handle(self.inbox.get_nowait())
        except queue.Empty:
            pass

    def _handle(self, msg: tuple) -> None:
        if msg[0] == "event":
            _, kind, event_type, obj = msg
            self.metrics.watch_events.labels(kind).inc()
            delta = self.cache.apply(kind, event_type, obj)
            if delta is not None:
                self._on_delta(delta)
        elif msg[0] == "replace":
            _, kind, items = msg
            with paused_gc():
                for delta in self.cache.replace(kind, items):
                    self._on_delta(delta, relist=True)
                if kind == "HyperNode":
                    self._hypernodes_changed()
            # The cache's objects live until they change: keep later collections from walking them all again.
            gc.freeze()
        elif msg[0] == "bound":
            self._on_bound(msg[1])

    # -- deltas -------------------------------------------------------------------------------------------
    def _on_delta(self, d: Delta, relist: bool = False) -> None:
        if d.kind == "Node":
            if self.converter.node_changed(d.old, d.new):
                self._wake_unschedulable()
        elif d.kind == "Pod":
            self._on_pod(d)
        elif d.kind == "HyperNode":
            if not relist:  # a relist installs the whole tree once it is applied
                self._hypernodes_changed()
        elif self.converter.volcano_object(d.kind, d.old, d.new):
            self._wake_unschedulable()

    def _hypernodes_changed(self) -> None:
        # The tree as a whole: members may arrive before or after the HyperNodes that hold them.
        self.converter.replace_hypernodes([obj for _, obj in self.cache.items("HyperNode")])
        self._wake_unschedulable()

    def _on_pod(self, d: Delta) -> None:
        key, pod = d.key, d.new
        flying = self.in_flight.get(key)
        if pod is None or (not node_name_of(pod) and is_terminating(pod)):  # deleted, finished or going
            if flying is not None:
                flying.deleted = True
            entry = self.pending.pop(key, None)
            if entry is not None:
                self.cycle.remove(key)
            if pod is None and self.converter.pod_released(key):
                self._wake_unschedulable()
            return
        if node_name_of(pod):  # bound: by our binding (confirmation) or by anyone else
            if flying is not None:
                flying.confirmed = True
            if self.pending.pop(key, None) is not None:
                self.cycle.remove(key)
            self.converter.pod_bound(pod)
            return
        if scheduler_name_of(pod) != self.config.scheduler_name:
            return
        uid = pod["metadata"].get("uid", "")
        if flying is not None and flying.uid == uid:
            flying.pod = pod  # e.g. our own gpu-index annotation: the binding is under way
            return
        assumed = self.converter.bound_uid(key)
        if assumed == uid:
            return  # an older, unbound version arriving after our binding succeeded: the pod is bound
        if assumed is not None:  # a pod of the same name replaced the one we bound: that one is gone
            self.converter.pod_released(key)
        entry = self.pending.get(key)
        if entry is not None and entry.uid == uid:
            entry.pod = pod
            if _scheduling_inputs(d.old) != _scheduling_inputs(pod):  # status-only changes wake nothing
                self._admit(entry)
            return
        entry = PendingPod(key, uid, pod, self.clock())
        self.pending[key] = entry
        self._admit(entry)

    def _admit(self, entry: PendingPod) -> None:
        error = self.cycle.add(entry.key, entry.pod)
        if error is None:
            entry.state = "active"
        else:
            entry.state = "invalid"
            self.metrics.attempts.labels("error").inc()
            self._failed(entry, f"vcore cannot read the pod: {error}")

    def _wake_unschedulable(self) -> None:
        for entry in self.pending.values():
            if entry.state == "unschedulable":
                entry.state = "active"  # its backoff (not_before) still holds

    # -- the cycle ----------------------------------------------------------------------------------------
    def due(self) -> list[str]:
        now = self.clock()
        flush = self.config.pod_max_in_unschedulable_seconds
        out = []
        for key, e in self.pending.items():
            if e.state == "unschedulable" and now - e.unschedulable_since >= flush:
                e.state = "active"
            if e.state == "active" and e.not_before <= now:
                out.append(key)
        return out

    def schedule_once(self) -> int:
        """One cycle over the due pods; returns how many were placed."""
        due = self.due()
        if not due:
            return 0
        started = time.perf_counter()
        outcome = self.cycle.run(due)
        self.metrics.cycle_duration.observe(time.perf_counter() - started)
        self.cycles += 1
        now = self.clock()
        for b in outcome.bindings:
            entry = self.pending.pop(b.key, None)
            if entry is None:  # vcore placed a pod this loop no longer waits for: take the decision back
                self.cycle.forget(b.key)
                continue
            entry.state, entry.node, entry.confirmed, entry.deleted = "binding", b.node, False, False
            self.converter.assumed(b.key, entry.pod)
            self.in_flight[b.key] = entry
            if self.binder is None or not self.binder.submit(entry.pod, b.node, b.gpu_index):
                self._requeue(self.in_flight.pop(b.key), forget=True, backoff=False)
        for key, (reasons, message) in outcome.unschedulable.items():
            entry = self.pending.get(key)
            if entry is None:
                continue
            self.metrics.attempts.labels("unschedulable").inc()
            entry.state, entry.unschedulable_since = "unschedulable", now
            self._back_off(entry)
            self._failed(entry, message)
        self._write_podgroups(outcome)
        for e in outcome.evictions:
            victim = self.cache.get("Pod", e.victim)
            if victim is not None:
                self.metrics.evictions.labels(e.reason).inc()
                self.recorder.evict(victim, e.preemptor, e.node, e.reason)
        for e in outcome.evictions:
            waiting = self.pending.get(e.preemptor)
            if waiting is not None:
                self.recorder.nominate(waiting.pod, e.node)
        return len(outcome.bindings)

    def _write_podgroups(self, outcome) -> None:
        """Each PodGroup's status, where the cycle changed it (the cache holds what the API server has)."""
        for key, status in outcome.podgroups.items():
            current = self.cache.get("PodGroup", key)
            if current is None:
                continue
            wanted = status.to_dict()
            have = current.get("status") or {}
            if any(have.get(k) != v for k, v in wanted.items()):
                self.recorder.podgroup_status(current, wanted)

    def _back_off(self, entry: PendingPod) -> None:
        entry.attempts += 1
        delay = min(self.config.pod_initial_backoff_seconds * 2 ** (entry.attempts - 1),
                    self.config.pod_max_backoff_seconds)
        entry.not_before = self.clock() + delay

    def _failed(self, entry: PendingPod, message: str) -> None:
        """FailedScheduling, at most once a minute per pod unless the reason changed."""
        now = self.clock()
        if message != entry.event_message or now - entry.event_at >= 60.0:
            entry.event_message, entry.event_at = message, now
            self.recorder.failed_scheduling(entry.pod, message)

    # -- bind results -------------------------------------------------------------------------------------
    def _on_bound(self, r: "bind.BindResult") -> None:
        entry = self.in_flight.get(r.key)
        if entry is None or entry.uid != r.uid:
            return
        del self.in_flight[r.key]
        if r.outcome == bind.OK:
            self.metrics.attempts.labels("scheduled").inc()
            self.metrics.queue_to_bind.observe(self.clock() - entry.first_seen)
            created = _creation_epoch(entry.pod)
            if created is not None:
                self.metrics.creation_to_bind.observe(max(0.0, r.finished - created))
            self.recorder.scheduled(entry.pod, r.node)
            return
        self.metrics.bind_errors.labels(r.reason or r.outcome).inc()
        self.metrics.attempts.labels("error").inc()
        if entry.confirmed:  # the watch already showed it bound (our request did land, or someone else's)
            return
        if entry.deleted or r.outcome == bind.NOT_FOUND:
            # Gone: release what we assumed; a re-created pod of the same name arrives as a new watch event.
            if self.converter.node_of(r.key) == entry.node:
                self.cycle.forget(r.key)
            return
        self._requeue(entry, forget=True, backoff=True)

    def _requeue(self, entry: PendingPod, *, forget: bool, backoff: bool) -> None:
        if forget and self.converter.node_of(entry.key) == entry.node:
            self.cycle.forget(entry.key)
        entry.node = ""
        if entry.key in self.pending:  # a newer pod of the same name arrived meanwhile: it replaces this one
            return
        if backoff:
            self._back_off(entry)
        self.pending[entry.key] = entry
        self._admit(entry)

    # -- gauges -------------------------------------------------------------------------------------------
    def _update_gauges(self) -> None:
        counts: dict[str, int] = {}
        for entry in self.pending.values():
            q = self._queue_of(entry.pod)
            counts[q] = counts.get(q, 0) + 1
        for q in self._queues_seen - counts.keys():  # queues that emptied read 0, not their last value
            self.metrics.pending.labels(q).set(0)
        for q, n in counts.items():
            self.metrics.pending.labels(q).set(n)
        self._queues_seen |= counts.keys()

    def _queue_of(self, pod: dict) -> str:
        meta = pod["metadata"]
        annotations = meta.get("annotations") or {}
        group = annotations.get("scheduling.k8s.io/group-name")
        if group:
            pg = self.cache.get("PodGroup", f"{meta.get('namespace', '')}/{group}")
            if pg is not None:
                return (pg.get("spec") or {}).get("queue") or "default"
        return annotations.get(QUEUE_ANNOTATION) or "default"


def _scheduling_inputs(pod: dict | None) -> tuple:
    if pod is None:
        return ()
    meta = pod.get("metadata") or {}
    return (meta.get("labels"), meta.get("annotations"), pod.get("spec"))


def _creation_epoch(pod: dict) -> float | None:
    stamp = pod["metadata"].get("creationTimestamp")
    if not stamp:
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None
