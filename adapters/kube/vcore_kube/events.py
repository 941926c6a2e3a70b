"""What a Kubernetes user sees of a scheduling decision, and the writes a decision implies besides bindings and
statuses: Events through events.k8s.io/v1 (`Scheduled`, `FailedScheduling` with the reason summary, as
kube-scheduler words them; a PodGroup's `Unschedulable` and `Scheduled` and an eviction's `Evict`, as Volcano's
scheduler words them), the pod's PodScheduled condition and nominatedNodeName, and the deletion of the pods a
preemption or a reclaim evicts. (PodGroup and Queue statuses are the status writer's, statuswriter.py.)

Events and pod conditions go through one background thread and a bounded queue, so they never delay a binding;
when the queue is full one is dropped and counted (a FailedScheduling event repeats on the pod's next attempt
anyway). Evictions have a queue and a thread of their own, so a burst of events never holds one up nor blocks the
loop: an eviction is never dropped, and a failed deletion is tried again a few times (a victim that stays keeps
its preemptor waiting).
"""

from __future__ import annotations

import datetime
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from vcore_kube.kubeclient import Api, ApiException, pod_path

log = logging.getLogger(__name__)

NOTE_LIMIT = 1024  # events.k8s.io/v1 rejects longer notes
PODGROUP_API = "scheduling.volcano.sh/v1beta1"
EVICTION_ATTEMPTS = 3
EVICTION_RETRY_SECONDS = 0.5
# kube-scheduler's PodScheduled condition for a pod it does not attempt because of its scheduling gates.
GATED_REASON, GATED_MESSAGE = "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"


def truncated_note(note: str) -> str:
    """An event's note within NOTE_LIMIT, cut as kube-scheduler cuts its FailedScheduling text (truncateMessage:
    the start, then " ..."); the pod condition keeps the whole text."""
    if len(note) <= NOTE_LIMIT:
        return note
    return note[: NOTE_LIMIT - len(" ...")] + " ..."


