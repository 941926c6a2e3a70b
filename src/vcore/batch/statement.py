"""Statement: tentative evictions and pipelined placements, committed together or discarded together.

Preempt and reclaim try, for one job, to free nodes by evicting victims and to pipeline the job's tasks onto
them. Until the job is known to be satisfiable the changes are only tentative, but the next task must see them:
so the victims are detached from the native state (the node looks free of them) and the pipelined tasks are
bound there. ``commit`` turns that into evictions (victims attached again and marked Releasing: they hold their
resources until they are really gone) and nominations (the tasks wait, unbound, for those nodes);
``discard`` puts everything back as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vcore._native import _core
from vcore.batch.pods import PodInfo
from vcore.batch.result import Eviction

if TYPE_CHECKING:
    from vcore.batch.session import Session


class Statement:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.state = session.state
        self._detached: list[tuple[_core.DetachedPod, str, str, str]] = []  # (pod, node name, reason, preemptor)
        self._pipelined: list[tuple[PodInfo, str]] = []  # (task, node name)

    @property
    def evicted(self) -> set[str]:
        return {d.key for d, _, _, _ in self._detached}

    def evict(self, key: str, reason: str, preemptor: str) -> None:
        node = self.state.node_name(self.state.pod_node(key))
        self._detached.append((self.state.detach(key), node, reason, preemptor))

    def pipeline(self, task: PodInfo, slot: int) -> None:
        assert task.compiled is not None, "the session compiles every pending pod"
        self.state.bind(task.compiled, slot)
        self._pipelined.append((task, self.state.node_name(slot)))

    def commit(self) -> list[Eviction]:
        """Evictions and nominations become real; returns the evictions."""
        batch = self.session.batch
        for task, node in self._pipelined:
            self.state.unbind(task.key)
            batch.nominated[task.key] = node
        evictions = []
        for detached, node, reason, preemptor in self._detached:
            self.state.attach(detached)
            batch.releasing[detached.key] = preemptor
            evictions.append(Eviction(detached.key, node, reason, preemptor))
        self._clear()
        return evictions

    def discard(self) -> None:
        for task, _ in reversed(self._pipelined):
            self.state.unbind(task.key)
        for detached, _, _, _ in reversed(self._detached):
            self.state.attach(detached)
        self._clear()

    def _clear(self) -> None:
        self._detached.clear()
        self._pipelined.clear()
