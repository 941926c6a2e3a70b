"""The interface between the scheduling cycle and a job plugin, modelled on the functions a Volcano plugin registers
in its OnSessionOpen (framework/session_plugins.go).

A plugin is built once per configuration (``cls(arguments, path)``, arguments already validated by the conf
loader), attached to each cycle's session as it starts and opened once the session has read its jobs
(:meth:`JobPlugin.open`). ``parts`` names the session functions it registers;
:class:`vcore.batch.plugins.framework.Framework` asks a plugin for a part only when the plugin registers it and the
part's switch (``PART_SWITCHES``) is on in the plugin's tier entry, and combines the answers tier by tier as Volcano's
session does. The parts, and what each answers:

* ``job_order`` (JobOrderFn) ``job_order_key(job)``: a sort key, smaller first; ``task_order`` (TaskOrderFn) the same
  for tasks. The session's order is the plugins' keys in tier order, then the job's creation time and key.
* ``job_valid`` (JobValidFn, no switch): None, or the (reason, message) why the job cannot run as defined.
* ``job_ready`` (JobReadyFn), ``job_starving`` (JobStarvingFn): booleans.
* ``job_pipelined`` (JobPipelinedFn), ``job_enqueueable`` (JobEnqueueableFn): PERMIT, ABSTAIN or REJECT.
* ``job_enqueued`` (JobEnqueuedFn): the job was admitted.
* ``preemptable`` / ``reclaimable`` (PreemptableFn / ReclaimableFn): of the candidate victims, those the plugin
  lets go for the preemptor (a list, in the candidates' order), or None to abstain.
* ``queue_order`` (QueueOrderFn) ``queue_order(left, right)`` (negative: left first), ``victim_queue_order``
  (VictimQueueOrderFn, no switch), ``overused`` (OverusedFn), ``allocatable`` (AllocatableFn, with ``headroom``
  saying the same as a vector), ``preemptive`` (PreemptiveFn).

``on_allocate`` / ``on_deallocate`` are Volcano's event handlers: called for every plugin (no switch) when the cycle
places or pipelines a job's tasks, or evicts them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from vcore._native import _core
from vcore.batch.job import Job
from vcore.batch.pods import PodInfo
from vcore.batch.result import CycleResult
from vcore.batch.shares.base import ABSTAIN, PERMIT, REJECT, QueueUsage
from vcore.batch.state import BatchState

__all__ = ["ABSTAIN", "PART_SWITCHES", "PERMIT", "REJECT", "Candidate", "JobPlugin", "PluginSession", "Preemptor"]

#: Each part and the PluginOption switch that governs it (None: always asked, as Volcano's JobValid and
#: VictimQueueOrder).
PART_SWITCHES: Mapping[str, str | None] = {
    "job_order": "enableJobOrder",
    "task_order": "enableTaskOrder",
    "job_valid": None,
    "job_ready": "enableJobReady",
    "job_pipelined": "enableJobPipelined",
    "job_starving": "enableJobStarving",
    "job_enqueueable": "enableJobEnqueued",
    "job_enqueued": "enableJobEnqueued",
    "preemptable": "enablePreemptable",
    "reclaimable": "enableReclaimable",
    "queue_order": "enableQueueOrder",
    "victim_queue_order": None,
    "overused": "enabledOverused",
    "allocatable": "enabledAllocatable",
    "preemptive": "enablePreemptive",
}


class PluginSession(Protocol):
    """What the plugins read of their cycle's session (:class:`vcore.batch.session.Session`, which holds the
    plugins and so is described here rather than imported)."""

    batch: BatchState
    state: _core.ClusterState
    jobs: dict[str, Job]
    queue_jobs: dict[str, list[Job]]
    single_usage: dict[str, list[int]]
    resources: list[str]
    n_resources: int
    total: np.ndarray
    wall_clock: float
    opened_usage: dict[str, QueueUsage] | None
    result: CycleResult

    def pod_priority(self, info: PodInfo) -> int: ...


@dataclass(frozen=True, slots=True)
class Preemptor:
    """A pending task looking for room, with its job (the preemptor or reclaimer of a vote)."""

    info: PodInfo
    job: Job
    priority: int  # the task's priority (spec.priority, else its class's)
    request: np.ndarray  # its requests over the resource axes (the pods axis counts it)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A running task that may become a victim, with its job."""

    key: str
    info: PodInfo
    job: Job
    priority: int  # the task's priority
    request: np.ndarray  # its requests over the resource axes (as its job's allocation counts them)
    slot: int = -1  # the node it runs on
    reclaimable_queue: bool = True  # its queue's spec.reclaimable


class JobPlugin:
    """Base of the job plugins: every part answers as if the plugin did not register it."""

    name: ClassVar[str]
    parts: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, arguments: Mapping[str, Any] | None = None, path: str = "") -> None:
        self.arguments = dict(arguments or {})
        self.path = path or self.name

    def attach(self, ssn: PluginSession) -> None:
        """A cycle starts: the session, before it reads its jobs (task order keys are asked while it does)."""
        self.ssn = ssn

    def open(self, ssn: PluginSession) -> None:
        """The session has read its jobs: read what the plugin needs of them."""
        self.ssn = ssn

    def queue_hook(self, part: str) -> Callable[[str], Any]:
        """The function that answers a part asked of one queue (``overused``, ``headroom``): the plugin's own."""
        hook: Callable[[str], Any] = getattr(self, part)
        return hook

    # -- parts ---------------------------------------------------------------------------------------------
    def job_order_key(self, job: Job) -> Any:
        return 0

    def task_order_key(self, task: PodInfo) -> Any:
        return 0

    def job_valid(self, job: Job) -> tuple[str, str] | None:
        return None

    def job_ready(self, job: Job) -> bool:
        return True

    def job_pipelined(self, job: Job) -> int:
        return ABSTAIN

    def job_starving(self, job: Job) -> bool:
        return False

    def job_enqueueable(self, job: Job) -> int:
        return ABSTAIN

    def job_enqueued(self, job: Job) -> None:
        return None

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate] | None:
        return None

    def reclaimable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate] | None:
        return None

    def queue_order(self, left: str, right: str) -> int:
        return 0

    def victim_queue_order(self, left: str, right: str, preemptor: str) -> int:
        return 0

    def overused(self, queue: str) -> bool:
        return False

    def allocatable(self, queue: str, request: np.ndarray) -> bool:
        return True

    def headroom(self, queue: str) -> np.ndarray | None:
        """What the queue may still be allocated per resource (None: no bound), such that ``allocatable(queue, r)``
        holds exactly when ``r <= headroom`` on every resource ``r`` asks for."""
        return None

    def preemptive(self, queue: str, request: np.ndarray) -> bool:
        return True

    # -- event handlers --------------------------------------------------------------------------------------
    def on_allocate(self, job: Job, request: np.ndarray) -> None:
        return None

    def on_deallocate(self, job: Job, request: np.ndarray) -> None:
        return None
