"""The scheduler instance's NodeShard writes (membership.py decides them), on a thread of their own so the
scheduling loop never waits for the API server: one write at a time, each answered through a callback.

A write reads every NodeShard from etcd first, claims only the requested nodes that are still in our
``nodesDesired`` and in nobody else's ``nodesInUse``, and replaces our status conditioned on the resourceVersion
it read. After a claim it lists the pods bound to the claimed nodes, for the settle step.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from vcore_kube import nodeshard
from vcore_kube.kubeclient import Api, ApiException
from vcore_kube.membership import Publish, Published
from vcore_kube.reflector import NON_TERMINAL_PODS

log = logging.getLogger(__name__)

PER_NODE_LISTS = 16  # claims of more nodes list every pod once instead of one list per node


def publish(api: Api, shard: str, request: Publish, timeout: float = 10) -> Published:
    """One status write of `shard` (see the module docstring); never raises for API errors."""
    try:
        shards = nodeshard.list_shards(api, timeout=timeout)
        own = shards.get(shard)
        if own is None:
            return Published(False, error=f"NodeShard {shard} does not exist")
        fresh = nodeshard.Shard.of(own)
        taken = set().union(*(nodeshard.Shard.of(o).in_use for n, o in shards.items() if n != shard))
        claimed = (request.claim & fresh.desired) - taken
        in_use = frozenset(request.keep | claimed)
        nodeshard.put_status(api, own, nodeshard.status_body(in_use, fresh.desired), timeout=timeout)
        return Published(True, in_use, bound_pods(api, claimed, timeout) if claimed else {})
    except ApiException as e:
        return Published(False, error=f"HTTP {e.status}")
    except (OSError, ValueError) as e:  # connection errors, unreadable answers
        return Published(False, error=f"{type(e).__name__}: {e}")


def bound_pods(api: Api, nodes: frozenset[str], timeout: float = 10) -> dict[str, frozenset[str]]:
    """{node: keys of the non-terminal pods bound to it}, read from etcd."""
    if len(nodes) <= PER_NODE_LISTS:
        lists = [
            api.get("/api/v1/pods", fieldSelector=f"spec.nodeName={n},{NON_TERMINAL_PODS}", timeout=timeout)["items"]
            for n in sorted(nodes)
        ]
        items = [p for chunk in lists for p in chunk]
    else:
        items = api.get("/api/v1/pods", fieldSelector=NON_TERMINAL_PODS, timeout=timeout)["items"]
    out: dict[str, set[str]] = {n: set() for n in nodes}
    for p in items:
        node = p["spec"].get("nodeName")
        if node in out:
            out[node].add(f"{p['metadata'].get('namespace', '')}/{p['metadata']['name']}")
    return {n: frozenset(keys) for n, keys in out.items()}


class ShardWriter(threading.Thread):
    """Runs `publish` requests one at a time; `done(Published)` is called from this thread."""

    def __init__(self, api: Api, shard: str, done: Callable[[Published], None]) -> None:
        super().__init__(name="shard-writer", daemon=True)
        self.api, self.shard, self.done = api, shard, done
        self._requests: queue.SimpleQueue = queue.SimpleQueue()

    def submit(self, request: Publish) -> None:
        self._requests.put(request)

    def stop(self) -> None:
        self._requests.put(None)

    def run(self) -> None:
        while True:
            request = self._requests.get()
            if request is None:
                return
            result = publish(self.api, self.shard, request)
            if not result.ok:
                log.info("NodeShard %s: status not written (%s); retrying on the next change", self.shard, result.error)
            self.done(result)
