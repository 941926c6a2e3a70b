"""A job of the scheduling cycle: a gang (a PodGroup and its pods, or one pod without a group) with what the cycle
knows and decides about it (the Session builds one per gang as it opens; the actions and the topology planner read
and update it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vcore.batch.podgroup import PodGroupSpec
from vcore.batch.pods import PodInfo


@dataclass(eq=False, slots=True)
class Job:
    """A gang: a PodGroup and its pods, or one pod without a group."""

    key: str
    podgroup: PodGroupSpec | None
    queue: str
    priority: int
    can_preempt: bool
    min_member: int
    min_task: dict[str, int]
    min_resources: np.ndarray | None
    creation: str
    pending: list[PodInfo]  # in task order
    running: list[str]  # bound and not Releasing
    releasing: int
    succeeded: int
    failed: int
    role_ready: Mapping[str, int]  # role with a minimum -> running + succeeded (a Counter when there are any)
    allocated: np.ndarray
    request: np.ndarray
    phase: str
    n_tasks: int
    placed: int = 0  # tasks bound by this cycle
    tentative: int = 0  # tasks that found a node before the gang fell short and was undone
    pipelined: int = 0  # tasks nominated onto nodes being freed, this cycle
    fit_error: str = ""
    invalid: tuple[str, str] | None = None  # (reason, message) when the gang can never run as defined
    skipped: bool = False  # not eligible this cycle (run_cycle's `eligible`): not tried, status kept
    hypernode: str | None = None  # the topology domain allocate placed a constrained gang in, this cycle
    pending_request: np.ndarray | None = None  # the requests of `pending` summed (None once `pending` changed)
    reported: list[PodInfo] | None = None  # the `pending` list whose pods fail() has already given a reason

    @property
    def ready_count(self) -> int:
        """Volcano's ReadyTaskNum: running, succeeded and allocated this cycle."""
        return len(self.running) + self.succeeded + self.placed

    def role_need(self, roles: list[str]) -> list[int]:
        return [self.min_task.get(r, 0) - self.role_ready.get(r, 0) for r in roles]

    @property
    def ready(self) -> bool:
        if len(self.running) + self.succeeded + self.placed < self.min_member:  # ready_count, asked thousands of times
            return False
        return not self.min_task or all(self.role_ready.get(r, 0) >= n for r, n in self.min_task.items())

    @property
    def pipelined_ready(self) -> bool:
        """Volcano's JobPipelined: ready once the tasks waiting for evictions land."""
        return self.ready_count + self.pipelined >= self.min_member

    @property
    def best_effort(self) -> bool:
        pending = self.pending  # the first pod usually settles it
        return not pending or (pending[0].best_effort and all(t.best_effort for t in pending))
