"""The fast path and warm pools in the scheduling loop: the fast path (fastpath.py) and warm pools (warmpool.py)
fed with the loop's pod, node and WarmPool events and bind results, their micro-batches run and their pools
refilled when due, and their decisions handed to the loop's binder. The loop calls in from its thread and is seen
here only through what AgentHost names; placeholder pods are created and deleted by a writer thread of their own
(PlaceholderWriter), which reports back through the loop's inbox.

Between two jobs of a running batch cycle the loop lets this module run a due micro-batch (`tick(in_cycle=True)`):
only fast-path pods arriving and fast-path bindings finishing are handled then; every other change waits for the
cycle to end, so the cycle's view of the cluster moves only by what the fast path binds.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from vcore_kube import binder as bind
from vcore_kube.convert import Converter
from vcore_kube.fastpath import FastPath
from vcore_kube.kubeclient import Api, ApiException
from vcore_kube.metrics import Metrics
from vcore_kube.pending import PendingPod
from vcore_kube.schedqueue import NODE_ADDED, NODE_UPDATED, POD_DELETED, SHARD_CHANGED
from vcore_kube.warmpool import WarmPools, is_placeholder, pool_of

log = logging.getLogger(__name__)

REFILL_PERIOD = 0.05  # placeholders are created and placed at most this often (seconds)


class PlaceholderWriter(threading.Thread):
    """Creates and deletes placeholder pods; `created(pool)` is called (from this thread) after each creation."""

    def __init__(self, api: Api, created: Callable[[str], None]) -> None:
        super().__init__(name="placeholder-writer", daemon=True)
        self.api, self.created = api, created
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()

    def create(self, pod: dict[str, Any]) -> None:
        self._jobs.put(("create", pod))

    def delete(self, pod: dict[str, Any]) -> None:
        self._jobs.put(("delete", pod))

    def stop(self) -> None:
        self._jobs.put(None)

    def run(self) -> None:
        while (job := self._jobs.get()) is not None:
            kind, pod = job
            meta = pod["metadata"]
            try:
                if kind == "create":
                    self.api.create(f"/api/v1/namespaces/{meta['namespace']}/pods", pod)
                else:
                    bind.delete_pod(self.api, pod)
            except ApiException as e:
                log.warning("placeholder %s/%s: %s failed: HTTP %s", meta["namespace"], meta["name"], kind, e.status)
            except Exception as e:  # the API server is away: the pool is refilled on a later round
                log.warning("placeholder %s/%s: %s failed: %s", meta["namespace"], meta["name"], kind, e)
            finally:
                pool = pool_of(pod)
                if kind == "create" and pool is not None:  # the placeholders it creates carry their pool
                    self.created(pool)


class AgentHost(Protocol):
    """What the agent side uses of the scheduling loop (loop.py's SchedulingLoop, which calls in from its thread)."""

    converter: Converter
    metrics: Metrics

    def clock(self) -> float: ...

    def start_binding(
        self, entry: PendingPod, gpu_index: str | None, evict: list[dict[str, Any]] | None = None
    ) -> None: ...

    def failed_scheduling(self, entry: PendingPod, message: str) -> None: ...


class AgentControl:
    def __init__(
        self, loop: AgentHost, fast: FastPath | None, warm: WarmPools | None, writer: PlaceholderWriter | None
    ) -> None:
        self.loop, self.fast, self.warm, self.writer = loop, fast, warm, writer
        self.entries: dict[str, PendingPod] = {}  # fast-path pods waiting (their events' bookkeeping)
        self._refilled = -1e9

    # The parts a pod or an event reaches only when they are configured (takes() and placeholder() say so).
    def _fast(self) -> FastPath:
        if self.fast is None:
            raise RuntimeError("agent control: the fast path is not configured")
        return self.fast

    def _warm(self) -> WarmPools:
        if self.warm is None:
            raise RuntimeError("agent control: warm pools are not configured")
        return self.warm

    def _writer(self) -> PlaceholderWriter:
        if self.writer is None:
            raise RuntimeError("agent control: warm pools are not configured (no placeholder writer)")
        return self.writer

    # -- which pods are ours to handle ----------------------------------------------------------------------
    def placeholder(self, pod: dict[str, Any]) -> bool:
        """One of this scheduler's warm-pool placeholders (kept out of the cluster state)."""
        return (
            self.warm is not None
            and is_placeholder(pod)
            and (pod.get("spec") or {}).get("schedulerName") == self.warm.scheduler_name
        )

    def takes(self, pod: dict[str, Any]) -> bool:
        """A pending pod for the fast path or the warm pools."""
        return self.placeholder(pod) or (self.fast is not None and self.fast.selects(pod))

    # -- pod events (the loop's thread) ---------------------------------------------------------------------
    def pending(self, key: str, pod: dict[str, Any], received: float) -> None:
        if self.placeholder(pod):
            self._warm().placeholder_seen(pod)
            return
        entry = self.entries.get(key)
        uid = pod["metadata"].get("uid", "")
        if entry is None or entry.uid != uid:
            entry = self.entries[key] = PendingPod(key, uid, pod, self.loop.clock(), kind="fast", received=received)
        entry.pod = pod
        self._fast().add(key, pod, entry.received)

    def bound(self, key: str, pod: dict[str, Any]) -> None:
        """The watch shows a pod bound (ours or anyone's)."""
        if self.placeholder(pod):
            self._warm().placeholder_seen(pod)
        self.left_queue(key)

    def gone(self, key: str) -> None:
        """A pod was deleted or is going."""
        self.left_queue(key)
        if self.warm is not None and key in self.warm.placeholders:
            self.warm.placeholder_gone(key)

    def left_queue(self, key: str) -> None:
        if self.fast is not None and key in self.fast:
            self.fast.remove(key)
        self.entries.pop(key, None)

    # -- cluster events -------------------------------------------------------------------------------------
    def cluster_event(self, event: str) -> None:
        if self.fast is not None:
            self.fast.queue.move(event, self.loop.clock())

    def node_event(self, added: bool, removed_name: str | None = None) -> None:
        if removed_name is not None:
            self.node_left(removed_name)
            return
        self.cluster_event(NODE_ADDED if added else NODE_UPDATED)

    def pod_freed(self) -> None:
        self.cluster_event(POD_DELETED)

    def shard_grew(self) -> None:
        self.cluster_event(SHARD_CHANGED)

    def node_left(self, node: str) -> None:
        """A node left the cluster or our shard: its placeholders go (they are made again elsewhere)."""
        if self.warm is not None:
            for pod in self.warm.node_gone(node):
                self._writer().delete(pod)

    def pool_event(self, key: str, obj: dict[str, Any] | None) -> None:
        if self.warm is None:
            return
        problem = self.warm.pool_changed(key, obj)
        if problem:
            log.error("%s; the pool is ignored until it is fixed", problem)

    # -- work -----------------------------------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        times = []
        if self.fast is not None and (t := self.fast.next_wakeup()) is not None:
            times.append(t)
        if self.warm is not None and self.warm.pools:
            times.append(self._refilled + REFILL_PERIOD)
        return min(times) if times else None

    def tick(self, in_cycle: bool = False) -> None:
        """Run what is due: a micro-batch; outside cycles also the warm pools' upkeep."""
        if self.fast is not None and self.fast.due():
            self.run_batch()
        # Refills are background work: not during a cycle, and not while agent pods wait for the fast path.
        busy = self.fast is not None and self.fast.queue.n_active > 0
        if self.warm is not None and not in_cycle and not busy and self.loop.clock() - self._refilled >= REFILL_PERIOD:
            self._refilled = self.loop.clock()
            self.refill()

    def run_batch(self) -> None:
        loop, fast = self.loop, self._fast()
        batch = fast.run(hit=self._hit if self.warm is not None else None)
        size = len(batch.placed) + len(batch.unschedulable) + len(batch.invalid)
        if size:
            loop.metrics.fast_batch.observe(size)
        now = loop.clock()
        for key, placement in batch.placed:
            assert placement.node is not None, "a placed pod has its node"
            gpus = placement.gpus.gpu_index_annotation() if placement.gpus is not None else None
            self._decided(key, placement.node, gpus, None, placement.volumes)
        for key, placement in batch.unschedulable:
            entry = self.entries.get(key)
            fast.queue.unschedulable(key, placement.reasons, now)
            loop.metrics.attempts.labels("unschedulable").inc()
            if entry is not None:
                loop.failed_scheduling(entry, placement.message)
        for key, why in batch.invalid:
            entry = self.entries.get(key)
            fast.queue.failed(key, now)
            loop.metrics.attempts.labels("error").inc()
            if entry is not None:
                loop.failed_scheduling(entry, f"vcore cannot read the pod: {why}")

    def _hit(self, key: str, pod: dict[str, Any]) -> bool:
        """A warm pool's placeholder for a session pod: placed and bound (after the placeholder's deletion)."""
        pool, warm = pool_of(pod), self._warm()
        misses = warm.misses
        hit = warm.hit(pod)
        if hit is None:
            if warm.misses > misses:
                self.loop.metrics.warm_misses.labels(pool).inc()
            return False
        self.loop.metrics.warm_hits.labels(pool).inc()
        assert hit.placement.node is not None, "a hit has its node"
        gpus = hit.placement.gpus.gpu_index_annotation() if hit.placement.gpus is not None else None
        self._decided(key, hit.placement.node, gpus, hit.evict)
        return True

    def _decided(
        self, key: str, node: str, gpus: str | None, evict: list[dict[str, Any]] | None, volumes: Any = None
    ) -> None:
        entry = self.entries.pop(key)
        self.loop.metrics.sample("fast_event_to_decision", time.perf_counter() - entry.received)
        self._fast().remove(key)
        entry.state, entry.node, entry.confirmed, entry.deleted = "binding", node, False, False
        entry.volumes = volumes  # VolumeBinding's PreBind, which start_binding runs first
        self.loop.converter.assumed(key, entry.pod)
        self.loop.start_binding(entry, gpus, evict)

    def binding_failed(self, entry: PendingPod, gone: bool) -> None:
        """A fast-path or placeholder binding failed (the loop already took the decision back)."""
        if entry.kind == "placeholder":
            if self.warm is not None:
                self.warm.binding_failed(entry.key)
            return
        if gone:
            return
        # Lost on the way (a conflict, the API server away): retried first, without backoff.
        self.entries[entry.key] = entry
        entry.state, entry.node = "active", ""
        fast = self._fast()
        fast.add(entry.key, entry.pod, entry.received)
        fast.queue.conflict(entry.key)

    def refill(self) -> None:
        """Warm pools: delete the surplus, create what is missing, place the pending placeholders."""
        warm, writer, loop = self._warm(), self._writer(), self.loop
        for pod in warm.surplus():
            writer.delete(pod)
        for pod in warm.to_create():
            writer.create(pod)
        if warm.pending() and self.fast is not None:
            for p, placement in warm.place(self.fast.scheduler):
                meta = p.pod["metadata"]
                entry = PendingPod(p.key, meta.get("uid", ""), p.pod, loop.clock(), kind="placeholder")
                assert placement.node is not None, "warm pools return placed placeholders"
                entry.state, entry.node = "binding", placement.node
                loop.start_binding(entry, None)
        for latency in warm.refill_latencies:
            loop.metrics.warm_refill.observe(latency)
            loop.metrics.sample("warm_refill", latency)
        warm.refill_latencies.clear()
        for key, spec in warm.pools.items():
            ready, _ = warm.counts(key)
            loop.metrics.warm_size.labels(key).set(spec.size)
            loop.metrics.warm_ready.labels(key).set(ready)

    def placeholder_node(self, key: str) -> str | None:
        """The node our placeholder `key` is bound to, or None (not ours, or not bound)."""
        p = self.warm.placeholders.get(key) if self.warm is not None else None
        return p.node if p is not None and p.bound else None

    def room(self, node: str) -> list[dict[str, Any]]:
        """Placeholders to delete before a real pod is bound to `node`."""
        return self.warm.room(node) if self.warm is not None else []
