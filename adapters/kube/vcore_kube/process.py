"""One vcore-scheduler process: reflectors, the scheduling loop, the binder, the event writer, the status writer,
leader election and the health/metrics endpoint, started and stopped in the right order.

Standby replicas keep their caches (and vcore's state) warm and schedule nothing, so a takeover is one lease
period, not a relist. Losing the lease stops the process (exit status 1), as kube-scheduler does: a replica that
may have missed writes must not go on deciding. SIGTERM stops it gracefully: no new decisions, the bindings
already sent finish, the statuses due are written, the Lease is released for the standby, queued events are
written.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from typing import TYPE_CHECKING

from kubernetes import client

from vcore_kube import nodeshard, warmpool
from vcore_kube.agentcontrol import AgentControl, PlaceholderWriter
from vcore_kube.batchcycle import BatchCycle
from vcore_kube.binder import Binder
from vcore_kube.config import Config
from vcore_kube.convert import Converter
from vcore_kube.events import Recorder
from vcore_kube.fastpath import FastPath
from vcore_kube.kubeclient import load_api
from vcore_kube.leader import LeaderElector
from vcore_kube.loop import SchedulingLoop
from vcore_kube.metrics import HealthServer, Metrics
from vcore_kube.reflector import RESOURCES, Reflector, Resource
from vcore_kube.schedqueue import SchedulingQueue
from vcore_kube.shardcontrol import ShardControl
from vcore_kube.shardwriter import ShardWriter
from vcore_kube.statuswriter import WORKERS as STATUS_WORKERS, StatusWriter
from vcore_kube.volcanostatus import KINDS as STATUS_KINDS
from vcore_kube.volumewriter import VolumeWriter
from vcore_kube.warmpool import WarmPools

if TYPE_CHECKING:
    from types import FrameType


WARMPOOLS = Resource(
    "WarmPool",
    lambda c: client.CustomObjectsApi(c).list_cluster_custom_object,
    (warmpool.GROUP, warmpool.VERSION, warmpool.PLURAL),
    optional=True,
)

log = logging.getLogger(__name__)


class SchedulerProcess:
    def __init__(self, config: Config, kubeconfig: str | None = None, *, identity: str | None = None) -> None:
        self.config = config
        self.identity = identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        self.metrics = Metrics()
        self.converter = Converter()
        self.cycle = BatchCycle(self.converter, config.profile, config.cycle, config.seed)  # validates profile, cycle
        # Writes (bindings, events, the lease) and watches use separate pools: a watch holds its connection for
        # minutes and must never make a binding wait for a socket.
        agents = config.fast_path.bind_concurrency if config.fast_path.enabled else 0
        self.api = load_api(kubeconfig, pool_size=config.bind_concurrency + agents + STATUS_WORKERS + 4)
        self.watch_api = load_api(kubeconfig, pool_size=len(RESOURCES) + 2)
        self.recorder = Recorder(
            self.api, config.scheduler_name, enabled=config.emit_events, dropped=self.metrics.api_writes_dropped.inc
        )
        # PodGroup and Queue statuses: written by threads of their own, never behind events nor dropped.
        self.statuses = StatusWriter(self.api, STATUS_KINDS, metrics=self.metrics)
        self.loop = SchedulingLoop(
            config, self.converter, self.cycle, None, self.recorder, self.metrics, statuses=self.statuses
        )
        self.binder = Binder(self.api, config.bind_concurrency, self.loop.bind_done)
        self.loop.binder = self.binder
        # VolumeBinding's PreBind writes (PVs and claims), beside the binder: a pod waiting for its claims holds
        # no binding worker.
        self.volume_writer = VolumeWriter(self.api, config.bind_concurrency, self.loop.volumes_written)
        self.loop.volume_writer = self.volume_writer
        self.stop_event = threading.Event()  # reflectors and the elector
        self.finished = threading.Event()  # the process should exit (signal, or leadership lost)
        self.exit_code = 0
        resources = list(RESOURCES)
        self.writers: list[PlaceholderWriter | ShardWriter] = []
        self.agent_binder: Binder | None = None
        self._wire_agents(config, resources)
        self._wire_sharding(config, resources)
        self.reflectors = [
            Reflector(
                self.watch_api.api_client,
                r,
                self.loop,
                self.stop_event,
                on_relist=lambda kind, why: self.metrics.relists.labels(kind, why).inc(),
            )
            for r in resources
        ]
        self.loop.synced = self.synced
        le = config.leader_election
        self.elector = (
            LeaderElector(
                self.api,
                le.resource_namespace,
                le.resource_name,
                self.identity,
                lease_duration=le.lease_duration,
                renew_deadline=le.renew_deadline,
                retry_period=le.retry_period,
                on_started=self._lead,
                on_stopped=self._lost,
                stop=self.stop_event,
            )
            if le.leader_elect
            else None
        )
        self.health = (
            HealthServer(config.metrics_address, self.metrics, self.healthy, self.synced)
            if config.metrics_address
            else None
        )

    def _wire_agents(self, config: Config, resources: list) -> None:
        """The fast path and, through it, warm pools (vcore.io WarmPool objects)."""
        if not config.fast_path.enabled:
            return
        loop, cluster = self.loop, self.converter.cluster
        queue = SchedulingQueue(
            config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds, config.pod_max_in_unschedulable_seconds
        )
        fast = FastPath(
            config.fast_path, config.scheduler_name, cluster, config.profile, queue, seed=config.seed, clock=loop.clock
        )
        warm = writer = None
        if config.warm_pools.enabled:
            names = {config.fast_path.scheduler_name} - {""}
            profile = config.fast_path.profile if config.fast_path.profile is not None else config.profile
            warm = WarmPools(
                config.warm_pools, config.scheduler_name, names, cluster, profile, seed=config.seed, clock=loop.clock
            )
            writer = PlaceholderWriter(self.api, lambda pool: loop.inbox.put(("placeholder-created", pool)))
            self.writers.append(writer)
            resources.append(WARMPOOLS)
        loop.agents = AgentControl(loop, fast, warm, writer)
        # Fast-path pods bind through workers of their own: neither a batch cycle's bindings nor a warm pool's
        # refill (placeholders bind with the batch) ever queue ahead of them.
        self.agent_binder = loop.agent_binder = Binder(self.api, config.fast_path.bind_concurrency, loop.fast_bind_done)
        if config.fast_path.scheduler_name:
            self.recorder.reports_for = frozenset({config.fast_path.scheduler_name})
        # The loop hands the GIL to binders and reflectors at least this often: a micro-batch waits less for it.
        sys.setswitchinterval(0.001)

    def _wire_sharding(self, config: Config, resources: list) -> None:
        sharding = config.sharding
        if sharding.mode == "none":
            return
        writer = ShardWriter(self.api, sharding.shard, lambda result: self.loop.inbox.put(("shard-published", result)))
        self.writers.append(writer)
        self.loop.shards = ShardControl(self.loop, sharding.shard, sharding.mode == "soft", writer)
        resources.append(nodeshard.RESOURCE)

    def synced(self) -> bool:
        return all(r.synced.is_set() for r in self.reflectors)

    def healthy(self) -> bool:
        stale = max(10.0, 20 * self.config.cycle_period)
        return self.loop.is_alive() and time.monotonic() - self.loop.heartbeat < stale

    def start(self) -> None:
        if self.health:
            self.health.start()
        self.statuses.start()
        for writer in self.writers:
            writer.start()
        self.loop.start()
        for r in self.reflectors:
            r.start()
        if self.elector:
            self.elector.start()
        else:
            self._lead()

    def _lead(self) -> None:
        self.metrics.leader.set(1)
        self.loop.leading.set()

    def _lost(self) -> None:
        self.metrics.leader.set(0)
        self.loop.leading.clear()
        self.exit_code = 1
        self.finished.set()

    def shutdown(self) -> None:
        """Stop deciding, let the bindings in flight finish, hand over the Lease, write queued events."""
        started = time.monotonic()
        self.loop.leading.clear()
        self.loop.stop_event.set()
        self.loop.join(timeout=30)
        self.binder.shutdown()
        self.volume_writer.shutdown()
        if self.agent_binder is not None:
            self.agent_binder.shutdown()
        for writer in self.writers:
            writer.stop()
        log.info("shutdown: bindings in flight finished after %.2f s", time.monotonic() - started)
        self.statuses.close()
        if self.loop.shards is not None:
            self.loop.shards.release_all(self.api)
        self.stop_event.set()
        if self.elector:
            self.elector.release()
        for r in self.reflectors:
            r.close()
        self.recorder.close()
        if self.health:
            self.health.stop()
        self.api.close()
        self.watch_api.close()
        log.info("shutdown: done after %.2f s", time.monotonic() - started)

    def run_until_signalled(self) -> int:
        """start(), then wait for SIGTERM/SIGINT (or the loss of the lease); returns the exit status."""

        def on_signal(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: shutting down", signal.Signals(signum).name)
            self.finished.set()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            log.info(
                "vcore-scheduler %s (pid %d) started; schedulerName %s",
                self.identity,
                os.getpid(),
                self.config.scheduler_name,
            )
            while not self.finished.wait(1.0):
                pass
        finally:
            self.shutdown()
            for s, handler in previous.items():
                signal.signal(s, handler)
        return self.exit_code
