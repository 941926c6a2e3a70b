"""One scheduler instance's share of the nodes under sharding (``--sharding-mode soft|hard --shard NAME``): the
nodes it may place on now, and the NodeShard status it must publish, by a hand-over protocol that never lets two
instances place on one node. Pure state: the scheduling loop feeds it NodeShard and pod events and asks it what
to write; the writer (shardwriter.py) does the I/O.

The protocol, instance side (the controller's is in sharder.py: it removes a node from its old shard's
``spec.nodesDesired`` before adding it to the new one):
- release: a node that leaves our ``nodesDesired`` is left out of our placements at once; once no binding of ours
  to it is in flight, we publish a status without it in ``nodesInUse``. Until then it is in ``nodesToRemove``.
- claim: a desired node is claimed only if no other NodeShard lists it in ``nodesInUse`` in a read from etcd just
  before the claim, which is a status write conditioned on the resourceVersion of that read (it fails if the
  controller changed our spec meanwhile). A node another instance still uses waits in ``nodesToAdd``.
- settle: a claimed node is used once every pod the API server had bound to it (a list taken after the claim)
  is in our own state, so the pods its previous owner bound just before releasing it are never overlooked.
At start, the nodes our status already lists (a previous run of this instance) are claimed again the same way.

Hard mode places only on the usable nodes; soft mode prefers them and otherwise uses only nodes no NodeShard
knows (in nobody's nodesDesired, nodesInUse or nodesToAdd), never another instance's. Without our NodeShard,
hard mode places nowhere and soft mode only on such unassigned nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vcore_kube.nodeshard import Shard


@dataclass(frozen=True)
class Publish:
    """A status write: keep these nodes in nodesInUse, add the claimed ones still free on a fresh read."""

    keep: frozenset[str]
    claim: frozenset[str]


@dataclass(frozen=True)
class Published:
    """The writer's answer. ok: `in_use` is our nodesInUse as written; `claimed`: for each node claimed, the pods
    bound to it in a list taken after the write (keys)."""

    ok: bool
    in_use: frozenset[str] = frozenset()
    claimed: dict[str, frozenset[str]] = field(default_factory=dict)
    error: str = ""


class Membership:
    def __init__(self, shard: str, *, soft: bool) -> None:
        self.shard, self.soft = shard, soft
        self.own: Shard | None = None
        self.others: dict[str, Shard] = {}
        self.in_use: frozenset[str] = frozenset()  # our nodesInUse, as last written (or read at start)
        self.verified: set[str] = set()  # claimed by this process (settling or usable)
        self.settling: dict[str, set[str]] = {}  # claimed node -> pods listed on it, not yet in our state
        self.publishing: Publish | None = None

    # -- inputs ---------------------------------------------------------------------------------------------
    def shard_changed(self, name: str, obj: dict[str, Any] | None) -> None:
        """A NodeShard was added, changed or deleted (ours or another's)."""
        shard = Shard.of(obj) if obj is not None else None
        if name != self.shard:
            if shard is None:
                self.others.pop(name, None)
            else:
                self.others[name] = shard
            return
        if shard is None:  # ours is gone: nothing of it is ours any more
            self.own, self.in_use = None, frozenset()
            self.verified.clear()
            self.settling.clear()
            return
        if self.own is None and not self.verified:  # first sight (start): what a previous run published
            self.in_use = shard.in_use
        self.own = shard

    def published(self, result: Published, accounted: Callable[[str], str | None]) -> None:
        """The writer finished; `accounted(key)` is the node our state has the pod on (or None)."""
        self.publishing = None
        if not result.ok:
            return
        self.in_use = result.in_use
        self.verified &= result.in_use
        for node, keys in result.claimed.items():
            self.verified.add(node)
            pending = {k for k in keys if accounted(k) != node}
            if pending:
                self.settling[node] = pending
            else:
                self.settling.pop(node, None)

    def pod_seen(self, key: str, node: str | None) -> bool:
        """Our state now has pod `key` on `node` (None: the pod is gone); True when a node became usable."""
        settled = False
        for n, pending in list(self.settling.items()):
            if key in pending and (node is None or node == n):
                pending.discard(key)
                if not pending:
                    del self.settling[n]
                    settled = True
        return settled

    # -- outputs --------------------------------------------------------------------------------------------
    @property
    def desired(self) -> frozenset[str]:
        return self.own.desired if self.own is not None else frozenset()

    def usable(self) -> frozenset[str]:
        """The nodes this instance may place on now."""
        return frozenset(n for n in self.verified if n in self.desired and n not in self.settling)

    def avoided(self) -> frozenset[str]:
        """Nodes a soft instance never falls back on: every node some NodeShard knows, except our usable ones."""
        known: set[str] = set(self.desired) | self.in_use
        for s in self.others.values():
            known |= s.desired | s.in_use | s.to_add
        return frozenset(known - self.usable())

    def releasing(self) -> frozenset[str]:
        """Nodes in our nodesInUse we no longer place on (not desired): waiting for our bindings to finish."""
        return frozenset(self.in_use - self.desired)

    def blocked(self) -> frozenset[str]:
        """Desired nodes another instance still lists in nodesInUse."""
        used = set().union(*(s.in_use for s in self.others.values())) if self.others else set()
        return frozenset((self.desired - self.verified) & used)

    def to_publish(self, in_flight: Callable[[str], int]) -> Publish | None:
        """The status write due now (releases whose bindings finished, claims of free desired nodes, a stale
        report), or None; at most one write is outstanding."""
        if self.publishing is not None or self.own is None:
            return None
        released = {n for n in self.releasing() if in_flight(n) == 0}
        claim = frozenset(self.desired - self.verified - self.blocked())
        keep = frozenset(self.in_use - released - claim)
        report = (self.own.in_use, self.own.to_add, self.own.to_remove)
        expected = (self.in_use, self.desired - self.in_use, self.in_use - self.desired)
        if not released and not claim and report == expected:
            return None
        self.publishing = Publish(keep, claim)
        return self.publishing
