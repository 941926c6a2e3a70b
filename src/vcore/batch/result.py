"""What a scheduling cycle returns: bindings, evictions, PodGroup statuses and queue standings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from vcore.types import Placement


class Event(NamedTuple):
    """Something the cycle tells about an object that changes no binding (a Kubernetes Event for the adapter)."""

    object: str  # "PodGroup <namespace>/<name>"
    type: str  # "Warning" or "Normal"
    reason: str
    message: str


class Eviction(NamedTuple):
    """A running pod the cycle evicts to make room: Releasing until the caller removes it (remove_pod)."""

    victim: str
    node: str
    reason: str  # "preempt" (within a queue) or "reclaim" (across queues)
    preemptor: str


@dataclass(frozen=True)
class PodGroupStatus:
    """A PodGroup's status after the cycle, in Volcano's PodGroupStatus shape (``to_dict`` for the API)."""

    phase: str
    conditions: tuple[dict[str, Any], ...]
    message: str
    running: int
    succeeded: int
    failed: int
    hypernode: str | None = None  # the topology domain this cycle placed the gang in (None: unconstrained)

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "conditions": [dict(c) for c in self.conditions],
            "running": self.running,
            "succeeded": self.succeeded,
            "failed": self.failed,
        }


@dataclass(frozen=True)
class QueueStatus:
    """A queue's standing after the cycle: resources as {name: amount} (cpu in millicores, memory in bytes)."""

    allocated: dict[str, int]
    deserved: dict[str, int]
    share: float
    pending: int  # jobs of the queue not ready at the end of the cycle
    running: int  # jobs at or above their minimum
    state: str = "Open"  # the queue's state as the cycle read it (Volcano's status.state; unset reads Open)
    #: the queue's PodGroups by the phase this cycle gave them (what Volcano's Queue status counts)
    podgroups: Mapping[str, int] = field(default_factory=dict)


@dataclass
class CycleResult:
    bindings: list[Placement] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)
    podgroups: dict[str, PodGroupStatus] = field(default_factory=dict)
    queues: dict[str, QueueStatus] = field(default_factory=dict)
    #: pending pods tried and not placed: key -> (reasons counted per node, message); the pods of one job share
    #: one entry (read it, do not change it)
    unschedulable: dict[str, tuple[dict[str, int], str]] = field(default_factory=dict)
    #: pods the preempt/reclaim actions made room for, with the node they wait for
    nominated: dict[str, str] = field(default_factory=dict)
    #: PodGroups this cycle admitted (Pending -> Inqueue), in admission order; their status says Inqueue (or more)
    #: even when they have no pods yet: Volcano's job controller creates a job's pods once its PodGroup is Inqueue
    enqueued: list[str] = field(default_factory=list)
    #: what the cycle noted about objects without failing them (a constraint it could not apply as written, ...)
    events: list[Event] = field(default_factory=list)
    seconds: float = 0.0