def micro_time() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_time() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Recorder:
    # Pods of these scheduler names (the fast path's) are reported under their own name, not scheduler_name.
    reports_for: frozenset[str] = frozenset()

    def __init__(
        self,
        api: Api,
        scheduler_name: str,
        *,
        enabled: bool = True,
        capacity: int = 20000,
        dropped: Callable[[], None] = lambda: None,
    ) -> None:
        self.api, self.scheduler_name, self.enabled, self.dropped = api, scheduler_name, enabled, dropped
        self.instance = f"{scheduler_name}-{socket.gethostname()}"[:128]
        self._queue: queue.Queue = queue.Queue(maxsize=capacity)
        self._thread = threading.Thread(target=self._run, args=(self._queue,), name="event-writer", daemon=True)
        self._thread.start()
        self._evictions: queue.Queue = queue.Queue()  # unbounded: one item per victim, never dropped
        self._evictor = threading.Thread(target=self._run, args=(self._evictions,), name="evictor", daemon=True)
        self._evictor.start()

    # -- what the loop reports -----------------------------------------------------------------------------
    def scheduled(self, pod: dict[str, Any], node: str) -> None:
        meta = pod["metadata"]
        self._put(
            (
                "event",
                pod,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {meta.get('namespace')}/{meta['name']} to {node}",
            )
        )

    def failed_scheduling(self, pod: dict[str, Any], message: str) -> None:
        self._put(("event", pod, "Warning", "FailedScheduling", "Scheduling", message))
        if _pod_scheduled_condition(pod) != ("False", "Unschedulable", message):
            self._put(("condition", pod, "Unschedulable", message))

    def gated(self, pod: dict[str, Any]) -> None:
        """A pod with scheduling gates is not attempted: no event, only the condition kube-scheduler writes."""
        if _pod_scheduled_condition(pod) != ("False", GATED_REASON, GATED_MESSAGE):
            self._put(("condition", pod, GATED_REASON, GATED_MESSAGE))

    def podgroup_event(self, podgroup: dict[str, Any], kind: str, reason: str, note: str) -> None:
        """An event regarding a PodGroup (Volcano's scheduler records `Unschedulable` and `Scheduled` ones)."""
        self._put(("object_event", podgroup, PODGROUP_API, "PodGroup", kind, reason, "Scheduling", note))

    def nominate(self, pod: dict[str, Any], node: str | None) -> None:
        """The preemptor waits for `node` (kube-scheduler's status.nominatedNodeName); None clears it."""
        if (pod.get("status") or {}).get("nominatedNodeName") != node:
            self._put(("nominate", pod, node))

    def evict(
        self, victim: dict[str, Any], preemptor: str, node: str, reason: str, podgroup: dict[str, Any] | None = None
    ) -> None:
        """Delete a victim of the cycle's preempt or reclaim action (graceful, for this UID only) and say so as
        Volcano's scheduler does: a Warning `Evict` on the pod, a Normal `Evict` on its PodGroup (if it has one).
        `preemptor` and `node` are whom and where it makes room for (logged)."""
        log.debug(
            "evicting pod %s/%s (%s) for %s on node %s",
            victim["metadata"].get("namespace"),
            victim["metadata"]["name"],
            reason,
            preemptor,
            node,
        )
        self._put(("event", victim, "Warning", "Evict", "Evicting", f"Pod is evicted, because of {reason}"))
        if podgroup is not None:
            self._put(("object_event", podgroup, PODGROUP_API, "PodGroup", "Normal", "Evict", "Evicting", reason))
        self._evictions.put(("evict", victim, EVICTION_ATTEMPTS))

    def preempt(self, victim: dict[str, Any], preemptor: dict[str, Any], node: str) -> None:
        """kube-scheduler's DefaultPreemption of a victim: its DisruptionTarget condition (PreemptionByScheduler)
        first, then the deletion, and a Preempted event naming the preemptor's UID and the node."""
        scheduler = (preemptor.get("spec") or {}).get("schedulerName") or self.scheduler_name
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": f"{scheduler}: preempting to accommodate a higher priority pod",
        }
        self._put(
            (
                "event",
                victim,
                "Normal",
                "Preempted",
                "Preempting",
                f"Preempted by pod {preemptor['metadata'].get('uid', '')} on node {node}",
            )
        )
        self._evictions.put(("evict", victim, EVICTION_ATTEMPTS, condition))

    def _controller(self, pod: dict[str, Any]) -> str:
        name = (pod.get("spec") or {}).get("schedulerName")
        return name if name in self.reports_for else self.scheduler_name

    def _put(self, item: tuple) -> None:
        if not self.enabled:
            return
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped()

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (up to timeout), then stop."""
        deadline = time.monotonic() + timeout
        while not (self._queue.empty() and self._evictions.empty()) and time.monotonic() < deadline:
            time.sleep(0.01)
        for q, thread in ((self._queue, self._thread), (self._evictions, self._evictor)):
            q.put(None)
            thread.join(timeout=max(0.1, deadline - time.monotonic()))

    # -- the writers --------------------------------------------------------------------------------------
    def _run(self, items: queue.Queue) -> None:
        while True:
            item = items.get()
            if item is None:
                return
            try:
                getattr(self, "_" + item[0])(*item[1:])  # _event, _object_event, _condition, _nominate, _evict
            except ApiException as e:
                if e.status != 404:  # the pod (or its namespace) is gone: nothing to tell
                    log.warning("writing %s for %s: HTTP %s", item[0], item[1]["metadata"].get("name"), e.status)
            except Exception as e:  # the API server is down or slow: events are best effort
                log.warning("writing %s for %s: %s", item[0], item[1]["metadata"].get("name"), e)

    def _event(self, pod: dict[str, Any], kind: str, reason: str, action: str, note: str) -> None:
        self._post_event(pod, "v1", "Pod", self._controller(pod), kind, reason, action, note)

    def _object_event(
        self, obj: dict[str, Any], api_version: str, kind: str, event_type: str, reason: str, action: str, note: str
    ) -> None:
        self._post_event(obj, api_version, kind, self.scheduler_name, event_type, reason, action, note)

    def _post_event(
        self,
        obj: dict[str, Any],
        api_version: str,
        kind: str,
        controller: str,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """An events.k8s.io/v1 Event regarding `obj` (of `api_version`/`kind`), reported by `controller`."""
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        self.api.create(
            f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
            {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": namespace},
                "eventTime": micro_time(),
                "reportingController": controller,
                "reportingInstance": self.instance,
                "action": action,
                "reason": reason,
                "type": event_type,
                "note": truncated_note(note),
                "regarding": {
                    "apiVersion": api_version,
                    "kind": kind,
                    "namespace": namespace,
                    "name": meta["name"],
                    "uid": meta.get("uid"),
                    "resourceVersion": meta.get("resourceVersion"),
                },
            },
        )

    def _condition(self, pod: dict[str, Any], reason: str, message: str) -> None:
        meta = pod["metadata"]
        self.api.patch(
            pod_path(meta.get("namespace", ""), meta["name"], "status"),
            {
                "metadata": {"uid": meta.get("uid")},
                "status": {
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": reason,
                            "message": message,
                            "lastProbeTime": None,
                            "lastTransitionTime": now_time(),
                        }
                    ]
                },
            },
            patch_type="strategic",
        )

    def _nominate(self, pod: dict[str, Any], node: str | None) -> None:
        meta = pod["metadata"]
        self.api.patch(
            pod_path(meta.get("namespace", ""), meta["name"], "status"),
            {"metadata": {"uid": meta.get("uid")}, "status": {"nominatedNodeName": node}},
        )

    def _evict(self, victim: dict[str, Any], attempts: int, condition: dict[str, Any] | None = None) -> None:
        meta = victim["metadata"]
        try:
            if condition is not None:  # the reason goes on the pod before it goes (tried again with the deletion)
                self.api.patch(
                    pod_path(meta.get("namespace", ""), meta["name"], "status"),
                    {
                        "metadata": {"uid": meta.get("uid")},
                        "status": {"conditions": [{**condition, "lastTransitionTime": now_time()}]},
                    },
                    patch_type="strategic",
                )
                condition = None
            self.api.delete(
                pod_path(meta.get("namespace", ""), meta["name"]), {"preconditions": {"uid": meta.get("uid")}}
            )
        except Exception as e:
            if isinstance(e, ApiException) and e.status in (404, 409):
                return  # already gone, or a new pod of that name: nothing of the victim is left
            if attempts <= 1:
                raise
            time.sleep(EVICTION_RETRY_SECONDS)
            self._evictions.put(("evict", victim, attempts - 1, condition))


def _pod_scheduled_condition(pod: dict[str, Any]) -> tuple[str, str, str] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return c.get("status"), c.get("reason"), c.get("message")
    return None
