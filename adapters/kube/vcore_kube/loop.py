"""The scheduling loop: one thread that owns the cache, vcore's state and the queue of pending pods.

Reflector threads and bind workers talk to it only through its inbox (inbox.py: fast-path pods in a lane of their
own, taken first). Between cycles it applies what arrived (object deltas, bind results); every cyclePeriod, while
it leads and every cache has synced, it asks vcore (batchcycle.py) to place the pending pods that are due, assumes each
placement, and hands it to the binder.

The queue follows kube-scheduler's: a pod that did not fit waits, unschedulable, until something that could
make it fit happens (a node added or changed, a pod's resources freed, the pod itself changed, a PodGroup, Queue
or PriorityClass changed) or five minutes pass; every failed attempt backs it off exponentially (1 s doubling to
10 s by default). A gang is tried when one of its pods is due; its pods share one fate, so they back off together.
After a cycle the loop hands each PodGroup's and Queue's status to the status writer (statusreport.py), evicts the
pods a preemption chose (and tells the preemptor's status which node it waits for); DefaultPreemption's victims
(pods without a gang, batchcycle.py) get their DisruptionTarget condition first, and lower-priority pods nominated
to that node lose the nomination. When no pod is due but a group's pods or the groups themselves changed (a pod
bound by someone else, finished or deleted; a PodGroup added), a cycle that tries no job runs at most once a second,
so that the statuses follow.

A failed binding is forgotten (the pod's resources are released in vcore) and retried after its backoff, unless
the pod is gone or the watch has meanwhile shown it bound; a 409 or a 404 is never retried blindly, so a pod bound
by someone else or deleted between decision and binding costs one request, not a storm. Each pod it places is a
PendingPod (pending.py) until its binding is confirmed.

Agent pods (the fast path) and warm-pool placeholders are handled by agentcontrol.py, which the loop calls for
their events, between its other work and between two jobs of a running cycle; sharding (shardcontrol.py) confines
every decision to the instance's nodes. Both sit below the loop and call back only what their AgentHost and
ShardHost protocols name. Every binding, whoever decided it, first deletes the placeholders its node can no longer
hold beside it.
"""

from __future__ import annotations

import calendar
import gc
import logging
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vcore_kube import binder as bind
from vcore_kube.batchcycle import BatchCycle, Outcome, Preempting
from vcore_kube.cache import Cache, Delta
from vcore_kube.config import Config
from vcore_kube.convert import Converter, is_terminating, node_name_of, scheduler_name_of
from vcore_kube.events import Recorder
from vcore_kube.inbox import Inbox
from vcore_kube.metrics import Metrics
from vcore_kube.pending import PendingPod
from vcore_kube.reflector import paused_gc
from vcore_kube.schedqueue import STORAGE_CHANGED
from vcore_kube.statusreport import StatusReport
from vcore_kube.volcanostatus import PODGROUP, QUEUE
from vcore_kube.volumehints import STORAGE_KINDS, rejecting_plugins, wakes
from vcore_kube.volumewriter import WriteResult

if TYPE_CHECKING:
    from vcore_kube.agentcontrol import AgentControl
    from vcore_kube.shardcontrol import ShardControl
    from vcore_kube.statuswriter import StatusWriter
    from vcore_kube.volumewriter import VolumeWriter

log = logging.getLogger(__name__)

QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
STATUS_REFRESH_SECONDS = 1.0  # at most one cycle a second only to bring statuses up to date (Volcano's period)


