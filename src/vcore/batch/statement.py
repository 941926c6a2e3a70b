"""Statement: tentative evictions and pipelined placements, committed together or discarded together.

Preempt and reclaim try, for one job, to free nodes by evicting victims and to pipeline the job's tasks onto
them. Until the job is known to be satisfiable the changes are only tentative, but the next task must see them:
so the victims are detached from the native state (the node looks free of them) and the pipelined tasks are
bound there, and the jobs and plugins are told at once (a victim's job loses a ready task, the preemptor's job
gains a waiting one; the plugins' event handlers see both, as Volcano's statement raises them). ``commit`` turns
that into evictions (victims attached again and marked Releasing: they hold their resources until they are really
gone) and nominations (the tasks wait, unbound, for those nodes); ``discard`` puts everything back as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vcore._native import _core
from vcore.batch.pods import PodInfo
from vcore.batch.result import Eviction

if TYPE_CHECKING:
    from vcore.batch.job import Job
    from vcore.batch.session import Session


@dataclass
class _Evicted:
    pod: _core.DetachedPod
    node: str
    slot: int
    job: Job
    request: np.ndarray
    reason: str
    preemptor: str


@dataclass
class _Pipelined:
    task: PodInfo
    job: Job
    slot: int
    request: np.ndarray


class Statement:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.state = session.state
        self._evicted: list[_Evicted] = []
        self._pipelined: list[_Pipelined] = []

    @property
    def evicted(self) -> set[str]:
        return {e.pod.key for e in self._evicted}

    def mark(self) -> tuple[int, int]:
        """A point :meth:`rollback` returns to."""
        return len(self._evicted), len(self._pipelined)

    def evict(self, key: str, job: Job, request: np.ndarray, reason: str, preemptor: str) -> None:
        """Evict a running task of ``job`` (its requests ``request``) for the pending task ``preemptor``."""
        slot = self.state.pod_node(key)
        node = self.state.node_name(slot)
        detached = self.state.detach(key)
        self._evicted.append(_Evicted(detached, node, slot, job, request, reason, preemptor))
        job.running.remove(key)
        job.releasing += 1
        job.allocated = job.allocated - request
        role = self.session.batch.pods[key].role
        if role in job.min_task:
            job.role_ready[role] -= 1  # type: ignore[index]  # a Counter when the job has role minimums
        self.session.framework.on_deallocate(job, request)

    def pipeline(self, task: PodInfo, job: Job, slot: int, request: np.ndarray) -> None:
        assert task.compiled is not None, "the session compiles every pending pod"
        self.state.bind(task.compiled, slot)
        self._pipelined.append(_Pipelined(task, job, slot, request))
        job.count_pipelined(task.role, 1)
        self.session.framework.on_allocate(job, request)

    def commit(self) -> list[Eviction]:
        """Evictions and nominations become real; returns the evictions."""
        ssn = self.session
        batch = ssn.batch
        for p in self._pipelined:
            self.state.unbind(p.task.key)
            batch.nominated[p.task.key] = self.state.node_name(p.slot)
            ssn.room.nominate(p.slot, p.request)
        evictions = []
        for e in self._evicted:
            self.state.attach(e.pod)
            batch.releasing[e.pod.key] = e.preemptor
            ssn.room.release(e.slot, e.request)
            evictions.append(Eviction(e.pod.key, e.node, e.reason, e.preemptor))
        self._evicted.clear()
        self._pipelined.clear()
        ssn.result.evictions.extend(evictions)
        return evictions

    def discard(self) -> None:
        self.rollback((0, 0))

    def restore(self, key: str) -> None:
        """Undo the eviction of one pod (evicted by this statement)."""
        i = next(i for i, e in enumerate(self._evicted) if e.pod.key == key)
        self._undo_eviction(self._evicted.pop(i))

    def rollback(self, mark: tuple[int, int]) -> None:
        """Undo what was done since ``mark``, the latest first."""
        n_evicted, n_pipelined = mark
        fw = self.session.framework
        while len(self._pipelined) > n_pipelined:
            p = self._pipelined.pop()
            self.state.unbind(p.task.key)
            p.job.count_pipelined(p.task.role, -1)
            fw.on_deallocate(p.job, p.request)
        while len(self._evicted) > n_evicted:
            self._undo_eviction(self._evicted.pop())

    def _undo_eviction(self, e: _Evicted) -> None:
        self.state.attach(e.pod)
        job = e.job
        job.running.append(e.pod.key)
        job.releasing -= 1
        job.allocated = job.allocated + e.request
        role = self.session.batch.pods[e.pod.key].role
        if role in job.min_task:
            job.role_ready[role] += 1  # type: ignore[index]  # a Counter when the job has role minimums
        self.session.framework.on_allocate(job, e.request)
