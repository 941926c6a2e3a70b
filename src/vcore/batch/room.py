"""Room: what each node will have free once the pods leaving it are gone, as Volcano counts it (NodeInfo.FutureIdle:
idle + releasing - pipelined).

Idle is the native state's allocatable minus requested, read live: while preempt or reclaim try a job, the victims
they evict are detached (the node looks free of them) and the tasks they pipeline are bound, so idle already counts
both. What is committed is kept here: the requests of the Releasing pods (evicted by a cycle or being deleted: still
attached, so not idle) and of the tasks nominated onto a node (unbound, so idle does not count them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from vcore._native import _core
from vcore.batch.pods import PodInfo
from vcore.batch.state import BatchState


class RoomSession(Protocol):
    """What Room reads of its cycle's session (which holds the Room, so is described here rather than imported)."""

    state: _core.ClusterState
    batch: BatchState
    resources: list[str]
    pods_axis: int
    releasing_pods: Mapping[str, str]

    def pod_vector(self, info: PodInfo) -> np.ndarray: ...


class Room:
    def __init__(self, ssn: RoomSession) -> None:
        self.ssn = ssn
        state = ssn.state
        self.allocatable = state.allocatable  # live views [resource axis, slot]
        self.requested = state.requested
        shape = self.allocatable.shape
        self.releasing = np.zeros(shape, np.int64)
        self.nominated = np.zeros(shape, np.int64)
        # cpu and memory are always compared, other axes only when the task asks for them (Resource.LessEqual)
        self.always = np.array([r in ("cpu", "memory") for r in ssn.resources], dtype=bool)
        batch = ssn.batch
        for key in ssn.releasing_pods:
            slot = state.pod_node(key)
            if slot >= 0:
                self.release(slot, self.request(batch.pods[key]))
        for key, node in batch.nominated.items():
            info = batch.pods.get(key)
            if info is not None and state.has_node(node) and state.pod_node(key) < 0:
                self.nominate(state.node_index(node), self.request(info))

    def request(self, info: PodInfo) -> np.ndarray:
        """A task's requests over the axes, the pods axis counting the task (as a node's pod capacity does)."""
        vec = self.ssn.pod_vector(info)
        if self.ssn.pods_axis >= 0:
            vec = vec.copy()
            vec[self.ssn.pods_axis] += 1
        return vec

    def release(self, slot: int, request: np.ndarray) -> None:
        self.releasing[:, slot] += request

    def nominate(self, slot: int, request: np.ndarray) -> None:
        self.nominated[:, slot] += request

    def future_idle(self, slot: int) -> np.ndarray:
        return self.allocatable[:, slot] - self.requested[:, slot] + self.releasing[:, slot] - self.nominated[:, slot]

    def fits(self, slot: int, request: np.ndarray, freed: np.ndarray | None = None) -> bool:
        """Whether ``request`` fits the node's future idle (plus ``freed``, what victims would give back)."""
        room = self.future_idle(slot)
        if freed is not None:
            room = room + freed
        asked = self.always | (request > 0)
        return bool((request <= room)[asked].all())

    def fits_everywhere(self, request: np.ndarray) -> np.ndarray:
        """Per slot, whether ``request`` fits the future idle."""
        room = self.allocatable - self.requested + self.releasing - self.nominated
        asked = self.always | (request > 0)
        return np.asarray((request[asked, None] <= room[asked]).all(axis=0), dtype=bool)