class SchedulingLoop(threading.Thread):
    def __init__(
        self,
        config: Config,
        converter: Converter,
        cycle: BatchCycle,
        binder: bind.Binder | None,
        recorder: Recorder,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.monotonic,
        statuses: StatusWriter | None = None,
    ) -> None:
        super().__init__(name="scheduling-loop", daemon=True)
        self.config, self.converter, self.cycle, self.binder = config, converter, cycle, binder
        self.recorder, self.metrics, self.clock = recorder, metrics, clock
        # PodGroup and Queue statuses and PodGroup events (None: none are written, as in tests of the loop alone).
        self.status = StatusReport(statuses, recorder, clock) if statuses is not None else None
        self._statuses_stale = False  # a group's pods or the groups changed since the last cycle
        self._last_cycle = float("-inf")
        self.inbox = Inbox()
        self._fast_keys: set[str] = set()  # pods whose messages take the fast lane (the Pod reflector's)
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
        self._nodes_seen = False  # the Node list (or a Node event) applied: HyperNode members can be matched
        self._tree_refused = False  # the HyperNodes as they stand make no tree vcore can use (logged)
        self.agents: AgentControl | None = None  # the fast path and warm pools (process.py wires them)
        self.shards: ShardControl | None = None  # sharding
        self._deferred: deque = deque()  # what arrived during a cycle and waits for its end
        self._deferred_keys: set[str] = set()  # pods with a deferred event (their later events wait too)
        self._in_flight_nodes: Counter = Counter()  # node -> our bindings in flight to it
        self.agent_binder: bind.Binder | None = None  # fast-path pods' own (None: the binder)
        # VolumeBinding's PreBind: its writes (process.py wires the writer) and the pods waiting for their claims.
        self.volume_writer: VolumeWriter | None = None
        self.volume_waits: dict[str, PendingPod] = {}

    # -- inputs (any thread) -------------------------------------------------------------------------------
    def replace(self, kind: str, items: list[dict[str, Any]], resource_version: str) -> None:
        if kind == "Pod" and self.agents is not None:
            self._fast_keys = {_pod_key(p) for p in items if self._fast_pod(p)}
        self.inbox.put(("replace", kind, items), barrier=kind == "Pod")

    def event(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        self.inbox.put(
            ("event", kind, event_type, obj, time.perf_counter()),
            fast=kind == "Pod" and self._fast_lane(event_type, obj),
        )

    def bind_done(self, result: bind.BindResult) -> None:
        self.inbox.put(("bound", result))

    def volumes_written(self, result: WriteResult) -> None:
        self.inbox.put(("volumes-written", result))

    def fast_bind_done(self, result: bind.BindResult) -> None:
        """A binding of the agent binder (fast-path pods): in the lane of their pods' events."""
        self.inbox.put(("bound", result), fast=True)

    def _fast_pod(self, pod: dict[str, Any]) -> bool:
        return self.agents is not None and self.agents.fast is not None and self.agents.fast.selects(pod)

    def _fast_lane(self, event_type: str, pod: dict[str, Any]) -> bool:
        """Whether a pod's event goes in the fast lane: decided once, when the pod is first seen, so that one
        pod's events all go in one lane (a later change of its annotations does not move them)."""
        if self.agents is None:
            return False
        key = _pod_key(pod)
        if key in self._fast_keys:
            if event_type == "DELETED":
                self._fast_keys.discard(key)
            return True
        if event_type == "ADDED" and self._fast_pod(pod):
            self._fast_keys.add(key)
            return True
        return False

    # -- the thread ---------------------------------------------------------------------------------------
    def run(self) -> None:
        period = self.config.cycle_period
        next_cycle = self.clock()
        while not self.stop_event.is_set():
            self.heartbeat = self.clock()
            try:
                self._replay_deferred()
                wake = min(t for t in (next_cycle, self._next_wakeup()) if t is not None)
                self._handle(self.inbox.get(timeout=max(0.0, min(wake - self.clock(), 1.0))))
                while self.clock() < next_cycle:  # drain what else arrived, but never starve the cycle
                    self._handle(self.inbox.get_nowait())
                    if self.agents is not None and self.agents.fast is not None and self.agents.fast.due():
                        break  # a micro-batch waits for nothing else
            except queue.Empty:
                pass
            except Exception:
                log.exception("applying a change failed")
            try:
                if self.leading.is_set() and self.synced():
                    self._tick()
            except Exception:
                log.exception("fast path or shard upkeep failed")
            if self.clock() >= next_cycle:
                next_cycle = self.clock() + period
                try:
                    if self.leading.is_set() and self.synced():
                        if not self._announced:
                            self._announced = True
                            log.info(
                                "caches synced: %d nodes, %d pods (%d pending); scheduling",
                                self.cache.count("Node"),
                                self.cache.count("Pod"),
                                len(self.pending),
                            )
                        self.schedule_once()
                    self._update_gauges()
                except Exception:  # a bug must not stop scheduling for good: log it, try again next cycle
                    log.exception("scheduling cycle failed")

    def drain(self) -> None:
        """Apply everything queued in the inbox (tests and shutdown)."""
        self._replay_deferred()
        try:
            while True:
                self._handle(self.inbox.get_nowait())
        except queue.Empty:
            pass

    def _next_wakeup(self) -> float | None:
        times = [
            t
            for t in (
                self.agents.next_wakeup() if self.agents is not None else None,
                self.shards.next_wakeup() if self.shards is not None else None,
                self._volumes_deadline(),
            )
            if t is not None
        ]
        return min(times) if times else None

    def _volumes_deadline(self) -> float | None:
        deadlines = [e.volumes_deadline for e in self.volume_waits.values() if e.written is not None]
        return min(deadlines) if deadlines else None

    def _tick(self) -> None:
        if self.volume_waits:
            self._check_volume_waits(deadlines_only=True)
        if self.shards is not None:
            self.shards.tick()
        if self.agents is not None:
            self.agents.tick()

    def _interleave(self) -> None:
        """Between two jobs of a running cycle: fast-path arrivals and bindings, and a due micro-batch; the rest
        waits for the cycle's end (the cycle's pods, groups and nodes must not change under it)."""
        self.heartbeat = self.clock()
        try:
            while True:
                msg = self.inbox.get_fast_nowait()  # the batch side's messages stay queued in order
                if self._fast_message(msg):
                    self._handle(msg)
                else:
                    self._deferred.append(msg)
                    if msg[0] == "event" and msg[1] == "Pod":
                        self._deferred_keys.add(_pod_key(msg[3]))
        except queue.Empty:
            pass
        self._agent_control().tick(in_cycle=True)

    # The parts a message or a pod reaches only when they are configured (process.py wires them).
    def _agent_control(self) -> AgentControl:
        if self.agents is None:
            raise RuntimeError("scheduling loop: the fast path and warm pools are not configured")
        return self.agents

    def _shard_control(self) -> ShardControl:
        if self.shards is None:
            raise RuntimeError("scheduling loop: sharding is not configured")
        return self.shards

    def _interleave_at(self, i: int) -> None:
        """In a long walk over a cycle's outcome (bindings, statuses): the fast path's turn every 256 items."""
        if self.agents is not None and i % 256 == 255:
            self._interleave()

    def _fast_message(self, msg: tuple) -> bool:
        if msg[0] == "bound":
            entry = self.in_flight.get(msg[1].key)
            return entry is not None and entry.kind == "fast"
        if msg[0] != "event" or msg[1] != "Pod" or msg[2] == "DELETED":
            return False
        pod = msg[3]
        key = _pod_key(pod)
        return (
            not node_name_of(pod)
            and not is_terminating(pod)
            and key not in self._deferred_keys
            and self.converter.bound_uid(key) is None
            and self._fast_pod(pod)
        )

    def _replay_deferred(self) -> None:
        self._deferred_keys.clear()
        while self._deferred:
            self._handle(self._deferred.popleft())

    def _handle(self, msg: tuple) -> None:
        if msg[0] == "event":
            _, kind, event_type, obj, received = msg
            self.metrics.watch_events.labels(kind).inc()
            delta = self.cache.apply(kind, event_type, obj)
            if delta is not None:
                self._on_delta(delta, received=received)
        elif msg[0] == "replace":
            _, kind, items = msg
            with paused_gc():
                for delta in self.cache.replace(kind, items):
                    self._on_delta(delta, relist=True)
                if kind == "Node":
                    self._nodes_seen = True
                if kind == "HyperNode" or (kind == "Node" and self.cache.count("HyperNode")):
                    self._hypernodes_changed()
            # The cache's objects live until they change: keep later collections from walking them all again.
            gc.freeze()
        elif msg[0] == "bound":
            self._on_bound(msg[1])
        elif msg[0] == "volumes-written":
            self._on_volumes_written(msg[1])
        elif msg[0] == "placeholder-created":
            warm = self._agent_control().warm
            if warm is None:  # only warm pools create placeholders
                raise RuntimeError("scheduling loop: a placeholder was created without warm pools")
            warm.created(msg[1])
        elif msg[0] == "shard-published":
            self._shard_control().published(msg[1])

    # -- deltas -------------------------------------------------------------------------------------------
    def _on_delta(self, d: Delta, relist: bool = False, received: float = 0.0) -> None:
        if d.kind == "Node":
            self._nodes_seen = True
            if self.converter.node_changed(d.old, d.new):
                self._wake_unschedulable()
                if self.agents is not None:
                    self.agents.node_event(added=d.old is None)
            if d.new is None and self.agents is not None:
                self.agents.node_left(d.key)
            if not relist and self._tree_refused and _may_join_a_hypernode(d):
                self._hypernodes_changed()  # a new or relabeled node may settle what made vcore refuse the tree
        elif d.kind == "Pod":
            self._on_pod(d, received or time.perf_counter())
        elif d.kind == "NodeShard":
            if self.shards is not None:
                self.shards.shard_event(d.key, d.new)
        elif d.kind == "WarmPool":
            if self.agents is not None:
                self.agents.pool_event(d.key, d.new)
        elif d.kind == "PodDisruptionBudget":  # what preemption spares: nothing waiting fits better for it
            self.converter.disruption_budget(d.old, d.new)
        elif d.kind == "ResourceQuota":  # what enqueue holds PodGroups to: room may have opened for one
            if self.converter.resource_quota(d.old, d.new):
                self._wake_unschedulable()
                self._statuses_stale = True  # a PodGroup without pods yet waits in enqueue, with no pod to wake
        elif d.kind == "HyperNode":
            if not relist:  # a relist installs the whole tree once it is applied
                self._hypernodes_changed()
        elif d.kind in self.converter.SELECTING_KINDS:
            if self.converter.selecting_object(d.kind, d.old, d.new):
                self._wake_unschedulable()
        elif d.kind in STORAGE_KINDS:
            self._on_storage(d)
        else:
            if self.status is not None and d.kind in (PODGROUP, QUEUE):
                self.status.observed(d.kind, d.key, d.new)
            if self.converter.volcano_object(d.kind, d.old, d.new):
                self._wake_unschedulable()
                self._statuses_stale = True

    def _on_storage(self, d: Delta) -> None:
        """A storage object changed: vcore's state follows; the pods the volume plugins rejected that the change
        may help wake (their plugins' queueing hints); the pods waiting for their claims look again."""
        self.converter.storage_object(d.kind, d.old, d.new)
        for entry in self.pending.values():
            if (
                entry.state == "unschedulable"
                and entry.rejected_by
                and wakes(entry.rejected_by, d.kind, entry.pod, d.old, d.new)
            ):
                entry.state = "active"  # its backoff (not_before) still holds
        if self.agents is not None:
            self.agents.cluster_event(STORAGE_CHANGED)
        if self.volume_waits and d.kind in ("PersistentVolume", "PersistentVolumeClaim"):
            self._check_volume_waits()

    def _hypernodes_changed(self) -> None:
        # The tree as a whole, matched against the nodes: members may arrive before or after the HyperNodes that
        # hold them, and at start the HyperNode list may come before the Node list (the tree waits for it rather
        # than being built against no nodes and again when they come).
        # Once installed, the tree's membership follows the nodes (vcore matches a new or relabeled node itself).
        if not self._nodes_seen:
            return
        self._tree_refused = not self.converter.replace_hypernodes([obj for _, obj in self.cache.items("HyperNode")])
        self._wake_unschedulable()

    def _on_pod(self, d: Delta, received: float = 0.0) -> None:
        key, pod = d.key, d.new
        if _changes_a_group(d):
            self._statuses_stale = True
        flying = self.in_flight.get(key)
        agents = self.agents
        if pod is None or (not node_name_of(pod) and is_terminating(pod)):  # deleted, finished or going
            if flying is not None:
                flying.deleted = True
            waiting = self.volume_waits.get(key)
            if waiting is not None:
                waiting.deleted = True  # its PreBind fails with "pod does not exist any more"
            entry = self.pending.pop(key, None)
            if entry is not None:
                self.cycle.remove(key)
            if agents is not None:
                agents.gone(key)
            if self.shards is not None:
                self.shards.pod_seen(key, None)
            if pod is None and self.converter.pod_released(key):
                self._wake_unschedulable()
                if agents is not None:
                    agents.pod_freed()
            return
        if node_name_of(pod):  # bound: by our binding (confirmation) or by anyone else
            if flying is not None:
                flying.confirmed = True
            if self.volume_waits.pop(key, None) is not None:  # someone else bound it while its claims waited
                self.converter.unassume(key)
            if self.pending.pop(key, None) is not None:
                self.cycle.remove(key)
            if agents is not None:
                agents.bound(key, pod)
            # Our placeholders stay out of vcore's state. A pod someone else bound, or whose labels changed, may
            # let a waiting pod in (pod affinity) or keep one out: the waiting ones get another look.
            if (agents is None or not agents.placeholder(pod)) and self.converter.pod_bound(pod) and flying is None:
                self._wake_unschedulable()
            if self.shards is not None:
                self.shards.pod_seen(key, node_name_of(pod))
            return
        takes = agents is not None and agents.takes(pod)
        if not takes and scheduler_name_of(pod) != self.config.scheduler_name:
            return
        uid = pod["metadata"].get("uid", "")
        if flying is not None and flying.uid == uid:
            flying.pod = pod  # e.g. our own gpu-index annotation: the binding is under way
            return
        waiting = self.volume_waits.get(key)
        if waiting is not None and waiting.uid == uid:
            waiting.pod = pod  # its claims are being bound
            return
        assumed = self.converter.bound_uid(key)
        if assumed == uid:
            return  # an older, unbound version arriving after our binding succeeded: the pod is bound
        if assumed is not None:  # a pod of the same name replaced the one we bound: that one is gone
            self.converter.pod_released(key)
        if takes:
            self._agent_control().pending(key, pod, received)
            return
        entry = self.pending.get(key)
        if entry is not None and entry.uid == uid:
            entry.pod = pod
            if _scheduling_inputs(d.old) != _scheduling_inputs(pod):  # status-only changes wake nothing
                self._admit(entry)
            elif _nominated_node(d.old) != _nominated_node(pod) and entry.state != "invalid":
                self.cycle.update(key, pod)  # preemption reads the nomination; it wakes nothing
            return
        entry = PendingPod(key, uid, pod, self.clock())
        self.pending[key] = entry
        self._admit(entry)

    def _admit(self, entry: PendingPod) -> None:
        error = self.cycle.add(entry.key, entry.pod)
        if error is None and (entry.pod.get("spec") or {}).get("schedulingGates"):
            # kube-scheduler's SchedulingGates: not attempted until the gates are gone (an update admits it again)
            entry.state = "gated"
            self.recorder.gated(entry.pod)
        elif error is None:
            entry.state = "active"
        else:
            entry.state = "invalid"
            self.metrics.attempts.labels("error").inc()
            self.failed_scheduling(entry, f"vcore cannot read the pod: {error}")

    def _wake_unschedulable(self) -> None:
        for entry in self.pending.values():
            if entry.state == "unschedulable":
                entry.state = "active"  # its backoff (not_before) still holds

    # -- what sharding and the agent side ask of the loop ---------------------------------------------------
    def schedulers(self) -> list:
        """Every vcore scheduler deciding for this process (the scope applies to all of them)."""
        out = [self.cycle.scheduler]
        if self.agents is not None and self.agents.fast is not None:
            out.append(self.agents.fast.scheduler)
        return out

    def in_flight_on(self, node: str) -> int:
        return self._in_flight_nodes[node]

    def accounted_node(self, key: str) -> str | None:
        """Where this process's state has pod `key`: vcore's cluster, or the warm pools' ledger for our
        placeholders (which stay out of vcore's cluster)."""
        node = self.converter.node_of(key)
        if node is None and self.agents is not None:
            node = self.agents.placeholder_node(key)
        return node

    def failed_scheduling(self, entry: PendingPod, message: str) -> None:
        """FailedScheduling, at most once a minute per pod unless the reason changed."""
        now = self.clock()
        if message != entry.event_message or now - entry.event_at >= 60.0:
            entry.event_message, entry.event_at = message, now
            self.recorder.failed_scheduling(entry.pod, message)

    def node_left_scope(self, node: str) -> None:
        if self.agents is not None:
            self.agents.node_left(node)

    def scope_grew(self) -> None:
        self._wake_unschedulable()
        if self.agents is not None:
            self.agents.shard_grew()

    def start_binding(
        self, entry: PendingPod, gpu_index: str | None, evict: list[dict[str, Any]] | None = None
    ) -> None:
        """Hand a decided pod (entry.node set, assumed in vcore unless a placeholder) to the binder; a real pod
        first has the placeholders its node can no longer hold deleted, and its claims bound (VolumeBinding's
        PreBind: entry.volumes) before it is bound."""
        if entry.volumes is not None and not entry.volumes_bound:
            self._prebind(entry, gpu_index, evict)
            return
        if entry.kind != "placeholder" and self.agents is not None:
            evict = (evict or []) + self.agents.room(entry.node)
        self.in_flight[entry.key] = entry
        self._in_flight_nodes[entry.node] += 1
        # Fast-path pods bind through workers of their own; placeholders (background work) with the batch's.
        binder = self.agent_binder if entry.kind == "fast" and self.agent_binder is not None else self.binder
        if binder is None or not binder.submit(entry.pod, entry.node, gpu_index, evict or ()):
            self._binding_finished(entry)
            if entry.kind == "batch":
                self._requeue(entry, forget=True, backoff=False)
            else:
                if entry.kind == "fast":
                    self.cycle.forget(entry.key)
                self._agent_control().binding_failed(entry, gone=False)

    # -- VolumeBinding's PreBind ------------------------------------------------------------------------------
    def _prebind(self, entry: PendingPod, gpu_index: str | None, evict: list[dict] | None) -> None:
        """Write what Reserve assumed (the PVs' claimRefs, the claims' selected node), then wait until the PV
        controller has bound every claim, as kube-scheduler's PreBind does; the pod is bound after."""
        entry.then_bind = (gpu_index, evict)
        entry.written, entry.volumes_bound = None, False
        self.volume_waits[entry.key] = entry
        try:
            writes = self.converter.cluster.volume_writes(entry.volumes)
        except (KeyError, ValueError) as e:
            self._prebind_failed(entry, str(e.args[0] if e.args else e))
            return
        if self.volume_writer is None or not self.volume_writer.submit(entry.key, entry.uid, writes):
            self._prebind_failed(entry, "the volume writer is shut down", requeue_now=True)

    def _on_volumes_written(self, r: WriteResult) -> None:
        entry = self.volume_waits.get(r.key)
        if entry is None or entry.uid != r.uid:
            return
        if r.error:
            self._prebind_failed(entry, r.error)
            return
        entry.written = dict(r.written)
        entry.volumes_deadline = self.clock() + self.cycle.bind_timeout_seconds
        self._check_volume_waits(only=entry.key)

    def _check_volume_waits(self, only: str | None = None, deadlines_only: bool = False) -> None:
        """Look at the pods whose claims are being bound (all, or one): bind the pod once its claims are bound,
        give up when a claim's binding failed, the pod went, or bindTimeoutSeconds passed."""
        now = self.clock()
        for key, entry in list(self.volume_waits.items()):
            if (only is not None and key != only) or entry.written is None:
                continue  # its writes are still under way
            if entry.deleted:
                name = entry.pod["metadata"]["name"]
                self._prebind_failed(
                    entry, f'binding volumes: pod does not exist any more: pod "{name}" not found', gone=True
                )
                continue
            if deadlines_only and now < entry.volumes_deadline:
                continue
            done, error = self.converter.cluster.volume_binds_status(entry.volumes, entry.written)
            if error is not None:
                self._prebind_failed(entry, f"binding volumes: {error}")
            elif done:
                del self.volume_waits[key]
                entry.volumes_bound = True
                gpu_index, evict = entry.then_bind
                self.start_binding(entry, gpu_index, evict)
            elif now >= entry.volumes_deadline:
                self._prebind_failed(entry, "binding volumes: context deadline exceeded")

    def _prebind_failed(self, entry: PendingPod, error: str, *, gone: bool = False, requeue_now: bool = False) -> None:
        """PreBind failed: the assumption is undone (its PVs and claims free again in vcore), the pod is told why
        and tried again after its backoff, as kube-scheduler does after a failed binding cycle."""
        self.volume_waits.pop(entry.key, None)
        self.metrics.bind_errors.labels("prebind").inc()
        self.metrics.attempts.labels("error").inc()
        if not gone:
            self.failed_scheduling(entry, f'running PreBind plugin "VolumeBinding": {error}')
        if entry.kind == "batch":
            if gone:
                if self.converter.node_of(entry.key) == entry.node:
                    self.cycle.forget(entry.key)
                return
            self._requeue(entry, forget=True, backoff=not requeue_now)
            return
        if self.converter.node_of(entry.key) == entry.node:
            self.cycle.forget(entry.key)
        if self.agents is not None:
            self.agents.binding_failed(entry, gone=gone)

    def _binding_finished(self, entry: PendingPod) -> None:
        self.in_flight.pop(entry.key, None)
        self._in_flight_nodes[entry.node] -= 1
        if self._in_flight_nodes[entry.node] <= 0:
            del self._in_flight_nodes[entry.node]
        if self.shards is not None:
            self.shards.binding_done(entry.node)

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
        if not due and not (
            self._statuses_stale
            and self.status is not None
            and self.clock() - self._last_cycle >= STATUS_REFRESH_SECONDS
        ):
            return 0
        self._statuses_stale, self._last_cycle = False, self.clock()
        started = time.perf_counter()
        outcome = self.cycle.run(due, between_jobs=self._interleave if self.agents is not None else None)
        self.metrics.cycle_duration.observe(time.perf_counter() - started)
        self.metrics.sample("cycle", time.perf_counter() - started)
        self.cycles += 1
        now = self.clock()
        for i, b in enumerate(outcome.bindings):
            self._interleave_at(i)
            entry = self.pending.pop(b.key, None)
            if entry is None:  # vcore placed a pod this loop no longer waits for: take the decision back
                self.cycle.forget(b.key)
                continue
            entry.state, entry.node, entry.confirmed, entry.deleted = "binding", b.node, False, False
            entry.volumes, entry.volumes_bound = b.volumes, False
            self.converter.assumed(b.key, entry.pod)
            self.start_binding(entry, b.gpu_index)
        for key, (reasons, message) in outcome.unschedulable.items():
            entry = self.pending.get(key)
            if entry is None:
                continue
            self.metrics.attempts.labels("unschedulable").inc()
            entry.state, entry.unschedulable_since = "unschedulable", now
            entry.rejected_by = rejecting_plugins(reasons)
            self._back_off(entry)
            self.failed_scheduling(entry, message)
        self._write_statuses(outcome)
        for e in outcome.evictions:
            victim = self.cache.get("Pod", e.victim)
            if victim is not None:
                self.metrics.evictions.labels(e.reason).inc()
                self.recorder.evict(victim, e.preemptor, e.node, e.reason, self._podgroup_of(victim))
        for e in outcome.evictions:
            waiting = self.pending.get(e.preemptor)
            if waiting is not None:
                self.recorder.nominate(waiting.pod, e.node)
        for p in outcome.preemptions:
            self._carry_out(p)
        return len(outcome.bindings)

    def _carry_out(self, p: Preempting) -> None:
        """DefaultPreemption's decision, as kube-scheduler's prepareCandidate makes it: the victims go (condition,
        deletion, event), lower-priority pods nominated to the node lose the nomination, the preemptor gets it. The
        preemptor is tried again when a victim's deletion frees its resources."""
        waiting = self.pending.get(p.key)
        if waiting is None:
            return
        for key in p.victims:
            victim = self.cache.get("Pod", key)
            if victim is not None:
                self.metrics.evictions.labels("preempt").inc()
                self.recorder.preempt(victim, waiting.pod, p.node)
        for key in p.denominated:
            other = self.pending.get(key)
            if other is not None:
                self.recorder.nominate(other.pod, None)
        self.recorder.nominate(waiting.pod, p.node)

    def _write_statuses(self, outcome: Outcome) -> None:
        """Each PodGroup's and Queue's status, to the status writer where the cycle changed it."""
        if self.status is not None:
            self.status.cycle_done(outcome, self.cache, self._interleave_at)

    def _podgroup_of(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        meta = pod["metadata"]
        group = (meta.get("annotations") or {}).get(GROUP_ANNOTATION)
        return self.cache.get(PODGROUP, f"{meta.get('namespace', '')}/{group}") if group else None

    def _back_off(self, entry: PendingPod) -> None:
        entry.attempts += 1
        delay = min(
            self.config.pod_initial_backoff_seconds * 2 ** (entry.attempts - 1), self.config.pod_max_backoff_seconds
        )
        entry.not_before = self.clock() + delay

    # -- bind results -------------------------------------------------------------------------------------
    def _on_bound(self, r: bind.BindResult) -> None:
        entry = self.in_flight.get(r.key)
        if entry is None or entry.uid != r.uid:
            return
        self._binding_finished(entry)
        if entry.kind != "batch":
            self._agent_bound(entry, r)
            return
        if r.outcome == bind.OK:
            self._scheduled(entry, r)
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

    def _scheduled(self, entry: PendingPod, r: bind.BindResult) -> None:
        self.metrics.attempts.labels("scheduled").inc()
        self.metrics.queue_to_bind.observe(self.clock() - entry.first_seen)
        created = _creation_epoch(entry.pod)
        if created is not None:
            self.metrics.creation_to_bind.observe(max(0.0, r.finished - created))
        self.recorder.scheduled(entry.pod, r.node)

    def _agent_bound(self, entry: PendingPod, r: bind.BindResult) -> None:
        """A fast-path pod's or a placeholder's binding finished."""
        if r.outcome == bind.OK:
            if entry.kind == "fast":
                self.metrics.fast_event_to_bind.observe(r.requested - entry.received)
                self.metrics.sample("fast_event_to_bind_request", r.requested - entry.received)
                self._scheduled(entry, r)
            return
        self.metrics.bind_errors.labels(r.reason or r.outcome).inc()
        if entry.confirmed:
            return
        gone = entry.deleted or r.outcome == bind.NOT_FOUND
        if entry.kind == "fast" and self.converter.node_of(r.key) == entry.node:
            self.cycle.forget(r.key)
        self._agent_control().binding_failed(entry, gone=gone)

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

    def _queue_of(self, pod: dict[str, Any]) -> str:
        meta = pod["metadata"]
        pg = self._podgroup_of(pod)
        if pg is not None:
            return (pg.get("spec") or {}).get("queue") or "default"
        return (meta.get("annotations") or {}).get(QUEUE_ANNOTATION) or "default"


def _scheduling_inputs(pod: dict[str, Any] | None) -> tuple:
    if pod is None:
        return ()
    meta = pod.get("metadata") or {}
    return (meta.get("labels"), meta.get("annotations"), pod.get("spec"))


def _nominated_node(pod: dict[str, Any] | None) -> str | None:
    return ((pod or {}).get("status") or {}).get("nominatedNodeName")


def _may_join_a_hypernode(d: Delta) -> bool:
    """A node added, or relabeled: a HyperNode member (by name or labels) may match it now."""
    if d.new is None:
        return False
    labels = ((d.new.get("metadata") or {}).get("labels")) or {}
    return d.old is None or labels != (((d.old.get("metadata") or {}).get("labels")) or {})


def _changes_a_group(d: Delta) -> bool:
    """Whether a pod delta can change its PodGroup's status: a pod of a group added, deleted, bound, finished or
    going."""
    pod = d.new if d.new is not None else d.old
    if pod is None or not ((pod.get("metadata") or {}).get("annotations") or {}).get(GROUP_ANNOTATION):
        return False
    if d.old is None or d.new is None:
        return True
    return _group_standing(d.old) != _group_standing(d.new)


def _group_standing(pod: dict[str, Any]) -> tuple:
    return (
        node_name_of(pod),
        (pod.get("status") or {}).get("phase"),
        (pod.get("metadata") or {}).get("deletionTimestamp"),
    )


def _creation_epoch(pod: dict[str, Any]) -> float | None:
    stamp = pod["metadata"].get("creationTimestamp")
    if not stamp:
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _pod_key(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
