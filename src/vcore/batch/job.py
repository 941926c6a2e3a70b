"""A job of the scheduling cycle: a gang (a PodGroup and its pods, or one pod without a group) with what the cycle
knows and decides about it (the Session builds one per gang as it opens; the actions, the plugins and the topology
planner read and update it).

The counts follow Volcano's JobInfo: ready (ReadyTaskNum: running, succeeded and placed this cycle), waiting
(WaitingTaskNum: pipelined onto nodes being freed), pending best-effort tasks (which count toward readiness:
IsReady), and role minimums that are checked only when minMember is at least their sum (CheckTaskReady and its
siblings return true otherwise).
"""

from __future__ import annotations

from collections import Counter
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
    can_preempt: bool  # the PodGroup's priority class allows preemption (its pods' own policy is per task)
    min_member: int
    min_task: dict[str, int]
    min_resources: np.ndarray | None
    creation: str
    pending: list[PodInfo]  # in task order (best-effort tasks included)
    running: list[str]  # bound and not Releasing
    releasing: int
    succeeded: int
    failed: int
    role_ready: Mapping[str, int]  # role with a minimum -> running + succeeded (a Counter when there are any)
    allocated: np.ndarray
    request: np.ndarray
    phase: str
    n_tasks: int
    roles_checked: bool  # the role minimums bind: Volcano ignores them when minMember is below their sum
    placed: int = 0  # tasks bound by this cycle
    tentative: int = 0  # tasks that found a node before the gang fell short and was undone
    pipelined: int = 0  # tasks waiting for nodes being freed (nominated in an earlier cycle or pipelined in this one)
    pending_best_effort: int = 0  # pending tasks that request nothing (backfill places them)
    # Waiting tasks per role with a minimum (None until the first: most jobs have no role minimum).
    role_pipelined: Counter[str] | None = None
    releasing_scheduled: int = 0  # Releasing tasks that were on a node (Volcano's ReleasingScheduledTaskNum)
    fit_error: str = ""
    invalid: tuple[str, str] | None = None  # (reason, message) when the gang can never run as defined
    skipped: bool = False  # not eligible this cycle (run_cycle's `eligible`): not tried, status kept
    hypernode: str | None = None  # the topology domain allocate placed a constrained gang in, this cycle
    pending_request: np.ndarray | None = None  # the requests of `pending` summed (None once `pending` changed)
    one_shape: bool = False  # every task of `pending` requests the same (read only while pending_request is kept)
    reported: list[PodInfo] | None = None  # the `pending` list whose pods fail() has already given a reason
    enqueued: bool = False  # admitted (Pending -> Inqueue) by this cycle's enqueue

    @property
    def ready_count(self) -> int:
        """Volcano's ReadyTaskNum: running, succeeded and allocated this cycle."""
        return len(self.running) + self.succeeded + self.placed

    def role_need(self, roles: list[str]) -> list[int]:
        if not self.roles_checked:
            return [0] * len(roles)
        return [self.min_task.get(r, 0) - self.role_ready.get(r, 0) for r in roles]

    @property
    def ready(self) -> bool:
        """Volcano's gang readiness (IsReady with CheckTaskReady)."""
        if len(self.running) + self.succeeded + self.placed + self.pending_best_effort < self.min_member:
            return False  # ready_count, asked thousands of times
        return (
            not self.min_task
            or not self.roles_checked
            or all(self.role_ready.get(r, 0) >= n for r, n in self.min_task.items())
        )

    @property
    def pipelined_ready(self) -> bool:
        """Volcano's JobPipelined (IsPipelined with CheckTaskPipelined): ready once the waiting tasks land."""
        if self.ready_count + self.pipelined + self.pending_best_effort < self.min_member:
            return False
        return not self.roles_checked or all(
            self.role_ready.get(r, 0) + self.pipelined_of(r) + self._pending_best_effort_of(r) >= n
            for r, n in self.min_task.items()
        )

    @property
    def starving(self) -> bool:
        """Volcano's IsStarving: fewer ready and waiting tasks than the minimum."""
        return self.ready_count + self.pipelined < self.min_member

    @property
    def best_effort(self) -> bool:
        """Every pending task requests nothing."""
        return bool(self.pending) and self.pending_best_effort == len(self.pending)

    def regular_pending(self) -> list[PodInfo]:
        """The pending tasks that request something (allocate's); best-effort ones are backfill's."""
        if not self.pending_best_effort:
            return self.pending
        return [t for t in self.pending if not t.best_effort]

    def pipelined_of(self, role: str) -> int:
        return 0 if self.role_pipelined is None else self.role_pipelined[role]

    def count_pipelined(self, role: str, n: int) -> None:
        """n more (or fewer) tasks of the role wait for nodes being freed."""
        self.pipelined += n
        if role in self.min_task:
            if self.role_pipelined is None:
                self.role_pipelined = Counter()
            self.role_pipelined[role] += n

    def _pending_best_effort_of(self, role: str) -> int:
        if not self.pending_best_effort:
            return 0
        return sum(1 for t in self.pending if t.best_effort and t.role == role)
