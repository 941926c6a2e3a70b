"""BatchState: the batch layer's objects beside the native cluster state (pods, PodGroups, queues, classes).

It keeps the indexes the cycle needs so a cycle touches jobs, not every pod: the members of each group and what
they add up to (GroupTally), the pods not compiled yet, the pods evicted and not yet gone (Releasing) and the
preemptors waiting for them (nominated). The node a pod runs on is always read from the native state. Every method
validates before it changes anything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from vcore._native import _core
from vcore.batch.podgroup import PENDING, PodGroupSpec
from vcore.batch.pods import PodInfo
from vcore.batch.priority import PriorityClasses
from vcore.batch.queue import QueueTree
from vcore.batch.quotas import ResourceQuotas


@dataclass
class GroupTally:
    """What a group's pods add up to, kept as pods come and go: a cycle reads a gang none or all of whose pods run
    without a pass over its pods. Pods that are not Succeeded or Failed are counted by request shape and role; the
    others only by number."""

    shapes: Counter[int] = field(default_factory=Counter)  # request shape -> pods not terminated
    ended: int = 0  # Succeeded or Failed
    # (spec.priority, priorityClassName) -> pods
    priorities: Counter[tuple[int | None, str]] = field(default_factory=Counter)
    topology: int = 0  # pods with Kueue topology annotations
    roles: Counter[str] = field(default_factory=Counter)  # volcano.sh/task-spec -> pods not terminated
    deleting: int = 0  # pods with a deletionTimestamp (Releasing, or never to be scheduled)

    def count(self, info: PodInfo, sign: int) -> None:
        """Add (sign +1) or take away (-1) one pod."""
        if info.topology is not None:
            self.topology += sign
        if info.deleting:
            self.deleting += sign
        if info.terminated:
            self.ended += sign
        else:
            _bump(self.shapes, info.shape, sign)
            _bump(self.roles, info.role, sign)
        _bump(self.priorities, (info.spec_priority, info.priority_class), sign)


K = TypeVar("K")


def _bump(counts: Counter[K], key: K, sign: int) -> None:
    """counts[key] += sign, the key gone at zero (so len() counts the distinct keys present)."""
    counts[key] += sign
    if not counts[key]:
        del counts[key]


@dataclass
class GroupStatus:
    """What the cycle last decided about a PodGroup (Volcano's PodGroupStatus)."""

    phase: str = PENDING
    conditions: list[dict[str, Any]] = field(default_factory=list)


class BatchState:
    def __init__(self) -> None:
        self.pods: dict[str, PodInfo] = {}
        self.podgroups: dict[str, PodGroupSpec] = {}
        self.status: dict[str, GroupStatus] = {}
        self.queues = QueueTree()
        self.priority_classes = PriorityClasses()
        self.quotas = ResourceQuotas()  # the namespaces' ResourceQuotas (Volcano's resourcequota plugin)
        # Insertion-ordered (dicts as ordered sets): the cycle's order never depends on string hashing.
        self.members: dict[str, dict[str, PodInfo]] = {}  # group key -> its pods by key (group may not exist)
        self.tallies: dict[str, GroupTally] = {}  # group key -> what its pods add up to (while it has pods)
        # Pods neither terminated nor compiled: added running; compiled by the first cycle that finds them pending.
        self.uncompiled: dict[str, PodInfo] = {}
        self.constrained: dict[str, None] = {}  # pods compiled with the nodegroup plugin's filter
        self.singles: dict[str, None] = {}  # pods without a group: each a gang of one
        self.releasing: dict[str, str] = {}  # evicted pod -> the preemptor it makes room for
        self.deleting: dict[str, None] = {}  # pods with a deletionTimestamp (Releasing while bound)
        self.nominated: dict[str, str] = {}  # preemptor pod -> node name it waits for
        # Request shapes, interned: the (resource axis, amount) pairs of a pod's requests. Pods of one template
        # share one shape, so sums over thousands of pods count small integers (axes never move once interned).
        self.shapes: list[tuple[tuple[int, int], ...]] = []
        self._shape_ids: dict[tuple[tuple[int, int], ...], int] = {}

    def shape_of(self, pairs: Iterable[tuple[int, int]]) -> int:
        pairs = tuple(pairs)
        shape = self._shape_ids.get(pairs)
        if shape is None:
            shape = self._shape_ids[pairs] = len(self.shapes)
            self.shapes.append(pairs)
        return shape

    # -- pods --------------------------------------------------------------------------------------------
    def add_pod(self, info: PodInfo) -> None:
        self.pods[info.key] = info
        if info.deleting:
            self.deleting[info.key] = None
        if info.compiled is None and not info.terminated:
            self.uncompiled[info.key] = info
        if info.group is None:
            self.singles[info.key] = None
        else:
            self.members.setdefault(info.group, {})[info.key] = info
            tally = self.tallies.get(info.group)
            if tally is None:
                tally = self.tallies[info.group] = GroupTally()
            tally.count(info, +1)

    def set_compiled(self, info: PodInfo, compiled: _core.CompiledPod, node_groups: Any = None) -> None:
        """A pending pod's compiled form, with the nodegroup filter compiled into it (None: its own spec alone)."""
        info.compiled, info.node_groups = compiled, node_groups
        if node_groups is None:
            self.constrained.pop(info.key, None)
        else:
            self.constrained[info.key] = None

    def remove_pod(self, key: str) -> PodInfo:
        info = self.pods.pop(key)
        self.uncompiled.pop(key, None)
        self.constrained.pop(key, None)
        if info.group is None:
            self.singles.pop(key, None)
        else:
            group = self.members.get(info.group)
            if group is not None:
                group.pop(key, None)
                if not group and info.group not in self.podgroups:
                    del self.members[info.group]
            if group:
                self.tallies[info.group].count(info, -1)
            else:
                self.tallies.pop(info.group, None)
        self.releasing.pop(key, None)
        self.deleting.pop(key, None)
        self.nominated.pop(key, None)
        return info

    # -- podgroups ---------------------------------------------------------------------------------------
    def set_podgroup(self, pg: PodGroupSpec) -> None:
        fresh = pg.key not in self.podgroups
        self.podgroups[pg.key] = pg
        self.members.setdefault(pg.key, {})
        if fresh:
            phase = pg.status.get("phase") or PENDING
            conditions = pg.status.get("conditions") or []
            self.status[pg.key] = GroupStatus(str(phase), [dict(c) for c in conditions if isinstance(c, dict)])

    def remove_podgroup(self, key: str) -> PodGroupSpec:
        pg = self.podgroups.pop(key)
        self.status.pop(key, None)
        if not self.members.get(key):
            self.members.pop(key, None)
        return pg

    def jobs_in_queue(self, queue: str) -> int:
        """PodGroups that name the queue, and pods without a group that name it."""
        groups = sum(1 for pg in self.podgroups.values() if pg.queue == queue)
        return groups + sum(1 for k in self.singles if self.pods[k].queue_hint == queue)
