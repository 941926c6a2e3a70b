"""Sharding in the scheduling loop (``sharding.mode`` soft or hard): the instance's membership (membership.py)
fed with NodeShard and pod events and with its own bindings in flight, its scope applied to every vcore scheduler
of the process (the batch cycle's, the fast path's) as soon as it changes, without a restart, and its status
writes handed to the ShardWriter thread. A failed write is tried again after RETRY seconds. A graceful shutdown
gives every node back once the last binding finished. The loop calls in from its thread and is seen here only
through what ShardHost names.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from vcore_kube.membership import Membership, Publish, Published
from vcore_kube.metrics import Metrics
from vcore_kube.shardwriter import ShardWriter, publish

if TYPE_CHECKING:
    from vcore_kube.kubeclient import Api


log = logging.getLogger(__name__)

RETRY = 0.5


class ShardHost(Protocol):
    """What sharding uses of the scheduling loop (loop.py's SchedulingLoop, which calls in from its thread)."""

    metrics: Metrics

    def clock(self) -> float: ...

    def schedulers(self) -> list: ...

    def in_flight_on(self, node: str) -> int: ...

    def accounted_node(self, key: str) -> str | None: ...

    def node_left_scope(self, node: str) -> None: ...

    def scope_grew(self) -> None: ...


class ShardControl:
    def __init__(self, loop: ShardHost, shard: str, soft: bool, writer: ShardWriter | None) -> None:
        self.loop, self.writer = loop, writer
        self.membership = Membership(shard, soft=soft)
        self._applied: tuple | None = None
        self._usable: frozenset[str] = frozenset()
        self._retry_at = 0.0
        self.apply()  # until our NodeShard is read: hard places nowhere, soft only on unassigned nodes

    # -- inputs (the loop's thread) -------------------------------------------------------------------------
    def shard_event(self, name: str, obj: dict[str, Any] | None) -> None:
        self.membership.shard_changed(name, obj)
        self.update()

    def published(self, result: Published) -> None:
        if not result.ok:
            self._retry_at = self.loop.clock() + RETRY
        else:
            gained = set(result.claimed)
            if gained:
                self.loop.metrics.shard_handovers.labels("gained").inc(len(gained))
        before = self.membership.in_use
        self.membership.published(result, self.loop.accounted_node)
        released = before - self.membership.in_use
        if released:
            self.loop.metrics.shard_handovers.labels("released").inc(len(released))
            log.info("NodeShard %s: released %s", self.membership.shard, sorted(released))
        self.update()

    def pod_seen(self, key: str, node: str | None) -> None:
        if self.membership.settling and self.membership.pod_seen(key, node):
            self.update()

    def binding_done(self, node: str) -> None:
        if node in self.membership.releasing():
            self.update()

    # -- outputs --------------------------------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        return self._retry_at if self._retry_at > self.loop.clock() else None

    def tick(self) -> None:
        if self._retry_at and self.loop.clock() >= self._retry_at:
            self._retry_at = 0.0
            self.update()

    def update(self) -> None:
        """Apply the scope if it changed, and hand the writer the status write that is due."""
        self.apply()
        if self.writer is None or self.loop.clock() < self._retry_at:
            return
        request = self.membership.to_publish(self.loop.in_flight_on)
        if request is not None:
            self.writer.submit(request)

    def apply(self) -> None:
        m, loop = self.membership, self.loop
        usable = m.usable()
        scope = (usable, m.soft, m.avoided() if m.soft else frozenset())
        if scope == self._applied:
            return
        for scheduler in loop.schedulers():
            scheduler.set_node_scope(usable, soft=m.soft, avoid=scope[2])
        lost, gained = self._usable - usable, usable - self._usable
        self._applied, self._usable = scope, usable
        for node in sorted(lost):
            loop.node_left_scope(node)
        if gained:
            loop.scope_grew()
            log.info("NodeShard %s: placing on %d nodes (+%d -%d)", m.shard, len(usable), len(gained), len(lost))
        metrics = loop.metrics.shard_nodes
        metrics.labels("usable").set(len(usable))
        metrics.labels("in_use").set(len(m.in_use))
        metrics.labels("to_add").set(len(m.desired - m.in_use))
        metrics.labels("to_remove").set(len(m.releasing()))

    def release_all(self, api: Api) -> None:
        """At shutdown, once no binding of ours is in flight: give every node back (an empty nodesInUse), so the
        instances the controller gives them to need not wait for this one to return."""
        if self.membership.own is None:
            return
        result = publish(api, self.membership.shard, Publish(frozenset(), frozenset()))
        if result.ok:
            log.info("NodeShard %s: released every node at shutdown", self.membership.shard)
        else:
            log.warning(
                "NodeShard %s: could not release its nodes at shutdown (%s); they wait for this instance",
                self.membership.shard,
                result.error,
            )
