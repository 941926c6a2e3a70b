"""A pod this scheduler is placing: the scheduling loop's record of it from its first watch event until its
binding is confirmed or given up (its state, its backoff, its binding in flight and VolumeBinding's PreBind before
it, the last FailedScheduling event written for it). The loop keeps the batch cycle's pods; the agent side
(agentcontrol.py) keeps the fast path's and its warm pools' placeholders, and hands them to the loop's binder in the
same record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PendingPod:
    key: str
    uid: str
    pod: dict[str, Any]
    first_seen: float  # monotonic
    state: str = "active"  # active | unschedulable | gated | invalid | binding
    attempts: int = 0
    not_before: float = 0.0  # monotonic: backoff
    unschedulable_since: float = 0.0
    node: str = ""  # while binding
    confirmed: bool = False  # while binding: the watch has shown the pod bound
    deleted: bool = False  # while binding: the watch has shown the pod deleted
    event_message: str = ""
    event_at: float = field(default=-1e9)
    kind: str = "batch"  # batch (the cycle's) | fast (the fast path's) | placeholder (a warm pool's)
    received: float = 0.0  # perf_counter of the watch event that brought it (fast path)
    rejected_by: frozenset = frozenset()  # the volume plugins behind its last unschedulable attempt
    # VolumeBinding's PreBind, before the binding: what to write and wait for (vcore.VolumeBinds; None: nothing),
    # the resourceVersions the writes returned, when waiting gives up (monotonic), and the binding to make then.
    volumes: Any = None
    written: dict | None = None  # None while the writes are under way
    volumes_deadline: float = 0.0
    volumes_bound: bool = False
    then_bind: tuple = ()  # (gpu_index, evict)
