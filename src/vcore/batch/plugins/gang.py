"""Volcano's gang plugin (plugins/gang/gang.go): a job runs with minMember of its tasks (and each role's
minTaskMember, when minMember is at least their sum) or not at all.

* job_valid: enough valid tasks (pending, waiting, placed, running or succeeded) of each role and in all;
* job_ready / job_pipelined: the job's ready (or ready and waiting) tasks reach its minimums; best-effort pending
  tasks count, as Volcano counts them;
* job_starving: fewer ready and waiting tasks than minMember;
* job_order: jobs not ready yet first;
* preemptable / reclaimable: a job's running tasks may go only while it keeps more than minMember ready tasks, and
  (vcore's addition, where role minimums bind) while the task's role keeps its minTaskMember.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from vcore.batch.job import Job
from vcore.batch.plugins.base import PERMIT, REJECT, Candidate, JobPlugin, Preemptor

# Volcano's PodGroup condition reasons (scheduling/v1beta1).
NOT_ENOUGH_PODS, NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPods", "NotEnoughPodsOfTask"


class GangPlugin(JobPlugin):
    name = "gang"
    parts = frozenset(
        {"job_valid", "job_ready", "job_pipelined", "job_starving", "job_order", "preemptable", "reclaimable"}
    )

    def job_valid(self, job: Job) -> tuple[str, str] | None:
        if job.podgroup is None:
            return None
        if job.roles_checked:
            valid = Counter(t.role for t in job.pending)
            valid.update(job.role_ready)
            if any(valid[role] < n for role, n in job.min_task.items() if n):
                return NOT_ENOUGH_PODS_OF_TASK, "Not enough valid pods of each task for gang-scheduling"
        n_valid = len(job.pending) + len(job.running) + job.succeeded + job.placed
        if n_valid < job.min_member:
            return (
                NOT_ENOUGH_PODS,
                f"Not enough valid tasks for gang-scheduling, valid: {n_valid}, min: {job.min_member}",
            )
        return None

    def job_ready(self, job: Job) -> bool:
        return job.ready

    def job_pipelined(self, job: Job) -> int:
        return PERMIT if job.pipelined_ready else REJECT

    def job_starving(self, job: Job) -> bool:
        return job.starving

    def job_order_key(self, job: Job) -> bool:
        return job.ready  # False (not ready) sorts first

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        occupied: dict[str, int] = {}
        roles: dict[tuple[str, str], int] = {}
        victims = []
        for c in candidates:
            job = c.job
            left = occupied.get(job.key)
            if left is None:
                left = occupied[job.key] = job.ready_count
            if left <= job.min_member:
                continue
            if job.roles_checked and c.info.role in job.min_task:
                role = (job.key, c.info.role)
                role_left = roles.get(role)
                if role_left is None:
                    role_left = roles[role] = job.role_ready.get(c.info.role, 0)
                if role_left <= job.min_task[c.info.role]:
                    continue
                roles[role] = role_left - 1
            occupied[job.key] = left - 1
            victims.append(c)
        return victims

    def reclaimable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return self.preemptable(preemptor, candidates)
