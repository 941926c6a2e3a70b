"""The sharding controller (``vcore-scheduler --role sharder --sharding-config FILE``): assigns the cluster's
nodes to scheduler instances and publishes the assignment as Volcano NodeShards.

It lists and watches Nodes, Pods and NodeShards, keeps each node's requested cpu (vcore's accounting of the
bound pods), and reassigns with shardplan.assign: when nodes come or go or change allocatable, when a node's
utilization moved by more than ``significantChange`` since the last assignment (``enableNodeEventTrigger``), and
every ``shardSyncPeriod``. The current owners are the NodeShards' ``nodesDesired``; a node still being handed over
(in some NodeShard's ``nodesToAdd`` or ``nodesToRemove``) is not moved again until the hand-over is done, and a
node that moved keeps its shard for ``minMoveInterval``. Only what changed is written, removals before additions
(nodeshard.apply_assignment). Replicas elect a leader on the Lease vcore-system/vcore-sharder.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import socket
import threading
import time
import uuid
from typing import Any

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from vcore_kube import nodeshard
from vcore_kube.cache import Cache, Delta
from vcore_kube.config import ConfigError, one_line
from vcore_kube.convert import Converter, node_name_of
from vcore_kube.kubeclient import Api, KubeconfigError, load_api
from vcore_kube.leader import LeaderElector
from vcore_kube.metrics import HealthServer
from vcore_kube.reflector import RESOURCES, Reflector, paused_gc
from vcore_kube.shardplan import NodeTable, ShardingConfig, assign, load_sharding_config

log = logging.getLogger(__name__)

LEASE = ("vcore-system", "vcore-sharder")
DEBOUNCE = 0.2  # changes arriving together are assigned together


class SharderMetrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.assign_seconds = Histogram(
            "vcore_sharder_assign_seconds",
            "One reassignment (the rule alone)",
            registry=r,
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
        )
        self.moves = Counter("vcore_sharder_node_moves", "Nodes given to another shard", registry=r)
        self.writes = Counter("vcore_sharder_nodeshard_writes", "NodeShard writes", registry=r)
        self.nodes = Gauge("vcore_sharder_shard_nodes", "Nodes desired per shard", ["shard"], registry=r)
        self.leader = Gauge("vcore_sharder_is_leader", "1 while this replica leads", registry=r)

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


class Sharder(threading.Thread):
    """The controller's loop: applies watch events, decides when to reassign, writes NodeShards."""

    def __init__(self, config: ShardingConfig, api: Api, metrics: SharderMetrics) -> None:
        super().__init__(name="sharder", daemon=True)
        self.config, self.api, self.metrics = config, api, metrics
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.cache = Cache()
        self.converter = Converter()
        self.leading = threading.Event()
        self.stop_event = threading.Event()
        self.synced = lambda: True
        self.heartbeat = time.monotonic()
        self.moved_at: dict[str, float] = {}  # node -> when it last changed shard (this process's clock)
        self.assigned_util: dict[str, float] = {}  # node -> its utilization at the last assignment
        self._due = time.monotonic()  # the next reassignment (now: at start)
        self.assignments = 0

    # -- inputs ---------------------------------------------------------------------------------------------
    def replace(self, kind: str, items: list[dict[str, Any]], resource_version: str) -> None:
        self.inbox.put(("replace", kind, items))

    def event(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        self.inbox.put(("event", kind, event_type, obj))

    # -- the thread -----------------------------------------------------------------------------------------
    def run(self) -> None:
        while not self.stop_event.is_set():
            self.heartbeat = time.monotonic()
            try:
                self._handle(self.inbox.get(timeout=max(0.0, min(self._due - time.monotonic(), 1.0))))
                while True:
                    self._handle(self.inbox.get_nowait())
            except queue.Empty:
                pass
            except Exception:
                log.exception("applying a change failed")
            if time.monotonic() >= self._due and self.leading.is_set() and self.synced():
                try:
                    self.reassign()
                except Exception:
                    log.exception("reassignment failed; retrying in 5 s")
                    self._due = time.monotonic() + 5.0

    def _handle(self, msg: tuple) -> None:
        if msg[0] == "replace":
            with paused_gc():
                for d in self.cache.replace(msg[1], msg[2]):
                    self._on_delta(d)
        else:
            delta = self.cache.apply(msg[1], msg[2], msg[3])
            if delta is not None:
                self._on_delta(delta)

    def _on_delta(self, d: Delta) -> None:
        if d.kind == "Node":
            if self.converter.node_changed(d.old, d.new) or d.new is None:
                self._soon()
        elif d.kind == "Pod":
            node = node_name_of(d.new) if d.new is not None else (node_name_of(d.old) if d.old else "")
            if d.new is None:
                self.converter.pod_released(d.key)
            elif node_name_of(d.new):
                self.converter.pod_bound(d.new)
            if node and self.config.enable_node_event_trigger and self._moved(node):
                self._soon()
        # NodeShard changes need no reaction of their own: the next assignment reads them.

    def _moved(self, node: str) -> bool:
        """The node's utilization moved significantly since the last assignment."""
        c = self.converter.cluster
        if not c.has_node(node):
            return False
        i = c.node_index(node)
        alloc = int(c.allocatable("cpu")[i])
        util = int(c.requested("cpu")[i]) / alloc if alloc > 0 else 0.0
        return abs(util - self.assigned_util.get(node, util)) > self.config.significant_change

    def _soon(self) -> None:
        self._due = min(self._due, time.monotonic() + DEBOUNCE)

    # -- the assignment -------------------------------------------------------------------------------------
    def table(self) -> NodeTable:
        c = self.converter.cluster
        rows = []
        cpu_alloc, cpu_req, mem = c.allocatable("cpu"), c.requested("cpu"), c.allocatable("memory")
        for name in c.node_names:
            i = c.node_index(name)
            node = self.cache.get("Node", name) or {}
            rows.append(
                (
                    name,
                    (node.get("metadata") or {}).get("labels") or {},
                    int(cpu_alloc[i]),
                    int(mem[i]),
                    int(cpu_req[i]),
                )
            )
        return NodeTable.build(self.config, rows)

    def reassign(self) -> dict[str, list[str]]:
        """Compute and publish the assignment; returns it ({shard: nodes})."""
        now = time.monotonic()
        self._due = now + self.config.shard_sync_period
        specs = self.config.scheduler_configs
        table = self.table()
        shards = {name: nodeshard.Shard.of(obj) for name, obj in self.cache.items("NodeShard")}
        index = {spec.name: s for s, spec in enumerate(specs)}
        owner_of: dict[str, int] = {}
        transit: set[str] = set()
        for name, shard in shards.items():
            transit |= shard.to_add | shard.to_remove
            if name in index:
                for node in shard.desired:
                    owner_of[node] = index[name]
        owner = np.array([owner_of.get(n, -1) for n in table.names], np.int32)
        moved = np.array([now if n in transit else self.moved_at.get(n, -np.inf) for n in table.names])
        started = time.perf_counter()
        new = assign(table, self.config, owner, moved, now)
        self.metrics.assign_seconds.observe(time.perf_counter() - started)
        changed = np.flatnonzero(new != owner)
        for i in changed.tolist():
            self.moved_at[table.names[i]] = now
        if len(changed) and owner.max(initial=-1) >= 0:
            self.metrics.moves.inc(int((owner[changed] >= 0).sum()))
        pct = table.cpu_req / np.where(table.cpu_alloc > 0, table.cpu_alloc, 1)
        self.assigned_util = dict(zip(table.names, pct.tolist()))
        names = np.array(table.names, dtype=object)
        desired = {spec.name: names[new == s].tolist() for s, spec in enumerate(specs)}
        written = nodeshard.apply_assignment(self.api, desired)
        self.metrics.writes.inc(written)
        for name, nodes in desired.items():
            self.metrics.nodes.labels(name).set(len(nodes))
        self.assignments += 1
        if written:
            log.info(
                "assignment %d: %s (%d nodes moved, %d NodeShards written)",
                self.assignments,
                {k: len(v) for k, v in desired.items()},
                len(changed),
                written,
            )
        return desired


def run_sharder(kubeconfig: str | None, sharding_config: str | None, *, identity: str | None = None) -> int:
    """The controller process until SIGTERM/SIGINT; returns the exit status."""
    import sys

    if not sharding_config:
        print("vcore-scheduler --role sharder: --sharding-config FILE is required", file=sys.stderr)
        return 2
    try:
        config = load_sharding_config(sharding_config)
    except ConfigError as e:
        print(f"vcore-scheduler --role sharder: {one_line(str(e))}", file=sys.stderr)
        return 2
    try:
        api, watch_api = load_api(kubeconfig), load_api(kubeconfig, pool_size=6)
    except KubeconfigError as e:
        print(f"vcore-scheduler --role sharder: {e}", file=sys.stderr)
        return 2
    metrics = SharderMetrics()
    sharder = Sharder(config, api, metrics)
    stop = threading.Event()
    resources = [r for r in RESOURCES if r.kind in ("Node", "Pod")] + [nodeshard.RESOURCE]
    reflectors = [Reflector(watch_api.api_client, r, sharder, stop) for r in resources]
    sharder.synced = lambda: all(r.synced.is_set() for r in reflectors)
    finished = threading.Event()
    exit_code = [0]

    def lead() -> None:
        metrics.leader.set(1)
        sharder.leading.set()

    def lost() -> None:
        metrics.leader.set(0)
        sharder.leading.clear()
        exit_code[0] = 1
        finished.set()

    who = identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
    elector = (
        LeaderElector(
            api,
            *LEASE,
            who,
            lease_duration=15.0,
            renew_deadline=10.0,
            retry_period=2.0,
            on_started=lead,
            on_stopped=lost,
            stop=stop,
        )
        if config.leader_elect
        else None
    )
    try:
        health = (
            HealthServer(
                config.metrics_address,
                metrics,
                lambda: sharder.is_alive() and time.monotonic() - sharder.heartbeat < 30,
                sharder.synced,
            )
            if config.metrics_address
            else None
        )
    except OSError as e:  # the metrics address is taken, or not this machine's
        print(f"vcore-scheduler --role sharder: metricsAddress: {e.strerror or e}", file=sys.stderr)
        api.close()
        watch_api.close()
        return 2
    previous = {s: signal.signal(s, lambda *_: finished.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if health:
            health.start()
        sharder.start()
        for r in reflectors:
            r.start()
        if elector:
            elector.start()
        else:
            lead()
        log.info(
            "vcore sharder %s (pid %d) started: shards %s", who, os.getpid(), [s.name for s in config.scheduler_configs]
        )
        while not finished.wait(1.0):
            pass
    finally:
        sharder.leading.clear()
        sharder.stop_event.set()
        stop.set()
        if elector:
            elector.release()
        for r in reflectors:
            r.close()
        if health:
            health.stop()
        api.close()
        watch_api.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return exit_code[0]
